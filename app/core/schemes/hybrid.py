"""Hybrid encryption: a KEM gives the AES-256-GCM key, once per session or per message.

RSA-KEM (OAEP-wrapped random key), ECIES (ephemeral DH + HKDF-SHA256), ML-KEM
(FIPS 203) and the X25519 + ML-KEM-768 hybrid (both secrets into one KDF, in the
order TLS's X25519MLKEM768 uses). In the job's exchange pattern
(app.core.schemes.establishment): "session" encapsulates once in the handshake, whose
message is the encapsulation, then seals nonce || ciphertext || tag; "per-message"
sends encapsulation || nonce || ciphertext || tag, a fresh key every message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from cryptography.hazmat.primitives.asymmetric import mlkem

from app.core.schemes.base import (
    Buffer,
    ParamSpec,
    PayloadFormatError,
    Receiver,
    Scheme,
    SchemeInfo,
    SchemeSpec,
    Security,
)
from app.core.schemes.dh import DhGroup, derive_key, dh_group, group_backends, group_security_bits
from app.core.schemes.establishment import KEY_LEN, Kem, KeyEstablishingScheme, start
from app.core.schemes.pke import CryptographyRsaOaep, PycryptodomeRsaOaep, RsaOaep, factoring_strength
from app.core.vocab import Exchange, Family, ParamValue


class RsaKem(Kem):
    """A random AES-256 key wrapped with RSA-OAEP (the E4 construction).

    Not ISO 18033-2's RSA-KEM (a random integer below n raised to e, then a KDF): the
    key itself is the OAEP plaintext.
    """

    def __init__(self, cipher: RsaOaep) -> None:
        self.cipher = cipher
        self.enc_len = cipher.ciphertext_len

    def generate(self) -> tuple[Any, bytes]:
        return self.cipher.generate()

    def load_public(self, public: bytes) -> Any:
        return self.cipher.load_public(public)

    def encapsulate(self, public: Any) -> tuple[bytes, bytes]:
        key = os.urandom(KEY_LEN)
        return key, self.cipher.encrypt(public, key)

    def decapsulate(self, private: Any, enc: Buffer) -> bytes:
        key = self.cipher.decrypt(private, enc)
        if len(key) != KEY_LEN:
            raise PayloadFormatError("unwrapped key has the wrong length")
        return key


class DhKem(Kem):
    """ECIES-style KEM: ephemeral key pair, DH with the static key, HKDF-SHA256.

    The ephemeral public key goes into the HKDF info, binding the key to it.
    """

    def __init__(self, group: DhGroup, kdf_backend: str) -> None:
        self._group = group
        self._kdf_backend = kdf_backend
        self.enc_len = group.public_len

    def generate(self) -> tuple[Any, bytes]:
        return self._group.generate()

    def load_public(self, public: bytes) -> Any:
        # Validated at the handshake, so a bad key is refused before any message (each
        # encapsulation's exchange checks it again).
        probe, _ = self._group.generate()
        self._group.exchange(probe, public)
        return public

    def establish(self, public: bytes) -> tuple[Any, bytes, bytes]:
        key, enc = self.encapsulate(public)  # its exchange validates the key: no probe first
        return public, key, enc

    def encapsulate(self, public: Any) -> tuple[bytes, bytes]:
        ephemeral, ephemeral_public = self._group.generate()
        shared = self._group.exchange(ephemeral, public)
        return derive_key("hkdf-sha256", shared, self._kdf_backend, info=ephemeral_public), ephemeral_public

    def decapsulate(self, private: Any, enc: Buffer) -> bytes:
        enc = bytes(enc)
        shared = self._group.exchange(private, enc)
        return derive_key("hkdf-sha256", shared, self._kdf_backend, info=enc)


#: level -> (private key class, public key class, public key bytes, encapsulation bytes).
#: Typed Any: the two levels' classes share no base class in cryptography's stubs.
_MLKEM: dict[int, tuple[Any, Any, int, int]] = {
    768: (mlkem.MLKEM768PrivateKey, mlkem.MLKEM768PublicKey, 1184, 1088),
    1024: (mlkem.MLKEM1024PrivateKey, mlkem.MLKEM1024PublicKey, 1568, 1568),
}


class MlKem(Kem):
    """ML-KEM (FIPS 203) through OpenSSL; its 32-byte shared secret is the AES key.

    A tampered encapsulation does not raise: ML-KEM's implicit rejection returns a
    pseudorandom key, so the AES-GCM tag check is what rejects the message.
    """

    def __init__(self, level: int) -> None:
        self._private_cls, self._public_cls, self.public_len, self.enc_len = _MLKEM[level]

    def generate(self) -> tuple[Any, bytes]:
        private = self._private_cls.generate()
        return private, private.public_key().public_bytes_raw()

    def load_public(self, public: bytes) -> Any:
        if len(public) != self.public_len:
            raise PayloadFormatError(f"ML-KEM public key must be {self.public_len} bytes, got {len(public)}")
        try:
            return self._public_cls.from_public_bytes(public)  # FIPS 203 modulus check
        except ValueError as exc:
            raise PayloadFormatError(f"invalid ML-KEM public key: {exc}") from None

    def encapsulate(self, public: Any) -> tuple[bytes, bytes]:
        shared, ciphertext = public.encapsulate()
        return shared, ciphertext

    def decapsulate(self, private: Any, enc: Buffer) -> bytes:
        if len(enc) != self.enc_len:
            raise PayloadFormatError(f"ML-KEM ciphertext must be {self.enc_len} bytes, got {len(enc)}")
        shared: bytes = private.decapsulate(enc)
        return shared


class X25519MlKem768(Kem):
    """Hybrid KEM: ML-KEM-768 and ephemeral X25519, secrets combined with HKDF-SHA256.

    Public key and encapsulation put ML-KEM first, as TLS's X25519MLKEM768 does;
    the key is HKDF(ss_mlkem || ss_x25519, info = both encapsulations), so it stays
    secret if either component holds.
    """

    def __init__(self) -> None:
        self._mlkem = MlKem(768)
        self._x25519 = dh_group("X25519", "cryptography")
        self.enc_len = self._mlkem.enc_len + self._x25519.public_len

    def generate(self) -> tuple[Any, bytes]:
        mlkem_private, mlkem_public = self._mlkem.generate()
        x_private, x_public = self._x25519.generate()
        return (mlkem_private, x_private), mlkem_public + x_public

    def load_public(self, public: bytes) -> Any:
        split = self._mlkem.public_len
        if len(public) != split + self._x25519.public_len:
            raise PayloadFormatError("X25519+ML-KEM-768 public key has the wrong length")
        probe, _ = self._x25519.generate()
        self._x25519.exchange(probe, public[split:])
        return self._mlkem.load_public(public[:split]), public[split:]

    def establish(self, public: bytes) -> tuple[Any, bytes, bytes]:
        # As DhKem's: the encapsulation's X25519 exchange validates that half of the key.
        split = self._mlkem.public_len
        if len(public) != split + self._x25519.public_len:
            raise PayloadFormatError("X25519+ML-KEM-768 public key has the wrong length")
        loaded = self._mlkem.load_public(public[:split]), public[split:]
        key, enc = self.encapsulate(loaded)
        return loaded, key, enc

    def encapsulate(self, public: Any) -> tuple[bytes, bytes]:
        mlkem_public, x_public = public
        ss_mlkem, ct = self._mlkem.encapsulate(mlkem_public)
        ephemeral, ephemeral_public = self._x25519.generate()
        ss_x = self._x25519.exchange(ephemeral, x_public)
        enc = ct + ephemeral_public
        return derive_key("hkdf-sha256", ss_mlkem + ss_x, "cryptography", info=enc), enc

    def decapsulate(self, private: Any, enc: Buffer) -> bytes:
        mlkem_private, x_private = private
        enc = bytes(enc)
        if len(enc) != self.enc_len:
            raise PayloadFormatError("X25519+ML-KEM-768 encapsulation has the wrong length")
        split = self._mlkem.enc_len
        ss_mlkem = self._mlkem.decapsulate(mlkem_private, enc[:split])
        ss_x = self._x25519.exchange(x_private, enc[split:])
        return derive_key("hkdf-sha256", ss_mlkem + ss_x, "cryptography", info=enc)


class HybridScheme(KeyEstablishingScheme):
    """A KEM and AES-256-GCM, in the job's exchange pattern."""

    pattern_notes = {
        Exchange.SESSION: ("one encapsulation per session (the handshake), then AES-256-GCM per message",),
        Exchange.PER_MESSAGE: ("a fresh AES-256 key per message",),
    }

    def __init__(
        self,
        scheme_id: str,
        backend: str,
        kem: Kem,
        label: str,
        security: Security,
        params: Mapping[str, ParamValue],
        notes: tuple[str, ...] = (),
    ) -> None:
        self.kem = kem
        self.aead_backend = "pycryptodome" if backend == "pycryptodome" else "cryptography"
        info = SchemeInfo(
            scheme_id=scheme_id,
            family=Family.HYBRID,
            backend=backend,
            params=dict(params),
            label=f"{label} + AES-256-GCM",
            security=security,
            insecure=security.classical_bits < 112,
            authenticated=True,
            notes=notes,
        )
        start(self, info)

    def known_answer_receiver(self, private: Any) -> Receiver:
        """A receiver that holds `private` (the KEM's private key handle) instead of a new key.

        For the self-test's known answers only (app/core/selftest/adapters_encryption.py):
        jobs and profiles reach schemes through `new_receiver`, whose `setup` always
        generates a key.
        """
        receiver = self.new_receiver()
        receiver.private = private  # type: ignore[attr-defined]
        return receiver


