"""Textbook RSA (reproducing E3): no padding, with and without CRT, deterministic and malleable
as declared, always flagged insecure; round trips, limits, rejection and metadata."""

from __future__ import annotations

import os
import random
from functools import cache
from typing import Any

import pytest
from Crypto.Math import Primality

from app.core.errors import BadParameter, UnknownBackend
from app.core.schemes import registry
from app.core.schemes.base import MessageTooLongError, PayloadFormatError, Receiver, Scheme, Sender
from app.core.schemes.pke import (
    TextbookRsa,
    TextbookRsaKey,
    factoring_strength,
)
from app.core.vocab import Family
from tests.helpers.schemes import connect

#: The key pairs and sessions below are made once per module (key generation is the slow
#: part); under `make test` the module's tests share one worker, or each worker made them.
pytestmark = pytest.mark.xdist_group("scheme-sessions-textbook-rsa")

#: Textbook RSA: every size it offers, and the ones fast enough to generate keys for
#: in most tests (2048 gets one round trip, 3072 and 4096 one slow test).
TEXTBOOK_SIZES = (512, 1024, 2048, 3072, 4096)


TEXTBOOK_FAST = (512, 1024)


@cache
def textbook_keys(bits: int) -> tuple[TextbookRsaKey, bytes]:
    """One textbook RSA key pair per size for the module (key generation is the slow part)."""
    key, public = TextbookRsa(bits, crt=True).generate()
    assert isinstance(key, TextbookRsaKey)
    return key, public


@cache
def textbook_session(bits: int, crt: bool, chunked: bool = False) -> tuple[Scheme, Sender, Receiver, bytes]:
    scheme = registry.create("rsa-textbook", "python", {"bits": bits, "crt": crt, "chunked": chunked})
    return (scheme, *connect(scheme))


def textbook_pair(bits: int) -> tuple[TextbookRsaKey, int, TextbookRsa, TextbookRsa]:
    """(private key, n, CRT cipher, non-CRT cipher) sharing one key pair."""
    key, public = textbook_keys(bits)
    with_crt, without_crt = TextbookRsa(bits, crt=True), TextbookRsa(bits, crt=False)
    return key, with_crt.load_public(public), with_crt, without_crt


def test_textbook_rsa_is_registered() -> None:
    assert registry.get_spec("rsa-textbook").param("bits").choices == TEXTBOOK_SIZES
    assert "rsa-textbook" in registry.scheme_ids()
    spec = registry.get_spec("rsa-textbook")
    assert spec.name == "RSA (textbook)"
    assert spec.family is Family.PUBLIC_KEY_ENCRYPTION
    assert spec.backends == ("python",)
    assert [(p.name, p.default) for p in spec.params] == [("bits", 2048), ("crt", True), ("chunked", False)]
    assert "E3" in spec.description and "never use it" in spec.description
    described = registry.describe(spec)
    assert [v["label"] for v in described["variants"]] == [f"RSA-{bits} textbook" for bits in TEXTBOOK_SIZES]
    assert all(v["insecure"] is True for v in described["variants"])
    with pytest.raises(UnknownBackend, match="python"):
        registry.create("rsa-textbook", "cryptography", {})


@pytest.mark.parametrize(
    ("params", "names"),
    [
        ({"bits": 768}, ("'bits'", "768")),
        ({"crt": "no"}, ("'crt'", "'no'")),
        ({"crt": 0}, ("'crt'", "0")),
        ({"e": 3}, ("'e'",)),
    ],
)
def test_textbook_rsa_refuses_bad_params(params: dict[str, Any], names: tuple[str, ...]) -> None:
    with pytest.raises(BadParameter) as caught:
        registry.create("rsa-textbook", "python", params)
    for name in names:
        assert name in str(caught.value)


@pytest.mark.parametrize("crt", (True, False))
@pytest.mark.parametrize("bits", TEXTBOOK_FAST)
def test_textbook_rsa_round_trip(bits: int, crt: bool) -> None:
    scheme, sender, receiver, public = textbook_session(bits, crt)
    assert len(public) == bits // 8
    limit = scheme.cipher.max_plaintext
    for message in (b"", b"\x00", os.urandom(18), os.urandom(limit)):
        parts = sender.seal(message)
        assert len(parts) == 1
        payload = b"".join(parts)
        assert len(payload) == scheme.cipher.ciphertext_len == bits // 8
        assert scheme.payload_overhead(len(message)) >= len(payload) - len(message)
        assert bytes(receiver.open(payload)) == message
        assert bytes(receiver.open(memoryview(payload))) == message


