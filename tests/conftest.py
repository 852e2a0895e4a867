"""Test-wide isolation: offscreen Qt, a private data directory, no leftover processes."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import psutil  # noqa: E402
import pytest  # noqa: E402


def _live_children() -> list[psutil.Process]:
    """Child processes still running, except multiprocessing's resource tracker,
    which Python starts once per interpreter and keeps on purpose."""
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                continue
            if any("resource_tracker" in part for part in child.cmdline()):
                continue
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        alive.append(child)
    return alive


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the real user data directory: the store lives under tmp_path."""
    home = tmp_path / "cryptobench-home"
    monkeypatch.setenv("CRYPTOBENCH_HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    return home


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """Fail a test that leaves a worker or child process running."""
    before = {p.pid for p in _live_children()}
    yield
    leftovers = [p for p in _live_children() if p.pid not in before]
    if leftovers:
        for process in leftovers:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(leftovers, timeout=5)
        pytest.fail(f"test left child processes running: {[p.pid for p in leftovers]}")
