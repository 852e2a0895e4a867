"""Diffie-Hellman groups (elliptic curves, X25519/X448) behind one small interface.

Key agreement, ECIES and the X25519+ML-KEM hybrid all need the same two steps:
generate a key pair, and combine a private key with a peer's encoded public key.
`DhGroup` does those in each backend and validates the peer's public key before
use (encoding, coordinates in range, on the curve, not the identity), which tinyec
itself does not do.
"""

from __future__ import annotations

import abc
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from Crypto.Hash import SHA256 as PycryptodomeSHA256
from Crypto.Hash import SHA384 as PycryptodomeSHA384
from Crypto.Protocol.KDF import HKDF as PycryptodomeHKDF
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF as CryptographyHKDF

from app.core.schemes.base import PayloadFormatError


@dataclass(frozen=True)
class CurveInfo:
    name: str
    security_bits: int
    field_bytes: int
    cryptography_name: str | None  # class name in cryptography's ec module
    tinyec_name: str | None
    pycryptodome_name: str | None


CURVES: dict[str, CurveInfo] = {
    c.name: c
    for c in (
        CurveInfo("P-256", 128, 32, "SECP256R1", "secp256r1", "P-256"),
        CurveInfo("P-384", 192, 48, "SECP384R1", "secp384r1", "P-384"),
        CurveInfo("P-521", 256, 66, "SECP521R1", "secp521r1", "P-521"),
        CurveInfo("brainpoolP256r1", 128, 32, "BrainpoolP256R1", "brainpoolP256r1", None),
        CurveInfo("brainpoolP384r1", 192, 48, "BrainpoolP384R1", "brainpoolP384r1", None),
        CurveInfo("secp256k1", 128, 32, "SECP256K1", None, None),
    )
}
#: Names users know the same curves by (SEC 2 names for the NIST curves).
CURVE_ALIASES = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521", "prime256v1": "P-256"}

#: Montgomery curves: name -> (security bits, public key bytes).
MONTGOMERY = {"X25519": (128, 32), "X448": (224, 56)}


def canonical_curve(name: str) -> str:
    return CURVE_ALIASES.get(name, name)


class DhGroup(abc.ABC):
    """Key generation and exchange in one group and backend."""

    name: str
    public_len: int

    @abc.abstractmethod
    def generate(self) -> tuple[Any, bytes]:
        """Return (private key handle, encoded public key)."""

    @abc.abstractmethod
    def exchange(self, private: Any, peer_public: bytes) -> bytes:
        """Validate `peer_public` and return the shared secret.

        Raises:
            PayloadFormatError: the peer's public key is malformed or invalid.
        """

    def _check_length(self, peer_public: bytes) -> None:
        if len(peer_public) != self.public_len:
            raise PayloadFormatError(f"{self.name} public key must be {self.public_len} bytes, got {len(peer_public)}")


class CryptographyEc(DhGroup):
    """ECDH on a Weierstrass curve through OpenSSL; points as uncompressed SEC1."""

    def __init__(self, curve: CurveInfo) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        self._ec = ec
        self._curve = getattr(ec, str(curve.cryptography_name))()
        self._encoding = (Encoding.X962, PublicFormat.UncompressedPoint)
        self.name = curve.name
        self.public_len = 1 + 2 * curve.field_bytes

    def generate(self) -> tuple[Any, bytes]:
        private = self._ec.generate_private_key(self._curve)
        return private, private.public_key().public_bytes(*self._encoding)

    def exchange(self, private: Any, peer_public: bytes) -> bytes:
        self._check_length(peer_public)
        if peer_public[0] != 0x04:
            raise PayloadFormatError(f"{self.name} public key is not an uncompressed point")
        try:
            # OpenSSL checks coordinates < p and the curve equation here.
            peer = self._ec.EllipticCurvePublicKey.from_encoded_point(self._curve, peer_public)
        except ValueError as exc:
            raise PayloadFormatError(f"invalid {self.name} public key: {exc}") from None
        shared: bytes = private.exchange(self._ec.ECDH(), peer)
        return shared


