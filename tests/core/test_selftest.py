"""Tests for app.core.selftest: known-answer tests for every backend.

The self-test is only useful if (a) every check passes on a correct installation and
(b) a check really fails when a library computes something else. (b) is proved by
corrupting one published vector at a time and watching exactly its checks fail.
"""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core import selftest, selftest_adapters
from app.core.selftest import SelftestResult

SELFTEST_SOURCE = Path(selftest.__file__)
BACKENDS = {"cryptography", "pycryptodome", "tinyec", "python"}
KINDS = {"KAT", "cross-check", "consistency"}


@dataclasses.dataclass(frozen=True)
class _Run:
    results: list[SelftestResult]
    seconds: float


@pytest.fixture(scope="module")
def run() -> _Run:
    start = time.perf_counter()
    results = selftest.run_selftests()
    return _Run(results=results, seconds=time.perf_counter() - start)


def _failures(results: list[SelftestResult]) -> dict[str, str]:
    return {r.name: r.detail for r in results if not r.passed}


def _names_starting(prefix: str) -> set[str]:
    """The library checks named prefix..., and the adapter KATs that run the same vectors.

    (An adapter cross-check compares with the library on the vector's inputs only, so a
    corrupted published answer cannot fail it.)
    """
    names = {check.name for check in selftest.CHECKS if check.name.startswith(prefix)}
    assert names, f"no check is named {prefix!r}..."
    return names | {c.name for c in selftest_adapters.ADAPTER_CHECKS
                    if c.name.startswith(f"App adapter {prefix}") and c.kind == "KAT"}


# --------------------------------------------------------------------------------------
# Everything passes, and the report is well formed
# --------------------------------------------------------------------------------------


def test_every_check_passes_on_this_machine(run: _Run) -> None:
    assert _failures(run.results) == {}


def test_one_result_per_registered_check_in_order(run: _Run) -> None:
    assert [r.name for r in run.results] == [c.name for c in selftest.CHECKS + selftest_adapters.ADAPTER_CHECKS]
    assert all(isinstance(r, SelftestResult) for r in run.results)


def test_every_name_is_unique(run: _Run) -> None:
    names = [r.name for r in run.results]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert duplicates == []


def test_fields_use_the_documented_vocabulary(run: _Run) -> None:
    for result in run.results:
        assert result.backend in BACKENDS, result
        assert result.kind in KINDS, result
        assert result.source.strip(), result
        assert result.detail == "", result  # passed checks carry no detail


def test_results_are_immutable(run: _Run) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.results[0].passed = False  # type: ignore[misc]


@pytest.mark.parametrize("backend", ["cryptography", "pycryptodome", "tinyec"])
def test_every_library_backend_has_a_known_answer_test(run: _Run, backend: str) -> None:
    assert any(r.backend == backend and r.kind == "KAT" for r in run.results)


def test_every_backend_the_app_uses_is_covered(run: _Run) -> None:
    assert {r.backend for r in run.results} == BACKENDS


@pytest.mark.parametrize(
    "standard",
    ["SP 800-38D", "GCM", "RFC 8439", "RFC 5869", "RFC 7748", "RFC 8032", "RFC 6979", "RFC 7027"],
)
def test_each_named_standard_is_cited_by_a_known_answer_test(run: _Run, standard: str) -> None:
    assert any(standard in r.source for r in run.results if r.kind == "KAT")


def test_hkdf_sha384_is_a_cross_check_never_a_kat(run: _Run) -> None:
    sha384 = [r for r in run.results if "HKDF-SHA384" in r.name]
    assert sha384
    assert all(r.kind == "cross-check" for r in sha384)


def test_checks_without_published_vectors_say_so(run: _Run) -> None:
    for result in run.results:
        if result.kind == "consistency":
            assert "no published" in result.source, result


def test_post_quantum_schemes_are_covered(run: _Run) -> None:
    names = " ".join(r.name for r in run.results if r.kind == "KAT")
    for scheme in ("ML-KEM-768", "ML-KEM-1024", "ML-DSA-44"):
        assert scheme in names


