"""A tls13 job in operations mode: both ends in one process over memory BIOs, no network.

What one handshake costs each end's CPU: every `do_handshake` call of each end is timed
(`handshake_client`, `handshake_server`), the bytes between the two ends moved outside the
timed calls. Each handshake verifies the server's chain and host name (and the client's,
when mutual) for real, is checked against what the job asked, and is followed by the
size's application data, request and response, compared on arrival. The record layer's
own cost is timed apart on established connections, in calibrated batches: the client
sealing a message into records (`encrypt`) and the server opening them (`decrypt`).
Tampered records must be refused: each try flips one bit of a fresh connection's first
record, which the server must reject.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection

from OpenSSL import SSL

from app.core.contracts.events import RawMetric, SizeMeasured, SizeStarted
from app.core.contracts.plan import JobPlan
from app.core.measure.harness import (
    Emit,
    Parts,
    ProgressCounter,
    SampleRounds,
    ValidationFailed,
    check_tampering,
    child_entry,
)
from app.core.measure.timing import calibrate, gc_paused, time_calls
from app.core.schemes import registry
from app.core.schemes.base import SchemeError
from app.core.schemes.tls13 import Tls13Scheme
from app.core.schemes.tls_messages import Negotiated
from app.core.tls import stack
from app.core.tls.certificates import CLIENT_NAME, SERVER_NAME, anchor_from_der, make_chain
from app.core.tls.data import DataMismatch, read_exact, request_for, response_for
from app.core.tls.handshake import (
    FlightLog,
    HandshakeFailed,
    drain,
    negotiated,
    negotiated_unwatched,
    pair_handshake,
)
from app.core.tls.tally import HandshakeTally, NegotiationMismatch

#: A batch of records keeps its outputs alive until they are opened: past this many bytes a
#: batch gets smaller (app.core.measure.ops's rule, for the same page-fault reason).
BATCH_BYTES = 256 * 1024


@dataclass
class Connected:
    """A pair after its handshake: both ends, what was said, and each end's handshake time."""

    client: SSL.Connection
    server: SSL.Connection
    log: FlightLog
    negotiated: Negotiated
    client_ns: int
    server_ns: int


class TlsPair:
    """The job's two ends in one process: their contexts, and a connected pair on demand."""

    def __init__(self, scheme: Tls13Scheme) -> None:
        asked = scheme.asked
        refusal = stack.refusal(asked)
        if refusal is not None:
            raise stack.TlsStackError(refusal)
        server_chain = make_chain(asked.certificate, asked.chain, SERVER_NAME)
        client_chain = make_chain(asked.certificate, asked.chain, CLIENT_NAME) if asked.mutual else None
        self.server = stack.server_context(
            asked,
            server_chain.identity,
            None if client_chain is None else anchor_from_der(client_chain.anchor_der()),
        )
        self.client = stack.client_context(
            asked, anchor_from_der(server_chain.anchor_der()), None if client_chain is None else client_chain.identity
        )
        self.resume = asked.resumption == "ticket"
        self.session: SSL.Session | None = None
        #: Clients connected and not yet closed (`close_all`).
        self.open: list[SSL.Connection] = []

    def connect(self, watched: bool = False) -> Connected:
        """A fresh pair with its handshake done (resuming the last session when the job asks);
        the tickets the server sent after it are in the client's BIO (`pair_handshake`).
        `watched`: every message kept and read (the signature schemes, the flights named),
        at the cost of OpenSSL's message callback inside the handshake calls; else what it
        negotiated is read from its ServerHellos and the received chain, after the calls."""
        client = stack.client_connection(self.client, SERVER_NAME, None, watched)
        server = stack.server_connection(self.server, watched)
        if self.resume and self.session is not None:
            client.set_session(self.session)
        if not watched:
            log = FlightLog(None)
            times = pair_handshake(client, server, log)
            said = negotiated_unwatched(log, client)
        else:
            client_transcript, server_transcript = stack.watch(client), stack.watch(server)
            log = FlightLog({"client": (client_transcript, True), "server": (server_transcript, True)})
            try:
                times = pair_handshake(client, server, log)
                said = negotiated(client_transcript, server_transcript)
            finally:
                stack.forget(client)
                stack.forget(server)
        self.open.append(client)
        if self.resume:
            self.session = take_tickets(client)
        return Connected(client, server, log, said, times.client_ns, times.server_ns)

    def close_all(self) -> None:
        """close_notify on every client still open (`close`)."""
        for client in self.open:
            close(client)
        self.open.clear()

    def prime(self) -> None:
        """A resumed job's first session: one full handshake whose ticket the next resumes
        (each connection then leaves the ticket of the next: OpenSSL offers a TLS 1.3
        ticket once, as RFC 8446 §C.4 asks of clients)."""
        if self.resume:
            self.connect()
            self.close_all()


