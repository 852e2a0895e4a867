"""Every preset, reduced (2 samples, no warm-up, two sizes up to 64 KiB), through the real
runner and the real report: the same code path as a full run, small enough for CI."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from app.core.profile.edits import reduced
from app.core.profile.files import load_profile, preset_names
from app.core.results.model import RunResult
from app.core.run.runner import Runner
from app.core.settings.profile import Profile
from app.core.transport.netns import packet_path_refusal
from app.report.content import build_report
from app.report.markdown import render_markdown
from app.report.model import Section, Table
from app.report.pdf.writer import write_pdf

#: Under `pytest -n` (make test), every test that reads these runs shares one worker, so the
#: presets run once (tests/report/test_handing_on.py and test_report_words.py join the group;
#: tests/conftest.py makes the group reach xdist's scheduler). One list: a second
#: `pytestmark =` would replace the first, as it once dropped `slow`.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("preset-runs")]

_RUNS: dict[str, RunResult] = {}
#: Presets whose jobs run over the packet path only (tls13 over a lossy link): where this
#: machine cannot make it, they are skipped, saying why (their refusal is tested apart).
_PACKET_PATH_ONLY = ("pq-tls-under-loss",)
_NO_PACKET_PATH = packet_path_refusal()


def _runnable(name: str) -> bool:
    return name not in _PACKET_PATH_ONLY or _NO_PACKET_PATH is None


def runnable_presets() -> list[str]:
    """Every preset this machine can run (all of them where it can make the packet path)."""
    return [name for name in preset_names() if _runnable(name)]


def skip_unless_runnable(name: str) -> None:
    if not _runnable(name):
        pytest.skip(f"{name} needs the packet path: {_NO_PACKET_PATH}")


#: The presets whose reduced runs `make test` makes: the tour's `quick` (every family), the
#: experiments E1 and E2 (their published-and-measured sections) and E5 (TLS 1.3 over the
#: packet path). Every other preset's tests are `exhaustive` (`make test-all` and CI run
#: them): the same runner and report over other jobs. The heaviest three, pure-Python RSA
#: and ElGamal at 3072 bits and RSA key generations, cost 64 of the twelve runs' 85 s of CPU
#: (2026-11-29, the 2-core VM); they run first in their batch.
MAKE_TEST_PRESETS = ("quick", "ecdh-vs-elgamal", "cnsa-suite", "pq-tls-under-loss")
HEAVY_PRESETS = ("rsa-vs-elgamal", "backends", "rsa-kem-vs-ecies")


def preset_params(names: list[str] | None = None) -> list[Any]:
    """pytest parameters, one per preset (default: all), those `make test` leaves out marked
    `exhaustive`."""
    return [
        pytest.param(name, marks=[] if name in MAKE_TEST_PRESETS else [pytest.mark.exhaustive])
        for name in (preset_names() if names is None else names)
    ]


def _lean(name: str) -> Profile:
    return reduced(load_profile(name), size_count=2, samples=2, warmup=0)


def _run(name: str) -> RunResult:
    """One reduced run per preset, shared by the tests below.

    The first call for a preset runs every runnable preset of its tier (`make test`'s, or the
    others), two at a time: each run is one supervisor thread whose jobs are processes
    of their own, so two of them use both cores of a small machine where one left a core
    idle. Their timings are not what these tests check; their paths through runner and
    report are: so each job keeps two message sizes, the smallest and the largest of
    `--reduced`'s three (a line still joins them), two samples and no warm-up round. All
    twelve took 120 s of CPU with `--reduced`'s three samples and one warm-up round, and
    85 s so (2026-11-28, the 2-core VM): most of it is slow operations timed one call a
    sample (pure-Python RSA and ElGamal at 3072 bits, RSA key generation), where every
    round counts.
    """
    if name not in _RUNS:
        tier = name in MAKE_TEST_PRESETS
        names = [n for n in runnable_presets() if (n in MAKE_TEST_PRESETS) == tier]
        names.sort(
            key=lambda n: HEAVY_PRESETS.index(n) if n in HEAVY_PRESETS else len(HEAVY_PRESETS)
        )  # the slowest first: the lanes end together
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="preset") as pool:
            runs = pool.map(lambda n: Runner(_lean(n), source=n).run(), names)
            _RUNS.update(zip(names, runs))
    return _RUNS[name]


@pytest.mark.parametrize("name", preset_params())
def test_reduced_preset_runs_every_job(name: str) -> None:
    skip_unless_runnable(name)
    run = _run(name)
    assert run.status == "finished"
    failed = [(job.label, job.message_size, job.error) for job in run.jobs if job.status != "ok"]
    assert not failed
    assert all(job.validation.checked > 0 and job.validation.failed == 0 for job in run.jobs)


def _experiment_sections(sections: list[Section]) -> list[Section]:
    start = next(i for i, s in enumerate(sections) if s.title.startswith("Experiment "))
    end = next(i for i, s in enumerate(sections) if i > start and s.level == 1)
    return sections[start:end]


@pytest.mark.parametrize(
    ("name", "experiment"),
    [
        ("ecdh-vs-elgamal", "E1"),
        ("cnsa-suite", "E2"),
        pytest.param("rsa-vs-elgamal", "E3", marks=pytest.mark.exhaustive),
        pytest.param("rsa-kem-vs-ecies", "E4", marks=pytest.mark.exhaustive),
        ("pq-tls-under-loss", "E5"),
    ],
)
def test_experiment_report_sets_published_beside_measured(name: str, experiment: str, tmp_path: Path) -> None:
    skip_unless_runnable(name)
    run = _run(name)
    report = build_report(run)
    titles = [s.title for s in report.sections]
    assert titles[0] == "Summary of findings" and titles[1].startswith(f"Experiment {experiment}: ")
    own = _experiment_sections(report.sections)
    table = next(b for s in own if s.title == "Published and measured" for b in s.blocks if isinstance(b, Table))
    measured = [row for row in table.rows if row[2] != "-"]
    assert measured, "no published figure was measured by the reduced run"
    for row in measured:
        if row[3] != "-":
            assert row[3].endswith("×")
    assert len(own) >= 3  # intro, the comparison and the experiment's own sections
    text = render_markdown(report)
    assert f"## Experiment {experiment}" in text and "### Published and measured" in text
    pages = write_pdf(report, tmp_path / f"{name}.pdf")
    assert pages >= 3


@pytest.mark.parametrize("name", preset_params(["quick", "post-quantum", "aead-shootout", "backends"]))
def test_presets_beyond_the_published_work_have_no_experiment_section(name: str) -> None:
    titles = [s.title for s in build_report(_run(name)).sections]
    assert not any(t.startswith("Experiment ") for t in titles)
