"""The leases that keep each worker's generator alive, renewed from this machine.

A generator exits when its lease is not renewed for `worker_side.LEASE_S` (the coordinator
killed outright leaves nothing running). The renewal is a call on the worker's event loop,
answered at once by a worker that runs; so an unanswered renewal is news too: a worker
stopped (SIGSTOP, a frozen VM) or cut off answers none, and once none has been answered
for a lease's length its generator has ended by itself. The coordinator then fails that
generator at once instead of waiting out the step's own time and grace.

At most one renewal is in flight per generator: renewals sent on regardless piled up in a
stopped worker's socket (one a second) and, when it resumed after the job had released
its actor, each logged a KeyError traceback there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.units import format_seconds

#: A generator exits when its lease is not renewed for this long (the actor passes it to
#: the generator it starts), so a coordinator killed outright (SIGKILL, a lost machine, a
#: cut network) leaves no generator running longer than this.
LEASE_S = 10.0
#: How often each generator's lease is renewed.
RENEW_S = 1.0
#: Beyond a lease's length, how long a renewal may go unanswered before its generator is
#: taken for gone (the last answered renewal may have been written just before the answer).
GRACE_S = 1.0


@dataclass
class _Lease:
    renew: Callable[[], Any]
    answered: float
    pending: Any = None
    gone: str | None = None
    dropped: bool = False


class Leases:
    """Every generator's lease, renewed from a thread of its own until `stop`."""

    def __init__(self, lease_s: float, every_s: float = RENEW_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.lease_s, self.every_s, self._clock = lease_s, every_s, clock
        self._leases: dict[int, _Lease] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, number: int, renew: Callable[[], Any]) -> None:
        """Renew generator `number`'s lease with `renew()` (a future-like: `done()`, `result()`)."""
        with self._lock:
            self._leases[number] = _Lease(renew, self._clock())

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="cryptobench-lease", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()

    def drop(self, number: int) -> None:
        """Stop renewing generator `number` (it was stopped, or failed): nothing more is sent to it."""
        with self._lock:
            if number in self._leases:
                self._leases[number].dropped = True

    def gone(self, number: int) -> str | None:
        """Why generator `number` has ended by its lease, or None while it may run."""
        with self._lock:
            lease = self._leases.get(number)
            return None if lease is None else lease.gone

    def _run(self) -> None:
        while not self._stopping.wait(self.every_s):
            self.renew_once()

    def renew_once(self) -> None:
        """One round: each lease renewed (unless a renewal is still in flight), or found gone."""
        with self._lock:
            leases = list(self._leases.values())
        for lease in leases:
            self._renew(lease)

    def _renew(self, lease: _Lease) -> None:
        if lease.dropped or lease.gone is not None:
            return
        now = self._clock()
        if lease.pending is not None and lease.pending.done():
            try:
                lease.pending.result()
                lease.answered = now
            except Exception:  # noqa: BLE001, S110 - a failed renewal renews nothing: counted as silence
                pass
            lease.pending = None
        silent = now - lease.answered
        if silent > self.lease_s + GRACE_S:
            with self._lock:
                lease.gone = (
                    f"its worker renewed no lease for {format_seconds(silent)} (stopped, frozen or cut off), so "
                    f"its generator ended by itself after its {self.lease_s:g} s lease"
                )
            return
        if lease.pending is None:  # one renewal in flight at most
            try:
                lease.pending = lease.renew()
            except Exception:  # noqa: BLE001 - the actor's proxy refuses at once when its worker is lost
                lease.pending = None
