"""What a self-test check is, how it is registered and run, and how it reports a mismatch.

A check is a function that returns when the backend computed the expected values and
raises otherwise: :class:`SelftestMismatch` (built by the ``expect_*`` helpers, with
expected and got side by side) or whatever the library raised. :func:`run_one` turns
either into a :class:`SelftestResult`; it never lets an exception out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Backend and kind labels, as they appear in SelftestResult.
CRYPTOGRAPHY = "cryptography"
PYCRYPTODOME = "pycryptodome"
TINYEC = "tinyec"
PYTHON = "python"
#: OpenSSL as cryptography's wheel bundles it, through pyOpenSSL (the tls13 scheme's).
PYOPENSSL = "pyopenssl"

KAT = "KAT"
CROSS_CHECK = "cross-check"
CONSISTENCY = "consistency"

#: A failure's detail is cut to this many characters: one line of the report, even when
#: a library puts a whole key into its exception.
MAX_DETAIL = 300

#: A check: returns if the backend computed the expected values, raises otherwise.
CheckFunction = Callable[[], None]


@dataclass(frozen=True)
class SelftestResult:
    """The outcome of one self-test check.

    Attributes:
        name: Unique, human-readable name, e.g.
            ``"AES-256-GCM with AAD, GCM test case 16 [cryptography]"``.
        backend: ``"cryptography"``, ``"pycryptodome"``, ``"tinyec"``, ``"python"`` or ``"pyopenssl"``.
        kind: ``"KAT"``, ``"cross-check"`` or ``"consistency"``.
        source: Where the expected values come from (document and section).
        passed: Whether the check passed.
        detail: Empty when passed; otherwise what differed (expected vs got,
            shortened) or the exception raised.
    """

    name: str
    backend: str
    kind: str
    source: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class SelftestCheck:
    """A registered check: metadata plus a function that raises on failure.

    ``schemes`` names the registry ids (app/core/schemes/registry.py) whose own adapter
    the check drives on ``backend``: created through the registry, their sender,
    receiver or the parts those call. A library check names none. Every registered
    scheme, on every backend, must be named by some check (the self-test's tests hold
    the union against the registry).
    """

    name: str
    backend: str
    kind: str
    source: str
    run: CheckFunction
    schemes: tuple[str, ...] = ()


Register = Callable[[str, str, str, str], Callable[[CheckFunction], CheckFunction]]


def registrar(checks: list[SelftestCheck]) -> Register:
    """A decorator factory that appends checks named ``"<title> [<backend>]"`` to ``checks``.

    Each checks module keeps its own list; the package joins them in a fixed order, so
    the report's order does not depend on which module happened to be imported first.
    """

    def register(title: str, backend: str, kind: str, source: str) -> Callable[[CheckFunction], CheckFunction]:
        def decorator(func: CheckFunction) -> CheckFunction:
            checks.append(
                SelftestCheck(name=f"{title} [{backend}]", backend=backend, kind=kind, source=source, run=func)
            )
            return func

        return decorator

    return register


class SelftestMismatch(Exception):
    """A computed value differs from the expected one (the message says how)."""


def run_one(check: SelftestCheck) -> SelftestResult:
    """Run one check; a failure or any exception becomes ``passed=False`` with its detail."""
    try:
        check.run()
    except SelftestMismatch as exc:
        return _result(check, False, str(exc))
    except Exception as exc:  # noqa: BLE001 - a check must never take the run down
        return _result(check, False, describe(exc))
    return _result(check, True, "")


def describe(exc: BaseException) -> str:
    """``"Type: message"`` (or just the type), even if ``str(exc)`` itself fails."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not escape either
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _result(check: SelftestCheck, passed: bool, detail: str) -> SelftestResult:
    if len(detail) > MAX_DETAIL:
        detail = detail[: MAX_DETAIL - 1] + "…"
    return SelftestResult(
        name=check.name,
        backend=check.backend,
        kind=check.kind,
        source=check.source,
        passed=passed,
        detail=detail,
    )


def _short(value: object) -> str:
    """Render a value for a failure message: long hex is cut to head…tail."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        text = raw.hex()
        if len(text) > 32:
            text = f"{text[:16]}…{text[-8:]}"
        return f"{text} ({len(raw)} B)"
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) < 2**32:
            return str(value)
        text = format(value, "x")
        if len(text) > 32:
            text = f"{text[:16]}…{text[-8:]}"
        return "0x" + text
    if isinstance(value, tuple):
        return "(" + ", ".join(_short(item) for item in value) + ")"
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def expect_equal(what: str, got: object, expected: object) -> None:
    if got != expected:
        raise SelftestMismatch(f"{what}: expected {_short(expected)}, got {_short(got)}")


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise SelftestMismatch(message)


def expect_rejected(what: str, func: Callable[[], object], *errors: type[BaseException]) -> None:
    """``func`` must raise one of ``errors``: tampered input has to be refused."""
    try:
        func()
    except errors:
        return
    raise SelftestMismatch(f"{what} was accepted")


def expect_accepted(what: str, func: Callable[[], Any], *errors: type[BaseException]) -> Any:
    """``func`` must not raise ``errors``: a published signature or tag has to verify."""
    try:
        return func()
    except errors as exc:
        raise SelftestMismatch(f"{what} was rejected ({describe(exc)})") from exc


def flip_last_bit(data: bytes) -> bytes:
    """Return ``data`` with the lowest bit of its last byte inverted."""
    return data[:-1] + bytes([data[-1] ^ 0x01])


def flip_first_bit(data: bytes) -> bytes:
    """Return ``data`` with the lowest bit of its first byte inverted."""
    return bytes([data[0] ^ 0x01]) + data[1:]
