"""Tests for app.core.machine.environment: shape, JSON, robustness, and staying Qt-free."""

from __future__ import annotations

import builtins
import importlib.metadata
import json
import pathlib
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil
import pytest

import app
from app.core.machine import environment
from app.core.machine.environment import CPU_FLAGS, collect_environment, cpu_flags_summary
from tests.helpers.paths import ROOT

LIBRARIES = {
    "cryptography",
    "pycryptodome",
    "pyOpenSSL",
    "tinyec",
    "numpy",
    "psutil",
    "platformdirs",
    "pydantic",
    "PySide6",
    "pyqtgraph",
}


@pytest.fixture(scope="module")
def env() -> dict[str, Any]:
    return collect_environment()


def _linux_cpuinfo_has_flags() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(line.startswith("flags") for line in text.splitlines())


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_has_the_keys(env: dict[str, Any]) -> None:
    assert set(env) == {
        "app_version",
        "hostname",
        "cpu",
        "memory_total_bytes",
        "os",
        "python",
        "libraries",
        "link_emulation",
    }
    assert set(env["link_emulation"]) == {"delay_line", "netem", "netem_reason", "packet", "packet_reason"}
    assert set(env["cpu"]) == {
        "model",
        "architecture",
        "physical_cores",
        "logical_cores",
        "flags",
        "flags_note",
        "governors",
        "freq_current_mhz",
        "freq_max_mhz",
    }
    assert set(env["cpu"]["flags"]) == {"aes", "pclmulqdq", "sha_ni", "avx2", "vaes", "avx512f"}
    assert set(env["os"]) == {"platform", "system", "release", "pretty_name"}
    assert set(env["python"]) == {"version", "implementation", "executable"}
    assert set(env["libraries"]) == LIBRARIES
    assert all("version" in info for info in env["libraries"].values())


def test_is_json_serialisable_without_loss(env: dict[str, Any]) -> None:
    assert json.loads(json.dumps(env, allow_nan=False)) == env


