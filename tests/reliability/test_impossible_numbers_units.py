"""A metric in any unit but seconds is refused, so the duration checks reach every metric.

Before: the duration bounds and the no-negative-time rule ran only when `unit` was "s";
now every reader (the checker, `report`/`compare`/`import`, a store row) refuses another
unit naming the field, and every producer in app/ summarises its metrics in seconds.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main as cli_main
from app.core.results.check import check_results
from app.core.results.errors import ResultsDataError
from app.core.results.model import load_results_file
from app.core.statistics import stats
from app.core.store.store import Store
from tests.helpers.extreme_runs import OTHER_ID, RUN_ID, hand_document, write_document

# --- a metric in any unit but seconds: refused, so the duration checks reach every metric -------------
# Before: the duration bounds and the no-negative-time rule ran only when `unit` was "s";
# a file saying "ms" (or "x") brought back negative times, 5e-324 s and a gate passing on
# "3.42e-318× faster", while every face showed the values as seconds anyway.


@pytest.mark.parametrize(
    ("unit", "shown"),
    [
        ("ms", '"ms"'),
        ("x", '"x"'),
        ("", '""'),
        ("S", '"S"'),
        ("µs", '"\\u00b5s"'),
        ("s ", '"s "'),
        ("B/s", '"B/s"'),
        (1, "1"),
    ],
    ids=["ms", "x", "empty", "capital", "micro", "trailing-space", "rate", "number"],
)
def test_a_metric_unit_the_app_never_writes_is_refused_naming_the_field(unit: Any, shown: str) -> None:
    data = hand_document()
    data["jobs"][1]["metrics"]["encrypt"]["unit"] = unit
    with pytest.raises(ResultsDataError) as refused:
        check_results(data)
    expected = f'expected "s", got {shown}' if isinstance(unit, str) else f"expected a string, got {shown}"
    assert str(refused.value) == f"jobs[1].metrics.encrypt.unit: {expected}"


@pytest.mark.parametrize("missing", [True, False], ids=["missing", "null"])
def test_a_metric_without_a_unit_is_refused(missing: bool) -> None:
    data = hand_document()
    metric = data["jobs"][0]["metrics"]["keygen"]
    if missing:
        del metric["unit"]
    else:
        metric["unit"] = None
    with pytest.raises(ResultsDataError, match=r"^jobs\[0\]\.metrics\.keygen\.unit: "):
        check_results(data)


@pytest.mark.parametrize(
    ("unit", "samples"),
    [("ms", [-5e-5] * 8), ("x", [5e-324] * 8), ("x", [1e18] * 8), ("ms", [0.0] * 8), ("us", [1e-300] * 8)],
    ids=["negative-ms", "subnormal-x", "1e18-x", "zero-ms", "tiny-us"],
)
def test_impossible_times_under_another_unit_are_refused_on_the_unit(unit: str, samples: list[float]) -> None:
    """The outside round's cases: with the unit fixed to seconds, the duration checks apply."""
    data = hand_document(samples=samples, job=0)
    for metric in data["jobs"][0]["metrics"].values():
        metric["unit"] = unit
    with pytest.raises(ResultsDataError) as refused:
        check_results(data)
    assert str(refused.value).startswith(f'jobs[0].metrics.keygen.unit: expected "s", got "{unit}"')
    for metric in data["jobs"][0]["metrics"].values():
        metric["unit"] = "s"
    with pytest.raises(ResultsDataError, match=r"^jobs\[0\]\.metrics\.keygen\.min: "):
        check_results(data)  # and in seconds, the times themselves are refused


@pytest.mark.parametrize("command", ["report", "compare", "import"])
def test_every_reader_of_a_file_refuses_another_unit_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    data = hand_document()
    for metric in data["jobs"][0]["metrics"].values():
        metric["unit"] = "ms"
    bad = write_document(tmp_path, "ms.json", data)
    good = write_document(tmp_path, "good.json", hand_document(OTHER_ID))
    store = ["--store", str(tmp_path / "s.db")]
    argv = {
        "report": ["report", str(bad), "--markdown", str(tmp_path / "r.md"), *store],
        "compare": [
            "compare",
            str(good),
            str(bad),
            "--fail-on-regression",
            "--json",
            *store,
        ],
        "import": ["import", str(bad), *store],
    }[command]
    code = cli_main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    assert 'jobs[0].metrics.keygen.unit: expected "s", got "ms"' in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "regression" not in out and "faster" not in out  # no verdict drawn from the file
    assert not (tmp_path / "r.md").exists()


def test_a_store_row_with_another_unit_reads_as_damaged(tmp_path: Path) -> None:
    store_path = tmp_path / "s.db"
    with Store(store_path) as store:
        store.add_run(load_results_file(write_document(tmp_path, "ok.json", hand_document())))
    with sqlite3.connect(store_path) as db:
        job_id, text = db.execute("SELECT id, result FROM jobs ORDER BY idx LIMIT 1").fetchone()
        row = json.loads(text)
        next(iter(row["metrics"].values()))["unit"] = "ms"
        db.execute("UPDATE jobs SET result = ? WHERE id = ?", (json.dumps(row), job_id))
    with Store(store_path) as store:
        run = store.load_run(RUN_ID)
        damaged = store.damaged_rows()
    assert run.jobs[0].status == "failed"
    assert 'unit: expected "s", got "ms"' in (run.jobs[0].error or "")
    assert len(damaged) == 1


def test_every_producer_summarises_its_metrics_in_seconds() -> None:
    """The checker's one unit is the producers' own: every `summarize(...)` call in app/
    gives no unit (the default) or the literal "s", and the default is "s"."""
    import ast
    import inspect

    from app.core.results.check_metrics import METRIC_UNIT

    assert inspect.signature(stats.summarize).parameters["unit"].default == METRIC_UNIT
    root = Path(__file__).resolve().parents[2] / "app"
    calls = 0
    for source in root.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name != "summarize" or not node.args:
                continue  # SizeMeasured.summarize() takes no samples: it calls stats.summarize itself
            calls += 1
            unit = (
                node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "unit"), None)
            )
            where = f"{source.relative_to(root.parent)}:{node.lineno}"
            assert unit is None or (isinstance(unit, ast.Constant) and unit.value == METRIC_UNIT), where
    assert calls >= 4  # runner, events (sessions, operations), load job, the E2 experiment
