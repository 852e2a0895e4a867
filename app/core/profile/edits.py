"""A profile changed from the command line: every job's mode, samples, link or placement,
and the reduced form that runs any profile end to end in seconds (`--reduced`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from app.core.load.reduce import reduced_load
from app.core.profile.files import first_error
from app.core.settings import links as link_presets
from app.core.settings.links import LinkPresetError, LinkValue
from app.core.settings.load import IGNORED_BY_LOAD, MAX_GENERATORS, cluster_address
from app.core.settings.profile import (
    MAX_LABEL_CHARS,
    MAX_LINK_SEED,
    MAX_OVERRIDE_CHARS,
    MAX_SAMPLES,
    Profile,
    ProfileError,
)
from app.core.vocab import CongestionControl, LinkEmulationChoice, Mode, PlacementPolicy, TcpConnection

#: Why a load job over an emulated link cannot run against `serve` (the CLI's and the runner's words).
REMOTE_LOAD_LINK = (
    "job {job} is a load job over an emulated link: against a remote server its requests cross the real "
    "network, and a link runs on this machine only; remove its link"
)


def with_mode(profile: Profile, mode: str, option: str = "--mode", shown: str | None = None) -> Profile:
    """The same profile with every job in `mode` (CLI --remote runs every job against the
    server: `option` "--remote", `shown` its HOST:PORT; a load job stays one, its server there)."""
    try:
        member = Mode(mode)
    except ValueError:
        raise ProfileError(f"unknown mode {mode!r} (modes: {', '.join(Mode)})", field="mode") from None
    # A load job stays a load job: under --remote its server runs where `serve` runs.
    keep = (Mode.LOAD,) if member == Mode.REMOTE else ()
    linked = [k for k, job in enumerate(profile.jobs) if job.mode in keep and job.link is not None]
    if linked:
        raise ProfileError(REMOTE_LOAD_LINK.format(job=linked[0] + 1), field=option)
    return overridden(
        profile,
        option,
        member.value if shown is None else shown,
        {"jobs": [job if job.mode in keep else job.model_copy(update={"mode": member}) for job in profile.jobs]},
    )


def overridden(profile: Profile, option: str, value: str, update: dict[str, Any]) -> Profile:
    """`profile` with `update` applied and the command-line option that asked for it
    recorded: in `overrides`, and in the name ("quick (--samples 3)"), so the run is never
    listed, compared or reported as the preset it started from."""
    overrides = dict(profile.overrides or {})
    overrides[option] = value[:MAX_OVERRIDE_CHARS]
    shown = value if len(value) <= _SHOWN_VALUE_CHARS else value[: _SHOWN_VALUE_CHARS - 1] + "…"
    name, mark = profile.name, f" ({option} {shown})"
    if (profile.reduced or profile.overrides) and name.endswith(")"):  # one bracket of marks: "(reduced; --samples 3)"
        name, mark = name[:-1], f"; {option} {shown})"
    if len(name) + len(mark) > MAX_LABEL_CHARS:  # the record's bound: keep the mark, cut the name
        name = name[: MAX_LABEL_CHARS - len(mark) - 1] + "…"
    return profile.model_copy(update={**update, "overrides": overrides, "name": name + mark})


#: An override's value in a run's name (a --link JSON object is cut, its whole text recorded).
_SHOWN_VALUE_CHARS = 32


def with_samples(profile: Profile, samples: int) -> Profile:
    """The same profile with every job's sample count replaced (CLI --samples). Load jobs
    run no samples: they keep theirs, and a profile of load jobs only is refused."""
    if not 1 <= samples <= MAX_SAMPLES:  # the upper bound too: model_copy skips JobSpec's checks
        raise ProfileError(f"must be 1..{MAX_SAMPLES} (got {samples})", field="--samples")
    if all(job.mode == Mode.LOAD for job in profile.jobs):
        raise ProfileError(
            f"every job of the profile is a load job, and {IGNORED_BY_LOAD['samples']} (set duration_s in the profile)",
            field="--samples",
        )
    return overridden(
        profile,
        "--samples",
        str(samples),
        {
            "jobs": [
                job if job.mode == Mode.LOAD else job.model_copy(update={"samples": samples}) for job in profile.jobs
            ]
        },
    )


#: A reduced run keeps messages up to this size (and at most REDUCED_SIZES of them per job).
REDUCED_MAX_SIZE = 64 * 1024
REDUCED_SIZES = 3
#: A reduced sweep keeps this many links (the cheapest), each with at most REDUCED_LINK_SAMPLES
#: samples: every round trip over a link waits out its delay (0.6 s over a geostationary
#: satellite), so the preset sweeping ten schemes over every link would take minutes.
REDUCED_LINKS = 2
REDUCED_LINK_SAMPLES = 2


def reduced(
    profile: Profile,
    max_size: int = REDUCED_MAX_SIZE,
    samples: int = 3,
    size_count: int = REDUCED_SIZES,
    warmup: int = 1,
) -> Profile:
    """The same jobs on a tiny budget: a few samples, at most `warmup` rounds of warm-up, no pause, messages up to
    `max_size` (the smallest, middle and largest of those, or `size_count` spread from the
    smallest to the largest; the smallest size when all are larger). Runs every preset end
    to end through the same code in seconds, for CI and for `cryptobench run NAME
    --reduced`; its numbers are not for comparison, and the profile's name says so.

    A job over an emulated link keeps its link's numbers (a reduced run checks the same
    path) but at most REDUCED_LINK_SAMPLES samples, and a sweep keeps its REDUCED_LINKS
    cheapest links in their order (`presets.round_trip_ms`: the first and last of a sweep
    ordered from LAN to satellite would spend most of the run waiting on the satellite)."""
    jobs = []
    for job in profile.jobs:
        sizes = job.message_sizes
        if sizes is not None:
            kept = sorted(size for size in sizes if size <= max_size) or [min(sizes)]
            if len(kept) > size_count:  # spread from the smallest to the largest (the middle: len // 2)
                picks = [min(len(kept) - 1, i * len(kept) // max(1, size_count - 1)) for i in range(size_count)]
                kept = [kept[i] for i in picks]
            sizes = kept
        linked = job.link is not None or job.links is not None
        rounds = {
            "samples": min(job.samples, samples, REDUCED_LINK_SAMPLES if linked else samples),
            "warmup": min(job.warmup, warmup),
            "keygen_samples": min(job.keygen_samples, 1),
            "pause_ms": 0.0,
        }
        if job.mode == Mode.LOAD:  # no sample rounds to shorten (and set, they would be refused)
            rounds = {}
        jobs.append(
            job.model_copy(
                update={
                    "message_sizes": sizes,
                    **rounds,
                    "tamper": min(job.tamper, 1),
                    "links": _cheapest_links(job.links),
                    **reduced_load(job, job.mode == Mode.LOAD),
                }
            )
        )  # short steps at two low rates
    return profile.model_copy(update={"name": f"{profile.name} (reduced)", "jobs": jobs, "reduced": True})


def _cheapest_links(links: list[LinkValue] | None) -> list[LinkValue] | None:
    """The REDUCED_LINKS links of a sweep that cost least per round trip, in their order.
    A link that cannot be resolved (an unknown preset) counts as free, so it stays and
    `resolve_jobs` refuses it as it would the full profile."""
    if links is None or len(links) <= REDUCED_LINKS:
        return links

    def cost(spec: LinkValue) -> float:
        try:
            return link_presets.round_trip_ms(link_presets.resolve_link(spec))
        except LinkPresetError:
            return -1.0

    ranked = sorted(range(len(links)), key=lambda k: cost(links[k]))[:REDUCED_LINKS]
    return [links[k] for k in sorted(ranked)]


class _LinkOption(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    link: LinkValue


def with_link(profile: Profile, text: str) -> Profile:
    """The same profile with every loopback job over one link (CLI --link NAME|JSON): a
    preset's name, or a JSON object as in a profile. The link is checked with the jobs
    (`resolve_jobs`); a profile without a loopback job is refused here."""
    value: Any = text
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ProfileError(f"not a link preset's name or a JSON object: {exc}", field="--link") from None
    try:
        link = _LinkOption.model_validate({"link": value}).link
    except ValidationError as exc:
        error = first_error(exc, None, value)
        raise ProfileError(error.detail, field="--" + (error.field or "link")) from None
    if isinstance(link, str) and link not in link_presets.link_presets():
        raise ProfileError(link_presets.unknown_preset_message(link), field="--link")
    if not any(job.mode == Mode.LOOPBACK for job in profile.jobs):
        raise ProfileError("the profile has no loopback job to run over a link", field="--link")
    return overridden(
        profile,
        "--link",
        text,
        {
            "jobs": [
                job.model_copy(update={"link": link, "links": None}) if job.mode == Mode.LOOPBACK else job
                for job in profile.jobs
            ]
        },
    )


def with_placement(profile: Profile, text: str) -> Profile:
    """The same profile with every job's CPU placement set to one policy (CLI --placement)."""
    try:
        policy = PlacementPolicy(text)
    except ValueError:
        raise ProfileError(
            f"not a placement (got {json.dumps(text)}; one of {', '.join(p.value for p in PlacementPolicy)})",
            field="--placement",
        ) from None
    return overridden(
        profile,
        "--placement",
        policy.value,
        {"jobs": [job.model_copy(update={"placement": policy}) for job in profile.jobs]},
    )


