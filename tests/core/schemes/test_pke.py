"""Public-key encryption: ElGamal (with its groups), RSA-OAEP in two backends, textbook RSA."""

from __future__ import annotations

import itertools
import math
import os
import random
from functools import cache
from typing import Any

import pytest
from Crypto.Math import Primality

from app.core.schemes import registry
from app.core.schemes.base import (
    AuthenticationError,
    MessageTooLongError,
    PayloadFormatError,
    Receiver,
    Scheme,
    Sender,
    flip_bit,
)
from app.core.schemes.elgamal_groups import GROUPS
from app.core.schemes.pke import (
    SPECS,
    CryptographyRsaOaep,
    ElGamal,
    PycryptodomeRsaOaep,
    factoring_strength,
    jacobi,
)
from app.core.vocab import Family
from tests.helpers.schemes import connect

#: The key pairs and sessions below are made once per module (key generation is the slow
#: part); under `make test` the module's tests share one worker, or each worker made them.
pytestmark = pytest.mark.xdist_group("scheme-sessions-pke")

REJECTED = (AuthenticationError, PayloadFormatError)
MESSAGE_SIZES = (0, 1, 18, 1000)
RSA_BACKENDS = ("cryptography", "pycryptodome")
RSA_CLASSES = {"cryptography": CryptographyRsaOaep, "pycryptodome": PycryptodomeRsaOaep}
#: Sizes the round-trip tests run (4096-bit ElGamal and RSA above 2048 are too slow
#: for every test; RSA-1024/3072 and ElGamal-3072 get a smoke test of their own).
ELGAMAL_TESTED = (128, 256, 512, 1024, 2048)


def enumerate_combos() -> tuple[list[tuple[str, str, dict[str, Any]]], list[tuple[str, str, dict[str, Any]]]]:
    """(every allowed combination, the subset the round-trip tests run)."""
    every, tested = [], []
    for spec in SPECS:
        axes = [[(p.name, c) for c in p.choices] for p in spec.params if p.choices]
        for backend in spec.backends:
            for values in itertools.product(*axes):
                params = dict(values)
                spec.resolve_params(backend, params)  # raises if any combination were refused
                every.append((spec.scheme_id, backend, params))
                if (spec.scheme_id == "elgamal" and params["bits"] in ELGAMAL_TESTED) or (
                    spec.scheme_id == "rsa-oaep" and params["bits"] == 2048
                ):
                    tested.append((spec.scheme_id, backend, params))
    return every, tested


EVERY, COMBOS = enumerate_combos()
COMBO_IDS = [f"{sid}-{backend}-{params['bits']}" for sid, backend, params in COMBOS]


@cache
def session(scheme_id: str, backend: str, bits: int, chunked: bool = False) -> tuple[Scheme, Sender, Receiver, bytes]:
    """One key pair per (scheme, backend, size, chunked) for the whole module."""
    scheme = registry.create(scheme_id, backend, {"bits": bits, "chunked": chunked})
    return (scheme, *connect(scheme))


@cache
def rsa_small() -> tuple[Any, bytes]:
    return CryptographyRsaOaep(1024).generate()


@cache
def rsa_keys(backend: str, bits: int = 2048) -> tuple[Any, bytes]:
    return RSA_CLASSES[backend](bits).generate()


# ----------------------------------------------------------------- coverage of the specs


def test_every_combination_is_allowed() -> None:
    # No constraint refuses anything here: 7 ElGamal groups, 4 RSA sizes x 2 backends,
    # 5 textbook RSA sizes (its crt flag is a boolean, not a list of choices).
    assert len(EVERY) == 7 + 4 * 2 + 5
    assert registry.get_spec("elgamal").backends == ("python",)
    assert registry.get_spec("rsa-oaep").backends == RSA_BACKENDS
    assert registry.get_spec("rsa-textbook").backends == ("python",)
    assert registry.get_spec("elgamal").param("bits").choices == tuple(GROUPS)


# ----------------------------------------------------------------- round trips


