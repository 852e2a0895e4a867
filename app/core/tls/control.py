"""The tls13 job's control connection: what its client and server say besides TLS.

Every timed connection carries TLS alone, its ClientHello first. What the two ends must
agree on besides travels on one authenticated connection of the transport's frames
(app.core.transport.wire; the token proof of app.core.transport.auth), outside every
timed region:

    client                                      server
    JOB {params, sizes, client anchor}   ->
                                         <-     JOB_OK {anchor}
    SIZE (size, seed)                    ->
                                         <-     SIZE_OK
      ... TLS connections, one per handshake ...
    TAMPER (the next connection's record will be tampered) -> <- ACK
    SIZE_END                             ->
                                         <-     SIZE_END_OK {each connection's server figures}
    BYE                                  ->

The job's TLS connections are told from strangers' by their ClientHello alone: its ALPN
list names `alpn_for(token)`, which only the job's two ends can make (app.core.tls.admission).
Everything the server reports is checked here before the client keeps it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from app.core.errors import RegistryError
from app.core.records.job_tcp_info import TCP_INFO_COUNTS, TcpInfo
from app.core.schemes import registry
from app.core.schemes.tls13 import Tls13Scheme
from app.core.tls.data import SEED_BYTES
from app.core.transport.wire import MAX_SESSION_MESSAGE, MalformedBody

#: SIZE's body: the size and the seed both ends derive its application data from.
SIZE_FRAME = struct.Struct(f">Q{SEED_BYTES}s")
#: A certificate a job makes is under 8 KB of DER (ML-DSA-87's); an anchor's hex, twice that.
MAX_ANCHOR_DER = 16 * 1024
#: A server's CPU time for one handshake is under this (a pure-software RSA-4096 chain of
#: three takes a few milliseconds; a minute is a stalled process, not a handshake).
MAX_SERVER_CPU_NS = 60 * 10**9


class TlsPeerError(Exception):
    """The other end said something the protocol does not allow; str() names it."""


def alpn_for(token: bytes) -> bytes:
    """The ALPN protocol id the job's TLS connections carry: only the holders of the job's
    token can make it, and it reveals nothing of the token."""
    return b"cb-" + hmac.new(token, b"cryptobench tls13 alpn", hashlib.sha256).hexdigest()[:32].encode("ascii")


class TlsJob(BaseModel):
    """What the client asks the server to serve (JOB): the tls13 parameters, the sizes, and
    for mutual authentication the client's trust anchor (DER, hex), which the server trusts."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    params: dict[StrictStr, StrictInt | StrictStr | StrictBool] = Field(max_length=32)
    message_sizes: list[StrictInt] = Field(min_length=1, max_length=256)
    client_anchor: StrictStr | None = Field(default=None, max_length=2 * MAX_ANCHOR_DER)

    def encode(self) -> bytes:
        return self.model_dump_json().encode("utf-8")

    def scheme(self) -> Tls13Scheme:
        """The job's scheme, through the registry: only a tls13 parameter set is ever served."""
        try:
            scheme = registry.create("tls13", "pyopenssl", self.params)
        except RegistryError as exc:
            raise TlsPeerError(f"JOB: {exc}") from None
        assert isinstance(scheme, Tls13Scheme)
        for size in self.message_sizes:
            if not 1 <= size <= MAX_SESSION_MESSAGE:
                raise TlsPeerError(f"JOB: message size {size} is not 1..{MAX_SESSION_MESSAGE}")
        if scheme.asked.mutual != (self.client_anchor is not None):
            raise TlsPeerError("JOB: a client anchor goes with mutual authentication, and only with it")
        return scheme


def parse_job(body: bytes | memoryview) -> TlsJob:
    try:
        return TlsJob.model_validate_json(bytes(body))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise TlsPeerError(f"JOB {where}: {first['msg']}") from None