def test_textbook_rsa_round_trip_2048() -> None:
    key, n, with_crt, without_crt = textbook_pair(2048)
    assert n.bit_length() == 2048
    for message in (b"", b"\x00\x01", os.urandom(with_crt.max_plaintext)):
        ciphertext = with_crt.encrypt(n, message)
        assert with_crt.decrypt(key, ciphertext) == without_crt.decrypt(key, ciphertext) == message
    _, sender, receiver, _ = textbook_session(2048, False)
    assert receiver.open(b"".join(sender.seal(b"E3"))) == b"E3"


@pytest.mark.slow
@pytest.mark.parametrize("bits", (3072, pytest.param(4096, marks=pytest.mark.exhaustive)))
def test_textbook_rsa_round_trip_large_sizes(bits: int) -> None:
    # One key per size (about 3 s and 5 s to generate), shared by both decryptions.
    key, n, with_crt, without_crt = textbook_pair(bits)
    assert n.bit_length() == bits
    message = b"\x00" + os.urandom(with_crt.max_plaintext - 1)
    ciphertext = with_crt.encrypt(n, message)
    assert len(ciphertext) == bits // 8
    assert with_crt.decrypt(key, ciphertext) == without_crt.decrypt(key, ciphertext) == message


@pytest.mark.parametrize("bits", TEXTBOOK_SIZES)
def test_textbook_rsa_max_plaintext_is_below_every_modulus(bits: int) -> None:
    cipher = TextbookRsa(bits, crt=True)
    assert cipher.ciphertext_len == bits // 8
    assert cipher.max_plaintext == bits // 8 - 2
    # The largest encoded block, marker included, against the smallest modulus that
    # load_public accepts (top bit set): 2^(bits - 15) <= 2^(bits - 1).
    largest = int.from_bytes(b"\x01" + b"\xff" * cipher.max_plaintext, "big")
    assert largest < 2 ** (bits - 15) <= 2 ** (bits - 1)
    info = registry.create("rsa-textbook", "python", {"bits": bits}).info
    assert info.max_plaintext == bits // 8 - 2


@pytest.mark.parametrize("crt", (True, False))
@pytest.mark.parametrize("bits", TEXTBOOK_FAST)
def test_textbook_rsa_max_plaintext_fits_and_one_more_byte_does_not(bits: int, crt: bool) -> None:
    scheme, sender, receiver, _ = textbook_session(bits, crt)
    limit = scheme.cipher.max_plaintext
    assert scheme.info.max_plaintext == limit == bits // 8 - 2
    for message in (os.urandom(limit), b"\xff" * limit, b"\x00" * limit):
        assert receiver.open(b"".join(sender.seal(message))) == message
    for too_long in (bytes(limit + 1), b"\xff" * (limit + 1)):
        with pytest.raises(MessageTooLongError):
            sender.seal(too_long)
    _, n, cipher, _ = textbook_pair(bits)
    with pytest.raises(MessageTooLongError):
        cipher.encrypt(n, b"\xff" * (limit + 1))  # the cipher checks too, not only the sender


@pytest.mark.parametrize("crt", (True, False))
def test_textbook_rsa_chunked_128_bytes_at_512_bits(crt: bool) -> None:
    scheme, sender, receiver, _ = textbook_session(512, crt, chunked=True)
    assert scheme.info.max_plaintext is None
    message = os.urandom(128)  # 62 + 62 + 4 bytes: three blocks
    parts = sender.seal(message)
    assert len(parts) == 3
    payload = b"".join(parts)
    assert len(payload) == 3 * 64
    assert scheme.payload_overhead(len(message)) >= len(payload) - len(message)
    assert receiver.open(payload) == message
    unchunked, plain_sender, _, _ = textbook_session(512, crt)
    with pytest.raises(MessageTooLongError, match="chunked"):
        plain_sender.seal(message)
    assert unchunked.info.max_plaintext == 62


