"""`cryptobench compare` and `cryptobench import`: exit codes, what is printed, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from app.cli.main import main
from tests.helpers.comparisons import BASE_ID, NEW_ID, base_run, scaled, write, write_side

Capture = pytest.CaptureFixture[str]


@pytest.fixture()
def base_file(tmp_path: Path) -> Path:
    return write(tmp_path / "base.json", base_run())


def _rows(out: str) -> list[str]:
    """The table's lines when piped: one per metric, " | " between the cells."""
    return [line for line in out.splitlines() if line.count(" | ") == 8 and not line.startswith("job |")]


def test_a_run_against_itself_exits_0_all_within_noise(tmp_path: Path, capsys: Capture) -> None:
    base, same = write_side(tmp_path, base_run(), "base"), write_side(tmp_path, base_run(), "same")
    assert main(["compare", base, same, "--fail-on-regression"]) == EXIT_OK
    out = capsys.readouterr().out
    rows = _rows(out)
    assert len(rows) == 4
    assert all(row.split(" | ")[-1] == "within noise" and row.split(" | ")[6] == "1.000×" for row in rows)
    assert "environment: no difference" in out and "4 within noise" in out and "0 regression(s)" in out


def test_samples_scaled_by_1_3_exit_1_naming_the_regressed_metrics(tmp_path: Path, capsys: Capture) -> None:
    base_file = write_side(tmp_path, base_run(), "base")
    slower = write_side(tmp_path, scaled(base_run(), 1.3), "slower")
    assert main(["compare", base_file, slower, "--fail-on-regression"]) == EXIT_FAILED
    captured = capsys.readouterr()
    assert all(row.split(" | ")[-1] == "slower (regression)" for row in _rows(captured.out))
    err = captured.err.splitlines()
    assert err[0] == (
        "cryptobench: regression: 4 metric(s) slower by more than 5 %, the 95 % interval's low end above it too:"
    )
    assert [line.split(":")[0].strip() for line in err[1:]] == [
        "AES-128-GCM 1 KiB operations encrypt",
        "AES-128-GCM 1 KiB operations decrypt",
        "AES-128-GCM 64 KiB operations encrypt",
        "Ed25519 64 B operations sign",
    ]
    assert all("1.300×" in line for line in err[1:])
    # Without --fail-on-regression the same comparison only reports.
    assert main(["compare", base_file, slower]) == EXIT_OK
    # A threshold above the slowdown: slower, but no regression.
    assert main(["compare", base_file, slower, "--fail-on-regression", "--threshold", "50%"]) == EXIT_OK


def test_samples_scaled_by_0_7_are_faster_and_exit_0(tmp_path: Path, capsys: Capture) -> None:
    base_file = write_side(tmp_path, base_run(), "base")
    faster = write_side(tmp_path, scaled(base_run(), 0.7), "faster")
    assert main(["compare", base_file, faster, "--fail-on-regression"]) == EXIT_OK
    assert {row.split(" | ")[-1] for row in _rows(capsys.readouterr().out)} == {"faster"}


