"""Tests for app.core.selftest: known-answer tests for every backend.

The self-test is only useful if (a) every check passes on a correct installation and
(b) a check really fails when a library computes something else. (b) is proved by
corrupting one published vector at a time (in a copy of resources/selftest) and
watching exactly its checks fail; a broken vector file fails the checks that read it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core import selftest
from app.core.schemes import registry
from app.core.schemes.base import SchemeSpec
from app.core.selftest import adapters, adapters_encryption, vectors
from app.core.selftest.framework import SelftestCheck, SelftestResult
from app.core.vocab import Family
from tests.helpers.paths import ROOT

SELFTEST_PACKAGE = Path(selftest.__file__).parent
BACKENDS = {"cryptography", "pycryptodome", "tinyec", "python", "pyopenssl"}
KINDS = {"KAT", "cross-check", "consistency"}


@dataclasses.dataclass(frozen=True)
class _Run:
    results: list[SelftestResult]
    seconds: float
    vectors_used: frozenset[tuple[str, str, str]]  # (file, section, vector)
    files_read: tuple[str, ...]
    created: dict[str, frozenset[tuple[str, str]]]  # check name -> (scheme id, backend) it created
    readers: dict[str, frozenset[str]]  # vector file -> the checks that asked for one of its vectors


@pytest.fixture(scope="module")
def run() -> _Run:
    """One run of the whole self-test, noting which vectors it asked for, which files it read
    and which schemes each check created through the registry."""
    used: set[tuple[str, str, str]] = set()
    readers: dict[str, set[str]] = {}
    files_read: list[str] = []
    created: dict[str, set[tuple[str, str]]] = {}
    running = [""]
    get_vector, file_path = vectors.Section.__getitem__, vectors.file_path
    run_one, create = selftest.run_one, registry.create

    def recording_get(section: vectors.Section[Any], key: str) -> Any:
        used.add((section.file, section.name, key))
        readers.setdefault(section.file, set()).add(running[0])
        return get_vector(section, key)

    def recording_path(file: str) -> Path:
        files_read.append(file)
        return file_path(file)

    def recording_run_one(check: SelftestCheck) -> SelftestResult:
        running[0] = check.name
        return run_one(check)

    def recording_create(scheme_id: str, backend: str, params: Any = None) -> Any:
        created.setdefault(running[0], set()).add((scheme_id, backend))
        return create(scheme_id, backend, params)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vectors.Section, "__getitem__", recording_get)
        patch.setattr(vectors, "file_path", recording_path)
        patch.setattr(selftest, "run_one", recording_run_one)
        patch.setattr(registry, "create", recording_create)
        vectors.clear_cache()
        start = time.perf_counter()
        results = selftest.run_selftests()
        seconds = time.perf_counter() - start
    return _Run(
        results,
        seconds,
        frozenset(used),
        tuple(sorted(files_read)),
        {name: frozenset(pairs) for name, pairs in created.items()},
        {file: frozenset(names) for file, names in readers.items()},
    )


@pytest.fixture
def vector_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of resources/selftest that the test may break; the real files are read again afterwards."""
    copy = tmp_path / "selftest"
    shutil.copytree(vectors.directory(), copy)
    monkeypatch.setattr(vectors, "directory", lambda: copy)
    vectors.clear_cache()
    yield copy
    vectors.clear_cache()


def _failures(results: list[SelftestResult]) -> dict[str, str]:
    return {r.name: r.detail for r in results if not r.passed}


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
# Everything passes, and the report is well formed
# --------------------------------------------------------------------------------------


def test_every_check_passes_on_this_machine(run: _Run) -> None:
    assert _failures(run.results) == {}


def test_one_result_per_registered_check_in_order(run: _Run) -> None:
    assert [r.name for r in run.results] == [c.name for c in selftest.CHECKS + adapters.ADAPTER_CHECKS]
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
    run: _Run, vector_dir: Path, file: str, path: tuple[str | int, ...], prefixes: tuple[str, ...]
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
        failures = _failures([selftest.run_one(check) for check in checks])
    finally:
        selftest.rsa.interop_keys.cache_clear()

    assert failures.keys() == _names_starting(*prefixes)
    assert all(detail for detail in failures.values())


