"""The terminal's estimates: the line before a run (never a question: a piped or CI run
must not wait) and the progress bar's time left, from the run estimate."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from app.cli.main import main
from app.cli.terminal.time_left import TimeLeft
from app.core.run.estimate import LONG_RUN_S, JobEstimate, RunEstimate


class _NoInput(io.StringIO):
    def read(self, *args: object) -> str:
        raise AssertionError("the run asked for input")

    readline = read


def _long(jobs: object, **kwargs: object) -> RunEstimate:
    return RunEstimate((JobEstimate("j", LONG_RUN_S, LONG_RUN_S * 0.8, LONG_RUN_S * 2),), start_s=0.0)


def test_a_long_run_says_its_estimate_even_quiet_and_asks_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.core.run.estimate.estimate_run", _long)
    monkeypatch.setattr("sys.stdin", _NoInput())
    assert main(["run", "ecdh-vs-elgamal", "--reduced", "--no-store", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "cryptobench: ecdh-vs-elgamal (reduced): estimated 4–10 min on this machine" in err
    assert "; Ctrl-C stops it" in err


def test_a_short_run_says_its_estimate_unless_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli.commands.run import _announce_estimate
    from app.core.profile.edits import reduced
    from app.core.profile.files import load_profile
    from app.core.profile.resolve import resolve_jobs

    jobs = resolve_jobs(reduced(load_profile("ecdh-vs-elgamal")))
    guess = _announce_estimate("e1", jobs, quiet=False)
    err = capsys.readouterr().err
    busy = f" ({guess.busy_note()})" if guess.busy_note() else ""
    assert err == f"cryptobench: e1: estimated {guess.text()} on this machine{busy}\n" and " s" in guess.text()
    _announce_estimate("e1", jobs, quiet=True)
    assert capsys.readouterr().err == ""


def test_the_bars_time_left_prices_the_jobs_left_by_their_own_size() -> None:
    now = [0.0]
    jobs = (JobEstimate("small", 1.0, 1, 1), JobEstimate("big", 60.0, 50, 90), JobEstimate("big", 60.0, 50, 90))
    left = TimeLeft(RunEstimate(jobs, start_s=0.0), clock=lambda: now[0])
    assert left.text(0, 0.0) == "about 2 min left"
    now[0] = 2.0
    left.finished(1)  # the small job took twice its estimate: so will the rest
    assert left.seconds(1, 0.0) == pytest.approx(240.0)
    assert TimeLeft(None).text(0, 0.0) == ""
