"""Messages from the measuring children: packed samples, statistics computed in the child."""

from __future__ import annotations

import pickle
import subprocess
import sys
from array import array

import numpy as np

from app.core.contracts.events import RawMetric, SizeMeasured
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.statistics.stability_warnings import WarningCode, check_stability
from app.core.statistics.stats import summarize
from tests.helpers.paths import ROOT


def test_raw_metric_crosses_the_pipe_as_packed_float64_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    samples = (rng.random(5000) * 1e-5).tolist() + [5e-324, 1.7976931348623157e308, 0.1 + 0.2]
    raw = RawMetric(samples=samples, warmup=[1e-3, 2e-3], batch=4, traced_peak_bytes=123)
    back = pickle.loads(pickle.dumps(raw))
    assert isinstance(back.samples, array) and back.samples.typecode == "d"
    assert list(back.samples) == samples  # exact: float64 in, float64 out
    assert list(back.warmup) == [1e-3, 2e-3]
    assert (back.batch, back.traced_peak_bytes) == (4, 123)
    assert raw.samples is samples  # pickling packs a copy; the child's own list is untouched


def test_statistics_computed_in_the_child_are_those_of_the_samples() -> None:
    slow_start = [50e-6] + [1e-6 + k * 1e-9 for k in range(40)]
    measured = SizeMeasured(
        0,
        18,
        metrics={
            "encrypt": RawMetric(samples=slow_start, warmup=[]),
            "decrypt": RawMetric(samples=[2e-6] * 3),
            "empty": RawMetric(),
        },
    )
    assert measured.summarize() is measured
    encrypt, decrypt, empty = (measured.metrics[k] for k in ("encrypt", "decrypt", "empty"))
    assert encrypt.summary == summarize(slow_start)
    assert encrypt.warnings == check_stability("encrypt", encrypt.summary, slow_start, [])
    assert WarningCode.SLOW_FIRST_SAMPLES in {w.code for w in encrypt.warnings}
    assert WarningCode.TOO_FEW_SAMPLES in {w.code for w in decrypt.warnings}
    assert empty.summary is None and empty.warnings == []
    back = pickle.loads(pickle.dumps(measured))
    assert back.metrics["encrypt"].summary == encrypt.summary
    assert back.metrics["encrypt"].warnings == encrypt.warnings


def test_bad_samples_are_left_to_the_supervisor_to_report() -> None:
    measured = SizeMeasured(0, 18, metrics={"encrypt": RawMetric(samples=[1e-6, float("nan")])}).summarize()
    assert measured.metrics["encrypt"].summary is None


def test_a_real_run_reports_the_statistics_of_its_stored_samples() -> None:
    profile = parse_profile(
        {
            "name": "t",
            "jobs": [
                {"scheme": "aes-gcm", "message_sizes": [64], "samples": 12, "warmup": 2, "keygen_samples": 2},
                {
                    "scheme": "aes-gcm",
                    "mode": "loopback",
                    "message_sizes": [64],
                    "samples": 12,
                    "warmup": 2,
                    "keygen_samples": 2,
                    "tamper": 1,
                },
            ],
        }
    )
    run = Runner(profile).run()
    assert [job.status for job in run.jobs] == ["ok", "ok"]
    for job in run.jobs:
        assert job.metrics
        for name, metric in job.metrics.items():
            assert metric.stats == summarize(list(metric.samples)), name


def test_after_preload_a_jobs_statistics_import_nothing() -> None:
    """Lazy imports on a worker thread froze the GUI for 60-100 ms at a job's end."""
    script = (
        "import sys\n"
        "from app.core.run.runner import preload\n"
        "import numpy as np\n"
        "from app.core.statistics.stats import summarize\n"
        "from app.core.statistics.stability_warnings import check_stability\n"
        "assert 'numpy.ma' not in sys.modules, 'already imported: the check below would prove nothing'\n"
        "x = np.linspace(1e-6, 2e-6, 1000)\n"
        "preload()\n"
        "before = set(sys.modules)\n"
        "check_stability('m', summarize(x), x, x[:10])\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
