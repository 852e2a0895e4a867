"""ElGamal with short exponents (E3's second hypothesis): x and k of exactly n bits,
decryption that stays short, a label that keeps such jobs apart and a security level
capped at n/2 bits (Pollard's lambda)."""

from __future__ import annotations

import os

import pytest

from app.core.schemes.elgamal_groups import GROUPS
from app.core.schemes.pke import ElGamal
from app.core.schemes.registry import create, get_spec


@pytest.mark.parametrize("bits", [512, 1024])
@pytest.mark.parametrize("short", [160, 256])
def test_short_exponents_round_trip_and_have_exactly_n_bits(bits: int, short: int) -> None:
    cipher = ElGamal(GROUPS[bits], short)
    for _ in range(5):
        x, public = cipher.generate()
        assert x.bit_length() == short
        message = os.urandom(cipher.max_plaintext)
        assert cipher.decrypt(x, cipher.encrypt(cipher.load_public(public), message)) == message


def test_full_length_stays_the_default() -> None:
    scheme = create("elgamal", "python", {"bits": 1024})
    assert scheme.info.params["exponent_bits"] == 0 and scheme.info.label == "ElGamal-1024"
    xs = [ElGamal(GROUPS[1024]).generate()[0].bit_length() for _ in range(8)]
    assert max(xs) > 900  # uniform below q: never all short


def test_label_and_security_say_what_short_exponents_cost() -> None:
    full = create("elgamal", "python", {"bits": 3072})
    short = create("elgamal", "python", {"bits": 3072, "exponent_bits": 160, "chunked": True})
    assert short.info.label == "ElGamal-3072 (x, k: 160 bits) (chunked)" != full.info.label
    assert full.info.security.classical_bits == 128 and not full.info.insecure
    assert short.info.security.classical_bits == 80 and short.info.insecure
    assert any("Pollard" in note and "80 bits" in note for note in short.info.notes)
    sender, receiver = short.new_sender(), short.new_receiver()
    sender.handshake(receiver.setup())
    message = os.urandom(1000)
    assert bytes(receiver.open(b"".join(sender.seal(message)))) == message


@pytest.mark.parametrize("value", [1, 1023, 5000])
def test_exponent_longer_than_the_group_order_is_refused(value: int) -> None:
    spec = get_spec("elgamal")
    assert spec.constraint is not None
    problem = spec.constraint("python", {"bits": 1024, "exponent_bits": value, "chunked": False})
    assert problem is not None and "exponent_bits" in problem and str(value) in problem
