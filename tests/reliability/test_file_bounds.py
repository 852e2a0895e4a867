"""Every file read has a bound and a type; every path or run id argument that cannot be
looked at is one line; every printed result that cannot be written fails the command.

Before: `import`, `report` and `compare` read a results file whole: /dev/zero ended in a
MemoryError traceback, a FIFO hung all three (and `run` of a profile FIFO), a 525 MB file
imported; an argument past 255 characters (twelve run ids joined with +, one long path)
was an `OSError: File name too long` traceback; `compare --json > /dev/full` exited 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.results.model import MAX_RESULTS_FILE_BYTES, to_json
from app.core.store.store import Store
from tests.helpers import records
from tests.helpers.stores import RUN_ID, stored_run

ROOT = Path(__file__).resolve().parents[2]
POSIX = pytest.mark.skipif(os.name != "posix", reason="FIFOs, /dev/zero and /dev/full are POSIX")

#: The commands that read a results file named on the command line, each with the file in
#: its place; `{}` is the file.
RESULTS_READERS = {
    "import": ["import", "{}"],
    "report": ["report", "{}", "--markdown", "OUT.md"],
    "report --baseline": ["report", "GOOD", "--baseline", "{}", "--markdown", "OUT.md"],
    "compare base": ["compare", "{}", "GOOD"],
    "compare new": ["compare", "GOOD", "{}"],
    "compare joined": ["compare", "GOOD+{}", "GOOD"],
}


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.json"
    run_id = "20260101-000000-good00"
    path.write_text(to_json(records.run(run_id, [records.job(run_id, metrics={"encrypt": [1e-6] * 5})])))
    return path


def _argv(template: list[str], target: str, good: Path, tmp_path: Path, store: Path) -> list[str]:
    argv = [
        part.replace("{}", target).replace("GOOD", str(good)).replace("OUT.md", str(tmp_path / "out.md"))
        for part in template
    ]
    return [*argv, "--store", str(store)]


def _one_line_error(capsys: pytest.CaptureFixture[str], *fragments: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("cryptobench: error:")]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[0], err
    return lines[0]


def _refuses(
    argv_template: list[str], target: str, good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> str:
    argv = _argv(argv_template, target, good, tmp_path, tmp_path / "store.sqlite3")
    assert main(argv) == 2
    return _one_line_error(capsys)


# --- not a regular file -----------------------------------------------------------------


@POSIX
@pytest.mark.timeout(60)  # a FIFO opened for reading used to block until a writer came: forever
@pytest.mark.parametrize("reader", sorted(RESULTS_READERS))
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-to-dev-zero", "folder"])
def test_results_readers_refuse_what_is_not_a_regular_file(
    reader: str, kind: str, good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(target)
        said = "(a named pipe)"
    elif kind == "folder":
        target.mkdir()
        said = "(a folder)"
    else:
        target = Path("/dev/zero") if kind == "dev-zero" else target
        if kind == "link-to-dev-zero":
            target.symlink_to("/dev/zero")
        said = "(a character device)"
    line = _refuses(RESULTS_READERS[reader], str(target), good, tmp_path, capsys)
    assert line == f"cryptobench: error: {target}: not a regular file {said}, so not a results file"


@POSIX
@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_run_refuses_a_profile_that_is_not_a_regular_file(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "p.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        target = Path("/dev/zero")
    assert main(["run", str(target), "--no-store", "--quiet"]) == 2
    assert _one_line_error(capsys, f"{target}: not a regular file", "so not a profile")


@POSIX
@pytest.mark.timeout(60)
def test_window_import_of_a_fifo_does_not_hang(qtbot: object, tmp_path: Path) -> None:
    from app.gui.history.panel import HistoryPanel

    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    panel = HistoryPanel(tmp_path / "store.sqlite3")
    qtbot.addWidget(panel)  # type: ignore[attr-defined]
    assert panel.import_results_file(fifo) is None
    assert f"{fifo}: not a regular file (a named pipe)" in panel.message_label.text()


# --- too large ------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", sorted(RESULTS_READERS))
def test_a_huge_sparse_results_file_is_refused_by_its_size_without_reading_it(
    reader: str, good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as stream:
        stream.truncate(8 << 30)  # 8 GiB of holes: nothing is written, nothing may be read
    line = _refuses(RESULTS_READERS[reader], str(huge), good, tmp_path, capsys)
    assert line == f"cryptobench: error: {huge}: larger than 512.0 MiB (8.0 GiB): not a results file"


def test_the_bound_is_exact(good: Path, tmp_path: Path) -> None:
    """A file of exactly MAX_RESULTS_FILE_BYTES is read (and refused for its content, here
    trailing spaces after valid JSON are fine), one byte more is refused by its size."""
    from app.core.results.model import ResultsFileError, load_results_file

    path = tmp_path / "padded.json"
    data = good.read_bytes()
    with path.open("wb") as stream:
        stream.write(data)
        stream.truncate(MAX_RESULTS_FILE_BYTES)  # zero bytes after the JSON: read, then refused as JSON
    with pytest.raises(ResultsFileError) as refused:
        load_results_file(path)
    assert "not a results JSON file" in str(refused.value)
    with path.open("r+b") as stream:
        stream.truncate(MAX_RESULTS_FILE_BYTES + 1)
    with pytest.raises(ResultsFileError, match=r"larger than 512\.0 MiB"):
        load_results_file(path)


# --- arguments that cannot be looked at -----------------------------------------------------

LONG_NAME = "x" * 300
TWELVE_IDS = "+".join(f"20260101-0000{k:02d}-abcdef" for k in range(12))


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["compare", TWELVE_IDS, "GOOD"], "no run with id '20260101-000000-abcdef'"),
        (["compare", "GOOD", TWELVE_IDS], "no run with id '20260101-000000-abcdef'"),
        (["compare", LONG_NAME, "GOOD"], "(300 characters)"),
        (["compare", f"{LONG_NAME}.json", "GOOD"], "cannot read file: File name too long"),
        (["compare", f"/tmp/{LONG_NAME}/r.json", "GOOD"], "cannot read file: File name too long"),
        (["compare", "GOOD", "GOOD/r.json"], "cannot read file: Not a directory"),
        (["report", LONG_NAME, "--markdown", "OUT.md"], "(300 characters)"),
        (["report", f"{LONG_NAME}.json", "--markdown", "OUT.md"], "cannot read file: File name too long"),
        (["report", "GOOD", "--markdown", f"{LONG_NAME}.md"], "File name too long"),
        (["report", "GOOD", "--pdf", f"/tmp/{LONG_NAME}/r.pdf"], "File name too long"),
        (["import", LONG_NAME], "cannot read file: File name too long"),
        (["show", LONG_NAME], "no run with id"),
        (["run", LONG_NAME], "File name too long"),
        (["run", f"{LONG_NAME}.json"], "File name too long"),
        (["run", "quick", "--json", f"{LONG_NAME}.json", "--no-store"], "File name too long"),
        (["run", "quick", "--remote", "127.0.0.1:9", "--token-file", LONG_NAME], "File name too long"),
        (["history", "--store", f"/tmp/{LONG_NAME}/s.sqlite3"], "File name too long"),
        (["store", "--store", f"{LONG_NAME}.sqlite3"], "File name too long"),
    ],
)
def test_an_argument_past_the_name_limit_is_one_line(
    argv: list[str], fragment: str, good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [a.replace("GOOD", str(good)).replace("OUT.md", str(tmp_path / "o.md")) for a in argv]
    if "--store" not in args and args[0] != "run":
        args += ["--store", str(tmp_path / "store.sqlite3")]
    assert main(args) == 2
    _one_line_error(capsys, fragment)


@POSIX
@pytest.mark.parametrize("command", [["compare", "{}", "GOOD"], ["import", "{}"], ["run", "{}"], ["report", "{}"]])
def test_a_loop_of_links_is_one_line(
    command: list[str], good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(loop)
    args = [a.replace("{}", str(loop)).replace("GOOD", str(good)) for a in command]
    if args[0] == "report":
        args += ["--markdown", str(tmp_path / "o.md")]
    if args[0] != "run":
        args += ["--store", str(tmp_path / "store.sqlite3")]
    assert main(args) == 2
    _one_line_error(capsys, str(loop), "Too many levels of symbolic links")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_results_file_is_one_line(good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good.chmod(0)
    assert main(["compare", str(good), str(good), "--store", str(tmp_path / "s.sqlite3")]) == 2
    _one_line_error(capsys, str(good), "Permission denied")


# --- the printed result cannot be written ----------------------------------------------------


def _cli(*args: str, stdout: int | None = None, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CRYPTOBENCH_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


@pytest.fixture
def cli_home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    stored_run(home / "results.sqlite3")
    yield home


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "argv",
    [
        # make test: the JSON of each command that reads the store, and one that reads none
        ["compare", "GOOD", "GOOD", "--json"],
        pytest.param(["compare", "GOOD", "GOOD"], marks=pytest.mark.exhaustive),
        ["history", "--json"],
        pytest.param(["history"], marks=pytest.mark.exhaustive),
        ["show", RUN_ID, "--json"],
        pytest.param(["show", RUN_ID], marks=pytest.mark.exhaustive),
        pytest.param(["store"], marks=pytest.mark.exhaustive),
        pytest.param(["presets"], marks=pytest.mark.exhaustive),
        pytest.param(["links"], marks=pytest.mark.exhaustive),
        ["--version"],
    ],
    ids=lambda argv: " ".join(argv).replace("GOOD", "file"),
)
def test_a_full_disk_behind_stdout_fails_the_command(argv: list[str], good: Path, cli_home: Path) -> None:
    with open("/dev/full", "w") as full:
        proc = _cli(*(a.replace("GOOD", str(good)) for a in argv), stdout=full.fileno(), home=cli_home)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        "cryptobench: error: standard output: cannot write (No space left on device); the output is lost\n"
    )


@pytest.mark.skipif(os.name != "posix", reason="a closed pipe's EPIPE")
@pytest.mark.parametrize("argv", [["history", "--json"], ["compare", "GOOD", "GOOD", "--json"], ["presets"]])
def test_a_closed_pipe_is_not_an_error(argv: list[str], good: Path, cli_home: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first byte: every write is EPIPE
    try:
        proc = _cli(*(a.replace("GOOD", str(good)) for a in argv), stdout=write_end, home=cli_home)
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


# --- compare of a huge results file -----------------------------------------------------------


@pytest.mark.timeout(120)
def test_compare_of_a_million_samples_a_side_keeps_the_draw_budget(tmp_path: Path) -> None:
    """A million samples a side: 500 resamples (the old floor) drew 2e9 samples, over 40 s.
    Now the medians come from their order statistics: the full 2000 resamples, the same
    intervals, in a couple of seconds (one run a side: ratios, no verdict)."""
    from app.core.analysis.compare import compare_runs

    n = 1_000_000
    base = records.run("base", [records.job("base", metrics={"encrypt": records.spread_samples(1e-6, n)})])
    slower = records.run("new", [records.job("new", metrics={"encrypt": records.spread_samples(1.2e-6, n)})])
    same = compare_runs(base, base)
    assert same.exact_medians and same.resamples == 2000
    unchanged = same.metrics[0][1].comparison
    assert unchanged is not None and unchanged.ci95_low <= 1.0 <= unchanged.ci95_high
    found = compare_runs(base, slower)
    comparison = found.metrics[0][1].comparison
    assert comparison is not None and 1.19 < comparison.ci95_low <= comparison.ci95_high < 1.21


def test_results_json_refuses_json_of_a_run_it_did_not_write(tmp_path: Path) -> None:
    """The size cap is on bytes: a small file of the wrong shape is still read and refused
    for its content (not its size), naming the file."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"hello": "world"}))
    from app.core.results.model import ResultsFileError, load_results_file

    with pytest.raises(ResultsFileError, match=rf"^{path}: not CryptoBench results"):
        load_results_file(path)


