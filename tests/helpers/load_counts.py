"""What a measured load step must account for: every request sent is completed, refused
or a clock fault (app/core/load/generator.py: a reply stamped before it was due is counted
and flagged on the step, never a sample)."""

from __future__ import annotations

from app.core.records.job_conditions import LoadStep


def assert_every_request_answered(step: LoadStep, sent: int | None = None) -> None:
    """No request refused or lost: each one sent completed, but for a rare clock fault.

    A busy machine's kernel stamps and clocks disagree now and then: one reply in 1,200
    read as answered before it was due on CI's clean run (2026-11-28), and the step counted
    it as such. A systematic disagreement (more than one in a hundred) still fails here."""
    assert step.errors == 0, step
    if sent is not None:
        assert step.sent == sent, step
    assert step.completed + step.clock_faults == step.sent, step
    assert step.clock_faults <= max(1, step.sent // 100), step
