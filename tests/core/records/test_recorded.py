"""The typed views of a run's recorded environment and profile: every fact read one way,
from this machine's record, an older one, or a file that holds the wrong types."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.machine.environment import collect_environment
from app.core.records.recorded import RecordedEnvironment, RecordedLibrary, RecordedProfile, count_of, text_of
from app.core.results.model import load_results_file
from tests.helpers.paths import GOLDEN


def test_this_machine_s_environment_reads_back_whole() -> None:
    env = collect_environment()
    view = RecordedEnvironment.from_dict(json.loads(json.dumps(env)))
    assert view.hostname == env["hostname"] and view.app_version == env["app_version"]
    assert view.cpu_model == env["cpu"]["model"] and view.logical_cores == env["cpu"]["logical_cores"]
    assert view.python_version == env["python"]["version"]
    assert view.libraries["cryptography"].version == env["libraries"]["cryptography"]["version"]
    assert view.libraries["cryptography"].openssl == env["libraries"]["cryptography"]["openssl"]
    assert view.machine_label == env["hostname"]


def test_the_golden_run_s_views() -> None:
    run = load_results_file(GOLDEN / "results-v1.json")
    assert run.environment_view == RecordedEnvironment.from_dict(run.environment)
    assert run.profile_view.name == run.name
    assert run.profile_view.jobs is not None and len(run.profile_view.jobs) == len(run.profile["jobs"])


@pytest.mark.parametrize("environment", [None, [], "text", {}, {"cpu": "x", "os": [], "python": 3, "libraries": []}])
def test_an_environment_of_the_wrong_shape_reads_as_unknown(environment: Any) -> None:
    view = RecordedEnvironment.from_dict(environment)
    assert view == RecordedEnvironment()
    assert view.machine_label == "unknown machine" and view.os_name is None


def test_each_fact_of_the_wrong_type_is_unknown_not_a_crash() -> None:
    hostile = {
        "hostname": {"nested": "object"},
        "app_version": True,
        "cpu": {"model": ["list"], "logical_cores": "8", "physical_cores": True, "governors": ["performance", 3]},
        "os": {"pretty_name": "", "platform": 12},
        "libraries": {"cryptography": "46.0", "pycryptodome": {"version": 3.2, "openssl": None}},
        "link_emulation": {"netem": "no", "netem_reason": 7},
        "stability": {"facts": [{"code": "governor"}, "not an object"]},
        "parallel_workers": 2.5,
    }
    view = RecordedEnvironment.from_dict(hostile)
    assert (view.hostname, view.app_version, view.cpu_model) == (None, None, None)
    assert (view.logical_cores, view.physical_cores, view.governors) == (None, None, ("performance",))
    assert view.os_name == "12"  # a number is a fact written as text; an empty name is none
    assert view.libraries == {"cryptography": RecordedLibrary(None), "pycryptodome": RecordedLibrary("3.2")}
    assert (view.netem, view.netem_reason) == (None, "7")
    assert view.stability_facts == ({"code": "governor"},) and view.parallel_workers is None


def test_the_machine_label_falls_back_to_cpu_and_os() -> None:
    env = {"cpu": {"model": "Xeon"}, "os": {"platform": "Linux-6.1"}}
    assert RecordedEnvironment.from_dict(env).machine_label == "Xeon · Linux-6.1"
    assert RecordedEnvironment.from_dict({**env, "hostname": "lab-3"}).machine_label == "lab-3"


def test_the_profile_view() -> None:
    view = RecordedProfile.from_dict(
        {"name": "p", "description": "  what  ", "experiment": "E1", "reduced": True, "jobs": [{"scheme": "x"}, 3]}
    )
    assert view == RecordedProfile("p", "what", "E1", True, jobs=({"scheme": "x"},))
    assert RecordedProfile.from_dict({"jobs": "none"}).jobs is None
    assert RecordedProfile.from_dict(None) == RecordedProfile()


def test_a_profile_view_marks_a_reduced_or_overridden_run_once() -> None:
    overridden = RecordedProfile.from_dict({"name": "quick", "overrides": {"--samples": "3", "--link": "lte"}})
    assert overridden.overrides == (("--samples", "3"), ("--link", "lte")) and not overridden.reduced
    assert overridden.marks == ("--samples 3", "--link lte")
    assert overridden.marked_name == "quick (--samples 3; --link lte)"
    # The CLI's name carries the marks already: they are not doubled.
    named = RecordedProfile.from_dict(
        {"name": "quick (reduced) (--samples 3)", "reduced": True, "overrides": {"--samples": "3"}}
    )
    assert named.marked_name == "quick (reduced) (--samples 3)"
    # A run from before the flag was recorded: its name says reduced, and that is enough.
    assert RecordedProfile.from_dict({"name": "quick (reduced)"}).reduced
    assert RecordedProfile.from_dict({"name": "quick"}).marked_name == "quick"
    assert RecordedProfile.from_dict({"name": "q", "reduced": True}).marked_name == "q (reduced)"
    assert RecordedProfile.from_dict({"overrides": "not an object"}).overrides == ()


def test_text_and_counts() -> None:
    assert [text_of(v) for v in ("a", 3, 2.5, "", None, True, [1], {})] == [
        "a",
        "3",
        "2.5",
        None,
        None,
        None,
        None,
        None,
    ]
    assert [count_of(v) for v in (3, 0, True, 2.0, "4", None)] == [3, 0, None, None, None, None]
