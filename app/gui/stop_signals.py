"""SIGINT, SIGTERM and SIGHUP end the window the way Quit does, with nothing lost.

Ctrl-C in the terminal that started `make run`, a logout or `kill` (SIGTERM), a closed
terminal (SIGHUP): by default each ended the process on the spot, so a run in
progress stayed "running" until the store was next opened (then "interrupted"), and the
window's layout was not saved. The command line has treated them as a Stop since
`app/cli/terminal/signals.py`; the window now does the same: the running job's processes are
stopped, the run is recorded as cancelled with every finished job, the window state is
saved, and the app exits with 128 + the signal's number. No question is asked: nobody
may be there to answer it.

Python runs signal handlers only between bytecodes, and Qt's event loop runs in C++,
so the C-level handler writes the signal's number to a socket (`signal.set_wakeup_fd`)
that a QSocketNotifier watches: the stop runs on the GUI thread, in the event loop.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier

#: The signals that stop the window. A signal that was ignored when the app started
#: (`nohup` ignores SIGHUP) stays ignored, as the user asked.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class SignalStop(QObject):
    """Calls `on_stop(signum)` on the GUI thread when a stop signal arrives."""

    def __init__(self, on_stop: Callable[[int], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._on_stop = on_stop
        self._previous: dict[int, object] = {}
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self._previous_wakeup = signal.set_wakeup_fd(self._write.fileno())
        for signum in STOP_SIGNALS:
            current = signal.getsignal(signum)
            if current is signal.SIG_IGN and signum != signal.SIGINT:
                continue
            self._previous[signum] = current
            # The Python-level handler does nothing: the wakeup byte carries the signal.
            signal.signal(signum, lambda *_: None)
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_wakeup)
        self._stopping = False

    @property
    def handled(self) -> tuple[int, ...]:
        return tuple(self._previous)

    def _on_wakeup(self) -> None:
        try:
            data = self._read.recv(64)
        except BlockingIOError:
            return
        for signum in data:
            if signum in self._previous and not self._stopping:
                self._stopping = True  # a second signal while stopping changes nothing
                self._on_stop(signum)

    def uninstall(self) -> None:
        """Give the signals back (tests; and once the app is past its event loop)."""
        self._notifier.setEnabled(False)
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._previous.clear()
        signal.set_wakeup_fd(self._previous_wakeup)
        self._read.close()
        self._write.close()
