"""The report's Environment section: the stability pre-flight's row and note."""

from __future__ import annotations

import copy

from app.core.results.model import RunResult
from app.report.content import build_report
from app.report.model import Paragraph, Table

FACTS = [
    {
        "code": "governor",
        "status": "finding",
        "found": "powersave on 2 CPUs",
        "why": "the clock changes",
        "fix": "sudo cpupower frequency-set -g performance",
    },
    {"code": "smt", "status": "ok", "found": "SMT (hyper-threading) not active", "why": None, "fix": None},
    {"code": "turbo", "status": "unknown", "found": "not exposed", "why": None, "fix": None},
]


def environment(run: RunResult) -> tuple[dict[str, str], list[str]]:
    section = next(s for s in build_report(run).sections if s.title == "Environment")
    rows = dict(tuple(r) for r in next(b for b in section.blocks if isinstance(b, Table)).rows)
    return rows, [b.text for b in section.blocks if isinstance(b, Paragraph)]


def test_stability_row_and_note(hand_run: RunResult) -> None:
    rows, notes = environment(hand_run)
    assert "Stability" not in rows  # a run recorded before the pre-flight says nothing
    run = copy.deepcopy(hand_run)
    run.environment["stability"] = {"facts": FACTS}
    rows, notes = environment(run)
    assert rows["Stability"] == "1 finding: CPU frequency governor (not readable here: Turbo / boost)"
    assert any("powersave on 2 CPUs" in n and "Fix: sudo cpupower frequency-set -g performance." in n for n in notes)
    run.environment["stability"] = {"facts": FACTS[1:2]}
    rows, notes = environment(run)
    assert rows["Stability"] == "no problem found"
    assert not any("pre-flight" in n for n in notes)


def test_a_fix_two_findings_share_is_said_once(hand_run: RunResult) -> None:
    """A virtual machine and its steal time share one fix: said once, the second "The same fix."."""
    run = copy.deepcopy(hand_run)
    fix = "ask the host for dedicated vCPUs (pinned, not overcommitted), or measure on bare metal"
    run.environment["stability"] = {
        "facts": [
            {"code": "virtualization", "status": "finding", "found": "virtual machine", "why": "shared", "fix": fix},
            {"code": "steal", "status": "finding", "found": "1.7 % stolen", "why": "other guests", "fix": fix},
        ]
    }
    _, notes = environment(run)
    (note,) = [n for n in notes if "pre-flight" in n]
    assert note.count(fix) == 1 and note.endswith("other guests. The same fix.")
