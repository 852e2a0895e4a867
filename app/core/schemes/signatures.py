"""Signature schemes: ECDSA, Ed25519, Ed448, RSA-PSS and ML-DSA.

The signer owns the key pair (see `KEYGEN_ON_SENDER`): `Sender.handshake` generates
it, which is the timed "keygen", and returns the encoded verification key as the
handshake message; `Receiver.handshake` validates that key (`sigkeys`: one rule per
algorithm for both backends) and imports it. Each message
travels as

    signature length (2 bytes, big-endian) || signature || message

and `seal` returns those three parts so the message itself is never copied.

The session logic (`_SignatureSender`, `_SignatureReceiver`, `SignatureScheme`) is
written once; everything a library does differently lives in one small adapter per
algorithm and backend, behind `_SignatureAdapter`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, cast

from Crypto.Hash import SHA256, SHA384, SHA512
from Crypto.PublicKey import ECC, RSA
from Crypto.Signature import DSS, eddsa, pss
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa

from app.core.schemes.base import (
    AuthenticationError,
    Buffer,
    ParamSpec,
    Payload,
    PayloadFormatError,
    Receiver,
    Scheme,
    SchemeInfo,
    SchemeSpec,
    Security,
    Sender,
    TamperSpot,
)
from app.core.schemes.sigkeys import check_eddsa_key, check_rsa_numbers, check_sec1_point, reject_key
from app.core.vocab import Family, ParamValue

#: Bytes of the big-endian signature length that precedes the signature.
LENGTH_PREFIX = 2

SignFn = Callable[[Buffer], bytes]
#: verify(signature, message): returns on success, raises one of the adapter's
#: `verify_errors` when the signature does not verify.
VerifyFn = Callable[[Buffer, Buffer], Any]


# --------------------------------------------------------------------------- metadata


@dataclass(frozen=True)
class _Algorithm:
    """What one parameter set is, independent of the backend that computes it."""

    label: str
    security: Security
    #: Largest signature this parameter set produces (sizes the wire frame and lets
    #: the receiver reject an impossible length before calling the library).
    max_signature: int
    #: Offset inside the signature of a byte whose flip must be rejected as a forgery
    #: rather than as a DER format error; None means "the middle byte".
    probe_offset: int | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class _Curve:
    """A NIST prime curve with the digest FIPS 186-5 pairs it with."""

    name: str  # "P-256"
    bits: int
    classical_bits: int
    digest: str  # "SHA-256"

    @property
    def coordinate_bytes(self) -> int:
        return (self.bits + 7) // 8

    @property
    def point_bytes(self) -> int:
        """Length of an uncompressed SEC1 point: 0x04 || X || Y."""
        return 1 + 2 * self.coordinate_bytes

    @property
    def max_der_signature(self) -> int:
        """Largest DER SEQUENCE { INTEGER r, INTEGER s } for this curve.

        r and s are below the group order (as many bits as the field here), so each
        INTEGER holds at most bits // 8 + 1 bytes (one leading zero when the top bit
        is set) plus a 2-byte tag and length; the SEQUENCE needs a long-form length
        (3 header bytes) once its content passes 127 bytes (P-521).
        """
        content = 2 * (2 + self.bits // 8 + 1)
        return content + (2 if content < 128 else 3)


_CURVES: Mapping[str, _Curve] = {
    "P-256": _Curve("P-256", 256, 128, "SHA-256"),
    "P-384": _Curve("P-384", 384, 192, "SHA-384"),
    "P-521": _Curve("P-521", 521, 256, "SHA-512"),
}

_RSA_CLASSICAL_BITS: Mapping[int, int] = {2048: 112, 3072: 128, 4096: 152}
_RSA_SALT_BYTES = 32  # = SHA-256 digest length, as the brief and RFC 8017 advise

#: FIPS 204 sizes and NIST categories (classical bits = the AES key of the category).
_MLDSA: Mapping[int, tuple[int, int, int, int]] = {
    # level: (public key bytes, signature bytes, pq category, classical bits)
    44: (1312, 2420, 2, 128),
    65: (1952, 3309, 3, 192),
    87: (2592, 4627, 5, 256),
}

_EDDSA: Mapping[str, tuple[int, int, int]] = {
    # name: (public key bytes, signature bytes, classical bits)
    "Ed25519": (32, 64, 128),
    "Ed448": (57, 114, 224),
}


# --------------------------------------------------------------------------- adapters


class _SignatureAdapter(abc.ABC):
    """One signature algorithm in one backend: keygen, encoding, sign, verify.

    Adapters hand back plain callables so the timed `seal`/`open` make one call into
    the library (plus, where the library needs it, a hash object) and nothing else.
    """

    #: Library exceptions that mean "this signature does not verify"; the receiver
    #: turns each into `AuthenticationError`.
    verify_errors: tuple[type[BaseException], ...] = (ValueError,)

    def generate(self) -> tuple[SignFn, bytes]:
        """Generate a key pair; return the signing function and the encoded public key."""
        return self.signer(self.new_key())

    @abc.abstractmethod
    def new_key(self) -> Any:
        """A fresh private key, as the library's own key object."""

    @abc.abstractmethod
    def signer(self, key: Any) -> tuple[SignFn, bytes]:
        """The signing function and encoded public key of a library private key.

        Split from `generate` so the self-test signs through this same code with the
        published keys of RFC 8032 and RFC 6979 (`SignatureScheme.known_answer_sender`).
        """

    @abc.abstractmethod
    def load(self, encoded: bytes) -> VerifyFn:
        """Import and validate an encoded public key.

        Raises:
            PayloadFormatError: the encoding is malformed or not a valid key.
        """


