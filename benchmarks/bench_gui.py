"""GUI budgets: time from launch to the main window shown, and event-loop stalls while a
real loopback job streams 100,000 samples.

    .venv/bin/python benchmarks/bench_gui.py [--samples N] [--launches K]

Launch: the parent starts `python -c ...` (a fresh interpreter importing the app,
building the window and showing it) and stops the clock when the child reports that
its event loop ran once after `show()`, i.e. the window was exposed and painted.
Target: under 1.5 s from source.

Stalls: in one process, the real MainWindow runs a loopback AES-256-GCM job of 18-byte
messages (`--samples`, default 100,000 per metric; compute, rtt, receiver and network
stream together). A 2 ms heartbeat timer records the gap between its ticks; a stall is
a gap beyond the interval. Target: the longest stall under 50 ms.

Prints the figures and exits 0 when both targets are met, 1 otherwise. Uses a
temporary data directory and settings file; runs offscreen unless DISPLAY is set and
--visible is given.
"""

from __future__ import annotations

import argparse
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
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(settings)], stdout=subprocess.PIPE, text=True,
                             env=env, cwd=ROOT)
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("SHOWN"):
            elapsed = time.monotonic() - start
            break
    else:
        raise RuntimeError("the window never showed")
    child.wait(30)
    return elapsed


def measure_stalls(samples: int, home: Path, settings_path: Path) -> dict[str, float]:
    os.environ["CRYPTOBENCH_HOME"] = str(home)
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app.core.profile import parse_profile
    from app.gui.main_window import MainWindow

    window = MainWindow(settings=QSettings(str(settings_path), QSettings.Format.IniFormat),
                        store_path=home / "store.sqlite3")
    window.resize(1500, 950)
    window.show()
    profile = parse_profile({"name": "stream", "jobs": [
        {"scheme": "aes-gcm", "mode": "loopback", "message_sizes": [18], "samples": samples, "warmup": 100,
         "keygen_samples": 2, "tamper": 1}]})
    window.panel.set_profile(profile)
    window._mark_saved()  # quitting below must not ask about unsaved changes
    gaps: list[float] = []
    worst = [0.0, 0.0]  # gap ms, when (s after start)
    last = [time.perf_counter()]
    streamed = [0]

    def beat() -> None:
        now = time.perf_counter()
        gap = (now - last[0]) * 1000
        gaps.append(gap)
        if gap > worst[0]:
            worst[:] = [gap, now - started]
        last[0] = now

    heartbeat = QTimer()
    heartbeat.setInterval(2)
    heartbeat.timeout.connect(beat)
    result: dict[str, object] = {}

    def finished(run: object) -> None:
        result["run"] = run
        app.quit()

    window.controller.events.connect(lambda events: streamed.__setitem__(0, streamed[0] + sum(
        len(e.values) for e in events if hasattr(e, "values"))))
    window.controller.run_finished.connect(finished)
    started = time.perf_counter()
    if not window.start_run():
        raise RuntimeError(f"could not start: {window.panel.reason}")
    heartbeat.start()
    last[0] = time.perf_counter()
    app.exec()
    heartbeat.stop()
    duration = time.perf_counter() - started
    run = result["run"]
    status = run.jobs[0].status  # type: ignore[attr-defined]
    window.controller.shutdown()
    window.deleteLater()
    gaps.sort()
    return {"duration_s": duration, "values_streamed": float(streamed[0]), "ticks": float(len(gaps)),
            "max_gap_ms": gaps[-1], "p99_gap_ms": gaps[int(len(gaps) * 0.99)], "median_gap_ms": gaps[len(gaps) // 2],
            "job_ok": float(status == "ok"), "worst_at_s": worst[1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--visible", action="store_true", help="use the real display instead of offscreen")
    args = parser.parse_args()
    if not args.visible:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        launches = sorted(measure_launch(home, home / "launch.ini") for _ in range(args.launches))
        print(f"launch to window shown: median {launches[len(launches) // 2]:.2f} s, "
              f"min {launches[0]:.2f} s, max {launches[-1]:.2f} s over {len(launches)} launches "
              f"(target < {LAUNCH_TARGET_S} s)")
        stalls = measure_stalls(args.samples, home, home / "stall.ini")
    print(f"streaming {args.samples} samples per metric ({stalls['values_streamed']:.0f} values) in "
          f"{stalls['duration_s']:.1f} s, job {'ok' if stalls['job_ok'] else 'NOT ok'}: event-loop gap median "
          f"{stalls['median_gap_ms']:.1f} ms, p99 {stalls['p99_gap_ms']:.1f} ms, max {stalls['max_gap_ms']:.1f} ms "
          f"over {stalls['ticks']:.0f} heartbeats (target max < {STALL_TARGET_MS} ms); the longest ended "
          f"{stalls['worst_at_s']:.2f} s after Run")
    launch_ok = launches[len(launches) // 2] < LAUNCH_TARGET_S
    stall_ok = stalls["max_gap_ms"] < STALL_TARGET_MS
    print(f"launch: {'PASS' if launch_ok else 'FAIL'}; stalls: {'PASS' if stall_ok else 'FAIL'}")
    return 0 if launch_ok and stall_ok and stalls["job_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
