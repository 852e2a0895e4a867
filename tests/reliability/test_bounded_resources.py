"""Resources stay bounded whatever the profile says.

- A step the generator could not send in time reports its *missed* requests on every
  surface that shows a step's errors (results record and its check, the terminal, the
  report, the window's tooltips and Load tab read-out), and counts as the server's only
  where the server is shown to have fallen behind (its back-pressure filled the backlog).
- No planned rate passes the cap a profile's own rates have (1,000,000/s), whatever the
  sweep's estimate (64 workers at a microsecond a request).
- A job whose messages would take longer on its link than a run may wait is refused
  before it runs, naming the size, the link and the estimate: in a profile, with
  `run --link`, and in the window.
- A job whose pauses alone (`pause_ms` after every warm-up and sample round) add up to
  more than a day is refused before it runs, naming pause_ms, the count and the time: in
  a profile, with `run --samples`, and in the window.
- A load job refuses the settings it ignores (samples, warm-up, key generations, pause),
  naming the field: in a profile, with `run --samples`, and in the window.

The generator's backlog itself is bounded count-wise in tests/core/load/test_load_backlog.py.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cli.main import main
from app.core.link.wire_time import MAX_MESSAGE_WIRE_S, message_wire_s
from app.core.load import sweep, verdict
from app.core.profile.edits import reduced, with_link, with_samples
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.results import model as results
from app.core.results.model import ResultsFileError, parse_results_text
from app.core.settings.load import IGNORED_BY_LOAD, MAX_RATE_PER_S, MAX_SERVER_WORKERS
from app.core.settings.profile import ProfileError
from app.gui.results.load_cells import step_line
from app.report.content import build_report
from app.report.markdown import render_markdown
from tests.helpers.loads import load, load_job, load_run, step
from tests.helpers.terminal import printed_summary

MISSED_REASON = (
    "the generator could not send 3,700,285 of the 4,000,000 requests scheduled in the window in time "
    "(at most 65,536 requests owed at once): missed, the rate was not offered"
)


def _missed_run() -> Any:
    """One load job whose one step missed most of its schedule (as a 1M/s step does)."""
    missed = replace(
        step(1_000_000, 15_193, 4.3, 7.7, errors=157_436, saturated=True),
        missed=3_700_285,
        sent=299_715,
        saturation_reason=MISSED_REASON,
    )
    return load_run([load_job(0, "X25519 [cryptography]", load([missed]))])


# --- missed requests on every surface ------------------------------------------------------


def test_missed_requests_round_trip_through_the_results_file() -> None:
    run = _missed_run()
    back = parse_results_text(results.to_json(run), "r.json")
    (step_back,) = back.jobs[0].load.steps
    assert step_back.missed == 3_700_285 and step_back.sent == 299_715 and step_back.generator_saturated


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, 10**30])
def test_a_damaged_missed_count_is_refused_naming_the_field(bad: Any) -> None:
    data = json.loads(results.to_json(_missed_run()))
    data["jobs"][0]["load"]["steps"][0]["missed"] = bad
    with pytest.raises(ResultsFileError, match=r"jobs\[0\]\.load\.steps\[0\]\.missed"):
        parse_results_text(json.dumps(data), "r.json")


def test_a_step_that_missed_requests_but_claims_the_servers_figure_is_refused() -> None:
    """A file whose step missed requests yet is neither marked generator-saturated nor
    called the server's would put a rate that was never offered into the knee."""
    data = json.loads(results.to_json(_missed_run()))
    data["jobs"][0]["load"]["steps"][0]["generator_saturated"] = False
    with pytest.raises(ResultsFileError, match=r"steps\[0\]\.generator_saturated.*missed"):
        parse_results_text(json.dumps(data), "r.json")
    # ... unless the run called it the server's (its back-pressure filled the backlog).
    data["jobs"][0]["load"]["steps"][0]["limit"] = "server"
    assert parse_results_text(json.dumps(data), "r.json").jobs[0].load.steps[0].limit == "server"
    data["jobs"][0]["load"]["steps"][0]["limit"] = "nobody"
    with pytest.raises(ResultsFileError, match=r"steps\[0\]\.limit"):
        parse_results_text(json.dumps(data), "r.json")
    # ... unless the run called it the server's (its back-pressure filled the backlog).
    data["jobs"][0]["load"]["steps"][0]["limit"] = "server"
    assert parse_results_text(json.dumps(data), "r.json").jobs[0].load.steps[0].limit == "server"


