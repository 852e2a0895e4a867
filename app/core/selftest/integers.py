"""Checks of the schemes computed with Python integers: Diffie-Hellman/ElGamal and textbook RSA.

The numbers are small enough to check by hand (resources/selftest/textbook.json).
"""

from __future__ import annotations

from app.core.selftest import vectors
from app.core.selftest.framework import (
    CONSISTENCY,
    KAT,
    PYTHON,
    SelftestCheck,
    SelftestMismatch,
    expect,
    expect_equal,
    registrar,
)

CHECKS: list[SelftestCheck] = []
_register = registrar(CHECKS)


@_register(
    "Diffie-Hellman and ElGamal with pow() in a toy group",
    PYTHON,
    CONSISTENCY,
    "hand-checkable textbook example (p = 23, g = 5); no published ElGamal vector exists",
)
def _check_elgamal_python() -> None:
    vector = vectors.TOY_DH["p=23, g=5"]
    p, g, a, b = vector.p, vector.g, vector.a, vector.b
    public_a, public_b = pow(g, a, p), pow(g, b, p)
    expect_equal("(g^a, g^b) mod p", (public_a, public_b), (vector.public_a, vector.public_b))
    expect_equal("(g^b)^a mod p", pow(public_b, a, p), vector.shared)
    expect_equal("(g^a)^b mod p", pow(public_a, b, p), vector.shared)
    message, ephemeral = vector.elgamal_message, vector.elgamal_k
    ciphertext = (pow(g, ephemeral, p), message * pow(public_a, ephemeral, p) % p)
    expect_equal("ElGamal ciphertext (c1, c2)", ciphertext, vector.elgamal_ciphertext)
    c1, c2 = ciphertext
    expect_equal("ElGamal decryption", c2 * pow(pow(c1, a, p), -1, p) % p, message)
    expect(
        c2 * pow(pow(c1, b, p), -1, p) % p != message,
        "ElGamal decryption with the wrong private key recovered the message",
    )


@_register(
    "Textbook RSA with pow(), with and without CRT, RSA paper example",
    PYTHON,
    KAT,
    "Rivest, Shamir, Adleman, CACM 21(2) 1978, section VIII (n = 47 * 59, e = 17, M = 920)",
)
def _check_rsa_textbook_python() -> None:
    vector = vectors.TEXTBOOK_RSA["RSA paper"]
    p, q, e, d = vector.p, vector.q, vector.e, vector.d
    message, expected = vector.message, vector.ciphertext
    n = p * q
    expect_equal("e * d mod (p - 1)(q - 1)", e * d % ((p - 1) * (q - 1)), 1)
    ciphertext = pow(message, e, n)
    expect_equal("M^e mod n", ciphertext, expected)
    expect_equal("C^d mod n (decryption without CRT, one of the E3 hypotheses)", pow(ciphertext, d, n), message)
    # The CRT decryption the scheme uses by default (Garner's recombination) must give
    # the same answer as the plain one for every ciphertext of the toy key, and also
    # with e = 65537, the exponent the scheme fixes.
    for exponent in (e, 65537):
        private = pow(exponent, -1, (p - 1) * (q - 1))
        dp, dq, qinv = private % (p - 1), private % (q - 1), pow(q, -1, p)
        for c in range(n):
            m1, m2 = pow(c, dp, p), pow(c, dq, q)
            with_crt = m2 + (qinv * (m1 - m2) % p) * q
            plain = pow(c, private, n)
            if with_crt != plain or pow(plain, exponent, n) != c:
                raise SelftestMismatch(f"e = {exponent}, C = {c}: CRT decryption {with_crt}, plain decryption {plain}")
