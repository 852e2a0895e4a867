"""The run estimate (app.core.run.estimate): each kind of job priced from what it will do,
the range and its words, the five-minute question's threshold, and the refinement as
jobs finish. Costs are given (no catalogue, no probe), so every figure is checkable."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.run import estimate as est
from app.core.run.estimate import LONG_RUN_S, JobEstimate, Refined, RunEstimate, estimate_run, range_text
from app.core.run.op_costs import Line, OpCosts, cost_key, load_catalogue, probe_costs
from app.core.settings.profile import ResolvedJob
from app.core.vocab import Family

AEAD = OpCosts(Family.AEAD, keygen=1e-6, messages={"encrypt": Line(1e-6, 1e-9), "decrypt": Line(1e-6, 1e-9)})
SLOW_PKE = OpCosts(Family.PUBLIC_KEY_ENCRYPTION, keygen=1.0, messages={"encrypt": Line(0.001), "decrypt": Line(0.05)})
KEM = OpCosts(
    Family.HYBRID,
    keygen=0.1,
    messages={"encrypt": Line(4e-5), "decrypt": Line(8e-4)},
    extras={"encapsulate": 4e-5, "decapsulate": 8e-4},
)


def _jobs(monkeypatch: pytest.MonkeyPatch, costs: OpCosts, **job: Any) -> list[ResolvedJob]:
    monkeypatch.setattr(est, "costs_for", lambda *a, **k: costs)
    return resolve_jobs(parse_profile({"name": "t", "jobs": [job]}), has_remote=True)


def _seconds(jobs: list[ResolvedJob]) -> float:
    return sum(part.seconds for job in jobs for part in est.estimate_job(job, slowdown=1.0))


def test_a_fast_operation_costs_its_batches_not_its_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1 µs calls are batched to ~2 ms a sample, each checked by the other operation and
    # handled by the harness (PER_CALL_S): ~7 ms a round, whatever the number of calls.
    base = {"scheme": "aes-gcm", "message_sizes": [64], "warmup": 0, "tamper": 0}
    ten = _seconds(_jobs(monkeypatch, AEAD, samples=10, **base))
    thousand = _seconds(_jobs(monkeypatch, AEAD, samples=1010, **base))
    per_round = (thousand - ten) / 1000 / 2  # two metrics, encrypt and decrypt
    assert 0.004 < per_round < 0.008
    # A 64 MiB message: one call a sample (256 KiB of outputs at most), priced per byte.
    big = _seconds(_jobs(monkeypatch, AEAD, scheme="aes-gcm", samples=10, message_sizes=[64 << 20], warmup=0, tamper=0))
    assert big > 10 * 2 * 2 * 64 * (1 << 20) * 1e-9


def test_slow_key_generations_and_operations_are_counted_one_call_a_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = _jobs(
        monkeypatch, SLOW_PKE, scheme="rsa-oaep", message_sizes=[12], samples=20, warmup=0, keygen_samples=10, tamper=0
    )
    seconds = _seconds(jobs)
    keygens = 10 + 1 + 1 + 1  # the timed ones, the working pair, the calibration, the memory pass
    decrypts = 20 * (0.05 + 0.001) * 2  # each decrypt's input sealed, each encrypt checked by a decrypt
    assert keygens + decrypts <= seconds < (keygens + decrypts) * 1.3


def test_a_session_over_a_slow_link_waits_out_its_round_trips(monkeypatch: pytest.MonkeyPatch) -> None:
    job = {"scheme": "rsa-kem", "params": {"bits": 3072}, "mode": "loopback", "message_sizes": [1024], "tamper": 1}
    near = _seconds(_jobs(monkeypatch, KEM, samples=15, warmup=2, keygen_samples=5, link="lan", **job))
    far = _seconds(_jobs(monkeypatch, KEM, samples=15, warmup=2, keygen_samples=5, link="satellite", **job))
    # satellite: ~600 ms a round trip; per job 7 handshake rounds (2 exchanges each), 17
    # floor pings, 17 messages, 1 tamper try, the size's start and end.
    exchanges = 7 * 2 + 17 + 17 + 1 + 2
    assert far - near > exchanges * 0.5
    assert far < exchanges * 1.5


def test_the_retransmission_timer_backs_off_as_tcp_s_does() -> None:
    """Each try after a timeout waits twice the last (up to RTO_MAX_S); a try that fails
    with probability q: the expected wait is the sum over tries of its chance and what it
    waited; after TCP's retries, or the receiver's wait, the exchange never gets through."""
    rto = 0.24
    nothing = est.timeouts(rto, 0.0)
    assert (nothing.wait_s, nothing.ends) == (0.0, 0.0)
    # Rare loss: about one timeout in 1/q exchanges.
    assert est.timeouts(rto, 0.01).wait_s == pytest.approx(0.01 * rto, rel=0.05)
    # Two retries: through on the second try after one timeout (1/4), or not at all after
    # both, the second twice the first (1/4, 3 timeouts of waiting).
    assert est.timeouts(rto, 0.5, retries=2) == est.Retransmissions(0.25 * rto, 0.25, 3 * rto)
    # Three tries in four failing (50 % loss, a segment and its reply): seconds when it gets
    # through, and 1 in 24 waits out the receiver's 300 s.
    heavy = est.timeouts(0.21, 0.75)
    assert 2 < heavy.wait_s < 20 and heavy.ends == pytest.approx(0.75**11) and heavy.end_s == est.GIVE_UP_S


def test_a_lossy_packet_path_is_priced_with_its_retransmissions(monkeypatch: pytest.MonkeyPatch) -> None:
    """50 % loss was estimated "about 1 s" and ran 448 s: the estimate priced each exchange
    at its round trip alone. TCP waits out a timer for each lost segment, doubled after
    each one lost again, until the receiver gives the job up; the estimate now follows it."""
    job = {"scheme": "aes-gcm", "mode": "loopback", "message_sizes": [1024], "samples": 10, "warmup": 1}

    def seconds(loss: float) -> float:
        link = {"delay_ms": 5, "loss_percent": loss}
        return _seconds(_jobs(monkeypatch, AEAD, link=link, link_emulation="packet", **job))

    clean, light, heavy, half = seconds(0), seconds(1), seconds(30), seconds(50)
    assert clean < light < heavy < half
    assert light < 2 * clean  # 1 %: a timeout now and then
    # Measured on the 2-core VM (2026-11-28, this job): 30 % loss ran 97.6 s; 50 % ran 416 s
    # and failed, the receiver's 300 s wait run out (the report that found it: 448 s).
    assert 40 < heavy < 200
    assert 250 < half < 1000


TLS = OpCosts(Family.TLS, keygen=0.01, exchange=0.004, handshake_bytes=(1447, 10333))


def test_a_tls13_job_over_a_lossy_path_retransmits_and_gives_a_connection_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tls13 job opens a connection per sample: over loss each retransmits as a session's
    exchanges do, and a connection whose SYNs go unanswered for the connect timeout ends
    the job (1 in 15 at 30 % loss), which caps what heavy loss can cost."""
    job = {"scheme": "tls13", "mode": "loopback", "message_sizes": [1024], "samples": 10, "warmup": 1}

    def seconds(loss: float) -> float:
        link = {"delay_ms": 5, "loss_percent": loss}
        return _seconds(_jobs(monkeypatch, TLS, link=link, link_emulation="packet", **job))

    clean, light, heavy = seconds(0), seconds(1), seconds(30)
    assert clean < light < 2 * clean
    syn = est.connect_retransmissions(_jobs(monkeypatch, TLS, link={"delay_ms": 5, "loss_percent": 30}, **job)[0].link)
    assert syn.end_s == est.CONNECT_GIVE_UP_S and syn.ends == pytest.approx(0.51**4)
    # Measured on the 2-core VM (2026-11-28, this job): 30 % loss ran 34 s and 50 s (ok),
    # and 62 s (failed: a tamper try's connection never opened); estimated before, 2 s.
    assert 30 < heavy < 200