@pytest.mark.parametrize("crt", (True, False))
@pytest.mark.parametrize("bits", TEXTBOOK_FAST)
def test_textbook_rsa_recovers_leading_zero_bytes(bits: int, crt: bool) -> None:
    key, n, _, _ = textbook_pair(bits)
    cipher = TextbookRsa(bits, crt)
    limit = cipher.max_plaintext
    for message in (
        b"",
        b"\x00",
        b"\x00\x00\x01",
        b"\x00" * limit,
        b"\x00" * (limit - 1) + b"\x01",
        b"\x00\xff" + os.urandom(limit - 2),
    ):
        assert cipher.decrypt(key, cipher.encrypt(n, message)) == message


@pytest.mark.parametrize("bits", TEXTBOOK_FAST)
def test_textbook_rsa_crt_and_plain_decryption_agree(bits: int) -> None:
    key, n, with_crt, without_crt = textbook_pair(bits)
    rng = random.Random(bits)
    for _ in range(50):
        message = rng.randbytes(rng.randrange(with_crt.max_plaintext + 1))
        ciphertext = with_crt.encrypt(n, message)
        assert with_crt.decrypt(key, ciphertext) == without_crt.decrypt(key, ciphertext) == message
    # Also on ciphertexts encrypt() never makes: both accept or both refuse.
    for _ in range(50):
        ciphertext = rng.randrange(n).to_bytes(bits // 8, "big")
        outcomes = []
        for cipher in (with_crt, without_crt):
            try:
                outcomes.append(cipher.decrypt(key, ciphertext))
            except PayloadFormatError:
                outcomes.append(None)
        assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("bits", TEXTBOOK_FAST)
def test_textbook_rsa_key_is_consistent(bits: int) -> None:
    key, public = textbook_keys(bits)
    p, q = key.p, key.q
    assert p != q
    assert p.bit_length() == q.bit_length() == bits // 2
    assert Primality.test_probable_prime(p) == Primality.PROBABLY_PRIME
    assert Primality.test_probable_prime(q) == Primality.PROBABLY_PRIME
    assert key.n == p * q == int.from_bytes(public, "big")
    assert key.n.bit_length() == bits
    phi = (p - 1) * (q - 1)
    assert TextbookRsa.E == 65537
    assert TextbookRsa.E * key.d % phi == 1
    assert key.dp == key.d % (p - 1)
    assert key.dq == key.d % (q - 1)
    assert key.qinv * q % p == 1


@pytest.mark.parametrize("crt", (True, False))
def test_textbook_rsa_is_deterministic_as_documented(crt: bool) -> None:
    # No padding: equal plaintexts give equal ciphertexts, computable by anyone with
    # the public key. This is what makes textbook RSA insecure at every size.
    _, sender, receiver, public = textbook_session(512, crt)
    n = int.from_bytes(public, "big")
    first, second = (b"".join(sender.seal(b"same message")) for _ in range(2))
    assert first == second
    expected = pow(int.from_bytes(b"\x01same message", "big"), 65537, n)
    assert first == expected.to_bytes(64, "big")
    assert receiver.open(first) == b"same message"


@pytest.mark.parametrize("crt", (True, False))
def test_textbook_rsa_is_malleable_as_declared(crt: bool) -> None:
    # c * 256^e decrypts to m * 256: the block with a zero byte appended, and the
    # forgery opens without any error (hence authenticated=False).
    scheme, sender, receiver, public = textbook_session(512, crt)
    assert scheme.info.authenticated is False
    assert any("malleable" in note for note in scheme.info.notes)
    n = int.from_bytes(public, "big")
    payload = b"".join(sender.seal(b"pay 10"))
    forged = int.from_bytes(payload, "big") * pow(256, 65537, n) % n
    assert receiver.open(forged.to_bytes(64, "big")) == b"pay 10\x00"


@pytest.mark.parametrize("crt", (True, False))
@pytest.mark.parametrize("bits", TEXTBOOK_FAST)
def test_textbook_rsa_rejects_malformed_ciphertexts(bits: int, crt: bool) -> None:
    key, n, _, _ = textbook_pair(bits)
    cipher = TextbookRsa(bits, crt)
    size = bits // 8
    good = cipher.encrypt(n, b"hi")
    not_below_n = (n, n + 1, 2**bits - 1)
    no_marker = (0, pow(5, 65537, n), pow(0x0201, 65537, n))
    # 0x01 followed by k - 1 bytes: below n but longer than any block encrypt() makes.
    too_long = (pow(1 << (8 * (size - 1)), 65537, n),)
    for value in not_below_n + no_marker + too_long:
        with pytest.raises(PayloadFormatError):
            cipher.decrypt(key, value.to_bytes(size, "big"))
    for bad in (b"", good[:-1], good + b"\x00", bytes(size + 1)):
        with pytest.raises(PayloadFormatError):
            cipher.decrypt(key, bad)
    # Through a session: a wrong-size payload or a ciphertext not below n.
    _, sender, receiver, public = textbook_session(bits, crt)
    payload = b"".join(sender.seal(b"x"))
    session_n = int.from_bytes(public, "big")
    for bad in (
        b"",
        payload[:-1],
        payload + b"\x00",
        payload + payload[:1],
        session_n.to_bytes(size, "big"),
        b"\xff" * size,
    ):
        with pytest.raises(PayloadFormatError):
            receiver.open(bad)


@pytest.mark.parametrize("bits", TEXTBOOK_FAST)
def test_textbook_rsa_load_public_rejects_bad_keys(bits: int) -> None:
    _, public = textbook_keys(bits)
    n = int.from_bytes(public, "big")
    cipher = TextbookRsa(bits, crt=True)
    size = bits // 8
    assert cipher.load_public(public) == n
    for bad in (
        b"",
        public[:-1],
        b"\x00" + public,
        public + b"\x00",
        bytes(size),
        (n - 1).to_bytes(size, "big"),  # even
        (n >> 1 | 1).to_bytes(size, "big"),  # top bit clear: a (bits - 1)-bit modulus
        textbook_keys(512 if bits == 1024 else 1024)[1],
    ):  # a key of the other size
        with pytest.raises(PayloadFormatError):
            cipher.load_public(bad)
    with pytest.raises(PayloadFormatError):
        registry.create("rsa-textbook", "python", {"bits": bits}).new_sender().handshake(public[:-1])


TEXTBOOK_LABELS = [
    (512, True, False, "RSA-512 textbook"),
    (512, False, False, "RSA-512 textbook (no CRT)"),
    (512, True, True, "RSA-512 textbook (chunked)"),
    (512, False, True, "RSA-512 textbook (no CRT) (chunked)"),
    (1024, False, False, "RSA-1024 textbook (no CRT)"),
    (2048, True, False, "RSA-2048 textbook"),
    (3072, False, True, "RSA-3072 textbook (no CRT) (chunked)"),
    (4096, True, False, "RSA-4096 textbook"),
]


@pytest.mark.parametrize(("bits", "crt", "chunked", "label"), TEXTBOOK_LABELS)
def test_textbook_rsa_scheme_info(bits: int, crt: bool, chunked: bool, label: str) -> None:
    info = registry.create("rsa-textbook", "python", {"bits": bits, "crt": crt, "chunked": chunked}).info
    assert info.label == label
    assert info.scheme_id == "rsa-textbook"
    assert info.family is Family.PUBLIC_KEY_ENCRYPTION
    assert info.backend == "python"
    assert dict(info.params) == {"bits": bits, "crt": crt, "chunked": chunked}
    assert info.security.classical_bits == factoring_strength(bits)
    assert info.security.pq_category == 0
    assert info.insecure is True  # no padding: insecure at 2048 bits and above too
    assert info.authenticated is False
    assert info.max_plaintext == (None if chunked else bits // 8 - 2)
    assert "textbook RSA: no padding, deterministic and malleable; for reproducing E3 only" in info.notes
    decryption = "decryption with CRT" if crt else "decryption without CRT (m = c^d mod n), one of E3's hypotheses"
    assert decryption in info.notes
    assert any("chunked" in note for note in info.notes) is chunked


def test_textbook_labels_leave_the_other_schemes_alone() -> None:
    # The label extension must not change a byte of the existing labels.
    assert (
        registry.create("rsa-oaep", "cryptography", {"bits": 2048, "chunked": True}).info.label
        == "RSA-OAEP-2048 (chunked)"
    )
    assert registry.create("elgamal", "python", {"bits": 2048}).info.label == "ElGamal-2048"
    assert registry.create("rsa-oaep", "pycryptodome", {"bits": 2048}).info.insecure is False