class _CryptographyEcdsa(_SignatureAdapter):
    verify_errors = (InvalidSignature,)

    _CURVE_CLASSES: Mapping[str, type[ec.EllipticCurve]] = {
        "P-256": ec.SECP256R1,
        "P-384": ec.SECP384R1,
        "P-521": ec.SECP521R1,
    }
    _HASHES: Mapping[str, type[hashes.HashAlgorithm]] = {
        "SHA-256": hashes.SHA256,
        "SHA-384": hashes.SHA384,
        "SHA-512": hashes.SHA512,
    }

    def __init__(self, curve: _Curve) -> None:
        self._curve = curve
        self._ec_curve = self._CURVE_CLASSES[curve.name]()
        self._algorithm = ec.ECDSA(self._HASHES[curve.digest]())

    def new_key(self) -> Any:
        return ec.generate_private_key(self._ec_curve)

    def signer(self, key: Any) -> tuple[SignFn, bytes]:
        algorithm = self._algorithm
        encoded = key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        sign = key.sign
        return (lambda message: sign(message, algorithm)), encoded

    def load(self, encoded: bytes) -> VerifyFn:
        check_sec1_point(f"ECDSA {self._curve.name}", self._curve.coordinate_bytes, encoded)
        try:
            # Checks the point lies on the curve (OpenSSL EC_POINT_oct2point).
            public = ec.EllipticCurvePublicKey.from_encoded_point(self._ec_curve, encoded)
        except ValueError as error:
            reject_key(f"ECDSA {self._curve.name}", error)
        algorithm = self._algorithm
        verify = public.verify
        return lambda signature, message: verify(signature, message, algorithm)


class _PycryptodomeEcdsa(_SignatureAdapter):
    _HASHES: Mapping[str, Any] = {"SHA-256": SHA256, "SHA-384": SHA384, "SHA-512": SHA512}

    def __init__(self, curve: _Curve) -> None:
        self._curve = curve
        self._hash_new = self._HASHES[curve.digest].new

    def new_key(self) -> Any:
        return ECC.generate(curve=self._curve.name)

    def signer(self, key: Any) -> tuple[SignFn, bytes]:
        # FIPS 186-3 mode: a fresh random nonce per signature, like OpenSSL's default.
        signer = DSS.new(key, "fips-186-3", encoding="der")
        hash_new = self._hash_new
        encoded = key.public_key().export_key(format="SEC1", compress=False)
        sign = signer.sign
        return (lambda message: sign(hash_new(message))), encoded

    def load(self, encoded: bytes) -> VerifyFn:
        check_sec1_point(f"ECDSA {self._curve.name}", self._curve.coordinate_bytes, encoded)
        try:
            # import_key rejects points that are not on the named curve.
            public = ECC.import_key(encoded, curve_name=self._curve.name)
        except (ValueError, TypeError, IndexError) as error:
            reject_key(f"ECDSA {self._curve.name}", error)
        if public.pointQ.is_point_at_infinity():  # its (0, 0) convention; see check_sec1_point
            reject_key(f"ECDSA {self._curve.name}", "the point at infinity (identity)")
        verify = DSS.new(public, "fips-186-3", encoding="der").verify
        hash_new = self._hash_new
        # pycryptodome's DER decoder accepts only bytes, not a memoryview.
        return lambda signature, message: verify(hash_new(message), bytes(signature))


