"""The command line: exit codes, messages, exports, history."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app import __version__
from app.cli.main import main
from tests.helpers.paths import ROOT
from tests.helpers.processes import popen

TINY = {
    "format_version": 1,
    "name": "tiny",
    "jobs": [{"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0, "tamper": 1}],
}


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
    assert families == {"aead", "key-agreement", "public-key-encryption", "hybrid", "signature", "hash", "kdf", "tls"}
    mlkem = next(item for item in items if item["id"] == "ml-kem")
    assert [v["pq_category"] for v in mlkem["variants"]] == [3, 5]
    tls = next(item for item in items if item["id"] == "tls13")
    assert tls["backends"] == ["pyopenssl"] and "X25519MLKEM768" in tls["params"][0]["choices"]


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
    code = main(["run", str(profile), "--json", str(out_json), "--csv", str(out_csv), "--store", str(store), "--quiet"])
    assert code == 0
    data = json.loads(out_json.read_text())
    assert [job["status"] for job in data["jobs"]] == ["ok"]
    assert out_csv.read_text().startswith("run_id,")
    printed = capsys.readouterr().out
    assert "1/1 measured jobs ok" in printed and "hash" in printed
    run_id = data["run"]["id"]
    assert main(["history", "--store", str(store), "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in history] == [run_id]
    assert main(["show", run_id[:15], "--store", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == data
    assert main(["show", run_id, "--store", str(store)]) == 0
    assert run_id in capsys.readouterr().out


def test_run_no_store_and_samples_override(
    tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.json"
    assert (
        main(["run", str(_write(tmp_path, TINY)), "--no-store", "--samples", "4", "--json", str(out), "--quiet"]) == 0
    )
    assert json.loads(out.read_text())["jobs"][0]["metrics"]["hash"]["n"] == 4
    assert not (isolated_home / "results.sqlite3").exists()
    assert "not stored" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"name": "x", "jobs": [{"scheme": "nope"}]}, 'jobs[0].scheme: unknown scheme (got "nope")'),
        ({"name": "x", "jobs": [{"scheme": "sha256", "samples": 0}]}, "jobs[0].samples"),
        (
            {"name": "x", "jobs": [{"scheme": "rsa-oaep", "params": {"bits": 2048}, "message_sizes": [500]}]},
            "does not fit one RSA-OAEP-2048 block",
        ),
        (
            {"name": "x", "jobs": [{"scheme": "elgamal", "params": {"bits": 256}, "message_sizes": [40]}]},
            "at most 31 bytes",
        ),
        ({"name": "x", "jobs": [{"scheme": "sha256", "message_sizes": [-1]}]}, "must not be negative"),
    ],
)
def test_bad_profiles_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: object, fragment: str
) -> None:
    path = _write(tmp_path, data)
    assert main(["run", str(path), "--no-store", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert str(path) in err and fragment in err
    assert "Traceback" not in err


LINKED = {"scheme": "x25519", "mode": "loopback", "message_sizes": [18]}


def test_a_bad_profile_gets_every_problem_named_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The window named every problem of a bad file; `run` named only the first."""
    data = {
        "name": "x",
        "jobs": [
            {"scheme": "sha256", "samples": 0},
            {"scheme": "aes-gcm"},
            {"scheme": "no-such-scheme"},
            {"scheme": "sha256", "backend": "pycryptodom"},
        ],
    }
    path = _write(tmp_path, data)
    assert main(["run", str(path), "--no-store", "--quiet"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[3] for line in lines] == ["jobs[0].samples", "jobs[2].scheme", "jobs[3].backend"]
    assert all(line.startswith(f"cryptobench: error: {path}: ") for line in lines)
    # Each job is checked as the options change it: --link gives the job the link its
    # link_emulation needs (not a problem then), --reduced does not hide a bad scheme.
    path = _write(tmp_path, {"name": "x", "jobs": [{"scheme": "nope"}, {**LINKED, "link_emulation": "stream-relay"}]})
    assert main(["run", str(path), "--no-store", "--quiet", "--reduced", "--link", "lan"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f'cryptobench: error: {path}: jobs[0].scheme: unknown scheme (got "nope"); see `cryptobench list`'
    ]
    # A wrong option is said alone, before the file is checked as it would change it.
    assert main(["run", str(path), "--no-store", "--quiet", "--samples", "0"]) == 2
    assert capsys.readouterr().err.splitlines() == ["cryptobench: error: --samples: must be 1..1000000 (got 0)"]


def test_unwritable_store_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["run", str(_write(tmp_path, TINY)), "--store", str(blocker / "s.sqlite3"), "--quiet"]) == 2
    assert "cannot open the results store" in capsys.readouterr().err


def test_export_to_missing_folder_exits_2_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
    path = tmp_path / "s.sqlite3"
    assert main(["show", "nope", "--store", str(path)]) == 2
    # The store's message as it is: no quotes around it (a KeyError's str() added them).
    assert capsys.readouterr().err == f"cryptobench: error: no run with id 'nope' in {path}\n"
    assert main(["report", "nope", "--csv", str(tmp_path / "r.csv"), "--store", str(path)]) == 2
    assert (
        capsys.readouterr().err
        == f"cryptobench: error: no run with id 'nope' in {path} (and no results file named 'nope')\n"
    )


def test_a_damaged_store_is_one_line_never_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.stores import RUN_ID, damage_jobs_table, stored_run

    path = stored_run(tmp_path / "s.sqlite3")
    damage_jobs_table(path)
    for command in (["history"], ["show", RUN_ID]):
        assert main([*command, "--store", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"cryptobench: error: {path}: cannot read ") and "malformed" in err
        assert err.count("\n") == 1, err
    assert main(["store", "--store", str(path)]) == 1  # the check names the damage and the way out
    err = capsys.readouterr().err
    assert f"{path}: cannot read the results store" in err and "--move-aside" in err


def test_installed_entry_point_runs() -> None:
    """The console script and `python -m app` are wired to the same CLI."""
    result = subprocess.run(
        [sys.executable, "-m", "app", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"cryptobench {__version__}"


# --- sessions: loopback preset, serve and run --remote ------------------------------------


def test_ecdh_vs_elgamal_preset_reduced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """E1 through the same code path as the full preset, reduced (3 samples, one warm-up
    round, key generation and tamper check once per job): the keygen rounds, warm-up rounds
    and tamper checks of the full preset were most of its 11 s of CPU."""
    out = tmp_path / "e1.json"
    assert (
        main(["run", "ecdh-vs-elgamal", "--reduced", "--no-store", "--quiet", "--per-sample", "--json", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    assert printed.count("Sample 3/3 | Comp Delay ") == 5 and printed.count("Average: Comp Delay") == 5
    jobs = json.loads(out.read_text())["jobs"]
    assert {job["mode"] for job in jobs} == {"loopback"}
    for job in jobs:
        assert job["status"] == "ok", job["error"]
        assert {"compute", "receiver", "rtt", "network", "floor_rtt"} <= set(job["metrics"])
        assert job["message_size"] == 18 and job["wire_bytes"]["frame"] > 18
    ecdh = next(job for job in jobs if job["backend"] == "tinyec")
    assert ecdh["validation"]["tamper_rejected"] == ecdh["validation"]["tamper_tried"] == 1


def _start_server(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    # Ctrl-C must stop it even when the suite runs with SIGINT ignored (`make test &`).
    server = popen(
        [sys.executable, "-m", "app", "serve", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    return server


def _port_of(server: subprocess.Popen[str]) -> tuple[int, list[str]]:
    seen: list[str] = []
    assert server.stdout is not None
    for line in server.stdout:  # blocks until the server prints; pytest-timeout bounds it
        seen.append(line)
        if line.startswith("serving on "):
            return int(line.split()[2].rsplit(":", 1)[1]), seen
    raise AssertionError("server exited before listening: " + "".join(seen))


def test_serve_and_run_remote(tmp_path: Path) -> None:
    import signal

    server = _start_server(tmp_path)
    try:
        port, lines = _port_of(server)
        assert any("created token file" in line for line in lines)
        profile = _write(tmp_path, TINY)
        out = tmp_path / "remote.json"
        code = main(["run", str(profile), "--remote", f"127.0.0.1:{port}", "--no-store", "--quiet", "--json", str(out)])
        assert code == 0
        (job,) = json.loads(out.read_text())["jobs"]
        assert job["mode"] == "remote" and job["status"] == "ok"
        assert {"compute", "rtt", "receiver", "network"} <= set(job["metrics"])
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert "finished sha256" in output
    assert "stopped after 1 job(s)" in output


def test_serve_refuses_public_bind_without_token_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--bind", "0.0.0.0", "--port", "0"]) == 2
    assert "not a loopback address: pass --token-file" in capsys.readouterr().err


def test_token_file_readable_by_others_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = tmp_path / "token"
    token.write_text("ab" * 32)
    token.chmod(0o644)
    assert main(["serve", "--port", "0", "--token-file", str(token)]) == 2
    assert "chmod 600" in capsys.readouterr().err
    profile = _write(tmp_path, TINY)
    assert main(["run", str(profile), "--remote", "127.0.0.1:9", "--token-file", str(token)]) == 2
    assert "mode 0644" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--remote", "localhost"], "expected HOST:PORT"),
        (["--remote", "localhost:99999"], "expected HOST:PORT"),
        (["--token-file", "t"], "--token-file is for --remote runs"),
        (["--remote", "127.0.0.1:9", "--token-file", "missing-token"], "token file not found"),
    ],
)
def test_remote_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    profile = _write(tmp_path, TINY)
    assert main(["run", str(profile), *args]) == 2
    assert fragment in capsys.readouterr().err


def test_mode_remote_in_a_profile_needs_a_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = {**TINY, "jobs": [{**TINY["jobs"][0], "mode": "remote"}]}  # type: ignore[index]
    assert main(["run", str(_write(tmp_path, data))]) == 2
    assert "--remote HOST:PORT" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "file not found"),
        ("{not json", "not a results JSON file (line 1"),
        ('{"a": 1}', 'no "run" object'),
        ('{"format_version": 1, "run": {"id": "x"}}', "run.started: required field is missing"),
        ('{"format_version": 99, "run": {}}', "format_version: 99 is not supported"),
    ],
)
def test_report_names_the_bad_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, expected: str
) -> None:
    source = tmp_path / "results.json"
    if content is not None:
        source.write_text(content)
    out = tmp_path / "r.md"
    assert main(["report", str(source), "--markdown", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(source) in err and expected in err
    assert not out.exists()


def test_report_needs_an_output_and_a_known_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "nope", "--store", str(tmp_path / "s.sqlite3")]) == 2
    assert "give at least one of --pdf" in capsys.readouterr().err
    assert main(["report", "nope", "--pdf", str(tmp_path / "r.pdf"), "--store", str(tmp_path / "s.sqlite3")]) == 2
    assert "no run with id 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "r.pdf").exists()


# --- output a script or a CI log reads ----------------------------------------------------

# Jobs of the quick preset whose labels are long and carry a "[backend]" that a wrap at
# 80 (or COLUMNS) columns used to cut in two ("[cryptograph" / "y]").
LONG_LABELS = {
    "format_version": 1,
    "name": "long labels",
    "jobs": [
        {"scheme": "ecies", "backend": "cryptography", "params": {"curve": "secp256k1"}, "message_sizes": [64, 1024]},
        {"scheme": "x25519", "backend": "cryptography", "mode": "loopback", "message_sizes": [18]},
        {"scheme": "hkdf", "backend": "cryptography"},
    ],
}


def _split_words(lines: list[str], labels: set[str]) -> list[str]:
    """Lines that end in the first part of a label's word or start with the rest of one."""
    words = {word for label in labels for word in label.split()}
    bad = []
    for line in lines:
        tokens = line.split()
        if not tokens:
            continue
        last, first = tokens[-1], tokens[0]
        if any(word != last and word.startswith(last) for word in words if len(last) > 1) or any(
            word != first and word.endswith(first) and first not in words for word in words if len(first) > 1
        ):
            bad.append(line)
    return bad


@pytest.mark.parametrize("columns", ["40", pytest.param(None, marks=pytest.mark.exhaustive)])
def test_piped_run_output_splits_no_word(tmp_path: Path, columns: str | None) -> None:
    """`cryptobench run ... | cat`: one unwrapped line per job in the summary, every label
    whole on every line that shows it, whatever COLUMNS says."""
    import os

    out = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE")}
    if columns:
        env["COLUMNS"] = columns
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "run",
            str(_write(tmp_path, LONG_LABELS)),
            "--reduced",
            "--no-store",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    jobs = json.loads(out.read_text())["jobs"]
    labels = {job["label"] for job in jobs}
    assert any("[cryptography]" in label and len(label) > 40 for label in labels)
    assert _split_words(lines, labels) == []
    for job in jobs:  # progress line, block header and summary line each hold it whole
        assert sum(job["label"] in line for line in lines) >= 3, job["label"]
    summary = lines[lines.index(next(line for line in lines if line.startswith("Summary"))) + 1 :]
    assert len([line for line in summary if " | " in line]) == len(jobs)
    assert "4/4 measured jobs ok (from 3 profile jobs × their message sizes)" in result.stdout


def test_split_word_detector_sees_a_wrapped_backend() -> None:
    labels = {"ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM [cryptography]"}
    assert _split_words(["ok ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM [cryptograph", "y] · 64 B"], labels)


def test_presets_count_the_unit_run_reports(capsys: pytest.CaptureFixture[str]) -> None:
    from app.core.profile.files import load_profile
    from app.core.profile.resolve import resolve_jobs

    assert main(["presets"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("quick "))
    profile = load_profile("quick")
    measured = sum(len(job.message_sizes) for job in resolve_jobs(profile, "quick", 1 << 62))
    assert f" {measured} measured jobs (from {len(profile.jobs)} profile jobs" in line


def _store_with_runs(tmp_path: Path, *ids: str) -> Path:
    from app.core.store.store import Store
    from tests.helpers import records

    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        for run_id in ids:
            store.begin_run(
                records.run(
                    run_id,
                    started="2026-11-23T19:20:00+00:00",
                    environment={"hostname": "a-rather-long-host-name.example"},
                    name="a profile with a long name",
                )
            )
    return path


def test_history_prints_run_ids_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rich.console import Console

    from app.cli.terminal.lists import print_history
    from app.core.store.store import Store

    ids = ("20261123-192233-abcdef", "20261123-192234-fedcba")
    path = _store_with_runs(tmp_path, *ids)
    assert main(["history", "--store", str(path)]) == 0  # piped: one line per run
    out = capsys.readouterr().out
    assert all(sum(run_id in line for line in out.splitlines()) == 1 for run_id in ids)
    with Store(path) as store:
        runs = store.list_runs()
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=60, color_system=None)
    print_history(terminal, runs, path)  # a narrow terminal: other columns fold, the id does not
    assert all(run_id in screen.getvalue() for run_id in ids)


@pytest.mark.parametrize("pattern", ["%", "2026112_", "20261123-%"])
def test_show_matches_id_prefixes_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str], pattern: str) -> None:
    path = _store_with_runs(tmp_path, "20261123-192233-abcdef")
    assert main(["show", pattern, "--store", str(path), "--json"]) == 2
    assert f"no run with id {pattern!r}" in capsys.readouterr().err
    assert main(["show", "20261123-1922", "--store", str(path), "--json"]) == 0


def test_report_appendix_is_optional(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "r.json"
    assert main(["run", str(_write(tmp_path, TINY)), "--no-store", "--quiet", "--json", str(results)]) == 0
    with_appendix, without = tmp_path / "with.md", tmp_path / "without.md"
    assert main(["report", str(results), "--markdown", str(with_appendix)]) == 0
    assert main(["report", str(results), "--markdown", str(without), "--no-appendix"]) == 0
    assert "Appendix: full statistics" in with_appendix.read_text()
    assert "Appendix" not in without.read_text()


def test_printed_warnings_have_no_raw_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    import dataclasses

    from app.cli.terminal.console import make_console
    from app.cli.terminal.printing import print_summary
    from app.core.results.model import RunResult
    from tests.helpers.report_runs import build_run

    run: RunResult = build_run("20261123-192233-abcdef", "2026-11-23T19:22:33+00:00")
    job = next(j for j in run.jobs if j.warnings)
    job.warnings[0] = dataclasses.replace(job.warnings[0], message="First measured sample 1.859e-05 s is 5.4×")
    print_summary(make_console(), run)
    out = capsys.readouterr().out
    assert "First measured sample 18.6 µs is 5.4×" in out and "e-05" not in out


def test_piped_list_is_one_line_per_variant(capsys: pytest.CaptureFixture[str]) -> None:
    from app.core.schemes import registry

    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    variants = sum(len(registry.describe(spec)["variants"]) for spec in registry.all_specs())
    assert len(lines) == variants and all(line.count(" | ") == 6 for line in lines)
    assert any(
        line.startswith("public-key-encryption | elgamal | ElGamal-128") and "(insecure)" in line for line in lines
    )
