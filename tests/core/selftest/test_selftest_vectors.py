"""Tests for app.core.selftest's published vectors (resources/selftest).

A check must really fail when a library computes something else: this is proved by
corrupting one published vector at a time (in a copy of resources/selftest) and watching
exactly its checks fail. The vectors are data: every one is asked for by a check, each
file is read once and cites its sources, and a missing or broken file fails the checks
that read it, naming the file and the field.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core import selftest
from app.core.selftest import adapters, vectors
from tests.helpers.selftest_runs import SelftestRun, failures_of


@pytest.fixture
def vector_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of resources/selftest that the test may break; the real files are read again afterwards."""
    copy = tmp_path / "selftest"
    shutil.copytree(vectors.directory(), copy)
    monkeypatch.setattr(vectors, "directory", lambda: copy)
    vectors.clear_cache()
    yield copy
    vectors.clear_cache()


def _names_starting(*prefixes: str) -> set[str]:
    """The library checks named prefix..., and the adapter KATs named "App adapter prefix...",
    for each prefix: the checks that run the same vectors.

    (An adapter cross-check compares with the library on the vector's inputs only, so a
    corrupted published answer cannot fail it.)
    """
    names: set[str] = set()
    for prefix in prefixes:
        found = {check.name for check in selftest.CHECKS if check.name.startswith(prefix)} | {
            c.name for c in adapters.ADAPTER_CHECKS if c.name.startswith(f"App adapter {prefix}") and c.kind == "KAT"
        }
        assert found, f"no check is named {prefix!r}..."
        names |= found
    return names


# --------------------------------------------------------------------------------------
# A corrupted vector fails exactly the checks that read it
# --------------------------------------------------------------------------------------


def _flip(value: Any) -> Any:
    """A vector file's value with its lowest bit flipped: an integer, hex (or "0x..." hex),
    or a list of hex chunks (the last one)."""
    if isinstance(value, int):
        return value ^ 1
    if isinstance(value, list):
        return [*value[:-1], _flip(value[-1])]
    return value[:-1] + format(int(value[-1], 16) ^ 1, "x")


def _edit(directory: Path, file: str, path: tuple[str | int, ...], change: Callable[[Any], Any]) -> Path:
    """Replace one value of a vector file (``path`` leads to it) by ``change(value)``."""
    target = directory / f"{file}.json"
    document = json.loads(target.read_text(encoding="utf-8"))
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = change(parent[path[-1]])
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


# (vector file, the value to corrupt in it, prefixes of the names of the checks that must fail)
CORRUPTIONS: list[tuple[str, tuple[str | int, ...], tuple[str, ...]]] = [
    ("aead", ("gcm", "test-case-16", "tag"), ("AES-256-GCM with AAD, GCM test case 16",)),
    ("aead", ("chacha20-poly1305", "rfc8439-2.8.2", "ciphertext"), ("ChaCha20-Poly1305",)),
    ("digests", ("abc", "SHA3-256", "digest"), ("SHA3-256",)),
    ("hkdf", ("hkdf-sha256", "A.2", "okm"), ("HKDF-SHA256 long inputs",)),
    ("rfc7748", ("diffie-hellman", "X448", "shared"), ("X448 key agreement",)),
    (
        "rfc7748",
        ("diffie-hellman", "X25519", "shared"),
        ("X25519 key agreement", "ECIES X25519", "X25519 + ML-KEM-768"),
    ),
    ("eddsa", ("ed25519", "TEST 3", "signature"), ("Ed25519",)),
    ("ecdsa", ("rfc6979", "P-256", "s"), ("ECDSA P-256",)),
    # The x coordinate: the libraries' ECDH returns only x, tinyec the whole point.
    ("ecdh", ("examples", "brainpoolP256r1", "shared", 0), ("ECDH brainpoolP256r1",)),
    ("ecdh", ("examples", "P-256", "shared", 0), ("ECDH P-256", "ECIES P-256")),
    ("ecdh", ("examples", "P-384", "shared", 0), ("ECDH P-384",)),
    ("ecdh", ("wycheproof", "secp256k1 tcId 1", "shared"), ("ECIES secp256k1",)),
    ("pkcs1", ("rsassa-pss", "example-1.1", "signature"), ("RSA-1024 PSS-SHA1",)),
    ("pkcs1", ("rsaes-oaep-sha256", "wycheproof-2048 tcId 7", "message"), ("RSA-KEM-2048",)),
    ("pkcs1", ("rsaes-pkcs1-v1_5", "wycheproof-2048 tcId 22", "ciphertext"), ("Textbook RSA-2048",)),
    ("ml_kem", ("keygen-decaps", "ML-KEM-768 unlucky", "shared_secret"), ("ML-KEM-768 KeyGen", "X25519 + ML-KEM-768")),
    ("ml_dsa", ("keygen", "ML-DSA-44", "pk_sha3_256"), ("ML-DSA-44 KeyGen",)),
    ("textbook", ("diffie-hellman-elgamal", "p=23, g=5", "shared"), ("Diffie-Hellman and ElGamal",)),
    ("tls13", ("rfc8448", "simple-1-rtt", "signature"), ("TLS 1.3 handshake messages",)),
]