class _CryptographyEddsa(_SignatureAdapter):
    verify_errors = (InvalidSignature,)

    _CLASSES: Mapping[str, tuple[Any, Any]] = {
        "Ed25519": (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey),
        "Ed448": (ed448.Ed448PrivateKey, ed448.Ed448PublicKey),
    }

    def __init__(self, curve: str) -> None:
        self._curve = curve
        self._private_class, self._public_class = self._CLASSES[curve]

    def new_key(self) -> Any:
        return self._private_class.generate()

    def signer(self, key: Any) -> tuple[SignFn, bytes]:
        return key.sign, key.public_key().public_bytes_raw()

    def load(self, encoded: bytes) -> VerifyFn:
        # OpenSSL imports any 32/57 bytes (it decodes the point only when verifying),
        # so the on-curve test is ours; without it such a key imports here and not
        # in pycryptodome.
        check_eddsa_key(self._curve, encoded, on_curve=True)
        try:
            public = self._public_class.from_public_bytes(encoded)
        except ValueError as error:
            reject_key(self._curve, error)
        verify: VerifyFn = public.verify
        return verify


class _PycryptodomeEddsa(_SignatureAdapter):
    def __init__(self, curve: str) -> None:
        self._curve = curve

    def new_key(self) -> Any:
        return ECC.generate(curve=self._curve)

    def signer(self, key: Any) -> tuple[SignFn, bytes]:
        # pycryptodome takes any bytes-like message; its stubs say bytes (also below).
        sign = cast(SignFn, eddsa.new(key, "rfc8032").sign)
        return sign, key.public_key().export_key(format="raw")

    def load(self, encoded: bytes) -> VerifyFn:
        # Pins the length first (import_public_key picks the curve from it); the
        # import itself refuses a point off the curve.
        check_eddsa_key(self._curve, encoded, on_curve=False)
        try:
            public = eddsa.import_public_key(encoded)
        except (ValueError, TypeError) as error:
            reject_key(self._curve, error)
        verify = cast(VerifyFn, eddsa.new(public, "rfc8032").verify)
        return lambda signature, message: verify(message, signature)


class _CryptographyRsaPss(_SignatureAdapter):
    verify_errors = (InvalidSignature,)

    def __init__(self, bits: int) -> None:
        self._bits = bits
        self._padding = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=_RSA_SALT_BYTES)
        self._hash = hashes.SHA256()

    def new_key(self) -> Any:
        return rsa.generate_private_key(public_exponent=65537, key_size=self._bits)

    def signer(self, key: Any) -> tuple[SignFn, bytes]:
        encoded = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        sign, pad, digest = key.sign, self._padding, self._hash
        return (lambda message: sign(message, pad, digest)), encoded

    def load(self, encoded: bytes) -> VerifyFn:
        try:
            public = serialization.load_der_public_key(encoded)
        except (ValueError, UnsupportedAlgorithm) as error:
            reject_key(f"RSA-{self._bits}", error)
        if not isinstance(public, rsa.RSAPublicKey):
            reject_key(f"RSA-{self._bits}", ValueError(f"not an RSA key ({type(public).__name__})"))
        numbers = public.public_numbers()
        check_rsa_numbers(f"RSA-{self._bits}", self._bits, numbers.n, numbers.e)
        verify = cast(Callable[[Buffer, Buffer, Any, Any], None], public.verify)  # bytes-like, as above
        pad, digest = self._padding, self._hash
        return lambda signature, message: verify(signature, message, pad, digest)


