"""What the command line prints on a terminal from 40 to 200 columns, and in a pipe.

Every command that prints a table is run with a terminal console of the width under test
and of a width that needs no wrap; each word of the narrow output must be a whole word
of the wide one ("slowe r (regr essio n)", "[cryptograph y]" and "+00:0 / 0" were not),
and no line may be wider than the terminal (which would cut it wherever its width ran out).
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
#: The widths every table is drawn at: 40 to 200 columns, the common ones among them.
WIDTHS = [40, 48, 56, 64, 72, 80, 90, 100, 120, 140, 160, 200]
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
    """The words of `text`, less the punctuation a narrow layout adds after one ("median:",
    "µs;" in a row drawn as a block, "·" between its cells): a word cut short stays cut."""
    return {word.rstrip(":;·") for word in _WORD.findall(text)} - {""}


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
    # Three runs a side: one a side has no verdict (docs/comparing.md), and the table's
    # verdict column is what must stay whole.
    base = comparisons.write_side(Path("."), comparisons.base_run(), "base")
    slower = comparisons.write_side(Path("."), comparisons.scaled(comparisons.base_run(), 1.3), "slower")
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
    # Wider than the terminal only where one word is (an address, kept whole to copy).
    wider = [line for line in narrow.splitlines() if len(line) > width and len(line.split()) > 1]
    assert not wider, wider
    # The notes under a table that said columns once or left them out are not in the wide
    # output: checked apart.
    narrow = re.sub(r"\(left out to fit .*?in\s+a\s+pipe\)", "", narrow, flags=re.S)
    narrow = re.sub(r"\(the same on every row: .*?\)$", "", narrow, flags=re.S | re.M)
    split = sorted(_words(narrow) - _words(wide))
    assert not split, split
    assert "…" not in narrow  # nothing cut short either


@pytest.mark.parametrize("command", ["show", "history", "compare", "list", "links", "system", "presets"])
def test_no_table_splits_a_word_from_40_to_200_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: Callable[[int, list[str]], str], command: str
) -> None:
    argv = _commands(tmp_path, monkeypatch)[command]
    wide = terminal(WIDE, argv)
    for width in WIDTHS:
        narrow = terminal(width, argv)
        try:
            _assert_no_word_split(narrow, wide, width)
        except AssertionError as exc:
            raise AssertionError(f"{command} at {width} columns: {exc}") from None
        if width >= 80:
            assert "─" in narrow or "━" in narrow, (command, width)  # a table was drawn


def test_a_table_too_wide_leaves_columns_out_and_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: Callable[[int, list[str]], str]
) -> None:
    argv = _commands(tmp_path, monkeypatch)["history"]
    narrow = " ".join(terminal(80, argv).split())
    assert "left out to fit 80 columns: machine" in narrow
    assert RUN_ID in narrow  # what identifies a row stays, whole
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


# --- compare: what identifies a row stays, a note is said once ---------------------------


def _reduced_pair(tmp_path: Path) -> list[str]:
    """`compare BASE NEW` of two reduced runs (three jobs, four metrics), as files."""
    base = comparisons.base_run()
    base.profile = {**base.profile, "name": "quick (reduced)", "reduced": True}
    new = comparisons.scaled(base, 1.3)
    return [
        "compare",
        str(comparisons.write(tmp_path / "base.json", base)),
        str(comparisons.write(tmp_path / "new.json", new)),
    ]


REDUCED_NOTE = "the baseline's run is reduced (a smoke test, not for comparison)"


@pytest.mark.parametrize("width", [80, 120])
def test_compare_of_two_reduced_runs_says_the_note_once_and_keeps_every_row_s_job(
    tmp_path: Path, terminal: Callable[[int, list[str]], str], width: int
) -> None:
    """At 80 columns it dropped the sizes and both medians and repeated a nine-line verdict
    on every row (about 700 lines for two reduced runs of `quick`)."""
    shown = terminal(width, _reduced_pair(tmp_path))
    lines = shown.splitlines()
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    flat = " ".join(shown.split())
    assert flat.count("is reduced (a smoke test") == 1 and f"[1] {REDUCED_NOTE} (every metric)" in flat
    # Each job (its label, size and mode: what tells its rows apart) once, over its metrics.
    for job in ("AES-128-GCM · 1 KiB · operations", "AES-128-GCM · 64 KiB · operations", "Ed25519 · 64 B · operations"):
        assert flat.count(job) == 1, job
    metric_rows = [line.split() for line in lines if line.split()[:1] in (["encrypt"], ["decrypt"], ["sign"])]
    assert len(metric_rows) == 4
    # Both medians are kept, and each row's verdict points at the note.
    assert [row[1:5] for row in metric_rows][0] == ["10", "µs", "13", "µs"]
    assert all(" ".join(row).endswith("no verdict [1]") for row in metric_rows)
    assert "left out" not in flat
    assert len(lines) < 25


def test_compare_in_a_pipe_keeps_each_line_whole_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_reduced_pair(tmp_path)) == 0
    lines = capsys.readouterr().out.splitlines()
    header = "job | size | mode | metric | base median | new median | ratio new/base | 95 % interval | verdict"
    rows = lines[lines.index(header) + 1 : lines.index(header) + 5]
    assert rows[0] == f"AES-128-GCM | 1 KiB | ops | encrypt | 10 µs | 13 µs | - | - | no verdict: {REDUCED_NOTE}"
    assert all(row.count(" | ") == 8 for row in rows)


def test_load_jobs_steps_and_generators_split_no_word_from_40_to_200_columns() -> None:
    """The steps and generators tables cropped their numbers with "…" below about 70 columns."""
    from tests.helpers.loads import cluster_load, load_job, load_run

    cluster = cluster_load(rates=(400, 800, 1600), generators=3, late=(2, 800))
    for run in (load_run(), load_run([load_job(0, "X25519 [cryptography]", cluster)])):
        wide = printed_summary(run, terminal=True, width=WIDE)
        for width in WIDTHS:
            narrow = printed_summary(run, terminal=True, width=width)
            try:
                _assert_no_word_split(narrow, wide, width)
            except AssertionError as exc:
                raise AssertionError(f"{run.name} at {width} columns: {exc}") from None


def _exchange_run() -> RunResult:
    from tests.helpers import records

    def kem(index: int, scheme: str, label: str, family: str, exchange: str | None) -> object:
        return records.job(
            "exch",
            index,
            1024,
            {"encrypt": [2e-6] * 12, "decrypt": [2.2e-6] * 12},
            scheme=scheme,
            params={},
            label=label,
            family=family,
            exchange=exchange,
        )

    x25519 = "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]"
    return records.run(
        "exch",
        [
            kem(0, "x25519", f"{x25519} (session)", "key-agreement", "session"),
            kem(1, "x25519", f"{x25519} (per-message)", "key-agreement", "per-message"),
            kem(2, "ml-kem", "ML-KEM-768 + AES-256-GCM [cryptography]", "hybrid", None),  # recorded before the field
            records.job("exch", 3, 1024, {"encrypt": [1e-6] * 12}),
        ],
    )


@pytest.mark.parametrize("on_terminal", [True, False])
def test_show_says_each_job_s_exchange_pattern(on_terminal: bool) -> None:
    text = printed_summary(_exchange_run(), terminal=on_terminal, width=80)
    assert text.count("exchange session") == 1 and text.count("exchange per-message") == 2  # in each job's header
    summary = text[text.index("Summary (median per operation)") :]
    # The ML-KEM result, recorded before jobs named it, is read as what it measured: per message.
    assert summary.count("(session)") == 1 and summary.count("(per-message)") == 2
    assert "AES-128-GCM" in summary and "AES-128-GCM (session)" not in summary  # no key to exchange
    if on_terminal:
        assert all(len(line) <= 80 for line in text.splitlines())