def test_the_terminal_piped_and_on_a_terminal_shows_the_missed_count() -> None:
    piped = printed_summary(_missed_run(), terminal=False)
    line = next(line for line in piped.splitlines() if line.strip().startswith("1,000,000 |"))
    assert line.split(" | ")[2:4] == ["157,436", "3,700,285"]  # errors, missed
    assert "steps: offered/s | achieved/s | errors | missed |" in piped
    table = printed_summary(_missed_run(), terminal=True)
    assert all(len(row) <= 80 for row in table.splitlines())
    assert "missed" in table and "3,700,285" in table
    # The server answered a fifth of what the generator did send: the server's limit, not the generator's.
    assert "verdict: server overloaded at 15,193 handshakes/s" in piped
    assert "achieved 20 % of the 74,929/s the generator sent" in piped


def test_the_report_has_a_missed_column_and_says_why_the_step_is_left_out() -> None:
    text = render_markdown(build_report(_missed_run()))
    assert "Missed" in text  # the steps table's column
    assert "3,700,285" in text and "missed, the rate was not offered" in text


def test_the_windows_step_line_names_the_missed_requests() -> None:
    the_load = _missed_run().jobs[0].load
    (missed,) = the_load.steps
    (call,) = verdict.step_calls(the_load)
    line = step_line(missed, call)
    assert "3,700,285 missed" in line and "server overloaded: achieved 20 % of the 74,929/s the generator sent" in line


def test_a_step_with_misses_counts_as_server_capacity_only_where_the_server_fell_behind() -> None:
    missed = _missed_run().jobs[0].load.steps[0]
    # It answered 15,193/s of the 74,929/s sent, and left 157,436 unanswered: the server's limit.
    knee, sustained, _, overloaded = verdict.summarise([missed])
    assert (knee, sustained, overloaded) == (15_193, None, True)
    # The same misses where the server answered all it was sent, promptly: the generator's limit.
    kept_pace = replace(missed, achieved_per_s=74_900, errors=0, latency_s={"p50": 1e-3, "p99": 2e-3})
    knee, sustained, _, overloaded = verdict.summarise([kept_pace])
    assert (knee, sustained, overloaded) == (None, None, False)
    assert sweep.generator_saturation(None, 100, 100, missed=1) is not None
    assert sweep.generator_saturation(None, 100, 100, missed_warmup=1) is not None
    assert sweep.generator_saturation(0.0001, 100, 100) is None


# --- every planned rate under the cap ---------------------------------------------------------


@given(
    workers=st.integers(1, MAX_SERVER_WORKERS),
    server_s=st.floats(0, 10, allow_nan=False) | st.sampled_from([0.0, 5e-324, 1e-7, 1e-9]),
)
def test_no_sweep_plans_a_rate_above_the_cap(workers: int, server_s: float) -> None:
    capacity = workers / max(server_s, 1e-7)  # as app.core.load.job estimates it
    rates = sweep.sweep_rates(capacity)
    assert rates and all(1.0 <= rate <= MAX_RATE_PER_S for rate in rates)
    assert rates == sorted(rates) and len(set(rates)) == len(rates)  # lowest first, none offered twice


@given(capacity=st.floats(min_value=-1e300, max_value=math.inf, allow_nan=False))
def test_any_estimate_plans_rates_within_the_profiles_bounds(capacity: float) -> None:
    rates = sweep.sweep_rates(capacity)
    assert all(1.0 <= rate <= MAX_RATE_PER_S for rate in rates)


def test_an_estimate_beyond_the_cap_still_traces_the_way_up_to_it() -> None:
    rates = sweep.sweep_rates(MAX_SERVER_WORKERS / 1e-7)
    assert rates[-1] == MAX_RATE_PER_S and len(rates) > 3 and rates[0] < MAX_RATE_PER_S / 5


# --- a link that would take longer than a run may wait --------------------------------------


def _job(**fields: Any) -> dict[str, Any]:
    return {"scheme": "x25519", **fields}


SLOW = {"delay_ms": 10, "rate_kbit": 1}


@pytest.mark.parametrize("mode", ["loopback", "load"])
def test_a_10_mib_message_over_1_kbits_is_refused_naming_size_rate_and_time(mode: str) -> None:
    profile = parse_profile({"name": "t", "jobs": [_job(mode=mode, message_sizes=[10 << 20], link=SLOW)]})
    with pytest.raises(ProfileError) as caught:
        resolve_jobs(profile, "p.json")
    message = str(caught.value)
    assert caught.value.field == "jobs[0].link" and "\n" not in message
    assert "10,485,760-byte (10 MiB)" in message and "1 kbit/s" in message and " h " in message
    assert "more than the 10 min one message may take" in message


