"""The published test vectors, read from ``resources/selftest/*.json`` and checked field by field.

Vectors are data: each one sits in its file with the document it comes from
(``"source"``, and a ``"note"`` where a value is derived, e.g. stored as a hash). The
checks that use them are code, in the other modules of this package. The files live
beside the presets, so the frozen app (which bundles the whole ``resources/`` folder)
finds them through :func:`app.core.resources.resource_path`.

A file is read and checked as a whole the first time one of its vectors is asked for,
then kept for the life of the process. Every field of every vector must be present, of
its declared type and nothing else: a missing file, a missing or malformed field, an
unknown field (a typo) or a vector a check asks for and the file lacks raises
:class:`VectorFileError` naming the file and the field. The check that asked fails
with that message, so a broken file can never make the self-test run fewer checks.

Encodings: byte strings are hex (a list of hex strings is joined, for long values), or
``{"ascii": "..."}`` for text; integers are JSON numbers or ``"0x..."`` hex strings (a
list of strings is joined); a pair of integers is a two-element list.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from app.core.resources import resource_path


class VectorFileError(Exception):
    """A vector file is missing or unreadable, or one of its fields is missing or malformed.

    ``str()`` is the user's message: ``"<path>: <field>: <problem>"``, where ``field`` is
    the path inside the file (``"gcm/test-case-16/tag"``); empty for the file as a whole.
    """

    def __init__(self, path: Path, field: str, problem: str) -> None:
        super().__init__(f"{path}: {field}: {problem}" if field else f"{path}: {problem}")
        self.path = path
        self.field = field
        self.problem = problem


# --------------------------------------------------------------------------------------
# Records: one frozen dataclass per shape of vector
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Vector:
    """Every vector says where it comes from."""

    source: str


@dataclass(frozen=True)
class AeadVector(Vector):
    """An AEAD known answer: encrypt(key, nonce, plaintext, aad) = ciphertext || tag."""

    key: bytes
    nonce: bytes
    aad: bytes
    plaintext: bytes
    ciphertext: bytes
    tag: bytes


@dataclass(frozen=True)
class DigestVector(Vector):
    """A hash known answer: digest(message) = digest."""

    message: bytes
    digest: bytes


@dataclass(frozen=True)
class HkdfVector(Vector):
    """An HKDF known answer: HKDF(ikm, salt, info, len(okm)) = okm."""

    ikm: bytes
    salt: bytes
    info: bytes
    okm: bytes


@dataclass(frozen=True)
class ScalarMultVector(Vector):
    """An X25519 known answer for one scalar multiplication: X25519(scalar, u) = output."""

    scalar: bytes
    u: bytes
    output: bytes


@dataclass(frozen=True)
class DhExampleVector(Vector):
    """A Diffie-Hellman example (RFC 7748 §6): both key pairs and the shared secret."""

    alice_private: bytes
    alice_public: bytes
    bob_private: bytes
    bob_public: bytes
    shared: bytes


@dataclass(frozen=True)
class EddsaVector(Vector):
    """An EdDSA known answer (RFC 8032): secret key, public key, message, signature."""

    secret: bytes
    public: bytes
    message: bytes
    signature: bytes


@dataclass(frozen=True)
class EcdsaVector(Vector):
    """A deterministic ECDSA known answer (RFC 6979): key, public point, message, (r, s)."""

    private: int
    public_x: int
    public_y: int
    message: bytes
    r: int
    s: int


@dataclass(frozen=True)
class EcdhVector(Vector):
    """An ECDH known answer: both private keys, both public points, the shared point."""

    private_a: int
    public_a: tuple[int, int]
    private_b: int
    public_b: tuple[int, int]
    shared: tuple[int, int]


@dataclass(frozen=True)
class EcdhSecretVector(Vector):
    """A one-sided ECDH known answer: a private key, the peer's public key (X.509
    SubjectPublicKeyInfo, DER, as published) and the shared x coordinate."""

    private: int
    public: bytes
    shared: bytes


@dataclass(frozen=True)
class RsaOaepVector(Vector):
    """An RSAES-OAEP known answer: key (n, e, d), message, OAEP seed, ciphertext."""

    n: int
    e: int
    d: int
    message: bytes
    seed: bytes
    ciphertext: bytes


@dataclass(frozen=True)
class RsaDecryptVector(Vector):
    """An RSA decryption known answer: the private key with its CRT values (RFC 8017 §3.2:
    dP, dQ, qInv = q^-1 mod p), a ciphertext and what it decrypts to."""

    n: int
    e: int
    d: int
    p: int
    q: int
    dp: int
    dq: int
    qinv: int
    message: bytes
    ciphertext: bytes


@dataclass(frozen=True)
class RsaPssVector(Vector):
    """An RSASSA-PSS known answer: public key (n, e), message, salt length, signature."""

    n: int
    e: int
    message: bytes
    salt_length: int
    signature: bytes


@dataclass(frozen=True)
class MlKemVector(Vector):
    """An ML-KEM known answer for KeyGen_internal(d, z) and Decaps.

    The 1184/1568-byte encapsulation key is stored as its SHA3-256 hash (H(ek) in
    FIPS 203, which the published expanded dk contains verbatim).
    """

    seed: bytes  # d || z, 64 bytes
    ek_sha3_256: bytes
    ciphertext: bytes
    shared_secret: bytes


@dataclass(frozen=True)
class MlKemSizes(Vector):
    """Sizes in bytes of one ML-KEM parameter set (FIPS 203 Table 3)."""

    encapsulation_key: int
    ciphertext: int


@dataclass(frozen=True)
class MlDsaKeygenVector(Vector):
    """An ML-DSA KeyGen known answer: seed -> public key, stored as its SHA3-256 hash."""

    seed: bytes
    pk_sha3_256: bytes


@dataclass(frozen=True)
class MlDsaSizes(Vector):
    """Sizes in bytes of one ML-DSA parameter set (FIPS 204 Table 2)."""

    public_key: int
    signature: int


@dataclass(frozen=True)
class ToyDhVector(Vector):
    """Diffie-Hellman and ElGamal in a group small enough to check by hand."""

    p: int
    g: int
    a: int
    b: int
    public_a: int
    public_b: int
    shared: int
    elgamal_message: int
    elgamal_k: int
    elgamal_ciphertext: tuple[int, int]


@dataclass(frozen=True)
class TextbookRsaVector(Vector):
    """Textbook RSA: key (p, q, e, d) and one block, message^e = ciphertext (mod pq)."""

    p: int
    q: int
    e: int
    d: int
    message: int
    ciphertext: int


@dataclass(frozen=True)
class TlsTraceVector(Vector):
    """A TLS 1.3 handshake as published: whole handshake messages (the server's flight back
    to back) and what they negotiated (IANA codepoints), and the HelloRetryRequest random."""

    client_hello: bytes
    server_hello: bytes
    server_flight: bytes
    group: int
    cipher: int
    signature: int
    certificate_bytes: int
    server_name: bytes
    hello_retry_random: bytes


# --------------------------------------------------------------------------------------
# Sections: a named table of one record type inside one file
# --------------------------------------------------------------------------------------

V = TypeVar("V", bound=Vector)

#: file stem -> section name -> record type; filled by the Section constants below.
_SCHEMA: dict[str, dict[str, type[Vector]]] = {}


class Section(Generic[V]):
    """One table of a vector file, ``section[name]`` gives a vector (loading the file once)."""

    def __init__(self, file: str, name: str, record: type[V]) -> None:
        self.file = file
        self.name = name
        self.record = record
        _SCHEMA.setdefault(file, {})[name] = record

    def __getitem__(self, key: str) -> V:
        table = _load(self.file)[self.name]
        if key not in table:
            raise VectorFileError(file_path(self.file), f"{self.name}/{key}", "missing")
        return typing.cast(V, table[key])  # _load built it with self.record

    def __repr__(self) -> str:
        return f"Section({self.file!r}, {self.name!r}, {self.record.__name__})"


GCM = Section("aead", "gcm", AeadVector)
CHACHA20_POLY1305 = Section("aead", "chacha20-poly1305", AeadVector)
DIGESTS_OF_ABC = Section("digests", "abc", DigestVector)
HKDF_SHA256 = Section("hkdf", "hkdf-sha256", HkdfVector)
X25519_SCALARMULT = Section("rfc7748", "x25519-scalarmult", ScalarMultVector)
X25519_X448_DH = Section("rfc7748", "diffie-hellman", DhExampleVector)
ED25519 = Section("eddsa", "ed25519", EddsaVector)
ED448 = Section("eddsa", "ed448", EddsaVector)
RFC6979 = Section("ecdsa", "rfc6979", EcdsaVector)
ECDH = Section("ecdh", "examples", EcdhVector)
ECDH_WYCHEPROOF = Section("ecdh", "wycheproof", EcdhSecretVector)
RSAES_OAEP = Section("pkcs1", "rsaes-oaep", RsaOaepVector)
RSASSA_PSS = Section("pkcs1", "rsassa-pss", RsaPssVector)
RSAES_OAEP_SHA256 = Section("pkcs1", "rsaes-oaep-sha256", RsaDecryptVector)
RSAES_PKCS1_V15 = Section("pkcs1", "rsaes-pkcs1-v1_5", RsaDecryptVector)
MLKEM = Section("ml_kem", "keygen-decaps", MlKemVector)
MLKEM_SIZES = Section("ml_kem", "sizes", MlKemSizes)
MLDSA_KEYGEN = Section("ml_dsa", "keygen", MlDsaKeygenVector)
MLDSA_SIZES = Section("ml_dsa", "sizes", MlDsaSizes)
TOY_DH = Section("textbook", "diffie-hellman-elgamal", ToyDhVector)
TEXTBOOK_RSA = Section("textbook", "rsa", TextbookRsaVector)
TLS13_TRACES = Section("tls13", "rfc8448", TlsTraceVector)

# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------


def directory() -> Path:
    """Where the vector files are: ``resources/selftest`` (in the source tree or the bundle)."""
    return resource_path("selftest")


def file_path(file: str) -> Path:
    return directory() / f"{file}.json"


def files() -> list[str]:
    """The stems of every vector file the checks read."""
    return sorted(_SCHEMA)


def clear_cache() -> None:
    """Forget the files read so far (the next vector asked for reads its file again)."""
    _load.cache_clear()


@functools.cache
def _load(file: str) -> dict[str, dict[str, Vector]]:
    """Read one file and check all of it: section -> vector name -> record."""
    path = file_path(file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VectorFileError(path, "", f"cannot be read ({_os_error(exc)})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VectorFileError(path, "", f"not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(document, dict):
        raise VectorFileError(path, "", "expected a JSON object of sections")
    schema = _SCHEMA[file]
    for name in document:
        if name not in schema and name != "about":
            raise VectorFileError(path, name, f"unknown section (expected {', '.join(sorted(schema))})")
    tables: dict[str, dict[str, Vector]] = {}
    for name, record in schema.items():
        if name not in document:
            raise VectorFileError(path, name, "missing")
        section = document[name]
        if not isinstance(section, dict) or not section:
            raise VectorFileError(path, name, "expected a non-empty object of vectors")
        tables[name] = {key: _record(record, raw, path, f"{name}/{key}") for key, raw in section.items()}
    return tables


def _os_error(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _record(record: type[V], raw: object, path: Path, where: str) -> V:
    if not isinstance(raw, dict):
        raise VectorFileError(path, where, "expected an object of fields")
    types = typing.get_type_hints(record)
    names = [field.name for field in dataclasses.fields(record)]
    for name in raw:
        if name not in names and name != "note":
            raise VectorFileError(path, f"{where}/{name}", f"unknown field (expected {', '.join(names)})")
    if not isinstance(raw.get("note", ""), str):
        raise VectorFileError(path, f"{where}/note", "expected a string")
    values: dict[str, object] = {}
    for name in names:
        if name not in raw:
            raise VectorFileError(path, f"{where}/{name}", "missing")
        try:
            values[name] = _value(raw[name], types[name])
        except ValueError as exc:
            raise VectorFileError(path, f"{where}/{name}", str(exc)) from None
    build: Callable[..., V] = record  # the fields were checked against the dataclass above
    return build(**values)


def _value(raw: object, kind: object) -> object:
    """``raw`` from JSON as a value of the field type ``kind``; ValueError says what is wrong."""
    if kind is str:
        if not isinstance(raw, str) or not raw.strip():
            raise ValueError("expected a non-empty string")
        return raw
    if kind is bytes:
        if isinstance(raw, dict):
            if set(raw) != {"ascii"} or not isinstance(raw["ascii"], str) or not raw["ascii"].isascii():
                raise ValueError('expected hex or {"ascii": "<text>"}')
            return raw["ascii"].encode("ascii")
        text = _joined(raw, "hex")
        try:
            return bytes.fromhex(text)
        except ValueError:
            raise ValueError(f"not hex: {_clip(text)}") from None
    if kind is int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        text = _joined(raw, 'an integer or "0x..." hex')
        if not text.startswith("0x"):
            raise ValueError(f'expected an integer or "0x..." hex, got {_clip(text)}')
        try:
            return int(text[2:], 16)
        except ValueError:
            raise ValueError(f"not hex: {_clip(text)}") from None
    if typing.get_origin(kind) is tuple:
        items = typing.get_args(kind)
        if not isinstance(raw, list) or len(raw) != len(items):
            raise ValueError(f"expected a list of {len(items)} values")
        return tuple(_value(item, item_kind) for item, item_kind in zip(raw, items))
    raise TypeError(f"no JSON encoding for field type {kind!r}")  # a record declared a new type


def _joined(raw: object, expected: str) -> str:
    """A string, or a list of strings joined (long values are split for reading)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list) and raw and all(isinstance(part, str) for part in raw):
        return "".join(typing.cast(list[str], raw))
    raise ValueError(f"expected {expected} (a string or a list of strings)")


def _clip(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:23] + "…")
