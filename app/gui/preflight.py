"""Can the window start here? Answered before Qt is imported, so Qt cannot abort.

Without a display, or with a system library missing, Qt prints "This application failed
to start because no Qt platform plugin could be initialized. Reinstalling the
application may fix this problem." and aborts (exit 134, a core dump). Reinstalling
fixes nothing. This module finds both causes first and says what to do in one line.

It imports no Qt: loading QtGui is itself what fails when libEGL or fontconfig is missing.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

#: Where a missing shared library comes from, by soname stem (the version is dropped, so
#: an installed but wrong major version is named too): (Debian/Ubuntu, Fedora) packages.
#: The Qt 6 wheels' needs, from `readelf -d` of QtGui, QtWidgets and the platform plugins.
LIBRARY_PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util": ("libxcb-util1", "xcb-util"),
    "libxcb-randr": ("libxcb-randr0", "libxcb"),
    "libxcb-shape": ("libxcb-shape0", "libxcb"),
    "libxcb-shm": ("libxcb-shm0", "libxcb"),
    "libxcb-sync": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb": ("libxcb-xkb1", "libxcb"),
    "libxcb-render": ("libxcb-render0", "libxcb"),
    "libxcb-glx": ("libxcb-glx0", "libxcb"),
    "libxcb": ("libxcb1", "libxcb"),
    "libX11-xcb": ("libx11-xcb1", "libX11-xcb"),
    "libX11": ("libx11-6", "libX11"),
    "libxkbcommon-x11": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon": ("libxkbcommon0", "libxkbcommon"),
    "libEGL": ("libegl1", "libglvnd-egl"),
    "libGL": ("libgl1", "libglvnd-glx"),
    "libOpenGL": ("libopengl0", "libglvnd-opengl"),
    "libGLX": ("libglx0", "libglvnd-glx"),
    "libfontconfig": ("libfontconfig1", "fontconfig"),
    "libfreetype": ("libfreetype6", "freetype"),
    "libdbus-1": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0": ("libglib2.0-0", "glib2"),
    "libwayland-client": ("libwayland-client0", "libwayland-client"),
    "libwayland-cursor": ("libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl": ("libwayland-egl1", "libwayland-egl"),
    "libSM": ("libsm6", "libSM"),
    "libICE": ("libice6", "libICE"),
    "libz": ("zlib1g", "zlib"),
}

#: Platforms that draw on a screen and so need a display server to talk to.
_NEEDS_X11 = {"xcb"}
_NEEDS_WAYLAND = {"wayland", "wayland-egl"}

_HEADLESS_HINT = (
    "run benchmarks without a window with `cryptobench run PROFILE` (see `cryptobench --help`), "
    "or start the window off-screen with QT_QPA_PLATFORM=offscreen"
)


@dataclass(frozen=True)
class Problem:
    """Why the window cannot start, as the one line a user reads."""

    message: str


def _missing_library_message(platform: str, missing: list[str]) -> str:
    debian, fedora = [], []
    for soname in missing:
        stem = soname.split(".so")[0]
        packages = LIBRARY_PACKAGES.get(stem)
        if packages:
            debian.append(packages[0])
            fedora.append(packages[1])
    names = ", ".join(missing)
    what = f"Qt's {platform} platform needs {names}, which {'is' if len(missing) == 1 else 'are'} not installed"
    if not debian:
        return f"the window cannot start: {what}; install the package that provides it"
    return (
        f"the window cannot start: {what}; install it: Debian/Ubuntu `sudo apt-get install {_unique(debian)}`, "
        f"Fedora `sudo dnf install {_unique(fedora)}`"
    )


def _unique(words: list[str]) -> str:
    """The words without repeats, in their first order, space-separated."""
    return " ".join(dict.fromkeys(words))


_NOT_FOUND = re.compile(r"^\s*(\S+\.so[.\d]*)\s*=>\s*not found", re.MULTILINE)
_DLOPEN_MISSING = re.compile(r"(\S+\.so[.\d]*): cannot open shared object file")


def missing_libraries(binary: Path) -> list[str]:
    """Shared libraries `binary` needs that the dynamic loader cannot find (empty if none).

    dlopen names only the first missing library; `ldd`, where present, names them all,
    so a user installs everything in one go.
    """
    try:
        ctypes.CDLL(str(binary), mode=getattr(os, "RTLD_LAZY", 1) | getattr(os, "RTLD_LOCAL", 0))
        return []
    except OSError as exc:
        first = _DLOPEN_MISSING.search(str(exc))
    ldd = shutil.which("ldd")
    if ldd:
        try:
            out = subprocess.run([ldd, str(binary)], capture_output=True, text=True, timeout=10, check=False).stdout
            found = list(dict.fromkeys(_NOT_FOUND.findall(out)))
            if found:
                return found
        except (OSError, subprocess.SubprocessError):
            pass
    return [first.group(1)] if first else []


def _qt_dir() -> Path | None:
    """PySide6's Qt folder (libraries and plugins), found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        qt = Path(location) / "Qt"
        if qt.is_dir():
            return qt
    return None


