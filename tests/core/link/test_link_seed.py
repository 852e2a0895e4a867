"""A run's link seed: each run draws its own losses, a recorded seed repeats them.

Loss and jitter draws used to be seeded from the job's index alone, so two runs of one
profile lost the same packets and their spread was not run-to-run spread. The runner now
draws a seed per run (or takes the profile's `link_seed`, `run --link-seed`), records it on
every linked job's link, and the link's lines draw from it and the job's index.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from app.cli.main import main
from app.core.link.packet_link import PacketPathPlan, packet_lines
from app.core.profile.edits import with_link_seed
from app.core.profile.files import parse_profile
from app.core.records.job_conditions import Link
from app.core.results.check_job_parts import check_link
from app.core.results.errors import ResultsDataError
from app.core.run.runner import Runner
from app.core.settings.profile import MAX_LINK_SEED, ProfileError

LOSSY = Link(None, 20, 0, 8000, 8000, 5.0, "packet")
RELAYED = {"scheme": "aes-gcm", "mode": "loopback", "link": {"delay_ms": 1}, "link_emulation": "stream-relay"}


def _losses(link: Link, job_index: int, packets: int = 2000) -> list[bool]:
    """Which of `packets` packets the up line loses, as the link process would draw them."""
    up, _ = packet_lines(PacketPathPlan(link, seed=link.draw_seed(job_index), counters=None))
    return [up.push(k / 1000, b"x" * 100) == "loss" for k in range(packets)]


def test_the_same_seed_loses_the_same_packets_and_another_seed_others() -> None:
    seeded = replace(LOSSY, seed=12345)
    assert _losses(seeded, 3) == _losses(seeded, 3)
    assert _losses(seeded, 3) != _losses(replace(LOSSY, seed=12346), 3)
    assert _losses(seeded, 3) != _losses(seeded, 4)  # two jobs of one run draw apart
    assert sum(_losses(seeded, 3)) > 0


def test_a_link_without_a_seed_draws_from_the_job_s_index_as_before() -> None:
    assert LOSSY.draw_seed(7) == 7
    assert 0 <= replace(LOSSY, seed=MAX_LINK_SEED).draw_seed(7) <= MAX_LINK_SEED


def test_each_run_draws_its_own_seed_and_records_it_on_every_linked_job() -> None:
    profile = parse_profile({"name": "seeded", "jobs": [RELAYED, {"scheme": "aes-gcm"}]})
    first, second = Runner(profile, cancel=threading.Event()), Runner(profile, cancel=threading.Event())
    linked, plain = first.jobs
    assert linked.link is not None and linked.link.seed == first.link_seed and plain.link is None
    assert second.jobs[0].link is not None and second.jobs[0].link.seed == second.link_seed != first.link_seed


def test_a_profile_s_seed_repeats_a_run() -> None:
    profile = with_link_seed(parse_profile({"name": "seeded", "jobs": [RELAYED]}), 42)
    runner = Runner(profile, cancel=threading.Event())
    assert runner.link_seed == 42 and runner.jobs[0].link is not None and runner.jobs[0].link.seed == 42
    assert profile.to_dict()["link_seed"] == 42  # recorded with the run's profile
    with pytest.raises(ProfileError, match=r"--link-seed: a link seed is 0\.\."):
        with_link_seed(profile, -1)


def test_the_seed_is_in_the_results_and_checked_when_read() -> None:
    data = replace(LOSSY, seed=99).to_dict()
    assert data["seed"] == 99 and Link.from_dict(data).seed == 99
    assert "seed" not in LOSSY.to_dict()  # absent when unset, as in results before it
    check_link(data, "jobs[0].link")
    with pytest.raises(ResultsDataError, match=r"jobs\[0\]\.link\.seed"):
        check_link({**data, "seed": -5}, "jobs[0].link")


def test_run_takes_a_seed_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "quick", "--link-seed", "-3", "--no-store"]) == 2
    assert "--link-seed" in capsys.readouterr().err