# --------------------------------------------------------------------------------------
# Failures are reported, never raised
# --------------------------------------------------------------------------------------


def test_a_check_that_raises_is_reported_as_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("simulated backend failure " + "x" * 1000)

    index = next(i for i, c in enumerate(selftest.CHECKS) if c.backend == "tinyec")
    target = selftest.CHECKS[index]
    checks = list(selftest.CHECKS)
    checks[index] = dataclasses.replace(target, run=broken)
    monkeypatch.setattr(selftest, "CHECKS", checks)

    results = selftest.run_selftests()  # must not raise

    assert results[index].name == target.name
    assert results[index].passed is False
    assert results[index].detail.startswith("RuntimeError: simulated backend failure")
    assert len(results[index].detail) <= 300
    assert _failures(results).keys() == {target.name}


def _flip(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0x01])


# (module constant, how to corrupt it, prefix of the names of the checks that must fail)
CORRUPTIONS: list[tuple[str, Callable[[Any], Any], str]] = [
    (
        "GCM_TEST_CASE_16",
        lambda v: dataclasses.replace(v, tag=_flip(v.tag)),
        "AES-256-GCM with AAD, GCM test case 16",
    ),
    (
        "RFC8439_AEAD",
        lambda v: dataclasses.replace(v, ciphertext=_flip(v.ciphertext)),
        "ChaCha20-Poly1305",
    ),
    ("SHA3_256_ABC", _flip, "SHA3-256"),
    ("RFC5869_A2", lambda v: dataclasses.replace(v, okm=_flip(v.okm)), "HKDF-SHA256 long inputs"),
    ("RFC7748_X448_SHARED", _flip, "X448 key agreement"),
    (
        "RFC8032_ED25519",
        lambda v: (v[0], v[1], dataclasses.replace(v[2], signature=_flip(v[2].signature))),
        "Ed25519",
    ),
    ("RFC6979_P256_SHA256", lambda v: dataclasses.replace(v, s=v.s ^ 1), "ECDSA P-256"),
    (
        "RFC7027_BRAINPOOLP256R1",
        lambda v: dataclasses.replace(v, shared=(v.shared[0] ^ 1, v.shared[1])),
        "ECDH brainpoolP256r1",
    ),
    (
        "RFC5903_P384",
        lambda v: dataclasses.replace(v, shared=(v.shared[0] ^ 1, v.shared[1])),
        "ECDH P-384",
    ),
    (
        "PKCS1_PSS_EXAMPLE_1_1",
        lambda v: dataclasses.replace(v, signature=_flip(v.signature)),
        "RSA-1024 PSS-SHA1",
    ),
    (
        "CCTV_MLKEM768_UNLUCKY",
        lambda v: dataclasses.replace(v, shared_secret=_flip(v.shared_secret)),
        "ML-KEM-768 KeyGen",
    ),
    ("ACVP_MLDSA44_KEYGEN_PK_SHA3_256", _flip, "ML-DSA-44 KeyGen"),
    ("TOY_DH_SHARED", lambda v: v + 1, "Diffie-Hellman and ElGamal"),
]


@pytest.mark.parametrize(
    ("constant", "corrupt", "prefix"), CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS]
)
def test_a_corrupted_vector_fails_exactly_its_checks(
    monkeypatch: pytest.MonkeyPatch, constant: str, corrupt: Callable[[Any], Any], prefix: str
) -> None:
    monkeypatch.setattr(selftest, constant, corrupt(getattr(selftest, constant)))

    failures = _failures(selftest.run_selftests())

    assert failures.keys() == _names_starting(prefix)
    assert all(detail for detail in failures.values())


def test_a_mismatch_detail_shows_expected_and_got(monkeypatch: pytest.MonkeyPatch) -> None:
    vector = selftest.GCM_TEST_CASE_16
    monkeypatch.setattr(selftest, "GCM_TEST_CASE_16", dataclasses.replace(vector, tag=_flip(vector.tag)))

    failures = _failures(selftest.run_selftests())

    detail = failures["AES-256-GCM with AAD, GCM test case 16 [pycryptodome]"]
    assert detail == (
        "tag: expected 76fc6ece0f4e1768cddf8853bb2d551a (16 B), "
        "got 76fc6ece0f4e1768cddf8853bb2d551b (16 B)"
    )