@pytest.mark.parametrize(
    ("file", "path", "prefixes"), CORRUPTIONS, ids=["/".join(map(str, (c[0], *c[1]))) for c in CORRUPTIONS]
)
def test_a_corrupted_vector_fails_exactly_its_checks(
    run: SelftestRun, vector_dir: Path, file: str, path: tuple[str | int, ...], prefixes: tuple[str, ...]
) -> None:
    _edit(vector_dir, file, path, _flip)
    # Only the checks that read the file: one that never asks for its vectors cannot see the
    # corruption (the `run` fixture noted who asked for what), and the whole self-test, once
    # per corruption, was a minute of the suite. A check that read the file some other way
    # would be missing here and fail the assertion below, never pass unseen.
    readers = run.readers.get(file, frozenset())
    assert "" not in readers, f"{file}: read outside any check"
    checks = [check for check in selftest.CHECKS + selftest.adapter_checks() if check.name in readers]
    selftest.rsa.interop_keys.cache_clear()
    try:
        failures = failures_of([selftest.run_one(check) for check in checks])
    finally:
        selftest.rsa.interop_keys.cache_clear()

    assert failures.keys() == _names_starting(*prefixes)
    assert all(detail for detail in failures.values())


def test_a_mismatch_detail_shows_expected_and_got(vector_dir: Path) -> None:
    _edit(vector_dir, "aead", ("gcm", "test-case-16", "tag"), _flip)

    failures = failures_of(selftest.run_selftests())

    detail = failures["AES-256-GCM with AAD, GCM test case 16 [pycryptodome]"]
    assert detail == (
        "tag: expected 76fc6ece0f4e1768cddf8853bb2d551a (16 B), got 76fc6ece0f4e1768cddf8853bb2d551b (16 B)"
    )


# --------------------------------------------------------------------------------------
# The vectors are data: every one is used, each file is read once, a broken file fails
# --------------------------------------------------------------------------------------


def test_every_vector_in_the_files_is_asked_for_by_a_check(run: SelftestRun) -> None:
    """No vector sits unused in a file, and no check skips one it should run."""
    in_files = set()
    for file in vectors.files():
        document = json.loads(vectors.file_path(file).read_text(encoding="utf-8"))
        in_files |= {(file, section, key) for section, table in document.items() if section != "about" for key in table}
    assert in_files == run.vectors_used


def test_each_vector_file_is_read_once_per_process(run: SelftestRun) -> None:
    assert run.files_read == tuple(vectors.files())
    assert {path.stem for path in vectors.directory().glob("*.json")} == set(vectors.files())


def test_every_vector_cites_its_source() -> None:
    for file in vectors.files():
        document = json.loads(vectors.file_path(file).read_text(encoding="utf-8"))
        assert document["about"].strip()
        for section, table in document.items():
            if section != "about":
                assert all(vector["source"].strip() for vector in table.values()), (file, section)


