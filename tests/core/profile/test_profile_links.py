"""A job's link in a profile: the setting, the sweep, and every refusal in one line naming
the field and the value (app.core.profile.files with app.core.settings.links)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.link import probe as probe_mod
from app.core.link.timeouts import loss_seconds
from app.core.profile import resolve as resolve_mod
from app.core.profile.edits import REDUCED_LINK_SAMPLES, REDUCED_LINKS, reduced, with_link, with_mode
from app.core.profile.files import load_profile, parse_profile, read_profile_file, save_profile
from app.core.profile.resolve import resolve_jobs
from app.core.records.job_conditions import Link
from app.core.run.topologies import tls_server_plan
from app.core.settings.links import link_presets, resolve_link, round_trip_ms
from app.core.settings.profile import FORMAT_VERSION, ProfileError
from app.core.vocab import LinkEmulation, Mode


@pytest.fixture(autouse=True)
def packet_path_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The packet path is available, whoever runs the tests (a test that needs it refused
    says so): resolution must not depend on the machine's user."""
    monkeypatch.setattr(resolve_mod, "packet_path_refusal", lambda: None)
    monkeypatch.setattr(probe_mod, "packet_path_refusal", lambda: None)


def _job(**fields: Any) -> dict[str, Any]:
    return {"scheme": "x25519", "backend": "cryptography", "mode": "loopback", "message_sizes": [1024], **fields}


def _profile(*jobs: dict[str, Any]) -> dict[str, Any]:
    return {"format_version": 1, "name": "links", "jobs": list(jobs)}


def _refused(data: dict[str, Any], folder: Path, has_remote: bool = True) -> ProfileError:
    """Refused as `cryptobench run` refuses it: from a file, one line naming file and field."""
    path = folder / "p.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        resolve_jobs(read_profile_file(path), str(path), has_remote=has_remote)
    error = info.value
    assert "\n" not in str(error)
    assert str(error).startswith(f"{path}: {error.field}: ")
    return error


# --- accepted ---------------------------------------------------------------------------------


def test_a_preset_link_resolves_to_its_numbers_and_names_the_job() -> None:
    [job] = resolve_jobs(parse_profile(_profile(_job(link="lte"))))
    assert job.link == Link(
        name="lte",
        delay_ms=35.0,
        jitter_ms=0.0,
        rate_kbit_up=12000.0,
        rate_kbit_down=12000.0,
        loss_percent=0.0,
        emulation=LinkEmulation.PACKET,
    )
    assert job.label == "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography] (session) over LTE"


def test_a_custom_link_as_the_issue_writes_it() -> None:
    [job] = resolve_jobs(parse_profile(_profile(_job(link={"delay_ms": 20, "rate_kbit": 8000}, label="mine"))))
    assert job.link is not None and job.link.name is None
    assert (job.link.delay_ms, job.link.jitter_ms, job.link.rate_kbit_up, job.link.rate_kbit_down) == (
        20,
        0,
        8000,
        8000,
    )
    assert job.label == "mine (session) over 20 ms, 8000 kbit/s"


@pytest.mark.parametrize(
    ("rate", "up", "down"),
    [
        ({"up": 768, "down": 1600}, 768, 1600),
        ({"up": 50}, 50, None),  # a direction left out is unlimited
        ({"down": 50}, None, 50),
        (None, None, None),
    ],
)
def test_rates_per_direction(rate: Any, up: float | None, down: float | None) -> None:
    link = {"delay_ms": 1} if rate is None else {"delay_ms": 1, "rate_kbit": rate}
    [job] = resolve_jobs(parse_profile(_profile(_job(link=link))))
    assert job.link is not None and (job.link.rate_kbit_up, job.link.rate_kbit_down) == (up, down)


def test_a_sweep_is_one_job_per_link_in_order() -> None:
    links = ["lan", {"delay_ms": 20, "rate_kbit": 8000}, "satellite"]
    jobs = resolve_jobs(parse_profile(_profile(_job(links=links, message_sizes=[64, 1024]), _job(scheme="ed25519"))))
    assert [job.index for job in jobs] == [0, 0, 0, 1]  # the profile job each came from
    assert [job.link.name if job.link else None for job in jobs] == ["lan", None, "satellite", None]
    assert [job.label.rsplit(" over ", 1)[-1] for job in jobs[:3]] == ["LAN", "20 ms, 8000 kbit/s", "satellite (GEO)"]
    assert all(job.message_sizes == [64, 1024] for job in jobs[:3])
    assert jobs[3].link is None and " over " not in jobs[3].label


