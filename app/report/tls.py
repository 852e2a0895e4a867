"""A tls13 job's handshakes in words (`JobResult.tls`): what they negotiated, the chain, the
bytes each way and per flight; and the report's section of them.

One wording for the CLI (`run`, `show`), the window's results table (a job's tooltip) and
the report, so the three say the same thing. The report's section is a table of the run's
tls13 jobs, one row per job and size: what it negotiated, the certificates sent, the
handshake's time, its bytes each way and its round trips.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.records.tls_record import ByteRange, TlsRecord
from app.core.results.model import JobResult
from app.core.vocab import Family, JobStatus, Mode
from app.report.labels import Labels
from app.report.model import Block, Paragraph, Section, Table
from app.report.tcp_info import KERNEL_TITLE, kernel_blocks
from app.report.units import MISSING, format_bytes, format_seconds

TLS_TITLE = "TLS 1.3 handshakes"


def _bytes(count: int) -> str:
    return f"{count:,} B".replace(",", "\u202f")


def _range(span: ByteRange) -> str:
    return _bytes(span.low) if span.low == span.high else f"{_bytes(span.low)}-{_bytes(span.high)}"


def negotiated_text(record: TlsRecord) -> str:
    """ "TLSv1.3, X25519MLKEM768, TLS_AES_128_GCM_SHA256, signed mldsa65"."""
    parts = [record.version, record.group, record.cipher]
    if record.resumed:
        parts.append("resumed with a ticket (no certificate)")
    elif record.signature is not None:
        parts.append(f"signed {record.signature}")
    if record.client_signature is not None:
        parts.append(f"client signed {record.client_signature}")
    return ", ".join(parts)


def chain_text(record: TlsRecord) -> str:
    """ "1 certificate sent: 5,652 B (ML-DSA-65)", or what a resumed handshake sends."""
    if not record.chain_bytes:
        return "no certificate sent (a resumed handshake)"
    count = len(record.chain_bytes)
    sizes = ", ".join(
        f"{_bytes(size)} ({name})" if name else _bytes(size)
        for size, name in zip(record.chain_bytes, (*record.chain_signatures, *[""] * count))
    )
    return f"{count} certificate{'s' if count != 1 else ''} sent: {sizes}"


def flights_text(record: TlsRecord) -> str:
    """ "client 1,383 B (ClientHello) → server 10,333 B (ServerHello, ...) → client 64 B (Finished)"."""
    return " → ".join(
        f"{flight.sender} {_bytes(flight.bytes)}" + (f" ({', '.join(flight.messages)})" if flight.messages else "")
        for flight in record.flights
    )


def steps_text(record: TlsRecord) -> str:
    """A load job's handshakes step by step: "100, 499 (250 resumed), 897 (3 failed)"."""
    parts = []
    for step in record.steps:
        notes = [f"{step.resumed:,} resumed"] if step.resumed else []
        notes += [f"{step.failed:,} failed"] if step.failed else []
        parts.append(f"{step.handshakes:,}" + (f" ({', '.join(notes)})" if notes else ""))
    return ", ".join(parts)


def tls_lines(job: JobResult) -> list[str]:
    """A tls13 job's record in a few lines (none for any other job)."""
    record = job.tls
    if record is None:
        return []
    trips = f"{record.round_trips} round trip{'s' if record.round_trips != 1 else ''}"
    lines = [
        f"TLS: {negotiated_text(record)}",
        f"chain: {chain_text(record)}",
        f"handshake bytes: {_range(record.client_bytes)} client to server, {_range(record.server_bytes)} server "
        f"to client, {trips} (over {record.handshakes} handshake{'s' if record.handshakes != 1 else ''})",
        f"flights: {flights_text(record)}",
    ]
    if record.steps:
        lines.append(f"handshakes per load step: {steps_text(record)}")
    if record.ticket_bytes:
        lines.append(f"after the handshake: {_bytes(record.ticket_bytes)} of session tickets from the server")
    if record.retries:
        lines.append(f"HelloRetryRequests: {record.retries}")
    if record.library:
        lines.append(f"run by {record.library}")
    return lines


def _median(job: JobResult, metric: str) -> str:
    found = job.metrics.get(metric)
    return format_seconds(found.stats.median) if found is not None else MISSING


def _row(job: JobResult, labels: Labels) -> list[str]:
    record = job.tls
    assert record is not None
    session = job.mode != Mode.OPERATIONS
    return [
        labels.row(job, size=False),
        format_bytes(job.message_size),
        record.group,
        MISSING if record.resumed else (record.signature or MISSING),
        MISSING if not record.chain_bytes else _bytes(sum(record.chain_bytes)),
        _median(job, "handshake" if session else "handshake_client"),
        _median(job, "first_byte" if session else "handshake_server"),
        _range(record.client_bytes),
        _range(record.server_bytes),
        str(record.round_trips),
    ]


def tls_sections(jobs: Sequence[JobResult], labels: Labels) -> list[Section]:
    """The report's TLS section: a row per tls13 job and size (none when the run has none)."""
    measured = [job for job in jobs if job.family == Family.TLS and job.tls is not None and job.status == JobStatus.OK]
    if not measured:
        return []
    blocks: list[Block] = [
        Paragraph(
            "Each row is one job and size: what its handshakes negotiated (read from their own messages and "
            "checked against what the job asked), the certificates the server sent (their DER, the root being "
            "the client's trust anchor), the median handshake (operations: each end's CPU in its handshake "
            "calls; over TCP: ClientHello sent to the client's handshake done, and connect's start to the "
            "response's first byte), and the bytes each way per handshake."
        ),
        Table(
            [
                "Job",
                "Size",
                "Group",
                "Signature",
                "Chain",
                "Handshake",
                "First byte",
                "Client to server",
                "Server to client",
                "Round trips",
            ],
            [_row(job, labels) for job in measured],
            caption="In an operations row, Handshake is the client's CPU per handshake and First byte the server's.",
            align=["left", "right", "left", "left", "right", "right", "right", "right", "right", "right"],
        ),
    ]
    for job in measured:
        record = job.tls
        assert record is not None
        blocks.append(
            Paragraph(f"**{labels.row(job, size=False)}**, {format_bytes(job.message_size)}: {flights_text(record)}.")
        )
    kernel = kernel_blocks([job for job in measured if job.mode != Mode.OPERATIONS])
    return [Section(TLS_TITLE, blocks)] + ([Section(KERNEL_TITLE, kernel, level=2)] if kernel else [])
