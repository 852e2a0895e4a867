"""Report budget: a 40-job PDF report in under 10 s and under 5 MB.

    .venv/bin/python benchmarks/bench_report.py [--results FILE] [--keep FILE.pdf]

The run is real: the `quick` preset with every job at two message sizes and loopback
copies of its AEAD jobs (over 40 jobs), 100 samples each, run once through the core
runner (about a minute), or read from --results (a results JSON). The clock covers
what Export report does: build the report content from the run and write the PDF
(A4), with a baseline (the same run) so the comparison section is included. Runs
headless (offscreen Qt). Prints the figures; exits 0 when both targets are met.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TIME_TARGET_S = 10.0
SIZE_TARGET_BYTES = 5 * 1024 * 1024
SECOND_SIZE = {18: 64, 128: 190}  # a second size per first size that every scheme there accepts


def forty_job_profile() -> dict[str, object]:
    from app.core.vocab import Mode

    preset = json.loads((ROOT / "resources" / "presets" / "quick.json").read_text())
    jobs = []
    for job in preset["jobs"]:
        if "message_sizes" not in job:  # sizes fixed by the scheme (HKDF): one job
            jobs.append({**job, "samples": 100})
            continue
        sizes = list(job["message_sizes"])
        if len(sizes) == 1:
            sizes.append(SECOND_SIZE.get(sizes[0], sizes[0] * 4))
        jobs.append({**job, "message_sizes": sizes, "samples": 100})
        if job["scheme"] in ("aes-gcm", "chacha20-poly1305") and job.get("backend") == "cryptography":
            jobs.append({**job, "mode": Mode.LOOPBACK, "message_sizes": [18, 1024], "samples": 100, "tamper": 2})
    return {"name": "report-benchmark (quick x 2 sizes + loopback)", "jobs": jobs}


def real_run(home: Path) -> object:
    os.environ["CRYPTOBENCH_HOME"] = str(home)
    from app.core.profile.files import parse_profile
    from app.core.run.runner import Runner
    from app.core.vocab import JobStatus

    profile = parse_profile(forty_job_profile())
    started = time.monotonic()
    run = Runner(profile).run()
    print(
        f"ran {len(run.jobs)} jobs in {time.monotonic() - started:.0f} s "
        f"({sum(job.status == JobStatus.OK for job in run.jobs)} ok)"
    )
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, help="use this results JSON instead of running the profile")
    parser.add_argument("--keep", type=Path, help="also copy the PDF here (to look at it)")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from app.core.results.model import load_results_file, to_json

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        if args.results:
            run = load_results_file(args.results)
        else:
            run = real_run(home)
            (home / "results.json").write_text(to_json(run))  # type: ignore[arg-type]
        from app.report.content import build_report
        from app.report.pdf.writer import ensure_gui_application, write_pdf

        ensure_gui_application()
        path = home / "report.pdf"
        started = time.perf_counter()
        report = build_report(run, baseline=run)  # type: ignore[arg-type]
        built = time.perf_counter()
        pages = write_pdf(report, path)
        finished = time.perf_counter()
        size = path.stat().st_size
        if args.keep:
            args.keep.write_bytes(path.read_bytes())
    jobs = len(run.jobs)  # type: ignore[attr-defined]
    total = finished - started
    print(
        f"{jobs}-job report with baseline: content {built - started:.2f} s + PDF {finished - built:.2f} s = "
        f"{total:.2f} s (target < {TIME_TARGET_S:.0f} s); {pages} pages, {size / 1024 / 1024:.2f} MiB "
        f"(target < {SIZE_TARGET_BYTES / 1024 / 1024:.0f} MiB)"
    )
    time_ok, size_ok = total < TIME_TARGET_S, size < SIZE_TARGET_BYTES
    print(
        f"time: {'PASS' if time_ok else 'FAIL'}; size: {'PASS' if size_ok else 'FAIL'}"
        + ("" if jobs >= 40 else f"; only {jobs} jobs (< 40): not the benchmark's case")
    )
    return 0 if time_ok and size_ok and jobs >= 40 else 1


if __name__ == "__main__":
    sys.exit(main())
