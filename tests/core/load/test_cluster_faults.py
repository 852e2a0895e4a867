"""The cluster coordinator against faults that a real cluster cannot stage on demand: a
worker whose answers are hostile (a NaN clock, a 20,052-character host name, a step record
no reader accepts), a clock stepped between steps or during one, a worker that stops
renewing its lease, a scheduler that is lost or never answers, Dask's TLS settings missing
or contradicting the address. The workers are fakes of their actors (each call answers at
once), driven through the coordinator's own code; tests/core/load/test_load_cluster.py
runs the real thing.
"""

from __future__ import annotations

import math
import re
import socket
import time
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

import pytest

from app import __version__
from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.load.cluster import coordinator, scheduler
from app.core.load.cluster.errors import ClusterError
from app.core.load.cluster.leases import Leases
from app.core.load.cluster.pipe_frames import StepReport
from app.core.load.job import StepLost, measure_size
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.results.check_job_parts import check_load
from app.core.settings.load import MAX_HOST_CHARS
from tests.helpers.round_trips import generator_part

distributed = pytest.importorskip("distributed", reason="the cluster extra (Dask distributed) is not installed")

STEP_S = 1.0


def _done(value: Any = None, error: BaseException | None = None) -> Future[Any]:
    future: Future[Any] = Future()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
    return future


class FakeActor:
    """A worker's generator as the coordinator sees it: every call answered at once. Its
    clock is this machine's plus `shift` (or `reading`, a hostile value, when set); a step
    answers `part` (its own record) and may move its clock while it runs (`shift_in_step`)."""

    def __init__(self, host: Any = "loadgen", shift: float = 0.0) -> None:
        self.host, self.shift = host, shift
        self.reading: Any = None
        self.shift_in_step = 0.0
        self.part: Any = None
        self.step_error: str | None = None
        self.starts: list[tuple[float, float]] = []
        self.sent: list[str] = []

    def clock(self) -> Future[Any]:
        return _done(self.reading if self.reading is not None else time.time() + self.shift)

    def identity(self) -> Future[Any]:
        return _done({"host": self.host, "version": __version__})

    def start(self, lease_s: float) -> Future[Any]:
        return _done(4321)

    def renew(self) -> Future[Any]:
        self.sent.append("renew")
        return _done(None)

    def stop(self) -> Future[Any]:
        self.sent.append("stop")
        return _done(True)

    def close(self) -> Future[Any]:
        self.sent.append("close")
        return _done(None)

    def call(self, command: str, *args: Any) -> Future[Any]:
        if command in ("connect", "seal"):
            return _done(None)
        if command == "prepare":
            return _done(([1e-4, 1.1e-4], 64))
        if command == "tamper":
            return _done({"tamper_tried": 2, "tamper_rejected": 2, "tamper_failures": [], "notes": []})
        if command == "step":
            rate, generators, number, at, _samples = args
            self.starts.append((at, self.shift))
            self.shift += self.shift_in_step
            if self.step_error is not None:
                return _done(error=RuntimeError(self.step_error))
            part = self.part if self.part is not None else generator_part(rate, generators, number, STEP_S)
            report = part if isinstance(part, StepReport) else StepReport(step=part, latencies=[1e-3], server_ns=[1000])
            return _done(report)
        raise AssertionError(f"unexpected command {command}")


class FakeClient:
    """The Dask client as the coordinator uses it: its workers, each with a fake actor."""

    def __init__(self, actors: list[FakeActor], scheme: str = "tls") -> None:
        self.workers = {f"{scheme}://10.1.0.{k + 1}:40001": actor for k, actor in enumerate(actors)}
        self.status = "running"

    def scheduler_info(self, n_workers: int = -1) -> dict[str, Any]:
        return {"workers": {address: {} for address in self.workers}}

    def submit(self, cls: Any, *, workers: list[str], **kwargs: Any) -> Future[Any]:
        return _done(self.workers[workers[0]])