def test_a_mismatch_detail_shows_expected_and_got(vector_dir: Path) -> None:
    _edit(vector_dir, "aead", ("gcm", "test-case-16", "tag"), _flip)

    failures = _failures(selftest.run_selftests())

    detail = failures["AES-256-GCM with AAD, GCM test case 16 [pycryptodome]"]
    assert detail == (
        "tag: expected 76fc6ece0f4e1768cddf8853bb2d551a (16 B), got 76fc6ece0f4e1768cddf8853bb2d551b (16 B)"
    )


# --------------------------------------------------------------------------------------
# The vectors are data: every one is used, each file is read once, a broken file fails
# --------------------------------------------------------------------------------------


def test_every_vector_in_the_files_is_asked_for_by_a_check(run: _Run) -> None:
    """No vector sits unused in a file, and no check skips one it should run."""
    in_files = set()
    for file in vectors.files():
        document = json.loads(vectors.file_path(file).read_text(encoding="utf-8"))
        in_files |= {(file, section, key) for section, table in document.items() if section != "about" for key in table}
    assert in_files == run.vectors_used


def test_each_vector_file_is_read_once_per_process(run: _Run) -> None:
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
    failures = _failures(results)
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


QT = {"PySide6", "pyqtgraph", "shiboken6"}


def test_selftest_imports_no_app_module_and_no_qt() -> None:
    """The library checks use no app code beyond their package and the resources helper;
    the adapter checks (adapters.py and the adapter_*/adapters_* modules it imports) are
    loaded in one function."""
    adapter_modules = sorted(SELFTEST_PACKAGE.glob("adapter*.py"))
    assert [path.name for path in adapter_modules] == [
        "adapter_parts.py",
        "adapters.py",
        "adapters_encryption.py",
        "adapters_tls.py",
    ]
    for path in sorted(SELFTEST_PACKAGE.glob("*.py")):
        if path in adapter_modules:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = _imports(tree)
        foreign = {
            name
            for name in imported
            if name.split(".")[0] in QT
            or name.startswith("app")
            and name != "app.core.resources"
            and not name.startswith("app.core.selftest")
        }
        assert not foreign, path.name
        library_checks = set().union(
            *(
                _imports(node)
                for node in tree.body
                if not (isinstance(node, ast.FunctionDef) and node.name == "adapter_checks")
            )
        )
        assert "app.core.selftest.adapters" not in library_checks, path.name
    package = _imports(ast.parse((SELFTEST_PACKAGE / "__init__.py").read_text(encoding="utf-8")))
    assert "app.core.selftest.adapters" in package
    for path in adapter_modules:
        adapter_imports = _imports(ast.parse(path.read_text(encoding="utf-8")))
        assert not {name.split(".")[0] for name in adapter_imports} & QT, path.name


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
# The checks through the app's scheme adapters (app/core/selftest/adapters.py)
# --------------------------------------------------------------------------------------

#: Every schemes module of the registry (so every family) and dh.py beneath them has a
#: known answer through its adapters.
ADAPTER_MODULES = [name.rpartition(".")[2] for name in registry.MODULES] + ["dh"]


def test_adapter_checks_run_after_the_library_checks(run: _Run) -> None:
    adapter_results = run.results[len(selftest.CHECKS) :]
    assert len(adapter_results) == len(adapters.ADAPTER_CHECKS) >= 50
    assert all(r.name.startswith("App adapter ") for r in adapter_results)
    assert {r.kind for r in adapter_results} == {"KAT", "cross-check"}
    assert {r.backend for r in adapter_results} == {"cryptography", "pycryptodome", "tinyec", "python", "pyopenssl"}


def test_each_adapter_check_names_the_schemes_it_drives_on_its_backend(run: _Run) -> None:
    """`SelftestCheck.schemes` is what the check made through the registry, on the check's
    backend: a check cannot claim a scheme it never runs, nor run one it does not name."""
    for check in adapters.ADAPTER_CHECKS:
        assert run.created.get(check.name, frozenset()) == {(s, check.backend) for s in check.schemes}, check.name
    assert not {name for name in run.created if not name.startswith("App adapter ")}  # library checks make none
    assert all(not check.schemes for check in selftest.CHECKS)


