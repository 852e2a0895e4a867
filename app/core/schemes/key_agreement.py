"""Key agreement + KDF + AES-256-GCM: ECDH on Weierstrass curves, X25519, X448.

The receiver publishes a static public key; the sender makes an ephemeral key pair,
derives the session key and sends its ephemeral public key as the handshake; both
then seal and open with AES-256-GCM under the derived key (the E1 design).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.schemes.base import Buffer, ParamSpec, Payload, Receiver, Scheme, SchemeInfo, SchemeSpec, Security, Sender
from app.core.schemes.dh import (
    CURVE_ALIASES,
    CURVES,
    KDFS,
    DhGroup,
    canonical_curve,
    derive_key,
    dh_group,
    group_backends,
    group_security_bits,
)
from app.core.schemes.symmetric import AeadKey, AeadPayloadScheme
from app.core.vocab import Family, ParamValue

#: tinyec does only the curve arithmetic; the KDF and AES-GCM around it come from
#: pycryptodome, as in the pure-Python scripts tinyec users write.
AEAD_BACKEND = {"cryptography": "cryptography", "pycryptodome": "pycryptodome", "tinyec": "pycryptodome"}


class _KaSender(Sender):
    def __init__(self, scheme: KeyAgreementScheme) -> None:
        self._scheme = scheme

    def handshake(self, public: bytes) -> bytes:
        group = self._scheme.group
        ephemeral, ephemeral_public = group.generate()
        shared = group.exchange(ephemeral, public)
        # Rebound to the session key's seal: no per-call check that the handshake ran
        # (mypy sees an unbound method type on the left).
        self.seal = self._scheme.session_key(shared).seal  # type: ignore[method-assign, assignment]
        return ephemeral_public

    def seal(self, plaintext: Buffer) -> Payload:
        raise RuntimeError("handshake() must run before seal()")


class _KaReceiver(Receiver):
    def __init__(self, scheme: KeyAgreementScheme) -> None:
        self._scheme = scheme
        self._private: Any = None

    def setup(self) -> bytes:
        self._private, public = self._scheme.group.generate()
        return public

    def handshake(self, message: bytes) -> None:
        shared = self._scheme.group.exchange(self._private, message)
        self.open = self._scheme.session_key(shared).open  # type: ignore[method-assign, assignment]  # as above

    def open(self, payload: Buffer) -> Buffer:
        raise RuntimeError("handshake() must run before open()")


class KeyAgreementScheme(AeadPayloadScheme):
    def __init__(
        self, scheme_id: str, group_name: str, backend: str, kdf: str, params: Mapping[str, ParamValue]
    ) -> None:
        self.group: DhGroup = dh_group(group_name, backend)
        self.kdf = kdf
        self.aead_backend = AEAD_BACKEND[backend]
        bits = group_security_bits(group_name)
        kdf_label = {"sha256": "SHA-256", "hkdf-sha256": "HKDF-SHA256", "hkdf-sha384": "HKDF-SHA384"}[kdf]
        prefix = "ECDH " if scheme_id == "ecdh" else ""
        notes = ["validates the peer's public key before use"]
        if backend == "tinyec":
            notes.append("pure-Python curve arithmetic (not constant time); KDF and AES-GCM from pycryptodome")
        self.info = SchemeInfo(
            scheme_id=scheme_id,
            family=Family.KEY_AGREEMENT,
            backend=backend,
            params=dict(params),
            label=f"{prefix}{self.group.name} + {kdf_label} + AES-256-GCM",
            security=Security(classical_bits=bits, pq_category=0),
            insecure=False,
            authenticated=True,
            notes=tuple(notes),
        )

    def session_key(self, shared: bytes) -> AeadKey:
        return AeadKey("aes-gcm", self.aead_backend, derive_key(self.kdf, shared, self.aead_backend))

    def new_sender(self) -> Sender:
        return _KaSender(self)

    def new_receiver(self) -> Receiver:
        return _KaReceiver(self)


KDF_PARAM = ParamSpec("kdf", "hkdf-sha256", KDFS, help="how the shared secret becomes the AES-256 key")


def _ecdh_factory(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    return KeyAgreementScheme("ecdh", str(params["curve"]), backend, str(params["kdf"]), params)


def _ecdh_constraint(backend: str, params: Mapping[str, ParamValue]) -> str | None:
    curve = canonical_curve(str(params["curve"]))
    if backend not in group_backends(curve):
        return (
            f"curve {params['curve']!r} is not available in backend {backend!r} "
            f"(it is in: {', '.join(group_backends(curve))})"
        )
    return None


def _montgomery_factory(name: str) -> Any:
    def factory(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
        return KeyAgreementScheme(name.lower(), name, backend, str(params["kdf"]), params)

    return factory


_ECDH_CURVES = tuple(name for name in CURVES if name != "secp256k1") + tuple(CURVE_ALIASES)[:2]

SPECS: list[SchemeSpec] = [
    SchemeSpec(
        scheme_id="ecdh",
        name="ECDH",
        family=Family.KEY_AGREEMENT,
        backends=("cryptography", "pycryptodome", "tinyec"),
        params=(ParamSpec("curve", "P-256", _ECDH_CURVES, help="elliptic curve (secp256r1 = P-256)"), KDF_PARAM),
        factory=_ecdh_factory,
        constraint=_ecdh_constraint,
        description="Ephemeral-static ECDH, KDF, then AES-256-GCM for every message.",
    ),
    *(
        SchemeSpec(
            scheme_id=name.lower(),
            name=name,
            family=Family.KEY_AGREEMENT,
            backends=("cryptography", "pycryptodome"),
            params=(KDF_PARAM,),
            factory=_montgomery_factory(name),
            description=f"Ephemeral-static {name} (RFC 7748), KDF, then AES-256-GCM.",
        )
        for name in ("X25519", "X448")
    ),
]
