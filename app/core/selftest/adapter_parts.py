"""What the checks through the scheme adapters share: naming, creating a scheme, sessions.

Used by :mod:`.adapters` and :mod:`.adapters_encryption` (the checks through
app/core/schemes/pke.py and hybrid.py). Like them, it imports the schemes and the
libraries only when a check runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from app.core.selftest.framework import CheckFunction, SelftestCheck, SelftestMismatch

if TYPE_CHECKING:  # the schemes are imported when a check runs, like the libraries
    from app.core.schemes.base import Scheme

S = TypeVar("S", bound="Scheme")

#: The message of the checks that compare with the library (any message would do).
MESSAGE = b"abc"


class AddCheck(Protocol):
    """Adds one adapter check; ``schemes`` are the registry ids whose adapters it drives."""

    def __call__(
        self, title: str, backend: str, kind: str, source: str, run: CheckFunction, *, schemes: tuple[str, ...]
    ) -> None: ...


def adder(checks: list[SelftestCheck]) -> AddCheck:
    """A function that appends checks named ``"App adapter <title> [<backend>]"`` to ``checks``.

    Each names the schemes it drives (``SelftestCheck.schemes``), so that a registered
    scheme no check drives is found (tests/core/selftest/test_selftest_adapter_checks.py).
    """

    def add(title: str, backend: str, kind: str, source: str, run: CheckFunction, *, schemes: tuple[str, ...]) -> None:
        checks.append(SelftestCheck(f"App adapter {title} [{backend}]", backend, kind, source, run, schemes))

    return add


def via(module: str, source: str) -> str:
    return f"{source}, through app/core/schemes/{module}.py"


def create(kind: type[S], scheme_id: str, backend: str, params: Mapping[str, Any] | None = None) -> S:
    """``registry.create``, as the scheme class whose parts the check drives."""
    from app.core.schemes import registry

    scheme = registry.create(scheme_id, backend, params)
    if not isinstance(scheme, kind):
        raise SelftestMismatch(f"{scheme_id} [{backend}] is a {type(scheme).__name__}, not a {kind.__name__}")
    return scheme


def expect_refused(what: str, func: Callable[[], Any]) -> None:
    from app.core.schemes.base import SchemeError

    try:
        func()
    except SchemeError:
        return
    raise SelftestMismatch(f"{what} was accepted")


def session(scheme: Any, sender: Any = None) -> tuple[Any, Any]:
    """A completed handshake: (sender, receiver)."""
    sender = sender or scheme.new_sender()
    receiver = scheme.new_receiver()
    receiver.handshake(sender.handshake(receiver.setup()))
    return sender, receiver


def aead_library(algorithm: str, key: bytes) -> Any:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

    return AESGCM(key) if algorithm == "aes-gcm" else ChaCha20Poly1305(key)


def library_private_key(group: str, backend: str, private: Any) -> Any:
    """The library's private key object for a published private key (bytes or integer)."""
    if backend == "tinyec":
        return private
    if group in ("X25519", "X448"):
        if backend == "cryptography":
            from cryptography.hazmat.primitives.asymmetric import x448, x25519

            cls = x25519.X25519PrivateKey if group == "X25519" else x448.X448PrivateKey
            return cls.from_private_bytes(private)
        from Crypto.Protocol import DH

        return (DH.import_x25519_private_key if group == "X25519" else DH.import_x448_private_key)(private)
    if backend == "cryptography":
        from cryptography.hazmat.primitives.asymmetric import ec

        from app.core.schemes.dh import CURVES

        return ec.derive_private_key(private, getattr(ec, str(CURVES[group].cryptography_name))())
    from Crypto.PublicKey import ECC

    return ECC.construct(curve=group, d=private)


def sec1_point(size: int, xy: tuple[int, int]) -> bytes:
    """An uncompressed SEC 1 point: 04 || x || y, each coordinate ``size`` bytes."""
    return b"\x04" + xy[0].to_bytes(size, "big") + xy[1].to_bytes(size, "big")