@pytest.mark.parametrize(
    ("emulation", "fits", "too_big"),
    # 1 kbit/s: 75,000 bytes take 600 s serialized, less the acknowledgement and 20 ms of
    # delay; on the packet path each 1,448-byte segment's 52 header bytes cross it too.
    [("stream-relay", 74_000, 76_000), ("packet", 71_500, 73_000)],
)
def test_a_message_just_within_the_bound_runs_and_one_beyond_it_does_not(
    emulation: str, fits: int, too_big: int
) -> None:
    link = {"delay_ms": 10, "rate_kbit": 1}
    job = _job(mode="load", link=link, link_emulation=emulation)
    resolve_jobs(parse_profile({"name": "t", "jobs": [{**job, "message_sizes": [fits]}]}))
    with pytest.raises(ProfileError, match="one message may take"):
        resolve_jobs(parse_profile({"name": "t", "jobs": [{**job, "message_sizes": [too_big]}]}))


def test_many_samples_over_a_slow_link_are_refused_from_the_jobs_total() -> None:
    profile = parse_profile(
        {"name": "t", "jobs": [_job(mode="loopback", message_sizes=[1024], samples=1_000_000, link="satellite")]}
    )
    with pytest.raises(ProfileError, match=r"exchanges of up to 1,024 bytes take at least .* days"):
        resolve_jobs(profile)


def test_run_link_applies_the_same_rule(tmp_path: Path) -> None:
    profile = parse_profile({"name": "t", "jobs": [_job(mode="loopback", message_sizes=[10 << 20])]})
    with pytest.raises(ProfileError, match="one message may take"):
        resolve_jobs(with_link(profile, json.dumps(SLOW)))
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"name": "t", "jobs": [_job(mode="loopback", message_sizes=[10 << 20])]}))
    assert main(["run", str(path), "--no-store", "--quiet", "--link", json.dumps(SLOW)]) == 2


@pytest.mark.parametrize(
    ("emulation", "expected"),
    [
        # 32 bytes up and 64 back at 1 kbit/s, and 10 ms each way.
        ("stream-relay", 0.256 + 0.512 + 0.020),
        # The same in one packet each way, with its 52 bytes of TCP/IP headers.
        ("packet", 8 * (32 + 52) / 1000 + 8 * (64 + 52) / 1000 + 0.020),
    ],
)
def test_the_estimate_is_a_lower_bound_from_rate_and_delays(emulation: str, expected: float) -> None:
    (job,) = resolve_jobs(
        parse_profile({"name": "t", "jobs": [_job(mode="load", link=SLOW, link_emulation=emulation)]})
    )
    assert job.link is not None
    assert message_wire_s(job.link, 32) == pytest.approx(expected)
    assert MAX_MESSAGE_WIRE_S == 600


# --- a job that would spend more than a day in its own pauses -------------------------------


def test_two_years_of_pauses_are_refused_naming_pause_ms_the_count_and_the_time() -> None:
    """Each field at its documented maximum: about two years of sleeping, started without a word."""
    job = {"scheme": "aes-gcm", "params": {"key_bits": 128}, "message_sizes": [64]}
    profile = parse_profile(
        {"name": "t", "jobs": [{**job, "samples": 1_000_000, "warmup": 100_000, "pause_ms": 60_000}]}
    )
    with pytest.raises(ProfileError) as caught:
        resolve_jobs(profile, "p.json")
    message = str(caught.value)
    assert caught.value.field == "jobs[0].pause_ms" and "\n" not in message
    # keygen (10 + 1 warm-up) and, per size, encrypt and decrypt of 1,100,000 rounds each
    assert "pauses at least 2,200,011 times" in message and "1,528 days" in message
    assert "more than the 24 h a job may run" in message


@pytest.mark.parametrize("mode", ["loopback", "operations"])
def test_a_day_of_pauses_runs_and_one_pause_more_does_not(mode: str) -> None:
    # sha256 pauses once a round in both modes (no key generation, no open): 2 sizes x 720
    # rounds x 60 s is exactly a day.
    fits = {"scheme": "sha256", "mode": mode, "message_sizes": [64, 128], "samples": 710, "warmup": 10}
    fits["pause_ms"] = 60_000
    resolve_jobs(parse_profile({"name": "t", "jobs": [fits]}))
    with pytest.raises(ProfileError, match=r"^.*jobs\[0\]\.pause_ms: the job pauses at least 1,442 times"):
        resolve_jobs(parse_profile({"name": "t", "jobs": [{**fits, "samples": 711}]}))