def decode_object(body: bytes | memoryview, what: str) -> dict[str, Any]:
    try:
        data = json.loads(bytes(body).decode("utf-8"))
    except (ValueError, RecursionError):
        raise MalformedBody(f"{what} is not UTF-8 JSON") from None
    if not isinstance(data, dict):
        raise MalformedBody(f"{what} is not a JSON object")
    return data


def anchor_of(data: dict[str, Any], key: str, what: str) -> bytes:
    """A certificate's DER sent as hex, bounded."""
    value = data.get(key)
    if not isinstance(value, str) or not 0 < len(value) <= 2 * MAX_ANCHOR_DER:
        raise TlsPeerError(f"{what} {key} is not a certificate's DER in hex (at most {MAX_ANCHOR_DER:,} bytes)")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise TlsPeerError(f"{what} {key} is not hex") from None


@dataclass(frozen=True)
class ServerConnection:
    """What the server says of one TLS connection of a size: its CPU time in the handshake
    (ns), and whether it served it ("ok") or refused it (the reason)."""

    cpu_ns: int
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {"cpu_ns": self.cpu_ns, "verdict": self.verdict}


#: How the server's verdict on a connection begins when it ended before its records were
#: judged (the peer gone or silent): neither served nor refused.
UNFINISHED = "unfinished: "


@dataclass(frozen=True)
class ServerReport:
    """A size as the server saw it (SIZE_END_OK)."""

    connections: tuple[ServerConnection, ...]
    tcp_info: TcpInfo | None

    def encode(self) -> bytes:
        return json.dumps(
            {
                "connections": [c.to_dict() for c in self.connections],
                "tcp_info": None if self.tcp_info is None else self.tcp_info.to_dict(),
            }
        ).encode("utf-8")


def parse_report(body: bytes | memoryview, expected: int) -> ServerReport:
    """SIZE_END_OK, checked: one entry per connection the client made (`expected`), each a
    CPU time a handshake could take and a verdict text; TCP_INFO counts within a kernel's."""
    data = decode_object(body, "SIZE_END_OK")
    entries = data.get("connections")
    if not isinstance(entries, list) or len(entries) != expected:
        raise TlsPeerError(
            f"SIZE_END_OK reports {len(entries) if isinstance(entries, list) else 'no'} connections; "
            f"the client made {expected}"
        )
    connections = []
    for k, entry in enumerate(entries):
        cpu, verdict = (entry.get("cpu_ns"), entry.get("verdict")) if isinstance(entry, dict) else (None, None)
        if type(cpu) is not int or not 0 <= cpu <= MAX_SERVER_CPU_NS:
            raise TlsPeerError(f"SIZE_END_OK connections[{k}].cpu_ns = {cpu!r:.40} is not a handshake's CPU time")
        if not isinstance(verdict, str) or len(verdict) > 1000:
            raise TlsPeerError(f"SIZE_END_OK connections[{k}].verdict is not a text of at most 1,000 characters")
        connections.append(ServerConnection(cpu, verdict))
    return ServerReport(tuple(connections), _tcp_info(data.get("tcp_info")))


def _tcp_info(block: Any) -> TcpInfo | None:
    if block is None:
        return None
    if not isinstance(block, dict):
        raise TlsPeerError("SIZE_END_OK tcp_info is not an object")
    if isinstance(block.get("unavailable"), str):
        return TcpInfo(unavailable=block["unavailable"][:300])
    for key in TCP_INFO_COUNTS:
        value = block.get(key)
        if value is not None and (type(value) is not int or not 0 <= value < 1 << 48):
            raise TlsPeerError(f"SIZE_END_OK tcp_info.{key} = {value!r:.40} is not a count")
    for key in ("smoothed_rtt_s", "rtt_var_s"):
        value = block.get(key)
        if value is not None and (not isinstance(value, (int, float)) or not 0 <= value < 4295):
            raise TlsPeerError(f"SIZE_END_OK tcp_info.{key} = {value!r:.40} is not a kernel's RTT")
    return TcpInfo.from_dict(block)
