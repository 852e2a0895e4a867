"""Run-wide warnings (CPU frequency scaling, parallel jobs): on every measured job's result,
said once per run by the CLI's summary, the window's log and the report."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli.common import EXIT_OK
from app.cli.main import main
from app.core.analysis.run_wide import RUN_WIDE_CODES, RunWide, job_only, run_wide, stated_before_the_run
from app.core.results.model import RunResult, load_results_file
from app.core.statistics.stability_warnings import (
    StabilityWarning,
    WarningCode,
    frequency_scaling_warning,
    parallel_jobs_warning,
)
from tests.helpers.paths import GOLDEN

GOLDEN_RESULTS = GOLDEN / "results-v1.json"
SCALING = frequency_scaling_warning(["powersave"])
PARALLEL = parallel_jobs_warning(2, 2)
GOVERNOR_FINDING = {
    "facts": [
        {
            "code": "governor",
            "status": "finding",
            "found": "powersave on 2 CPUs",
            "why": "the clock changes",
            "fix": "sudo cpupower frequency-set -g performance",
        }
    ]
}
TINY = {"samples": 3, "warmup": 0, "tamper": 0, "keygen_samples": 1, "message_sizes": [64, 128]}


def _own(metric: str) -> StabilityWarning:
    return StabilityWarning.make(WarningCode.OUTLIERS, metric, f"3 outliers in {metric}")


def _run_with_scaling() -> RunResult:
    """The golden run (3 measured jobs, one cancelled) with the governor warning on every
    measured job, as the runner gives it, beside each job's own warnings."""
    assert SCALING is not None
    run = load_results_file(GOLDEN_RESULTS)
    for job in run.jobs:
        job.warnings = [_own("encrypt"), SCALING] if job.status == "ok" else []
    return run


def test_the_codes_and_the_split() -> None:
    assert SCALING is not None and PARALLEL is not None
    assert RUN_WIDE_CODES == {WarningCode.FREQUENCY_SCALING, WarningCode.PARALLEL_JOBS}
    own = _own("hash")
    assert job_only([SCALING, own, PARALLEL]) == [own]
    said = run_wide([[own, SCALING], [PARALLEL, SCALING], [], [own]])
    assert said == [RunWide(SCALING, 2), RunWide(PARALLEL, 1)]  # first met first, counted per job
    assert (said[0].on(2, 4), said[1].on(2, 4)) == ("all 2 measured jobs", "1 of 4 jobs")


def test_what_the_run_stated_before_its_first_job() -> None:
    assert stated_before_the_run({}) == frozenset()  # no pre-flight (off, or a run from before it)
    assert stated_before_the_run({"stability": GOVERNOR_FINDING}) == {WarningCode.FREQUENCY_SCALING}
    fine = copy.deepcopy(GOVERNOR_FINDING)
    fine["facts"][0]["status"] = "ok"
    assert stated_before_the_run({"stability": fine, "parallel_workers": 1}) == frozenset()
    assert stated_before_the_run({"parallel_workers": 4}) == {WarningCode.PARALLEL_JOBS}
    assert stated_before_the_run({"stability": "damaged", "parallel_workers": True}) == frozenset()


def test_each_result_keeps_it_and_the_cli_summary_says_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.core.run import runner

    real = runner.collect_environment

    def powersave() -> dict[str, Any]:
        environment = real()
        environment.setdefault("cpu", {})["governors"] = ["powersave"]
        return environment

    monkeypatch.setattr(runner, "collect_environment", powersave)
    profile, out = tmp_path / "p.json", tmp_path / "r.json"
    profile.write_text(json.dumps({"name": "t", "jobs": [{"scheme": "sha256", **TINY}]}))
    assert main(["run", str(profile), "--no-store", "--quiet", "--json", str(out)]) == EXIT_OK
    printed = capsys.readouterr().out
    jobs = json.loads(out.read_text())["jobs"]
    # A result read on its own still says its clock was not fixed ...
    assert len(jobs) == 2 and all("frequency-scaling" in {w["code"] for w in job["warnings"]} for job in jobs)
    # ... and the summary says it once, for the run.
    assert printed.count("CPU frequency governor is powersave") == 1
    assert "warning | CPU frequency governor is powersave" in printed and "| run, on all 2 measured jobs |" in printed


def test_the_window_log_says_it_once_and_not_at_all_after_the_pre_flight() -> None:
    from app.gui.results.result_log import ResultLog

    run = _run_with_scaling()

    def logged(log: ResultLog) -> list[str]:
        return [text for job in run.jobs for _, text in log.lines(job)]

    lines = logged(ResultLog())
    assert sum("CPU frequency governor is powersave" in line for line in lines) == 1
    # A job's own: whole the first time its kind appears, then counted at the run's end.
    assert sum("3 outliers in encrypt" in line for line in lines) == 1
    (kind,) = [text for _, text in ResultLog.kinds(run.jobs) if "outliers" in text]
    assert kind.startswith("This run, by kind: 3 outliers in encrypt") and "#1 encrypt, #2 encrypt, #3 encrypt" in kind
    assert next(line for line in lines if "powersave" in line).startswith("Every measured job of this run:")
    stated = logged(ResultLog(stated_before_the_run({"stability": GOVERNOR_FINDING})))
    assert not any("powersave" in line for line in stated)


def _warnings_text(run: RunResult) -> str:
    from app.report.content import build_report

    section = next(s for s in build_report(run).sections if s.title == "Warnings")
    return "\n".join(getattr(b, "text", "") + "\n".join(getattr(b, "items", [])) for b in section.blocks)


def test_the_report_says_it_once_for_the_run() -> None:
    run = _run_with_scaling()
    text = _warnings_text(run)
    assert text.count("CPU frequency governor is powersave") == 1
    assert "**CPU frequency scaling**, a condition of the whole run (its warning is on all 3 measured jobs)" in text
    assert "3 other stability warnings of 1 kind" in text  # the jobs' own, listed as before
    run.environment["stability"] = GOVERNOR_FINDING  # the pre-flight's finding is in Environment
    text = _warnings_text(run)
    assert "powersave" not in text and "stated once, with its fix, under Environment" in text
    for job in run.jobs:
        job.warnings = job_only(job.warnings)
    assert "frequency" not in _warnings_text(run).lower()
