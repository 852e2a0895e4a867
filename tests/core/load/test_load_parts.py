"""Load mode's parts without processes: profile fields, the record framing, the sweep's rules."""

from __future__ import annotations

import json

import pytest

from app.core.load import sweep, verdict
from app.core.load.framing import (
    RECORD,
    REPLY,
    Kind,
    LoadProtocolError,
    RecordBuffer,
    ReplyBuffer,
    record,
    split_request,
)
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.records.job_conditions import Load, LoadStep, StepLimit
from app.core.settings.profile import ProfileError
from app.core.vocab import Mode, PlacementPolicy


def _resolve(**job: object) -> list:
    return resolve_jobs(parse_profile({"name": "t", "jobs": [{"scheme": "x25519", **job}]}))


def test_a_load_job_resolves_with_its_defaults() -> None:
    (job,) = _resolve(mode="load")
    assert job.mode == Mode.LOAD and job.load is not None
    assert job.load.sweep and job.load.clients == 4 and job.load.server_workers == 1
    assert job.message_sizes == [32]  # one short sealed message per request
    assert job.placement == PlacementPolicy.SPLIT  # the clients' work is not counted against the server


def test_a_load_job_keeps_what_it_sets() -> None:
    (job,) = _resolve(mode="load", clients=8, rates=[100, 400.5], duration_s=2, warmup_s=0, placement="free")
    assert job.load is not None
    assert (job.load.clients, job.load.rates, job.load.duration_s, job.load.warmup_s) == (8, (100.0, 400.5), 2.0, 0.0)
    assert job.placement == PlacementPolicy.FREE


@pytest.mark.parametrize(
    ("job", "field", "words"),
    [
        ({"clients": 4}, "jobs[0].clients", 'applies to "mode": "load" only'),
        ({"mode": "loopback", "rate_per_s": 10}, "jobs[0].rate_per_s", 'applies to "mode": "load" only'),
        ({"mode": "load", "rates": [1], "rate_per_s": 2}, "jobs[0].rates", "not both"),
        ({"mode": "load", "rate_per_s": "fast"}, "jobs[0].rate_per_s", 'or "sweep"'),
        ({"mode": "load", "rate_per_s": True}, "jobs[0].rate_per_s", 'or "sweep"'),
        ({"mode": "load", "rate_per_s": 0}, "jobs[0].rate_per_s", "more than 0"),
        ({"mode": "load", "rates": [10, -1]}, "jobs[0].rates[1]", "more than 0"),
        ({"mode": "load", "clients": 0}, "jobs[0].clients", "greater than or equal to 1"),
        ({"mode": "load", "duration_s": 0}, "jobs[0].duration_s", "greater than 0"),
        ({"mode": "load", "link": "no-such-link"}, "jobs[0].link", "cryptobench links"),
    ],
)
def test_bad_load_fields_are_refused_by_name(job: dict[str, object], field: str, words: str) -> None:
    with pytest.raises(ProfileError) as caught:
        _resolve(**job)
    assert caught.value.field == field
    assert words in str(caught.value)


def test_two_load_jobs_that_differ_only_in_their_rates_are_not_a_repeat() -> None:
    jobs = resolve_jobs(
        parse_profile(
            {
                "name": "t",
                "jobs": [
                    {"scheme": "x25519", "mode": "load", "rates": [100]},
                    {"scheme": "x25519", "mode": "load", "rates": [200]},
                ],
            }
        )
    )
    assert len(jobs) == 2
    with pytest.raises(ProfileError, match="repeats"):
        resolve_jobs(
            parse_profile(
                {
                    "name": "t",
                    "jobs": [
                        {"scheme": "x25519", "mode": "load", "rates": [100]},
                        {"scheme": "x25519", "mode": "load", "rates": [100]},
                    ],
                }
            )
        )


# --- framing -------------------------------------------------------------------------


def test_records_are_cut_whole_however_the_bytes_arrive() -> None:
    stream = record(Kind.REQUEST, 7, b"abc") + record(Kind.MARK, 8) + record(Kind.REQUEST, 9, b"x" * 100)
    for step in (1, 5, 13, len(stream)):
        buffer = RecordBuffer(limit=1000)
        got = []
        for at in range(0, len(stream), step):
            got += [(kind, ident, bytes(body)) for kind, ident, body in buffer.feed(stream[at : at + step])]
        assert got == [(Kind.REQUEST, 7, b"abc"), (Kind.MARK, 8, b""), (Kind.REQUEST, 9, b"x" * 100)]
        assert not buffer.data


def test_a_record_claiming_more_than_the_limit_is_refused_before_it_is_buffered() -> None:
    buffer = RecordBuffer(limit=64)
    with pytest.raises(LoadProtocolError, match="over this job's 64-byte limit"):
        buffer.feed(RECORD.pack(Kind.REQUEST, 2**32 - 1, 1))


