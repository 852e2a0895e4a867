"""How close the run estimate (app.core.run.estimate) comes to what each preset takes here.

For every preset, reduced and full (or the ones named), prints the estimate before the run
starts (central figure and range), runs the preset with the CLI (`--no-store`, results to
a temporary JSON file), and prints the time the run took (its own `started` to `finished`)
and actual / estimate. The target: every ratio within 0.5-2, and the actual inside the
range. Full runs are long (pq-over-links ~15 min, rsa-kem-vs-ecies ~1 GiB of memory).
Run:
    .venv/bin/python benchmarks/bench_estimates.py --reduced           # all presets, reduced
    .venv/bin/python benchmarks/bench_estimates.py --full quick backends
    .venv/bin/python benchmarks/bench_estimates.py --estimate-only      # no runs
    .venv/bin/python benchmarks/bench_estimates.py --table LOG.jsonl    # the README's table
Each finished row is also appended to --log (JSON lines), so long sessions survive.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.profile.edits import reduced
from app.core.profile.files import load_profile, preset_names
from app.core.profile.resolve import resolve_jobs
from app.core.run.estimate import estimate_run, range_text
from app.core.run.op_costs import busy_loop_slowdown, raw_slowdown, weighted


def _actual(name: str, is_reduced: bool) -> tuple[float, list[float]]:
    """The run's seconds (its own start to finish), and each result's (from the previous
    result's end, the first from the run's start)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        command = [sys.executable, "-m", "app", "run", name, "--no-store", "--quiet", "--json", str(out)]
        subprocess.run([*command, *(["--reduced"] if is_reduced else [])], check=True, stdout=subprocess.DEVNULL)
        data = json.loads(out.read_text(encoding="utf-8"))
    run = data["run"]
    started, finished = datetime.fromisoformat(run["started"]), datetime.fromisoformat(run["finished"])
    each, previous = [], started
    for job in sorted(data["jobs"], key=lambda j: j.get("finished") or ""):
        end = datetime.fromisoformat(job["finished"]) if job.get("finished") else previous
        each.append((end - previous).total_seconds())
        previous = end
    return (finished - started).total_seconds(), each


def table(logs: list[Path]) -> None:
    """The Markdown table of logged runs, each estimate made again by the current model from
    the busy loop read just before that run, so rows logged while the model changed are
    all judged by the one in this commit (the load average is shown, not used)."""
    print("| preset | form | busy loop | load | slowdown (weighted) | estimate | range | actual | actual / estimate |")
    print("|---|---|---|---|---|---|---|---|---|")
    for log in logs:
        for line in log.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "actual_s" not in row:
                continue
            profile = load_profile(row["preset"])
            profile = reduced(profile) if row["reduced"] else profile
            raw = raw_slowdown(row["busy_loop"])
            guess = estimate_run(resolve_jobs(profile, has_remote=True), slowdown=weighted(raw))
            actual = row["actual_s"]
            inside = "" if guess.low <= actual <= guess.high else " (outside)"
            load = f"{row['load'][0]:.1f}" + (" ≈" if row.get("load_from_log") else "")
            print(
                f"| {row['preset']} | {'reduced' if row['reduced'] else 'full'} | {row['busy_loop']:.1f}× | {load} "
                f"| {weighted(raw):.1f}× "
                f"| {guess.seconds:,.1f} s | {range_text(guess.low, guess.high)} | {actual:,.1f} s "
                f"| {actual / guess.seconds:.2f}{inside} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("presets", nargs="*", help="presets to run (default: all)")
    parser.add_argument("--reduced", action="store_true", help="the reduced form only")
    parser.add_argument("--full", action="store_true", help="the full form only")
    parser.add_argument("--estimate-only", action="store_true")
    parser.add_argument("--log", type=Path, default=None, help="append each row here as JSON")
    parser.add_argument("--table", type=Path, nargs="+", default=None, help="print the Markdown table of these logs")
    args = parser.parse_args()
    if args.table:
        table(args.table)
        return
    forms = [True] if args.reduced else [False] if args.full else [True, False]
    print(f"{'preset':28} {'estimate':>9} {'range':>16} {'actual':>9} {'ratio':>6}")
    for name in args.presets or preset_names():
        for is_reduced in forms:
            profile = load_profile(name)
            profile = reduced(profile) if is_reduced else profile
            loop = busy_loop_slowdown()
            slowdown = weighted(raw_slowdown(loop))
            guess = estimate_run(resolve_jobs(profile, has_remote=True), slowdown=slowdown)
            label = f"{name}{' (reduced)' if is_reduced else ''}"
            row = {
                "preset": name,
                "reduced": is_reduced,
                "estimate_s": guess.seconds,
                "low_s": guess.low,
                "high_s": guess.high,
                "text": guess.text(),
                "busy_loop": loop,
                "load": os.getloadavg(),
            }
            actual = None
            if not args.estimate_only:
                started = time.monotonic()
                actual, each = _actual(name, is_reduced)
                row.update(actual_s=actual, wall_s=time.monotonic() - started, ratio=actual / guess.seconds)
                row.update(each_actual_s=each, each_estimate_s=[job.seconds for job in guess.jobs])
                row.update(labels=[job.label for job in guess.jobs])
            shown = f"{actual:9.1f} {actual / guess.seconds:6.2f}" if actual is not None else ""
            print(f"{label:28} {guess.seconds:9.1f} {range_text(guess.low, guess.high):>16} {shown}", flush=True)
            if args.log is not None:
                with args.log.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