def test_the_same_job_over_different_links_is_no_repeat_but_the_same_link_is() -> None:
    assert len(resolve_jobs(parse_profile(_profile(_job(link="lte"), _job(link="3g"), _job())))) == 3
    same_numbers = {"delay_ms": 35, "rate_kbit": 12000}  # LTE's numbers under no name: the same measurement
    with pytest.raises(
        ProfileError,
        match=r"^jobs\[1\]\.link: repeats jobs\[0\]\.link: same scheme, backend, "
        r"parameters, mode, exchange, transport, link and message size 1.0 KiB$",
    ):
        resolve_jobs(parse_profile(_profile(_job(link="lte"), _job(link=same_numbers))))
    with pytest.raises(ProfileError, match=r"^jobs\[0\]\.links\[2\]: repeats jobs\[0\]\.links\[0\]"):
        resolve_jobs(parse_profile(_profile(_job(links=["lan", "wifi", "lan"]))))


def test_a_profile_with_links_saves_and_loads_back_equal(tmp_path: Path) -> None:
    profile = parse_profile(
        _profile(
            _job(links=["lan", {"delay_ms": 2, "jitter_ms": 1, "rate_kbit": {"up": 5}}]),
            _job(scheme="ed25519", link="3g"),
        )
    )
    assert profile.format_version == FORMAT_VERSION  # read as format 1, upgraded
    assert parse_profile(profile.to_dict()) == profile
    save_profile(profile, tmp_path / "links.json")
    loaded = load_profile(tmp_path / "links.json")
    assert loaded == profile and resolve_jobs(loaded) == resolve_jobs(profile)


# --- refused, one line naming the field ----------------------------------------------------------


@pytest.mark.parametrize(
    ("link", "field", "fragment"),
    [
        ({"delay_ms": -1}, "jobs[0].link.delay_ms", "greater than or equal to 0 (got -1)"),
        ({"delay_ms": 10_001}, "jobs[0].link.delay_ms", "less than or equal to 10000 (got 10001)"),
        ({"delay_ms": "20"}, "jobs[0].link.delay_ms", 'valid number (got "20")'),
        ({"delay_ms": True}, "jobs[0].link.delay_ms", "valid number (got true)"),
        (
            {"delay_ms": 20, "rate_kbit": 0},
            "jobs[0].link.rate_kbit",
            "must be > 0 kbit/s (omit it for an unlimited rate)",
        ),
        ({"delay_ms": 20, "rate_kbit": -5}, "jobs[0].link.rate_kbit", "must be > 0 kbit/s"),
        (
            {"delay_ms": 20, "rate_kbit": {"up": 8000, "down": 0}},
            "jobs[0].link.rate_kbit.down",
            "must be > 0 kbit/s (omit it for an unlimited rate) (got 0)",
        ),
        ({"delay_ms": 20, "rate_kbit": 1e12}, "jobs[0].link.rate_kbit", "at most 100000000 kbit/s (100 Gbit/s)"),
        (
            {"delay_ms": 20, "rate_kbit": "fast"},
            "jobs[0].link.rate_kbit",
            'a number (kbit/s, both directions) or {"up"',
        ),
        ({"delay_ms": 20, "rate_kbit": {"sideways": 1}}, "jobs[0].link.rate_kbit.sideways", "unknown field (got 1)"),
        (
            {"delay_ms": 20, "jitter_ms": 30},
            "jobs[0].link.jitter_ms",
            "must not exceed delay_ms (20 ms): a jitter larger than the delay would need negative delays (got 30)",
        ),
        ({"delay_ms": 20, "loss_percent": 101}, "jobs[0].link.loss_percent", "less than or equal to 100 (got 101)"),
        ({"delay_ms": 20, "colour": "red"}, "jobs[0].link.colour", 'unknown field (got "red")'),
        ({"rate_kbit": 8000}, "jobs[0].link.delay_ms", "required field is missing"),
        ("5g", "jobs[0].link", 'unknown link preset (got "5g"); presets: lan, wifi, lte'),
        (5, "jobs[0].link", "Input should be a link preset's name (see `cryptobench links`) or an object"),
        ([20], "jobs[0].link", "(got [20])"),
    ],
)
def test_bad_link_settings_are_refused_naming_field_and_value(
    tmp_path: Path, link: Any, field: str, fragment: str
) -> None:
    error = _refused(_profile(_job(link=link)), tmp_path)
    assert error.field == field
    assert fragment in str(error)


