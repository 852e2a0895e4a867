"""File > Open of a bad profile names every problem, as `cryptobench run` does
(app/core/profile/problems.py is the one check behind both)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.profile.files import read_profile_file
from app.core.profile.problems import all_problems
from app.core.settings.profile import ProfileError
from app.gui.main_window import MainWindow
from tests.helpers.windows import opened_window


@pytest.fixture
def window(qtbot: Any, tmp_path: Path) -> Iterator[MainWindow]:
    with opened_window(qtbot, tmp_path) as win:
        yield win


def test_open_names_every_bad_field_of_a_job_and_the_same_lines_as_the_cli(window: MainWindow, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "bad", "jobs": [{"scheme": "sha256", "samples": 0, "warmup": -1}]}))
    assert not window.open_profile(bad, ask=False)
    _title, message, _advice = window.last_error
    assert "2 problems" in message and "jobs[0].samples" in message and "jobs[0].warmup" in message
    with pytest.raises(ProfileError) as refused:
        read_profile_file(bad)
    assert all(line in message for line in all_problems(refused.value, bad))