def test_an_unknown_record_kind_is_refused() -> None:
    with pytest.raises(LoadProtocolError, match="unknown record kind 99"):
        RecordBuffer(limit=64).feed(RECORD.pack(99, 0, 1))


def test_a_request_whose_handshake_length_lies_is_refused() -> None:
    with pytest.raises(LoadProtocolError, match="claims a 1000-byte handshake"):
        split_request(memoryview((1000).to_bytes(4, "big") + b"short"))
    with pytest.raises(LoadProtocolError, match="no handshake length"):
        split_request(memoryview(b"ab"))
    handshake, payload = split_request(memoryview((2).to_bytes(4, "big") + b"hsPAYLOAD"))
    assert (handshake, bytes(payload)) == (b"hs", b"PAYLOAD")


def test_replies_are_cut_at_their_fixed_size() -> None:
    data = REPLY.pack(Kind.REQUEST, 1, 500, 0) + REPLY.pack(Kind.MARK, 42, 7, 0)
    buffer = ReplyBuffer()
    assert buffer.feed(data[:10]) == []
    assert buffer.feed(data[10:]) == [(Kind.REQUEST, 1, 500, 0), (Kind.MARK, 42, 7, 0)]


# --- the sweep -------------------------------------------------------------------------


def _step(offered: float, achieved: float, p99: float = 0.001, errors: int = 0, generator: bool = False) -> LoadStep:
    return LoadStep(
        offered_per_s=offered,
        achieved_per_s=achieved,
        errors=errors,
        latency_s={"p50": p99 / 2, "p99": p99},
        generator_saturated=generator,
    )


def test_the_sweep_offers_fractions_of_the_estimate_lowest_first() -> None:
    rates = sweep.sweep_rates(1000.0)
    assert rates == sorted(rates) and rates[0] == 100.0 and rates[-1] > 1000.0
    assert sweep.sweep_rates(2.0)[0] == 1.0  # never below one request a second


def test_the_knee_is_the_servers_limit_and_the_sustained_rate_the_last_kept_up_with() -> None:
    steps = [_step(100, 100), _step(500, 499, p99=0.002), _step(900, 700, p99=0.2), _step(1200, 710, p99=0.9)]
    knee, sustained, p99, saturated = verdict.summarise(steps)
    assert (knee, sustained, p99, saturated) == (710, 499, 0.002, True)
    assert verdict.should_stop(steps) and not verdict.should_stop(steps[:3])


def test_steps_the_generator_saturated_say_nothing_about_the_server() -> None:
    steps = [_step(100, 100), _step(5000, 3000, generator=True)]
    knee, sustained, _, saturated = verdict.summarise(steps)
    assert (knee, sustained, saturated) == (100, 100, False)  # a lower bound, and said to be one
    assert not verdict.should_stop(steps)  # one late step may be a moment's trouble
    assert verdict.should_stop([*steps, _step(6000, 3100, generator=True)])


def test_errors_mean_the_server_did_not_keep_up() -> None:
    (call,) = verdict.classify([_step(100, 100, errors=1)])
    assert call.limit == StepLimit.SERVER and call.reason == "1 request refused or unanswered"


def test_the_generator_is_marked_when_it_sends_late_or_short() -> None:
    assert sweep.generator_saturation(0.0001, 100, 100) is None
    assert "ms late" in (sweep.generator_saturation(0.005, 100, 100) or "")
    assert "sent 50 of the 100" in (sweep.generator_saturation(0.0001, 50, 100) or "")


def test_a_load_record_reads_back_to_the_same_json() -> None:
    load = Load(
        clients=4,
        server_workers=2,
        steps=(_step(100.0, 99.5),),
        request="signed message",
        duration_s=1.0,
        pool=64,
        knee_per_s=99.5,
        saturated=False,
    )
    text = json.dumps(load.to_dict(), sort_keys=True)
    assert json.dumps(Load.from_dict(json.loads(text)).to_dict(), sort_keys=True) == text


def test_split_gives_several_server_processes_a_cpu_each_apart_from_the_generator() -> None:
    from app.core.machine.placement import Placer
    from app.core.vocab import Role

    roles = (Role.RECEIVER, Role.SENDER)
    placer = Placer(
        PlacementPolicy.SPLIT, roles, cpus=(0, 1, 2, 3), core={0: 0, 1: 1, 2: 2, 3: 3}, receiver_processes=2
    )
    sender = placer.targets[Role.SENDER]
    assert len(placer.targets[Role.RECEIVER]) == 2 and not sender & placer.targets[Role.RECEIVER]
    few = Placer(PlacementPolicy.SPLIT, roles, cpus=(0, 1), core={0: 0, 1: 1}, receiver_processes=2)
    assert few.targets[Role.RECEIVER] == frozenset({1}) and "they take turns" in (few.note or "")
