"""`make run` with no display or a missing system library: one line and exit 2, not Qt's abort.

The window is started for real in a child process (`python -m app`, `python -m app gui`),
with the environment of a machine reached over SSH (no DISPLAY) or of one missing
libxcb-cursor0. The missing library is made by copying Qt's xcb plugin and renaming the
library it needs to a version no system has, so the dynamic loader cannot find it, just
as on a machine without the package. A fake X display (a listening socket that accepts
and says nothing) lets the check get past the display to the libraries; the app must
stop before Qt ever talks to it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.gui import preflight

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the checks are Linux's")

QT_DIR = preflight._qt_dir()


def _env(**changes: str | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "QT_QPA_PLATFORM_PLUGIN_PATH")
    }
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def _start(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)  # not 134 (Qt's abort)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cryptobench: error: ")
    assert "Reinstalling" not in result.stderr and "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("args", [[], ["gui"]])
def test_no_display_says_how_to_run_headless(args: list[str]) -> None:
    line = _assert_one_line_error(
        _start(args, _env()), "no display", "DISPLAY is not set", "cryptobench run", "QT_QPA_PLATFORM=offscreen"
    )
    assert line.count("`") % 2 == 0


def test_a_display_nobody_answers_is_no_display() -> None:
    number = 40000 + secrets.randbelow(20000)  # no X server listens there
    _assert_one_line_error(_start([], _env(DISPLAY=f":{number}")), f"nothing answers at DISPLAY=:{number}")


@pytest.fixture
def fake_x_display() -> Iterator[str]:
    """An X display that accepts connections (Linux abstract socket; no file, no port)."""
    for _ in range(20):
        number = 40000 + secrets.randbelow(20000)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(f"\0/tmp/.X11-unix/X{number}")
        except OSError:
            listener.close()
            continue
        listener.listen(4)
        try:
            yield f":{number}"
        finally:
            listener.close()
        return
    pytest.skip("no free abstract X socket name")


def _plugin_needing(tmp_path: Path, library: bytes, renamed: bytes) -> Path:
    """A copy of Qt's xcb plugin that needs `renamed` instead of `library`."""
    assert QT_DIR is not None
    original = (QT_DIR / "plugins" / "platforms" / "libqxcb.so").read_bytes()
    assert len(library) == len(renamed) and original.count(library + b"\0") == 1
    platforms = tmp_path / "plugins" / "platforms"
    platforms.mkdir(parents=True)
    (platforms / "libqxcb.so").write_bytes(original.replace(library + b"\0", renamed + b"\0"))
    # The plugin finds Qt's own libraries at $ORIGIN/../../lib, as in the wheel.
    (tmp_path / "lib").symlink_to(QT_DIR / "lib", target_is_directory=True)
    return platforms


@pytest.mark.skipif(
    QT_DIR is None or not (QT_DIR / "plugins/platforms/libqxcb.so").exists(),
    reason="needs the PySide6 wheel's xcb plugin",
)
@pytest.mark.parametrize("args", [[], ["gui"]])
def test_a_missing_library_names_the_package(tmp_path: Path, fake_x_display: str, args: list[str]) -> None:
    platforms = _plugin_needing(tmp_path, b"libxcb-cursor.so.0", b"libxcb-cursor.so.9")
    env = _env(DISPLAY=fake_x_display, QT_QPA_PLATFORM="xcb", QT_QPA_PLATFORM_PLUGIN_PATH=str(platforms))
    _assert_one_line_error(
        _start(args, env),
        "libxcb-cursor.so.9",
        "sudo apt-get install libxcb-cursor0",
        "sudo dnf install xcb-util-cursor",
    )


@pytest.mark.skipif(QT_DIR is None, reason="needs the PySide6 wheel")
def test_a_machine_with_everything_passes(fake_x_display: str) -> None:
    # The check alone (starting Qt on the fake display would hang): nothing missing here,
    # where the test suite itself runs Qt, for offscreen and for xcb when it is installed.
    assert preflight.check(_env(QT_QPA_PLATFORM="offscreen")) is None
    problem = preflight.check(_env(DISPLAY=fake_x_display))
    assert problem is None or "libxcb" in problem.message or "libX" in problem.message


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "xcb"),
        ({"QT_QPA_PLATFORM": "offscreen"}, "offscreen"),
        ({"QT_QPA_PLATFORM": "xcb:offscreen"}, "xcb"),
        ({"QT_QPA_PLATFORM": "wayland;xcb"}, "wayland"),
        ({"QT_QPA_PLATFORM": "VNC:size=800x600"}, "vnc"),
        ({"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, "wayland"),
        ({"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "x11"}, "xcb"),
    ],
)
def test_the_platform_is_chosen_as_qt_chooses_it(env: dict[str, str], expected: str) -> None:
    assert preflight.chosen_platform(env) == expected


def test_offscreen_needs_no_display() -> None:
    assert preflight.check({"QT_QPA_PLATFORM": "offscreen"}) is None


def test_every_library_the_wheel_needs_has_a_package() -> None:
    """The packages table covers each system library Qt's GUI libraries and plugins name."""
    if QT_DIR is None or not shutil.which("readelf"):
        pytest.skip("needs the PySide6 wheel and readelf")
    needed: set[str] = set()
    for binary in [
        QT_DIR / "lib" / "libQt6Gui.so.6",
        QT_DIR / "lib" / "libQt6Widgets.so.6",
        QT_DIR / "lib" / "libQt6XcbQpa.so.6",
        *(QT_DIR / "plugins" / "platforms" / f"libq{p}.so" for p in ("xcb", "offscreen")),
    ]:
        if binary.exists():
            out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
            needed |= {line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line}
    system = {
        name
        for name in needed
        if not name.startswith("libQt6")
        and not name.startswith(("libc.", "libm.", "libstdc++", "libgcc_s", "libpthread", "libdl.", "librt."))
    }
    uncovered = {name for name in system if name.split(".so")[0] not in preflight.LIBRARY_PACKAGES}
    assert not uncovered, f"no package named for {sorted(uncovered)}"
