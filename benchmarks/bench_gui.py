"""GUI budgets: time from launch to the main window shown, and event-loop stalls while a
real loopback job streams 100,000 samples.

    .venv/bin/python benchmarks/bench_gui.py [--samples N] [--launches K] [--trials T]

Launch: the parent starts `python -c ...` (a fresh interpreter importing the app,
building the window and showing it) and stops the clock when the child reports that
its event loop ran once after `show()`, i.e. the window was exposed and painted.
Target: under 1.5 s from source.

Stalls: in one process, the real MainWindow runs a loopback AES-256-GCM job of 18-byte
messages (`--samples`, default 100,000 per metric; compute, rtt, receiver and network
stream together). A 2 ms heartbeat timer records the gap between its ticks; a stall is
a gap beyond the interval. Target: the longest stall, over all trials, under 50 ms.

Control: the same heartbeat in a bare event loop while the CLI runs the same job in
another process, as many times as trials: what the machine alone does to a process's
timers (a shared VM's other tenants, the two busy child processes on two cores).

Diagnosis: BENCH_TRACE=1 prints every gap over 15 ms; BENCH_TRACE=stacks also dumps
every thread's Python stack (faulthandler, which needs no interpreter lock) whenever a
gap passes 45 ms, which is how the stalls fixed so far were found.

Prints the figures and exits 0 when both targets are met, 1 otherwise. Uses a
temporary data directory and settings file; runs offscreen unless DISPLAY is set and
--visible is given.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_TARGET_S = 1.5
STALL_TARGET_MS = 50.0

CHILD = r"""
import sys
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from app.gui.main_window import MainWindow
window = MainWindow(settings=QSettings(sys.argv[1], QSettings.Format.IniFormat))
window.show()
def shown():
    print("SHOWN", flush=True)
    app.quit()
