"""The root of every error CryptoBench raises on purpose, and the errors of layers
that span several modules.

Each layer has one base class and a subclass per cause. `str()` of any of them is
the user's message as it stands: it names the file, field or value and, where there
is one, the fix. (A `KeyError` quotes its message, which is why none of these is
one.) A face, the command line or the window, catches a layer's base class or
`CryptoBenchError`, never a bare built-in, for a failure the layer foresaw; any
other exception is a defect and is reported as one.

    CryptoBenchError
    ├── StoreError (app.core.store.errors, re-exported by app.core.store.store)
    │   ├── BrokenStoreError          corrupted, another program's file, a newer schema
    │   ├── StoreReadOnlyError        a write to a store this user (or database role) may only read
    │   ├── StoreUnreachable          a PostgreSQL server that cannot be reached
    │   ├── RunNotFound               no stored run has this id
    │   │   └── AmbiguousRunId        the prefix names several runs
    │   └── RunIdTaken (app.core.store.importing)  an imported run's id is stored with other content
    ├── RegistryError (here; raised by app.core.schemes.registry)
    │   ├── UnknownScheme
    │   ├── UnknownBackend
    │   └── BadParameter
    ├── ProfileError (app.core.profile.files)
    ├── ResultsFileError (app.core.results.model)
    ├── SessionError (here)
    │   ├── TokenFileError (app.core.serve.server)
    │   ├── JobRejected (app.core.session.protocol)
    │   └── SessionFailed, ServerBusy (app.core.session.sender)
    ├── WireError (app.core.transport.wire), with AuthenticationFailed (app.core.transport.auth)
    ├── SchemeError (app.core.schemes.base): a scheme refusing a payload
    └── ExportError (app.report.exporters): a format, page size or baseline no exporter serves

A user file that cannot be written stays an OSError, `app.core.fileio.FileWriteError`,
whose message names the file.
"""

from __future__ import annotations

import errno


class CryptoBenchError(Exception):
    """Base of every error CryptoBench raises on purpose; str() is the user's message."""


# --- the scheme registry --------------------------------------------------------------
# Here rather than in the registry: `SchemeSpec.resolve_params` (schemes.base) raises
# them, and the registry imports schemes.base.


class RegistryError(CryptoBenchError):
    """A job names a scheme, backend or parameter the registry cannot build."""


class UnknownScheme(RegistryError):
    """No scheme has this id; the message lists the known ids."""


class UnknownBackend(RegistryError):
    """The scheme exists but not in this backend; the message lists its backends."""


class BadParameter(RegistryError):
    """A parameter the scheme does not have, a value out of range, or a combination
    the backend refuses; the message names the parameter and the value."""


# --- sessions (loopback and remote) ---------------------------------------------------
# Here rather than in one of app.core.session's modules: its errors are raised by the
# server, the protocol and the sender, none of which should import another for a base.


class SessionError(CryptoBenchError):
    """A session cannot start or go on: a token file, a refused job, a busy server."""


# --- resources that ran out ----------------------------------------------------------
# Here, on the ground floor: a job's start, a connection and a load server all name what
# ran out in the same words.


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
