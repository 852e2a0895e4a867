"""The machine and software every run was measured on.

A benchmark number without its environment cannot be compared or reproduced: AES is an
order of magnitude faster with AES-NI, the same `cryptography` wheel can link different
OpenSSL builds, and a powersave governor makes a fast CPU look slow. So every run stores
`collect_environment()` next to its samples.

Every probe is best-effort: a failing probe records None (or an empty list) and never
raises, so a run on macOS, Windows or in a locked-down container still gets recorded.
The module stays Qt-free (Qt versions come from package metadata, never an import) and
spawns no process on Linux, so collecting takes a few tens of milliseconds.
"""

from __future__ import annotations

import functools
import glob
import importlib.metadata
import platform
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import psutil

from app.core.link.probe import emulation

__all__ = ["CPU_FLAGS", "collect_environment", "cpu_flags_summary"]

T = TypeVar("T")

#: /proc/cpuinfo flag name -> label for humans. These are the instructions that change
#: crypto speed: AES rounds, GCM's carry-less multiply, SHA-256, and wide vectors.
CPU_FLAGS: dict[str, str] = {
    "aes": "AES-NI",
    "pclmulqdq": "PCLMULQDQ",
    "sha_ni": "SHA-NI",
    "avx2": "AVX2",
    "vaes": "VAES",
    "avx512f": "AVX-512F",
}

_GOVERNOR_GLOB = "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"