class PycryptodomeEc(DhGroup):
    """ECDH on a NIST curve through pycryptodome (its own C code, no OpenSSL)."""

    def __init__(self, curve: CurveInfo) -> None:
        from Crypto.Protocol.DH import key_agreement
        from Crypto.PublicKey import ECC

        self._ECC = ECC
        self._agree = key_agreement
        self._curve = str(curve.pycryptodome_name)
        self.name = curve.name
        self.public_len = 1 + 2 * curve.field_bytes

    def generate(self) -> tuple[Any, bytes]:
        private = self._ECC.generate(curve=self._curve)
        return private, private.public_key().export_key(format="SEC1", compress=False)

    def exchange(self, private: Any, peer_public: bytes) -> bytes:
        self._check_length(peer_public)
        if peer_public[0] != 0x04:
            raise PayloadFormatError(f"{self.name} public key is not an uncompressed point")
        try:
            # import_key rejects points off the curve and coordinates out of range.
            peer = self._ECC.import_key(peer_public, curve_name=self._curve)
        except ValueError as exc:
            raise PayloadFormatError(f"invalid {self.name} public key: {exc}") from None
        # pycryptodome decodes 04 || 00..00 as the point at infinity (its (0, 0)
        # convention) and import_key accepts it; key_agreement would then raise a
        # bare ValueError. Reject the identity here, as a format error.
        if peer.pointQ.is_point_at_infinity():
            raise PayloadFormatError(f"{self.name} public key is the point at infinity")
        shared: bytes = self._agree(static_priv=private, static_pub=peer, kdf=lambda z: z)
        return shared


class TinyecEc(DhGroup):
    """ECDH in pure Python with tinyec, with the point validation tinyec lacks."""

    def __init__(self, curve: CurveInfo) -> None:
        from tinyec import ec, registry

        self._point = ec.Point
        self._curve = registry.get_curve(str(curve.tinyec_name))
        self._p = self._curve.field.p
        self._n = self._curve.field.n
        self._size = curve.field_bytes
        self.name = curve.name
        self.public_len = 1 + 2 * curve.field_bytes

    def _encode(self, point: Any) -> bytes:
        encoded: bytes = b"\x04" + point.x.to_bytes(self._size, "big") + point.y.to_bytes(self._size, "big")
        return encoded

    def generate(self) -> tuple[Any, bytes]:
        private = secrets.randbelow(self._n - 1) + 1
        return private, self._encode(private * self._curve.g)

    def validate(self, peer_public: bytes) -> Any:
        """Decode and validate a point: encoding, range, curve equation, not identity.

        The registry curves all have cofactor 1, so a point on the curve is in the
        prime-order group; no separate subgroup check is needed.
        """
        self._check_length(peer_public)
        if peer_public[0] != 0x04:
            raise PayloadFormatError(f"{self.name} public key is not an uncompressed point")
        x = int.from_bytes(peer_public[1 : 1 + self._size], "big")
        y = int.from_bytes(peer_public[1 + self._size :], "big")
        if not (0 <= x < self._p and 0 <= y < self._p):
            raise PayloadFormatError(f"{self.name} public key coordinate out of range")
        if x == 0 and y == 0:
            raise PayloadFormatError(f"{self.name} public key is the identity encoding")
        if not self._curve.on_curve(x, y):
            raise PayloadFormatError(f"{self.name} public key is not on the curve")
        return self._point(self._curve, x, y)

    def exchange(self, private: Any, peer_public: bytes) -> bytes:
        shared = private * self.validate(peer_public)
        if shared.x is None or (shared.x == 0 and shared.y == 0):
            raise PayloadFormatError(f"{self.name} exchange produced the point at infinity")
        return int(shared.x).to_bytes(self._size, "big")


class CryptographyMontgomery(DhGroup):
    """X25519 / X448 through OpenSSL."""

    def __init__(self, name: str) -> None:
        from cryptography.hazmat.primitives.asymmetric import x448, x25519

        module = x25519 if name == "X25519" else x448
        self._private_cls = module.X25519PrivateKey if name == "X25519" else module.X448PrivateKey
        self._public_cls = module.X25519PublicKey if name == "X25519" else module.X448PublicKey
        self.name = name
        self.public_len = MONTGOMERY[name][1]

    def generate(self) -> tuple[Any, bytes]:
        private = self._private_cls.generate()
        return private, private.public_key().public_bytes_raw()

    def exchange(self, private: Any, peer_public: bytes) -> bytes:
        self._check_length(peer_public)
        try:
            shared: bytes = private.exchange(self._public_cls.from_public_bytes(peer_public))
        except ValueError as exc:  # OpenSSL refuses an all-zero (low-order) result
            raise PayloadFormatError(f"invalid {self.name} public key: {exc}") from None
        return _reject_all_zero(self.name, shared)