@POSIX
@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
@pytest.mark.parametrize("command", [["history"], ["store"], ["show", "x"], ["import", "GOOD"]])
def test_a_store_path_that_is_not_a_file_is_named(
    kind: str, command: list[str], good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite said "disk I/O error" or "unable to open database file" for these."""
    target = tmp_path / "store.sqlite3"
    if kind == "fifo":
        os.mkfifo(target)
        said = "a named pipe"
    elif kind == "folder":
        target.mkdir()
        said = "a folder"
    else:
        target, said = Path("/dev/zero"), "a character device"
    args = [a.replace("GOOD", str(good)) for a in command]
    assert main([*args, "--store", str(target)]) in (1, 2)
    _one_line_error(capsys, f"{target}: not a regular file ({said}), so not a results store")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command",
    ["report", pytest.param("import", marks=pytest.mark.exhaustive), pytest.param("run", marks=pytest.mark.exhaustive)],
)
def test_a_full_disk_behind_stdout_is_a_warning_where_the_result_is_a_file(
    command: str, good: Path, cli_home: Path, tmp_path: Path
) -> None:
    """`run`, `report` and `import` print an account of work whose result is the store and
    the files they write: those are complete, the lost account is said, exit 0."""
    out = tmp_path / "out.md"
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "p", "jobs": [{"scheme": "sha256", "samples": 3, "warmup": 0}]}))
    argv = {
        "report": ["report", str(good), "--markdown", str(out)],
        "import": ["import", str(good)],
        "run": ["run", str(profile), "--csv", str(out), "--quiet"],
    }[command]
    with open("/dev/full", "w") as full:
        proc = _cli(*argv, stdout=full.fileno(), home=cli_home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == (
        "cryptobench: warning: standard output: cannot write (No space left on device); the output is lost\n"
    )
    if command == "import":
        with Store(cli_home / "results.sqlite3") as store:
            assert "20260101-000000-good00" in [r.id for r in store.list_runs()]
    else:
        assert out.stat().st_size > 0


# --- what parsing may allocate: arrays, objects and values are counted first ------------------
# Before: a 30 MB results file of ten million empty arrays took 2.4 GiB and 15 s to be
# refused by import and compare; 512 MiB of "0.0," would have needed many GiB. A 16 MiB
# profile of `[],` took 1.7 GiB and 12 s.


def _bomb(kind: str, count: int) -> str:
    item = {"arrays": "[]", "objects": "{}", "numbers": "0.0", "strings": '"ab"'}[kind]
    return '{"format_version": 1, "run": {}, "x": [' + ",".join([item] * count) + "]}"


@pytest.mark.parametrize("reader", sorted(RESULTS_READERS))
@pytest.mark.parametrize(
    ("kind", "cap", "counted"),
    [
        ("arrays", "MAX_RESULTS_CONTAINERS", "2,003 arrays and objects, more than the 1,000"),
        ("objects", "MAX_RESULTS_CONTAINERS", "2,003 arrays and objects, more than the 1,000"),
        ("numbers", "MAX_RESULTS_VALUES", "2,002 values, more than the 1,000"),
        ("strings", "MAX_RESULTS_VALUES", "2,002 values, more than the 1,000"),
    ],
)
def test_a_results_file_of_more_values_than_the_app_writes_is_refused_before_parsing(
    reader: str,
    kind: str,
    cap: str,
    counted: str,
    good: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.core.results import model

    monkeypatch.setattr(model, cap, 1_000)  # small caps stand for the real ones: same code
    monkeypatch.setattr(model.json, "loads", _never_parsed)
    bomb = tmp_path / "bomb.json"
    bomb.write_text(_bomb(kind, 2_000))
    line = _refuses(RESULTS_READERS[reader], str(bomb), good, tmp_path, capsys)
    assert line.startswith(f"cryptobench: error: {bomb}: not a results JSON file ({counted} ")
    assert line.endswith("a results file of this app holds in 512 MiB)")


_REAL_LOADS = json.loads


def _never_parsed(text: str, **kwargs: object) -> object:
    """json.loads, failing the test on a bomb (the GOOD side of a comparison is parsed)."""
    if '"x": [' in text or '"x":[' in text:
        raise AssertionError("parsed before its structure was counted")
    return _REAL_LOADS(text, **kwargs)


def test_the_caps_are_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.results import model

    text = _bomb("numbers", 99)  # 101 values (100 commas + 1), 3 containers
    monkeypatch.setattr(model, "MAX_RESULTS_VALUES", 101)
    monkeypatch.setattr(model, "MAX_RESULTS_CONTAINERS", 3)
    with pytest.raises(model.ResultsFileError, match=r"run\.id: required field is missing"):
        model.parse_results_text(text, "f.json")  # at both caps: parsed (and refused on its content)
    for cap in ("MAX_RESULTS_VALUES", "MAX_RESULTS_CONTAINERS"):
        with monkeypatch.context() as patch:
            patch.setattr(model, cap, getattr(model, cap) - 1)
            with pytest.raises(model.ResultsFileError, match=r"^f\.json: not a results JSON file \("):
                model.parse_results_text(text, "f.json")


def test_the_outside_rounds_bomb_is_refused_at_once_with_the_real_caps(tmp_path: Path) -> None:
    """The 30 MB file of ten million empty arrays, at the real caps: refused in one count,
    without parsing (before: 2.4 GiB, 15 s)."""
    import time

    from app.core.results.model import ResultsFileError, load_results_file

    bomb = tmp_path / "bomb.json"
    bomb.write_text('{"format_version":1,"run":{},"x":[' + "[]," * 10_000_000 + "[]]}")  # the round's file
    started = time.process_time()
    with pytest.raises(ResultsFileError, match=r"10,000,004 arrays and objects, more than the 9,586,980 "):
        load_results_file(bomb)
    assert time.process_time() - started < 5  # a count, not a parse (a parse took 15 s)


def _densities() -> list[tuple[str, str]]:
    """The app's own JSON of every record shape it writes, many to a file, and of the
    densest samples it writes (the shortest number a sample can print as, an outlier)."""
    from app.core.results.model import JobResult, RunResult
    from tests.reliability.test_written_read_back import RUN_ID as SHAPES_RUN
    from tests.reliability.test_written_read_back import _shapes

    texts = [(name, to_json(records.run(SHAPES_RUN, [job] * 50))) for name, job in _shapes()]
    shortest = [1e-06] * 2_000 + [1.0] * 200 + [0.1] * 2_000  # "1e-06", "1.0", "0.1"; outliers too
    run: RunResult = records.run("20260101-000000-dense0", [records.job(metrics={"a": shortest, "b": shortest})])
    assert run.jobs[0].metrics["a"].stats.outliers > 0
    texts.append(("the shortest samples and their outliers", to_json(run)))
    sparest = JobResult(
        id="a/1", index=1, scheme="x", backend="", params={}, label="", family="", mode="operations",
        message_size=0, status="failed",
    )  # fmt: skip
    texts.append(("failed jobs with one-character names", to_json(records.run("a", [sparest] * 300))))
    return texts


@pytest.mark.parametrize(("name", "text"), _densities(), ids=[name for name, _ in _densities()])
def test_a_file_the_app_writes_filled_to_the_size_bound_stays_under_both_caps(name: str, text: str) -> None:
    """The caps sit above what this app's writer can put in MAX_RESULTS_FILE_BYTES: every
    record shape it writes spends at least the bytes per value and per container the caps
    assume, so a file of it at the size bound holds fewer of each (and reads back)."""
    from app.core.results import model

    size = len(text.encode())
    containers = text.count("[") + text.count("{")
    values = text.count(",") + 1
    assert size / values >= MAX_RESULTS_FILE_BYTES / model.MAX_RESULTS_VALUES, name
    assert size / containers >= MAX_RESULTS_FILE_BYTES / model.MAX_RESULTS_CONTAINERS, name
    model.parse_results_text(text, "own.json")  # and it reads back


def test_an_export_past_the_structure_caps_is_written_and_said_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.results import model
    from app.core.vocab import ExportFormat
    from app.report.exporters import ExportTooLarge, export

    run = records.run("20260101-000000-capped", [records.job(metrics={"encrypt": [1e-6] * 50})])
    target = tmp_path / "r.json"
    export(ExportFormat.JSON, run, target)
    assert model.load_results_file(target).id == run.id
    monkeypatch.setattr(model, "MAX_RESULTS_VALUES", 40)
    with pytest.raises(ExportTooLarge, match=r"r\.json: written, but it holds \d[\d,]* values, more than the 40 "):
        export(ExportFormat.JSON, run, target)
    assert json.loads(target.read_text())["run"]["id"] == run.id


# --- profiles: the same count before parsing ------------------------------------------------


@pytest.mark.parametrize("item", ["[]", "{}"])
def test_a_profile_of_more_arrays_than_a_valid_profile_holds_is_refused_before_parsing(
    item: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.profile import files
    from app.core.settings import profile as model

    monkeypatch.setattr(files, "MAX_PROFILE_CONTAINERS", 1_000)
    monkeypatch.setattr(files.json, "loads", _never_parsed)
    profile = tmp_path / "p.json"
    profile.write_text('{"name": "x", "jobs": [{"scheme": "aes-gcm"}], "x": [' + ",".join([item] * 2_000) + "]}")
    assert main(["run", str(profile), "--store", str(tmp_path / "s.db")]) == 2
    line = _one_line_error(capsys, str(profile))
    assert "not a profile: 2,004 arrays and objects, more than the 1,000 a valid profile holds in 16 MiB" in line
    assert model.MAX_PROFILE_CONTAINERS == model.MAX_PROFILE_BYTES // 12


def test_the_densest_valid_profile_is_under_the_container_cap() -> None:
    """Jobs of custom links are the densest valid profile in containers: at the size bound
    it holds fewer than MAX_PROFILE_CONTAINERS, and it parses."""
    from app.core.profile.files import parse_profile, profile_structure_problem
    from app.core.settings.profile import MAX_PROFILE_BYTES, MAX_PROFILE_CONTAINERS

    job = {"scheme": "x25519", "mode": "loopback", "params": {}, "links": [{"delay_ms": 0}] * 64}
    text = json.dumps({"name": "dense", "jobs": [job] * 20}, separators=(",", ":"))
    containers = text.count("[") + text.count("{")
    assert len(text) / containers * MAX_PROFILE_CONTAINERS >= MAX_PROFILE_BYTES
    assert profile_structure_problem(text) is None
    parse_profile(json.loads(text))


def test_a_16_mib_profile_of_numbers_or_strings_is_refused_in_seconds(tmp_path: Path) -> None:
    """Under the container cap, values are bounded by the bytes; their walk is lazy (an entry
    per item took 12 s and a GiB for four million numbers)."""
    import time

    from app.core.profile.files import read_profile_file
    from app.core.settings.profile import ProfileError

    for item in ("1.5", '"ab"'):
        profile = tmp_path / "p.json"
        count = (16 << 20) // (len(item) + 1) - 20
        profile.write_text('{"name":"x","jobs":[{"scheme":"aes-gcm"}],"x":[' + ",".join([item] * count) + "]}")
        started = time.process_time()
        with pytest.raises(ProfileError, match=r"x: unknown field \(got \["):
            read_profile_file(profile)
        assert time.process_time() - started < 8


def test_the_windows_profile_problems_do_not_parse_a_profile_past_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window lists a bad profile's problems by parsing it again: not past the cap (the
    core's one-line refusal is then all it says)."""
    from app.core.profile import files, problems

    monkeypatch.setattr(files, "MAX_PROFILE_CONTAINERS", 1_000)
    monkeypatch.setattr(problems.json, "loads", _never_parsed)
    profile = tmp_path / "p.json"
    profile.write_text('{"name": "x", "jobs": [{"scheme": "nope"}], "x": [' + ",".join(["[]"] * 2_000) + "]}")
    assert problems.profile_problems(profile) == []
    profile.write_text('{"name": "x", "jobs": [{"scheme": "aes-gcm", "samples": 0}]}')
    assert problems.profile_problems(profile)  # under the cap: parsed, its problem listed
