"""A load job's notes say what was planned and what ran, and leave the verdict to the
verdict: a sweep that planned ten steps and ran two said "offered 10 steps ... stopping
past the knee", and a job with no knee said "the knee is at least the highest rate
achieved" beside the report's "No knee was measured"."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.contracts.events import SizeMeasured
from app.core.load.job import measure_size
from app.core.load.sweep import SWEEP_FRACTIONS
from app.core.records.job_conditions import LoadStep
from app.core.settings.load import MAX_RATE_PER_S, LoadSettings
from tests.helpers.loads import step


@dataclass
class _Record:
    latencies: list[float] = field(default_factory=lambda: [1e-3] * 4)
    server_ns: list[int] = field(default_factory=lambda: [100_000] * 4)
    refused: dict[str, int] = field(default_factory=dict)
    abandoned: int = 0
    sample_every: int = 1
    handshakes: Any = None  # a tls13 job's handshakes of the step; none here


class _Driver:
    """A load job's driver whose steps are given: one request at a time takes 1 ms."""

    signer = False

    def __init__(self, steps: Sequence[LoadStep]) -> None:
        self.settings = LoadSettings(duration_s=1.0, warmup_s=0.1)
        self.steps = list(steps)
        self.emitted: list[Any] = []

    @property
    def max_rate_per_s(self) -> float:
        return MAX_RATE_PER_S

    def emit(self, message: Any) -> None:
        self.emitted.append(message)

    def prepare(self, size: int) -> Sequence[float]:
        return [1e-4]

    def check_tampering(self, size: int, result: SizeMeasured) -> None:
        return None

    def calibrate(self) -> tuple[float, float]:
        return 1e-3, 1.2e-3

    def run_step(self, rate: float, progress: Callable[[float], None]) -> tuple[LoadStep, _Record]:
        return self.steps.pop(0), _Record()

    def pool_size(self) -> int:
        return 4

    def tls_record(self) -> None:
        return None


def _notes(steps: Sequence[LoadStep]) -> list[str]:
    measured = measure_size(_Driver(steps), 0, 32)  # type: ignore[arg-type]
    return list(measured.notes)


def test_a_sweep_says_how_many_of_its_planned_steps_ran() -> None:
    overloaded = [step(100, 100, 1e-3, 2e-3), step(300, 150, 80e-3, 150e-3), step(500, 150, 90e-3, 200e-3)]
    (note,) = [n for n in _notes(overloaded) if n.startswith("sweep:")]
    planned = len(SWEEP_FRACTIONS)
    assert f"planned {planned} steps from 100 to 1600/s, to stop after 2 in a row not kept up with" in note
    assert note.endswith("; 3 of them ran (2 steps in a row were not kept up with)")
    assert "offered" not in note and "stopping past the knee" not in note


def test_no_note_speaks_of_a_knee_where_the_generator_limited_every_step() -> None:
    late = [step(100 * (k + 1), 100 * (k + 1), 1e-3, 2e-3, saturated=True) for k in range(len(SWEEP_FRACTIONS))]
    notes = _notes(late)
    assert not [n for n in notes if "knee is at least" in n]
    assert any(n.startswith("the generator, not the server, was the limit at ") for n in notes)


def test_notes_written_before_the_verdict_said_it_never_contradict_it() -> None:
    """A stored run's notes said "offered 10 steps ..., stopping past the knee" where 2 ran,
    and "the knee is at least ..." beside the report's "No knee was measured"."""
    from app.core.load.verdict import shown_notes
    from tests.helpers.loads import load, load_job

    job = load_job(0, "X25519 [cryptography]", load([step(100, 100, 1e-3, 2e-3), step(300, 150, 80e-3, 150e-3)]))
    job.notes = [
        "sweep: one request at a time, the server took 1000.0 µs a request (1200.0 µs round trip): at most ~1,000 "
        "requests/s estimated; offered 10 steps from 100 to 1600/s, stopping past the knee",
        "no step showed server overload: the knee is at least the highest rate achieved",
        "something else",
    ]
    assert shown_notes(job) == [
        "sweep: one request at a time, the server took 1000.0 µs a request (1200.0 µs round trip): at most ~1,000 "
        "requests/s estimated; planned 10 steps from 100 to 1600/s; 2 of them ran",
        "something else",
    ]
