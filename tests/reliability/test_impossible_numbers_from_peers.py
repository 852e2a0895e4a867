"""An authenticated peer's numbers must fit: times within the round trip that contains them.

A receiver time may not pass its round trip (on one machine by a nanosecond, across two
clocks only by what they can disagree), a network time is never negative nor far under the
floor, a peer's non-finite JSON number is refused naming its field, and `wall_seconds` may
not pass the sender's interval.
"""

from __future__ import annotations

import pytest

# --- an authenticated peer's times: they fit the round trip that contains them -------------------------


def test_on_one_machine_a_receiver_time_may_not_pass_its_round_trip_by_a_nanosecond() -> None:
    from app.core.session.protocol import PeerLied, check_within

    assert check_within("open time", 1_000_000, 1_000_000, shared_clock=True) == 1_000_000
    with pytest.raises(
        PeerLied, match=r"open time = 1000001 ns, longer than the 1000000 ns round trip that contains it$"
    ):
        check_within("open time", 1_000_001, 1_000_000, shared_clock=True)
    # Before: anything up to 5 ms (+1 %) beyond was believed.
    with pytest.raises(PeerLied):
        check_within("open time", 1_000_000 + 4_000_000, 1_000_000, shared_clock=True)


def test_a_remote_receiver_time_may_pass_it_only_by_what_two_clocks_disagree() -> None:
    from app.core.session.protocol import PeerLied, check_within, clock_slack_ns

    slack = clock_slack_ns(1_000_000, shared_clock=False)
    assert slack == 1_000 + 2_000  # 1000 ppm of 1 ms, and one 1 µs tick of each clock
    assert check_within("open time", 1_000_000 + slack, 1_000_000, shared_clock=False)
    with pytest.raises(PeerLied, match=r"by more than two clocks can disagree \(3000 ns\)"):
        check_within("open time", 1_000_000 + slack + 1, 1_000_000, shared_clock=False)


@pytest.mark.parametrize(
    ("receiver", "round_trip", "floor", "named"),
    [
        (1_000_001, 1_000_000, None, "the network time would be -1 ns"),
        (10_000, 60_000, 600_000, "network time of 50000 ns (round trip 60000 ns, receiver 10000 ns) is under 10%"),
    ],
    ids=["negative-network", "far-under-the-floor"],
)
def test_a_network_time_is_never_negative_nor_far_under_the_floor(
    receiver: int, round_trip: int, floor: int | None, named: str
) -> None:
    from app.core.session.protocol import PeerLied, check_network

    with pytest.raises(PeerLied, match=named.replace("(", r"\(").replace(")", r"\)")):
        check_network(receiver, round_trip, floor)


def test_a_network_time_a_hair_under_the_floor_is_kept() -> None:
    from app.core.session.protocol import check_network

    assert check_network(10_000, 60_000, 60_000) == 50_000  # 0.83 of the floor: noise, not a lie
    assert check_network(10_000, 60_000, 500_000) == 50_000  # exactly a tenth
    assert check_network(0, 0, None) == 0


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"rss_bytes": Infinity}', "X rss_bytes = Infinity is not a finite JSON number"),
        ('{"tcp_info": {"rtt_var_s": -Infinity}}', "X tcp_info.rtt_var_s = -Infinity is not"),
        ('{"a": [1, 2, NaN]}', "X a[2] = NaN is not"),
        ('{"cpu_seconds": 1e400}', "X cpu_seconds = 1e400 is not"),
        ("NaN", "X the document = NaN is not"),
    ],
)
def test_a_non_finite_number_from_a_peer_names_its_field(text: str, named: str) -> None:
    from app.core.session.protocol import PeerLied, decode_json

    with pytest.raises(PeerLied) as refused:
        decode_json(text.encode(), "X")
    assert str(refused.value).startswith(named), str(refused.value)


def test_a_non_finite_number_in_a_job_description_names_its_field() -> None:
    from app.core.session.protocol import JobRejected, parse_job

    body = b'{"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [64, Infinity]}'
    with pytest.raises(
        JobRejected, match=r"^job description message_sizes\[1\] = Infinity is not a finite JSON number$"
    ):
        parse_job(body)


def test_wall_seconds_on_one_clock_may_not_pass_the_senders_interval() -> None:
    from app.core.session.protocol import PeerLied, parse_resources

    report = b'{"cpu_seconds": 0.01, "wall_seconds": 0.0105, "cpu_percent_mean": 95.0, "rss_bytes": 1000}'
    assert parse_resources(report, 0.0105, shared_clock=True)["wall_seconds"] == 0.0105
    with pytest.raises(PeerLied, match=r"wall_seconds = 0\.0105 is longer than the 0\.010000 s"):
        parse_resources(report, 0.01, shared_clock=True)  # 0.5 ms beyond: the old slack took 5 ms
    assert parse_resources(report, 0.01049, shared_clock=False)["wall_seconds"] == 0.0105  # within 1000 ppm + ticks