def test_json_is_the_comparison_as_data(base_file: Path, tmp_path: Path, capsys: Capture) -> None:
    base = write_side(tmp_path, base_run(), "base")
    slower = write_side(tmp_path, scaled(base_run(), 1.3), "slower")
    same = write_side(tmp_path, base_run(), "same")
    assert main(["compare", base, slower, same, "--json", "--threshold", "0.1"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["threshold"] == 0.1 and data["regressions"] == 4
    first, second = data["comparisons"]
    assert (first["base"]["id"], first["new"]["id"], second["new"]["id"]) == ("base-0", "slower-0", "same-0")
    assert [m["verdict"] for p in first["pairs"] for m in p["metrics"]] == ["slower"] * 4
    assert [m["verdict"] for p in second["pairs"] for m in p["metrics"]] == ["within noise"] * 4
    assert first["pairs"][0]["metrics"][0]["ratio"] == pytest.approx(1.3)
    # One run a side: the same ratios, and no verdict (no stored runs measure how runs move).
    one = write(tmp_path / "slower.json", scaled(base_run(), 1.3))
    assert main(["compare", str(base_file), str(one), "--json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    (alone,) = data["comparisons"]
    assert (alone["base"]["id"], alone["new"]["id"]) == (BASE_ID, NEW_ID) and data["regressions"] == 0
    metrics = [m for p in alone["pairs"] for m in p["metrics"]]
    assert {(m["verdict"], m["reason"], m["run_movement"]) for m in metrics} == {("no verdict", "one run a side", None)}
    assert metrics[0]["ratio"] == pytest.approx(1.3) and metrics[0]["ci95"][0] > 1.05


@pytest.mark.parametrize("text", ["5%", "0.05", " 12.5 % ", "0"])
def test_threshold_accepts_fractions_and_percentages(base_file: Path, text: str, capsys: Capture) -> None:
    assert main(["compare", str(base_file), str(base_file), "--threshold", text, "--json"]) == EXIT_OK
    expected = {"5%": 0.05, "0.05": 0.05, " 12.5 % ": 0.125, "0": 0.0}[text]
    assert json.loads(capsys.readouterr().out)["threshold"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("fast", "not 'fast'"),
        ("-5%", "not '-5%'"),
        ("nan", "not 'nan'"),
        ("5", "5 would be 500%; write 5% for 5 per cent"),
    ],
)
def test_a_bad_threshold_exits_2_naming_it(base_file: Path, text: str, said: str, capsys: Capture) -> None:
    assert main(["compare", str(base_file), str(base_file), f"--threshold={text}"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--threshold" in err and said in err


def _bad(data: dict[str, Any], case: str) -> str | dict[str, Any]:
    if case == "not JSON":
        return "{not json"
    if case == "format_version":
        data["format_version"] = 99
    elif case == "missing field":
        del data["jobs"][0]["scheme"]
    elif case == "hostile value":
        data["jobs"][1]["metrics"]["encrypt"]["median"] = "1e999"
    return data


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("not JSON", "not a results JSON file"),
        ("format_version", "format_version: 99 is not supported"),
        ("missing field", "jobs[0].scheme"),
        ("hostile value", "jobs[1].metrics.encrypt.median"),
    ],
)
def test_a_bad_results_file_exits_2_naming_file_and_field(
    base_file: Path, tmp_path: Path, case: str, said: str, capsys: Capture
) -> None:
    bad = _bad(base_run().to_dict(), case)
    path = tmp_path / "bad.json"
    path.write_text(bad if isinstance(bad, str) else json.dumps(bad), encoding="utf-8")
    assert main(["compare", str(base_file), str(path), "--fail-on-regression"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"cryptobench: error: {path}: ") and said in err


def test_missing_file_and_unknown_run_id_exit_2(base_file: Path, tmp_path: Path, capsys: Capture) -> None:
    assert main(["compare", str(base_file), str(tmp_path / "gone.json")]) == EXIT_USAGE
    assert "gone.json: file not found" in capsys.readouterr().err
    store = tmp_path / "store.sqlite3"
    assert main(["compare", str(base_file), "20990101", "--store", str(store)]) == EXIT_USAGE
    assert "no run with id '20990101'" in capsys.readouterr().err


def test_no_matched_jobs_is_said_and_fails_only_a_gate(base_file: Path, tmp_path: Path, capsys: Capture) -> None:
    other = base_run().to_dict()
    for item in other["jobs"]:
        item["message_size"] += 1
    other_file = write(tmp_path / "other.json", other)
    assert main(["compare", str(base_file), str(other_file)]) == EXIT_OK
    captured = capsys.readouterr()
    assert "no job of run" in captured.err and "nothing was compared" in captured.err
    assert captured.out.count("only in base:") == 3 and captured.out.count("only in new:") == 3
    assert main(["compare", str(base_file), str(other_file), "--fail-on-regression"]) == EXIT_USAGE
    assert "--fail-on-regression: nothing was compared" in capsys.readouterr().err


def test_a_stored_run_against_an_older_file_from_another_machine(
    base_file: Path, tmp_path: Path, capsys: Capture
) -> None:
    """A run id beside a file, the file from before most environment keys were recorded."""
    store = tmp_path / "store.sqlite3"
    assert main(["import", str(base_file), "--store", str(store)]) == EXIT_OK
    old = base_run().to_dict()
    old["run"]["id"] = "old-1"
    old["run"]["environment"] = {"hostname": "pi", "cpu": {"model": "Cortex-A72"}}
    for item in old["jobs"]:
        item["id"] = f"old-1/{item['index']}"
    old_file = write(tmp_path / "old.json", old)
    capsys.readouterr()
    assert main(["compare", BASE_ID[:12], str(old_file), "--store", str(store)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "  machine: laptop → pi" in out and "  CPU model: Test CPU → Cortex-A72" in out
    assert "  cryptography OpenSSL: OpenSSL 3.0.11 19 Sep 2023 → not recorded" in out
    assert len(_rows(out)) == 4


def test_import_adds_runs_shown_in_history_with_their_machine(base_file: Path, tmp_path: Path, capsys: Capture) -> None:
    store = tmp_path / "store.sqlite3"
    server = base_run().to_dict()
    server["run"]["environment"]["hostname"] = "server"
    server_file = write(
        tmp_path / "server.json",
        scaled(base_run(), 0.5).to_dict()
        | {"run": scaled(base_run(), 0.5).to_dict()["run"] | {"environment": server["run"]["environment"]}},
    )
    assert main(["import", str(base_file), str(server_file), "--store", str(store)]) == EXIT_OK
    out = capsys.readouterr().out
    assert f"imported {BASE_ID} · bench · 3 job(s) · machine laptop" in out
    assert f"imported {NEW_ID} · bench · 3 job(s) · machine server" in out
    assert main(["history", "--store", str(store), "--json"]) == EXIT_OK
    history = {r["id"]: r["host"] for r in json.loads(capsys.readouterr().out)}
    assert history == {BASE_ID: "laptop", NEW_ID: "server"}
    assert main(["import", str(base_file), "--store", str(store)]) == EXIT_OK  # again: found, not added
    assert f"already stored as {BASE_ID} (same run id); not added again" in capsys.readouterr().out
    assert main(["history", "--store", str(store), "--json"]) == EXIT_OK
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_import_refuses_a_hostile_file_and_goes_on(base_file: Path, tmp_path: Path, capsys: Capture) -> None:
    store = tmp_path / "store.sqlite3"
    hostile = base_run().to_dict()
    hostile["run"]["id"] = "x"
    hostile["jobs"][0]["id"] = f"{BASE_ID}/0"  # would write over another run's job row
    hostile_file = write(tmp_path / "hostile.json", hostile)
    assert main(["import", str(hostile_file), str(base_file), "--store", str(store)]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert f"cryptobench: error: {hostile_file}: jobs[0].id" in captured.err
    assert f"imported {BASE_ID}" in captured.out
    assert main(["history", "--store", str(store), "--json"]) == EXIT_OK
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [BASE_ID]


def test_text_from_a_file_is_shown_with_control_characters_escaped(tmp_path: Path, capsys: Capture) -> None:
    hostile = base_run().to_dict()
    hostile["run"]["id"] = "evil-1"
    hostile["run"]["environment"]["hostname"] = "pi\x1b[2J"
    for item in hostile["jobs"]:
        item["id"] = f"evil-1/{item['index']}"
        item["label"] = "AES\x1b]0;owned\x07"
        item["message_size"] += 1  # nothing matches: the warning names the runs
    base_file = write(tmp_path / "base.json", base_run())
    assert main(["compare", str(base_file), str(write(tmp_path / "evil.json", hostile))]) == EXIT_OK
    captured = capsys.readouterr()
    assert "\x1b" not in captured.out + captured.err and "\x07" not in captured.out
    assert "machine: laptop → pi\\x1b[2J" in captured.out and "only in new: AES\\x1b]0;owned\\x07" in captured.out


def test_a_job_that_measured_before_and_fails_now_fails_the_gate(
    base_file: Path, tmp_path: Path, capsys: Capture
) -> None:
    new = scaled(base_run(), 1.0)
    broken = new.jobs[0]
    broken.status, broken.error, broken.metrics = "failed", "receiver process was killed by SIGSEGV", {}
    cancelled = new.jobs[1]
    cancelled.status, cancelled.error, cancelled.metrics = "cancelled", "cancelled by the user", {}
    path = write(tmp_path / "broken.json", new)
    assert main(["compare", str(base_file), str(path), "--fail-on-regression"]) == EXIT_FAILED
    err = capsys.readouterr().err
    assert "1 job(s) measured in the base run failed in the new one" in err
    assert "killed by SIGSEGV" in err
    assert main(["compare", str(base_file), str(path)]) == EXIT_OK  # without the gate: reported only


def test_several_runs_a_side_are_joined_with_plus(tmp_path: Path, capsys: Capture) -> None:
    sides = {
        name: [
            write(tmp_path / f"{name}{k}.json", scaled(base_run(), factor, run_id=f"{name}-{k}"))
            for k, factor in enumerate(factors)
        ]
        for name, factors in (("base", [1.0, 1.25, 0.9]), ("new", [1.2, 0.95, 1.1]))
    }
    joined = {name: "+".join(str(p) for p in paths) for name, paths in sides.items()}
    # One run a side: the 1.2x run-level shift of the first new run has its ratio and no
    # verdict, the note says why, and the gate checks nothing on it (exit 2, never 1).
    assert main(["compare", str(sides["base"][0]), str(sides["new"][0]), "--fail-on-regression"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert {row.split(" | ")[-1] for row in _rows(captured.out)} == {"no verdict: one run a side"}
    assert "0 faster, 0 slower, 0 within noise, 4 no verdict" in captured.out
    assert "so 4 metric(s) have a ratio and no verdict: the store holds fewer than 3 runs" in captured.out
    assert "1.6x" not in captured.out and "1.6×" not in captured.out  # never a figure from elsewhere
    assert "too few runs for the gate: 1 and 1 (it needs 3 a side, joined with +: A+B+C)" in captured.err
    assert "no metric had the evidence for a verdict, so nothing was checked" in captured.err
    assert "cryptobench: regression:" not in captured.err
    # Two a side are not enough either.
    two = {name: "+".join(str(p) for p in paths[:2]) for name, paths in sides.items()}
    assert main(["compare", two["base"], two["new"], "--fail-on-regression"]) == EXIT_USAGE
    assert "too few runs for the gate: 2 and 2" in capsys.readouterr().err
    assert main(["compare", joined["base"], joined["new"], "--fail-on-regression"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "3 runs vs 3, two-level bootstrap" in out and "one run a side" not in out
    assert out.count("base-") == 3 and out.count("new-") == 3
    assert main(["compare", joined["base"] + "+", joined["new"]]) == EXIT_USAGE
    assert "empty run between the + signs" in capsys.readouterr().err


def _thinned(source: Any, keep: int, metric: str | None = None) -> Any:
    """`source` with `keep` samples of each metric (only `metric`'s when given)."""
    from app.core.results.model import RunResult
    from app.core.statistics.stats import summarize

    data = source.to_dict()
    for item in data["jobs"]:
        for name, entry in item["metrics"].items():
            if metric is None or name == metric:
                values = entry["samples"][:keep]
                entry.update(dict(summarize(values).to_dict().items()), samples=values)
    return RunResult.from_dict(data)


def test_n_1_a_side_is_never_a_regression_and_the_gate_says_it_checked_nothing(tmp_path: Path, capsys: Capture) -> None:
    """Before: `3.839× | 3.839–3.839× | slower (regression)` and exit 1 on every such metric."""
    base = write_side(tmp_path, _thinned(base_run(), 1), "b")
    slower = write_side(tmp_path, _thinned(scaled(base_run(), 3.839), 1), "s")
    assert main(["compare", base, slower, "--fail-on-regression"]) == EXIT_USAGE
    captured = capsys.readouterr()
    rows = _rows(captured.out)
    assert len(rows) == 4 and all(
        row.split(" | ")[-1] == "no verdict: too few samples: n = 1 and 1 (a verdict needs 10 a side)" for row in rows
    )
    assert "regression" not in " ".join(rows)
    assert (
        "of 4 metric(s) measured on both sides, 4 had too few samples (10 a side) or a reduced run, "
        "and were not checked" in captured.err
    )
    assert "no metric had the evidence for a verdict, so nothing was checked" in captured.err
    data = json.loads(main(["compare", base, slower, "--json"]) == EXIT_OK and capsys.readouterr().out)
    reasons = [m["reason"] for p in data["comparisons"][0]["pairs"] for m in p["metrics"]]
    assert reasons == ["too few samples: n = 1 and 1 (a verdict needs 10 a side)"] * 4


def test_a_gate_with_some_metrics_too_thin_checks_the_others_and_says_how_many_it_could_not(
    tmp_path: Path, capsys: Capture
) -> None:
    base = write_side(tmp_path, _thinned(base_run(), 3, metric="sign"), "b")
    same = write_side(tmp_path, _thinned(scaled(base_run(), 1.0), 3, metric="sign"), "n")
    assert main(["compare", base, same, "--fail-on-regression"]) == EXIT_OK
    assert "of 4 metric(s) measured on both sides, 1 had too few samples" in capsys.readouterr().err
    slower = write_side(tmp_path, _thinned(scaled(base_run(), 1.3), 3, metric="sign"), "s")
    assert main(["compare", base, slower, "--fail-on-regression"]) == EXIT_FAILED
    err = capsys.readouterr().err
    assert "3 metric(s) slower by more than 5 %" in err and "sign" not in err.split("slower by more")[1]


def test_one_run_a_side_of_identical_code_is_judged_against_the_stored_runs_movement(
    tmp_path: Path, capsys: Capture
) -> None:
    """Two back-to-back runs of the same code, one a side, printed "slower (regression)"
    with a note quoting a spread measured on another machine. With stored runs of the
    same jobs on this machine, the note quotes the movement they measure, and a change
    within it is within noise; one beyond it is a verdict."""
    from dataclasses import replace

    from app.core.store.store import Store

    store = tmp_path / "store.sqlite3"
    with Store(store) as opened:
        for k, factor in enumerate([1.0, 1.12, 0.93, 1.05, 0.98]):
            run = scaled(base_run(), factor, run_id=f"20260101-10000{k}-aaaaa{k}")
            opened.add_run(replace(run, started=f"2026-01-01T10:0{k}:00+00:00"))
    base = "20260101-100004-aaaaa4"
    same = write(tmp_path / "same.json", scaled(base_run(), 0.98 * 1.1))  # 1.1x apart: as runs move here
    assert main(["compare", base, str(same), "--store", str(store)]) == EXIT_OK
    out = capsys.readouterr().out
    rows = _rows(out)
    assert len(rows) == 4 and all(row.split(" | ")[-1].startswith("within noise: within the ") for row in rows)
    assert "stored runs here allow" in rows[0] and "(regression)" not in out
    assert "4 metric(s) judged against how much runs of their jobs moved on laptop" in out
    assert "(5 stored runs each): their medians differed by up to 1.20×" in out
    far = write(tmp_path / "far.json", scaled(base_run(), 0.98 * 3.0))
    assert main(["compare", base, str(far), "--store", str(store)]) == EXIT_OK
    assert {row.split(" | ")[-1].split(":")[0] for row in _rows(capsys.readouterr().out)} == {"slower (regression)"}


def _kem_run(run_id: str, exchange: str | None) -> Any:
    from tests.helpers import records
    from tests.helpers.comparisons import run, samples

    return run(
        run_id,
        [
            records.job(
                run_id,
                0,
                1024,
                {"encrypt": samples(60e-6, seed=5), "decrypt": samples(60e-6, seed=6)},
                scheme="ml-kem",
                params={"level": 768},
                label="ML-KEM-768 + AES-256-GCM [cryptography]" + (f" ({exchange})" if exchange else ""),
                family="hybrid",
                exchange=exchange,
            )
        ],
    )


@pytest.mark.parametrize("old", [None, "per-message"])  # a run from before jobs named it reads per-message
def test_jobs_of_two_exchange_patterns_are_not_paired_and_the_output_says_why(
    tmp_path: Path, capsys: Capture, old: str | None
) -> None:
    base = write(tmp_path / "base.json", _kem_run(BASE_ID, old))
    new = write(tmp_path / "new.json", _kem_run(NEW_ID, "session"))
    assert main(["compare", str(base), str(new)]) == EXIT_OK
    out = capsys.readouterr().out
    assert not _rows(out)  # no metric set beside one of the other pattern
    why = (
        "the other run measured it with exchange session, this one per-message: jobs of different exchange "
        "patterns do different work per message and are not compared"
    )
    assert f"only in base: ML-KEM-768 + AES-256-GCM [cryptography]{' (per-message)' if old else ''} 1 KiB " in out
    assert why in out
    assert "this one session" in out.split("only in new:")[1]
    assert main(["compare", str(base), str(new), "--json"]) == EXIT_OK
    (comparison,) = json.loads(capsys.readouterr().out)["comparisons"]
    assert comparison["pairs"] == []
    assert (
        comparison["only_base"][0]["exchange"] == "per-message" and comparison["only_base"][0]["why_unmatched"] == why
    )
    assert comparison["only_new"][0]["exchange"] == "session"