def take_tickets(client: SSL.Connection) -> SSL.Session | None:
    """Let the client read the NewSessionTickets waiting in its BIO (there is no application
    data yet), and return its session, which now holds them."""
    try:
        client.recv(1)
    except SSL.WantReadError:
        pass
    return client.get_session()


def close(client: SSL.Connection) -> None:
    """Say close_notify: OpenSSL drops the session of a connection freed without it, and a
    resumed job's next handshake would then be a full one."""
    client.shutdown()


def exchange(client: SSL.Connection, server: SSL.Connection, request: bytes, response: bytes) -> None:
    """The request and the response, each compared where it arrives (DataMismatch)."""
    client.sendall(request)
    server.bio_write(drain(client))
    if read_exact(server, len(request), lambda: b"") != request:
        raise DataMismatch("the server read other application data than the client sent")
    server.sendall(response)
    client.bio_write(drain(server))
    if read_exact(client, len(response), lambda: b"") != response:
        raise DataMismatch("the client read other application data than the server sent")


class TlsOperations:
    """Measures one tls13 job across the plan's message sizes, in one process."""

    def __init__(self, plan: JobPlan, emit: Emit) -> None:
        self.plan, self.job, self.emit = plan, plan.job, emit
        scheme = registry.create(plan.job.scheme, plan.job.backend, plan.job.params)
        assert isinstance(scheme, Tls13Scheme), "the topologies send only tls13 jobs here"
        self.scheme = scheme
        self.pair = TlsPair(scheme)
        job = self.job
        self.progress = ProgressCounter(emit, plan.first_index, (3 * job.samples + job.tamper) * len(job.message_sizes))

    def handshakes(self, size: int, seed: bytes, result: SizeMeasured, tally: HandshakeTally) -> dict[str, RawMetric]:
        """One watched handshake, untimed (every message read: the signature schemes checked,
        the flights named), then warm-up + samples unwatched, each timed per end and checked
        from what crossed the wire; each followed by the size's data."""
        job = self.job
        names = ["handshake_client", "handshake_server"]
        rounds = SampleRounds(self.emit, self.plan.first_index, names, job.warmup, on_sample=self.progress.advance)
        request, response = request_for(seed, size), response_for(seed, size)
        watched = self.pair.connect(watched=True)
        tally.add(watched.negotiated, watched.log.flights, watched.log.round_trips(), watched.log.after)
        exchange(watched.client, watched.server, request, response)
        result.checked += 1
        self.pair.close_all()
        for _ in range(job.warmup + job.samples):
            with gc_paused():
                pair = self.pair.connect()
            tally.add(pair.negotiated, pair.log.flights, pair.log.round_trips(), pair.log.after)
            exchange(pair.client, pair.server, request, response)
            result.checked += 1
            self.pair.close_all()
            rounds.record({"handshake_client": pair.client_ns / 1e9, "handshake_server": pair.server_ns / 1e9})
        return rounds.flush()

    def _ends(self, size: int) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
        """A fresh connection's two halves of the record layer: seal a message on the client
        (its records), open the records of a `size`-byte message on the server."""
        pair = self.pair.connect()
        client, server = pair.client, pair.server

        def seal(plaintext: bytes) -> bytes:
            client.sendall(plaintext)
            return drain(client)

        def open_(records: bytes) -> bytes:
            server.bio_write(records)
            return read_exact(server, size, lambda: b"")

        return seal, open_

    def records(self, message: bytes, result: SizeMeasured) -> None:
        """The record layer alone: sealing (`encrypt`) and opening (`decrypt`) one message,
        each in calibrated batches on a connection of its own, every message compared. A
        record opens once and after the one before it (its sequence number), so every input
        is made in order and used once, the calibration's on a connection it then drops."""
        size = len(message)

        def check(opened: bytes) -> None:
            if opened != message:
                raise ValidationFailed("the server opened other bytes than the client sealed")
            result.checked += 1

        most = max(1, BATCH_BYTES // max(1, size))
        probe_seal, _ = self._ends(size)
        seal, open_ = self._ends(size)
        result.metrics["encrypt"] = self._batches(
            "encrypt",
            min(most, calibrate(probe_seal, lambda: message).count),
            lambda: message,
            seal,
            lambda out: check(open_(out)),
        )
        probe_seal, probe_open = self._ends(size)
        seal, open_ = self._ends(size)
        result.metrics["decrypt"] = self._batches(
            "decrypt",
            min(most, calibrate(probe_open, lambda: probe_seal(message)).count),
            lambda: seal(message),
            open_,
            check,
        )

    def _batches(
        self,
        metric: str,
        calibrated: int,
        make_input: Callable[[], bytes],
        run: Callable[[bytes], bytes],
        check: Callable[[bytes], None],
    ) -> RawMetric:
        job = self.job
        count = max(1, calibrated)
        rounds = SampleRounds(
            self.emit, self.plan.first_index, [metric], job.warmup, batch=count, on_sample=self.progress.advance
        )
        for _ in range(job.warmup + job.samples):
            inputs = [make_input() for _ in range(count)]
            elapsed, outputs = time_calls(run, inputs)
            for output in outputs:
                check(output)
            rounds.record({metric: elapsed / count / 1e9})
        return rounds.flush()[metric]

    def tamper(self, result: SizeMeasured, request: bytes) -> None:
        """Records with one bit flipped must be refused, each on a connection of its own (a
        refused record ends a TLS connection with an alert)."""
        servers: list[SSL.Connection] = []

        def seal() -> Parts:
            pair = self.pair.connect()
            servers.append(pair.server)
            pair.client.sendall(request)
            return (drain(pair.client),)

        def deliver(parts: Parts, offset: int) -> str | None:
            server = servers.pop()
            record = bytearray(b"".join(parts))
            record[offset] ^= 0x01
            server.bio_write(bytes(record))
            try:
                read_exact(server, len(request), lambda: b"")
            except SSL.Error:
                return None  # refused: OpenSSL raised, and wrote its alert
            except DataMismatch as exc:
                return f"the server neither opened nor refused it: {exc}"
            return "tampered record was ACCEPTED"

        check_tampering(self.scheme, self.job.tamper, len(request), result, seal, deliver, self.progress.advance)

    def measure_size(self, index: int, size: int) -> SizeMeasured:
        result = SizeMeasured(index, size, metrics={})
        seed = os.urandom(16)
        gc.collect()
        tally = HandshakeTally(self.scheme, stack.openssl_version()[1])
        try:
            result.metrics.update(self.handshakes(size, seed, result, tally))
        except NegotiationMismatch as exc:
            failed = SizeMeasured.failure(index, size, exc)
            failed.tls = tally.record()  # what it negotiated instead, HelloRetryRequests counted
            return failed
        result.tls = tally.record()
        message = request_for(seed, size)
        try:
            self.records(message, result)
            self.tamper(result, message)
        finally:
            self.pair.close_all()
        return result

    def run(self) -> None:
        self.pair.prime()
        for index, size in enumerate(self.job.message_sizes):
            self.emit(SizeStarted(index, size))
            try:
                measured = self.measure_size(index, size)
            except (ValidationFailed, SchemeError, HandshakeFailed, DataMismatch) as exc:
                measured = SizeMeasured.failure(index, size, exc)
            self.emit(measured.summarize())


def tls_operations_main(conn: Connection, plan: JobPlan) -> None:
    """Entry point of a tls13 operations child (the topology's worker)."""
    child_entry(conn, lambda emit: TlsOperations(plan, emit).run())
