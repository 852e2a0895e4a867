"""`print_fitted_table` at every width from 40 to 200 columns.

What it promises, on a table built to need every step: no line wider than the terminal
and no word cut; a column that identifies a row is never left out; a column with the same
cell on every row is said once under the table before anything is left out; too narrow
for even the key columns, each row is a block that still shows every cell; a group's
heading is said once over its rows.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from app.cli.terminal.console import escape
from app.cli.terminal.tables import Column, print_fitted_table

WIDTHS = range(40, 201, 4)
COLUMNS = (
    Column("job", key=True),
    Column("size", "right", whole=True, key=True),
    Column("mode"),
    Column("base median", "right", drop=1, whole=True),
    Column("new median", "right", drop=1, whole=True),
    Column("description", drop=2),
    Column("verdict"),
)
ROWS = [
    (
        f"ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM [cryptography] #{k}",
        f"{2**k} KiB",
        ("ops", "loopback")[k // 2],
        f"9.6{k} µs",
    )
    + (f"19.{k} µs", f"what job {k} stands for, at some length, in words that wrap")
    + (("slower (regression)", "within noise")[k % 2],)
    for k in range(4)
]


def _drawn(width: int, rows: list[tuple[str, ...]] = ROWS, **options: object) -> str:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=width, color_system=None, highlight=False)
    cells = [[escape(cell) for cell in row] for row in rows]  # cells are rich markup
    print_fitted_table(console, COLUMNS, cells, **options)  # type: ignore[arg-type]
    return screen.getvalue()


def _words(text: str) -> set[str]:
    return {word.rstrip(":;·") for word in re.findall(r"[^\s\u2500-\u257f]+", text)} - {""}


@pytest.mark.parametrize("width", WIDTHS)
def test_no_line_is_wider_than_the_terminal_and_no_word_is_cut(width: int) -> None:
    drawn = _drawn(width)
    assert all(len(line) <= width for line in drawn.splitlines()), width
    said = re.sub(r"\((the same on every row:|left out to fit) .*?\)$", "", drawn, flags=re.S | re.M)
    every_word = _words(" ".join(" ".join(row) for row in ROWS) + " " + " ".join(c.header for c in COLUMNS))
    assert _words(said) <= every_word, sorted(_words(said) - every_word)


@pytest.mark.parametrize("width", WIDTHS)
def test_what_identifies_a_row_is_never_left_out(width: int) -> None:
    flat = " ".join(_drawn(width).split())
    for row in ROWS:
        assert row[1] in flat  # the size, whole
        assert row[0].split()[-1] in flat  # the job's last word: the row's own
    left_out = re.search(r"left out to fit \d+ columns: ([^;]*);", flat)
    if left_out:
        assert not {"job", "size"} & {name.strip() for name in left_out.group(1).split(",")}


def test_a_column_the_same_on_every_row_is_said_once_before_any_is_left_out() -> None:
    rows = [(*row[:2], "ops", *row[3:]) for row in ROWS]
    flat = " ".join(_drawn(80, rows).split())
    assert "(the same on every row: mode: ops)" in flat
    assert flat.count(" ops ") == 0
    assert "left out" not in flat  # saying the mode once made the room
    flat = " ".join(_drawn(64, rows).split())
    assert "left out to fit 64 columns: base median, new median;" in flat  # a rank goes together
    assert "the same on every row" not in _drawn(400, rows) and "left out" not in _drawn(400, rows)


def test_too_narrow_for_the_key_columns_each_row_is_a_block_showing_every_cell() -> None:
    drawn = _drawn(40)
    assert "left out" not in drawn  # a block has room for every cell
    assert "│" not in drawn and "┃" not in drawn
    flat = " ".join(drawn.split())
    assert "ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM [cryptography] #0 · 1 KiB" in flat
    assert "base median: 9.60 µs; new median: 19.0 µs;" in flat
    assert not re.search(r"9\.6\d\s*\n", drawn)  # a whole cell is never parted from its unit


@pytest.mark.parametrize("width", [40, 80, 200])
def test_a_group_s_heading_is_said_once_over_its_rows(width: int) -> None:
    rows = [(f"job {k // 2}", "1 KiB", "ops", "1 µs", "2 µs", "-", "faster") for k in range(4)]
    headings = ["AES-256-GCM [cryptography] · 1 KiB", None, "ChaCha20-Poly1305 [cryptography] · 1 KiB", None]
    drawn = _drawn(width, rows, headings=[escape(h) if h else None for h in headings])
    flat = " ".join(drawn.split())
    for heading in filter(None, headings):
        assert flat.count(heading) == 1
    assert flat.index(headings[0] or "") < flat.index("job 0") < flat.index(headings[2] or "") < flat.index("job 1")


def test_a_column_that_identifies_a_row_cannot_be_left_out() -> None:
    with pytest.raises(ValueError, match="identifies a row"):
        Column("job", key=True, drop=1)
