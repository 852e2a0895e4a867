"""Smoke test of the frozen app: `make package-test` (after `make package`).

Runs the bundle's executable as a user would and fails on any non-zero exit, any
traceback or missing module in its output, or any process of the bundle left behind:

  --version, presets, list, list --json, selftest, a bad profile (must exit 2 with a
  one-line error), run quick --no-store --json (its loopback job spawns a receiver and a
  sender from the frozen executable; its tls13 operations job runs TLS 1.3 handshakes on
  the bundled pyOpenSSL), report --pdf --markdown of that run, the GUI
  offscreen (opens, paints, quits by itself), and the Linux desktop-entry installer.

It also measures the budgets recorded in packaging/README.md: bundle size (a hard
limit: it does not depend on the machine's load), launch to first paint and the idle
window's peak memory (reported against their targets; timings on a shared machine
are noisy, so they warn instead of failing). Everything runs with its own temporary
CRYPTOBENCH_HOME and config directory: the user's store and settings are never touched.

Usage: python packaging/smoke_test.py [BUNDLE_DIR] [--launches N] [--budgets FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIZE_LIMIT_MB = 250
LAUNCH_TARGET_S = 2.0
IDLE_SECONDS = 3.0
#: Output that means the frozen app is broken even when it exits 0.
BROKEN = re.compile(
    r"Traceback \(most recent call last\)|ModuleNotFoundError|ImportError|"
    r"No module named|Failed to execute script|\[PYI-\d+:ERROR\]|"
    r"Could not load the Qt platform plugin"
)


class SmokeFailure(Exception):
    pass


@dataclass
class Smoke:
    executable: Path
    workdir: Path
    env: dict[str, str]
    results: list[tuple[str, bool, str]] = field(default_factory=list)

    def run(
        self,
        name: str,
        args: Sequence[str],
        *,
        expect_code: int = 0,
        timeout: float = 180,
        check: Callable[[subprocess.CompletedProcess[str]], str | None] | None = None,
    ) -> None:
        """Run the executable with `args`; record a pass or the reason for a failure."""
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [str(self.executable), *args],
                env=self.env,
                cwd=self.workdir,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self.results.append((name, False, f"no exit within {timeout:.0f} s"))
            return
        elapsed = time.monotonic() - started
        output = proc.stdout + proc.stderr
        problem = None
        if proc.returncode != expect_code:
            problem = f"exit code {proc.returncode}, expected {expect_code}"
        elif match := BROKEN.search(output):
            problem = f"output contains {match.group(0)!r}"
        elif check is not None:
            problem = check(proc)
        if problem:
            tail = "\n".join(output.strip().splitlines()[-15:])
            self.results.append((name, False, f"{problem}\n{tail}"))
        else:
            self.results.append((name, True, f"{elapsed:.1f} s"))

    def leftovers(self) -> list[str]:
        """Processes still running from this bundle (orphaned children would show here)."""
        import psutil

        exe = str(self.executable.resolve())
        found = []
        for proc in psutil.process_iter(["pid", "exe", "cmdline"]):
            try:
                if proc.info["exe"] == exe:
                    found.append(f"pid {proc.info['pid']}: {' '.join(proc.info['cmdline'] or [])}")
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return found


def find_executable(bundle: Path) -> Path:
    candidates = [bundle / "cryptobench", bundle / "cryptobench.exe", bundle / "Contents" / "MacOS" / "cryptobench"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise SmokeFailure(f"{bundle}: no cryptobench executable in it; run `make package` first")


def bundle_size_mb(bundle: Path) -> float:
    total = sum(p.lstat().st_size for p in bundle.rglob("*") if p.is_file() or p.is_symlink())
    return total / 1e6  # decimal megabytes: the stricter reading of "250 MB"


def app_version() -> str:
    text = (ROOT / "app" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'__version__\s*=\s*"([^"]+)"', text)
    if not match:
        raise SmokeFailure("app/__init__.py: no __version__")
    return match.group(1)


def check_json_list(proc: subprocess.CompletedProcess[str]) -> str | None:
    schemes = json.loads(proc.stdout)
    ids = {s.get("id") for s in schemes}
    missing = {"aes-gcm", "ecdh", "rsa-oaep", "ml-kem", "ed25519", "sha256"} - ids
    return f"schemes missing from `list --json`: {sorted(missing)}" if missing else None


def check_run(results_file: Path) -> Callable[[subprocess.CompletedProcess[str]], str | None]:
    def check(_: subprocess.CompletedProcess[str]) -> str | None:
        if not results_file.is_file():
            return f"{results_file.name} was not written"
        jobs = json.loads(results_file.read_text(encoding="utf-8"))["jobs"]
        bad = [f"{j['label']}: {j['status']} {j.get('error') or ''}" for j in jobs if j["status"] != "ok"]
        if bad:
            return "jobs not ok: " + "; ".join(bad)
        loopback = [j for j in jobs if j["mode"] == "loopback"]
        if not loopback or not all((j.get("wire_bytes") or {}) for j in loopback):
            return "no loopback job with bytes on the wire: the frozen sender/receiver did not run"
        return check_tls13(json.loads(results_file.read_text(encoding="utf-8")))

    return check


def check_tls13(results: dict[str, Any]) -> str | None:
    """The quick preset's tls13 operations job ran on the bundle's pyOpenSSL: its handshakes
    timed, what they negotiated recorded, and pyOpenSSL's version read from its metadata."""
    tls = [j for j in results["jobs"] if j["scheme"] == "tls13" and j["mode"] == "operations"]
    if not tls:
        return "no tls13 operations job in the run: the bundle's TLS 1.3 path was not exercised"
    for job in tls:
        if "handshake_client" not in job["metrics"] or not (job.get("tls") or {}).get("group"):
            return f"{job['label']}: no timed handshake or negotiated group"
    pyopenssl = results["run"]["environment"].get("libraries", {}).get("pyOpenSSL") or {}
    if not pyopenssl.get("version"):
        return "pyOpenSSL's version is missing from the environment: its metadata is not in the bundle"
    return None