def test_a_bad_link_inside_a_sweep_is_named_by_its_index(tmp_path: Path) -> None:
    error = _refused(_profile(_job(links=["lan", {"delay_ms": 1, "rate_kbit": {"up": 0}}])), tmp_path)
    assert error.field == "jobs[0].links[1].rate_kbit.up"
    error = _refused(_profile(_job(links=["lan", "wifi", "carrier-pigeon"])), tmp_path)
    assert error.field == "jobs[0].links[2]" and '"carrier-pigeon"' in str(error)
    assert _refused(_profile(_job(links=[])), tmp_path).field == "jobs[0].links"


def test_link_and_links_together_are_refused(tmp_path: Path) -> None:
    error = _refused(_profile(_job(link="lte", links=["lan"])), tmp_path)
    assert error.field == "jobs[0].links" and "not both" in str(error)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("operations", "applies to loopback jobs only: an operations job sends nothing over a network"),
        ("remote", "a remote job runs over the real network between the two machines"),
    ],
)
@pytest.mark.parametrize("setting", ["link", "links"])
def test_a_link_outside_loopback_mode_is_refused_with_why(tmp_path: Path, mode: str, reason: str, setting: str) -> None:
    value: Any = "lte" if setting == "link" else ["lte"]
    error = _refused(_profile(_job(mode=mode, **{setting: value})), tmp_path)
    assert error.field == f"jobs[0].{setting}" and reason in str(error)


def test_cryptobench_run_remote_refuses_a_profile_with_links() -> None:
    """--remote moves every job to the real network, where an emulated link means nothing."""
    with pytest.raises(ProfileError, match="real network"):
        resolve_jobs(with_mode(load_profile("pq-over-links"), Mode.REMOTE), has_remote=True)


