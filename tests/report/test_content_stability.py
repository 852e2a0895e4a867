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
