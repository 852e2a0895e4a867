"""A Python child that paints, for the tests whose painting could crash the process.

pyqtgraph has ended the window with a segmentation fault while painting; in the pytest
process that kills the worker and every test it had yet to run, with no word of where.
A child runs offscreen with faulthandler on, from the repository's root; `finish_child`
turns its crash into a test failure carrying faulthandler's trace of the Python frames.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers.paths import ROOT


def run_child(args: list[str]) -> subprocess.Popen[str]:
    """Start `python -X faulthandler ARGS` offscreen, from the repository's root."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONFAULTHANDLER": "1"}
    return subprocess.Popen(
        [sys.executable, "-X", "faulthandler", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_child(child: subprocess.Popen[str], timeout: float, what: str) -> str:
    """Wait for the child (killed past `timeout`: a hang, not a slow machine); its stdout,
    or an AssertionError with its exit and the end of its stderr (a crash's trace)."""
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        raise AssertionError(f"{what}: still painting after {timeout:.0f} s, killed\n{err[-4000:]}") from None
    if child.returncode != 0:
        raise AssertionError(f"{what}: the child ended with exit code {child.returncode}\n{err[-6000:]}")
    return out