def _driver(actors: list[FakeActor], rates: tuple[float, ...] = (100.0,), scheme: str = "tls") -> Any:
    job = {
        "scheme": "x25519",
        "mode": "load",
        "cluster": f"{scheme}://10.1.2.3:8786",
        "clients": 4,
        "rates": list(rates),
        "duration_s": STEP_S,
        "warmup_s": 0,
    }
    (resolved,) = resolve_jobs(parse_profile({"name": "c", "jobs": [job]}))
    plan = JobPlan(resolved, 0, SessionPeer("10.0.0.2", 4000, b"t" * 32))
    return coordinator.ClusterDriver(plan, lambda message: None, client=FakeClient(actors, scheme))


def _placed(actors: list[FakeActor], rates: tuple[float, ...] = (100.0,)) -> Any:
    driver = _driver(actors, rates)
    driver.place()
    return driver


# --- numbers and texts from workers are data ---------------------------------------------------


@pytest.mark.parametrize("reading", [math.nan, math.inf, -math.inf, "12.5", True, None, 1e300, -1.0])
def test_a_clock_reading_that_is_no_time_is_refused_naming_the_generator(reading: Any) -> None:
    actor = FakeActor()
    actor.reading = reading if reading is not None else [1.0]
    driver = _driver([actor])
    try:
        with pytest.raises(ClusterError, match=r"generator #1 \(loadgen, worker tls://10\.1\.0\.1:40001\) .*its clock"):
            driver.place()
    finally:
        driver.close(True)


def test_a_clock_a_day_and_more_away_is_refused_not_corrected() -> None:
    driver = _driver([FakeActor(shift=2 * 86_400.0)])
    try:
        with pytest.raises(ClusterError, match=r"its clock is \+172800 s from this machine's.*set its clock"):
            driver.place()
    finally:
        driver.close(True)


def test_a_hostile_host_name_is_cut_where_it_enters_as_the_reader_bounds_it() -> None:
    driver = _placed([FakeActor(host="h" + "x" * 20_051), FakeActor(host="bad\udcffname")])
    try:
        step, _ = driver.run_step(100.0, lambda fraction: None)
    finally:
        driver.close(False)
    first, second = driver.places
    assert len(first.host) <= MAX_HOST_CHARS and first.host.startswith("hxxx") and "20,052 characters" in first.host
    assert second.host == "bad\\udcffname"  # escaped: every reader writes and reads it as it is
    assert len(driver.generators[0].name) < 400  # every message naming it stays one readable line
    load = {"clients": 4, "steps": [step.to_dict()], "generators": [p.to_dict() for p in driver.places]}
    check_load(load, "load")  # what the results reader reads back


def test_a_host_name_that_is_not_text_is_refused() -> None:
    driver = _driver([FakeActor(host=12345)])
    try:
        with pytest.raises(ClusterError, match=r"generator #1 .*answered badly: its host name: expected text"):
            driver.place()
    finally:
        driver.close(True)


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda r: setattr(r, "started_late_s", math.nan), "its start: expected a finite number"),
        (lambda r: setattr(r, "latencies", [1e-3, math.inf]), r"its latencies\[1\]"),
        (lambda r: setattr(r, "step", replace(r.step, achieved_per_s=-5.0)), "achieved_per_s"),
        (lambda r: r.step.latency_s.update(p99=math.nan), "p99"),
        (lambda r: setattr(r, "sample_every", 0), "its sampling"),
        (lambda r: setattr(r, "refused", {"bad": -1}), "its refusals"),
    ],
)
def test_a_step_record_no_reader_accepts_is_refused_and_the_step_is_incomplete(spoil: Any, said: str) -> None:
    good, bad = FakeActor(), FakeActor()
    driver = _placed([good, bad])
    report = StepReport(step=generator_part(100.0, 2, 1, STEP_S), latencies=[1e-3], server_ns=[1000])
    spoil(report)
    bad.part = report
    try:
        step, _ = driver.run_step(100.0, lambda fraction: None)
    finally:
        driver.close(False)
    assert step.incomplete is not None and "generator #2" in step.incomplete and "answered badly" in step.incomplete
    assert [part.generator for part in step.generators] == [1]  # the other's share, kept and marked
    load = {"clients": 4, "steps": [step.to_dict()], "generators": [p.to_dict() for p in driver.places]}
    check_load(load, "load")
    assert re.search(said, step.incomplete), step.incomplete