@pytest.mark.parametrize("loss", [1, 0.001, 100])
def test_loss_on_the_stream_relay_is_refused_before_the_run_naming_the_packet_path(
    tmp_path: Path, loss: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    for refusal in (None, "needs CAP_NET_ADMIN"):  # the packet path offered here, or not
        monkeypatch.setattr(probe_mod, "packet_path_refusal", lambda refusal=refusal: refusal)
        relay = _job(link={"delay_ms": 20, "loss_percent": loss}, link_emulation="stream-relay")
        error = _refused(_profile(relay), tmp_path)
        assert error.field == "jobs[0].link.loss_percent"
        assert f"{loss:g} % loss asked for: packet loss needs the packet path" in str(error)
        assert ("needs CAP_NET_ADMIN" if refusal else '"link_emulation": "packet"') in str(error)


def test_the_packet_path_takes_loss_and_is_refused_where_it_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lossy = _job(link={"delay_ms": 20, "loss_percent": 1}, link_emulation="packet")
    monkeypatch.setattr(resolve_mod, "packet_path_refusal", lambda: None)
    [job] = resolve_jobs(parse_profile(_profile(lossy)))
    assert job.link is not None and (job.link.emulation, job.link.loss_percent) == ("packet", 1)
    monkeypatch.setattr(resolve_mod, "packet_path_refusal", lambda: "needs CAP_NET_ADMIN (run as root)")
    error = _refused(_profile(lossy), tmp_path)
    assert error.field == "jobs[0].link_emulation" and "needs CAP_NET_ADMIN (run as root)" in str(error)
    [job] = resolve_jobs(parse_profile(_profile(_job(link={"delay_ms": 20}, link_emulation="auto"))))
    assert job.link is not None and job.link.emulation == "delay-line"  # auto falls back, and says which
    assert job.label.endswith("over 20 ms, unlimited rate (stream relay)")
    default = _refused(_profile(_job(link="lte")), tmp_path)  # the default is the packet path
    assert default.field == "jobs[0].link_emulation" and '"link_emulation": "auto"' in str(default)


def test_a_loss_of_zero_is_no_loss() -> None:
    [job] = resolve_jobs(parse_profile(_profile(_job(link={"delay_ms": 20, "loss_percent": 0}))))
    assert job.link is not None and job.link.loss_percent == 0


# --- reduced and --link ---------------------------------------------------------------------------


def test_reduced_keeps_the_cheapest_links_and_their_numbers() -> None:
    profile = load_profile("pq-over-links")
    small = reduced(profile)
    for full_job, job in zip(profile.jobs, small.jobs):
        assert full_job.links is not None and job.links is not None and len(job.links) == REDUCED_LINKS
        assert job.samples <= REDUCED_LINK_SAMPLES
        kept = [resolve_link(spec) for spec in job.links]
        dropped = [resolve_link(spec) for spec in full_job.links if spec not in job.links]
        assert max(map(round_trip_ms, kept)) <= min(map(round_trip_ms, dropped))
        assert [spec for spec in full_job.links if spec in job.links] == job.links  # order kept
    full = {(j.scheme, j.link.name if j.link else None): j.link for j in resolve_jobs(profile)}
    for job in resolve_jobs(small):  # never a link's numbers changed
        assert job.link == full[(job.scheme, job.link.name if job.link else None)]


def test_reduced_keeps_a_sweeps_unknown_preset_so_it_is_still_refused() -> None:
    profile = parse_profile(_profile(_job(links=["satellite", "3g", "lan", "no-such-link"])))
    assert reduced(profile).jobs[0].links == ["lan", "no-such-link"]
    with pytest.raises(ProfileError, match="no-such-link"):
        resolve_jobs(reduced(profile))


def test_reduced_single_link_jobs_keep_their_link_with_few_samples() -> None:
    small = reduced(parse_profile(_profile(_job(link="satellite", samples=50))))
    assert small.jobs[0].link == "satellite" and small.jobs[0].samples == REDUCED_LINK_SAMPLES


def test_with_link_puts_every_loopback_job_on_the_link() -> None:
    profile = parse_profile(_profile(_job(links=["lan", "wifi"]), _job(scheme="ed25519", mode="operations")))
    linked = with_link(profile, '{"delay_ms": 20, "rate_kbit": 8000}')
    assert [job.links for job in linked.jobs] == [None, None]
    assert linked.jobs[1].link is None  # operations jobs stay as they are
    [first, second] = resolve_jobs(linked)
    assert first.link is not None and first.link.delay_ms == 20 and second.link is None
    assert resolve_jobs(with_link(profile, "satellite"))[0].label.endswith(" over satellite (GEO)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5g", '--link: unknown link preset (got "5g")'),
        ('{"delay_ms": -3}', "--link.delay_ms: Input should be greater than or equal to 0 (got -3)"),
        ('{"delay_ms": 3, "rate_kbit": {"up": 0}}', "--link.rate_kbit.up: must be > 0 kbit/s"),
        ("{not json", "--link: not a link preset's name or a JSON object"),
    ],
)
def test_with_link_refuses_bad_links_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ProfileError) as info:
        with_link(parse_profile(_profile(_job())), text)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_with_link_needs_a_loopback_job() -> None:
    with pytest.raises(ProfileError, match=r"^--link: the profile has no loopback job"):
        with_link(parse_profile(_profile(_job(mode="operations"))), "lte")


def test_every_preset_resolves_in_a_profile() -> None:
    jobs = resolve_jobs(parse_profile(_profile(_job(links=list(link_presets())))))
    assert [job.link.name for job in jobs if job.link] == list(link_presets())


# --- generated ------------------------------------------------------------------------------------