@pytest.mark.parametrize("module", ADAPTER_MODULES)
def test_every_scheme_module_is_checked_through_its_adapters(module: str) -> None:
    sources = [c.source for c in adapters.ADAPTER_CHECKS if c.kind == "KAT"]
    assert any(source.endswith(f"app/core/schemes/{module}.py") for source in sources)


def _unchecked(specs: Iterable[SchemeSpec], checks: Iterable[SelftestCheck]) -> list[str]:
    """ "<id> [<backend>]" for each registered scheme and backend that no check names."""
    named = {(scheme_id, check.backend) for check in checks for scheme_id in check.schemes}
    return [
        f"{spec.scheme_id} [{backend}]"
        for spec in specs
        for backend in spec.backends
        if (spec.scheme_id, backend) not in named
    ]


def test_every_registered_scheme_is_checked_through_its_adapter_on_every_backend() -> None:
    """Every id of app/core/schemes/registry.py, on every backend it lists, is named by a check
    through the adapters (`SelftestCheck.schemes`), which
    test_each_adapter_check_names_the_schemes_it_drives_on_its_backend holds to what the
    check runs. A new scheme without one fails here, named."""
    unchecked = _unchecked(registry.all_specs(), adapters.ADAPTER_CHECKS)
    assert not unchecked, (
        f"no self-test check through the adapter of {', '.join(unchecked)}: add one to "
        'app/core/selftest/adapters.py (docs/ARCHITECTURE.md, "How to add a scheme, a command or a report section")'
    )
    named = {scheme_id for check in adapters.ADAPTER_CHECKS for scheme_id in check.schemes}
    assert named <= set(registry.scheme_ids())