class _PycryptodomeRsaPss(_SignatureAdapter):
    def __init__(self, bits: int) -> None:
        self._bits = bits

    def new_key(self) -> Any:
        return RSA.generate(self._bits, e=65537)

    def signer(self, key: Any) -> tuple[SignFn, bytes]:
        # The default mask is MGF1 with the message's hash (SHA-256), as in cryptography.
        sign = pss.new(key, salt_bytes=_RSA_SALT_BYTES).sign
        return (lambda message: sign(SHA256.new(message))), key.public_key().export_key(format="DER")

    def load(self, encoded: bytes) -> VerifyFn:
        try:
            public = RSA.import_key(encoded)
        except (ValueError, TypeError, IndexError) as error:
            reject_key(f"RSA-{self._bits}", error)
        if public.has_private():
            reject_key(f"RSA-{self._bits}", ValueError("a private key is not a verification key"))
        check_rsa_numbers(f"RSA-{self._bits}", self._bits, int(public.n), int(public.e))
        verify = cast(Callable[[Any, Buffer], None], pss.new(public, salt_bytes=_RSA_SALT_BYTES).verify)
        digest = cast(Callable[[Buffer], Any], SHA256.new)  # bytes-like, as above
        return lambda signature, message: verify(digest(message), signature)


class _CryptographyMlDsa(_SignatureAdapter):
    verify_errors = (InvalidSignature,)

    def __init__(self, level: int) -> None:
        # Imported here so the module (and every other scheme) still loads with a
        # cryptography release that predates ML-DSA.
        from cryptography.hazmat.primitives.asymmetric import mldsa

        self._level = level
        self._private_class = getattr(mldsa, f"MLDSA{level}PrivateKey")
        self._public_class = getattr(mldsa, f"MLDSA{level}PublicKey")

    def new_key(self) -> Any:
        return self._private_class.generate()

    def signer(self, key: Any) -> tuple[SignFn, bytes]:
        return key.sign, key.public_key().public_bytes_raw()

    def load(self, encoded: bytes) -> VerifyFn:
        try:
            public = self._public_class.from_public_bytes(encoded)
        except ValueError as error:
            reject_key(f"ML-DSA-{self._level}", error)
        verify: VerifyFn = public.verify
        return verify


# --------------------------------------------------------------------------- session


def _not_ready(*_: object) -> NoReturn:
    raise RuntimeError("the handshake must complete before signing or verifying")


class _SignatureSender(Sender):
    """The signer: generates the key pair in the handshake, then signs messages."""

    def __init__(self, adapter: _SignatureAdapter, key: Any = None) -> None:
        self._adapter = adapter
        self._key = key  # None: a fresh key pair per handshake (always, outside the self-test)
        self._sign: SignFn = _not_ready

    def handshake(self, public: bytes) -> bytes:
        if public:
            raise PayloadFormatError("a signature receiver publishes nothing; got a non-empty setup message")
        key = self._adapter.new_key() if self._key is None else self._key
        self._sign, encoded = self._adapter.signer(key)
        return encoded

    def seal(self, plaintext: bytes) -> Payload:
        signature = self._sign(plaintext)
        return (len(signature).to_bytes(LENGTH_PREFIX, "big"), signature, plaintext)


class _SignatureReceiver(Receiver):
    """The verifier: imports the signer's public key, checks every message."""

    def __init__(self, adapter: _SignatureAdapter, max_signature: int) -> None:
        self._adapter = adapter
        self._max_signature = max_signature
        self._verify: VerifyFn = _not_ready
        self._errors = adapter.verify_errors

    def setup(self) -> bytes:
        return b""

    def handshake(self, message: bytes) -> None:
        self._verify = self._adapter.load(message)

    def open(self, payload: Buffer) -> Buffer:
        view = memoryview(payload)
        if len(view) < LENGTH_PREFIX:
            raise PayloadFormatError(f"signature payload of {len(view)} bytes has no length field")
        signature_len = int.from_bytes(view[:LENGTH_PREFIX], "big")
        end = LENGTH_PREFIX + signature_len
        if signature_len > self._max_signature or end > len(view):
            raise PayloadFormatError(
                f"signature length {signature_len} does not fit a {len(view)}-byte payload "
                f"(at most {self._max_signature})"
            )
        message = view[end:]
        try:
            self._verify(view[LENGTH_PREFIX:end], message)
        except self._errors:
            raise AuthenticationError("signature does not verify") from None
        return message