# --------------------------------------------------------------------------------------
# Layering: Qt-free, and independent of the rest of the app
# --------------------------------------------------------------------------------------


def _imports(tree: ast.AST) -> set[str]:
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            imported.add(node.module or "")
    return imported


def test_selftest_imports_no_app_module_and_no_qt() -> None:
    """The library checks use no app code; the adapter checks are loaded in one function."""
    tree = ast.parse(SELFTEST_SOURCE.read_text(encoding="utf-8"))
    top_level = set().union(*(_imports(node) for node in tree.body if not isinstance(node, ast.FunctionDef)))
    library_checks = set().union(*(_imports(node) for node in tree.body
                                   if isinstance(node, ast.FunctionDef) and node.name != "adapter_checks"))
    roots = {name.split(".")[0] for name in top_level | library_checks}
    assert not roots & {"app", "PySide6", "pyqtgraph", "shiboken6"}
    assert {n for n in _imports(tree) if n.startswith("app")} == {"app.core.selftest_adapters"}
    adapters = _imports(ast.parse(Path(selftest_adapters.__file__).read_text(encoding="utf-8")))
    assert not {name.split(".")[0] for name in adapters} & {"PySide6", "pyqtgraph", "shiboken6"}


def test_running_the_selftest_loads_no_qt() -> None:
    code = (
        "import sys\n"
        "from app.core.selftest import run_selftests\n"
        "assert all(r.passed for r in run_selftests())\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')"
        " or m.startswith(('app.gui', 'app.report'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# --------------------------------------------------------------------------------------
# The checks through the app's scheme adapters (app/core/selftest_adapters.py)
# --------------------------------------------------------------------------------------

#: Every schemes module with SPECS, and so every family, has adapter checks.
ADAPTER_MODULES = ["symmetric", "digests", "dh", "key_agreement", "signatures", "pke", "hybrid"]


def test_adapter_checks_run_after_the_library_checks(run: _Run) -> None:
    adapters = run.results[len(selftest.CHECKS):]
    assert len(adapters) == len(selftest_adapters.ADAPTER_CHECKS) >= 50
    assert all(r.name.startswith("App adapter ") for r in adapters)
    assert {r.kind for r in adapters} == {"KAT", "cross-check"}
    assert {r.backend for r in adapters} == {"cryptography", "pycryptodome", "tinyec"}


@pytest.mark.parametrize("module", ADAPTER_MODULES)
def test_every_scheme_module_is_checked_through_its_adapters(module: str) -> None:
    sources = [c.source for c in selftest_adapters.ADAPTER_CHECKS if c.kind == "KAT"]
    if module == "pke":  # RSA-OAEP is randomised: only a cross-check fits the app's parameters
        sources = [c.source for c in selftest_adapters.ADAPTER_CHECKS]
    assert any(source.endswith(f"app/core/schemes/{module}.py") for source in sources)


def _broken_aead_sealer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenSSL AEAD seal authenticates an AAD the receiver never sees."""
    from app.core.schemes import symmetric

    real = symmetric._cryptography_sealer
    monkeypatch.setattr(symmetric, "_cryptography_sealer",
                        lambda encrypt, nonces: real(lambda n, p, _aad: encrypt(n, p, b"aad"), nonces))


def _broken_hash_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """pycryptodome's SHA-384 adapter computes SHA-512 (a swapped digest)."""
    from Crypto.Hash import SHA512

    from app.core.schemes import digests

    monkeypatch.setitem(digests._PycryptodomeBackend._MODULES, "sha384", SHA512)


def _broken_ecdsa_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenSSL ECDSA adapter pairs P-256 with SHA-384 instead of SHA-256."""
    from cryptography.hazmat.primitives import hashes

    from app.core.schemes import signatures

    monkeypatch.setitem(signatures._CryptographyEcdsa._HASHES, "SHA-256", hashes.SHA384)


def _broken_kdf_info(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key agreements derive their session key without the info string."""
    from app.core.schemes import key_agreement

    real = key_agreement.derive_key
    monkeypatch.setattr(key_agreement, "derive_key",
                        lambda kdf, shared, backend, length=32, info=b"": real(kdf, shared, backend, length, b""))


def _broken_eddsa_signer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pycryptodome EdDSA adapter signs the message with a byte appended."""
    from app.core.schemes import signatures

    real = signatures._PycryptodomeEddsa.signer

    def signer(self: Any, key: Any) -> Any:
        sign, encoded = real(self, key)
        return (lambda message: sign(bytes(message) + b"\0")), encoded

    monkeypatch.setattr(signatures._PycryptodomeEddsa, "signer", signer)


# (how the adapter is broken, adapter checks that must fail: others may fail with it)
BROKEN_ADAPTERS: list[tuple[Callable[[pytest.MonkeyPatch], None], set[str]]] = [
    (_broken_aead_sealer, {"App adapter AES-128-GCM, GCM test case 3 [cryptography]",
                           "App adapter AES-256-GCM, GCM test case 15 [cryptography]",
                           "App adapter ChaCha20-Poly1305 seal/open agrees with the library [cryptography]",
                           "App adapter X25519 key agreement + HKDF-SHA256 session key [cryptography]"}),
    (_broken_hash_module, {'App adapter SHA-384("abc") [pycryptodome]',
                           "App adapter HKDF-SHA384 scheme agrees with the library [pycryptodome]"}),
    (_broken_ecdsa_digest, {"App adapter ECDSA P-256 verifies the RFC 6979 signature [cryptography]"}),
    (_broken_kdf_info, {"App adapter X25519 key agreement + HKDF-SHA256 session key [pycryptodome]",
                        "App adapter ECDH P-256 key agreement + HKDF-SHA256 session key [tinyec]"}),
    (_broken_eddsa_signer, {"App adapter Ed25519 sign/verify, RFC 8032 TEST 1-3 [pycryptodome]",
                            "App adapter Ed448 sign/verify, RFC 8032 blank message [pycryptodome]"}),
]


@pytest.mark.parametrize(("breakage", "must_fail"), BROKEN_ADAPTERS, ids=[b[0].__name__ for b in BROKEN_ADAPTERS])
def test_a_broken_adapter_fails_the_selftest_while_the_libraries_pass(
    monkeypatch: pytest.MonkeyPatch, breakage: Callable[[pytest.MonkeyPatch], None], must_fail: set[str]
) -> None:
    # Only the adapter checks: the library checks cannot see an adapter (shown by the last assert).
    monkeypatch.setattr(selftest, "CHECKS", [])
    breakage(monkeypatch)

    failures = _failures(selftest.run_selftests())

    assert must_fail <= failures.keys(), sorted(failures)
    assert all(detail for detail in failures.values())
    assert not {name for name in failures if not name.startswith("App adapter ")}


def test_the_library_checks_alone_miss_a_broken_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_ecdsa_digest(monkeypatch)
    assert all(selftest._run_one(check).passed for check in selftest.CHECKS)


def test_an_adapter_module_that_fails_to_import_is_one_failed_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "app.core.selftest_adapters", None)  # import raises ImportError
    monkeypatch.setattr(selftest, "CHECKS", [])

    results = selftest.run_selftests()

    assert [(r.name, r.passed) for r in results] == [("App adapters load [python]", False)]
    assert results[0].detail.startswith("ModuleNotFoundError: import of app.core.selftest_adapters")


def test_cli_selftest_exits_1_when_an_adapter_is_broken(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    _broken_ecdsa_digest(monkeypatch)

    assert main(["selftest"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  cryptography  KAT          App adapter ECDSA P-256 verifies the RFC 6979 signature" in out
    assert out.rstrip().endswith("1 failed")