def with_link_emulation(profile: Profile, text: str) -> Profile:
    """The same profile with every linked job's emulation set (CLI --link-emulation); jobs
    without a link are left alone. The choice is checked with the jobs (`resolve_jobs`)."""
    try:
        choice = LinkEmulationChoice(text)
    except ValueError:
        raise ProfileError(
            f"not a link emulation (got {json.dumps(text)}; one of {', '.join(c.value for c in LinkEmulationChoice)})",
            field="--link-emulation",
        ) from None
    return _on_linked_jobs(profile, {"link_emulation": choice}, "--link-emulation", "to emulate", choice.value)


def _on_linked_jobs(profile: Profile, update: dict[str, object], option: str, purpose: str, value: str) -> Profile:
    """The profile with `update` applied to every job that has a link (refused without one)."""
    if not any(job.link is not None or job.links is not None for job in profile.jobs):
        raise ProfileError(f"the profile has no job with a link {purpose}", field=option)
    return overridden(
        profile,
        option,
        value,
        {
            "jobs": [
                job.model_copy(update=update) if job.link is not None or job.links is not None else job
                for job in profile.jobs
            ]
        },
    )


def with_link_seed(profile: Profile, seed: int) -> Profile:
    """The same profile with its links' draws seeded (CLI --link-seed): a repeat of a run whose
    jobs recorded this seed, loss for loss. Not an override: what is measured is the same
    profile; the seed is recorded with it."""
    if not 0 <= seed <= MAX_LINK_SEED:  # model_copy skips Profile's checks
        raise ProfileError(f"a link seed is 0..{MAX_LINK_SEED} (got {seed})", field="--link-seed")
    return profile.model_copy(update={"link_seed": seed})


