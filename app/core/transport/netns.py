"""Network namespaces and TUN devices: the two ends of the packet path (Linux only).

A packet link gives the job's sender and receiver a network namespace each. The link
process makes both: one thread per end calls unshare(CLONE_NEWNET), which moves that
thread alone into a new, empty namespace, opens a TUN device there and gives it an
address, then waits. The sender and the receiver enter their end's namespace by its
path (/proc/PID/task/TID/ns/net) with setns before they open a socket, so the kernel's
own TCP runs between them, and every IP packet either sends comes out of a TUN file
descriptor the link process holds (docs/ARCHITECTURE.md, "Links, placement and load").

Nothing here touches the host's interfaces, routes or sysctls: the namespaces are
anonymous, held by the threads and processes inside them, and the kernel removes them
(and their devices) when the last one ends, however it ends. It needs CAP_NET_ADMIN and
CAP_SYS_ADMIN (root) and a usable /dev/net/tun; `packet_path_refusal` says why a machine
cannot, from files and, where they allow it, by making one namespace with a device once.

Interfaces are configured with the classic ioctls on a socket made inside the namespace
(a socket belongs to the namespace of the thread that made it): address, netmask, MTU,
up. A /30 between the two ends gives each the route to the other through its device.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import os
import socket
import stat
import struct
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

#: clone(2) flag for a new network namespace.
CLONE_NEWNET = 0x40000000
TUN_PATH = Path("/dev/net/tun")
#: ioctl numbers (linux/if_tun.h, linux/sockios.h).
TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
SIOCSIFADDR = 0x8916
SIOCSIFNETMASK = 0x891C
SIOCSIFMTU = 0x8922
SIOCSIFTXQLEN = 0x8943
IFF_UP = 0x1
IFF_RUNNING = 0x40
#: The device each end's namespace has (the namespaces are the job's own: no clash).
DEVICE = "cb0"
#: An Ethernet path: TCP's MSS is 1448 bytes with timestamps, as on most real networks.
MTU = 1500
#: Packets a device holds for the link process to read (the TUN driver's own is 500). A
#: congestion window's burst lands here at once; with room for it, a reader that falls
#: behind delays packets (which `PacketForwarder.drain` measures) instead of dropping
#: them, and TCP small queues bound what one connection puts here to about 1 MB anyway.
DEVICE_QUEUE = 4096
#: Addresses of the two ends (a /30 of the benchmarking range, RFC 2544: never routed).
SENDER_ADDRESS = "198.18.0.1"
RECEIVER_ADDRESS = "198.18.0.2"
NETMASK = "255.255.255.252"
#: The capabilities the namespaces need (linux/capability.h bit numbers).
CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21


class NamespaceError(OSError):
    """A namespace or TUN device could not be made or entered; str() says which and why."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise NamespaceError(code, f"{what}: {os.strerror(code)}")


