"""Which of `run`'s options set each field of a job: every option, and --reduced for the rest."""

from __future__ import annotations

from app.core.profile.edits import (
    blame_options,
    reduced,
    with_cluster,
    with_mode,
    with_placement,
    with_samples,
)
from app.core.profile.files import parse_profile
from app.core.settings.profile import ProfileError
from app.core.vocab import Mode

LOAD = {"scheme": "x25519", "mode": "load", "clients": 2, "rates": [100], "duration_s": 1}
OPS = {"scheme": "aes-gcm", "message_sizes": [64, 1 << 20], "samples": 50}


def test_each_option_claims_its_fields_and_reduced_the_rest() -> None:
    from app.core.profile.edits import set_by_options

    written = parse_profile({"name": "p", "jobs": [OPS, LOAD]})
    edited = with_samples(reduced(written), 7)
    assert set_by_options(written, edited, 0) == {
        "samples": "--samples",
        "message_sizes": "--reduced",
        "warmup": "--reduced",
        "keygen_samples": "--reduced",
        "tamper": "--reduced",
    }
    edited = with_mode(with_cluster(written, "tcp://127.0.0.1:8786", 2), Mode.REMOTE, "--remote", "h:1")
    assert set_by_options(written, edited, 0) == {"mode": "--remote"}
    assert set_by_options(written, edited, 1) == {"cluster": "--cluster", "generators": "--generators"}
    assert set_by_options(written, edited, 5) == {}


def test_an_error_about_the_file_s_own_value_is_left_as_it_was() -> None:
    written = parse_profile({"name": "p", "jobs": [OPS]})
    edited = with_placement(written, "free")
    exc = ProfileError("unknown scheme", source="p.json", field="jobs[0].scheme")
    assert blame_options(exc, written, edited) is exc
    other = ProfileError("no such field", source="p.json", field="name")
    assert blame_options(other, written, edited) is other


def test_a_whole_job_refused_after_reduced_says_so() -> None:
    written = parse_profile({"name": "p", "jobs": [OPS]})
    exc = ProfileError("repeats jobs[0]", source="p.json", field="jobs[0]")
    assert str(blame_options(exc, written, reduced(written))) == (
        "p.json: jobs[0]: repeats jobs[0] (as --reduced shortens the job)"
    )
