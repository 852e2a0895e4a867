"""Why a job's process could not start or ended without a result, in the job's words."""

from __future__ import annotations

import signal
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from app.core.errors import exhaustion_reason
from app.core.processes.deadlines import StartStalled
from app.core.vocab import Role


class StartFailed(Exception):
    """The system refused to start a part of a job; str() is the job's one-line cause."""

    def __init__(self, what: str, exc: BaseException) -> None:
        if isinstance(exc, StartStalled):
            reason = str(exc)
        elif isinstance(exc, EOFError):  # the pipe it answers on closed: it died (fork failed, or killed)
            reason = "the fork server ended before it answered"
        else:
            reason = exhaustion_reason(exc)
        super().__init__(f"cannot start the {what}: {reason}")


def death_cause(role: str, exitcode: int | None) -> str:
    if exitcode is None:
        return f"{role} process did not report a result"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"{role} process was killed by {name}"
    return f"{role} process exited with code {exitcode} before reporting a result"


#: Exit codes of a job process ended by a stop signal that was not ours: killed by SIGTERM,
#: SIGINT or SIGHUP (the job's processes block the last two, but a spawned child may not
#: yet), or 255, what multiprocessing reports for a fork-server child once the fork
#: server itself is gone (the same signal, sent to the whole process group, killed it).
_STOP_DEATHS = frozenset(
    [-getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)] + [255]
)


def died_of_a_stop_signal(exitcodes: Mapping[Role, int | None], stopped_by_us: AbstractSet[Role]) -> bool:
    """Whether a process of the job ended the way a stop signal sent to the whole process
    group (GNU `timeout`, `kill -TERM -PGID`, a CI runner's cancel) ends it, before the
    supervisor stopped it. Such a signal reaches the job's processes and the supervisor
    at once; which of them acts on it first is chance."""
    return any(code in _STOP_DEATHS and role not in stopped_by_us for role, code in exitcodes.items())