def test_the_recipe_for_a_scheme_names_the_tests_that_enforce_it() -> None:
    """docs/ARCHITECTURE.md, "How to add a scheme, a command or a report section", cites
    these two tests by node id: renaming one must update the recipe."""
    text = " ".join((ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8").split())
    here = Path(__file__).relative_to(ROOT).as_posix()
    for test in (
        test_every_registered_scheme_is_checked_through_its_adapter_on_every_backend,
        test_each_adapter_check_names_the_schemes_it_drives_on_its_backend,
    ):
        assert f"`{here}::{test.__name__}`" in text


def test_a_scheme_registered_without_a_check_fails_the_coverage_test_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    specs = {spec.scheme_id: spec for spec in registry.all_specs()}
    toy = SchemeSpec(
        "toy-kem",
        "Toy KEM",
        Family.HYBRID,
        ("cryptography", "python"),
        (),
        factory=lambda backend, params: pytest.fail("the coverage test builds no scheme"),
    )
    monkeypatch.setattr(registry, "_registry", lambda: {**specs, "toy-kem": toy})
    assert "toy-kem" in registry.scheme_ids()
    coverage_test = test_every_registered_scheme_is_checked_through_its_adapter_on_every_backend

    with pytest.raises(AssertionError, match=r"adapter of toy-kem \[cryptography\], toy-kem \[python\]: add one"):
        coverage_test()

    def toy_check(backend: str) -> SelftestCheck:
        return SelftestCheck(f"App adapter toy [{backend}]", backend, "KAT", "a toy", lambda: None, ("toy-kem",))

    monkeypatch.setattr(adapters, "ADAPTER_CHECKS", [*adapters.ADAPTER_CHECKS, toy_check("python")])
    with pytest.raises(AssertionError, match=r"adapter of toy-kem \[cryptography\]: add one"):
        coverage_test()  # one backend checked is not every backend

    monkeypatch.setattr(adapters, "ADAPTER_CHECKS", [*adapters.ADAPTER_CHECKS, toy_check("cryptography")])
    coverage_test()


def _broken_aead_sealer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenSSL AEAD seal authenticates an AAD the receiver never sees."""
    from app.core.schemes import symmetric

    real = symmetric._cryptography_sealer
    monkeypatch.setattr(
        symmetric,
        "_cryptography_sealer",
        lambda encrypt, nonces: real(lambda n, p, _aad: encrypt(n, p, b"aad"), nonces),
    )


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
    monkeypatch.setattr(
        key_agreement,
        "derive_key",
        lambda kdf, shared, backend, length=32, info=b"": real(kdf, shared, backend, length, b""),
    )


def _broken_eddsa_signer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pycryptodome EdDSA adapter signs the message with a byte appended."""
    from app.core.schemes import signatures

    real = signatures._PycryptodomeEddsa.signer

    def signer(self: Any, key: Any) -> Any:
        sign, encoded = real(self, key)
        return (lambda message: sign(bytes(message) + b"\0")), encoded

    monkeypatch.setattr(signatures._PycryptodomeEddsa, "signer", signer)


def _broken_oaep_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    """pycryptodome's RSA-OAEP adapter pads with SHA-1 (pycryptodome's default) on both ends:
    every round trip still works."""
    from Crypto.Hash import SHA1

    from app.core.schemes import pke

    monkeypatch.setattr(pke, "PycryptodomeSHA256", SHA1)


def _broken_kem_info(monkeypatch: pytest.MonkeyPatch) -> None:
    """The KEMs derive their key without binding the encapsulation (info = b"") on both ends."""
    from app.core.schemes import hybrid

    real = hybrid.derive_key
    monkeypatch.setattr(
        hybrid,
        "derive_key",
        lambda kdf, shared, backend, length=32, info=b"": real(kdf, shared, backend, length, b""),
    )


def _broken_hybrid_combiner(monkeypatch: pytest.MonkeyPatch) -> None:
    """The X25519 + ML-KEM-768 combiner takes the two secrets in the other order on both ends."""
    from app.core.schemes import hybrid

    real = hybrid.derive_key

    def swapped(kdf: str, shared: bytes, backend: str, length: int = 32, info: bytes = b"") -> bytes:
        return real(kdf, shared[32:] + shared[:32] if len(shared) == 64 else shared, backend, length, info)

    monkeypatch.setattr(hybrid, "derive_key", swapped)


def _broken_elgamal_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """ElGamal no longer maps a non-residue message into the order-q subgroup: decryption
    still returns it (round trips pass), but the ciphertext leaks its Legendre symbol."""
    from app.core.schemes import pke

    monkeypatch.setattr(pke, "jacobi", lambda a, n: 1)


def _broken_textbook_exponent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Textbook RSA with e = 3: key generation and both ends agree, the figures are another RSA's."""
    from app.core.schemes import pke

    monkeypatch.setattr(pke.TextbookRsa, "E", 3)


# (how the adapter is broken, adapter checks that must fail: others may fail with it)
BROKEN_ADAPTERS: list[tuple[Callable[[pytest.MonkeyPatch], None], set[str]]] = [
    (
        _broken_aead_sealer,
        {
            "App adapter AES-128-GCM, GCM test case 3 [cryptography]",
            "App adapter AES-256-GCM, GCM test case 15 [cryptography]",
            "App adapter ChaCha20-Poly1305 seal/open agrees with the library [cryptography]",
            "App adapter X25519 key agreement + HKDF-SHA256 session key [cryptography]",
        },
    ),
    (
        _broken_hash_module,
        {
            'App adapter SHA-384("abc") [pycryptodome]',
            "App adapter HKDF-SHA384 scheme agrees with the library [pycryptodome]",
        },
    ),
    (_broken_ecdsa_digest, {"App adapter ECDSA P-256 verifies the RFC 6979 signature [cryptography]"}),
    (
        _broken_kdf_info,
        {
            "App adapter X25519 key agreement + HKDF-SHA256 session key [pycryptodome]",
            "App adapter ECDH P-256 key agreement + HKDF-SHA256 session key [tinyec]",
        },
    ),
    (
        _broken_eddsa_signer,
        {
            "App adapter Ed25519 sign/verify, RFC 8032 TEST 1-3 [pycryptodome]",
            "App adapter Ed448 sign/verify, RFC 8032 blank message [pycryptodome]",
        },
    ),
    (
        _broken_oaep_hash,
        {
            "App adapter RSA-KEM-2048 decapsulates Wycheproof OAEP-SHA256 tcId 7 [pycryptodome]",
            "App adapter RSA-2048 OAEP-SHA256 agrees with the library [pycryptodome]",
        },
    ),
    (
        _broken_kem_info,
        {
            "App adapter ECIES secp256k1 decapsulates the published exchange [cryptography]",
            "App adapter ECIES P-256 decapsulates the published exchange [cryptography]",
            "App adapter ECIES P-256 decapsulates the published exchange [pycryptodome]",
            "App adapter ECIES X25519 decapsulates the published exchange [cryptography]",
            "App adapter ECIES X25519 decapsulates the published exchange [pycryptodome]",
            "App adapter X25519 + ML-KEM-768 decapsulates the published halves [cryptography]",
        },
    ),
    (_broken_hybrid_combiner, {"App adapter X25519 + ML-KEM-768 decapsulates the published halves [cryptography]"}),
    (
        _broken_elgamal_encoding,
        {
            "App adapter ElGamal-2048 agrees with pycryptodome's integers [python]",
            "App adapter ElGamal-2048 (x, k: 256 bits) agrees with pycryptodome's integers [python]",
        },
    ),
    (
        _broken_textbook_exponent,
        {
            "App adapter Textbook RSA-2048 (CRT) encrypts and decrypts Wycheproof tcId 22 [python]",
            "App adapter Textbook RSA-2048 (no CRT) encrypts and decrypts Wycheproof tcId 22 [python]",
        },
    ),
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


@pytest.mark.parametrize(
    ("breakage", "survivor"),
    [
        (_broken_hybrid_combiner, "App adapter ECIES X25519 decapsulates the published exchange [cryptography]"),
        (
            _broken_elgamal_encoding,
            "App adapter Textbook RSA-2048 (CRT) encrypts and decrypts Wycheproof tcId 22 [python]",
        ),
    ],
    ids=["combiner", "elgamal"],
)
def test_a_broken_adapter_fails_only_the_checks_of_what_it_breaks(
    monkeypatch: pytest.MonkeyPatch, breakage: Callable[[pytest.MonkeyPatch], None], survivor: str
) -> None:
    """The X25519 + ML-KEM-768 combiner's order is not something ECIES shares, nor ElGamal's
    encoding textbook RSA's: the checks see what they are about, not everything at once."""
    breakage(monkeypatch)
    check = next(c for c in adapters.ADAPTER_CHECKS if c.name == survivor)
    assert selftest.run_one(check).passed


@pytest.mark.parametrize("case", ["A.1", "A.2", "A.3"])
def test_the_kem_checks_hkdf_gives_rfc_5869s_answers(case: str) -> None:
    """The KEM checks recompute the adapters' keys with the standard library's HMAC."""
    vector = vectors.HKDF_SHA256[case]
    assert adapters_encryption.hkdf_sha256(vector.ikm, vector.info, len(vector.okm), vector.salt) == vector.okm


def test_the_library_checks_alone_miss_a_broken_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_ecdsa_digest(monkeypatch)
    assert all(selftest.run_one(check).passed for check in selftest.CHECKS)


def test_an_adapter_module_that_fails_to_import_is_one_failed_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "app.core.selftest.adapters", None)  # import raises ImportError
    monkeypatch.setattr(selftest, "CHECKS", [])

    results = selftest.run_selftests()

    assert [(r.name, r.passed) for r in results] == [("App adapters load [python]", False)]
    assert results[0].detail.startswith("ModuleNotFoundError: import of app.core.selftest.adapters")


def test_cli_selftest_prints_every_check_and_exits_0(
    run: _Run, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.main import main

    monkeypatch.setattr(selftest, "run_selftests", lambda: run.results)  # the module's run, printed
    assert main(["selftest"]) == 0
    lines = capsys.readouterr().out.splitlines()
    checks = selftest.CHECKS + adapters.ADAPTER_CHECKS
    assert lines[-1] == f"{len(checks)} passed, 0 failed"
    assert [line.split(" — ")[0].split(maxsplit=3)[3] for line in lines[:-1]] == [c.name for c in checks]
    assert all(line.startswith("PASS  ") for line in lines[:-1])


def test_cli_selftest_exits_1_when_an_adapter_is_broken(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.main import main

    _broken_ecdsa_digest(monkeypatch)

    assert main(["selftest"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  cryptography  KAT          App adapter ECDSA P-256 verifies the RFC 6979 signature" in out
    assert out.rstrip().endswith("1 failed")
