"""The hand run with chosen durations, for the tests of numbers no machine produces.

tests/reliability/test_impossible_numbers_*.py build their files, store rows and runs from
it: `hand_document` (a results document whose time metrics hold given samples),
`write_document` (that document as a file) and `unchecked_run` (a run as the app holds it,
the checker bypassed); `POSITIVE` is any positive finite float, for hypothesis.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

from app.core.results import model as results
from app.core.statistics import stats
from tests.helpers.report_runs import build_run

RUN_ID = "20261121-100400-hand01"
OTHER_ID = "20261121-110400-hand02"

#: Any positive finite float: subnormals (5e-324), the smallest normal, the largest float.
POSITIVE = st.floats(min_value=5e-324, max_value=sys.float_info.max, allow_nan=False, allow_infinity=False)


def hand_document(run_id: str = RUN_ID, samples: list[float] | None = None, job: int | None = None) -> dict[str, Any]:
    """The hand run as a results document; with `samples`, every time metric of job `job`
    (all jobs when None) holds them, its statistics recomputed so that only magnitudes are wrong."""
    data = json.loads(results.to_json(build_run(run_id, "2026-11-21T10:04:00+00:00")))
    for j, entry in enumerate(data["jobs"]):
        for name, metric in entry["metrics"].items():
            # Twelve a side: enough for a verdict (app.core.analysis.evidence), so what these
            # tests see is the magnitude's effect, not the sample count's.
            values = samples if samples is not None and job in (None, j) else (metric["samples"] * 12)[:12]
            with np.errstate(all="ignore"):
                summary = stats.summarize(values).to_dict()
            summary.update({k: metric[k] for k in ("batch", "traced_peak_bytes") if k in metric})
            summary["samples"] = list(values)
            entry["metrics"][name] = summary
        entry["throughput_bytes_per_s"] = None
    return data


def write_document(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def unchecked_run(run_id: str, samples: list[float] | None) -> results.RunResult:
    """A run as the app holds it (the checker bypassed: the faces must cope on their own)."""
    return results.RunResult.from_dict(hand_document(run_id, samples))