class PycryptodomeMontgomery(DhGroup):
    """X25519 / X448 through pycryptodome."""

    def __init__(self, name: str) -> None:
        from Crypto.Protocol import DH
        from Crypto.PublicKey import ECC

        self._ECC = ECC
        self._agree = DH.key_agreement
        self._import = DH.import_x25519_public_key if name == "X25519" else DH.import_x448_public_key
        self._curve = "Curve25519" if name == "X25519" else "Curve448"
        self.name = name
        self.public_len = MONTGOMERY[name][1]

    def generate(self) -> tuple[Any, bytes]:
        private = self._ECC.generate(curve=self._curve)
        return private, private.public_key().export_key(format="raw")

    def exchange(self, private: Any, peer_public: bytes) -> bytes:
        self._check_length(peer_public)
        try:
            peer = self._import(peer_public)
            shared: bytes = self._agree(static_priv=private, static_pub=peer, kdf=lambda z: z)
        except ValueError as exc:  # pycryptodome rejects low-order points
            raise PayloadFormatError(f"invalid {self.name} public key: {exc}") from None
        return _reject_all_zero(self.name, shared)


def _reject_all_zero(name: str, shared: bytes) -> bytes:
    # RFC 7748 section 6.1: an all-zero output means the peer sent a low-order point.
    if not any(shared):
        raise PayloadFormatError(f"{name} exchange gave the all-zero secret (low-order public key)")
    return shared


def dh_group(group: str, backend: str) -> DhGroup:
    """The `DhGroup` for a curve or Montgomery group name in one backend."""
    group = canonical_curve(group)
    if group in MONTGOMERY:
        if backend == "cryptography":
            return CryptographyMontgomery(group)
        if backend == "pycryptodome":
            return PycryptodomeMontgomery(group)
    elif group in CURVES:
        curve = CURVES[group]
        if backend == "cryptography" and curve.cryptography_name:
            return CryptographyEc(curve)
        if backend == "pycryptodome" and curve.pycryptodome_name:
            return PycryptodomeEc(curve)
        if backend == "tinyec" and curve.tinyec_name:
            return TinyecEc(curve)
    raise ValueError(f"{group} is not available in backend {backend!r}")


def group_backends(group: str) -> tuple[str, ...]:
    """Backends that implement `group`."""
    group = canonical_curve(group)
    if group in MONTGOMERY:
        return ("cryptography", "pycryptodome")
    curve = CURVES[group]
    names = (
        ("cryptography", curve.cryptography_name),
        ("pycryptodome", curve.pycryptodome_name),
        ("tinyec", curve.tinyec_name),
    )
    return tuple(backend for backend, available in names if available)


def group_security_bits(group: str) -> int:
    group = canonical_curve(group)
    return MONTGOMERY[group][0] if group in MONTGOMERY else CURVES[group].security_bits


# --- key derivation from a shared secret --------------------------------------------

KDFS = ("sha256", "hkdf-sha256", "hkdf-sha384")
KDF_INFO = b"cryptobench session key"


def derive_key(kdf: str, shared: bytes, backend: str, length: int = 32, info: bytes = KDF_INFO) -> bytes:
    """Turn a DH shared secret into an AEAD key.

    "sha256" is the original E1 construction (SHA-256 of the secret; fine for a
    uniformly hashed one-time secret but not a standard KDF); "hkdf-*" is RFC 5869
    with no salt and a fixed info string.
    """
    if kdf == "sha256":
        if length != 32:
            raise ValueError("the sha256 KDF gives exactly 32 bytes")
        return hashlib.sha256(shared).digest()
    sha256 = kdf == "hkdf-sha256"
    if backend == "pycryptodome" or backend == "tinyec":
        key: bytes = PycryptodomeHKDF(
            shared, length, b"", PycryptodomeSHA256 if sha256 else PycryptodomeSHA384, context=info
        )
        return key
    algorithm = hashes.SHA256() if sha256 else hashes.SHA384()
    return CryptographyHKDF(algorithm=algorithm, length=length, salt=None, info=info).derive(shared)