def test_a_load_sweep_is_a_range_from_two_steps_to_all_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = _jobs(
        monkeypatch,
        KEM,
        scheme="rsa-kem",
        params={"bits": 3072},
        mode="load",
        message_sizes=[32],
        clients=8,
        rate_per_s="sweep",
        duration_s=2,
        warmup_s=0.5,
    )
    (part,) = est.estimate_job(jobs[0], slowdown=1.0)
    assert 2 * 2.5 * est.LOW <= part.low < part.seconds < part.high
    assert 2 * 2.5 < part.seconds < 2 * 2.5 + 3  # two steps, the pools, the calibration
    assert part.high > 10 * 2.5 * est.HIGH  # a sweep that climbs to the top
    fixed = _jobs(
        monkeypatch, KEM, scheme="rsa-kem", params={"bits": 3072}, mode="load", rates=[10.0, 20.0], duration_s=1
    )
    (part,) = est.estimate_job(fixed[0], slowdown=1.0)
    assert 2 * 1.5 <= part.seconds < 2 * 1.5 + 3


def test_the_range_is_said_in_words_a_user_reads() -> None:
    assert range_text(0.2, 0.6) == "under 1 s"
    assert range_text(7.6, 8.8) == "about 9 s"
    assert range_text(4.0, 9.0) == "4–9 s"
    assert range_text(12 * 60, 15 * 60) == "12–15 min"
    assert range_text(40, 130) == "40 s–2 min"
    assert range_text(50 * 60, 2 * 3600) == "50 min–2.0 h"
    for low, high in [(0.1, 0.9), (0.5, 2.0), (31, 70), (600, 900)]:
        assert "over" not in range_text(low, high) and "under 1 s" not in range_text(low, high)[1:]