def with_tcp_connection(profile: Profile, text: str) -> Profile:
    """The same profile with every linked job's TCP connection set (CLI --tcp-connection):
    "fresh" (a new connection per timed message) or "warm"; jobs without a link are left
    alone. The packet path is checked with the jobs (`resolve_jobs`)."""
    try:
        connection = TcpConnection(text)
    except ValueError:
        raise ProfileError(
            f"not a TCP connection choice (got {json.dumps(text)}; one of {', '.join(c.value for c in TcpConnection)})",
            field="--tcp-connection",
        ) from None
    return _on_linked_jobs(
        profile, {"tcp_connection": connection}, "--tcp-connection", "to send over", connection.value
    )


def with_congestion_control(profile: Profile, text: str) -> Profile:
    """The same profile with every linked job's congestion control set (CLI
    --tcp-congestion-control); the packet path and the kernel's offer are checked with the
    jobs (`resolve_jobs`)."""
    try:
        control = CongestionControl(text)
    except ValueError:
        raise ProfileError(
            f"not a congestion control (got {json.dumps(text)}; one of {', '.join(c.value for c in CongestionControl)})",
            field="--tcp-congestion-control",
        ) from None
    return _on_linked_jobs(
        profile, {"tcp_congestion_control": control}, "--tcp-congestion-control", "to send over", control.value
    )


def with_cluster(profile: Profile, address: str, generators: int | None = None, plain_tcp: bool = False) -> Profile:
    """The same profile with every load job's generators placed on a Dask cluster (CLI
    --cluster ADDRESS [--generators N] [--cluster-plain-tcp]); a profile without a load job
    is refused here."""
    try:
        address = cluster_address(address)
    except ValueError as exc:
        raise ProfileError(str(exc), field="--cluster") from None
    if generators is not None and not 1 <= generators <= MAX_GENERATORS:
        raise ProfileError(f"must be 1..{MAX_GENERATORS} (got {generators})", field="--generators")
    if not any(job.mode == Mode.LOAD for job in profile.jobs):
        raise ProfileError("the profile has no load job to place on a cluster", field="--cluster")
    update: dict[str, Any] = {"cluster": address}
    if generators is not None:
        update["generators"] = generators
    if plain_tcp:
        update["cluster_plain_tcp"] = True
    shown = address + (f" × {generators}" if generators is not None else "")
    return overridden(
        profile,
        "--cluster",
        shown,
        {"jobs": [job.model_copy(update=update) if job.mode == Mode.LOAD else job for job in profile.jobs]},
    )


