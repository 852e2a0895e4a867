"""What passes between a worker's actor and the generator subprocess it started on the same
machine (its stdin and stdout): length-prefixed pickled frames, both ends this app on one
host. The classes in them live here, not in the subprocess's `__main__`, so both ends
unpickle them."""

from __future__ import annotations

import pickle
import struct
from dataclasses import dataclass, field
from typing import IO, Any

from app.core.records.job_conditions import LoadStep
from app.core.records.tls_record import TlsStep

_LENGTH = struct.Struct("!I")
#: A frame is a command or a step's figures (a histogram of a few KiB, at most a million
#: latency samples of 8 bytes): 64 MiB is far above any of them and bounds a broken peer.
MAX_FRAME = 64 << 20


@dataclass
class StepReport:
    """One generator's step, as it travels back to the coordinator (the parts of the step's
    record that `app.core.load.job.measure_size` reads, without the histograms)."""

    step: LoadStep
    latencies: list[float] = field(default_factory=list)
    server_ns: list[int] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)
    abandoned: int = 0
    sample_every: int = 1
    #: How late the generator began the step's schedule against the agreed moment
    #: (seconds; negative: early), kept in its record (`LoadStep.started_late_s`) and held to
    #: app.core.load.merge's `late_start_limit_s`.
    started_late_s: float = 0.0
    #: A few of the step's latencies, for the window's live plot.
    live: list[float] = field(default_factory=list)
    #: A tls13 job's handshakes of the step (None for any other job).
    handshakes: TlsStep | None = None


class PipeClosed(EOFError):
    """The other end closed the pipe (it exited, or was killed)."""


def write_frame(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    head = _read_exact(stream, _LENGTH.size)
    (length,) = _LENGTH.unpack(head)
    if length > MAX_FRAME:
        raise ValueError(f"a frame of {length} bytes (at most {MAX_FRAME})")
    return pickle.loads(_read_exact(stream, length))


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise PipeClosed("the generator's pipe closed")
        data += chunk
    return data
