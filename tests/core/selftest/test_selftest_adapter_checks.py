"""Tests for the self-test's checks through the app's scheme adapters (app/core/selftest/adapters.py).

They run after the library checks; each names the schemes it drives on its backend and
drives exactly those; every schemes module, and every registered scheme on every backend
it lists, is checked through its adapter (a scheme registered without one fails, named);
the KEM checks' own HKDF gives RFC 5869's answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from app.core import selftest
from app.core.schemes import registry
from app.core.schemes.base import SchemeSpec
from app.core.selftest import adapters, adapters_encryption, vectors
from app.core.selftest.framework import SelftestCheck
from app.core.vocab import Family
from tests.helpers.paths import ROOT
from tests.helpers.selftest_runs import SelftestRun

#: Every schemes module of the registry (so every family) and dh.py beneath them has a
#: known answer through its adapters.
ADAPTER_MODULES = [name.rpartition(".")[2] for name in registry.MODULES] + ["dh"]


def test_adapter_checks_run_after_the_library_checks(run: SelftestRun) -> None:
    adapter_results = run.results[len(selftest.CHECKS) :]
    assert len(adapter_results) == len(adapters.ADAPTER_CHECKS) >= 50
    assert all(r.name.startswith("App adapter ") for r in adapter_results)
    assert {r.kind for r in adapter_results} == {"KAT", "cross-check"}
    assert {r.backend for r in adapter_results} == {"cryptography", "pycryptodome", "tinyec", "python", "pyopenssl"}


def test_each_adapter_check_names_the_schemes_it_drives_on_its_backend(run: SelftestRun) -> None:
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


@pytest.mark.parametrize("case", ["A.1", "A.2", "A.3"])
def test_the_kem_checks_hkdf_gives_rfc_5869s_answers(case: str) -> None:
    """The KEM checks recompute the adapters' keys with the standard library's HMAC."""
    vector = vectors.HKDF_SHA256[case]
    assert adapters_encryption.hkdf_sha256(vector.ikm, vector.info, len(vector.okm), vector.salt) == vector.okm
