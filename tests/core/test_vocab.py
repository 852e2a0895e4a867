"""The closed vocabularies: members are their JSON strings, and none is written out twice."""

from __future__ import annotations

import ast
import csv
import enum
import io
import json

import pytest

from app.core.profile.files import parse_profile
from app.core.settings.profile import ProfileError
from app.core.vocab import (
    SESSION_MODES,
    ExportFormat,
    Family,
    JobStatus,
    LinkEmulation,
    LogLevel,
    Mode,
    PageSize,
    Role,
    RunStatus,
    measuring_role,
)
from app.gui.vocab import PlotTab, Theme, Tone
from tests.helpers.paths import ROOT

VOCABULARIES: tuple[type[enum.StrEnum], ...] = (
    Mode,
    JobStatus,
    RunStatus,
    Role,
    LogLevel,
    ExportFormat,
    PageSize,
    LinkEmulation,
    Family,
    Theme,
    PlotTab,
    Tone,
)
#: Where the vocabularies are defined: the only files that may spell out their values.
DEFINITIONS = {
    ROOT / "app" / "core" / "vocab.py",
    ROOT / "app" / "gui" / "vocab.py",
    ROOT / "app" / "core" / "schemes" / "base.py",
}


def test_a_member_is_its_string_in_json_csv_and_text() -> None:
    assert json.dumps({"mode": Mode.LOOPBACK, "status": JobStatus.OK}) == '{"mode": "loopback", "status": "ok"}'
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([Mode.REMOTE, RunStatus.INTERRUPTED, Family.HYBRID])
    assert out.getvalue() == "remote,interrupted,hybrid\n"
    assert f"{Role.SENDER} {LogLevel.ERROR.upper()}" == "sender ERROR"
    assert JobStatus.OK == "ok" and {"ok": 1}[JobStatus.OK] == 1  # a results file's plain string matches


def test_session_modes_and_the_measuring_process() -> None:
    assert SESSION_MODES == {Mode.LOOPBACK, Mode.REMOTE}
    assert "loopback" in SESSION_MODES and "operations" not in SESSION_MODES and "pigeon" not in SESSION_MODES
    assert [measuring_role(mode) for mode in ("operations", "loopback", "remote")] == [
        Role.WORKER,
        Role.SENDER,
        Role.SENDER,
    ]


def test_a_profile_reads_a_mode_and_writes_its_string_back() -> None:
    profile = parse_profile({"name": "t", "jobs": [{"scheme": "aes-gcm", "mode": "loopback"}, {"scheme": "sha256"}]})
    assert [job.mode for job in profile.jobs] == [Mode.LOOPBACK, Mode.OPERATIONS]
    assert all(isinstance(job.mode, Mode) for job in profile.jobs)
    assert [job["mode"] for job in profile.to_dict()["jobs"]] == ["loopback", "operations"]
    with pytest.raises(
        ProfileError, match=r"jobs\[0\]\.mode: Input should be 'operations', 'loopback', 'remote' or 'load'"
    ):
        parse_profile({"name": "t", "jobs": [{"scheme": "aes-gcm", "mode": "Loopback"}]})


def test_each_family_has_one_label_and_the_tree_says_what_else_runs() -> None:
    assert [family.label for family in Family][:2] == ["Authenticated encryption (AEAD)", "Key agreement"]
    assert Family.KEY_AGREEMENT.long_label == "Key agreement + AEAD"
    assert Family.HYBRID.long_label == "Hybrid / KEM + AEAD"
    assert Family.SIGNATURE.long_label == Family.SIGNATURE.label == "Signatures"
    assert Family.AEAD.title() == "Aead"  # the str method is not shadowed by the label


_CONTAINERS = (ast.Tuple, ast.List, ast.Set, ast.Dict)


def _strings(node: ast.AST) -> list[str]:
    """The string constants of a literal container, through nested containers (a tuple of
    (value, label) pairs) and a dict's keys."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, ast.Dict):
        return [s for key in node.keys if key is not None for s in _strings(key)]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for item in node.elts for s in _strings(item)]
    return []


def _literal_groups(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """String constants that sit together in one literal tuple, list, set or dict."""
    return [
        (node.lineno, strings)
        for node in ast.walk(tree)
        if isinstance(node, _CONTAINERS) and len(strings := _strings(node)) >= 2
    ]


@pytest.mark.parametrize("folder", ["app", "benchmarks"])
def test_no_vocabulary_is_spelled_out_a_second_time(folder: str) -> None:
    """A tuple of mode names, a dict keyed by statuses, a choices list of themes: each is a
    second definition of a vocabulary that names its members instead."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if path in DEFINITIONS:
            continue
        for line, strings in _literal_groups(ast.parse(path.read_text(encoding="utf-8"))):
            for vocabulary in VOCABULARIES:
                values = {member.value for member in vocabulary}
                spelled = [s for s in strings if s in values]
                if len(set(spelled)) >= 2:
                    found.append(f"{path.relative_to(ROOT)}:{line}: {vocabulary.__name__} values {spelled}")
    assert not found, "\n".join(found)