# --- clocks measured again around every step ------------------------------------------------------


def test_a_clock_stepped_after_placing_is_measured_again_and_the_step_placed_on_it() -> None:
    steady, stepped = FakeActor(), FakeActor()
    driver = _placed([steady, stepped])
    stepped.shift = 5.0  # its clock jumps 5 s ahead after the generators were placed
    try:
        step, _ = driver.run_step(100.0, lambda fraction: None)
    finally:
        driver.close(False)
    (at_steady, shift_steady), (at_stepped, shift_stepped) = steady.starts[0], stepped.starts[0]
    # Each began at the same moment of this machine's clock: its own start less its offset.
    assert abs((at_stepped - shift_stepped) - (at_steady - shift_steady)) < 0.05
    assert step.incomplete is None
    assert any("generator #2" in note and "clock moved" in note for note in driver.notes), driver.notes


def test_a_clock_stepped_while_a_step_ran_makes_the_step_incomplete_and_the_job_fail() -> None:
    steady, jumpy = FakeActor(), FakeActor()
    driver = _placed([steady, jumpy], rates=(100.0, 200.0))
    jumpy.shift_in_step = 1.0  # stepped while the step runs: its start may lie either side
    try:
        result = measure_size(driver, 0, 32)
    finally:
        driver.close(False)
    assert result.load is not None and len(result.load.steps) == 1
    incomplete = result.load.steps[0].incomplete or ""
    assert "generator #2" in incomplete and "its clock moved +1 s while the step ran" in incomplete, incomplete
    assert result.error is not None and "incomplete" in result.error


def test_a_clock_that_cannot_be_placed_before_a_step_loses_that_step_and_keeps_the_ones_before() -> None:
    driver = _placed([FakeActor()], rates=(100.0, 200.0, 300.0))
    steps = 0
    exchange = driver._exchange

    def slow_after_first_step(actor: Any) -> tuple[float, float, float]:
        if steps >= 2:  # every exchange now takes 200 ms: the clock is known to 100 ms, not 20
            t0 = time.time()
            return t0, t0 + 0.1, t0 + 0.2
        return exchange(actor)

    run_step = driver.run_step

    def counted(rate: float, progress: Any) -> Any:
        nonlocal steps
        steps += 1
        return run_step(rate, progress)

    driver._exchange = slow_after_first_step
    driver.run_step = counted
    try:
        result = measure_size(driver, 0, 32)
    finally:
        driver.close(False)
    assert result.load is not None and [s.offered_per_s for s in result.load.steps] == [100.0]
    assert result.error is not None and result.error.startswith("the step at 200/s was lost: ")
    assert "could not be placed" in result.error and "known only to within 100 ms" in result.error
    assert any("the step before it is kept" in note and "later steps were not offered" in note for note in result.notes)


# --- a lost scheduler, a worker that stops answering ----------------------------------------------


def test_a_lost_scheduler_is_named_and_the_steps_before_it_are_kept() -> None:
    actors = [FakeActor(), FakeActor()]
    driver = _placed(actors, rates=(100.0, 200.0))
    run_step = driver.run_step

    def then_lost(rate: float, progress: Any) -> Any:
        if rate == 200.0:  # the scheduler dies: the client stops running, every call is refused
            driver.client.status = "connecting"
            for actor in actors:
                actor.step_error = "Worker holding Actor was lost.  Status: cancelled"
        return run_step(rate, progress)

    driver.run_step = then_lost
    try:
        result = measure_size(driver, 0, 32)
    finally:
        driver.close(False)
    assert result.load is not None and len(result.load.steps) == 1
    assert result.error is not None and "the Dask scheduler at tls://10.1.2.3:8786 was lost" in result.error
    assert "Worker holding Actor was lost" in result.error  # what each generator's call said, after