def chosen_platform(environ: os._Environ[str] | dict[str, str]) -> str:
    """The platform plugin Qt will try first, as Qt 6 chooses it on Linux."""
    requested = environ.get("QT_QPA_PLATFORM", "").strip()
    if requested:
        # "xcb:offscreen" or "wayland;xcb" lists fallbacks; options follow a colon only
        # after the name on some platforms ("vnc:size=800x600"): the name comes first.
        return re.split(r"[;:]", requested, maxsplit=1)[0].strip().lower()
    if environ.get("WAYLAND_DISPLAY") and environ.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        return "wayland"
    return "xcb"


def _x11_display_reachable(display: str, timeout: float = 2.0) -> bool:
    """True when an X server answers at `display` (":0", "unix:1", "localhost:10.0")."""
    match = re.fullmatch(r"(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?", display)
    if not match:
        return False
    host, number = match["host"], int(match["number"])
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        for address in ("\0" + path, path):  # Linux servers also listen on the abstract name
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(timeout)
                    sock.connect(address)
                    return True
            except OSError:
                continue
        return False
    try:
        with socket.create_connection((host, 6000 + number), timeout=timeout):
            return True
    except OSError:
        return False


def _wayland_reachable(environ: os._Environ[str] | dict[str, str]) -> bool:
    name = environ.get("WAYLAND_DISPLAY", "")
    path = Path(name) if name.startswith("/") else Path(environ.get("XDG_RUNTIME_DIR", "/nonexistent")) / name
    return bool(name) and path.exists()


def check(environ: os._Environ[str] | dict[str, str] | None = None) -> Problem | None:
    """Why the window cannot start here, or None when nothing stops it that we can see."""
    if not sys.platform.startswith("linux"):
        return None  # Windows and macOS always have their one platform and its libraries
    env = os.environ if environ is None else environ
    platform = chosen_platform(env)
    if platform in _NEEDS_X11:
        display = env.get("DISPLAY", "")
        if not display:
            if _wayland_reachable(env):
                return None  # Qt falls back from xcb to a live Wayland session
            return Problem(f"no display to open the window on (DISPLAY is not set); {_HEADLESS_HINT}")
        if not _x11_display_reachable(display):
            return Problem(f"no display to open the window on (nothing answers at DISPLAY={display}); {_HEADLESS_HINT}")
    elif platform in _NEEDS_WAYLAND and not _wayland_reachable(env):
        return Problem(
            f"no display to open the window on (no Wayland compositor at "
            f"WAYLAND_DISPLAY={env.get('WAYLAND_DISPLAY', '')!r}); {_HEADLESS_HINT}"
        )
    qt = _qt_dir()
    if qt is None:
        return None  # a frozen build lays Qt out its own way; Qt will speak for itself
    # QtGui and QtWidgets come first: importing them is what fails without libEGL.
    for library in ("libQt6Gui.so.6", "libQt6Widgets.so.6"):
        if (qt / "lib" / library).exists():
            missing = missing_libraries(qt / "lib" / library)
            if missing:
                return Problem(_missing_library_message(platform, missing))
    plugin_dir = Path(env.get("QT_QPA_PLATFORM_PLUGIN_PATH") or qt / "plugins" / "platforms")
    plugin = plugin_dir / f"libq{platform}.so"
    if plugin.exists():
        missing = missing_libraries(plugin)
        if missing:
            return Problem(_missing_library_message(platform, missing))
    return None
