"""CPU placement: the profile setting and its CLI override, the CPUs chosen and
applied to each process, the fall-back to `free` where affinity cannot be set, and the
record in results (JSON, CSV, results_check, report, the results table's Mode cell).

Nothing here assumes a number of CPUs, SMT or a platform: choices are tested on given CPU
lists, and the real runs assert what must hold on 1 CPU as on 64.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from app.cli.common import EXIT_OK, EXIT_USAGE
from app.cli.main import main
from app.core.machine import placement
from app.core.machine.placement import Placer, roles_of, usable_cpus
from app.core.profile.edits import with_placement
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.records import placement_words
from app.core.records.job_conditions import Placement, ProcessPlacement
from app.core.records.job_records import ResourceSeries
from app.core.results.model import CSV_COLUMNS, ResultsFileError, load_results_file, parse_results_text, to_csv, to_json
from app.core.run.runner import Runner
from app.core.settings.profile import ProfileError
from app.core.statistics.stability_warnings import WarningCode
from app.core.vocab import DEFAULT_PLACEMENT, JobStatus, Mode, PlacementPolicy, Role
from tests.helpers.paths import GOLDEN

GOLDEN_RESULTS = GOLDEN / "results-v1.json"
HAS_AFFINITY = hasattr(os, "sched_setaffinity")
TINY = {"samples": 3, "warmup": 0, "tamper": 0, "keygen_samples": 1, "message_sizes": [64]}


# --- the profile setting and the CLI override ---------------------------------------------------


def test_placement_is_an_optional_job_setting_with_a_default() -> None:
    profile = parse_profile(
        {"name": "t", "jobs": [{"scheme": "sha256"}, {"scheme": "sha256", "placement": "split", "message_sizes": [32]}]}
    )
    assert [job.placement for job in resolve_jobs(profile)] == [DEFAULT_PLACEMENT, PlacementPolicy.SPLIT]
    assert "placement" not in profile.to_dict()["jobs"][0]  # a profile without it is written back without it
    with pytest.raises(ProfileError, match=r"jobs\[0\]\.placement"):
        parse_profile({"name": "t", "jobs": [{"scheme": "sha256", "placement": "pinned"}]})


def test_placement_is_part_of_what_makes_a_job_distinct() -> None:
    """same and split of one scheme are a comparison, not a repeat."""
    jobs = resolve_jobs(
        parse_profile(
            {
                "name": "t",
                "jobs": [
                    {"scheme": "x25519", "mode": "loopback", "placement": "same"},
                    {"scheme": "x25519", "mode": "loopback", "placement": "split"},
                ],
            }
        )
    )
    assert [job.placement for job in jobs] == ["same", "split"]


def test_the_cli_override_sets_every_job() -> None:
    profile = parse_profile(
        {"name": "t", "jobs": [{"scheme": "sha256", "placement": "split"}, {"scheme": "x25519", "mode": "loopback"}]}
    )
    assert {job.placement for job in resolve_jobs(with_placement(profile, "free"))} == {PlacementPolicy.FREE}
    with pytest.raises(ProfileError, match=r"^--placement: not a placement"):
        with_placement(profile, "pinned")


def test_run_placement_overrides_the_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "t", "jobs": [{"scheme": "sha256", "placement": "same", **TINY}]}))
    out = tmp_path / "r.json"
    assert main(["run", str(profile), "--no-store", "--quiet", "--placement", "free", "--json", str(out)]) == EXIT_OK
    job = json.loads(out.read_text(encoding="utf-8"))["jobs"][0]
    assert job["placement"]["policy"] == "free" and job["placement"]["unavailable"] is None
    assert set(job["placement"]["processes"]) == {"worker"}
    with pytest.raises(SystemExit) as exited:
        main(["run", str(profile), "--no-store", "--placement", "pinned"])
    err = capsys.readouterr().err
    assert exited.value.code == EXIT_USAGE and '--placement: "pinned" is not one of same, split, free' in err


# --- choosing CPUs (given CPU lists: no assumption about this machine) --------------------------


def test_roles_per_mode() -> None:
    assert roles_of(Mode.OPERATIONS, False) == (Role.WORKER,)
    assert roles_of(Mode.LOOPBACK, True) == (Role.RECEIVER, Role.LINK, Role.SENDER)
    assert roles_of(Mode.REMOTE, False) == (Role.SENDER,)


@pytest.mark.skipif(not HAS_AFFINITY, reason="no sched_setaffinity on this platform")
def test_choices_on_given_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    session = roles_of(Mode.LOOPBACK, True)
    same = Placer(PlacementPolicy.SAME, session, cpus=(0, 1, 2, 3), core={0: 0, 1: 1, 2: 0, 3: 1})
    assert set(same.targets.values()) == {frozenset({3})} and same.unavailable is None
    # 4 CPUs on 2 cores (0/2 and 1/3): the sender goes to the other core, the link stays with the receiver.
    split = Placer(PlacementPolicy.SPLIT, session, cpus=(0, 1, 2, 3), core={0: 0, 1: 1, 2: 0, 3: 1})
    assert split.targets == {Role.RECEIVER: {3}, Role.LINK: {3}, Role.SENDER: {2}}
    assert split.note is not None and "different cores" in split.note
    siblings = Placer(PlacementPolicy.SPLIT, session, cpus=(4, 5), core={4: 4, 5: 4})
    assert siblings.targets[Role.SENDER] == {4} and siblings.note is not None and "SMT siblings" in siblings.note
    monkeypatch.setattr(placement, "core_of", lambda cpus: None)  # as when sysfs has no topology
    unknown = Placer(PlacementPolicy.SPLIT, session, cpus=(0, 1))
    assert unknown.targets[Role.SENDER] != unknown.targets[Role.RECEIVER]
    assert unknown.note is not None and "unknown" in unknown.note
    one = Placer(PlacementPolicy.SPLIT, session, cpus=(7,), core={7: 7})
    assert one.targets == {} and one.unavailable == "split needs two CPUs; this process may use only CPU 7"
    worker = Placer(PlacementPolicy.SPLIT, (Role.WORKER,), cpus=(0, 1), core={0: 0, 1: 1})
    assert worker.targets == {Role.WORKER: {1}} and worker.unavailable is None
    assert Placer(PlacementPolicy.FREE, session, cpus=(0, 1)).targets == {}


@pytest.mark.skipif(not HAS_AFFINITY, reason="no sched_setaffinity on this platform")
def test_jobs_running_together_get_different_cpus_and_one_alone_the_same() -> None:
    roles = roles_of(Mode.LOOPBACK, False)
    first, second = (Placer(PlacementPolicy.SAME, roles, cpus=(0, 1), core={0: 0, 1: 1}) for _ in range(2))
    first.claim()
    second.claim()
    try:
        assert first.targets[Role.SENDER] == {1} and second.targets[Role.SENDER] == {0}
    finally:
        first.release()
        second.release()
    again = Placer(PlacementPolicy.SAME, roles, cpus=(0, 1), core={0: 0, 1: 1})
    again.claim()
    again.release()
    assert again.targets[Role.SENDER] == {1}


def test_no_affinity_on_this_platform_is_recorded_not_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_setaffinity", raising=False)
    placer = Placer(PlacementPolicy.SAME, (Role.WORKER,), cpus=(0,), core={0: 0})
    assert placer.targets == {}
    assert placer.unavailable is not None and "sched_setaffinity" in placer.unavailable


def test_the_record_gives_allowed_and_observed_cpus() -> None:
    placer = Placer(PlacementPolicy.FREE, (Role.WORKER,), cpus=(0, 1), core={0: 0, 1: 1})
    placer.apply(Role.WORKER, os.getpid())
    series = ResourceSeries("worker", cpu_nums=[1, 0, 1, -1])
    record = placer.record({"worker": series})
    assert record.policy == "free" and record.processes["worker"].observed_cpus == (0, 1)
    assert placement_words.anomalies(record)  # free and seen on two CPUs: worth a sentence


# --- the supervisor applies it (real processes) ------------------------------------------------


def _run(jobs: list[dict[str, Any]]) -> list[Any]:
    return Runner(parse_profile({"name": "t", "jobs": jobs})).run().jobs


@pytest.mark.skipif(not HAS_AFFINITY, reason="no sched_setaffinity on this platform")
def test_loopback_same_and_split_pin_each_process() -> None:
    cpus = usable_cpus()
    assert cpus
    same, split = _run(
        [{"scheme": "aes-gcm", "mode": "loopback", "placement": policy, **TINY} for policy in ("same", "split")]
    )
    assert same.status == split.status == JobStatus.OK
    assert same.placement is not None and same.placement.unavailable is None
    allowed = {p.allowed_cpus for p in same.placement.processes.values()}
    assert set(same.placement.processes) == {"sender", "receiver"}
    assert len(allowed) == 1 and len(next(iter(allowed))) == 1
    for process in same.placement.processes.values():
        assert set(process.observed_cpus) <= set(process.allowed_cpus)
    assert split.placement is not None
    sender, receiver = (split.placement.processes[r] for r in ("sender", "receiver"))
    if len(cpus) >= 2:
        assert split.placement.unavailable is None
        assert len(sender.allowed_cpus) == len(receiver.allowed_cpus) == 1
        assert sender.allowed_cpus != receiver.allowed_cpus
    else:
        assert split.placement.unavailable == f"split needs two CPUs; this process may use only CPU {cpus[0]}"
        assert [w.code for w in split.warnings if w.code == WarningCode.PLACEMENT_UNAVAILABLE]


@pytest.mark.skipif(not HAS_AFFINITY, reason="no sched_setaffinity on this platform")
def test_an_affinity_refusal_runs_the_job_as_free(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(pid: int, cpus: Any) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setaffinity", refuse, raising=False)
    (job,) = _run([{"scheme": "sha256", "placement": "same", **TINY}])
    assert job.status == JobStatus.OK and job.placement is not None
    assert job.placement.policy == "same"
    assert job.placement.unavailable == "could not set CPU affinity: Operation not permitted (EPERM)"
    (warning,) = [w for w in job.warnings if w.code == WarningCode.PLACEMENT_UNAVAILABLE]
    assert warning.message.startswith("CPU placement same not applied, the job ran as free: could not set")


# --- the record in results -------------------------------------------------------------------------

PLACED = Placement("split", {"sender": ProcessPlacement((0,), (0,)), "receiver": ProcessPlacement((1,), (1,))})


def _golden_with_placement() -> dict[str, Any]:
    data = json.loads(GOLDEN_RESULTS.read_text(encoding="utf-8"))
    data["jobs"][1]["placement"] = PLACED.to_dict()
    data["jobs"][0]["placement"] = Placement(
        "same", {"worker": ProcessPlacement((1,), ())}, "could not set CPU affinity: x (EPERM)"
    ).to_dict()
    return data


def test_placement_reads_back_to_the_same_json() -> None:
    text = json.dumps(_golden_with_placement(), indent=2) + "\n"
    run = parse_results_text(text, "r.json")
    assert to_json(run) == text
    assert run.jobs[1].placement == PLACED and run.jobs[2].placement is None


def test_the_csv_gives_the_policy_and_the_cpus_per_process_in_columns_after_the_golden_ones() -> None:
    data = _golden_with_placement()
    data["jobs"][3]["placement"] = Placement(
        "free", {"receiver": ProcessPlacement((0, 1, 2, 5), (2,)), "sender": ProcessPlacement((0, 1, 2, 5), ())}
    ).to_dict()
    data["jobs"][2]["placement"] = Placement("same", {"worker": ProcessPlacement((3,), ())}).to_dict()
    rows = list(csv.DictReader(io.StringIO(to_csv(parse_results_text(json.dumps(data), "r.json")))))
    after_link = CSV_COLUMNS.index("link") + 1  # appended after link; a load job's columns after them
    assert CSV_COLUMNS[after_link : after_link + 3] == ("placement", "placement_cpus", "placement_seen")
    cells = {
        row["job_id"].rsplit("/", 1)[1]: (row["placement"], row["placement_cpus"], row["placement_seen"])
        for row in rows
    }
    assert cells == {
        # Asked for same, not applied: the figures were measured as free (and the warnings say so).
        "0": ("free", "worker 1", ""),
        "1": ("split", "sender 0; receiver 1", "sender 0; receiver 1"),
        "2": ("same", "worker 3", ""),  # never sampled: no CPU seen, an empty cell
        "3": ("free", "receiver 0-2,5; sender 0-2,5", "receiver 2; sender -"),
    }
    # Every row of a job (one per metric) carries it, so a filter keeps whole jobs.
    assert {row["placement"] for row in rows if row["job_id"].endswith("/1")} == {"split"}
    assert len([row for row in rows if row["job_id"].endswith("/1")]) > 1
    # Results from before placement: empty cells.
    golden = list(csv.DictReader(io.StringIO(to_csv(load_results_file(GOLDEN_RESULTS)))))
    assert {(row["placement"], row["placement_cpus"], row["placement_seen"]) for row in golden} == {("", "", "")}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("policy",), "pinned"),
        (("processes", "sender", "allowed_cpus", 0), -1),
        (("processes", "sender", "observed_cpus", 0), "0"),
        (("processes", "sender", "observed_cpus", 0), 1.5),
        (("processes", "sender"), [0]),
        (("unavailable",), 3),
    ],
)
def test_results_check_refuses_a_bad_placement(path: tuple[Any, ...], value: Any) -> None:
    data = _golden_with_placement()
    target = data["jobs"][1]["placement"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ResultsFileError, match=r"jobs\[1\]\.placement"):
        parse_results_text(json.dumps(data), "r.json")


def test_the_report_and_the_table_state_the_placement() -> None:
    from app.report.content import build_report

    run = load_results_file(GOLDEN_RESULTS)
    run.jobs[1].placement = PLACED
    run.jobs[0].placement = Placement("free", {"worker": ProcessPlacement((0, 1), (0, 1))})
    method = next(s for s in build_report(run).sections if s.title == "Method")
    text = " ".join(getattr(b, "text", "") + " ".join(getattr(b, "items", [])) for b in method.blocks)
    assert "sender on CPU 0, receiver on CPU 1 (split): 1 job" in text
    assert "worker on CPUs 0-1 (free): 1 job" in text
    assert "left to the scheduler, its processes were seen on CPUs 0-1" in text
    assert "2 of 4 jobs have no placement record" in text
    assert (
        placement_words.describe(Placement("same", {"sender": ProcessPlacement((2,), (3,))}))
        == "sender on CPU 2 (seen on CPU 3) (same)"
    )
    assert (
        "outside the CPU 2 it was allowed"
        in placement_words.anomalies(Placement("same", {"sender": ProcessPlacement((2,), (3,))}))[0]
    )


def test_the_results_table_shows_the_placement_in_the_mode_cell() -> None:
    from app.gui.results.cells import Column, build_row
    from app.gui.vocab import Tone

    run = load_results_file(GOLDEN_RESULTS)
    ops, session, signature, _cancelled = run.jobs
    before = build_row(session, None)[Column.MODE]
    # Results from before placement: the mode alone, then the X25519 job's exchange (read as measured).
    assert (before.text, before.tip) == ("loopback · session", None)
    session.placement = PLACED
    ops.placement = Placement("same", {"worker": ProcessPlacement((1,), ())}, "could not set CPU affinity: x (EPERM)")
    signature.placement = Placement("same", {"worker": ProcessPlacement((1,), (1,))})
    cells = [build_row(job, None)[Column.MODE] for job in run.jobs]
    assert [cell.text for cell in cells] == [
        "operations · free",
        "loopback · split · session",
        "operations · same",
        "loopback · session",
    ]
    assert cells[1].tip == "CPU placement: sender on CPU 0, receiver on CPU 1 (split)"
    # Asked for same, not applied: measured as free, in the warning colour, the reason in the tooltip.
    assert cells[0].foreground == Tone.WARN and cells[2].foreground is None
    assert cells[0].tip is not None and "same not applied, ran as free: could not set CPU affinity" in cells[0].tip
    # The text is the sort key: rows sort by mode, then by placement.
    assert sorted(cell.key for cell in cells) == [
        "loopback · session",
        "loopback · split · session",
        "operations · free",
        "operations · same",
    ]
