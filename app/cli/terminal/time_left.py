"""The progress bar's time left: the run estimate's remaining jobs, scaled by how the
finished ones compared with theirs (app.core.run.estimate.Refined), instead of rich's
elapsed-over-fraction, which assumes every job is as long as the ones so far."""

from __future__ import annotations

import time
from collections.abc import Callable

from app.core.run.estimate import Refined, RunEstimate, duration_text


class TimeLeft:
    def __init__(self, guess: RunEstimate | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._refined = Refined(guess) if guess is not None and not guess.unknown else None
        self._clock = clock
        self._started = clock()
        self._finished_at = self._started  # when the latest result finished
        self._finished = 0

    def finished(self, count: int) -> None:
        """`count` results have finished, the latest just now."""
        self._finished, self._finished_at = count, self._clock()

    def seconds(self, current: int, fraction: float) -> float | None:
        if self._refined is None:
            return None
        now = self._clock()
        running = now - self._finished_at if current >= self._finished else None
        return self._refined.left(self._finished_at - self._started, self._finished, running, fraction)

    def text(self, current: int, fraction: float) -> str:
        left = self.seconds(current, fraction)
        return "" if left is None else f"about {duration_text(left)} left"
