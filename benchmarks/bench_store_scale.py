"""A team's store at scale: 10,000 runs on SQLite and on PostgreSQL.

What a team's shared store must keep doing as it fills up, each measured on a store of
RUNS runs (default 10,000; 6 jobs a run, two metrics of 100 samples a job, three machines,
a cryptography upgrade half way, a third of the runs stamped +02:00):

- `history`: `cryptobench history --store S` (output to a pipe: one line a run) as a child
  process, minus the same command on an empty store of the same kind (the start-up);
  best of three. Target: under 0.3 s.
- Trend: `trend.job_trend` for a job every run has (so RUNS points), from opening the store
  to the points, as the window's Trend does when a job is picked; best and median of five.
  Target: under 0.2 s.
- Import: 200 results files (`import_results` through one store, as `cryptobench import`
  does) into an empty store and into the full one. Target: no slower into the full one.
- The live path: runs written a second as the window writes them (`begin_run` through one
  store, each of 2 jobs through a store opened for it, `finish_run`; the store closed and
  opened again each time, as the window's History and job workers do). Target: at least
  100 runs a second on PostgreSQL.

SQLite is a file in a temporary folder (WAL, synchronous=NORMAL). PostgreSQL is `--pg URL`
(a server to make databases on, as a role that may CREATE DATABASE), else a throwaway server
started for the run in a temporary folder (tests/helpers/postgres.py), over its unix socket:
the live path is measured with PostgreSQL's default durability (each commit waits for its
WAL flush) and with `synchronous_commit=off` (the setting closest to SQLite's); the store
is built with synchronous_commit=off either way (its build is not measured).

Run (on demand, never in `make test`):
.venv/bin/python benchmarks/bench_store_scale.py [--runs N] [--pg URL] [--only sqlite|postgres]
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.analysis.compare import match_key
from app.core.analysis.trend import job_trend
from app.core.machine.environment import collect_environment
from app.core.profile.files import load_profile
from app.core.results.model import JobResult, MetricResult, RunResult, to_json
from app.core.statistics.stats import summarize
from app.core.store.importing import import_results
from app.core.store.store import Store
from app.core.store.target import StoreLike

ROOT = Path(__file__).resolve().parents[1]
MACHINES = ("alpha", "beta", "gamma")
SIZES = (64, 1024, 16384)
JOBS = 2 * len(SIZES)
SAMPLES = 100
IMPORTS = 200
LIVE_JOBS = 2


def _job(run_id: str, index: int, rng: random.Random, samples: int = SAMPLES) -> JobResult:
    metrics = {}
    for name in ("encrypt", "decrypt"):
        values = [1e-5 * (1 + 0.05 * rng.random()) for _ in range(samples)]
        metrics[name] = MetricResult(summarize(values), values)
    return JobResult(
        id=f"{run_id}/{index}",
        index=index,
        scheme="aes-gcm",
        backend="cryptography" if index % 2 else "pycryptodome",
        params={"key_bits": 128},
        label="AES-128-GCM",
        family="aead",
        mode="operations",
        message_size=SIZES[index // 2 % len(SIZES)],
        status="ok",
        metrics=metrics,
    )


class Runs:
    """Generated runs: a real environment and profile, varied per run."""

    def __init__(self, total: int, repeats: int = 5) -> None:
        self.total = total
        self.repeats = repeats
        self.environment = collect_environment()
        self.profile = load_profile("quick").to_dict()
        self.rng = random.Random(1)

    def run(self, r: int, prefix: str = "2026") -> RunResult:
        environment = copy.deepcopy(self.environment)
        environment["hostname"] = MACHINES[r % len(MACHINES)]
        library = environment.setdefault("libraries", {}).setdefault("cryptography", {})
        library["version"] = "45.0.7" if r < self.total // 2 else "46.0.1"
        day, second = divmod(r, 86_400 // 8)
        month, day = 1 + day // 28 % 12, 1 + day % 28
        hours, rest = divmod(second * 8, 3600)
        offset = "+02:00" if r % 3 == 0 else "+00:00"  # the same instants, written two ways
        if offset == "+02:00":
            hours += 2  # local time two hours ahead of UTC, so the instant is unchanged
        stamp = f"{prefix}-{month:02d}-{day:02d}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
        run_id = f"{prefix}{month:02d}{day:02d}-{hours:02d}{rest // 60:02d}{rest % 60:02d}-{r:012x}"
        run = RunResult(
            id=run_id,
            started=f"{stamp}{offset}",
            finished=f"{stamp}{offset}".replace(f":{rest % 60:02d}{offset}", f":{rest % 60:02d}.5{offset}"),
            status="finished",
            environment=environment,
            profile=self.profile,
        )
        run.jobs = [_job(run_id, index, self.rng) for index in range(JOBS)]
        return run


def build(where: StoreLike, runs: Runs, count: int) -> None:
    began = time.perf_counter()
    with Store(where) as store:
        for r in range(count):
            store.add_run(runs.run(r))
            if r and r % 2000 == 0:
                print(f"  ... {r} runs ({time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)
    print(f"  built {count} runs in {time.perf_counter() - began:.0f} s (load average {os.getloadavg()[0]:.1f})",
          file=sys.stderr, flush=True)  # fmt: skip


def history_seconds(where: str, empty: str) -> tuple[float, float, float, float]:
    """Best of five of `cryptobench history`, piped: (wall time on the full store, on the empty
    one, the command's CPU time on the full store, on the empty one)."""
    env = {**os.environ, "CRYPTOBENCH_HOME": tempfile.mkdtemp(prefix="cbbench-home-")}
    command = [sys.executable, "-m", "app", "history", "--store"]

    def run(store: str) -> float:
        before = _children_cpu()
        done = subprocess.run([*command, store], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        if done.returncode:
            raise RuntimeError(f"history failed: {done.stderr}")
        return _children_cpu() - before

    run(where)  # warm the page cache and the interpreter's files
    full = [(wall, cpu) for wall, cpu in _timed_with(lambda: run(where), 5)]
    bare = [(wall, cpu) for wall, cpu in _timed_with(lambda: run(empty), 5)]
    return min(w for w, _ in full), min(w for w, _ in bare), min(c for _, c in full), min(c for _, c in bare)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_with(action: Callable[[], float], times: int) -> list[tuple[float, float]]:
    """(wall time, what `action` returns: its CPU time) of each call."""
    found = []
    for _ in range(times):
        began = time.perf_counter()
        cpu = action()
        found.append((time.perf_counter() - began, cpu))
    return found


def trend_seconds(where: StoreLike, repeats: int) -> tuple[float, float, float, int]:
    """(best wall time, median wall time, best CPU time of this process, points)."""
    key = match_key(_job("x", 1, random.Random(0)))  # cryptography, 64 B: in every run
    points: list[object] = []

    def trend() -> float:
        began = time.process_time()
        with Store(where) as store:
            points[:] = job_trend(store, key, "encrypt")
        return time.process_time() - began

    found = _timed_with(trend, repeats)
    walls = [wall for wall, _ in found]
    return min(walls), statistics.median(walls), min(cpu for _, cpu in found), len(points)


def import_seconds(where: StoreLike, files: list[Path]) -> float:
    began = time.perf_counter()
    with Store(where) as store:
        for path in files:
            outcome = import_results(store, path)
            assert outcome.added, outcome
    return time.perf_counter() - began


def live_rates(make: Callable[[], StoreLike], batches: int = 3, runs: int = 100) -> tuple[float, float]:
    """(best, median) of `batches` batches of runs a second, each into a store of its own:
    a commit's flush on this shared VM varies severalfold from one minute to the next."""
    rates = [live_rate(make(), runs) for _ in range(batches)]
    return max(rates), statistics.median(rates)


def live_rate(where: StoreLike, runs: int = 100) -> float:
    """Runs a second written as the window writes them."""
    rng = random.Random(3)
    made = []
    for r in range(runs):
        run_id = f"live-{r:06d}-{rng.getrandbits(32):08x}"
        run = RunResult(id=run_id, started="2026-06-01T10:00:00+00:00", status="running",
                        environment={"hostname": "live"}, profile={"name": "live", "jobs": []})  # fmt: skip
        made.append((run, [_job(run_id, index, rng) for index in range(LIVE_JOBS)]))
    began = time.perf_counter()
    for run, jobs in made:
        with Store(where) as store:
            store.begin_run(run)
            for job in jobs:
                with Store(where) as writer:  # a job worker's own store (app/gui/run_controller.py)
                    writer.add_job(run.id, job)
            store.finish_run(run.id, "finished", "2026-06-01T10:00:01+00:00")
    return runs / (time.perf_counter() - began)


def measure(name: str, make: Callable[[str], str], total: int, runs: Runs, files: list[Path],
            live: list[tuple[str, Callable[[], None]]], live_only: bool = False) -> None:  # fmt: skip
    if live_only:
        measure_live(name, make, live)
        return
    print(f"{name}: building a store of {total} runs", file=sys.stderr, flush=True)
    full, empty = make("full"), make("empty")
    build(full, runs, total)
    with Store(empty):
        pass
    history, startup, history_cpu, startup_cpu = history_seconds(full, empty)
    best, median, best_cpu, points = trend_seconds(full, runs.repeats)
    into_empty = import_seconds(make("imports"), files)
    into_full = import_seconds(full, files)
    print(f"| {name} | `history` | {history - startup:.3f} s beyond start-up ({history:.2f} s, "
          f"start-up {startup:.2f} s); CPU {history_cpu - startup_cpu:.3f} s beyond |", flush=True)  # fmt: skip
    print(f"| {name} | Trend ({points} points) | best {best:.3f} s, median {median:.3f} s; "
          f"CPU best {best_cpu:.3f} s |", flush=True)  # fmt: skip
    print(f"| {name} | import {len(files)} runs | {into_empty:.2f} s into an empty store, "
          f"{into_full:.2f} s into the full one |", flush=True)  # fmt: skip
    measure_live(name, make, live)


def measure_live(name: str, make: Callable[[str], str], live: list[tuple[str, Callable[[], None]]]) -> None:
    for label, prepare in live:
        prepare()
        stem = f"live{label.replace(' ', '').replace('=', '').replace('(', '').replace(')', '')}"
        names = iter(f"{stem}{k}" for k in range(100))
        best, median = live_rates(lambda names=names: make(next(names)))
        print(f"| {name} | live path{label} | best {best:.0f} runs/s, median {median:.0f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--pg", help="a PostgreSQL server to make databases on instead of a throwaway one")
    parser.add_argument("--only", choices=("sqlite", "postgres"))
    parser.add_argument("--repeats", type=int, default=5, help="times the trend is read (best, median)")
    parser.add_argument("--live-only", action="store_true", help="measure only the live path")
    args = parser.parse_args()
    runs = Runs(args.runs, args.repeats)
    print(f"(load average at the start: {os.getloadavg()[0]:.1f})", file=sys.stderr)
    print("| store | what | figure |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for r in range(IMPORTS):
            run = runs.run(r, prefix="2027")
            path = Path(folder) / f"{run.id}.json"
            path.write_text(to_json(run), encoding="utf-8")
            files.append(path)
        if args.only != "postgres":
            measure(
                "SQLite",
                lambda what: str(Path(folder) / f"{what}.sqlite3"),
                args.runs,
                runs,
                files,
                [("", lambda: None)],
                args.live_only,
            )
        if args.only == "sqlite":
            return
        _postgres(args, runs, files)


def _postgres(args: argparse.Namespace, runs: Runs, files: list[Path]) -> None:
    import psycopg

    from tests.helpers.postgres import find_problem, start_cluster

    cluster = None
    if args.pg:
        admin_url = args.pg
    else:
        problem = find_problem()
        if problem:
            print(f"PostgreSQL skipped: {problem}")
            return
        cluster = start_cluster(durable=True)
        admin_url = cluster.url()
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            version = conn.info.server_version
            print(f"(PostgreSQL {version // 10000}.{version % 10000})", file=sys.stderr)
        made: list[str] = []

        def make(what: str) -> str:
            name = f"cbscale_{what}_{os.getpid()}"
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
                conn.execute(f'CREATE DATABASE "{name}"')
                if not what.startswith("live"):
                    conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')  # building is not measured
            made.append(name)
            return _database_url(admin_url, name)

        def durable() -> None:
            _set_commit(admin_url, "on")

        def relaxed() -> None:
            _set_commit(admin_url, "off")

        try:
            measure("PostgreSQL", make, args.runs, runs, files,
                    [(" (default durability)", durable), (" (synchronous_commit=off)", relaxed)],
                    args.live_only)  # fmt: skip
        finally:
            _set_commit(admin_url, None)
            with psycopg.connect(admin_url, autocommit=True) as conn:
                for name in made:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        if cluster is not None:
            cluster.stop()


def _set_commit(admin_url: str, value: str | None) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        if value is None:
            conn.execute("ALTER SYSTEM RESET synchronous_commit")
        else:
            conn.execute(f"ALTER SYSTEM SET synchronous_commit = {value}")
        conn.execute("SELECT pg_reload_conf()")


def _database_url(url: str, database: str) -> str:
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{database}"))


if __name__ == "__main__":
    main()