@pytest.mark.parametrize("size", MESSAGE_SIZES)
@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_round_trip_or_too_long(scheme_id: str, backend: str, params: dict[str, Any], size: int) -> None:
    scheme, sender, receiver, _ = session(scheme_id, backend, params["bits"])
    limit = scheme.info.max_plaintext
    assert limit is not None and limit > 0
    message = os.urandom(size)
    if size > limit:
        with pytest.raises(MessageTooLongError):
            sender.seal(message)
        return
    parts = sender.seal(message)
    assert len(parts) == 1
    payload = b"".join(parts)
    assert len(payload) == scheme.cipher.ciphertext_len
    assert scheme.payload_overhead(size) >= len(payload) - size
    assert bytes(receiver.open(payload)) == message
    assert bytes(receiver.open(memoryview(payload))) == message


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_max_plaintext_fits_and_one_more_byte_does_not(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    scheme, sender, receiver, _ = session(scheme_id, backend, params["bits"])
    limit = scheme.cipher.max_plaintext
    assert scheme.info.max_plaintext == limit
    for message in (os.urandom(limit), b"\xff" * limit, b"\x00" * limit):
        assert receiver.open(b"".join(sender.seal(message))) == message
    with pytest.raises(MessageTooLongError):
        sender.seal(bytes(limit + 1))
    with pytest.raises(MessageTooLongError):
        sender.seal(b"\xff" * (limit + 1))


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_encryption_is_randomized(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    _, sender, receiver, _ = session(scheme_id, backend, params["bits"])
    first, second = (b"".join(sender.seal(b"same message"[:10])) for _ in range(2))
    assert first != second
    assert receiver.open(first) == receiver.open(second) == b"same messa"


@pytest.mark.parametrize(
    ("scheme_id", "backend", "bits"), [("rsa-oaep", "pycryptodome", 1024), ("rsa-oaep", "cryptography", 3072)]
)
def test_other_sizes_smoke(scheme_id: str, backend: str, bits: int) -> None:
    scheme = registry.create(scheme_id, backend, {"bits": bits})
    sender, receiver, _ = connect(scheme)
    message = os.urandom(scheme.cipher.max_plaintext)
    payload = b"".join(sender.seal(message))
    assert len(payload) == scheme.cipher.ciphertext_len == (bits // 8 if scheme_id == "rsa-oaep" else bits // 4)
    assert receiver.open(payload) == message


# ----------------------------------------------------------------- rejection


@pytest.mark.parametrize("size", (0, 1, 100))
@pytest.mark.parametrize("backend", RSA_BACKENDS)
def test_rsa_tamper_spots_are_rejected(backend: str, size: int) -> None:
    scheme, sender, receiver, _ = session("rsa-oaep", backend, 2048)
    assert scheme.info.authenticated is True
    payload = b"".join(sender.seal(os.urandom(size)))
    spots = scheme.tamper_spots(len(payload), size)
    assert len(spots) == 3
    for spot in spots:
        with pytest.raises(REJECTED):
            receiver.open(flip_bit(payload, spot.offset))


@pytest.mark.parametrize("backend", RSA_BACKENDS)
def test_rsa_ciphertext_not_below_modulus_is_rejected(backend: str) -> None:
    _, _, receiver, _ = session("rsa-oaep", backend, 2048)
    for bad in (b"\xff" * 256, bytes(256)):
        with pytest.raises(REJECTED):
            receiver.open(bad)


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_payload_of_wrong_size_is_a_format_error(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    _scheme, sender, receiver, _ = session(scheme_id, backend, params["bits"])
    payload = b"".join(sender.seal(b"x"))
    for bad in (b"", payload[:-1], payload + b"\x00", payload + payload[:1]):
        with pytest.raises(PayloadFormatError):
            receiver.open(bad)


def test_receiver_rejects_a_nonempty_handshake() -> None:
    receiver = registry.create("elgamal", "python", {"bits": 128}).new_receiver()
    receiver.setup()
    with pytest.raises(PayloadFormatError):
        receiver.handshake(b"\x01")


def test_elgamal_is_declared_unauthenticated() -> None:
    info = registry.create("elgamal", "python", {"bits": 512}).info
    assert info.authenticated is False
    assert any("malleable" in note for note in info.notes)
    assert registry.create("rsa-oaep", "cryptography", {"bits": 2048}).info.authenticated is True


def test_elgamal_is_malleable_as_declared() -> None:
    # Multiplying c2 by r = 0x0101 / 0x0100 turns the encoding of b"\x00" into that of
    # b"\x01" (also when the encoding was negated into the subgroup: r(-m) = -(rm)).
    # The forgery opens without any error: hence authenticated=False.
    scheme, sender, receiver, _ = session("elgamal", "python", 512)
    size = scheme.cipher.ciphertext_len // 2
    p = GROUPS[512].p
    payload = b"".join(sender.seal(b"\x00"))
    c1, c2 = payload[:size], int.from_bytes(payload[size:], "big")
    r = 0x0101 * pow(0x0100, -1, p) % p
    forged = c1 + (c2 * r % p).to_bytes(size, "big")
    assert receiver.open(payload) == b"\x00"
    assert receiver.open(forged) == b"\x01"


# ----------------------------------------------------------------- chunked mode


@pytest.mark.parametrize(
    ("scheme_id", "backend", "bits"),
    [
        ("elgamal", "python", 512),
        ("rsa-oaep", "cryptography", 2048),
        ("rsa-oaep", "pycryptodome", 2048),
        ("rsa-textbook", "python", 512),
    ],
)
def test_chunked_mode(scheme_id: str, backend: str, bits: int) -> None:
    scheme, sender, receiver, _ = session(scheme_id, backend, bits, chunked=True)
    block, size = scheme.cipher.max_plaintext, scheme.cipher.ciphertext_len
    assert scheme.info.label.endswith("(chunked)")
    assert scheme.info.max_plaintext is None
    assert any("chunked" in note for note in scheme.info.notes)
    message = os.urandom(block * 3 + block // 2)  # 3.5 blocks
    parts = sender.seal(message)
    payload = b"".join(parts)
    assert len(parts) == 4
    assert len(payload) == 4 * size
    assert scheme.payload_overhead(len(message)) >= len(payload) - len(message)
    assert receiver.open(payload) == message
    # Whole blocks, one block, an empty message, and a 1000-byte message.
    for length in (0, 1, block, 2 * block, 1000):
        message = os.urandom(length)
        payload = b"".join(sender.seal(message))
        assert len(payload) == max(1, math.ceil(length / block)) * size
        assert scheme.payload_overhead(length) >= len(payload) - length
        assert receiver.open(payload) == message


@pytest.mark.parametrize(
    ("scheme_id", "backend", "bits"),
    [("elgamal", "python", 512), ("rsa-oaep", "cryptography", 2048), ("rsa-textbook", "python", 512)],
)
def test_unchunked_receiver_rejects_a_multi_block_payload(scheme_id: str, backend: str, bits: int) -> None:
    plain = registry.create(scheme_id, backend, {"bits": bits})
    chunked = registry.create(scheme_id, backend, {"bits": bits, "chunked": True})
    assert not plain.info.label.endswith("(chunked)")
    sender, receiver, _ = connect(plain, sender_scheme=chunked)
    message = os.urandom(plain.cipher.max_plaintext * 2 + 1)
    payload = b"".join(sender.seal(message))
    assert len(payload) == 3 * plain.cipher.ciphertext_len
    with pytest.raises(PayloadFormatError, match="chunked"):
        receiver.open(payload)
    assert receiver.open(payload[: plain.cipher.ciphertext_len]) == message[: plain.cipher.max_plaintext]


def test_chunked_tamper_in_any_block_is_rejected() -> None:
    scheme, sender, receiver, _ = session("rsa-oaep", "cryptography", 2048, chunked=True)
    payload = b"".join(sender.seal(os.urandom(3 * scheme.cipher.max_plaintext)))
    for offset in (0, 256 + 5, 2 * 256 + 255):
        with pytest.raises(REJECTED):
            receiver.open(flip_bit(payload, offset))


# ----------------------------------------------------------------- ElGamal groups


@pytest.mark.parametrize("bits", GROUPS)
def test_group_is_a_safe_prime_group_of_the_stated_size(bits: int) -> None:
    group = GROUPS[bits]
    p, q, g = group.p, group.q, group.g
    assert group.bits == bits
    assert p.bit_length() == bits
    assert q == (p - 1) // 2
    assert Primality.test_probable_prime(p) == Primality.PROBABLY_PRIME
    assert Primality.test_probable_prime(q) == Primality.PROBABLY_PRIME
    assert p % 4 == 3  # so -1 is a non-residue (the encoding relies on it)
    assert g != 1 and 1 < g < p - 1
    assert pow(g, q, p) == 1  # g generates the order-q subgroup (q prime, g != 1)
    assert group.source


def test_published_groups_are_the_rfc_ones() -> None:
    # RFC 3526/7919 and RFC 2409 primes begin and end with 64 one bits.
    for bits in (1024, 2048, 3072, 4096):
        p = GROUPS[bits].p
        assert p >> (bits - 64) == 2**64 - 1
        assert p & (2**64 - 1) == 2**64 - 1
        assert GROUPS[bits].g == 2
    assert "RFC 2409" in GROUPS[1024].source
    assert "ffdhe2048" in GROUPS[2048].source


@pytest.mark.parametrize("bits", GROUPS)
def test_elgamal_max_plaintext(bits: int) -> None:
    cipher = ElGamal(GROUPS[bits])
    assert cipher.max_plaintext == (bits - 3) // 8
    assert cipher.ciphertext_len == 2 * math.ceil(bits / 8)
    # The largest block, with its 0x01 marker, stays below the group order.
    assert int.from_bytes(b"\x01" + b"\xff" * cipher.max_plaintext, "big") < GROUPS[bits].q


@pytest.mark.parametrize("bits", (128, 512, 2048))
def test_elgamal_recovers_leading_zero_bytes(bits: int) -> None:
    cipher = ElGamal(GROUPS[bits])
    private, public = cipher.generate()
    key = cipher.load_public(public)
    limit = cipher.max_plaintext
    for message in (
        b"",
        b"\x00",
        b"\x00\x00\x01",
        b"\x00" * limit,
        b"\x00" * (limit - 1) + b"\x01",
        b"\x00\xff" + os.urandom(limit - 2),
    ):
        assert cipher.decrypt(private, cipher.encrypt(key, message)) == message


@pytest.mark.parametrize("bits", (128, 512))
def test_elgamal_ciphertext_elements_are_in_the_subgroup(bits: int) -> None:
    # c1 = g^k and c2 = m' h^k with m' mapped to a residue: both of order q.
    cipher = ElGamal(GROUPS[bits])
    p, q = GROUPS[bits].p, GROUPS[bits].q
    _private, public = cipher.generate()
    key = cipher.load_public(public)
    size = cipher.ciphertext_len // 2
    for _ in range(20):
        block = cipher.encrypt(key, os.urandom(cipher.max_plaintext))
        c1, c2 = int.from_bytes(block[:size], "big"), int.from_bytes(block[size:], "big")
        assert pow(c1, q, p) == 1
        assert pow(c2, q, p) == 1


@pytest.mark.parametrize("bits", ELGAMAL_TESTED)
def test_elgamal_load_public_rejects_bad_elements(bits: int) -> None:
    group = GROUPS[bits]
    p, q, g = group.p, group.q, group.g
    cipher = ElGamal(group)
    size = (bits + 7) // 8
    non_residue = p - g
    assert pow(non_residue, q, p) != 1  # outside the subgroup: -g with -1 a non-residue
    for value in (0, 1, p - 1, p, non_residue):
        with pytest.raises(PayloadFormatError):
            cipher.load_public(value.to_bytes(size, "big"))
    for bad in (b"", bytes(size - 1), g.to_bytes(size + 1, "big"), g.to_bytes(size - 1, "big")):
        with pytest.raises(PayloadFormatError):
            cipher.load_public(bad)
    assert cipher.load_public(g.to_bytes(size, "big")) == g  # the generator is a valid key
    assert cipher.load_public(pow(g, 12345, p).to_bytes(size, "big")) == pow(g, 12345, p)


def test_elgamal_sender_handshake_rejects_a_non_residue_key() -> None:
    scheme = registry.create("elgamal", "python", {"bits": 256})
    p = GROUPS[256].p
    with pytest.raises(PayloadFormatError):
        scheme.new_sender().handshake((p - 4).to_bytes(32, "big"))


@pytest.mark.parametrize("bits", (128, 512))
def test_elgamal_decrypt_rejects_out_of_range_components(bits: int) -> None:
    cipher = ElGamal(GROUPS[bits])
    p = GROUPS[bits].p
    private, public = cipher.generate()
    good = cipher.encrypt(cipher.load_public(public), b"hi")
    size = cipher.ciphertext_len // 2
    for c1, c2 in ((0, 5), (5, 0), (p, 5), (5, p), (2**bits - 1, 5)):
        with pytest.raises(PayloadFormatError):
            cipher.decrypt(private, c1.to_bytes(size, "big") + c2.to_bytes(size, "big"))
    with pytest.raises(PayloadFormatError):
        cipher.decrypt(private, good[:-1])


@pytest.mark.parametrize("bits", (128, 512))
def test_jacobi_agrees_with_euler_criterion(bits: int) -> None:
    p, q = GROUPS[bits].p, GROUPS[bits].q
    rng = random.Random(bits)
    seen = set()
    for _ in range(500):
        a = rng.randrange(1, p)
        euler = 1 if pow(a, q, p) == 1 else -1
        assert jacobi(a, p) == euler
        seen.add(euler)
    assert seen == {1, -1}
    assert jacobi(0, p) == 0
    assert jacobi(p, p) == 0
    assert jacobi(p - 1, p) == -1  # p = 3 mod 4
    assert jacobi(1, p) == 1
    assert jacobi(a + p, p) == jacobi(a, p)  # reduces its argument


def _legendre(a: int, prime: int) -> int:
    r = pow(a, (prime - 1) // 2, prime)
    return -1 if r == prime - 1 else r


def _jacobi_by_factoring(a: int, n: int) -> int:
    result, m, f = 1, n, 3
    while m > 1:
        while m % f == 0:
            result *= _legendre(a % f, f)
            m //= f
        f += 2
    return result


def test_jacobi_on_composite_moduli() -> None:
    for n in range(3, 120, 2):
        for a in range(2 * n):
            assert jacobi(a, n) == _jacobi_by_factoring(a, n), (a, n)


# ----------------------------------------------------------------- RSA-OAEP


@pytest.mark.parametrize("bits", (1024, 2048, 3072, 4096))
@pytest.mark.parametrize("backend", RSA_BACKENDS)
def test_rsa_max_plaintext(backend: str, bits: int) -> None:
    cipher = RSA_CLASSES[backend](bits)
    assert cipher.ciphertext_len == bits // 8
    assert cipher.max_plaintext == bits // 8 - 66  # k - 2 hLen - 2 with SHA-256
    assert registry.create("rsa-oaep", backend, {"bits": bits}).info.max_plaintext == bits // 8 - 66


@pytest.mark.parametrize(("key_backend", "sender_backend"), list(itertools.permutations(RSA_BACKENDS)))
def test_rsa_backends_interoperate(key_backend: str, sender_backend: str) -> None:
    private, public_der = rsa_keys(key_backend)
    receiving, sending = RSA_CLASSES[key_backend](2048), RSA_CLASSES[sender_backend](2048)
    public = sending.load_public(public_der)
    for message in (b"", b"\x00", os.urandom(receiving.max_plaintext)):
        assert receiving.decrypt(private, sending.encrypt(public, message)) == message


@pytest.mark.parametrize(("receiver_backend", "sender_backend"), list(itertools.permutations(RSA_BACKENDS)))
def test_rsa_sessions_interoperate(receiver_backend: str, sender_backend: str) -> None:
    _scheme, _, receiver, public = session("rsa-oaep", receiver_backend, 2048)
    sender = registry.create("rsa-oaep", sender_backend, {"bits": 2048}).new_sender()
    assert sender.handshake(public) == b""
    message = os.urandom(190)
    assert receiver.open(b"".join(sender.seal(message))) == message


@pytest.mark.parametrize("backend", RSA_BACKENDS)
def test_rsa_load_public_rejects_bad_keys(backend: str) -> None:
    cipher = RSA_CLASSES[backend](2048)
    _, small_der = rsa_small()  # a valid RSA key of the wrong size
    _, good_der = rsa_keys("cryptography")
    for bad in (b"", b"garbage", good_der[:-1], small_der, random.Random(1).randbytes(len(good_der))):
        with pytest.raises(PayloadFormatError):
            cipher.load_public(bad)
    cipher.load_public(good_der)  # and accepts the right one
    with pytest.raises(PayloadFormatError):
        registry.create("rsa-oaep", backend, {"bits": 2048}).new_sender().handshake(small_der)


def test_rsa_load_public_rejects_a_non_rsa_key() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    ec_der = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    )
    for backend in RSA_BACKENDS:
        with pytest.raises(PayloadFormatError):
            RSA_CLASSES[backend](2048).load_public(ec_der)


def test_pycryptodome_refuses_a_private_key_as_public() -> None:
    from Crypto.PublicKey import RSA

    private_der = RSA.generate(1024).export_key(format="DER")
    with pytest.raises(PayloadFormatError):
        PycryptodomeRsaOaep(1024).load_public(private_der)


# ----------------------------------------------------------------- security metadata


def test_factoring_strength_of_listed_sizes() -> None:
    assert [factoring_strength(b) for b in (1024, 2048, 3072, 4096)] == [80, 112, 128, 152]
    assert factoring_strength(7680) == 192
    assert factoring_strength(15360) == 256


def test_factoring_strength_is_monotone() -> None:
    strengths = [factoring_strength(bits) for bits in range(128, 8193)]
    assert all(a <= b for a, b in zip(strengths, strengths[1:])), [
        (128 + i, a, b) for i, (a, b) in enumerate(zip(strengths, strengths[1:])) if a > b
    ][:5]
    assert strengths[0] < strengths[-1]
    assert all(s % 8 == 0 and s >= 8 for s in strengths)


@pytest.mark.parametrize(
    ("bits", "strength", "insecure"), [(1024, 80, True), (2048, 112, False), (3072, 128, False), (4096, 152, False)]
)
@pytest.mark.parametrize("backend", RSA_BACKENDS)
def test_rsa_scheme_info(backend: str, bits: int, strength: int, insecure: bool) -> None:
    info = registry.create("rsa-oaep", backend, {"bits": bits}).info
    assert info.scheme_id == "rsa-oaep"
    assert info.family is Family.PUBLIC_KEY_ENCRYPTION
    assert info.backend == backend
    assert info.label == f"RSA-OAEP-{bits}"
    assert info.security.classical_bits == strength
    assert info.security.pq_category == 0
    assert info.insecure is insecure
    assert dict(info.params) == {"bits": bits, "chunked": False}


@pytest.mark.parametrize("bits", GROUPS)
def test_elgamal_scheme_info(bits: int) -> None:
    info = registry.create("elgamal", "python", {"bits": bits}).info
    assert info.label == f"ElGamal-{bits}"
    assert info.security.classical_bits == factoring_strength(bits)
    assert info.insecure is (bits < 2048)
    assert info.backend == "python"
    assert any(GROUPS[bits].source in note for note in info.notes)


# ----------------------------------------------------------------- textbook RSA (E3)