def check_report(pdf: Path, markdown: Path) -> Callable[[subprocess.CompletedProcess[str]], str | None]:
    def check(_: subprocess.CompletedProcess[str]) -> str | None:
        if not pdf.is_file() or not pdf.read_bytes().startswith(b"%PDF-"):
            return f"{pdf.name} is missing or not a PDF"
        if pdf.stat().st_size < 20_000:
            return f"{pdf.name} is only {pdf.stat().st_size} bytes"
        if not markdown.is_file() or "X25519" not in markdown.read_text(encoding="utf-8"):
            return f"{markdown.name} is missing or lacks the run's jobs"
        return None

    return check


def check_load(path: Path) -> Callable[[subprocess.CompletedProcess[str]], str | None]:
    """The load job measured every request and kept its histogram."""

    def check(_: subprocess.CompletedProcess[str]) -> str | None:
        if not path.is_file():
            return "no results JSON written"
        job = json.loads(path.read_text(encoding="utf-8"))["jobs"][0]
        steps = (job.get("load") or {}).get("steps") or []
        if job.get("status") != "ok" or not steps:
            return f"load job {job.get('status')}: {job.get('error')}"
        step = steps[0]
        if step.get("completed") != step.get("sent") or not step.get("histogram"):
            return f"{step.get('completed')} of {step.get('sent')} requests answered, histogram {bool(step.get('histogram'))}"
        return None

    return check


def gui_launch(smoke: Smoke, index: int) -> dict[str, float] | None:
    """Open the window offscreen once; return launch-to-paint seconds and peak memory."""
    report = smoke.workdir / f"startup-{index}.json"
    launched = time.time()
    smoke.run(
        f"GUI offscreen, launch {index + 1}",
        ["gui", "--quit-after", str(IDLE_SECONDS), "--startup-report", str(report)],
        timeout=60,
        check=lambda _: None if report.is_file() else "no startup report written",
    )
    if not report.is_file():
        return None
    data = json.loads(report.read_text(encoding="utf-8"))
    if data.get("window_painted_at") is None:
        smoke.results[-1] = (smoke.results[-1][0], False, "the window never painted")
        return None
    if not data.get("frozen"):
        smoke.results[-1] = (smoke.results[-1][0], False, "the GUI does not report itself frozen")
        return None
    peak = max(data.get("peak_rss_bytes") or 0, data.get("rss_bytes") or 0)
    return {"launch_to_paint_s": data["window_painted_at"] - launched, "idle_peak_rss_mb": peak / 2**20}