def test_a_call_dask_refuses_at_once_is_a_failure_named_like_any_other() -> None:
    actor = FakeActor()
    driver = _placed([actor])

    def refuse(*args: Any) -> Any:
        raise RuntimeError("Worker holding Actor was lost.  Status: cancelled")

    actor.call = refuse
    driver.client.status = "closed"
    try:
        with pytest.raises(
            ClusterError, match=r"^the Dask scheduler at tls://10\.1\.2\.3:8786 was lost .*generator #1"
        ):
            driver.prepare(32)
    finally:
        driver.close(False)


def test_a_lease_unanswered_for_its_length_marks_its_generator_gone_with_one_renewal_in_flight() -> None:
    now = [0.0]
    leases = Leases(lease_s=10.0, every_s=1.0, clock=lambda: now[0])
    sent: list[Future[Any]] = []

    def renew() -> Future[Any]:
        sent.append(Future())  # a stopped worker: never answered
        return sent[-1]

    leases.add(1, renew)
    for second in range(1, 12):
        now[0] = float(second)
        leases.renew_once()
        assert leases.gone(1) is None, second
    assert len(sent) == 1  # one renewal in flight, not one a second piling up
    now[0] = 11.5
    leases.renew_once()
    assert leases.gone(1) is not None and "renewed no lease for 11.5 s" in (leases.gone(1) or "")
    # Answered renewals keep it alive, one after another.
    fresh = Leases(lease_s=10.0, every_s=1.0, clock=lambda: now[0])
    fresh.add(2, lambda: _done(None))
    for second in range(12, 40):
        now[0] = float(second)
        fresh.renew_once()
    assert fresh.gone(2) is None


def test_nothing_is_sent_to_a_generator_whose_worker_went_silent() -> None:
    silent, alive = FakeActor(), FakeActor()
    driver = _placed([alive, silent])
    driver.generators[1].silent = True
    driver.close(False)
    assert "close" in alive.sent and "close" not in silent.sent and "stop" not in silent.sent


# --- connecting: the address, Dask's TLS settings, a listener that never answers -------------------


def test_tls_without_this_machines_settings_names_the_settings() -> None:
    import dask

    unset = {"distributed.comm.tls.ca-file": None, "distributed.comm.tls.client.cert": None}
    with dask.config.set({**unset, "distributed.comm.require-encryption": None}):
        with pytest.raises(ClusterError) as caught:
            scheduler.client_security("tls://127.0.0.1:8786")
    text = str(caught.value)
    assert "\n" not in text and "tls://127.0.0.1:8786 speaks TLS" in text
    assert "distributed.comm.tls.ca-file" in text and "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT" in text


def test_a_tls_file_that_cannot_be_read_is_named(tmp_path: Any) -> None:
    import dask

    missing = str(tmp_path / "nowhere.pem")
    settings = {"distributed.comm.tls.ca-file": missing, "distributed.comm.tls.client.cert": missing}
    with (
        dask.config.set(settings),
        pytest.raises(ClusterError, match=r"distributed\.comm\.tls\.ca-file .* cannot be read"),
    ):
        scheduler.client_security("tls://127.0.0.1:8786")


def test_required_encryption_against_a_plain_tcp_scheduler_names_the_setting() -> None:
    import dask

    with dask.config.set({"distributed.comm.require-encryption": True}):
        with pytest.raises(ClusterError) as caught:
            scheduler.client_security("tcp://127.0.0.1:8786")
    text = str(caught.value)
    assert "\n" not in text and "distributed.comm.require-encryption" in text and "tls://" in text


