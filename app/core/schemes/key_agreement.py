"""Key agreement + KDF + AES-256-GCM: ECDH on Weierstrass curves, X25519, X448.

The receiver publishes a static public key; the sender makes an ephemeral key pair and
derives the key with the KDF; its ephemeral public key is the "encapsulation"
(app.core.schemes.establishment). In the "session" pattern (the E1 design, the default)
that happens once, in the handshake, and both ends then seal and open with AES-256-GCM
under the session key; in "per-message" every message carries its own ephemeral key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.schemes.base import Buffer, ParamSpec, Scheme, SchemeInfo, SchemeSpec, Security
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
from app.core.schemes.establishment import Kem, KeyEstablishingScheme, start
from app.core.vocab import Exchange, Family, ParamValue

#: tinyec does only the curve arithmetic; the KDF and AES-GCM around it come from
#: pycryptodome, as in the pure-Python scripts tinyec users write.
AEAD_BACKEND = {"cryptography": "cryptography", "pycryptodome": "pycryptodome", "tinyec": "pycryptodome"}


class AgreementKem(Kem):
    """Ephemeral-static DH as a KEM: the ephemeral public key is the encapsulation, the KDF
    of the shared secret the key. The peer's key is validated by every exchange."""

    def __init__(self, group: DhGroup, kdf: str, kdf_backend: str) -> None:
        self.group = group
        self._kdf = kdf
        self._kdf_backend = kdf_backend
        self.enc_len = group.public_len

    def generate(self) -> tuple[Any, bytes]:
        return self.group.generate()

    def load_public(self, public: bytes) -> Any:
        # Per message: validated at the handshake, so a bad key is refused before any message.
        probe, _ = self.group.generate()
        self.group.exchange(probe, public)
        return public

    def establish(self, public: bytes) -> tuple[Any, bytes, bytes]:
        key, enc = self.encapsulate(public)  # its exchange validates the key: no probe first
        return public, key, enc

    def derive(self, shared: bytes) -> bytes:
        return derive_key(self._kdf, shared, self._kdf_backend)

    def encapsulate(self, public: Any) -> tuple[bytes, bytes]:
        ephemeral, ephemeral_public = self.group.generate()
        return self.derive(self.group.exchange(ephemeral, public)), ephemeral_public

    def decapsulate(self, private: Any, enc: Buffer) -> bytes:
        return self.derive(self.group.exchange(private, bytes(enc)))


class KeyAgreementScheme(KeyEstablishingScheme):
    kem: AgreementKem
    enc_name = "ephemeral key"
    pattern_notes = {
        Exchange.SESSION: ("one key agreement per session (the handshake), then AES-256-GCM per message",),
        Exchange.PER_MESSAGE: ("a fresh ephemeral key, agreement and AES-256 key in every message",),
    }

    def __init__(
        self, scheme_id: str, group_name: str, backend: str, kdf: str, params: Mapping[str, ParamValue]
    ) -> None:
        self.group: DhGroup = dh_group(group_name, backend)
        self.kdf = kdf
        self.aead_backend = AEAD_BACKEND[backend]
        self.kem = AgreementKem(self.group, kdf, self.aead_backend)
        bits = group_security_bits(group_name)
        kdf_label = {"sha256": "SHA-256", "hkdf-sha256": "HKDF-SHA256", "hkdf-sha384": "HKDF-SHA384"}[kdf]
        prefix = "ECDH " if scheme_id == "ecdh" else ""
        notes = ["validates the peer's public key before use"]
        if backend == "tinyec":
            notes.append("pure-Python curve arithmetic (not constant time); KDF and AES-GCM from pycryptodome")
        info = SchemeInfo(
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
        start(self, info)

    def session_key_of(self, shared: bytes) -> Any:
        """The AEAD key of a shared secret, as both ends derive it (the self-test's check)."""
        return self.session_key(self.kem.derive(shared))


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
        description="Ephemeral-static ECDH, KDF, then AES-256-GCM, per session or per message.",
    ),
    *(
        SchemeSpec(
            scheme_id=name.lower(),
            name=name,
            family=Family.KEY_AGREEMENT,
            backends=("cryptography", "pycryptodome"),
            params=(KDF_PARAM,),
            factory=_montgomery_factory(name),
            description=f"Ephemeral-static {name} (RFC 7748), KDF, then AES-256-GCM, per session or per message.",
        )
        for name in ("X25519", "X448")
    ),
]