def check_desktop_install(smoke: Smoke) -> None:
    """The Linux installer puts the bundle, a launcher, the entry and every icon size in PREFIX."""
    if not sys.platform.startswith("linux"):
        return
    prefix = smoke.workdir / "prefix"
    proc = subprocess.run(
        ["sh", str(ROOT / "packaging" / "linux" / "install.sh"), str(smoke.executable.parent)],
        env={**smoke.env, "PREFIX": str(prefix)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    name = "desktop entry install"
    if proc.returncode != 0:
        smoke.results.append((name, False, proc.stdout + proc.stderr))
        return
    entry = prefix / "share" / "applications" / "cryptobench.desktop"
    icons = list((prefix / "share" / "icons" / "hicolor").glob("*/apps/cryptobench.*"))
    problems = []
    if not entry.is_file():
        problems.append(f"{entry} missing")
    if len(icons) < 9:
        problems.append(f"{len(icons)} icon sizes installed, expected 9 and the SVG")
    validator = shutil.which("desktop-file-validate")
    if validator and entry.is_file():
        out = subprocess.run([validator, str(entry)], capture_output=True, text=True, check=False)
        if out.returncode != 0 or "error" in out.stdout.lower():
            problems.append(f"desktop-file-validate: {out.stdout.strip()}")
    launcher = prefix / "bin" / "cryptobench"
    version = subprocess.run(
        [str(launcher), "--version"], env=smoke.env, capture_output=True, text=True, timeout=60, check=False
    )
    if version.returncode != 0 or app_version() not in version.stdout:
        problems.append(f"{launcher} --version: {version.stdout.strip()} {version.stderr.strip()}")
    passed = "validated by desktop-file-validate" if validator else "desktop-file-validate not installed"
    smoke.results.append((name, not problems, "; ".join(problems) or passed))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", nargs="?", type=Path, default=ROOT / "dist" / "cryptobench")
    parser.add_argument("--launches", type=int, default=3, help="GUI launches to time (median)")
    parser.add_argument("--budgets", type=Path, help="write the measured budgets as JSON")
    args = parser.parse_args(argv)
    try:
        args.bundle = args.bundle.resolve()
        executable = find_executable(args.bundle)
    except SmokeFailure as exc:
        print(f"smoke test: error: {exc}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="cryptobench-smoke-") as tmp:
        work = Path(tmp)
        env = {
            **os.environ,
            "CRYPTOBENCH_HOME": str(work / "home"),
            "XDG_CONFIG_HOME": str(work / "config"),
            "XDG_DATA_HOME": str(work / "data"),
            "QT_QPA_PLATFORM": "offscreen",
        }
        env.pop("PYTHONPATH", None)  # the bundle must not lean on the source tree
        smoke = Smoke(executable, work, env)
        version = app_version()
        smoke.run(
            "--version",
            ["--version"],
            check=lambda p: (
                None
                if p.stdout.strip() == f"cryptobench {version}"
                else f"printed {p.stdout.strip()!r}, expected 'cryptobench {version}'"
            ),
        )
        smoke.run("presets", ["presets"], check=lambda p: None if "quick" in p.stdout else "no 'quick' preset")
        smoke.run("list", ["list"], check=lambda p: None if "AES" in p.stdout.upper() else "no schemes listed")
        smoke.run("list --json", ["list", "--json"], check=check_json_list)
        smoke.run(
            "selftest",
            ["selftest"],
            timeout=300,
            check=lambda p: None if re.search(r"\b0 failed", p.stdout) else "self-test reported failures",
        )
        smoke.run(
            "bad profile is a usage error",
            ["run", str(work / "missing.json")],
            expect_code=2,
            check=lambda p: None if "missing.json" in p.stderr else "the error does not name the file",
        )
        results = work / "quick.json"
        smoke.run(
            "run quick (loopback children)",
            ["run", "quick", "--no-store", "--quiet", "--json", str(results)],
            timeout=600,
            check=check_run(results),
        )
        load_profile, load_results = work / "load.json", work / "load-results.json"
        load_profile.write_text(
            json.dumps(
                {
                    "name": "load smoke",
                    "jobs": [
                        {
                            "scheme": "x25519",
                            "mode": "load",
                            "clients": 2,
                            "rates": [50],
                            "duration_s": 0.3,
                            "warmup_s": 0,
                        }
                    ],
                }
            ),
            encoding="utf-8",
        )
        smoke.run(
            "run a load job (server, generator, HdrHistogram in the bundle)",
            ["run", str(load_profile), "--no-store", "--quiet", "--json", str(load_results)],
            timeout=120,
            check=check_load(load_results),
        )
        pdf, markdown = work / "quick.pdf", work / "quick.md"
        if results.is_file():
            smoke.run(
                "report --pdf --markdown",
                ["report", str(results), "--pdf", str(pdf), "--markdown", str(markdown)],
                timeout=300,
                check=check_report(pdf, markdown),
            )
        launches = [m for m in (gui_launch(smoke, i) for i in range(max(1, args.launches))) if m]
        check_desktop_install(smoke)
        left = smoke.leftovers()
        smoke.results.append(("no process left running", not left, "; ".join(left) or "none"))

    size = bundle_size_mb(args.bundle)
    smoke.results.append((f"bundle size under {SIZE_LIMIT_MB} MB", size < SIZE_LIMIT_MB, f"{size:.0f} MB"))
    for name, ok, detail in smoke.results:
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")

    budgets: dict[str, object] = {"bundle_mb": round(size, 1), "platform": sys.platform}
    if launches:
        launch = statistics.median(m["launch_to_paint_s"] for m in launches)
        peak = max(m["idle_peak_rss_mb"] for m in launches)
        budgets.update(
            launch_to_paint_s=round(launch, 3),
            launches=len(launches),
            idle_peak_rss_mb=round(peak, 1),
            idle_seconds=IDLE_SECONDS,
        )
        flag = "" if launch < LAUNCH_TARGET_S else f"  WARNING: over the {LAUNCH_TARGET_S:.0f} s target"
        print(f"budget  launch to first paint: {launch:.2f} s (median of {len(launches)}){flag}")
        print(f"budget  idle window peak memory: {peak:.0f} MiB RSS after {IDLE_SECONDS:.0f} s idle")
    print(f"budget  bundle size: {size:.0f} MB (limit {SIZE_LIMIT_MB} MB)")
    if args.budgets:
        args.budgets.write_text(json.dumps(budgets, indent=2) + "\n", encoding="utf-8")
    failed = [name for name, ok, _ in smoke.results if not ok]
    print(f"{len(smoke.results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
