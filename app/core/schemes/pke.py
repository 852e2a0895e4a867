"""Public-key encryption: ElGamal, RSA-OAEP and textbook RSA, one block per message or chunked.

A message longer than one block is refused unless the job asks for chunked mode;
chunked payloads are a sequence of fixed-size ciphertext blocks, and the scheme's
label says "(chunked)" so no table can mistake them for one encryption.
"""

from __future__ import annotations

import abc
import math
import secrets
from collections.abc import Mapping
from typing import Any, NamedTuple

from Crypto.Cipher import PKCS1_OAEP
from Crypto.Hash import SHA256 as PycryptodomeSHA256
from Crypto.Math.Numbers import Integer
from Crypto.Math.Primality import generate_probable_prime
from Crypto.PublicKey import RSA as PycryptodomeRSA
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from app.core.schemes.base import (
    AuthenticationError,
    Buffer,
    MessageTooLongError,
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
from app.core.schemes.elgamal_groups import GROUPS, FfGroup
from app.core.vocab import Family, ParamValue

#: NIST SP 800-57 Part 1 Table 2 strengths for the sizes it lists.
_TABLE_STRENGTH = {1024: 80, 2048: 112, 3072: 128, 7680: 192, 15360: 256}


def factoring_strength(bits: int) -> int:
    """Classical strength of RSA / finite-field DH with a `bits`-bit modulus.

    SP 800-57's table where it has the size, otherwise the GNFS work estimate of
    NIST SP 800-56B Rev. 2 Appendix D rounded to a multiple of 8 (4096 -> 152).
    For toy sizes the estimate is only indicative: such keys are broken in seconds.
    The estimate is clamped between the table strengths of the nearest listed sizes,
    so the result never decreases with the size (the raw estimate gives 200 just
    below 7680 bits, which the table rates 192).
    """
    if bits in _TABLE_STRENGTH:
        return _TABLE_STRENGTH[bits]
    ln_n = bits * math.log(2)
    estimate = (1.923 * (ln_n ** (1 / 3)) * (math.log(ln_n) ** (2 / 3)) - 4.69) / math.log(2)
    strength = max(8, int(round(estimate / 8) * 8))
    below = [s for size, s in _TABLE_STRENGTH.items() if size < bits]
    above = [s for size, s in _TABLE_STRENGTH.items() if size > bits]
    if below:
        strength = max(strength, max(below))
    if above:
        strength = min(strength, min(above))
    return strength


class BlockCipher(abc.ABC):
    """A public-key cipher that encrypts one block of at most `max_plaintext` bytes."""

    max_plaintext: int
    ciphertext_len: int

    @abc.abstractmethod
    def generate(self) -> tuple[Any, bytes]:
        """Return (private key, encoded public key)."""

    @abc.abstractmethod
    def load_public(self, public: bytes) -> Any:
        """Decode and validate a public key (PayloadFormatError when invalid)."""

    @abc.abstractmethod
    def encrypt(self, public: Any, block: bytes) -> bytes: ...

    @abc.abstractmethod
    def decrypt(self, private: Any, block: Buffer) -> bytes: ...


class RsaOaep(BlockCipher):
    """RSA-OAEP with SHA-256 and MGF1-SHA-256, in one backend."""

    @abc.abstractmethod
    def private_key(self, n: int, e: int, d: int, p: int, q: int) -> Any:
        """The private key handle `decrypt` takes, for a given key instead of a new one.

        For the self-test's known answers only (app/core/selftest/adapters_encryption.py):
        jobs get their keys from `generate`, which builds the handle the same way.
        """


class CryptographyRsaOaep(RsaOaep):
    """RSA-OAEP (SHA-256, MGF1-SHA-256) through OpenSSL."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.ciphertext_len = bits // 8
        self.max_plaintext = self.ciphertext_len - 2 * 32 - 2
        self._padding = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)

    def generate(self) -> tuple[Any, bytes]:
        private = rsa.generate_private_key(public_exponent=65537, key_size=self.bits)
        public = private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return private, public

    def private_key(self, n: int, e: int, d: int, p: int, q: int) -> Any:
        public = rsa.RSAPublicNumbers(e, n)
        dmp1, dmq1, iqmp = rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q), rsa.rsa_crt_iqmp(p, q)
        return rsa.RSAPrivateNumbers(p, q, d, dmp1, dmq1, iqmp, public).private_key()

    def load_public(self, public: bytes) -> Any:
        try:
            key = serialization.load_der_public_key(public)
        except ValueError as exc:
            raise PayloadFormatError(f"invalid RSA public key: {exc}") from None
        if not isinstance(key, rsa.RSAPublicKey) or key.key_size != self.bits:
            raise PayloadFormatError(f"expected an RSA-{self.bits} public key")
        return key

    def encrypt(self, public: Any, block: bytes) -> bytes:
        result: bytes = public.encrypt(block, self._padding)
        return result

    def decrypt(self, private: Any, block: Buffer) -> bytes:
        try:
            result: bytes = private.decrypt(bytes(block), self._padding)
        except ValueError:
            raise AuthenticationError("OAEP decoding failed") from None
        return result


class PycryptodomeRsaOaep(RsaOaep):
    """RSA-OAEP (SHA-256, MGF1-SHA-256) through pycryptodome."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.ciphertext_len = bits // 8
        self.max_plaintext = self.ciphertext_len - 2 * 32 - 2

    def generate(self) -> tuple[Any, bytes]:
        key = PycryptodomeRSA.generate(self.bits)
        return self._decrypter(key), key.public_key().export_key(format="DER")

    def private_key(self, n: int, e: int, d: int, p: int, q: int) -> Any:
        return self._decrypter(PycryptodomeRSA.construct((n, e, d, p, q)))

    @staticmethod
    def _decrypter(key: Any) -> Any:
        """The private handle: pycryptodome's OAEP object (MGF1 follows the hash)."""
        return PKCS1_OAEP.new(key, hashAlgo=PycryptodomeSHA256)

    def load_public(self, public: bytes) -> Any:
        try:
            key = PycryptodomeRSA.import_key(public)
        except (ValueError, IndexError, TypeError) as exc:
            raise PayloadFormatError(f"invalid RSA public key: {exc}") from None
        if key.has_private() or key.size_in_bits() != self.bits:
            raise PayloadFormatError(f"expected an RSA-{self.bits} public key")
        return PKCS1_OAEP.new(key, hashAlgo=PycryptodomeSHA256)

    def encrypt(self, public: Any, block: bytes) -> bytes:
        result: bytes = public.encrypt(block)
        return result

    def decrypt(self, private: Any, block: Buffer) -> bytes:
        if len(block) != self.ciphertext_len:
            raise PayloadFormatError("RSA ciphertext has the wrong length")
        try:
            result: bytes = private.decrypt(block)
        except ValueError:
            raise AuthenticationError("OAEP decoding failed") from None
        return result


def jacobi(a: int, n: int) -> int:
    """Jacobi symbol (a/n) for odd n > 0: the Legendre symbol when n is prime.

    Far cheaper than Euler's criterion a^((n-1)/2) mod n, which costs a full
    modular exponentiation per message.
    """
    a %= n
    result = 1
    while a:
        while not a & 1:
            a >>= 1
            if n & 7 in (3, 5):
                result = -result
        a, n = n, a
        if a & 3 == 3 and n & 3 == 3:
            result = -result
        a %= n
    return result if n == 1 else 0


class ElGamal(BlockCipher):
    """ElGamal over the order-q subgroup of a safe-prime group, with CPython integers.

    A message block m (with a 0x01 prefix byte so leading zeros survive) is an
    integer in [1, q]; it is mapped into the subgroup of quadratic residues (m, or
    p - m when m is a non-residue; -1 is a non-residue because p = 3 mod 4), so the
    ciphertext leaks nothing through the Legendre symbol. Textbook ElGamal is
    malleable: a flipped bit decrypts to another message without any error, so the
    scheme is declared unauthenticated and its tamper check is not applicable.

    `exponent_bits` > 0 draws the private key x and each message's randomness k as
    exactly that many bits instead of uniformly below q ("short exponents", as many
    textbook implementations do): every exponentiation is then that much shorter, and
    Pollard's lambda recovers such an exponent in about 2^(exponent_bits / 2) steps,
    which caps the security at exponent_bits / 2 bits. E3 tests this hypothesis.
    """

    def __init__(self, group: FfGroup, exponent_bits: int = 0) -> None:
        self.group = group
        self.exponent_bits = exponent_bits
        self._size = (group.p.bit_length() + 7) // 8
        self.ciphertext_len = 2 * self._size
        self.max_plaintext = (group.p.bit_length() - 3) // 8

    def generate(self) -> tuple[Any, bytes]:
        p, g = self.group.p, self.group.g
        x = self._exponent()
        return x, pow(g, x, p).to_bytes(self._size, "big")

    def _exponent(self) -> int:
        """A private key or per-message randomness: uniform in [1, q-1], or exactly exponent_bits long."""
        if self.exponent_bits:
            return secrets.randbits(self.exponent_bits - 1) | (1 << (self.exponent_bits - 1))
        return secrets.randbelow(self.group.q - 1) + 1

    def load_public(self, public: bytes) -> Any:
        p, q = self.group.p, self.group.q
        if len(public) != self._size:
            raise PayloadFormatError(f"ElGamal public key must be {self._size} bytes, got {len(public)}")
        h = int.from_bytes(public, "big")
        if not 1 < h < p - 1 or pow(h, q, p) != 1:
            raise PayloadFormatError("ElGamal public key is not in the order-q subgroup")
        return h

    def encrypt(self, public: Any, block: bytes) -> bytes:
        p, q, g = self.group.p, self.group.q, self.group.g
        m = int.from_bytes(b"\x01" + block, "big")
        if m > q:
            raise MessageTooLongError(f"ElGamal block of {len(block)} bytes is not below the group order")
        if jacobi(m, p) != 1:
            m = p - m
        k = self._exponent()
        c1 = pow(g, k, p)
        c2: int = m * pow(public, k, p) % p
        return c1.to_bytes(self._size, "big") + c2.to_bytes(self._size, "big")

    def decrypt(self, private: Any, block: Buffer) -> bytes:
        p, q = self.group.p, self.group.q
        if len(block) != self.ciphertext_len:
            raise PayloadFormatError("ElGamal ciphertext has the wrong length")
        c1 = int.from_bytes(block[: self._size], "big")
        c2 = int.from_bytes(block[self._size :], "big")
        if not (0 < c1 < p and 0 < c2 < p):
            raise PayloadFormatError("ElGamal ciphertext component out of range")
        if self.exponent_bits:
            # A short x keeps the exponentiation short; q - x would be full length again.
            m = c2 * pow(pow(c1, private, p), -1, p) % p
        else:
            # c1 has order q, so c1^(q - x) = (c1^x)^-1: one exponentiation, no inverse.
            m = c2 * pow(c1, q - private, p) % p
        if m > q:
            m = p - m
        encoded = m.to_bytes((m.bit_length() + 7) // 8, "big")
        if not encoded or encoded[0] != 0x01:
            raise PayloadFormatError("ElGamal plaintext does not carry the block marker")
        return encoded[1:]


class TextbookRsaKey(NamedTuple):
    """A textbook RSA private key, with the CRT values precomputed at key generation."""

    n: int
    d: int
    p: int
    q: int
    dp: int  # d mod (p - 1)
    dq: int  # d mod (q - 1)
    qinv: int  # q^-1 mod p


class TextbookRsa(BlockCipher):
    """Textbook RSA (no padding) with CPython integers: for reproducing E3 only.

    E3 compared RSA and ElGamal across key sizes with a C++/NTL implementation whose
    source does not say whether RSA decrypted with the CRT; `crt=False` decrypts as
    m = c^d mod n (one hypothesis for its figures), `crt=True` decrypts as every real library does
    (about 3 times faster here). Without padding the scheme is deterministic (equal
    plaintexts give equal ciphertexts) and malleable (c * r^e decrypts to m * r), so
    it is declared unauthenticated and insecure at every size.

    A block m is encoded like ElGamal's: the integer of b"\x01" + block, so leading
    zero bytes survive. The public exponent is fixed at 65537, so the public key is
    just n, as exactly bits/8 big-endian bytes.
    """

    E = 65537

    def __init__(self, bits: int, crt: bool) -> None:
        if bits % 16:
            raise ValueError(f"textbook RSA needs a modulus size divisible by 16, got {bits}")
        self.bits = bits
        self.crt = crt
        self.ciphertext_len = bits // 8
        # With the 0x01 marker a block of k - 2 bytes (k = bits / 8) encodes to an
        # integer below 2^(8(k - 2) + 1) = 2^(bits - 15), far below n >= 2^(bits - 1)
        # (load_public and generate insist on the top bit). k - 1 bytes would still fit
        # (below 2^(bits - 7)); the spare byte keeps the limit the one E3 is specified with.
        self.max_plaintext = self.ciphertext_len - 2

    def generate(self) -> tuple[Any, bytes]:
        half = self.bits // 2
        # Primes above sqrt(2) * 2^(half - 1) make n exactly `bits` bits long, and the
        # filter rejects a candidate before its primality test, as pycryptodome's own
        # RSA.generate does: 4x faster at 3072 bits than retrying whole key pairs.
        lower = math.isqrt(2 << (2 * half - 2)) + 1

        def suitable(candidate: Integer) -> bool:
            return int(candidate) >= lower and math.gcd(int(candidate) - 1, self.E) == 1

        while True:
            p = int(generate_probable_prime(exact_bits=half, prime_filter=suitable))
            q = int(generate_probable_prime(exact_bits=half, prime_filter=suitable))
            n = p * q
            phi = (p - 1) * (q - 1)
            if p != q and n.bit_length() == self.bits:
                break
        # d from phi (not lcm(p - 1, q - 1)), as in the textbook and E3: it is the
        # full-size exponent the non-CRT decryption then pays for.
        d = pow(self.E, -1, phi)
        return self.private_key(p, q, d), n.to_bytes(self.ciphertext_len, "big")

    @staticmethod
    def private_key(p: int, q: int, d: int) -> TextbookRsaKey:
        """The private key with its CRT values (RFC 8017 §3.2: dP, dQ, qInv = q^-1 mod p).

        `generate` makes every job's key with it; the self-test gives it a published key.
        """
        return TextbookRsaKey(n=p * q, d=d, p=p, q=q, dp=d % (p - 1), dq=d % (q - 1), qinv=pow(q, -1, p))

    def load_public(self, public: bytes) -> Any:
        if len(public) != self.ciphertext_len:
            raise PayloadFormatError(f"textbook RSA public key must be {self.ciphertext_len} bytes, got {len(public)}")
        n = int.from_bytes(public, "big")
        # The top bit guarantees that every encoded block is below n; an even n is no
        # product of two odd primes (and would make pow() with it meaningless here).
        if n.bit_length() != self.bits or not n & 1:
            raise PayloadFormatError(f"textbook RSA modulus must be an odd {self.bits}-bit integer")
        return n

    def encrypt(self, public: Any, block: bytes) -> bytes:
        if len(block) > self.max_plaintext:
            raise MessageTooLongError(f"textbook RSA block of {len(block)} bytes exceeds {self.max_plaintext} bytes")
        m = int.from_bytes(b"\x01" + block, "big")
        c: int = pow(m, self.E, public)
        return c.to_bytes(self.ciphertext_len, "big")

    def decrypt(self, private: Any, block: Buffer) -> bytes:
        key: TextbookRsaKey = private
        if len(block) != self.ciphertext_len:
            raise PayloadFormatError("textbook RSA ciphertext has the wrong length")
        c = int.from_bytes(block, "big")
        if c >= key.n:
            raise PayloadFormatError("textbook RSA ciphertext is not below the modulus")
        if self.crt:
            # Garner's recombination: two half-size exponentiations instead of one full one.
            m1 = pow(c, key.dp, key.p)
            m2 = pow(c, key.dq, key.q)
            m = m2 + (key.qinv * (m1 - m2) % key.p) * key.q
        else:
            m = pow(c, key.d, key.n)
        encoded = m.to_bytes((m.bit_length() + 7) // 8, "big")
        # Only a tampered or foreign ciphertext decodes to something encrypt() never
        # produces: no marker, or more bytes than one block holds.
        if not encoded or encoded[0] != 0x01 or len(encoded) > self.max_plaintext + 1:
            raise PayloadFormatError("textbook RSA plaintext does not carry the block marker")
        return encoded[1:]


class _PkeSender(Sender):
    def __init__(self, scheme: PkeScheme) -> None:
        self._scheme = scheme
        self._public: Any = None

    def handshake(self, public: bytes) -> bytes:
        self._public = self._scheme.cipher.load_public(public)
        return b""

    def seal(self, plaintext: bytes) -> Payload:
        cipher, limit = self._scheme.cipher, self._scheme.cipher.max_plaintext
        if len(plaintext) <= limit:
            return (cipher.encrypt(self._public, plaintext),)
        if not self._scheme.chunked:
            raise MessageTooLongError(
                f"{len(plaintext)}-byte message does not fit one {self._scheme.info.label} block "
                f"(at most {limit} bytes); enable chunked mode to split it"
            )
        return tuple(cipher.encrypt(self._public, plaintext[i : i + limit]) for i in range(0, len(plaintext), limit))


class _PkeReceiver(Receiver):
    def __init__(self, scheme: PkeScheme) -> None:
        self._scheme = scheme
        self._private: Any = None

    def setup(self) -> bytes:
        self._private, public = self._scheme.cipher.generate()
        return public

    def open(self, payload: Buffer) -> Buffer:
        cipher = self._scheme.cipher
        size = cipher.ciphertext_len
        if not payload or len(payload) % size:
            raise PayloadFormatError(f"payload of {len(payload)} bytes is not a whole number of {size}-byte blocks")
        if len(payload) == size:
            return cipher.decrypt(self._private, payload)
        if not self._scheme.chunked:
            raise PayloadFormatError("several ciphertext blocks received but chunked mode is off")
        view = memoryview(payload)
        return b"".join(cipher.decrypt(self._private, view[i : i + size]) for i in range(0, len(view), size))


class PkeScheme(Scheme):
    """A BlockCipher as a scheme, labelled f"{name}-{bits}{variant}" (+ " (chunked)").

    `variant` distinguishes parameter sets of one size that a table must not merge
    (textbook RSA with and without CRT); `always_insecure` marks a construction that
    no key size makes secure (no padding), whatever its factoring strength.
    """

    def __init__(
        self,
        scheme_id: str,
        backend: str,
        cipher: BlockCipher,
        name: str,
        bits: int,
        params: Mapping[str, ParamValue],
        authenticated: bool,
        notes: tuple[str, ...],
        *,
        variant: str = "",
        always_insecure: bool = False,
        strength_cap: int | None = None,
    ) -> None:
        self.cipher = cipher
        self.chunked = bool(params.get("chunked", False))
        strength = factoring_strength(bits)
        if strength_cap is not None:  # e.g. ElGamal's short exponents: the exponent, not the group, limits it
            strength = min(strength, strength_cap)
        label = f"{name}-{bits}{variant}" + (" (chunked)" if self.chunked else "")
        self.info = SchemeInfo(
            scheme_id=scheme_id,
            family=Family.PUBLIC_KEY_ENCRYPTION,
            backend=backend,
            params=dict(params),
            label=label,
            security=Security(classical_bits=strength, pq_category=0),
            insecure=always_insecure or strength < 112,
            authenticated=authenticated,
            max_plaintext=None if self.chunked else cipher.max_plaintext,
            notes=notes
            + (
                (f"chunked: messages split into {cipher.max_plaintext}-byte blocks, each encrypted separately",)
                if self.chunked
                else ()
            ),
        )

    def new_sender(self) -> Sender:
        return _PkeSender(self)

    def new_receiver(self) -> Receiver:
        return _PkeReceiver(self)

    def known_answer_receiver(self, private: Any) -> Receiver:
        """A receiver that holds `private` (the cipher's private key handle) instead of a new key.

        For the self-test's known answers only (app/core/selftest/adapters_encryption.py):
        jobs and profiles reach schemes through `new_receiver`, whose `setup` always
        generates a key.
        """
        receiver = _PkeReceiver(self)
        receiver._private = private
        return receiver

    def tamper_spots(self, payload_len: int, plaintext_len: int) -> list[TamperSpot]:
        return [
            TamperSpot("ciphertext (first byte)", 0),
            TamperSpot("ciphertext (middle)", payload_len // 2),
            TamperSpot("ciphertext (last byte)", -1),
        ]

    def payload_overhead(self, plaintext_len: int) -> int:
        blocks = max(1, math.ceil(plaintext_len / self.cipher.max_plaintext))
        return blocks * self.cipher.ciphertext_len


CHUNKED = ParamSpec("chunked", False, help="split messages longer than one block into several encryptions")


def _rsa_oaep(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    bits = int(params["bits"])
    cipher = CryptographyRsaOaep(bits) if backend == "cryptography" else PycryptodomeRsaOaep(bits)
    return PkeScheme(
        "rsa-oaep", backend, cipher, "RSA-OAEP", bits, params, True, ("OAEP with SHA-256 and MGF1-SHA-256, e = 65537",)
    )


def _elgamal(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    group = GROUPS[int(params["bits"])]
    short = int(params.get("exponent_bits", 0))
    notes = (f"group: {group.source}", "textbook ElGamal is malleable: no integrity, tamper check n/a")
    if not short:
        return PkeScheme("elgamal", backend, ElGamal(group), "ElGamal", group.bits, params, False, notes)
    return PkeScheme(
        "elgamal",
        backend,
        ElGamal(group, short),
        "ElGamal",
        group.bits,
        params,
        False,
        notes
        + (
            f"short exponents: x and k are {short}-bit; Pollard's lambda finds such an exponent "
            f"in about 2^{short // 2} steps, so security is at most {short // 2} bits",
        ),
        variant=f" (x, k: {short} bits)",
        strength_cap=short // 2,
    )


def _elgamal_constraint(backend: str, params: Mapping[str, ParamValue]) -> str | None:
    short, group = int(params.get("exponent_bits", 0)), GROUPS[int(params["bits"])]
    if short and not 2 <= short < group.q.bit_length():
        return (
            f"exponent_bits {short} must be 0 (full length) or from 2 to {group.q.bit_length() - 1} "
            f"(below the {group.q.bit_length()}-bit group order of ElGamal-{group.bits})"
        )
    return None


def _rsa_textbook(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    bits, crt = int(params["bits"]), bool(params["crt"])
    return PkeScheme(
        "rsa-textbook",
        backend,
        TextbookRsa(bits, crt),
        "RSA",
        bits,
        params,
        False,
        (
            "textbook RSA: no padding, deterministic and malleable; for reproducing E3 only",
            "e = 65537; the public key is n alone, as bits/8 big-endian bytes",
            "decryption with CRT" if crt else "decryption without CRT (m = c^d mod n), one of E3's hypotheses",
            "malleable: no integrity, tamper check n/a",
        ),
        variant=" textbook" + ("" if crt else " (no CRT)"),
        always_insecure=True,
    )


SPECS: list[SchemeSpec] = [
    SchemeSpec(
        scheme_id="elgamal",
        name="ElGamal",
        family=Family.PUBLIC_KEY_ENCRYPTION,
        backends=("python",),
        params=(
            ParamSpec("bits", 2048, tuple(GROUPS), help="group size; below 2048 for demonstration only"),
            CHUNKED,
            ParamSpec(
                "exponent_bits",
                0,
                minimum=0,
                maximum=8192,
                help="0: private key and per-message randomness uniform below the group order; n: "
                "exactly n bits (short exponents, faster; security at most n/2 bits)",
            ),
        ),
        factory=_elgamal,
        constraint=_elgamal_constraint,
        description="ElGamal encryption in a safe-prime group with CPython integers (no library).",
    ),
    SchemeSpec(
        scheme_id="rsa-oaep",
        name="RSA-OAEP",
        family=Family.PUBLIC_KEY_ENCRYPTION,
        backends=("cryptography", "pycryptodome"),
        params=(ParamSpec("bits", 3072, (1024, 2048, 3072, 4096), help="modulus size; 1024 is insecure"), CHUNKED),
        factory=_rsa_oaep,
        description="RSA with OAEP padding (PKCS #1 v2.2), SHA-256.",
    ),
    SchemeSpec(
        scheme_id="rsa-textbook",
        name="RSA (textbook)",
        family=Family.PUBLIC_KEY_ENCRYPTION,
        backends=("python",),
        params=(
            ParamSpec(
                "bits", 2048, (512, 1024, 2048, 3072, 4096), help="modulus size; below 2048 for demonstration only"
            ),
            ParamSpec(
                "crt",
                True,
                help="decrypt with the Chinese remainder theorem (as every real library "
                "does); false decrypts as m = c^d mod n, one hypothesis for E3",
            ),
            CHUNKED,
        ),
        factory=_rsa_textbook,
        description="Textbook RSA (no padding) with CPython integers, decryption with or without CRT: "
        "reproduces E3; never use it to protect data.",
    ),
]
