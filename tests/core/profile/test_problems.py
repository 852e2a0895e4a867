"""Every problem of a bad profile file, as the window's Open and `run` name them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.profile.files import read_profile_file
from app.core.profile.problems import MAX_LISTED, all_problems, profile_problems
from app.core.settings.profile import ProfileError

BAD = {
    "name": "bad",
    "jobs": [
        {"scheme": "aes-gmc"},
        {"scheme": "aes-gcm", "samples": 0, "warmup": -1},
        {"scheme": "sha256"},
        {"scheme": "rsa-oaep", "params": {"bits": 2048}, "message_sizes": [500]},
    ],
}


def test_every_bad_field_of_every_job_is_named_in_the_file_s_order(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(BAD))
    problems = profile_problems(path)
    fields = [line.split(":")[0] for line in problems]
    # Both structure errors of job 1, not only its first; the good job 2 says nothing.
    assert fields == ["jobs[0].scheme", "jobs[1].samples", "jobs[1].warmup", "jobs[3].message_sizes[0]"]
    assert 'did you mean "aes-gcm"' in problems[0]


def test_the_core_s_error_is_listed_once_and_an_override_s_first(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(BAD))
    with pytest.raises(ProfileError) as raised:
        read_profile_file(path)
    problems = all_problems(raised.value, path)
    assert problems == profile_problems(path)  # the core's first error is among the file's
    override = ProfileError("must be 1..1000000 (got 0)", field="--samples")
    assert all_problems(override, path) == ["--samples: must be 1..1000000 (got 0)", *problems]
    assert all_problems(override, None) == ["--samples: must be 1..1000000 (got 0)"]


def test_a_profile_of_many_bad_jobs_lists_a_bounded_number(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"name": "many", "jobs": [{"scheme": f"nope{i}"} for i in range(20)]}))
    problems = profile_problems(path)
    assert len(problems) == MAX_LISTED + 1 and problems[-1] == f"and {20 - MAX_LISTED} more"


def test_each_problem_is_said_as_the_core_says_it(tmp_path: Path) -> None:
    """A lone surrogate in a label is refused before pydantic sees it: listed in the core's
    words, not pydantic's "unable to parse raw data"."""
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"name": "x", "jobs": [{"scheme": "sha256", "label": "x\ud800y"}, {"scheme": "nope"}]}))
    problems = profile_problems(path)
    assert problems[0].startswith("jobs[0].label: text cannot be written as UTF-8 (a lone surrogate")
    assert problems[1].startswith("jobs[1].scheme: unknown scheme") and len(problems) == 2