@pytest.mark.parametrize(
    ("scheme", "params"),
    [("sha256", {}), ("aes-gcm", {"key_bits": 128}), ("x25519", {}), ("ed25519", {}), ("rsa-oaep", {"bits": 2048})],
)
def test_the_count_is_what_an_operations_job_really_pauses(
    monkeypatch: pytest.MonkeyPatch, scheme: str, params: dict[str, Any]
) -> None:
    """The refusal's count follows the measuring code: an operations job run in-process,
    its pauses counted, is never below it (above only by a scheme's extra operations)."""
    from app.core.contracts.plan import JobPlan
    from app.core.measure.ops import OperationsBenchmark
    from app.core.profile.pauses import pause_count
    from app.core.schemes import registry

    fields = {"scheme": scheme, "params": params, "message_sizes": [16, 32], "samples": 3, "warmup": 2}
    (job,) = resolve_jobs(parse_profile({"name": "t", "jobs": [{**fields, "keygen_samples": 2, "pause_ms": 1}]}))
    made: list[None] = []
    monkeypatch.setattr(OperationsBenchmark, "_pause", lambda self: made.append(None))
    OperationsBenchmark(JobPlan(job, 0), lambda event: None).run()
    planned = pause_count(job.mode, job.family, 2, job.samples, job.warmup, job.keygen_samples)
    instance = registry.create(scheme, job.backend, job.params)
    extras = len(instance.extra_operations(instance.new_sender(), instance.new_receiver()))
    assert len(made) == planned + extras * 2 * (job.samples + job.warmup)


def test_run_samples_applies_the_same_rule(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps({"name": "t", "jobs": [{"scheme": "sha256", "message_sizes": [64], "pause_ms": 60_000}]})
    )
    resolve_jobs(parse_profile(json.loads(path.read_text())))  # 30 samples: half an hour of pauses
    assert main(["run", str(path), "--no-store", "--quiet", "--samples", "1000000"]) == 2


def test_the_window_refuses_a_job_of_endless_pauses(qtbot: Any) -> None:
    from app.gui.config.panel import ConfigPanel

    panel = ConfigPanel()
    qtbot.addWidget(panel)
    job = {"scheme": "sha256", "message_sizes": [64], "samples": 1_000_000, "pause_ms": 60_000}
    panel.set_profile(parse_profile({"name": "t", "jobs": [job]}))
    assert not panel.is_valid and "pause_ms" in panel.problem.text() and "days" in panel.problem.text()


# --- what a load job ignores is refused --------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [("samples", 3), ("warmup", 0), ("keygen_samples", 20), ("pause_ms", 2.5)])
def test_a_load_job_refuses_each_setting_it_ignores(field: str, value: Any) -> None:
    profile = parse_profile({"name": "t", "jobs": [_job(mode="load", **{field: value})]})
    with pytest.raises(ProfileError) as caught:
        resolve_jobs(profile, "p.json")
    assert caught.value.field == f"jobs[0].{field}" and "remove it" in str(caught.value)
    assert set(IGNORED_BY_LOAD) == {"samples", "warmup", "keygen_samples", "pause_ms"}


def test_samples_on_the_command_line_refuse_a_load_only_profile_and_skip_load_jobs(tmp_path: Path) -> None:
    only_load = parse_profile({"name": "t", "jobs": [_job(mode="load")]})
    with pytest.raises(ProfileError, match="--samples: every job of the profile is a load job"):
        with_samples(only_load, 3)
    mixed = parse_profile({"name": "t", "jobs": [_job(mode="load"), _job(mode="loopback")]})
    jobs = resolve_jobs(with_samples(mixed, 3))
    assert [job.samples for job in jobs] == [30, 3]  # the load job keeps its (unused) default
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"name": "t", "jobs": [_job(mode="load")]}))
    assert main(["run", str(path), "--no-store", "--quiet", "--samples", "3"]) == 2


def test_reduced_leaves_a_load_jobs_unused_rounds_alone() -> None:
    profile = parse_profile({"name": "t", "jobs": [_job(mode="load"), _job(mode="loopback", samples=10)]})
    load_job_, loopback = resolve_jobs(reduced(profile))
    assert load_job_.samples == 30 and loopback.samples <= 3


def test_the_window_refuses_it_and_a_job_turned_into_a_load_job_drops_it(qtbot: Any) -> None:
    from app.core.vocab import Mode
    from app.gui.config.job_settings import apply_edit
    from app.gui.config.panel import ConfigPanel
    from app.gui.config.profile_jobs import job_dict

    panel = ConfigPanel()
    qtbot.addWidget(panel)
    panel.set_profile(parse_profile({"name": "t", "jobs": [_job(mode="load", samples=50)]}))
    assert not panel.is_valid and "samples" in panel.problem.text()
    entry = panel.entry(panel.checked_rows()[0])
    apply_edit(entry, "mode", Mode.LOOPBACK)
    apply_edit(entry, "samples", 100)
    apply_edit(entry, "mode", Mode.LOAD)  # the loopback job's samples go with it
    assert "samples" not in job_dict(entry)
    apply_edit(entry, "samples", 7)  # an edit for a mixed selection leaves the load job alone
    assert "samples" not in job_dict(entry)
