"""One Qt worker base for work on a `QThreadPool`: run a callable, report how it ended.

A QRunnable is not a QObject and cannot have signals, so every pool task used to
pair itself with a QObject of its own signals. `PoolTask` writes that pair once
(as superqt's WorkerBase does): the job runner and the report writer both are one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from PySide6.QtCore import QObject, QRunnable, Signal

T = TypeVar("T")
#: Called by the work with (done, total) as it goes; emitted as `TaskSignals.progress`.
Progress = Callable[[int, int], None]


class TaskSignals(QObject):
    """The signals of one `PoolTask`. Emitted on the pool thread, so a receiver living
    on the GUI thread gets them queued there.

    Signals:
        progress(int, int): (done, total), as often as the work reports it.
        finished(object): the work's return value; once, unless it failed.
        failed(str): a one-line message saying what went wrong; once, instead of finished.
    """

    progress = Signal(int, int)
    finished = Signal(object)
    failed = Signal(str)


class PoolTask(QRunnable, Generic[T]):
    """Runs `work(progress)` on a pool thread and emits its outcome.

    An exception of the `expected` types is the user's message as it is (its `str()`);
    any other is a bug, reported as "internal error: Type: message" rather than lost
    on a thread nobody watches.
    """

    def __init__(self, work: Callable[[Progress], T], expected: tuple[type[Exception], ...] = ()) -> None:
        super().__init__()
        self._work = work
        self._expected = expected
        self.signals = TaskSignals()

    def run(self) -> None:
        try:
            value = self._work(self.signals.progress.emit)
        except self._expected as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a silent failure
            self.signals.failed.emit(f"internal error: {type(exc).__name__}: {exc}")
        else:
            self.signals.finished.emit(value)
