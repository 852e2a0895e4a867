"""Shared pieces of the plots: colours, formatters, growable buffers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from PySide6 import QtGui

from app.core.results.model import JobResult
from app.core.vocab import SESSION_MODES, JobStatus, Role
from app.report.style import PALETTE

pg.setConfigOptions(antialias=False)

#: Metrics timing one message, in order of preference, for the comparison default.
PER_MESSAGE_METRICS = ("encrypt", "sign", "hash", "derive", "exchange")

#: Qualitative colours (Tableau 10) readable on light and dark backgrounds.
COLOURS = PALETTE
ROLE_COLOURS: dict[str, tuple[int, int, int]] = {
    Role.SENDER: COLOURS[0],
    Role.RECEIVER: COLOURS[1],
    Role.WORKER: COLOURS[2],
}
MIB = float(1 << 20)
HOVER_RATE = 30  # hover read-outs are recomputed at most this many times a second
_MAX_LABEL = 48  # characters of a job label on the comparison axis
#: Characters a label's " over LINK" keeps at least when it is shortened.
LINK_ROOM = 22

#: The plots' numbers: samples in seconds, sizes, CPU % and MiB, all as float64.
FloatArray = npt.NDArray[np.float64]


def series_colour(index: int) -> QtGui.QColor:
    if index < len(COLOURS):
        return QtGui.QColor(*COLOURS[index])
    colour: QtGui.QColor = pg.intColor(index, hues=13, values=1, minValue=200)
    return colour


def fmt_time(seconds: float) -> str:
    text: str = pg.siFormat(float(seconds), precision=4, suffix="s")
    return text


def fmt_bytes(size: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    if size >= 1 << 10:
        return f"{size / (1 << 10):.1f} KiB"
    return f"{size} B"


def _elide(text: str, limit: int = _MAX_LABEL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tail_start(text: str) -> int:
    """Where the part of a job's label that tells it apart begins: its " [backend]", else
    the " over LINK" of a job on an emulated link (a label the user named); -1 for none."""
    cut = text.rfind(" [")
    return cut if cut > 0 else text.rfind(" over ")


def _fit(text: str, limit: int, backend_too: bool) -> str:
    """One label in about `limit` characters. The tail that tells jobs apart is kept whole
    ("[pycryptodome] · loopback") and the scheme name before it shortened. Over an
    emulated link the link comes first ("over LTE"; a custom link's numbers cut at their
    end), then the scheme name; the backend only when `backend_too`."""
    cut = tail_start(text)
    if cut <= 0:
        return _elide(text, limit)
    head, tail = text[:cut], text[cut:]
    over = tail.find(" over ")
    if over < 0:
        return _elide(head, max(limit - len(tail), 8)) + tail
    # LINK_ROOM keeps every preset's title whole (" over intercontinental").
    backend, link = (tail[:over] if backend_too else ""), _elide(tail[over:], max(limit - 8, LINK_ROOM))
    return _elide(head, max(limit - len(link) - len(backend), 8)) + backend + link


def short_distinct(texts: list[str], limit: int) -> list[str]:
    """Labels of about `limit` characters that stay distinct (`_fit`): over links, without
    the backend when no two jobs need it told apart; when shortening makes two labels
    equal, they get more room, up to the whole text."""
    longest = max((len(text) for text in texts), default=0)
    for backend_too in (False, True):
        room = limit
        while True:
            shown = [_fit(text, room, backend_too) for text in texts]
            if len(set(shown)) == len(set(texts)):
                return shown
            if room >= longest:
                break
            room += 4
    return list(texts)


def usable(results: Iterable[JobResult]) -> list[JobResult]:
    return [r for r in results if r.status == JobStatus.OK and r.metrics]


class Measured(Protocol):
    """What picking a metric reads of a job: its metrics' names and its mode (a JobResult,
    or a stored job's figures, `StoredJob`)."""

    @property
    def metrics(self) -> Mapping[str, object]: ...

    @property
    def mode(self) -> str: ...


def metric_names(results: Iterable[Measured]) -> list[str]:
    names: dict[str, None] = {}
    for result in results:
        for name in result.metrics:
            names.setdefault(name, None)
    return list(names)


def default_metric(results: Sequence[Measured]) -> str | None:
    """The metric to show first: the per-message metric most jobs have ("compute" for
    sessions, encrypt, sign, hash, derive, exchange), unless it leaves out half of the
    jobs; then the metric most jobs have. A comparison that hides 21 of 22 jobs shows
    nothing."""
    names = metric_names(results)
    if not names:
        return None
    counts = {name: sum(name in r.metrics for r in results) for name in names}
    preferred = list(PER_MESSAGE_METRICS)
    if any(r.mode in SESSION_MODES for r in results):
        preferred.insert(0, "compute")
    present = [name for name in preferred if name in counts]
    best = max(present, key=lambda name: counts[name], default=None)  # max keeps the first of equals
    if best is not None and 2 * counts[best] >= len(results):
        return best
    most = max(counts.values())
    candidates = [name for name in names if counts[name] == most]
    return best if best in candidates else candidates[0]


#: Metrics whose work is the same in both exchange patterns (a key establishment timed apart,
#: a key pair, the connection): the others hold a key exchange per message, or not.
SAME_IN_EVERY_PATTERN = frozenset(
    {"keygen", "exchange", "exchange_receiver", "encapsulate", "decapsulate", "floor_rtt", "connect"}
)


def mixed_exchange_note(results: Iterable[JobResult], metric: str) -> str | None:
    """What a chart of `metric` must say when it sets jobs of both exchange patterns side
    by side (their bars are labelled "(session)" and "(per-message)"), or None."""
    patterns = {r.exchange_used for r in results if metric in r.metrics} - {None}
    if len(patterns) < 2 or metric in SAME_IN_EVERY_PATTERN:
        return None
    return f"exchange patterns mixed: {metric} is AEAD alone with session, holds a key exchange with per-message"


def label_style(text: str, muted: bool = False) -> str:
    return f"<i>{text}</i>" if muted else text


class SampleBuffer:
    """Append-only float64 columns, grown by doubling (amortised O(1) per value)."""

    __slots__ = ("data", "n")

    def __init__(self, columns: int = 1, capacity: int = 1024) -> None:
        self.data = np.empty((columns, capacity), dtype=np.float64)
        self.n = 0

    def _reserve(self, extra: int) -> None:
        needed = self.n + extra
        capacity = self.data.shape[1]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        grown = np.empty((self.data.shape[0], capacity), dtype=np.float64)
        grown[:, : self.n] = self.data[:, : self.n]
        self.data = grown

    def extend(self, values: FloatArray) -> None:
        """Append a 1-D array (one-column buffers)."""
        self._reserve(values.size)
        self.data[0, self.n : self.n + values.size] = values
        self.n += values.size

    def append_row(self, *row: float) -> None:
        self._reserve(1)
        self.data[:, self.n] = row
        self.n += 1

    def column(self, k: int = 0) -> FloatArray:
        return self.data[k, : self.n]

    def clear(self) -> None:
        self.n = 0
