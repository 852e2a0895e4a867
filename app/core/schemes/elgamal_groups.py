"""Finite-field groups for ElGamal: safe primes p = 2q + 1 and a generator of the
order-q subgroup.

1024 bits and up are the published groups (RFC 2409 group 2; RFC 7919 ffdhe2048/
3072/4096), because generating a safe prime takes seconds to minutes and a published
group is what a deployment would use. The 128/256/512-bit demonstration groups are
random safe primes generated once for this project (the E1/E3 experiments use such
toy sizes); their generator 4 = 2^2 is a quadratic residue, so it generates the
order-q subgroup. tests/core/schemes/test_pke.py re-checks every group: p and q
probable primes, p of the stated size, g of order q.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FfGroup:
    bits: int
    p: int
    g: int
    source: str

    @property
    def q(self) -> int:
        return (self.p - 1) // 2


def _hex(*lines: str) -> int:
    return int("".join(lines), 16)


GROUPS: dict[int, FfGroup] = {
    128: FfGroup(
        128,
        _hex("923e5684663ee90661db691eee2a3b27"),
        4,
        "generated for this project (random safe prime, 2026-11-21)",
    ),
    256: FfGroup(
        256,
        _hex("e6b1306d19a18075f7970a4857149b9bdfd6c5cc1fcaaa712351ed7a7cee72fb"),
        4,
        "generated for this project (random safe prime, 2026-11-21)",
    ),
    512: FfGroup(
        512,
        _hex(
            "fbcdf95586e1c23f9d0a612f333646164fbf4805e36704b8bfa5ada9822ec86a"
            "f50a06e71f4478b6a25fbae7f03babc4152f4a3df62282ccbfb89c4d1a5448c3"
        ),
        4,
        "generated for this project (random safe prime, 2026-11-21)",
    ),
    1024: FfGroup(
        1024,
        _hex(
            "ffffffffffffffffc90fdaa22168c234c4c6628b80dc1cd129024e088a67cc74"
            "020bbea63b139b22514a08798e3404ddef9519b3cd3a431b302b0a6df25f1437"
            "4fe1356d6d51c245e485b576625e7ec6f44c42e9a637ed6b0bff5cb6f406b7ed"
            "ee386bfb5a899fa5ae9f24117c4b1fe649286651ece65381ffffffffffffffff"
        ),
        2,
        "RFC 2409 section 6.2 (Oakley group 2)",
    ),
    2048: FfGroup(
        2048,
        _hex(
            "ffffffffffffffffadf85458a2bb4a9aafdc5620273d3cf1d8b9c583ce2d3695"
            "a9e13641146433fbcc939dce249b3ef97d2fe363630c75d8f681b202aec4617a"
            "d3df1ed5d5fd65612433f51f5f066ed0856365553ded1af3b557135e7f57c935"
            "984f0c70e0e68b77e2a689daf3efe8721df158a136ade73530acca4f483a797a"
            "bc0ab182b324fb61d108a94bb2c8e3fbb96adab760d7f4681d4f42a3de394df4"
            "ae56ede76372bb190b07a7c8ee0a6d709e02fce1cdf7e2ecc03404cd28342f61"
            "9172fe9ce98583ff8e4f1232eef28183c3fe3b1b4c6fad733bb5fcbc2ec22005"
            "c58ef1837d1683b2c6f34a26c1b2effa886b423861285c97ffffffffffffffff"
        ),
        2,
        "RFC 7919 appendix A (ffdhe2048)",
    ),
    3072: FfGroup(
        3072,
        _hex(
            "ffffffffffffffffadf85458a2bb4a9aafdc5620273d3cf1d8b9c583ce2d3695"
            "a9e13641146433fbcc939dce249b3ef97d2fe363630c75d8f681b202aec4617a"
            "d3df1ed5d5fd65612433f51f5f066ed0856365553ded1af3b557135e7f57c935"
            "984f0c70e0e68b77e2a689daf3efe8721df158a136ade73530acca4f483a797a"
            "bc0ab182b324fb61d108a94bb2c8e3fbb96adab760d7f4681d4f42a3de394df4"
            "ae56ede76372bb190b07a7c8ee0a6d709e02fce1cdf7e2ecc03404cd28342f61"
            "9172fe9ce98583ff8e4f1232eef28183c3fe3b1b4c6fad733bb5fcbc2ec22005"
            "c58ef1837d1683b2c6f34a26c1b2effa886b4238611fcfdcde355b3b6519035b"
            "bc34f4def99c023861b46fc9d6e6c9077ad91d2691f7f7ee598cb0fac186d91c"
            "aefe130985139270b4130c93bc437944f4fd4452e2d74dd364f2e21e71f54bff"
            "5cae82ab9c9df69ee86d2bc522363a0dabc521979b0deada1dbf9a42d5c4484e"
            "0abcd06bfa53ddef3c1b20ee3fd59d7c25e41d2b66c62e37ffffffffffffffff"
        ),
        2,
        "RFC 7919 appendix A (ffdhe3072)",
    ),
    4096: FfGroup(
        4096,
        _hex(
            "ffffffffffffffffadf85458a2bb4a9aafdc5620273d3cf1d8b9c583ce2d3695"
            "a9e13641146433fbcc939dce249b3ef97d2fe363630c75d8f681b202aec4617a"
            "d3df1ed5d5fd65612433f51f5f066ed0856365553ded1af3b557135e7f57c935"
            "984f0c70e0e68b77e2a689daf3efe8721df158a136ade73530acca4f483a797a"
            "bc0ab182b324fb61d108a94bb2c8e3fbb96adab760d7f4681d4f42a3de394df4"
            "ae56ede76372bb190b07a7c8ee0a6d709e02fce1cdf7e2ecc03404cd28342f61"
            "9172fe9ce98583ff8e4f1232eef28183c3fe3b1b4c6fad733bb5fcbc2ec22005"
            "c58ef1837d1683b2c6f34a26c1b2effa886b4238611fcfdcde355b3b6519035b"
            "bc34f4def99c023861b46fc9d6e6c9077ad91d2691f7f7ee598cb0fac186d91c"
            "aefe130985139270b4130c93bc437944f4fd4452e2d74dd364f2e21e71f54bff"
            "5cae82ab9c9df69ee86d2bc522363a0dabc521979b0deada1dbf9a42d5c4484e"
            "0abcd06bfa53ddef3c1b20ee3fd59d7c25e41d2b669e1ef16e6f52c3164df4fb"
            "7930e9e4e58857b6ac7d5f42d69f6d187763cf1d5503400487f55ba57e31cc7a"
            "7135c886efb4318aed6a1e012d9e6832a907600a918130c46dc778f971ad0038"
            "092999a333cb8b7a1a1db93d7140003c2a4ecea9f98d0acc0a8291cdcec97dcf"
            "8ec9b55a7f88a46b4db5a851f44182e1c68a007e5e655f6affffffffffffffff"
        ),
        2,
        "RFC 7919 appendix A (ffdhe4096)",
    ),
}
