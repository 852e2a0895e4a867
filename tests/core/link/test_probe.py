"""Which link emulation a machine offers: read from files only, never by trying (app.core.link.probe)."""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.core.link import probe as probe_mod
from app.core.link.probe import EmulationProbe, emulation, loss_refusal, probe_emulation

RELEASE = "6.1.0-test"


def _tree(
    tmp_path: Path,
    *,
    config: str | None = None,
    gz: bool = True,
    modules: str = "",
    module_file: bool = False,
    userns_clone: str | None = None,
    max_userns: str | None = "1000",
    apparmor: str | None = None,
) -> Path:
    """A fake / with the files the probe reads."""
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/user").mkdir(parents=True)
    (tmp_path / "proc/modules").write_text(modules)
    if config is not None:
        text = f"CONFIG_NET_SCH_HTB=y\n{config}\n"
        if gz:
            (tmp_path / "proc/config.gz").write_bytes(gzip.compress(text.encode()))
        else:
            (tmp_path / "boot").mkdir()
            (tmp_path / f"boot/config-{RELEASE}").write_text(text)
    if module_file:
        folder = tmp_path / f"lib/modules/{RELEASE}/kernel/net/sched"
        folder.mkdir(parents=True)
        (folder / "sch_netem.ko.zst").write_bytes(b"\0")
    for setting, value in (
        ("kernel/unprivileged_userns_clone", userns_clone),
        ("user/max_user_namespaces", max_userns),
        ("kernel/apparmor_restrict_unprivileged_userns", apparmor),
    ):
        if value is not None:
            (tmp_path / "proc/sys" / setting).write_text(value + "\n")
    return tmp_path


def _probe(root: Path, privileged: bool = False) -> EmulationProbe:
    """The netem part of the probe of a fake tree (the packet path's part is tested apart)."""
    probe = probe_emulation(root, system="Linux", release=RELEASE, privileged=privileged, packet=lambda: "not here")
    assert (probe.packet, probe.packet_reason) == (False, "not here")
    return replace(probe, packet_reason=None)


def test_this_machine() -> None:
    """The delay line is always there; netem's answer agrees with the kernel's own config."""
    probe = emulation()
    assert probe.delay_line is True
    assert probe.netem == (probe.netem_reason is None)
    config = Path("/proc/config.gz")
    if sys.platform.startswith("linux") and config.exists():
        with gzip.open(config, "rt") as stream:
            lines = stream.read().splitlines()
        if "# CONFIG_NET_SCH_NETEM is not set" in lines and not Path("/sys/module/sch_netem").exists():
            # This development machine: the kernel has no sch_netem (tc says "Specified qdisc kind is unknown").
            assert probe.netem is False
            assert probe.netem_reason == (
                "this kernel was built without sch_netem (/proc/config.gz: "
                "# CONFIG_NET_SCH_NETEM is not set); a kernel built with "
                "CONFIG_NET_SCH_NETEM=y or =m would provide it"
            )


def test_built_in_netem_with_user_namespaces_allowed(tmp_path: Path) -> None:
    assert _probe(_tree(tmp_path, config="CONFIG_NET_SCH_NETEM=y")) == EmulationProbe(True, True, None)


def test_a_kernel_without_netem(tmp_path: Path) -> None:
    probe = _probe(_tree(tmp_path, config="# CONFIG_NET_SCH_NETEM is not set"))
    assert probe.netem is False
    assert "built without sch_netem" in (probe.netem_reason or "") and "CONFIG_NET_SCH_NETEM=y or =m" in (
        probe.netem_reason or ""
    )


def test_a_config_that_leaves_the_option_out_is_not_set(tmp_path: Path) -> None:
    probe = _probe(_tree(tmp_path, config="CONFIG_NET_SCH_TBF=y", gz=False))
    assert probe.netem is False and f"boot/config-{RELEASE}" in (probe.netem_reason or "")


def test_a_loaded_module_is_enough(tmp_path: Path) -> None:
    root = _tree(tmp_path, config="CONFIG_NET_SCH_NETEM=m", modules="sch_netem 49152 0 - Live 0x0\ntun 1 0\n")
    assert _probe(root).netem is True


def test_a_module_not_loaded_needs_root_once(tmp_path: Path) -> None:
    root = _tree(tmp_path, config="CONFIG_NET_SCH_NETEM=m", module_file=True)
    probe = _probe(root)
    assert probe.netem is False and "modprobe sch_netem" in (probe.netem_reason or "")
    assert "sch_netem.ko.zst" in (probe.netem_reason or "")
    assert _probe(root, privileged=True).netem is True  # the kernel loads it on first use for root


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"userns_clone": "0"}, "kernel.unprivileged_userns_clone = 0"),
        ({"max_userns": "0"}, "user.max_user_namespaces = 0"),
        ({"apparmor": "1"}, "kernel.apparmor_restrict_unprivileged_userns = 1"),
    ],
)
def test_user_namespaces_forbidden(tmp_path: Path, settings: dict[str, str], named: str) -> None:
    root = _tree(tmp_path, config="CONFIG_NET_SCH_NETEM=y", **settings)  # type: ignore[arg-type]
    probe = _probe(root)
    assert (
        probe.netem is False and named in (probe.netem_reason or "") and "administrator" in (probe.netem_reason or "")
    )
    assert _probe(root, privileged=True).netem is True  # root needs no user namespace


def test_nothing_to_go_by(tmp_path: Path) -> None:
    probe = _probe(_tree(tmp_path))
    assert probe.netem is False and "no sign of sch_netem" in (probe.netem_reason or "")