def test_a_listener_that_never_answers_is_named_within_the_bound() -> None:
    from distributed.security import Security

    with socket.create_server(("127.0.0.1", 0), backlog=8) as listener:  # accepts (the backlog), never answers
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(ClusterError, match=rf"{address} accepted the connection but did not answer"):
            scheduler.check_answers(address, Security(), timeout=0.5)
    assert time.monotonic() - started < 10  # the bound held: it once ran 150 s and more
    assert scheduler.open_client.__defaults__ == (scheduler.CONNECT_TIMEOUT_S,)


def test_the_token_never_travels_unencrypted_without_leave_even_on_the_loopback() -> None:
    loopback = _driver([], scheme="tcp")
    loopback.address = "tcp://127.0.0.1:8786"
    with pytest.raises(ClusterError, match=r"unencrypted \(tcp://127\.0\.0\.1:8786\).*--cluster-plain-tcp"):
        loopback._check_secrets(["tcp://127.0.0.1:40001"])
    # A tls:// scheduler whose worker listens on plain TCP: the worker is named.
    mixed = _driver([])
    with pytest.raises(ClusterError, match=r"unencrypted \(worker tcp://10\.1\.0\.9:40001\)"):
        mixed._check_secrets(["tls://10.1.0.8:40001", "tcp://10.1.0.9:40001"])
    secured = _driver([])
    secured._check_secrets(["tls://10.1.0.8:40001"])
    assert secured.notes == []


def test_step_lost_is_what_a_step_without_records_raises() -> None:
    actor = FakeActor()
    driver = _placed([actor])
    actor.step_error = "the generator process on loadgen ended"
    try:
        with pytest.raises(StepLost, match=r"no generator returned it: generator #1 .* ended"):
            driver.run_step(100.0, lambda fraction: None)
    finally:
        driver.close(False)


def test_a_clock_measurement_skips_exchanges_this_machines_clock_went_back_in() -> None:
    from app.core.load.cluster import clocks

    answers = iter([(10.0, 12.0, 9.0)] * 3 + [(10.0, 12.0005, 10.001)] * 20)  # three went back in time
    offset = clocks.measure(lambda: next(answers), least=4, limit_s=0.01)
    assert offset.offset_s == pytest.approx(2.0) and offset.round_trip_s == pytest.approx(0.001)
    with pytest.raises(ClusterError, match=f"went back during each of {clocks.MOST_EXCHANGES} "):
        clocks.measure(lambda: (10.0, 12.0, 9.0), least=4, limit_s=0.01)


def test_a_worker_that_does_not_answer_a_clock_exchange_is_named() -> None:
    actor = FakeActor()
    actor.clock = lambda: _done(error=TimeoutError("no answer in 20 s"))  # type: ignore[method-assign]
    driver = _driver([actor])
    try:
        with pytest.raises(ClusterError, match=r"generator #1 .* did not answer a clock exchange: no answer in 20 s"):
            driver.place()
    finally:
        driver.close(True)


def test_the_load_server_waits_for_a_cluster_jobs_clients_as_long_as_placing_may_take() -> None:
    """The coordinator's placing is bounded stage by stage; the load server, started first,
    waited only its own 60 s for the first client and, on a busy machine, refused the
    generators that arrived after."""
    from app.core.load.server import LoadServerPlan
    from app.core.run import topologies

    (job,) = resolve_jobs(
        parse_profile(
            {
                "name": "c",
                "jobs": [{"scheme": "x25519", "mode": "load", "cluster": "tls://127.0.0.1:8786", "rates": [10]}],
            }
        )
    )
    started: list[Any] = []

    class Starter:
        def start_child(self, role: Any, target: Any, plan: Any) -> None:
            started.append(plan)

        def wait_for_port(self, role: Any) -> None:
            return None  # the server did not come up: nothing more is started

    assert topologies.start_cluster_load(Starter(), job) is False  # type: ignore[arg-type]
    (server,) = started
    assert isinstance(server, LoadServerPlan) and server.accept_timeout == coordinator.PLACING_BOUND_S
    assert LoadServerPlan(b"t", "x25519", "cryptography", {}, (32,)).accept_timeout < coordinator.PLACING_BOUND_S
