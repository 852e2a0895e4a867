"""Checks through the adapters of public-key encryption and KEMs (app/core/schemes/pke.py, hybrid.py).

Part of the checks through the scheme adapters (:mod:`.adapters`, whose ``ADAPTER_CHECKS``
ends with these): the same rules hold, the schemes and libraries are imported only when
a check runs.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.selftest import vectors
from app.core.selftest.adapter_parts import MESSAGE, adder, create, via
from app.core.selftest.framework import CROSS_CHECK, KAT, SelftestCheck, expect_equal
from app.core.selftest.post_quantum import CCTV_UNLUCKY, sha3_256
from app.core.selftest.rsa import interop_keys

__all__ = ["CHECKS"]

CHECKS: list[SelftestCheck] = []
"""The checks through pke.py and hybrid.py, in the order they run."""

_add = adder(CHECKS)


# ======================================================================================
# RSA-OAEP (pke.py): the adapter's ciphertext decrypts in the library, and back
# ======================================================================================


def _rsa_oaep_cross_check(backend: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding

        from app.core.schemes.pke import PkeScheme

        library_key, _ = interop_keys()
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
        cipher = create(PkeScheme, "rsa-oaep", backend, {"bits": 2048}).cipher
        public = library_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        block = cipher.encrypt(cipher.load_public(public), MESSAGE)
        expect_equal(
            "library OAEP-SHA256 decryption of the adapter's ciphertext", library_key.decrypt(block, oaep), MESSAGE
        )
        if backend == "cryptography":  # pycryptodome's private handle is made inside generate()
            theirs = library_key.public_key().encrypt(MESSAGE, oaep)
            expect_equal(
                "adapter decryption of the library's ciphertext", bytes(cipher.decrypt(library_key, theirs)), MESSAGE
            )

    return run


for _backend in ("cryptography", "pycryptodome"):
    _add(
        "RSA-2048 OAEP-SHA256 agrees with the library",
        _backend,
        CROSS_CHECK,
        via(
            "pke",
            "cross-check against cryptography with OAEP-SHA256, MGF1-SHA256 (no published vector; OAEP is randomised)",
        ),
        _rsa_oaep_cross_check(_backend),
        schemes=("rsa-oaep",),
    )


# ======================================================================================
# KEM (hybrid.py): published decapsulation through the adapter
# ======================================================================================


def _mlkem_check(level: int, name: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.hazmat.primitives.asymmetric import mlkem

        from app.core.schemes.hybrid import HybridScheme

        vector = vectors.MLKEM[name]
        kem = create(HybridScheme, "ml-kem", "cryptography", {"level": level}).kem
        private = getattr(mlkem, f"MLKEM{level}PrivateKey").from_seed_bytes(vector.seed)
        expect_equal(
            "decapsulate (published ciphertext)", kem.decapsulate(private, vector.ciphertext), vector.shared_secret
        )
        ek = private.public_key().public_bytes_raw()
        expect_equal("H(ek) = SHA3-256(ek)", sha3_256(ek), vector.ek_sha3_256)
        shared, enc = kem.encapsulate(kem.load_public(ek))
        expect_equal("decapsulate(encapsulate)", kem.decapsulate(private, enc), shared)

    return run


_add(
    "ML-KEM-768 KeyGen from seed + Decaps",
    "cryptography",
    KAT,
    via("hybrid", CCTV_UNLUCKY.format(file="ML-KEM-768.txt")),
    _mlkem_check(768, "ML-KEM-768 unlucky"),
    schemes=("ml-kem",),
)
_add(
    "ML-KEM-1024 KeyGen from seed + Decaps",
    "cryptography",
    KAT,
    via("hybrid", CCTV_UNLUCKY.format(file="ML-KEM-1024.txt")),
    _mlkem_check(1024, "ML-KEM-1024 unlucky"),
    schemes=("ml-kem",),
)
