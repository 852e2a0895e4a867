"""Known-answer self-tests for every cryptographic backend CryptoBench measures.

A benchmark is only worth reading if the code it times computes the right thing.
``cryptobench selftest`` therefore runs each backend (``cryptography``,
``pycryptodome``, ``tinyec`` and plain-Python integers) against the test vectors
published with the standards: the GCM specification's test cases, RFC 8439,
FIPS 180-4 / FIPS 202 / RFC 7693, RFC 5869, RFC 7748, RFC 8032, RFC 6979,
RFC 7027, RFC 5903, the PKCS #1 v2.1 vectors, Project Wycheproof's RSA and
secp256k1 vectors, and the FIPS 203 / FIPS 204 vectors published by NIST ACVP and C2SP.

Three kinds of checks are reported, and they are never mixed up:

* ``KAT`` -- the output equals a value published by a standard or by an
  authoritative vector collection (cited next to each vector).
* ``cross-check`` -- two independent implementations agree on the same input; used
  where no published vector exists (HKDF-SHA384, ElGamal in the scheme's groups).
* ``consistency`` -- properties that must hold but are not a published answer
  (randomised encryption round trips, sizes from the FIPS tables, tampered
  input rejected).

The vectors are data, in ``resources/selftest/*.json`` with their sources
(:mod:`.vectors` reads and checks them, once, when a check first asks). The checks
are code, one module per family: :mod:`.symmetric`, :mod:`.curves`, :mod:`.rsa`,
:mod:`.post_quantum`, :mod:`.integers`; :mod:`.framework` says what a check is. They
are Qt-free and use no ``app`` module beyond this package and the resources helper:
they call the libraries directly, so they check the libraries and run before anything
else is trusted. :func:`run_selftests` then runs the same vectors through the app's
own scheme adapters (:mod:`.adapters`, imported only then), so a broken wrapper fails
too. Backends are imported inside the checks, so a missing or broken backend (or a
broken vector file) fails its own checks instead of the whole self-test.
:func:`run_selftests` never raises.
"""

from __future__ import annotations

from app.core.selftest import curves, integers, post_quantum, rsa, symmetric
from app.core.selftest.framework import (
    KAT,
    PYTHON,
    SelftestCheck,
    SelftestResult,
    run_one,
)

__all__ = ["CHECKS", "adapter_checks", "run_selftests"]

CHECKS: list[SelftestCheck] = [
    *symmetric.CHECKS,
    *curves.CHECKS,
    *rsa.CHECKS,
    *post_quantum.CHECKS,
    *integers.CHECKS,
]
"""Every library check, in the order :func:`run_selftests` runs them."""


def run_selftests() -> list[SelftestResult]:
    """Run every registered check and report each one.

    Never raises for a failing check: an exception inside a check becomes
    ``passed=False`` with the exception text as detail. (KeyboardInterrupt and
    SystemExit still propagate, so a user can stop a run.)

    Returns:
        One :class:`SelftestResult` per entry of :data:`CHECKS`, in order, then one
        per adapter check (:func:`adapter_checks`).
    """
    rsa.interop_keys.cache_clear()
    try:
        return [run_one(check) for check in CHECKS + adapter_checks()]
    finally:
        # The RSA key pair is generated once per run; do not keep it afterwards.
        rsa.interop_keys.cache_clear()


def adapter_checks() -> list[SelftestCheck]:
    """The checks through ``app/core/schemes``; one failing check if they cannot load."""
    try:
        from app.core.selftest.adapters import ADAPTER_CHECKS  # the one app import, kept out of the library checks
    except Exception as exc:  # noqa: BLE001 - a broken app module fails a check, not the run
        error = exc

        def failed_import() -> None:
            raise error

        return [
            SelftestCheck("App adapters load [python]", PYTHON, KAT, "app/core/selftest/adapters.py", failed_import)
        ]
    return list(ADAPTER_CHECKS)
