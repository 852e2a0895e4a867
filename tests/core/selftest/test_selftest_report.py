"""Tests for app.core.selftest: every check passes, and its report is well formed.

The self-test is only useful if every check passes on a correct installation: one result
per registered check, in order, in the documented vocabulary, every backend and named
standard covered. A check that raises, or an adapter module that fails to import, is a
failed result, never an exception; `cryptobench selftest` prints every check and exits 0,
or 1 when an adapter is broken.
"""

from __future__ import annotations

import dataclasses
import sys

import pytest

from app.core import selftest
from app.core.selftest import adapters
from app.core.selftest.framework import SelftestResult
from tests.core.selftest.test_selftest_broken_adapters import _broken_ecdsa_digest
from tests.helpers.selftest_runs import SelftestRun, failures_of

BACKENDS = {"cryptography", "pycryptodome", "tinyec", "python", "pyopenssl"}
KINDS = {"KAT", "cross-check", "consistency"}


# --------------------------------------------------------------------------------------
# Everything passes, and the report is well formed
# --------------------------------------------------------------------------------------


def test_every_check_passes_on_this_machine(run: SelftestRun) -> None:
    assert failures_of(run.results) == {}


def test_one_result_per_registered_check_in_order(run: SelftestRun) -> None:
    assert [r.name for r in run.results] == [c.name for c in selftest.CHECKS + adapters.ADAPTER_CHECKS]
    assert all(isinstance(r, SelftestResult) for r in run.results)


def test_every_name_is_unique(run: SelftestRun) -> None:
    names = [r.name for r in run.results]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert duplicates == []


def test_fields_use_the_documented_vocabulary(run: SelftestRun) -> None:
    for result in run.results:
        assert result.backend in BACKENDS, result
        assert result.kind in KINDS, result
        assert result.source.strip(), result
        assert result.detail == "", result  # passed checks carry no detail


def test_results_are_immutable(run: SelftestRun) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.results[0].passed = False  # type: ignore[misc]


@pytest.mark.parametrize("backend", ["cryptography", "pycryptodome", "tinyec"])
def test_every_library_backend_has_a_known_answer_test(run: SelftestRun, backend: str) -> None:
    assert any(r.backend == backend and r.kind == "KAT" for r in run.results)


def test_every_backend_the_app_uses_is_covered(run: SelftestRun) -> None:
    assert {r.backend for r in run.results} == BACKENDS


@pytest.mark.parametrize(
    "standard",
    ["SP 800-38D", "GCM", "RFC 8439", "RFC 5869", "RFC 7748", "RFC 8032", "RFC 6979", "RFC 7027"],
)
def test_each_named_standard_is_cited_by_a_known_answer_test(run: SelftestRun, standard: str) -> None:
    assert any(standard in r.source for r in run.results if r.kind == "KAT")


def test_hkdf_sha384_is_a_cross_check_never_a_kat(run: SelftestRun) -> None:
    sha384 = [r for r in run.results if "HKDF-SHA384" in r.name]
    assert sha384
    assert all(r.kind == "cross-check" for r in sha384)


def test_checks_without_published_vectors_say_so(run: SelftestRun) -> None:
    for result in run.results:
        if result.kind == "consistency":
            assert "no published" in result.source, result


def test_post_quantum_schemes_are_covered(run: SelftestRun) -> None:
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
    assert failures_of(results).keys() == {target.name}


def test_an_adapter_module_that_fails_to_import_is_one_failed_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "app.core.selftest.adapters", None)  # import raises ImportError
    monkeypatch.setattr(selftest, "CHECKS", [])

    results = selftest.run_selftests()

    assert [(r.name, r.passed) for r in results] == [("App adapters load [python]", False)]
    assert results[0].detail.startswith("ModuleNotFoundError: import of app.core.selftest.adapters")


def test_cli_selftest_prints_every_check_and_exits_0(
    run: SelftestRun, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
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