def test_a_run_asks_first_only_when_the_upper_end_passes_five_minutes() -> None:
    def run(high: float) -> RunEstimate:
        return RunEstimate((JobEstimate("j", high / 2, high / 3, high),), start_s=0.0)

    assert run(LONG_RUN_S + 1).long and not run(LONG_RUN_S - 1).long
    unknown = RunEstimate((JobEstimate("j", 1, 1, 1), JobEstimate("k", 0, 0, 0, known=False)))
    assert unknown.text().endswith("(+ 1 job not estimated)")


def test_a_busy_machine_slows_the_work_not_the_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    job = {"scheme": "rsa-kem", "params": {"bits": 3072}, "mode": "loopback", "message_sizes": [1024]}
    jobs = _jobs(monkeypatch, KEM, samples=15, link="satellite", pause_ms=100, **job)
    calm, busy = estimate_run(jobs, slowdown=1.0), estimate_run(jobs, slowdown=3.0)
    assert calm.seconds < busy.seconds < 3 * calm.seconds  # the satellite's round trips do not slow down
    operations = _jobs(monkeypatch, SLOW_PKE, scheme="rsa-oaep", message_sizes=[12], samples=5)
    calm, busy = estimate_run(operations, slowdown=1.0), estimate_run(operations, slowdown=3.0)
    assert busy.seconds == pytest.approx(3 * calm.seconds)
    assert busy.low < busy.seconds < busy.high


