"""Text that cannot be encoded: JSON's "\\ud800" escape decodes to a lone surrogate.

Before the fix a lone surrogate in a job label passed validation and broke the run in
the middle (no export), and one in the description broke `report --markdown` with a
traceback. Now a profile refuses it up front, naming the field, and so does a results
file; a writer handed such text anyway fails with one line naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main as cli_main
from app.core.fileio import FileWriteError, atomic_write_text
from app.core.profile.files import parse_profile, read_profile_file
from app.core.results import model as results
from app.core.settings.profile import ProfileError
from tests.helpers.report_runs import build_run

JOB = {"scheme": "sha256", "message_sizes": [16], "samples": 3, "warmup": 0}
BAD = "x\ud800y"


def _profile(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": "p", "jobs": [dict(JOB), dict(JOB, message_sizes=[32])]}
    for key, value in changes.items():
        target = data["jobs"][1] if key.startswith("job_") else data
        target[key.removeprefix("job_")] = value
    return data


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"name": BAD}, "name"),
        ({"description": BAD}, "description"),
        ({"experiment": BAD}, "experiment"),
        ({"job_label": BAD}, "jobs[1].label"),
        ({"job_scheme": BAD}, "jobs[1].scheme"),
        ({"job_backend": BAD}, "jobs[1].backend"),
        ({"job_mode": BAD}, "jobs[1].mode"),
        ({"job_params": {"curve": BAD}}, "jobs[1].params.curve"),
        ({"job_params": {BAD: 1}}, "jobs[1].params"),
        ({BAD: 1}, None),
    ],
)
def test_a_string_that_cannot_be_encoded_is_refused_naming_the_field(
    changes: dict[str, Any], field: str | None
) -> None:
    with pytest.raises(ProfileError) as caught:
        parse_profile(_profile(**changes), source="p.json")
    assert caught.value.field == field
    message = str(caught.value)
    assert "cannot be written as UTF-8" in message and "\\ud800" in message and "\n" not in message
    message.encode("utf-8")  # the message itself can be printed anywhere


def test_a_label_from_a_file_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_profile(job_label=BAD)), encoding="utf-8")  # written as the \ud800 escape
    assert "\\ud800" in path.read_text(encoding="utf-8")
    with pytest.raises(ProfileError):
        read_profile_file(path)
    out_json = tmp_path / "out.json"
    assert cli_main(["run", str(path), "--no-store", "--quiet", "--json", str(out_json)]) == 2
    out, err = capsys.readouterr()
    assert err == (
        f"cryptobench: error: {path}: jobs[1].label: text cannot be written as UTF-8 (a lone "
        'surrogate at character 1; got "x\\ud800y")\n'
    )
    assert "ok " not in out and not out_json.exists()


def test_escaped_text_that_is_valid_loads() -> None:
    """Only lone surrogates are refused: a proper pair (an emoji) and other escapes load."""
    profile = parse_profile(
        json.loads(
            '{"name": "caf\\u00e9 \\ud83d\\ude00", "description": "tab\\there", '
            '"jobs": [{"scheme": "sha256", "label": "\\u2603"}]}'
        )
    )
    assert profile.name == "café 😀" and profile.jobs[0].label == "☃"


def test_a_results_file_with_such_text_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(results.to_json(build_run("20261121-100400-hand01", "2026-11-21T10:04:00+00:00")))
    data["run"]["profile"]["description"] = BAD
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = tmp_path / "report.md"
    assert cli_main(["report", str(path), "--markdown", str(report)]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"cryptobench: error: {path}: run.profile.description: text that cannot be written as UTF-8")
        and err.count("\n") == 1
    )
    assert not report.exists()


def test_a_writer_handed_such_text_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "out.md"
    path.write_text("previous\n")
    with pytest.raises(FileWriteError, match=rf"^{path}: cannot write: text at character 1 cannot be encoded"):
        atomic_write_text(path, BAD)
    assert path.read_text() == "previous\n" and [p.name for p in tmp_path.iterdir()] == ["out.md"]
