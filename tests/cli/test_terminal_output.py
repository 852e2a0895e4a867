"""What the command line prints on a terminal of 80 and 120 columns, and in a pipe.

Every command that prints a table is run with a terminal console of the width under test
and of a width that needs no wrap; each word of the narrow output must be a whole word
of the wide one ("slowe r (regr essio n)", "[cryptograph y]" and "+00:0 / 0" were not).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console

from app.cli import common
from app.cli.main import main
from app.cli.terminal.printing import print_summary
from app.core.results.model import RunResult, load_results_file
from app.core.store.store import Store
from tests.helpers import comparisons
from tests.helpers.report_runs import build_run
from tests.helpers.terminal import printed_summary
from tests.helpers.warning_runs import reduced_like_run

RUN_ID = "20261123-192233-abcdef"
WIDE = 400
# Box drawing (U+2500-U+257F) and the ellipsis rich puts where it cuts a cell: not words.
_WORD = re.compile(r"[^\s\u2500-\u257f]+")

LONG_LABELS = {
    "format_version": 1,
    "name": "long labels",
    "jobs": [
        {"scheme": "ecies", "backend": "cryptography", "params": {"curve": "secp256k1"}, "message_sizes": [64]},
        {"scheme": "x25519", "backend": "cryptography", "mode": "loopback", "message_sizes": [18]},
        {"scheme": "hkdf", "backend": "cryptography"},
    ],
}


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text))


@pytest.fixture()
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int, list[str]], str]]:
    """Run a command as if on a terminal `width` columns wide; what it printed."""

    def printed(width: int, argv: list[str]) -> str:
        screen = io.StringIO()
        console = Console(file=screen, force_terminal=True, width=width, color_system=None, highlight=False)
        monkeypatch.setattr(common, "make_console", lambda: console)
        code = main(argv)
        assert code in (0, 1), (code, screen.getvalue())
        return screen.getvalue()

    yield printed


def _store(tmp_path: Path, run: RunResult) -> Path:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        jobs, run.jobs = run.jobs, []
        store.begin_run(run)
        for job in jobs:
            store.add_job(run.id, job)
        store.finish_run(run.id, "finished", "2026-11-23T19:30:00+00:00")
        run.jobs = jobs
    return path


def _fixed_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """`system` measures the machine each time: the same facts for both widths."""
    from app.core.machine import preflight

    facts = preflight.read_facts()
    monkeypatch.setattr(preflight, "read_facts", lambda: facts)


def _commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    # Files named from their folder: the store's path is in history's title, and a
    # temporary folder's path alone is wider than 80 columns.
    monkeypatch.chdir(tmp_path)
    run = build_run(RUN_ID, "2026-11-23T19:22:33+00:00")
    store = _store(Path("."), run).name
    base = comparisons.write(Path("base.json"), comparisons.base_run())
    slower = comparisons.write(Path("slower.json"), comparisons.scaled(comparisons.base_run(), 1.3))
    _fixed_facts(monkeypatch)
    return {
        "show": ["show", RUN_ID, "--store", str(store)],
        "history": ["history", "--store", str(store)],
        "compare": ["compare", str(base), str(slower)],
        "list": ["list"],
        "links": ["links"],
        "system": ["system"],
        "presets": ["presets"],
    }


def _assert_no_word_split(narrow: str, wide: str, width: int) -> None:
    # The note under a table that left columns out is not in the wide output: checked apart.
    narrow = re.sub(r"\(left out to fit .*?in a pipe\)", "", narrow, flags=re.S)
    lines = narrow.splitlines()
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    split = sorted(_words(narrow) - _words(wide))
    assert not split, split
    assert "…" not in narrow  # nothing cut short either


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("command", ["show", "history", "compare", "list", "links", "system", "presets"])
def test_no_table_splits_a_word_at_80_and_120_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: Callable[[int, list[str]], str], command: str, width: int
) -> None:
    argv = _commands(tmp_path, monkeypatch)[command]
    wide = terminal(WIDE, argv)
    narrow = terminal(width, argv)
    _assert_no_word_split(narrow, wide, width)
    assert "┃" in narrow or "│" in narrow  # a table was drawn


def test_a_table_too_wide_leaves_columns_out_and_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: Callable[[int, list[str]], str]
) -> None:
    argv = _commands(tmp_path, monkeypatch)["compare"]
    narrow = terminal(80, argv)
    assert "left out to fit 80 columns: mode" in " ".join(narrow.split())
    assert {"slower", "(regression)"} <= _words(narrow)  # the verdict stays, its words whole
    assert "left out" not in terminal(WIDE, argv)


@pytest.mark.parametrize("width", [80, 120])
def test_run_on_a_terminal_splits_no_word(
    tmp_path: Path, terminal: Callable[[int, list[str]], str], width: int
) -> None:
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps(LONG_LABELS))
    out = tmp_path / "r.json"
    narrow = terminal(width, ["run", str(profile), "--reduced", "--no-store", "--quiet", "--json", str(out)])
    # The same run at a width that wraps nothing: its words are what the narrow output may hold.
    screen = io.StringIO()
    print_summary(Console(file=screen, force_terminal=True, width=WIDE, color_system=None), load_results_file(out))
    run = load_results_file(out)
    live = " ".join(f"ok #{job.index + 1} {job.label} · {job.message_size} B" for job in run.jobs)
    count = "3/3 measured jobs ok (from 3 profile jobs × their message sizes) (not stored)"
    _assert_no_word_split(narrow, " ".join((screen.getvalue(), live, count)), width)
    assert any("[cryptography]" in line for line in narrow.splitlines())


# --- warnings: one line per kind ------------------------------------------------------


def test_repeated_warnings_are_one_line_per_kind_with_count_and_jobs() -> None:
    run = reduced_like_run()
    assert sum(len(job.warnings) for job in run.jobs) == 61  # 60 "only 3 samples" and the busy machine
    piped = printed_summary(run, terminal=False)
    warnings = [line for line in piped.splitlines() if line.startswith("warning | ")]
    assert len(warnings) == 2
    # The rare one first, whole; the one on every metric once, with its count and jobs.
    assert warnings[0].startswith("warning | Other processes used 150 % of one core") and "| #7 job |" in warnings[0]
    assert warnings[1].split(" | ")[1:3] == [
        "Only 3 samples (< 10); no 95 % confidence interval was computed (it needs at least 6)",
        "60 metrics in jobs #1-#20",
    ]
    assert piped.count("Only 3 samples") == 1
    shown = " ".join(printed_summary(run, terminal=True).split())
    assert shown.count("Only 3 samples") == 1 and "60 metrics in jobs #1-#20" in shown


def test_show_groups_the_warnings_as_run_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path, reduced_like_run())
    assert main(["show", RUN_ID, "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert out.count("Only 3 samples") == 1 and "60 metrics in jobs #1-#20" in out


# --- piped: one plain line per job and per metric ---------------------------------------


def test_piped_summary_is_one_line_per_job_and_per_metric() -> None:
    run = reduced_like_run()
    lines = printed_summary(run, terminal=False).splitlines()
    jobs = [line.split(" | ") for line in lines if line.startswith("job | ")]
    metrics = [line.split(" | ") for line in lines if line.startswith("metric | ")]
    assert len(jobs) == 20 and len(metrics) == 60
    header = next(line for line in lines if line.startswith("lines: metric | ")).split(" | ")
    assert all(len(fields) == len(header) for fields in metrics)  # every field there, "-" when empty
    assert metrics[4][:5] == ["metric", "#2", "AES-128-GCM", "1024 B", "encrypt"]
    assert metrics[4][header.index("median")] == "1 µs"
    assert "\x1b" not in "\n".join(lines)  # no colour or escape codes in a pipe


def test_piped_run_prints_a_line_per_finished_job_then_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps(LONG_LABELS))
    assert main(["run", str(profile), "--reduced", "--no-store", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    done = [line.split(" | ") for line in lines if line.startswith("ok | ")]  # as each job finishes
    assert [fields[1] for fields in done] == ["#1", "#2", "#3"] and all(len(fields) == 4 for fields in done)
    assert len([line for line in lines if line.startswith("job | ")]) == 3
    metric_lines = [line for line in lines if line.startswith("metric | ")]
    assert metric_lines and all(line.count(" | ") == 9 for line in metric_lines)
    assert lines[-1].startswith("3/3 measured jobs ok")


def test_the_split_word_check_sees_what_rich_s_folding_did() -> None:
    """The check above fails on a table drawn the old way (cells folded mid-word)."""
    from rich.table import Table

    def drawn(width: int) -> str:
        screen = io.StringIO()
        table = Table()
        for header in ("job", "verdict"):
            table.add_column(header, overflow="fold")
        table.add_row("ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM [cryptography]", "slower (regression)")
        Console(file=screen, force_terminal=True, width=width, color_system=None).print(table)
        return screen.getvalue()

    with pytest.raises(AssertionError):
        _assert_no_word_split(drawn(24), drawn(WIDE), 24)