def test_not_linux() -> None:
    probe = probe_emulation(system="Darwin")
    assert probe == EmulationProbe(
        True,
        False,
        "netem is part of Linux (sch_netem); this system is Darwin",
        False,
        "the packet path needs Linux network namespaces and TUN devices; this system is Darwin",
    )


def test_unreadable_and_broken_files_never_raise(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "proc/config.gz").write_bytes(b"not gzip at all")
    (root / "proc/modules").unlink()
    (root / "proc/modules").mkdir()  # reading a directory fails
    probe = _probe(root)
    assert probe.delay_line is True and probe.netem is False and probe.netem_reason


def test_the_probe_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """No tc, modprobe or unshare: trying would change the system or need root."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the probe ran a process: {args}")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    probe_mod.probe_emulation()


def test_to_dict_is_the_environment_record() -> None:
    assert EmulationProbe(True, False, "why", True, None).to_dict() == {
        "delay_line": True,
        "netem": False,
        "netem_reason": "why",
        "packet": True,
        "packet_reason": None,
    }


def test_the_packet_path_s_answer_is_recorded_beside_netem(tmp_path: Path) -> None:
    probe = probe_emulation(tmp_path, system="Linux", release=RELEASE, privileged=True, packet=lambda: None)
    assert (probe.packet, probe.packet_reason) == (True, None)
    darwin = probe_emulation(system="Darwin")
    assert not darwin.packet and darwin.packet_reason is not None and "Darwin" in darwin.packet_reason


def test_loss_refusal_says_what_is_missing_or_how_to_ask_for_the_packet_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe_mod, "packet_path_refusal", lambda: "needs CAP_NET_ADMIN (run as root)")
    assert loss_refusal() == (
        "packet loss needs the packet path, which is not available here: needs CAP_NET_ADMIN (run as root)"
    )
    monkeypatch.setattr(probe_mod, "packet_path_refusal", lambda: None)
    assert '"link_emulation": "packet"' in loss_refusal() and "which this machine offers" in loss_refusal()


# --- a /dev/net/tun that is not the TUN driver: `auto` falls back, `packet` is refused -------


@pytest.fixture
def fake_tun(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """Point the packet path at another file (as a container may mount one there); the
    once-per-process answer is asked again, before and after."""
    from app.core.transport import netns

    def use(path: Path) -> None:
        monkeypatch.setattr(netns, "TUN_PATH", path)
        netns.packet_path_refusal.cache_clear()

    netns.packet_path_refusal.cache_clear()
    yield use
    monkeypatch.undo()
    netns.packet_path_refusal.cache_clear()


def _as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every capability, whoever runs the tests: only the device decides."""
    from app.core.transport import netns

    monkeypatch.setattr(netns, "_capabilities", lambda: (1 << 64) - 1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the packet path is Linux's")
@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda tmp: tmp / "tun", "is a regular file, not the TUN driver's character device"),
        (lambda tmp: Path("/dev/null"), "is the character device 1:3, not the TUN driver (10:200)"),
    ],
    ids=["regular-file", "wrong-character-device"],
)
def test_a_tun_path_that_is_not_the_tun_driver_is_refused_and_auto_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_tun: Callable[[Path], None], make: Any, said: str
) -> None:
    """As root, with /dev/net/tun present but not the TUN driver, `auto` chose the packet
    path from the files (it existed, root may open it) and the job failed in its link
    process ("cannot set up cb0: Inappropriate ioctl for device") instead of falling back."""
    from app.core.profile.files import parse_profile
    from app.core.profile.resolve import resolve_jobs
    from app.core.settings.profile import ProfileError
    from app.core.transport import netns
    from app.core.vocab import LinkEmulation

    path = make(tmp_path)
    if path.parent == tmp_path:
        path.write_bytes(b"")
    _as_root(monkeypatch)
    fake_tun(path)
    refusal = netns.packet_path_refusal()
    assert refusal is not None and f"{path} {said}" in refusal, refusal
    job = {"scheme": "aes-gcm", "mode": "loopback", "message_sizes": [64], "link": {"delay_ms": 1}}
    (auto,) = resolve_jobs(parse_profile({"name": "auto", "jobs": [job | {"link_emulation": "auto"}]}))
    assert auto.link is not None and auto.link.emulation == LinkEmulation.DELAY_LINE
    with pytest.raises(ProfileError, match=r"the packet path is not available here: .*not the TUN driver"):
        resolve_jobs(parse_profile({"name": "packet", "jobs": [job | {"link_emulation": "packet"}]}))
    assert not probe_emulation(packet=netns.packet_path_refusal).packet


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the packet path is Linux's")
def test_a_device_the_files_allow_but_that_cannot_be_made_is_found_by_trying(
    monkeypatch: pytest.MonkeyPatch, fake_tun: Callable[[Path], None]
) -> None:
    """The files can look right and the device still refuse (a container's cgroup denying
    the node, a driver refusing TUNSETIFF): the answer comes from making one."""
    from app.core.transport import netns

    _as_root(monkeypatch)
    monkeypatch.setattr(netns, "_tun_device_problem", lambda: None)
    monkeypatch.setattr(netns, "_libc", lambda: _NoUnshare())
    fake_tun(netns.TUN_PATH)
    refusal = netns.packet_path_refusal()
    assert refusal is not None and refusal.startswith("a network namespace with a TUN device could not be made here")
    assert "Operation not permitted" in refusal


class _NoUnshare:
    """libc as a container without the capability in its user namespace sees it."""

    def unshare(self, flags: int) -> int:
        import ctypes
        import errno

        ctypes.set_errno(errno.EPERM)
        return -1
