"""How much does finding a job's processes cost, walked down its branch of /proc or scanned?

The frozen-process watch (app/core/processes/watchdog.py) lists each job process's
descendants four times a second while the job measures. `descendant_pids` reads the
children files of the job's own branch; psutil's `Process.children(recursive=True)` reads
`/proc/<pid>/stat` of every process on the machine. This starts a small tree (a child with
two grandchildren) and, beside it, `--idle` processes that are not ours, as the rest of a
busy machine; then it times both ways of listing the tree in one run.

Run: .venv/bin/python benchmarks/bench_descendants.py [--idle N] [--rounds N]
Target: the branch walk at least 5 times faster than the scan with 200 other processes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from app.core.processes.descendants import descendant_pids

_TREE = (
    "import subprocess, sys\n"
    "kids = [subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'], stdin=subprocess.PIPE)"
    " for _ in range(2)]\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n"
    "for kid in kids:\n"
    "    kid.stdin.close(); kid.wait()\n"
)


def _median_us(call: object, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=200, help="other processes on the machine (default 200)")
    parser.add_argument("--rounds", type=int, default=200, help="timed listings of each kind (default 200)")
    args = parser.parse_args()
    others = [subprocess.Popen(["sleep", "120"]) for _ in range(args.idle)]
    tree = subprocess.Popen([sys.executable, "-c", _TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert tree.stdout is not None and tree.stdout.readline().strip() == "ready"
        walked = sorted(descendant_pids(tree.pid))
        scanned = sorted(p.pid for p in psutil.Process(tree.pid).children(recursive=True))
        if walked != scanned or len(walked) != 2:
            print(f"the two listings differ: walked {walked}, scanned {scanned}")
            return 1
        machine = len(psutil.pids())
        walk = _median_us(lambda: descendant_pids(tree.pid), args.rounds)
        scan = _median_us(lambda: psutil.Process(tree.pid).children(recursive=True), args.rounds)
        print(f"processes on the machine: {machine}; the tree: 1 child, 2 grandchildren")
        print(f"branch walk (descendants.py): {walk:9.1f} µs median of {args.rounds}")
        print(f"psutil scan (children):       {scan:9.1f} µs median of {args.rounds}")
        print(f"ratio scan / walk: {scan / walk:.1f}  (target: at least 5 with {args.idle} other processes)")
        return 0 if scan / walk >= 5 else 1
    finally:
        if tree.stdin is not None:
            tree.stdin.close()
        tree.wait(timeout=30)
        for other in others:
            other.kill()
        for other in others:
            other.wait()


if __name__ == "__main__":
    sys.exit(main())