# --- an error about a value an option set names the option ----------------------------------

#: The job fields each of `run`'s options sets (`--reduced` sets the rest it changes).
OPTION_FIELDS: dict[str, tuple[str, ...]] = {
    "--samples": ("samples",),
    "--link": ("link", "links"),
    "--link-emulation": ("link_emulation",),
    "--tcp-connection": ("tcp_connection",),
    "--tcp-congestion-control": ("tcp_congestion_control",),
    "--placement": ("placement",),
    "--cluster": ("cluster",),
    "--generators": ("generators",),
    "--cluster-plain-tcp": ("cluster_plain_tcp",),
    "--remote": ("mode",),
}
#: Fields whose option takes the field's value as it is: a hint to set the field
#: ('set "link_emulation": "packet"') is a hint to give the option instead.
_SAME_VALUE = frozenset({"samples", "link_emulation", "tcp_connection", "tcp_congestion_control", "placement"})
#: Fields a refusal of another field may name as a cause, in words ("use a shorter pause_ms
#: or fewer samples"): an option that set one is then named beside it. (Others, "link",
#: "mode", are also plain words: "the link process".)
_NAMED_AS_A_CAUSE = frozenset({"samples"})
_JOB_FIELD = re.compile(r"jobs\[(\d+)\](?:\.([a-z_]+))?(.*)")


def set_by_options(original: Profile, edited: Profile, index: int) -> dict[str, str]:
    """Which option set each field of job `index` that `edited` changed from `original`:
    {"link": "--link", "link_emulation": "--link-emulation", ...}."""
    given = set(edited.overrides or {}) - set(original.overrides or {})
    if "--cluster" in given:  # its value records --generators and --cluster-plain-tcp too
        given |= {"--generators", "--cluster-plain-tcp"}
    if index >= len(original.jobs) or index >= len(edited.jobs):
        return {}
    before, after = original.jobs[index], edited.jobs[index]
    setters = {field: option for option in given for field in OPTION_FIELDS.get(option, ())}
    reduced = edited.reduced and not original.reduced
    found = {}
    for field in type(after).model_fields:
        if getattr(before, field) != getattr(after, field):
            option = setters.get(field, "--reduced" if reduced else None)
            if option is not None:
                found[field] = option
    return found


def blame_options(exc: ProfileError, original: Profile, edited: Profile) -> ProfileError:
    """`exc`, an error `resolve_jobs` raised about `edited` (`original` as `run`'s options
    changed it), naming the option that set the value it is about instead of the file's
    field: `run lte.json --link '{"loss_percent": 1}' --link-emulation stream-relay` blamed
    "lte.json: jobs[0].link.loss_percent" and told to set "link_emulation" in the file, both
    values having come from options; now "--link.loss_percent: ...; set --link-emulation
    "packet" ...". An error about a value the file set is left to name the file."""
    match = _JOB_FIELD.fullmatch(exc.field or "")
    if match is None:
        return exc
    set_by = set_by_options(original, edited, int(match[1]))
    detail = exc.detail
    came: dict[str, str] = {}  # option: the first field it set that the error is about
    for field, option in set_by.items():
        if field in _SAME_VALUE and f'"{field}": ' in detail:
            detail = detail.replace(f'"{field}": ', f"{option} ")
        elif match[2] is None or (field in _NAMED_AS_A_CAUSE and re.search(rf"(?<![\w-]){field}(?![\w-])", detail)):
            # The job as a whole (a repeat), or the file's field with an option's value
            # ("use a shorter pause_ms or fewer samples"): say which values the options set.
            came.setdefault(option, field)
    if came:
        detail += f" ({'; '.join(_came_from(field, option, edited) for option, field in came.items())})"
    blamed = set_by.get(match[2] or "")
    if blamed is not None:
        return ProfileError(detail, field=blamed + match[3])
    return exc if detail == exc.detail else ProfileError(detail, source=exc.source, field=exc.field)


def _came_from(field: str, option: str, edited: Profile) -> str:
    """ "samples came from --samples 1000", or "as --reduced shortens the job"."""
    if option == "--reduced":
        return "as --reduced shortens the job"
    shown = (edited.overrides or {}).get(option, "")
    return f"{field} came from {option}" + (f" {shown}" if shown and len(shown) <= _SHOWN_VALUE_CHARS else "")