NUMBERS = st.integers(-10, 200_000_000) | st.floats(allow_nan=True, allow_infinity=True)
VALUES = NUMBERS | st.none() | st.booleans() | st.text(max_size=8)
RATES = VALUES | st.fixed_dictionaries({}, optional={"up": VALUES, "down": VALUES, "x": VALUES})
BURSTS = VALUES | st.fixed_dictionaries(
    {},
    optional={"p_percent": VALUES, "r_percent": VALUES, "bad_loss_percent": VALUES, "good_loss_percent": VALUES},
)
LINK_OBJECTS = st.fixed_dictionaries(
    {},
    optional={
        "delay_ms": VALUES,
        "jitter_ms": VALUES,
        "rate_kbit": RATES,
        "loss_percent": VALUES,
        "burst_loss": BURSTS,
        "queue_packets": VALUES,
        "queue_bytes": VALUES,
        "extra": VALUES,
    },
)
LINK_VALUES = LINK_OBJECTS | st.sampled_from([*link_presets(), "5g", ""]) | VALUES | st.lists(VALUES, max_size=2)


@settings(max_examples=150, deadline=None)
@given(link=LINK_VALUES, sweep=st.booleans())
def test_any_link_value_resolves_or_is_refused_in_one_line_at_its_field(link: Any, sweep: bool) -> None:
    data = _profile(_job(**({"links": [link]} if sweep else {"link": link})))
    where = "jobs[0].links[0]" if sweep else "jobs[0].link"
    try:
        text = json.dumps(data)  # as a file: NaN and Infinity as JSON's non-standard literals
        [job] = resolve_jobs(parse_profile(json.loads(text)))
    except ProfileError as error:
        assert "\n" not in str(error)
        assert error.field is not None and error.field.startswith(where)
        return
    if link is None and not sweep:  # "link": null is no link
        assert job.link is None
        return
    assert job.link is not None and 0 <= job.link.loss_percent <= 100
    assert 0 <= job.link.jitter_ms <= job.link.delay_ms <= 10_000
    profile = parse_profile(data)
    assert parse_profile(json.loads(json.dumps(profile.to_dict()))) == profile


def test_an_emulation_without_a_link_is_refused_naming_the_field(tmp_path: Path) -> None:
    error = _refused(_profile(_job(link_emulation="packet")), tmp_path)
    assert error.field == "jobs[0].link_emulation" and "the job has no link" in str(error)


def test_the_packet_path_s_tcp_settings_are_refused_where_there_is_no_packet_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    relay = _refused(
        _profile(_job(link="lte", link_emulation="stream-relay", tcp_congestion_control="cubic")), tmp_path
    )
    assert relay.field == "jobs[0].tcp_congestion_control" and "stream relay" in str(relay)
    nothing = _refused(_profile(_job(tcp_slow_start_after_idle=False)), tmp_path)
    assert nothing.field == "jobs[0].tcp_slow_start_after_idle" and "has no link" in str(nothing)
    monkeypatch.setattr(resolve_mod, "packet_path_refusal", lambda: None)
    offered = tmp_path / "available"
    offered.write_text("reno cubic\n")
    monkeypatch.setattr(resolve_mod, "AVAILABLE_CONGESTION_CONTROL", offered)
    packet = {"link": "lte", "link_emulation": "packet"}
    missing = _refused(_profile(_job(**packet, tcp_congestion_control="bbr")), tmp_path)
    assert missing.field == "jobs[0].tcp_congestion_control" and "reno cubic" in str(missing)
    [job] = resolve_jobs(parse_profile(_profile(_job(**packet, tcp_congestion_control="cubic"))))
    assert job.link is not None and job.link.congestion_control == "cubic"
    assert job.label.endswith("over LTE (TCP cubic)")