def test_a_missing_or_broken_vector_file_fails_its_checks_and_names_file_and_field(vector_dir: Path) -> None:
    (vector_dir / "aead.json").unlink()
    broken = _edit(vector_dir, "ecdh", ("examples", "P-256", "public_b", 1), lambda _: "0xnot-hex")

    results = selftest.run_selftests()

    # Nothing is skipped: every check still reports, and those that read a broken file fail.
    assert [r.name for r in results] == [c.name for c in selftest.CHECKS + adapters.ADAPTER_CHECKS]
    failures = failures_of(results)
    missing = f"VectorFileError: {vector_dir / 'aead.json'}: cannot be read ("
    malformed = f"VectorFileError: {broken}: examples/P-256/public_b: not hex: '0xnot-hex'"
    aead = {
        name for name in failures if name.startswith(("AES-", "ChaCha20", "App adapter AES-", "App adapter ChaCha"))
    }
    ecdh = {name for name in failures if "ECDH" in name or ("ECIES" in name and "X25519" not in name)}
    assert aead and ecdh and aead | ecdh == failures.keys()
    assert all(failures[name].startswith(missing) for name in aead), failures
    assert {failures[name] for name in ecdh} == {malformed}


def _without(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda table: {k: v for k, v in table.items() if k != key}


#: Asking for one vector checks its whole file.
_ASK: dict[str, Callable[[], object]] = {
    "aead": lambda: vectors.GCM["test-case-3"],
    "ecdsa": lambda: vectors.RFC6979["P-256"],
    "ecdh": lambda: vectors.ECDH["P-256"],
}

# (file, the value to change in it, how; the field and problem the error names)
BROKEN_FIELDS: list[tuple[str, tuple[str, ...], Callable[[Any], Any], str]] = [
    ("aead", ("gcm", "test-case-3"), _without("tag"), "gcm/test-case-3/tag: missing"),
    ("aead", ("gcm", "test-case-3"), lambda v: {**v, "tga": v["tag"]}, "gcm/test-case-3/tga: unknown field"),
    ("aead", ("gcm", "test-case-3", "key"), lambda _: 128, "gcm/test-case-3/key: expected hex (a string or"),
    ("aead", ("gcm", "test-case-3", "key"), lambda _: {"ascii": "é"}, 'gcm/test-case-3/key: expected hex or {"ascii"'),
    ("aead", ("gcm", "test-case-3", "source"), lambda _: " ", "gcm/test-case-3/source: expected a non-empty string"),
    ("aead", ("gcm", "test-case-3", "note"), lambda _: 3, "gcm/test-case-3/note: expected a string"),
    ("aead", ("gcm",), _without("test-case-3"), "gcm/test-case-3: missing"),
    ("aead", ("gcm",), lambda _: [], "gcm: expected a non-empty object of vectors"),
    ("aead", ("chacha20-poly1305",), lambda _: None, "chacha20-poly1305: expected a non-empty object of vectors"),
    ("ecdsa", ("rfc6979", "P-256", "r"), lambda _: "efd48b", 'rfc6979/P-256/r: expected an integer or "0x..." hex'),
    ("ecdsa", ("rfc6979", "P-256", "r"), lambda _: True, "rfc6979/P-256/r: expected an integer or"),
    ("ecdh", ("examples", "P-256", "shared"), lambda v: v[:1], "examples/P-256/shared: expected a list of 2 values"),
]


@pytest.mark.parametrize(
    ("file", "path", "change", "message"), BROKEN_FIELDS, ids=[f"{b[0]}:{b[3]}" for b in BROKEN_FIELDS]
)
def test_a_broken_field_is_named_with_its_file(
    vector_dir: Path, file: str, path: tuple[str, ...], change: Callable[[Any], Any], message: str
) -> None:
    target = _edit(vector_dir, file, path, change)

    with pytest.raises(vectors.VectorFileError) as error:
        _ASK[file]()

    assert str(error.value).startswith(f"{target}: {message}")
    assert error.value.path == target


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "aead.json: not JSON: Expecting property name enclosed in double quotes at line 1"),
        ("[]", "aead.json: expected a JSON object of sections"),
        ('{"gcm": {}, "chacha": {}}', "aead.json: chacha: unknown section (expected chacha20-poly1305, gcm)"),
        ('{"about": "AEAD"}', "aead.json: gcm: missing"),
    ],
    ids=["not JSON", "not an object", "unknown section", "missing section"],
)
def test_a_file_that_is_not_json_or_has_the_wrong_sections_is_named(
    vector_dir: Path, content: str, message: str
) -> None:
    (vector_dir / "aead.json").write_text(content, encoding="utf-8")

    with pytest.raises(vectors.VectorFileError) as error:
        vectors.CHACHA20_POLY1305["rfc8439-2.8.2"]

    assert str(error.value) == f"{vector_dir}/{message}"