def test_values_match_this_interpreter(env: dict[str, Any]) -> None:
    assert env["app_version"] == app.__version__
    assert env["python"]["executable"] == sys.executable
    assert env["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert env["hostname"] == socket.gethostname()
    assert env["cpu"]["logical_cores"] == psutil.cpu_count(logical=True)
    assert env["memory_total_bytes"] == psutil.virtual_memory().total
    assert isinstance(env["cpu"]["governors"], list)


def test_library_versions(env: dict[str, Any]) -> None:
    libs = env["libraries"]
    for name in ("numpy", "psutil", "platformdirs", "pydantic", "tinyec", "cryptography"):
        assert libs[name]["version"] == importlib.metadata.version(name)
    assert libs["tinyec"]["note"] == "pure Python"

    from cryptography.hazmat.backends.openssl import backend

    assert libs["cryptography"]["openssl"] == backend.openssl_version_text()

    import Crypto
    from Crypto.Math.Numbers import Integer

    assert libs["pycryptodome"]["version"] == Crypto.__version__
    assert "OpenSSL" in libs["pycryptodome"]["note"]
    assert libs["pycryptodome"]["integer_class"] == Integer.__name__
    assert libs["pycryptodome"]["gmp"] is (Integer.__name__ == "IntegerGMP")


def test_qt_versions_come_from_metadata(env: dict[str, Any]) -> None:
    def installed(*names: str) -> str | None:
        for name in names:
            try:
                return importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                continue
        return None

    assert env["libraries"]["PySide6"]["version"] == installed("PySide6", "PySide6-Essentials")
    assert env["libraries"]["pyqtgraph"]["version"] == installed("pyqtgraph")


@pytest.mark.skipif(not _linux_cpuinfo_has_flags(), reason="needs x86 Linux /proc/cpuinfo")
def test_linux_flags_are_booleans(env: dict[str, Any]) -> None:
    flags = env["cpu"]["flags"]
    assert all(isinstance(v, bool) for v in flags.values())
    assert env["cpu"]["flags_note"] is None
    cpuinfo_flags = (
        next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
        .split(":", 1)[1]
        .split()
    )
    assert flags == {name: name in cpuinfo_flags for name in CPU_FLAGS}
    assert env["cpu"]["model"]


def test_cpuinfo_parsing_x86_and_arm() -> None:
    x86 = "processor\t: 0\nmodel name\t: Test CPU @ 3.0GHz\nflags\t\t: fpu aes avx2 sse\n"
    flags, note = environment._cpu_flags(x86)
    assert flags == {
        "aes": True,
        "pclmulqdq": False,
        "sha_ni": False,
        "avx2": True,
        "vaes": False,
        "avx512f": False,
    }
    assert note is None
    assert environment._cpu_model(x86) == "Test CPU @ 3.0GHz"

    arm = "processor\t: 0\nFeatures\t: fp asimd aes pmull sha2\nModel\t: Raspberry Pi 5\n"
    flags, note = environment._cpu_flags(arm)
    assert set(flags.values()) == {None}
    assert note and "x86" in note
    assert environment._cpu_model(arm) == "Raspberry Pi 5"


def test_governors_are_distinct_and_sorted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for cpu, governor in [("cpu0", "powersave"), ("cpu1", "performance"), ("cpu2", "powersave\n")]:
        (tmp_path / cpu / "cpufreq").mkdir(parents=True)
        (tmp_path / cpu / "cpufreq" / "scaling_governor").write_text(governor)
    (tmp_path / "cpufreq").mkdir()  # not a cpuN directory: ignored
    monkeypatch.setattr(environment, "_GOVERNOR_GLOB", str(tmp_path / "cpu[0-9]*" / "cpufreq" / "scaling_governor"))
    assert collect_environment()["cpu"]["governors"] == ["performance", "powersave"]


def test_never_raises_when_file_reads_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> Any:
        raise PermissionError("denied")

    with monkeypatch.context() as m:
        m.setattr(pathlib.Path, "read_text", refuse)
        m.setattr(pathlib.Path, "read_bytes", refuse)
        m.setattr(builtins, "open", refuse)
        env = collect_environment()

    assert set(env["cpu"]["flags"].values()) == {None}
    assert isinstance(env["cpu"]["flags_note"], str)
    assert env["cpu"]["governors"] == []
    assert env["os"]["pretty_name"] is None
    assert cpu_flags_summary(env) == "none detected"
    json.dumps(env, allow_nan=False)


def test_never_raises_when_every_probe_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> Any:
        raise RuntimeError("probe failed")

    with monkeypatch.context() as m:
        for module, name in [
            (psutil, "cpu_count"),
            (psutil, "cpu_freq"),
            (psutil, "virtual_memory"),
            (socket, "gethostname"),
            (importlib.metadata, "version"),
            (environment.platform, "platform"),
            (environment.platform, "machine"),
            (environment.platform, "system"),
            (environment.platform, "release"),
            (environment.platform, "python_version"),
            (environment.platform, "libc_ver"),
            (environment, "_read_text"),
            (environment, "_pycryptodome_integer_class"),
            (environment, "_cryptography_openssl"),
        ]:
            m.setattr(module, name, boom)
        env = collect_environment()

    assert env["memory_total_bytes"] is None
    assert env["hostname"] is None
    assert env["cpu"]["logical_cores"] is None
    assert env["cpu"]["freq_current_mhz"] is None
    assert env["os"]["platform"] is None
    assert env["libraries"]["numpy"]["version"] is None
    assert env["libraries"]["cryptography"]["openssl"] is None
    assert env["libraries"]["pycryptodome"]["gmp"] is None
    json.dumps(env, allow_nan=False)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (
            {"aes": True, "pclmulqdq": True, "sha_ni": True, "avx2": True, "vaes": False, "avx512f": False},
            "AES-NI, PCLMULQDQ, SHA-NI, AVX2",
        ),
        ({"avx512f": True, "aes": True}, "AES-NI, AVX-512F"),
        (dict.fromkeys(CPU_FLAGS, False), "none detected"),
        (dict.fromkeys(CPU_FLAGS), "none detected"),
    ],
)
def test_cpu_flags_summary(flags: dict[str, bool | None], expected: str) -> None:
    assert cpu_flags_summary({"cpu": {"flags": flags}}) == expected


def test_cpu_flags_summary_tolerates_missing_sections() -> None:
    assert cpu_flags_summary({}) == "none detected"
    assert cpu_flags_summary({"cpu": None}) == "none detected"


def test_does_not_import_qt() -> None:
    result = _run_python(
        "import app.core.machine.environment, sys; "
        "app.core.machine.environment.collect_environment(); "
        "assert 'PySide6' not in sys.modules and 'pyqtgraph' not in sys.modules"
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux-only promise")
def test_spawns_no_process_on_linux_and_never_waits() -> None:
    result = _run_python(
        """
        import subprocess, time
        calls = []
        class Refuse(subprocess.Popen):
            def __init__(self, *args, **kwargs):
                calls.append(args)
                raise OSError("no processes")
        subprocess.Popen = Refuse
        from app.core.machine.environment import collect_environment
        start = time.perf_counter()
        env = collect_environment()
        elapsed = time.perf_counter() - start
        assert not calls, calls
        assert env["os"]["platform"], env["os"]
        # A hang or a retry loop, not speed (that would test the machine): refused
        # helpers must cost nothing like their own timeouts (seconds each).
        assert elapsed < 10.0, elapsed
        """
    )
    assert result.returncode == 0, result.stderr