class SignatureScheme(Scheme):
    """One signature algorithm, backend and parameter set."""

    def __init__(
        self,
        scheme_id: str,
        backend: str,
        params: Mapping[str, ParamValue],
        algorithm: _Algorithm,
        adapter: _SignatureAdapter,
    ) -> None:
        self._algorithm = algorithm
        self._adapter = adapter
        self.info = SchemeInfo(
            scheme_id=scheme_id,
            family=Family.SIGNATURE,
            backend=backend,
            params=dict(params),
            label=algorithm.label,
            security=algorithm.security,
            insecure=algorithm.security.classical_bits < 112,
            authenticated=True,
            notes=algorithm.notes,
        )

    def new_sender(self) -> Sender:
        return _SignatureSender(self._adapter)

    def known_answer_sender(self, key: Any) -> Sender:
        """A sender that signs with `key` (a library private key object) instead of a new one.

        For the self-test's known answers only (app/core/selftest/adapters.py): jobs and
        profiles reach schemes through `new_sender`, which always generates a key.
        """
        return _SignatureSender(self._adapter, key)

    def new_receiver(self) -> Receiver:
        return _SignatureReceiver(self._adapter, self._algorithm.max_signature)

    def tamper_spots(self, payload_len: int, plaintext_len: int) -> list[TamperSpot]:
        """The length field, one byte inside and the last byte of the signature, the message.

        The inside byte avoids DER tags (ECDSA): flipping a tag would only test the
        parser, flipping a byte of r tests the verification equation.
        """
        signature_len = payload_len - plaintext_len - LENGTH_PREFIX
        probe = self._algorithm.probe_offset
        inside = signature_len // 2 if probe is None else min(probe, signature_len - 1)
        spots = [
            TamperSpot("signature length", LENGTH_PREFIX - 1),
            TamperSpot("signature", LENGTH_PREFIX + inside),
            TamperSpot("signature end", LENGTH_PREFIX + signature_len - 1),
        ]
        if plaintext_len:
            spots.append(TamperSpot("message", payload_len - plaintext_len + plaintext_len // 2))
        return spots

    def payload_overhead(self, plaintext_len: int) -> int:
        return LENGTH_PREFIX + self._algorithm.max_signature


# --------------------------------------------------------------------------- registry

_BACKENDS = ("cryptography", "pycryptodome")


def _ecdsa(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    curve = _CURVES[str(params["curve"])]
    adapter = _CryptographyEcdsa(curve) if backend == "cryptography" else _PycryptodomeEcdsa(curve)
    algorithm = _Algorithm(
        label=f"ECDSA {curve.name} / {curve.digest}",
        security=Security(classical_bits=curve.classical_bits, pq_category=0),
        max_signature=curve.max_der_signature,
        # DER header (SEQUENCE + INTEGER tag/length) is at most 5 bytes, so byte 8 is
        # inside r unless r has fewer than 4 significant bytes (probability ~2^-200).
        probe_offset=8,
        notes=(
            f"DER-encoded (r, s), variable length up to {curve.max_der_signature} bytes",
            "random per-signature nonce (FIPS 186-5)",
            "verification key sent as an uncompressed SEC1 point, checked to lie on the curve",
        ),
    )
    return SignatureScheme("ecdsa", backend, params, algorithm, adapter)


def _eddsa_factory(scheme_id: str, curve: str) -> Callable[[str, Mapping[str, ParamValue]], Scheme]:
    def factory(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
        _, signature_bytes, classical = _EDDSA[curve]
        adapter = _CryptographyEddsa(curve) if backend == "cryptography" else _PycryptodomeEddsa(curve)
        algorithm = _Algorithm(
            label=curve,
            security=Security(classical_bits=classical, pq_category=0),
            max_signature=signature_bytes,
            probe_offset=None,
            notes=(
                "pure EdDSA (RFC 8032), deterministic signatures",
                "verification key checked: canonical encoding, on the curve, not of small order",
                *(
                    (
                        "the on-curve test runs in Python (OpenSSL decodes the key only when verifying) "
                        "and dominates the receiver handshake time",
                    )
                    if backend == "cryptography"
                    else ()
                ),
            ),
        )
        return SignatureScheme(scheme_id, backend, params, algorithm, adapter)

    return factory


def _rsa_pss(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    bits = int(params["bits"])
    adapter = _CryptographyRsaPss(bits) if backend == "cryptography" else _PycryptodomeRsaPss(bits)
    algorithm = _Algorithm(
        label=f"RSA-PSS {bits} / SHA-256",
        security=Security(classical_bits=_RSA_CLASSICAL_BITS[bits], pq_category=0),
        max_signature=bits // 8,
        probe_offset=None,
        notes=(
            f"MGF1-SHA-256, {_RSA_SALT_BYTES}-byte salt, e = 65537; public key as DER SubjectPublicKeyInfo",
            "verification key checked: modulus size, odd, no factor below 752; odd e in (2^16, 2^256)",
        ),
    )
    return SignatureScheme("rsa-pss", backend, params, algorithm, adapter)


def _ml_dsa(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    level = int(params["level"])
    _, signature_bytes, category, classical = _MLDSA[level]
    algorithm = _Algorithm(
        label=f"ML-DSA-{level}",
        security=Security(classical_bits=classical, pq_category=category),
        max_signature=signature_bytes,
        probe_offset=None,
        notes=("FIPS 204, hedged (randomized) signing, empty context string",),
    )
    return SignatureScheme("ml-dsa", backend, params, algorithm, _CryptographyMlDsa(level))


SPECS: list[SchemeSpec] = [
    SchemeSpec(
        scheme_id="ecdsa",
        name="ECDSA",
        family=Family.SIGNATURE,
        backends=_BACKENDS,
        params=(
            ParamSpec(
                "curve",
                "P-256",
                ("P-256", "P-384", "P-521"),
                help="NIST curve; the digest follows it (SHA-256 / SHA-384 / SHA-512)",
            ),
        ),
        factory=_ecdsa,
        description="ECDSA over a NIST prime curve (FIPS 186-5), DER-encoded signatures.",
    ),
    SchemeSpec(
        scheme_id="ed25519",
        name="Ed25519",
        family=Family.SIGNATURE,
        backends=_BACKENDS,
        params=(),
        factory=_eddsa_factory("ed25519", "Ed25519"),
        description="EdDSA over edwards25519 (RFC 8032): 32-byte keys, 64-byte signatures.",
    ),
    SchemeSpec(
        scheme_id="ed448",
        name="Ed448",
        family=Family.SIGNATURE,
        backends=_BACKENDS,
        params=(),
        factory=_eddsa_factory("ed448", "Ed448"),
        description="EdDSA over edwards448 (RFC 8032): 57-byte keys, 114-byte signatures.",
    ),
    SchemeSpec(
        scheme_id="rsa-pss",
        name="RSA-PSS",
        family=Family.SIGNATURE,
        backends=_BACKENDS,
        params=(ParamSpec("bits", 3072, (2048, 3072, 4096), help="RSA modulus size in bits"),),
        factory=_rsa_pss,
        description="RSASSA-PSS (RFC 8017) with SHA-256, MGF1-SHA-256 and a 32-byte salt.",
    ),
    SchemeSpec(
        scheme_id="ml-dsa",
        name="ML-DSA",
        family=Family.SIGNATURE,
        backends=("cryptography",),
        params=(ParamSpec("level", 65, (44, 65, 87), help="FIPS 204 parameter set (ML-DSA-44 / 65 / 87)"),),
        factory=_ml_dsa,
        description="Module-lattice signatures (FIPS 204), post-quantum.",
    ),
]