def enter_namespace(path: str) -> None:
    """Move the calling thread into the network namespace at `path` (before any socket)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise NamespaceError(exc.errno or errno.ENOENT, f"cannot open the namespace {path}: {exc.strerror}") from None
    try:
        _check(_libc().setns(fd, CLONE_NEWNET), f"setns({path})")
    finally:
        os.close(fd)


def _ifreq(name: str, data: bytes = b"") -> bytes:
    return struct.pack("16s", name.encode()) + data.ljust(24, b"\0")


def _sockaddr(address: str) -> bytes:
    return struct.pack("HH4s8x", socket.AF_INET, 0, socket.inet_aton(address))


def _set_up(sock: socket.socket, name: str) -> None:
    flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, _ifreq(name))[:18])[1]
    fcntl.ioctl(sock, SIOCSIFFLAGS, _ifreq(name, struct.pack("H", flags | IFF_UP | IFF_RUNNING)))


def _open_tun(address: str) -> int:
    """A TUN device with `address` in the calling thread's namespace; its file descriptor."""
    try:
        fd = os.open(TUN_PATH, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise NamespaceError(exc.errno or errno.EACCES, f"cannot open {TUN_PATH}: {exc.strerror}") from None
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", DEVICE.encode(), IFF_TUN | IFF_NO_PI))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            fcntl.ioctl(sock, SIOCSIFADDR, _ifreq(DEVICE, _sockaddr(address)))
            fcntl.ioctl(sock, SIOCSIFNETMASK, _ifreq(DEVICE, _sockaddr(NETMASK)))
            fcntl.ioctl(sock, SIOCSIFMTU, _ifreq(DEVICE, struct.pack("i", MTU)))
            fcntl.ioctl(sock, SIOCSIFTXQLEN, _ifreq(DEVICE, struct.pack("i", DEVICE_QUEUE)))
            _set_up(sock, "lo")
            _set_up(sock, DEVICE)
    except OSError as exc:
        os.close(fd)
        raise NamespaceError(exc.errno or errno.EIO, f"cannot set up {DEVICE} ({address}): {exc.strerror}") from None
    return fd


#: Per-namespace TCP settings a job may set (/proc/sys/net/ipv4 in the end's namespace).
SYSCTL = Path("/proc/sys/net/ipv4")


@dataclass(frozen=True)
class TcpSettings:
    """The namespace's TCP settings as an end was made with them (read back, not assumed):
    its default congestion control (a job's own is set per socket, TCP_CONGESTION) and
    whether an idle connection restarts from the initial window."""

    congestion_control: str | None
    slow_start_after_idle: bool | None


def _tcp_settings(slow_start_after_idle: bool | None) -> TcpSettings:
    """Apply what was asked in the calling thread's namespace, then read both back."""
    if slow_start_after_idle is not None:
        (SYSCTL / "tcp_slow_start_after_idle").write_text("1" if slow_start_after_idle else "0")

    def read(name: str) -> str | None:
        try:
            return (SYSCTL / name).read_text().strip() or None
        except OSError:
            return None

    idle = read("tcp_slow_start_after_idle")
    return TcpSettings(read("tcp_congestion_control"), None if idle is None else idle != "0")


class NamespaceEnd:
    """One end of the packet path: a thread that made a namespace with a TUN device in it
    and holds the namespace until `close`. `fd` is the device (IP packets in and out),
    `path` what a process passes to `enter_namespace`, `tcp` the namespace's TCP settings."""

    def __init__(self, address: str, slow_start_after_idle: bool | None = None) -> None:
        self.address = address
        self._slow_start_after_idle = slow_start_after_idle
        self._ready = threading.Event()
        self._release = threading.Event()
        self._error: BaseException | None = None
        self.fd = -1
        self.path = ""
        self.tcp = TcpSettings(None, None)
        self._thread = threading.Thread(target=self._hold, name=f"netns-{address}", daemon=True)

    def open(self, timeout: float = 10.0) -> NamespaceEnd:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise NamespaceError(errno.ETIMEDOUT, f"the namespace for {self.address} was not ready in {timeout:g} s")
        if self._error is not None:
            raise self._error
        return self

    def _hold(self) -> None:
        try:
            _check(_libc().unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
            self.fd = _open_tun(self.address)
            self.tcp = _tcp_settings(self._slow_start_after_idle)
            self.path = f"/proc/{os.getpid()}/task/{threading.get_native_id()}/ns/net"
        except BaseException as exc:  # noqa: BLE001 - handed to the opening thread, which raises it
            self._error = exc
        finally:
            self._ready.set()
        if self._error is None:
            self._release.wait()

    def close(self) -> None:
        """Let the namespace go (it ends with the last process inside it)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self._release.set()
        if self._thread.is_alive():
            self._thread.join(1.0)


def device_drops(namespace: str) -> int | None:
    """Packets the end's device dropped so far, received and sent (its queue was full when
    the kernel or the link process handed it one): losses no link setting asked for. Read
    from /proc/PID/task/TID/net/dev beside `namespace` (a NamespaceEnd's `path`), which
    shows that task's namespace; None where it cannot be read."""
    dev = Path(namespace).parent.parent / "net" / "dev"
    try:
        lines = dev.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        name, _, figures = line.partition(":")
        if name.strip() == DEVICE:
            fields = figures.split()
            try:
                return int(fields[3]) + int(fields[11])  # receive drop, transmit drop
            except (IndexError, ValueError):
                return None
    return None


# --- may this machine do it? -----------------------------------------------------------------


def _capabilities() -> int | None:
    """This process's effective capability set (a bit mask), None where it cannot be read."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        return None
    return None


#: The TUN driver's device number (Documentation/admin-guide/devices.txt: misc 200).
TUN_DEVICE_NUMBER = (10, 200)


def _tun_device_problem() -> str | None:
    """Why `TUN_PATH` is not the TUN driver (None: it is), from its stat alone: a container
    may hide it, or bind-mount something else there (a regular file, /dev/null)."""
    try:
        info = TUN_PATH.stat()
    except FileNotFoundError:
        return f"{TUN_PATH} does not exist: this kernel has no TUN device (CONFIG_TUN), or the container hides it"
    except OSError as exc:
        return f"{TUN_PATH} cannot be examined: {exc.strerror or exc}"
    if not stat.S_ISCHR(info.st_mode):
        kind = (
            "a regular file"
            if stat.S_ISREG(info.st_mode)
            else "a folder"
            if stat.S_ISDIR(info.st_mode)
            else "not a device"
        )
        return f"{TUN_PATH} is {kind}, not the TUN driver's character device"
    number = (os.major(info.st_rdev), os.minor(info.st_rdev))
    if number != TUN_DEVICE_NUMBER:
        return (
            f"{TUN_PATH} is the character device {number[0]}:{number[1]}, not the TUN driver "
            f"({TUN_DEVICE_NUMBER[0]}:{TUN_DEVICE_NUMBER[1]})"
        )
    return None


def _refusal_from_files() -> str | None:
    """None when the files say this process may make the packet path's namespaces, else
    why not and what would make it possible."""
    if not sys.platform.startswith("linux"):
        return f"the packet path needs Linux network namespaces and TUN devices; this system is {sys.platform}"
    device = _tun_device_problem()
    if device is not None:
        return device
    caps = _capabilities()
    missing = [
        name
        for name, bit in (("CAP_NET_ADMIN", CAP_NET_ADMIN), ("CAP_SYS_ADMIN", CAP_SYS_ADMIN))
        if caps is not None and not caps >> bit & 1
    ]
    if missing:
        return (
            f"making the job's network namespaces needs {' and '.join(missing)} (run as root, or give the "
            f"interpreter the capabilities: setcap cap_net_admin,cap_sys_admin+ep); {TUN_PATH} is mode "
            f"{TUN_PATH.stat().st_mode & 0o777:04o}"
        )
    if not os.access(TUN_PATH, os.R_OK | os.W_OK):
        return f"{TUN_PATH} is not open to this user (mode {TUN_PATH.stat().st_mode & 0o777:04o}); root can use it"
    return None


def try_packet_path() -> str | None:
    """None when a namespace with a TUN device can be made here (made and let go at
    once, nothing left behind), else why not."""
    refusal = _refusal_from_files()
    if refusal is not None:
        return refusal
    end = NamespaceEnd(SENDER_ADDRESS)
    try:
        end.open()
    except NamespaceError as exc:
        return f"a network namespace with a TUN device could not be made here: {exc}"
    finally:
        end.close()
    return None


@functools.cache
def packet_path_refusal() -> str | None:
    """None when the packet path can be made here, else why not and what would make it
    possible: the files first (Linux; /dev/net/tun the TUN driver's character device; the
    capabilities), then, where they allow it, `try_packet_path` once per process.

    The files alone could look right and the device still not work (something else
    mounted at /dev/net/tun, a device node a container's cgroup denies, a driver refusing
    TUNSETIFF): `auto` then chose the packet path, and the job failed in its link process
    instead of falling back to the stream relay. One namespace and device cost a few
    milliseconds, once; where the files already say no (not root, no device), nothing is
    tried. Tests that change `TUN_PATH` call `packet_path_refusal.cache_clear()`."""
    return try_packet_path()