def _probe(fn: Callable[[], T]) -> T | None:
    """Run one probe; any failure means "unknown" (None), never a failed run."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - a probe must never take the run down
        return None


def _read_text(path: str) -> str:
    return Path(path).read_text(encoding="utf-8", errors="replace")


def _stripped_text(path: str) -> str:
    return _read_text(path).strip()


def _cpuinfo_field(cpuinfo: str, name: str) -> str | None:
    """Return the first `name : value` field of /proc/cpuinfo (all CPUs repeat it)."""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == name:
            return value.strip()
    return None


def _cpu_model(cpuinfo: str | None) -> str | None:
    """CPU model name; x86 Linux has "model name", ARM boards "Model" or "Hardware"."""
    for name in ("model name", "Model", "Hardware"):
        model = _cpuinfo_field(cpuinfo, name) if cpuinfo else None
        if model:
            return model
    if sys.platform == "darwin":
        out = _probe(
            lambda: subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=2,
                check=True,
            ).stdout.strip()
        )
        if out:
            return out
    if sys.platform.startswith("linux"):
        return None  # platform.processor() would spawn `uname -p` and rarely helps
    return platform.processor() or None


def _cpu_flags(cpuinfo: str | None) -> tuple[dict[str, bool | None], str | None]:
    """Return ({flag: present}, note); None values with a note where unreadable."""
    line = _cpuinfo_field(cpuinfo, "flags") if cpuinfo else None
    if line is None:
        note = "CPU flags are read from /proc/cpuinfo on x86 Linux only; not available on this machine"
        return dict.fromkeys(CPU_FLAGS), note
    present = set(line.split())
    return {name: name in present for name in CPU_FLAGS}, None


def _governors() -> list[str]:
    """Distinct scaling governors of all CPUs; [] where cpufreq is not exposed."""
    found: set[str] = set()
    for path in glob.glob(_GOVERNOR_GLOB):
        value = _probe(functools.partial(_stripped_text, path))
        if value:
            found.add(value)
    return sorted(found)


def _cpu_freq() -> tuple[float | None, float | None]:
    freq = psutil.cpu_freq()
    if freq is None:
        return None, None
    current = float(freq.current) if freq.current else None
    maximum = float(freq.max) if freq.max else None
    return current, maximum


def _cpu() -> dict[str, Any]:
    cpuinfo = None
    if sys.platform.startswith("linux"):
        cpuinfo = _probe(lambda: _read_text("/proc/cpuinfo"))
    flags, flags_note = _probe(lambda: _cpu_flags(cpuinfo)) or (
        dict.fromkeys(CPU_FLAGS),
        "CPU flags could not be read",
    )
    current, maximum = _probe(_cpu_freq) or (None, None)
    return {
        "model": _probe(lambda: _cpu_model(cpuinfo)),
        "architecture": _probe(platform.machine) or None,
        "physical_cores": _probe(lambda: psutil.cpu_count(logical=False)),
        "logical_cores": _probe(lambda: psutil.cpu_count(logical=True)),
        "flags": flags,
        "flags_note": flags_note,
        "governors": _probe(_governors) or [],
        "freq_current_mhz": current,
        "freq_max_mhz": maximum,
    }


def _os_pretty_name() -> str | None:
    for line in _read_text("/etc/os-release").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "PRETTY_NAME":
            return value.strip().strip("\"'") or None
    return None


def _platform_string() -> str:
    """platform.platform(), without its `uname -p` subprocess on Linux.

    platform.platform() unpacks uname(), which runs `uname -p` for the processor
    field; on Linux that field is blank in the result anyway, so build the same
    string ("Linux-<release>-<machine>-with-<libc>") from data already in hand.
    """
    if not sys.platform.startswith("linux"):
        return platform.platform()
    libc, libc_version = platform.libc_ver()
    parts = [platform.system(), platform.release(), platform.machine()]
    if libc:
        parts += ["with", f"{libc}{libc_version}"]
    return "-".join(p for p in parts if p)


def _os() -> dict[str, Any]:
    return {
        "platform": _probe(_platform_string),
        "system": _probe(platform.system),
        "release": _probe(platform.release),
        "pretty_name": _probe(_os_pretty_name),
    }


def _python() -> dict[str, Any]:
    return {
        "version": _probe(platform.python_version),
        "implementation": _probe(platform.python_implementation),
        "executable": sys.executable or None,
    }


def _dist_version(*names: str) -> str | None:
    """Installed version of the first distribution found; None when none is installed.

    Several names cover packages published under more than one distribution
    (PySide6 vs PySide6-Essentials).
    """
    for name in names:
        version = _probe(functools.partial(importlib.metadata.version, name))
        if version:
            return version
    return None


def _cryptography_openssl() -> str:
    from cryptography.hazmat.backends.openssl import backend

    return str(backend.openssl_version_text())


def _pycryptodome_version() -> str:
    import Crypto

    return str(Crypto.__version__)


def _pycryptodome_integer_class() -> str:
    # The Integer class pycryptodome picked at import time: IntegerGMP means its
    # public-key arithmetic runs on libgmp; anything else is its own slower code.
    from Crypto.Math.Numbers import Integer

    return str(Integer.__name__)


def library_versions() -> dict[str, dict[str, Any]]:
    integer_class = _probe(_pycryptodome_integer_class)
    return {
        "cryptography": {
            "version": _dist_version("cryptography"),
            "openssl": _probe(_cryptography_openssl),
        },
        "pycryptodome": {
            "version": _probe(_pycryptodome_version) or _dist_version("pycryptodome"),
            "note": "own C implementation (does not use OpenSSL)",
            "integer_class": integer_class,
            "gmp": integer_class == "IntegerGMP" if integer_class else None,
        },
        "tinyec": {"version": _dist_version("tinyec"), "note": "pure Python"},
        "pyOpenSSL": {"version": _dist_version("pyOpenSSL"), "note": "tls13 jobs: binds the OpenSSL of cryptography"},
        "numpy": {"version": _dist_version("numpy")},
        "psutil": {"version": _dist_version("psutil")},
        "platformdirs": {"version": _dist_version("platformdirs")},
        "pydantic": {"version": _dist_version("pydantic")},
        "PySide6": {"version": _dist_version("PySide6", "PySide6-Essentials")},
        "pyqtgraph": {"version": _dist_version("pyqtgraph")},
    }


def _app_version() -> str:
    from app import __version__

    return str(__version__)


def _link_emulation() -> dict[str, Any]:
    return emulation().to_dict()


def collect_environment() -> dict[str, Any]:
    """Describe this machine and its crypto software, as a JSON-ready dict.

    Returns:
        {"app_version", "hostname", "cpu": {model, architecture, physical_cores,
        logical_cores, flags: {aes, pclmulqdq, sha_ni, avx2, vaes, avx512f},
        flags_note, governors, freq_current_mhz, freq_max_mhz},
        "memory_total_bytes", "os": {platform, system, release, pretty_name},
        "python": {version, implementation, executable},
        "libraries": {name: {"version", ...}},
        "link_emulation": {delay_line, netem, netem_reason}} (app.core.link.probe: which
        link emulation this machine offers, and why not netem). Unknown values are None; flags
        are booleans where /proc/cpuinfo has a flags line (x86 Linux), else None
        with `flags_note` saying why. `governors` is [] where not measurable.
        Never raises.
    """
    return {
        "app_version": _probe(_app_version),
        "hostname": _probe(socket.gethostname),
        "cpu": _cpu(),
        "memory_total_bytes": _probe(lambda: int(psutil.virtual_memory().total)),
        "os": _os(),
        "python": _python(),
        "libraries": library_versions(),
        "link_emulation": _probe(_link_emulation),
    }


def cpu_flags_summary(env: dict[str, Any]) -> str:
    """Human summary of the crypto-relevant CPU flags, e.g. "AES-NI, PCLMULQDQ, AVX2".

    Args:
        env: A `collect_environment()` dict (possibly loaded from an old results file).

    Returns:
        The labels of the flags present, comma-separated in a fixed order;
        "none detected" when none is present or the flags are unknown.
    """
    flags = (env.get("cpu") or {}).get("flags") or {}
    present = [label for name, label in CPU_FLAGS.items() if flags.get(name) is True]
    return ", ".join(present) if present else "none detected"