QTimer.singleShot(0, shown)
app.exec()
window.deleteLater()
"""


def measure_launch(home: Path, settings: Path) -> float:
    env = dict(os.environ, CRYPTOBENCH_HOME=str(home), PYTHONPATH=str(ROOT))
    start = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(settings)], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("SHOWN"):
            elapsed = time.monotonic() - start
            break
    else:
        raise RuntimeError("the window never showed")
    child.wait(30)
    return elapsed


def stream_profile(samples: int) -> dict[str, object]:
    from app.core.vocab import Mode

    return {
        "name": "stream",
        "jobs": [
            {
                "scheme": "aes-gcm",
                "mode": Mode.LOOPBACK,
                "message_sizes": [18],
                "samples": samples,
                "warmup": 100,
                "keygen_samples": 2,
                "tamper": 1,
            }
        ],
    }


def measure_control(samples: int, home: Path) -> dict[str, float]:
    """The machine's own hiccups: the same heartbeat in a bare event loop (no window),
    while the CLI runs the same job in another process. On a shared 2-core VM the two
    busy child processes, other tenants and the hypervisor pause any process now and
    then; a stall of the app's that the control also shows is the machine's."""
    import json

    from PySide6.QtCore import QProcess, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    path = home / "stream.json"
    path.write_text(json.dumps(stream_profile(samples)))
    gaps: list[float] = []
    last = [time.perf_counter()]

    def beat() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000)
        last[0] = now

    heartbeat = QTimer()
    heartbeat.setInterval(2)
    heartbeat.timeout.connect(beat)
    cli = QProcess()
    cli.setWorkingDirectory(str(ROOT))
    env = cli.processEnvironment()
    env.insert("CRYPTOBENCH_HOME", str(home))
    cli.setProcessEnvironment(env)
    cli.finished.connect(app.quit)
    cli.start(sys.executable, ["-m", "app", "run", str(path), "--no-store", "--quiet"])
    heartbeat.start()
    last[0] = time.perf_counter()
    app.exec()
    heartbeat.stop()
    if cli.exitCode() != 0:
        raise RuntimeError(f"the control run failed: {bytes(cli.readAllStandardError().data()).decode()[-500:]}")
    gaps.sort()
    return {"max_gap_ms": gaps[-1], "p99_gap_ms": gaps[int(len(gaps) * 0.99)], "ticks": float(len(gaps))}


def measure_stalls(samples: int, home: Path, settings_path: Path) -> dict[str, float]:
    os.environ["CRYPTOBENCH_HOME"] = str(home)
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app.core.profile.files import parse_profile
    from app.core.vocab import JobStatus
    from app.gui.main_window import PRELOAD_DELAY_MS, MainWindow

    window = MainWindow(
        settings=QSettings(str(settings_path), QSettings.Format.IniFormat), store_path=home / "store.sqlite3"
    )
    window.resize(1500, 950)
    window.show()
    profile = parse_profile(stream_profile(samples))
    window.panel.set_profile(profile)
    window._mark_saved()  # quitting below must not ask about unsaved changes
    gaps: list[float] = []
    trace = os.environ.get("BENCH_TRACE", "")
    worst = [0.0, 0.0]  # gap ms, when (s after start)
    last = [time.perf_counter()]
    streamed = [0]

    def beat() -> None:
        now = time.perf_counter()
        gap = (now - last[0]) * 1000
        gaps.append(gap)
        if gap > worst[0]:
            worst[:] = [gap, now - started]
        if gap > 15 and trace:
            print(f"  gap {gap:.1f} ms ending {now - started:.3f} s after Run", file=sys.stderr)
        last[0] = now
        if trace == "stacks":  # every thread's Python stack, if this gap passes 45 ms
            faulthandler.dump_traceback_later(0.045, exit=False)

    heartbeat = QTimer()
    heartbeat.setInterval(2)
    heartbeat.timeout.connect(beat)
    result: dict[str, object] = {}

    def finished(run: object) -> None:
        result["run"] = run
        app.quit()

    window.controller.events.connect(
        lambda events: streamed.__setitem__(0, streamed[0] + sum(len(e.values) for e in events if hasattr(e, "values")))
    )
    window.controller.run_finished.connect(finished)
    started = 0.0

    def press_run() -> None:
        nonlocal started
        started = time.perf_counter()
        if not window.start_run():
            raise RuntimeError(f"could not start: {window.panel.reason}")
        heartbeat.start()
        last[0] = time.perf_counter()

    # Press Run as a user would: once the window is up and idle (after its preload).
    QTimer.singleShot(PRELOAD_DELAY_MS + 500, press_run)
    app.exec()
    heartbeat.stop()
    faulthandler.cancel_dump_traceback_later()
    duration = time.perf_counter() - started
    run = result["run"]
    status = run.jobs[0].status  # type: ignore[attr-defined]
    window.controller.shutdown()
    window.deleteLater()
    gaps.sort()
    return {
        "duration_s": duration,
        "values_streamed": float(streamed[0]),
        "ticks": float(len(gaps)),
        "max_gap_ms": gaps[-1],
        "p99_gap_ms": gaps[int(len(gaps) * 0.99)],
        "median_gap_ms": gaps[len(gaps) // 2],
        "job_ok": float(status == JobStatus.OK),
        "worst_at_s": worst[1],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--trials", type=int, default=3, help="streaming runs; the worst stall counts")
    parser.add_argument("--visible", action="store_true", help="use the real display instead of offscreen")
    args = parser.parse_args()
    if not args.visible:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        launches = sorted(measure_launch(home, home / "launch.ini") for _ in range(args.launches))
        print(
            f"launch to window shown: median {launches[len(launches) // 2]:.2f} s, "
            f"min {launches[0]:.2f} s, max {launches[-1]:.2f} s over {len(launches)} launches "
            f"(target < {LAUNCH_TARGET_S} s)"
        )
        trials = [measure_stalls(args.samples, home, home / f"stall{k}.ini") for k in range(args.trials)]
        controls = [measure_control(args.samples, home) for _ in range(args.trials)]
    for k, stalls in enumerate(trials, 1):
        print(
            f"trial {k}: streaming {args.samples} samples per metric ({stalls['values_streamed']:.0f} values) in "
            f"{stalls['duration_s']:.1f} s, job {'ok' if stalls['job_ok'] else 'NOT ok'}: event-loop gap median "
            f"{stalls['median_gap_ms']:.1f} ms, p99 {stalls['p99_gap_ms']:.1f} ms, max {stalls['max_gap_ms']:.1f} ms "
            f"over {stalls['ticks']:.0f} heartbeats; the longest ended {stalls['worst_at_s']:.2f} s after Run"
        )
    for k, control in enumerate(controls, 1):
        print(
            f"control {k} (bare event loop beside the same job run by the CLI): gap p99 "
            f"{control['p99_gap_ms']:.1f} ms, max {control['max_gap_ms']:.1f} ms over {control['ticks']:.0f} heartbeats"
        )
    worst = max(t["max_gap_ms"] for t in trials)
    control_worst = max(c["max_gap_ms"] for c in controls)
    print(
        f"longest stall over {len(trials)} trials: {worst:.1f} ms (target < {STALL_TARGET_MS} ms); "
        f"the machine's own (control): {control_worst:.1f} ms"
    )
    launch_ok = launches[len(launches) // 2] < LAUNCH_TARGET_S
    stall_ok = worst < STALL_TARGET_MS
    jobs_ok = all(t["job_ok"] for t in trials)
    print(f"launch: {'PASS' if launch_ok else 'FAIL'}; stalls: {'PASS' if stall_ok else 'FAIL'}")
    return 0 if launch_ok and stall_ok and jobs_ok else 1


if __name__ == "__main__":
    sys.exit(main())