def test_the_slowdown_is_the_share_of_the_cpu_other_programs_leave(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.run import op_costs

    monkeypatch.setattr(op_costs, "_share_cache", [])
    assert 1.0 <= op_costs.cpu_slowdown(0.02) <= op_costs.MAX_SLOWDOWN
    clock = iter([0.0, 0.0, 0.05, 0.1, 0.1])  # wall 0.1 s, 0.025 s of it ours: the loop 4x slower
    cpu = iter([0.0, 0.025])
    monkeypatch.setattr(op_costs.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(op_costs.time, "process_time", lambda: next(cpu))
    assert op_costs.busy_loop_slowdown(0.1) == pytest.approx(4.0)
    assert op_costs.raw_slowdown(0.9) == 1.0 and op_costs.raw_slowdown(50.0) == op_costs.MAX_SLOWDOWN
    assert op_costs.weighted(3.0) == pytest.approx(1 + op_costs.SLOWDOWN_WEIGHT * 2)


def test_the_time_left_scales_the_jobs_left_by_how_the_finished_ones_went() -> None:
    jobs = (JobEstimate("a", 1.0, 1, 1), JobEstimate("b", 1.0, 1, 1), JobEstimate("c", 100.0, 1, 1))
    refined = Refined(RunEstimate(jobs, start_s=0.0))
    assert refined.left(0.0, 0, None) == pytest.approx(102.0)
    assert refined.ratio(4.0, 2) == pytest.approx(2.0)
    assert refined.left(4.0, 2, None) == pytest.approx(200.0)  # not 2 s a job x 1 job
    assert refined.left(4.0, 2, 190.0) == pytest.approx(20.0)  # still running: never below a tenth
    # Its own progress counts only once it has run past its estimate (200 s here).
    assert refined.left(4.0, 2, 10.0, current_fraction=0.9) == pytest.approx(190.0)
    assert refined.left(4.0, 2, 300.0, current_fraction=0.75) == pytest.approx(100.0)
    assert refined.left(200.0, 3, None) == 0.0


def test_the_catalogue_is_scaled_by_this_machines_speed_within_bounds() -> None:
    data = {"speed_probe_s": 0.001, "costs": {"k": AEAD.to_json()}}
    assert load_catalogue(data, 0.002).costs["k"].messages["encrypt"].fixed == pytest.approx(2e-6)
    assert load_catalogue(data, 1.0).scale == 4.0  # a stall, not a machine 1000x slower


def test_every_presets_scheme_is_in_the_catalogue() -> None:
    from app.core.profile.files import load_profile, preset_names
    from app.core.run.op_costs import catalogue

    known = catalogue().costs
    for name in preset_names():
        for job in resolve_jobs(load_profile(name), has_remote=True):
            assert cost_key(job.scheme, job.backend, job.params) in known, (name, job.label)


def test_a_probe_times_each_operation_once_or_a_few_times() -> None:
    costs = probe_costs("aes-gcm", "cryptography", {"key_bits": 128})
    assert costs.source == "probed here" and set(costs.messages) == {"encrypt", "decrypt"}
    assert 0 < costs.messages["encrypt"].at(1 << 20) < 0.1
    kem = probe_costs("rsa-kem", "cryptography", {"bits": 2048})
    assert kem.keygen > 0 and kem.extras


def test_the_other_exchange_pattern_moves_a_key_establishment_into_or_out_of_each_message() -> None:
    """The catalogue times a key agreement's messages as AEAD alone (session) and a hybrid's
    with their encapsulation (per-message): a job of the other pattern moves one key
    establishment at each end into, or out of, its seal and open."""
    from app.core.vocab import Exchange

    agreement = OpCosts(Family.KEY_AGREEMENT, 50e-6, 60e-6, {"encrypt": Line(1e-6), "decrypt": Line(1.2e-6)})
    assert est.in_pattern(agreement, Exchange.SESSION) is agreement
    per_message = est.in_pattern(agreement, Exchange.PER_MESSAGE)
    assert per_message.messages["encrypt"].at(0) == pytest.approx(61e-6)
    assert per_message.messages["decrypt"].at(0) == pytest.approx(61.2e-6)
    hybrid = OpCosts(
        Family.HYBRID,
        40e-6,
        0.0,
        {"encrypt": Line(61e-6), "decrypt": Line(62e-6)},
        {"encapsulate": 60e-6, "decapsulate": 70e-6},
    )
    assert est.in_pattern(hybrid, Exchange.PER_MESSAGE) is hybrid
    session = est.in_pattern(hybrid, Exchange.SESSION)
    assert session.messages["encrypt"].at(0) == pytest.approx(1e-6)
    assert session.messages["decrypt"].at(0) == pytest.approx(0.62e-6)  # never below a hundredth of the whole
    assert est.in_pattern(OpCosts(Family.AEAD, 1e-6, 0.0, {"encrypt": Line(1e-6)}), None).family is Family.AEAD