def test_fresh_connections_are_a_packet_path_setting_part_of_what_is_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    relay = _refused(_profile(_job(link="lte", link_emulation="stream-relay", tcp_connection="fresh")), tmp_path)
    assert relay.field == "jobs[0].tcp_connection" and "stream relay" in str(relay)
    typo = _refused(_profile(_job(link="lte", tcp_connection="cold")), tmp_path)
    assert typo.field == "jobs[0].tcp_connection" and "'warm' or 'fresh'" in str(typo)
    # "auto" on a machine without the packet path: the reason, not a hint to set "packet"
    monkeypatch.setattr(resolve_mod, "packet_path_refusal", lambda: "/dev/net/tun is missing")
    auto = _refused(_profile(_job(link="lte", link_emulation="auto", tcp_connection="fresh")), tmp_path)
    assert "/dev/net/tun is missing" in str(auto)
    monkeypatch.setattr(resolve_mod, "packet_path_refusal", lambda: None)
    packet = {"link": "lte", "link_emulation": "packet"}
    fresh, warm = resolve_jobs(
        parse_profile(_profile(_job(**packet, tcp_connection="fresh"), _job(**packet, tcp_connection="warm")))
    )
    assert fresh.link is not None and fresh.link.connection == "fresh"
    assert fresh.label.endswith("over LTE (fresh connections)")
    assert warm.link is not None and warm.link.connection == "warm" and warm.label.endswith("over LTE")
    # Two jobs that differ only in how the path's TCP runs are two jobs, not a repeat; two
    # that differ in nothing are.
    resolve_jobs(parse_profile(_profile(_job(**packet), _job(**packet, tcp_congestion_control="reno"))))
    again = _refused(_profile(_job(**packet), _job(**packet, tcp_connection="warm")), tmp_path)
    assert again.field == "jobs[1].link" and "repeats jobs[0].link" in str(again)


def test_bursty_loss_and_the_queue_are_packet_path_settings_recorded_on_the_link(tmp_path: Path) -> None:
    bursty = {"delay_ms": 20, "burst_loss": {"p_percent": 1, "r_percent": 25}, "queue_packets": 64}
    [job] = resolve_jobs(parse_profile(_profile(_job(link=bursty))))
    assert job.link is not None and job.link.burst_loss is not None
    assert job.link.loss_percent == pytest.approx(100 / 26)  # the long-run mean: p / (p + r)
    assert (job.link.queue_packets, job.link.queue_bytes) == (64, None)
    assert job.label.endswith("3.85 % bursty loss (bad spells of 4 packets), queue 64 packets")
    both = _refused(_profile(_job(link={**bursty, "loss_percent": 1})), tmp_path)
    assert both.field == "jobs[0].link.burst_loss" and "not both" in str(both)
    relay = _refused(_profile(_job(link=bursty, link_emulation="stream-relay")), tmp_path)
    assert relay.field == "jobs[0].link.burst_loss" and "packet loss needs the packet path" in str(relay)
    queue = {"delay_ms": 20, "queue_bytes": 30_000}
    relay = _refused(_profile(_job(link=queue, link_emulation="stream-relay")), tmp_path)
    assert relay.field == "jobs[0].link.queue_bytes" and "byte stream" in str(relay)
    small = _refused(_profile(_job(link={"delay_ms": 20, "queue_bytes": 1000})), tmp_path)
    assert small.field == "jobs[0].link.queue_bytes" and "greater than or equal to 1500" in str(small)
    endless = _refused(_profile(_job(link={"delay_ms": 20, "burst_loss": {"p_percent": 1, "r_percent": 0}})), tmp_path)
    assert endless.field == "jobs[0].link.burst_loss.r_percent"


def test_a_tls13_server_over_a_lossy_link_waits_out_tcp_s_retransmissions() -> None:
    """The TLS server's wait for each connection's ClientHello and every wait within it cover
    TCP's retransmission timers on a lossy link (a 10 s wait failed handshakes at 20 % loss)."""

    def plan(loss: float) -> tuple[float, float]:
        tls = {"scheme": "tls13", "params": {"group": "x25519"}, "mode": "loopback", "message_sizes": [32]}
        link = {"delay_ms": 2.8, "loss_percent": loss}
        (job,) = resolve_jobs(parse_profile(_profile({**tls, "link": link, "link_emulation": "packet"})), "t")
        server = tls_server_plan(job, b"t")
        return server.hello_timeout, server.timeout

    (hello, wait), (lossy_hello, lossy_wait) = plan(0.0), plan(20.0)
    retries = loss_seconds(Link(None, 2.8, 0.0, None, None, 20.0, "packet"))
    assert retries > 0
    assert lossy_hello == pytest.approx(hello + 2 * retries) and lossy_wait == pytest.approx(wait + retries)
