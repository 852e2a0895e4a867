"""Runs with known samples for the comparison and import tests (core and command line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from app.core.results.model import JobResult, RunResult
from app.core.statistics.stats import summarize
from tests.helpers import records

BASE_ID = "20260101-100000-aaaaaa"
NEW_ID = "20260102-100000-bbbbbb"

#: An environment as `collect_environment` records one (the parts a comparison states).
ENVIRONMENT: dict[str, Any] = {
    "app_version": "0.1.0",
    "hostname": "laptop",
    "cpu": {
        "model": "Test CPU",
        "architecture": "x86_64",
        "physical_cores": 2,
        "logical_cores": 4,
        "flags": {"aes": True, "pclmulqdq": True, "sha_ni": False, "avx2": True, "vaes": False, "avx512f": False},
        "flags_note": None,
        "governors": ["performance"],
        "freq_current_mhz": None,
        "freq_max_mhz": None,
    },
    "memory_total_bytes": 8 << 30,
    "os": {"platform": "Linux-6.1-x86_64", "system": "Linux", "release": "6.1.0", "pretty_name": "Debian 12"},
    "python": {"version": "3.11.7", "implementation": "CPython", "executable": "/usr/bin/python3"},
    "libraries": {
        "cryptography": {"version": "42.0.0", "openssl": "OpenSSL 3.0.11 19 Sep 2023"},
        "pycryptodome": {"version": "3.20.0", "note": "own C implementation"},
    },
}


def samples(median: float, n: int = 40, spread: float = 0.02, seed: int = 0) -> list[float]:
    """`n` timings around `median`, a few per cent apart, the same for the same seed."""
    rng = np.random.default_rng(seed)
    return [float(v) for v in median * (1 + spread * rng.standard_normal(n))]


def run(
    run_id: str,
    jobs: list[JobResult],
    environment: dict[str, Any] | None = None,
    started: str = "2026-01-01T10:00:00+00:00",
) -> RunResult:
    """A finished run of profile "bench", five minutes long, on a copy of `environment` (ENVIRONMENT unless told)."""
    return records.run(
        run_id,
        jobs,
        started=started,
        finished=started.replace("10:00:00", "10:05:00"),
        environment=json.loads(json.dumps(environment or ENVIRONMENT)),
        name="bench",
    )


def base_run() -> RunResult:
    """Three jobs: AES at two sizes (encrypt, decrypt) and Ed25519 (sign)."""
    return run(
        BASE_ID,
        [
            records.job(BASE_ID, 0, 1024, {"encrypt": samples(10e-6, seed=1), "decrypt": samples(11e-6, seed=2)}),
            records.job(BASE_ID, 1, 65536, {"encrypt": samples(40e-6, seed=3)}),
            records.job(
                BASE_ID,
                2,
                64,
                {"sign": samples(50e-6, seed=4)},
                scheme="ed25519",
                params={},
                label="Ed25519",
                family="signature",
            ),
        ],
    )


def scaled(source: RunResult, factor: float, run_id: str = NEW_ID) -> RunResult:
    """`source` with every sample (and so every statistic) multiplied by `factor`."""
    data = source.to_dict()
    data["run"]["id"] = run_id
    for item in data["jobs"]:
        item["id"] = f"{run_id}/{item['index']}"
        for metric in item["metrics"].values():
            values = [v * factor for v in metric["samples"]]
            metric.update(dict(summarize(values).to_dict().items()), samples=values)
    return RunResult.from_dict(data)


def write(path: Path, source: RunResult | dict[str, Any]) -> Path:
    data = source.to_dict() if isinstance(source, RunResult) else source
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_side(directory: Path, source: RunResult, name: str, runs: int = 3) -> str:
    """`runs` copies of `source` (ids NAME-0, NAME-1, ...) written to `directory`, as one
    side of a comparison joined with + (the regression gate checks only with three a side)."""
    paths = [write(directory / f"{name}-{k}.json", scaled(source, 1.0, run_id=f"{name}-{k}")) for k in range(runs)]
    return "+".join(str(path) for path in paths)


class FixedMovement:
    """A comparison's run movement, the same for every job and metric: what
    app/core/analysis/spread.py would measure from a store that holds `runs` runs of each
    job whose medians lie `max_ratio` apart, with `bound` the ratio a verdict must clear."""

    def __init__(self, bound: float = 1.0, runs: int = 5, max_ratio: float | None = None) -> None:
        from app.core.analysis.evidence import RunMovement

        self.movement = RunMovement(runs=runs, max_ratio=max_ratio or bound, bound=bound)

    def of(self, job: JobResult, metric: str) -> Any:
        return self.movement


#: Runs that do not move at all: a comparison of one run a side then judges the interval
#: against 1, as several runs a side do (for the tests of the statistics themselves).
STILL = FixedMovement()