def _rsa_kem(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    bits = int(params["bits"])
    cipher = CryptographyRsaOaep(bits) if backend == "cryptography" else PycryptodomeRsaOaep(bits)
    return HybridScheme(
        "rsa-kem", backend, RsaKem(cipher), f"RSA-KEM-{bits} (OAEP)", Security(factoring_strength(bits), 0), params
    )


def _ecies(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    curve = str(params["curve"])
    kem = DhKem(dh_group(curve, backend), backend)
    return HybridScheme(
        "ecies",
        backend,
        kem,
        f"ECIES {curve} (HKDF-SHA256)",
        Security(group_security_bits(curve), 0),
        params,
        ("ephemeral-static ECDH: the encapsulation is the sender's ephemeral public key",),
    )


def _ecies_constraint(backend: str, params: Mapping[str, ParamValue]) -> str | None:
    curve = str(params["curve"])
    if backend not in group_backends(curve):
        return (
            f"ECIES on {curve} is not available in backend {backend!r} (it is in: {', '.join(group_backends(curve))})"
        )
    return None


def _ml_kem(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    level = int(params["level"])
    security = Security(192, 3) if level == 768 else Security(256, 5)
    return HybridScheme(
        "ml-kem",
        backend,
        MlKem(level),
        f"ML-KEM-{level}",
        security,
        params,
        ("FIPS 203; implicit rejection: a tampered ciphertext fails at the AES-GCM tag",),
    )


def _x25519_ml_kem(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    # Classical strength: an attacker must break both; ML-KEM-768 alone is ~192 bits.
    return HybridScheme(
        "x25519-ml-kem-768",
        backend,
        X25519MlKem768(),
        "X25519 + ML-KEM-768",
        Security(192, 3),
        params,
        ("secure while either X25519 or ML-KEM-768 holds",),
    )


SPECS: list[SchemeSpec] = [
    SchemeSpec(
        "rsa-kem",
        "RSA-KEM",
        Family.HYBRID,
        ("cryptography", "pycryptodome"),
        (ParamSpec("bits", 3072, (2048, 3072, 4096), help="RSA modulus size"),),
        _rsa_kem,
        "A random AES-256 key wrapped with RSA-OAEP (SHA-256), per session or per message.",
    ),
    SchemeSpec(
        "ecies",
        "ECIES",
        Family.HYBRID,
        ("cryptography", "pycryptodome"),
        (ParamSpec("curve", "secp256k1", ("secp256k1", "P-256", "X25519"), help="curve"),),
        _ecies,
        "Ephemeral-static ECDH, HKDF-SHA256, then AES-256-GCM, per session or per message.",
        constraint=_ecies_constraint,
    ),
    SchemeSpec(
        "ml-kem",
        "ML-KEM",
        Family.HYBRID,
        ("cryptography",),
        (ParamSpec("level", 768, (768, 1024), help="parameter set"),),
        _ml_kem,
        "Post-quantum KEM (FIPS 203), then AES-256-GCM, per session or per message.",
    ),
    SchemeSpec(
        "x25519-ml-kem-768",
        "X25519 + ML-KEM-768",
        Family.HYBRID,
        ("cryptography",),
        (),
        _x25519_ml_kem,
        "Classical + post-quantum hybrid KEM, both secrets into one HKDF-SHA256.",
    ),
]
