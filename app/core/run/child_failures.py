"""Why a job's process could not start or ended without a result, in the job's words."""

from __future__ import annotations

import errno
import signal

from app.core.run.deadlines import StartStalled


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


def exhaustion_reason(exc: BaseException) -> str:
    """What ran out, in words, with the errno name and the limit to raise."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, RuntimeError):  # threading: "can't start new thread"
        return f"{exc} (thread or process limit reached: `ulimit -u`)"
    code = getattr(exc, "errno", None)
    text = getattr(exc, "strerror", None) or str(exc)
    hint = (
        {
            errno.EMFILE: "this process's open-file limit is reached: raise `ulimit -n`",
            errno.ENFILE: "the system's open-file table is full",
            errno.EAGAIN: "process or thread limit reached: `ulimit -u`",
            errno.ENOMEM: "out of memory",
        }.get(code)
        if code is not None
        else None
    )
    name = errno.errorcode.get(code, "") if code is not None else ""
    return f"{text} ({name}{': ' + hint if hint else ''})" if name else text


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
