"""The one Qt worker base: a callable on a pool thread, its outcome as signals."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QThreadPool

from app.gui.pool_task import PoolTask, Progress


def _start(qtbot: Any, task: PoolTask[Any], signal: str) -> list[Any]:
    """Run `task` on a pool of its own; the arguments of `signal`, once it came."""
    pool = QThreadPool()
    with qtbot.waitSignal(getattr(task.signals, signal), timeout=10_000) as blocker:
        pool.start(task)
    pool.waitForDone()
    return list(blocker.args)


def test_the_return_value_is_finished_and_progress_arrives_before_it(qtbot: Any) -> None:
    steps: list[tuple[int, int]] = []

    def work(progress: Progress) -> str:
        progress(1, 2)
        progress(2, 2)
        return "done"

    task = PoolTask(work)
    task.signals.progress.connect(lambda done, total: steps.append((done, total)))
    assert _start(qtbot, task, "finished") == ["done"]
    assert steps == [(1, 2), (2, 2)]


def test_an_expected_error_is_its_message_as_it_is(qtbot: Any) -> None:
    def work(progress: Progress) -> None:
        raise OSError("out.pdf: cannot write: No space left on device")

    assert _start(qtbot, PoolTask(work, expected=(OSError,)), "failed") == [
        "out.pdf: cannot write: No space left on device"
    ]


def test_any_other_error_is_reported_as_internal_not_lost(qtbot: Any) -> None:
    def work(progress: Progress) -> None:
        raise KeyError("bug")

    assert _start(qtbot, PoolTask(work, expected=(OSError,)), "failed") == ["internal error: KeyError: 'bug'"]
