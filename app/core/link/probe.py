"""Which link emulation this machine offers, found without changing anything.

The stream relay (app.core.link.relay) runs everywhere. The packet path
(app.core.link.packet_link: the kernel's own TCP over emulated IP packets, loss
included) needs network namespaces and a TUN device, which `netns.packet_path_refusal`
checks from files first (Linux, /dev/net/tun the TUN driver's character device,
CAP_NET_ADMIN and CAP_SYS_ADMIN), then, where they allow it, by making one namespace
with a TUN device once per process and letting it go.

The probe also records whether the kernel's netem (`sch_netem`) could be used in a
private user and network namespace, a fact about the machine that the packet path does
not need (it emulates the path in user space, as mahimahi does):

- a kernel with sch_netem: loaded (/proc/modules, /sys/module/sch_netem), built in
  (CONFIG_NET_SCH_NETEM=y in /proc/config.gz or /boot/config-RELEASE), or a module file
  under /lib/modules/RELEASE/ that root can load;
- a user namespace this user may create: kernel.unprivileged_userns_clone (Debian) not
  0, user.max_user_namespaces above 0, and no AppArmor restriction
  (kernel.apparmor_restrict_unprivileged_userns, Ubuntu 24.04).

For netem the probe reads files only: it never runs `tc`, `modprobe` or `unshare`. It
takes about a millisecond (the kernel config is gzip-compressed). The environment of every run records
its answer (`environment.collect_environment`, "link_emulation"); a job asking for loss
on the stream relay, or for the packet path where it is not available, is refused with
the reason before the run.
"""

from __future__ import annotations

import functools
import gzip
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.transport.netns import packet_path_refusal
from app.core.vocab import LinkEmulation

NETEM_OPTION = "CONFIG_NET_SCH_NETEM"


@dataclass(frozen=True)
class EmulationProbe:
    """What `probe_emulation` found."""

    #: The user-space delay line: always available.
    delay_line: bool
    #: Whether this machine could apply netem in a private namespace without root's help.
    netem: bool
    #: Why not (None when it could): the evidence, and what would make it possible.
    netem_reason: str | None
    #: Whether the packet path (network namespaces joined through TUN devices) is available.
    packet: bool = False
    #: Why not (None when it is), and what would make it available.
    packet_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # The keys name the emulations (LinkEmulation's values, spelled once there).
        netem, packet = str(LinkEmulation.NETEM), str(LinkEmulation.PACKET)
        return {
            "delay_line": self.delay_line,
            netem: self.netem,
            f"{netem}_reason": self.netem_reason,
            packet: self.packet,
            f"{packet}_reason": self.packet_reason,
        }


def _read(path: Path) -> str | None:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as stream:
                return stream.read()
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, EOFError, ValueError):  # absent, unreadable, or not gzip after all
        return None


def _kernel_config(root: Path, release: str) -> tuple[str, str] | None:
    """(where, the NETEM option's line) from the first kernel config found."""
    for path in (root / "proc/config.gz", root / f"boot/config-{release}"):
        text = _read(path)
        if text is None:
            continue
        for line in text.splitlines():
            if line.startswith(f"{NETEM_OPTION}=") or line == f"# {NETEM_OPTION} is not set":
                return str(path), line
        return str(path), f"# {NETEM_OPTION} is not set"  # an option a config leaves out is not set
    return None


def _kernel_netem(root: Path, release: str, privileged: bool) -> str | None:
    """None when the kernel offers sch_netem, else why not (and what would)."""
    modules = _read(root / "proc/modules") or ""
    if (
        any(line.split(" ", 1)[0] == "sch_netem" for line in modules.splitlines())
        or (root / "sys/module/sch_netem").is_dir()
    ):
        return None  # loaded (or built in with parameters)
    config = _kernel_config(root, release)
    if config is not None and config[1] == f"{NETEM_OPTION}=y":
        return None
    module_dir = root / f"lib/modules/{release}/kernel/net/sched"
    module_file = next(iter(sorted(module_dir.glob("sch_netem.ko*"))), None) if module_dir.is_dir() else None
    if module_file is not None or (config is not None and config[1] == f"{NETEM_OPTION}=m"):
        if privileged:
            return None  # the kernel loads it on first use for root
        evidence = str(module_file) if module_file is not None else f"{config[0]}: {config[1]}" if config else ""
        return (
            f"sch_netem is a kernel module that is not loaded ({evidence}); root can load it once with "
            "`modprobe sch_netem`"
        )
    if config is not None:
        return (
            f"this kernel was built without sch_netem ({config[0]}: {config[1]}); a kernel built with "
            f"{NETEM_OPTION}=y or =m would provide it"
        )
    return (
        f"no sign of sch_netem in this kernel: not loaded (/proc/modules, /sys/module), no module under "
        f"/lib/modules/{release}/, and no kernel config (/proc/config.gz, /boot/config-{release}) to say it is "
        "built in"
    )


def _namespace_refusal(root: Path) -> str | None:
    """None when this user may create a user namespace, else which setting forbids it."""
    for setting, forbids, fix in (
        ("kernel/unprivileged_userns_clone", "0", "sysctl kernel.unprivileged_userns_clone=1"),
        ("user/max_user_namespaces", "0", "sysctl user.max_user_namespaces=10000"),
        (
            "kernel/apparmor_restrict_unprivileged_userns",
            "1",
            "an AppArmor profile allowing userns for Python, or sysctl kernel.apparmor_restrict_unprivileged_userns=0",
        ),
    ):
        value = (_read(root / "proc/sys" / setting) or "").strip()
        if value == forbids:
            name = setting.replace("/", ".")
            return f"unprivileged user namespaces are off ({name} = {value}); an administrator can allow them ({fix})"
    return None


def probe_emulation(
    root: Path = Path("/"),
    *,
    system: str | None = None,
    release: str | None = None,
    privileged: bool | None = None,
    packet: Callable[[], str | None] = packet_path_refusal,
) -> EmulationProbe:
    """Look at this machine (or at a fake tree under `root`, with `packet` standing in for
    the packet path's check, for tests). Never raises."""
    system = system or platform.system()
    if system != "Linux":
        return EmulationProbe(
            True,
            False,
            f"netem is part of Linux (sch_netem); this system is {system}",
            False,
            f"the packet path needs Linux network namespaces and TUN devices; this system is {system}",
        )
    release = release or platform.release()
    if privileged is None:
        privileged = hasattr(os, "geteuid") and os.geteuid() == 0
    try:
        reason = _kernel_netem(root, release, privileged)
        if reason is None and not privileged:
            reason = _namespace_refusal(root)
    except OSError as exc:  # a /proc or /sys that cannot even be listed
        reason = f"could not look for sch_netem: {exc}"
    packet_reason = packet()
    return EmulationProbe(
        delay_line=True,
        netem=reason is None,
        netem_reason=reason,
        packet=packet_reason is None,
        packet_reason=packet_reason,
    )


@functools.cache
def emulation() -> EmulationProbe:
    """This machine's answer, probed once per process."""
    return probe_emulation()


def loss_refusal() -> str:
    """Why a job asking for packet loss is refused: the stream relay works above TCP, where
    a lost packet cannot exist; loss needs the packet path. One line, with what would allow it."""
    refusal = packet_path_refusal()
    if refusal is None:
        return (
            "packet loss needs the packet path (the stream relay carries a byte stream, which loses no "
            'bytes): set "link_emulation": "packet" (or "auto"), which this machine offers'
        )
    return f"packet loss needs the packet path, which is not available here: {refusal}"
