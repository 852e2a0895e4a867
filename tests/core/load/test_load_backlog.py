"""The load generator's backlog is bounded whatever the rate: requests that come due
while it is full are missed (never sent), counted, and the step is generator-saturated.

The generator runs in this process against a socket whose other end reads nothing (a
server that takes no request: the kernel's buffer fills, every later request stays
owed), or reads and answers nothing. Count-based: no timing is asserted.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.load import generator as generator_module
from app.core.load.framing import request_body
from app.core.load.generator import BACKLOG_MAX, ClientConnection, LoadGenerator
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.settings.load import MAX_RATE_PER_S


def _generator(clients: int, duration_s: float, warmup_s: float = 0.0) -> LoadGenerator:
    profile = parse_profile(
        {
            "name": "t",
            "jobs": [
                {
                    "scheme": "x25519",
                    "mode": "load",
                    "clients": clients,
                    "rates": [MAX_RATE_PER_S],
                    "duration_s": duration_s,
                    "warmup_s": warmup_s,
                }
            ],
        }
    )
    (job,) = resolve_jobs(profile)
    return LoadGenerator(JobPlan(job, 0, SessionPeer("127.0.0.1", 9, b"t" * 32)), lambda message: None)


@pytest.fixture
def unread(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LoadGenerator, list[socket.socket]]]:
    """A generator with two clients whose server ends never read (nor answer); no CPU marks,
    no drain beyond the step's own length."""
    gen = _generator(clients=2, duration_s=0.05)
    ends = []
    for _ in range(2):
        mine, theirs = socket.socketpair()
        mine.setblocking(False)
        client = ClientConnection(mine, pool=[request_body(b"h" * 32, b"p" * 48)])
        gen.clients.append(client)
        gen.selector.register(mine, generator_module.selectors.EVENT_READ, client)
        ends.append(theirs)
    monkeypatch.setattr(gen, "server_cpu_ns", dict)
    monkeypatch.setattr(generator_module, "MIN_DRAIN_S", 0.0)
    yield gen, ends
    gen.selector.close()
    for client in gen.clients:
        client.sock.close()
    for end in ends:
        end.close()


class _Leaping:
    """A clock that moves `leap` ns at each reading: the schedule runs far ahead of the
    loop, as it does at 1,000,000/s on a real machine, but the same on every machine."""

    def __init__(self, leap: int) -> None:
        self.now, self.leap = 0, leap

    def __call__(self) -> int:
        self.now += self.leap
        return self.now


def test_a_step_at_an_absurd_rate_never_owes_more_than_the_cap(
    unread: tuple[LoadGenerator, list[socket.socket]], monkeypatch: pytest.MonkeyPatch
) -> None:
    gen, _ = unread
    cap = 500
    monkeypatch.setattr(generator_module, "BACKLOG_MAX", cap)
    gen.clock = _Leaping(1_000_000)  # a millisecond a reading: 1,000 requests come due each time
    peaks: list[int] = []
    flush = gen._flush

    def watched() -> None:  # the backlog as the loop hands it to the kernel, every time
        peaks.append(gen.owed)
        flush()

    monkeypatch.setattr(gen, "_flush", watched)
    step, record = gen.run_step(MAX_RATE_PER_S, lambda fraction: None)
    assert peaks and max(peaks) <= cap and record.backlog_peak <= cap
    assert record.backlog_peak == cap  # the cap was reached, so it is what bounded the backlog
    # Every scheduled request is either sent or missed; the unread server took few of them.
    assert step.sent + step.missed == round(0.05 * MAX_RATE_PER_S)
    assert step.missed > 0 and step.sent > 0
    assert step.generator_saturated and step.saturation_reason and "missed" in step.saturation_reason
    assert f"{step.missed:,}" in step.saturation_reason
    # Bounded bookkeeping: only requests queued or sent are awaited, never the missed ones.
    assert len(record.outstanding) == 0 and record.abandoned <= step.sent


def test_the_cap_in_bytes_bounds_large_requests_too(
    unread: tuple[LoadGenerator, list[socket.socket]], monkeypatch: pytest.MonkeyPatch
) -> None:
    gen, _ = unread
    monkeypatch.setattr(generator_module, "BACKLOG_MAX_BYTES", 64 * 1024)
    for client in gen.clients:
        client.pool = [request_body(b"h" * 32, b"p" * 16_000)]
    gen.clock = _Leaping(1_000_000)
    peaks: list[int] = []
    flush = gen._flush
    monkeypatch.setattr(gen, "_flush", lambda: (peaks.append(gen.owed_bytes), flush())[1])
    step, _ = gen.run_step(MAX_RATE_PER_S, lambda fraction: None)
    assert max(peaks) <= 64 * 1024 + 16_100  # the cap, or one request per client beyond an empty backlog
    assert step.missed > 0 and step.generator_saturated


def test_warm_up_misses_mark_the_step_too(unread: tuple[LoadGenerator, list[socket.socket]], monkeypatch) -> None:
    gen, _ = unread
    monkeypatch.setattr(generator_module, "BACKLOG_MAX", 10)
    gen.settings = type(gen.settings)(clients=2, rates=(MAX_RATE_PER_S,), duration_s=0.001, warmup_s=0.05)
    gen.clock = _Leaping(100_000)
    step, record = gen.run_step(MAX_RATE_PER_S, lambda fraction: None)
    assert record.missed_warmup > 0 and step.generator_saturated
    assert "warm-up" in (step.saturation_reason or "")


def test_the_real_clock_at_the_maximum_rate_stays_under_the_cap(
    unread: tuple[LoadGenerator, list[socket.socket]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same against the real clock, with a server end that reads (and answers nothing):
    whatever this machine's speed, the backlog never passes the cap."""
    gen, ends = unread
    cap = 2_000
    monkeypatch.setattr(generator_module, "BACKLOG_MAX", cap)
    stop = threading.Event()

    def drain(end: socket.socket) -> None:
        end.settimeout(0.05)
        while not stop.is_set():
            try:
                if not end.recv(1 << 16):
                    return
            except TimeoutError:
                continue
            except OSError:
                return

    readers = [threading.Thread(target=drain, args=(end,), daemon=True) for end in ends]
    for reader in readers:
        reader.start()
    try:
        step, record = gen.run_step(MAX_RATE_PER_S, lambda fraction: None)
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert record.backlog_peak <= cap
    assert step.sent + step.missed == round(0.05 * MAX_RATE_PER_S)
    # Nothing was answered: whatever was sent is abandoned, never counted as completed.
    assert step.completed == 0 and step.achieved_per_s == 0


@pytest.mark.parametrize("rate", [0.0, -1.0, MAX_RATE_PER_S * 1.5, float("inf")])
def test_a_rate_beyond_the_cap_is_refused_not_offered(
    unread: tuple[LoadGenerator, list[socket.socket]], rate: float
) -> None:
    gen, _ = unread
    with pytest.raises(generator_module.LoadFailed, match="at most 1,000,000"):
        gen.run_step(rate, lambda fraction: None)


def test_the_default_cap_is_stated_and_fits_the_maximum_rate() -> None:
    # At the highest rate a profile may ask, the cap is at least a few tens of milliseconds of schedule.
    assert BACKLOG_MAX >= MAX_RATE_PER_S * 0.05
