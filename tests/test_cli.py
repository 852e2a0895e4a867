"""The command line: exit codes, messages, exports, history."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app import __version__
from app.cli import main

TINY = {"format_version": 1, "name": "tiny", "jobs": [
    {"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0, "tamper": 1}]}


def _write(tmp_path: Path, data: object, name: str = "p.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"cryptobench {__version__}"


def test_list_json_has_every_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    families = {item["family"] for item in items}
    assert families == {"aead", "key-agreement", "public-key-encryption", "hybrid", "signature", "hash", "kdf"}
    mlkem = next(item for item in items if item["id"] == "ml-kem")
    assert [v["pq_category"] for v in mlkem["variants"]] == [3, 5]


def test_list_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "ElGamal-128" in out and "insecure" in out and "ML-DSA-65" in out


def test_presets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["presets"]) == 0
    assert "quick" in capsys.readouterr().out


def test_run_exports_and_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = _write(tmp_path, TINY)
    out_json, out_csv = tmp_path / "out.json", tmp_path / "out.csv"
    store = tmp_path / "store.sqlite3"
    code = main(["run", str(profile), "--json", str(out_json), "--csv", str(out_csv), "--store", str(store),
                 "--quiet"])
    assert code == 0
    data = json.loads(out_json.read_text())
    assert [job["status"] for job in data["jobs"]] == ["ok"]
    assert out_csv.read_text().startswith("run_id,")
    printed = capsys.readouterr().out
    assert "1/1 jobs ok" in printed and "hash" in printed
    run_id = data["run"]["id"]
    assert main(["history", "--store", str(store), "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in history] == [run_id]
    assert main(["show", run_id[:15], "--store", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == data
    assert main(["show", run_id, "--store", str(store)]) == 0
    assert run_id in capsys.readouterr().out


def test_run_no_store_and_samples_override(tmp_path: Path, isolated_home: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o.json"
    assert main(["run", str(_write(tmp_path, TINY)), "--no-store", "--samples", "4", "--json", str(out),
                 "--quiet"]) == 0
    assert json.loads(out.read_text())["jobs"][0]["metrics"]["hash"]["n"] == 4
    assert not (isolated_home / "results.sqlite3").exists()
    assert "not stored" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"name": "x", "jobs": [{"scheme": "nope"}]}, 'jobs[0].scheme: unknown scheme (got "nope")'),
        ({"name": "x", "jobs": [{"scheme": "sha256", "samples": 0}]}, "jobs[0].samples"),
        ({"name": "x", "jobs": [{"scheme": "rsa-oaep", "params": {"bits": 2048}, "message_sizes": [500]}]},
         "does not fit one RSA-OAEP-2048 block"),
        ({"name": "x", "jobs": [{"scheme": "elgamal", "params": {"bits": 256}, "message_sizes": [40]}]},
         "at most 31 bytes"),
        ({"name": "x", "jobs": [{"scheme": "sha256", "message_sizes": [-1]}]}, "must not be negative"),
    ],
)
def test_bad_profiles_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           data: object, fragment: str) -> None:
    path = _write(tmp_path, data)
    assert main(["run", str(path), "--no-store", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert str(path) in err and fragment in err
    assert "Traceback" not in err


def test_unwritable_store_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["run", str(_write(tmp_path, TINY)), "--store", str(blocker / "s.sqlite3"), "--quiet"]) == 2
    assert "cannot open the results store" in capsys.readouterr().err


def test_export_to_missing_folder_exits_2_before_running(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "o.json"
    assert main(["run", str(_write(tmp_path, TINY)), "--no-store", "--json", str(target), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2


def test_unknown_run_id_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "nope", "--store", str(tmp_path / "s.sqlite3")]) == 2
    assert "no run with id 'nope'" in capsys.readouterr().err


def test_installed_entry_point_runs() -> None:
    """The console script and `python -m app` are wired to the same CLI."""
    result = subprocess.run([sys.executable, "-m", "app", "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout.strip() == f"cryptobench {__version__}"
