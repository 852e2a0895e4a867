"""`run --cluster`, `--generators`, `--cluster-plain-tcp` and the profile's cluster fields:
refusals in one line before anything runs, and the run's name marked with the cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.common import EXIT_USAGE
from app.cli.main import main
from app.core.profile.edits import with_cluster
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.settings.profile import ProfileError

LOAD = {"scheme": "x25519", "mode": "load", "rates": [100], "duration_s": 0.2}


def _profile(tmp_path: Path, *jobs: dict[str, object]) -> Path:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"name": "t", "jobs": list(jobs)}))
    return path


@pytest.mark.parametrize(
    ("jobs", "args", "message"),
    [
        (
            [LOAD],
            ["--generators", "2"],
            "--generators: is for generators on a Dask cluster: give --cluster ADDRESS too",
        ),
        ([LOAD], ["--cluster-plain-tcp"], "--cluster-plain-tcp: is for generators on a Dask cluster"),
        ([LOAD], ["--cluster", "127.0.0.1:8786"], "--cluster: a Dask scheduler address, tcp://HOST:PORT or tls://"),
        ([LOAD], ["--cluster", "tcp://user@h:8786"], "with a port of 1 to 65535 (got 'tcp://user@h:8786')"),
        ([LOAD], ["--cluster", "tcp://h:8786", "--generators", "65"], "--generators: must be 1..64 (got 65)"),
        ([{"scheme": "sha256"}], ["--cluster", "tcp://h:8786"], "--cluster: the profile has no load job to place"),
        (
            [{**LOAD, "rates": [3_000_000]}],
            ["--cluster", "tcp://h:8786", "--generators", "2"],
            "at most 2,000,000 requests per second (1,000,000 per generator) (got 3e+06)",
        ),
    ],
)
def test_cluster_refusals_exit_2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: list[dict[str, object]], args: list[str], message: str
) -> None:
    assert main(["run", str(_profile(tmp_path, *jobs)), "--no-store", *args]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_remote_keeps_load_jobs_and_refuses_their_links(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.core.profile.edits import with_mode

    profile = parse_profile({"name": "t", "jobs": [{"scheme": "sha256", "mode": "loopback"}, LOAD]})
    modes = [job.mode for job in with_mode(profile, "remote", "--remote", "h:1").jobs]
    assert modes == ["remote", "load"]  # the load job's server runs where serve runs
    linked = parse_profile({"name": "t", "jobs": [{"scheme": "sha256"}, {**LOAD, "link": "lte"}]})
    with pytest.raises(ProfileError, match="job 2 is a load job over an emulated link: against a remote server"):
        with_mode(linked, "remote", "--remote", "h:1")


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({**LOAD, "generators": 2}, "generators is for generators on a Dask cluster's workers: give cluster too"),
        ({**LOAD, "cluster_plain_tcp": True}, "cluster_plain_tcp is for generators on a Dask cluster"),
        ({**LOAD, "cluster": "tcp://h:1", "link": "lte"}, "an emulated link runs on this machine only"),
        ({"scheme": "x25519", "mode": "loopback", "cluster": "tcp://h:1"}, 'applies to "mode": "load" only'),
        ({**LOAD, "cluster": "udp://h:1"}, "a Dask scheduler address"),
    ],
)
def test_profile_cluster_fields_are_checked(job: dict[str, object], message: str) -> None:
    with pytest.raises(ProfileError) as caught:
        resolve_jobs(parse_profile({"name": "t", "jobs": [job]}))
    assert message in str(caught.value)


def test_cluster_marks_the_run_and_places_only_load_jobs() -> None:
    profile = parse_profile({"name": "mixed", "jobs": [{"scheme": "sha256"}, LOAD]})
    placed = with_cluster(profile, " tcp://10.0.0.5:8786 ", 3)
    assert placed.name == "mixed (--cluster tcp://10.0.0.5:8786 × 3)"
    assert placed.overrides == {"--cluster": "tcp://10.0.0.5:8786 × 3"}
    operations, load = resolve_jobs(placed)
    assert operations.load is None
    assert load.load is not None and (load.load.cluster, load.load.generators) == ("tcp://10.0.0.5:8786", 3)
    assert not load.load.cluster_plain_tcp


def test_a_cluster_job_without_dask_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.run import topologies
    from app.core.run.runner import Runner
    from app.core.vocab import JobStatus

    missing = "load from many machines places generators with Dask distributed, which is not installed: pip install"
    monkeypatch.setattr(topologies, "cluster_missing", lambda: missing + " 'cryptobench[cluster]'")
    profile = parse_profile({"name": "t", "jobs": [{**LOAD, "cluster": "tcp://127.0.0.1:1"}]})
    (job,) = Runner(profile).run().jobs
    assert job.status == JobStatus.FAILED and missing in (job.error or "")
