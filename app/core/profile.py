"""Benchmark profiles: versioned JSON, validated with messages that name the bad field.

A profile is what a user saves and loads: a name and a list of jobs (scheme,
backend, parameters, mode, message sizes, samples, warm-up, pause). `load_profile`
checks the structure with pydantic, then the meaning against the scheme registry
(unknown schemes, impossible parameters, messages too long for one block, duplicate
jobs, sizes beyond this machine's memory) and raises `ProfileError` whose text is
one line: file, field path, what is wrong, and the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil
from pydantic import BaseModel, ConfigDict, ValidationError

from app.core.fileio import atomic_write_text
from app.core.job_records import Link
from app.core.link import presets as link_presets
from app.core.link.presets import UNION_TAGS, LinkPresetError, LinkSpec, LinkValue
from app.core.link.probe import loss_refusal
from app.core.load.reduce import reduced_load
from app.core.load.settings import DEFAULT_LOAD_MESSAGE_SIZE, LoadSettings, fields_set_outside_load, resolve_load
from app.core.profile_model import (  # the models; re-exported: callers import from here
    FORMAT_VERSION as FORMAT_VERSION,
    MIGRATIONS as MIGRATIONS,
    DEFAULT_MESSAGE_SIZES as DEFAULT_MESSAGE_SIZES,
    MAX_MESSAGE_SIZE as MAX_MESSAGE_SIZE,
    MEMORY_COPIES as MEMORY_COPIES,
    MAX_SAMPLES as MAX_SAMPLES,
    MAX_PROFILE_BYTES as MAX_PROFILE_BYTES,
    ProfileError as ProfileError,
    JobSpec as JobSpec,
    Profile as Profile,
    FieldLimits as FieldLimits,
    field_limits as field_limits,
    ResolvedJob as ResolvedJob,
)
from app.core.resources import resource_path
from app.core.schemes import registry
from app.core.session.protocol import job_capacity
from app.core.vocab import SESSION_MODES, Mode, PlacementPolicy, default_placement
from app.core.wire import HARD_MAX_FRAME, MAX_SESSION_MESSAGE

def _field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).isidentifier():  # an unknown key like "my field" or "a\nb": quoted, one line
            path += f"[{json.dumps(str(part))}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def _without_union_tags(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The location without the branch names of a link's tagged unions (jobs, 0, link, custom,
    delay_ms -> jobs, 0, link, delay_ms): only right after the field that holds the union."""
    kept: list[Any] = []
    for i, part in enumerate(loc):
        owner = loc[i - 2] if i >= 2 and isinstance(loc[i - 1], int) else loc[i - 1] if i >= 1 else None
        if isinstance(owner, str) and part in UNION_TAGS.get(owner, ()) \
                and (owner == "links") == (i >= 2 and isinstance(loc[i - 1], int)):
            continue
        kept.append(part)
    return tuple(kept)


def _first_error(exc: ValidationError, source: str | None, data: Any) -> ProfileError:
    error = exc.errors()[0]
    loc = _without_union_tags(tuple(error["loc"]))
    # pydantic appends the union branch name ("int", "str") to a parameter value's location
    # (jobs, 0, params, name, branch); drop it. Only there: an unknown field may be called "int".
    params_branch = len(loc) >= 3 and loc[-3] == "params" and loc[-1] in {"int", "str", "bool", "float"}
    if params_branch:
        loc = loc[:-1]
    field = _field_path(loc) or None
    message = error["msg"]
    if params_branch and error["type"].endswith("_type"):
        # A union (params values): name every accepted type, not just the first branch's.
        message = "Input should be a valid integer, string or boolean"
    if error["type"] == "extra_forbidden":
        message = "unknown field"
    elif error["type"] == "missing":
        message = "required field is missing"
    message = message.removeprefix("Value error, ")
    if error["type"] != "missing" and "input" in error:
        message += f" (got {_shown(error['input'])})"
    return ProfileError(message, source=source, field=field)


def _shown(value: Any) -> str:
    """A value as JSON for a message; never raises (a value nested near the recursion
    limit cannot be dumped again from deeper in the stack)."""
    if isinstance(value, dict):
        return "{...}"
    try:
        shown = json.dumps(value)
    except (ValueError, RecursionError):
        shown = "[...]" if isinstance(value, list) else type(value).__name__
    return shown[:57] + "..." if len(shown) > 60 else shown


_JSON_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
                    float: "a number", type(None): "null"}


def migrate(data: dict[str, Any], source: str | None = None) -> dict[str, Any]:
    """Upgrade an older profile dict to FORMAT_VERSION; refuse a newer one."""
    version = data.get("format_version", FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ProfileError(f"must be a positive integer (got {_shown(version)})", source=source,
                           field="format_version")
    if version > FORMAT_VERSION:
        raise ProfileError(
            f"written by a newer CryptoBench (format {version}; this version reads up to {FORMAT_VERSION}); "
            "update CryptoBench to open it", source=source, field="format_version")
    while version < FORMAT_VERSION:
        data = MIGRATIONS[version](dict(data))
        version += 1
        data["format_version"] = version
    return data


def parse_profile(data: Any, source: str | None = None) -> Profile:
    """Structure check of a decoded JSON value."""
    if not isinstance(data, dict):
        kind = _JSON_TYPE_NAMES.get(type(data), type(data).__name__)
        raise ProfileError(f"a profile must be a JSON object (got {kind})", source=source)
    _refuse_unencodable(data, source)
    data = migrate(data, source)
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc, source, data) from None


def _refuse_unencodable(data: Any, source: str | None) -> None:
    """Refuse text that cannot be written as UTF-8, in any string or key of the profile.

    JSON's "\\ud800" escape (and a GUI field fed one) decodes to a lone surrogate: a valid
    Python string that no file, pipe or database can take. Such a label passed every
    check and then broke the run in the middle, and a description broke the Markdown
    report. Iterative and in document order: the first bad field is the one named.
    """
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, str):
            bad = _surrogate_at(value)
            if bad is not None:
                raise ProfileError(f"text cannot be written as UTF-8 (a lone surrogate at character {bad}; got "
                                   f"{_shown(value)})", source=source, field=_field_path(loc) or None)
        elif isinstance(value, dict):
            for key in value:
                bad = _surrogate_at(key)
                if bad is not None:
                    raise ProfileError(f"a field name cannot be written as UTF-8 (a lone surrogate at character "
                                       f"{bad}; got {_shown(key)})", source=source, field=_field_path(loc) or None)
            stack.extend(((*loc, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*loc, i), v) for i, v in reversed(list(enumerate(value))))


def _surrogate_at(text: str) -> int | None:
    """The index of the first character UTF-8 cannot encode, or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def read_profile_file(path: str | Path) -> Profile:
    """Read and structure-check a profile file (UTF-8 JSON)."""
    path = Path(path)
    source = str(path)
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_PROFILE_BYTES + 1)
    except FileNotFoundError:
        raise ProfileError("file not found", source=source) from None
    except OSError as exc:
        raise ProfileError(f"cannot read file: {exc.strerror or exc}", source=source) from None
    if len(raw) > MAX_PROFILE_BYTES:
        raise ProfileError(f"larger than {_human(MAX_PROFILE_BYTES)}: not a profile", source=source)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(f"not UTF-8 text (bad byte at offset {exc.start})", source=source) from None
    # id(object) -> (object, key, first value, last value); holding the object keeps its id
    # from being reused by a later one when a repeated key drops it from the data.
    duplicates: dict[int, tuple[dict[str, Any], str, Any, Any]] = {}

    def make_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj and id(obj) not in duplicates:
                duplicates[id(obj)] = (obj, key, obj[key], value)
            obj[key] = value
        return obj

    try:
        data = json.loads(text, object_pairs_hook=make_object)
    except json.JSONDecodeError as exc:
        raise ProfileError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                           source=source) from None
    except RecursionError:  # the C scanner recurses per nesting level
        raise ProfileError("not valid JSON: nested too deeply", source=source) from None
    except ValueError:  # an integer longer than Python's int/str conversion limit (4300 digits)
        raise ProfileError("not valid JSON: a number has too many digits", source=source) from None
    if duplicates:
        # json.loads keeps the last of two equal keys; a hand-edited profile whose first
        # "samples" silently loses is refused instead, naming where.
        loc, (_, key, first, last) = _first_duplicate(data, duplicates)
        raise ProfileError(f"appears twice in one object (got {_shown(first)}, then {_shown(last)}); keep one",
                           source=source, field=_field_path((*loc, key)))
    return parse_profile(data, source)


def _first_duplicate(data: Any, duplicates: Mapping[int, tuple[dict[str, Any], str, Any, Any]]
                     ) -> tuple[tuple[Any, ...], tuple[dict[str, Any], str, Any, Any]]:
    """The location (as a pydantic-style loc) of the first object, in document order,
    holding a repeated key. Iterative: the data may nest close to the recursion limit."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, dict):
            if id(value) in duplicates:
                return loc, duplicates[id(value)]
            stack.extend(((*loc, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*loc, i), v) for i, v in reversed(list(enumerate(value))))
    raise AssertionError("duplicate key recorded for an object not in the data")


def save_profile(profile: Profile, path: str | Path) -> None:
    """Write a profile atomically (a crash never leaves half a file)."""
    atomic_write_text(Path(path), json.dumps(profile.to_dict(), indent=2) + "\n")


# --- presets -----------------------------------------------------------------------


def preset_dir() -> Path:
    return resource_path("presets")


def preset_names() -> list[str]:
    return sorted(p.stem for p in preset_dir().glob("*.json"))


def load_profile(name_or_path: str | Path) -> Profile:
    """A preset by name, or a profile file by path."""
    candidate = Path(name_or_path)
    if candidate.suffix.lower() == ".json" or candidate.exists() or "/" in str(name_or_path):
        return read_profile_file(candidate)
    preset = preset_dir() / f"{name_or_path}.json"
    if preset.exists():
        return read_profile_file(preset)
    raise ProfileError(
        f"no such profile file or preset (presets: {', '.join(preset_names()) or 'none'})",
        source=str(name_or_path),
    )


# --- meaning checks ------------------------------------------------------------------


def resolve_jobs(profile: Profile, source: str | None = None, available_memory: int | None = None,
                 has_remote: bool = False) -> list[ResolvedJob]:
    """Check every job against the registry and this machine; ProfileError on the first problem.

    `has_remote` says whether a `cryptobench serve` receiver was given for jobs in
    mode "remote".
    """
    # Imported here: it loads the crypto libraries, which importing a profile need not.
    from app.core.schemes.dh import canonical_curve

    resolved: list[ResolvedJob] = []
    seen: dict[tuple[Any, ...], str] = {}
    memory = available_memory if available_memory is not None else psutil.virtual_memory().available
    for index, job in enumerate(profile.jobs):
        where = f"jobs[{index}]"

        def fail(field: str, message: str) -> ProfileError:
            return ProfileError(message, source=source, field=f"{where}.{field}")

        try:
            spec = registry.get_spec(job.scheme)
        except registry.UnknownScheme:
            raise fail("scheme", f"unknown scheme (got {json.dumps(job.scheme)}); see `cryptobench list`") from None
        backend = job.backend or spec.backends[0]
        if backend not in spec.backends:
            raise fail("backend", f"{job.scheme} is not available in this backend (got {json.dumps(backend)}; "
                                  f"available: {', '.join(spec.backends)})")
        try:
            scheme = spec.create(backend, job.params)
        except registry.RegistryError as exc:
            raise fail("params", str(exc)) from None
        if not job.tcp_nodelay and job.mode not in SESSION_MODES:
            raise fail("tcp_nodelay", "applies to loopback and remote jobs only ("
                       + ("operations jobs use no socket)" if job.mode == Mode.OPERATIONS
                          else "a load job's connections always send at once)"))
        if job.mode == Mode.REMOTE and not has_remote:
            raise fail("mode", 'mode "remote" needs a receiver: start `cryptobench serve` on the other machine '
                               "and run with --remote HOST:PORT --token-file FILE")
        load: LoadSettings | None = None
        if job.mode == Mode.LOAD:
            load, problems = resolve_load(job)
            if problems:
                raise fail(*problems[0])
        elif stray := fields_set_outside_load(job):
            raise fail(stray[0], f'applies to "mode": "load" only (this job is in mode {job.mode})')
        info = scheme.info
        if info.fixed_message_size is not None:
            if job.message_sizes is not None:
                raise fail("message_sizes", f"{job.scheme} takes its input size from params.secret_size; "
                                            "remove message_sizes")
            sizes = [info.fixed_message_size]
        else:
            # A load request seals one short message unless the profile says otherwise.
            sizes = list(job.message_sizes or ((DEFAULT_LOAD_MESSAGE_SIZE,) if load else DEFAULT_MESSAGE_SIZES))
        if len(set(sizes)) != len(sizes):
            raise fail("message_sizes", f"lists a size twice (got {sizes})")
        for k, size in enumerate(sizes):
            if info.max_plaintext is not None and size > info.max_plaintext:
                raise fail(f"message_sizes[{k}]",
                           f"a {size}-byte message does not fit one {info.label} block (at most "
                           f"{info.max_plaintext} bytes); set params.chunked to true to split it")
            if job.mode in SESSION_MODES or job.mode == Mode.LOAD:
                if size > MAX_SESSION_MESSAGE:
                    raise fail(f"message_sizes[{k}]", f"a session message is at most {_human(MAX_SESSION_MESSAGE)} "
                                                      f"(got {size} bytes); use mode operations for larger ones")
                frame = job_capacity(scheme, [size])
                if frame > HARD_MAX_FRAME:
                    raise fail(f"message_sizes[{k}]", f"a {size}-byte message becomes a {_human(frame)} payload "
                                                      f"with {info.label}, over the {_human(HARD_MAX_FRAME)} frame cap")
            needed = size * MEMORY_COPIES
            if needed > memory * 0.8:
                raise fail(f"message_sizes[{k}]",
                           f"a {_human(size)} message needs about {_human(needed)} of memory "
                           f"({MEMORY_COPIES} copies); this machine has {_human(memory)} available")
        params = dict(info.params)
        # A curve alias (secp256r1 = P-256) is the same job under another name: same label,
        # same numbers, so it must count as a repeat too.
        same = {k: canonical_curve(v) if k == "curve" and isinstance(v, str) else v for k, v in params.items()}
        label = job.label or f"{info.label} [{backend}]" + ("" if job.tcp_nodelay else " (Nagle on)")
        # A sweep ("links") is one job per link, in its order; each link's numbers are part of
        # what is measured, so two links with the same numbers are a repeat.
        placement = job.placement or default_placement(job.mode)
        for place, link in _job_links(job, where, source):
            key = (job.scheme, backend, json.dumps(same, sort_keys=True), job.mode, job.tcp_nodelay, placement, load,
                   None if link is None else (link.delay_ms, link.jitter_ms, link.rate_kbit_up,
                                              link.rate_kbit_down, link.loss_percent))
            for size in sizes:
                if (key, size) in seen:
                    raise ProfileError(
                        f"repeats {seen[(key, size)]}: same scheme, backend, parameters, mode, "
                        f"transport{'' if link is None else ', link'} and message size {size}",
                        source=source, field=place)
                seen[(key, size)] = place
            resolved.append(ResolvedJob(
                index=index, scheme=job.scheme, backend=backend, params=params, mode=job.mode,
                message_sizes=sizes, samples=job.samples, warmup=job.warmup,
                keygen_samples=job.keygen_samples, pause_ms=job.pause_ms, tamper=job.tamper,
                label=label if link is None else f"{label} over {link_presets.link_title(link)}",
                family=info.family, tcp_nodelay=job.tcp_nodelay, link=link, placement=placement, load=load,
            ))
    return resolved


#: Why a job in another mode takes no link.
_NO_LINK = {
    Mode.OPERATIONS: 'applies to loopback jobs only: an operations job sends nothing over a network (set "mode": '
                     '"loopback")',
    Mode.REMOTE: "a remote job runs over the real network between the two machines, which no emulated link "
                 'replaces; emulate links in "mode": "loopback"',
}


def _job_links(job: JobSpec, where: str, source: str | None) -> list[tuple[str, Link | None]]:
    """(field path, resolved link) for each link of the job; [(where, None)] without one.

    Refused here, naming the field: link and links together, a link outside loopback mode,
    an unknown preset, jitter beyond the delay, and loss (no netem code path: the reason
    says what this machine lacks, or that CryptoBench does not drive netem yet).
    """
    if job.link is not None and job.links is not None:
        raise ProfileError("give link (one link) or links (a sweep over several), not both", source=source,
                           field=f"{where}.links")
    specs = ([("link", job.link)] if job.link is not None
             else [(f"links[{k}]", spec) for k, spec in enumerate(job.links or [])])
    if not specs:
        return [(where, None)]
    if job.mode not in (Mode.LOOPBACK, Mode.LOAD):
        raise ProfileError(_NO_LINK[job.mode], source=source, field=f"{where}.{specs[0][0].split('[')[0]}")
    links: list[tuple[str, Link | None]] = []
    for field, spec in specs:
        place = f"{where}.{field}"
        if isinstance(spec, LinkSpec):
            problem = link_presets.jitter_problem(spec)
            if problem is not None:
                raise ProfileError(problem, source=source, field=f"{place}.jitter_ms")
        try:
            link = link_presets.resolve_link(spec)
        except LinkPresetError as exc:
            raise ProfileError(f"{exc}; see `cryptobench links`", source=source, field=place) from None
        if link.loss_percent > 0:
            raise ProfileError(f"{loss_refusal()} (got {link.loss_percent:g})", source=source,
                               field=f"{place}.loss_percent" if isinstance(spec, LinkSpec) else place)
        links.append((place, link))
    return links


def with_mode(profile: Profile, mode: str) -> Profile:
    """The same profile with every job in `mode` (CLI --remote runs every job against the server)."""
    try:
        member = Mode(mode)
    except ValueError:
        raise ProfileError(f"unknown mode {mode!r} (modes: {', '.join(Mode)})", field="mode") from None
    return profile.model_copy(update={"jobs": [job.model_copy(update={"mode": member}) for job in profile.jobs]})


def with_samples(profile: Profile, samples: int) -> Profile:
    """The same profile with every job's sample count replaced (CLI --samples)."""
    if not 1 <= samples <= MAX_SAMPLES:  # the upper bound too: model_copy skips JobSpec's checks
        raise ProfileError(f"must be 1..{MAX_SAMPLES} (got {samples})", field="--samples")
    return profile.model_copy(update={"jobs": [job.model_copy(update={"samples": samples}) for job in profile.jobs]})


#: A reduced run keeps messages up to this size (and at most REDUCED_SIZES of them per job).
REDUCED_MAX_SIZE = 64 * 1024
REDUCED_SIZES = 3
#: A reduced sweep keeps this many links (the cheapest), each with at most REDUCED_LINK_SAMPLES
#: samples: every round trip over a link waits out its delay (0.6 s over a geostationary
#: satellite), so the preset sweeping ten schemes over every link would take minutes.
REDUCED_LINKS = 2
REDUCED_LINK_SAMPLES = 2


def reduced(profile: Profile, max_size: int = REDUCED_MAX_SIZE, samples: int = 3) -> Profile:
    """The same jobs on a tiny budget: a few samples, little warm-up, no pause, messages up to
    `max_size` (the smallest, middle and largest of those; the smallest size when all are
    larger). Runs every preset end to end through the same code in seconds, for CI and for
    `cryptobench run NAME --reduced`; its numbers are not for comparison, and the profile's
    name says so.

    A job over an emulated link keeps its link's numbers (a reduced run checks the same
    path) but at most REDUCED_LINK_SAMPLES samples, and a sweep keeps its REDUCED_LINKS
    cheapest links in their order (`presets.round_trip_ms`: the first and last of a sweep
    ordered from LAN to satellite would spend most of the run waiting on the satellite)."""
    jobs = []
    for job in profile.jobs:
        sizes = job.message_sizes
        if sizes is not None:
            kept = sorted(size for size in sizes if size <= max_size) or [min(sizes)]
            if len(kept) > REDUCED_SIZES:
                kept = [kept[0], kept[len(kept) // 2], kept[-1]]
            sizes = kept
        linked = job.link is not None or job.links is not None
        jobs.append(job.model_copy(update={
            "message_sizes": sizes, "samples": min(job.samples, samples, REDUCED_LINK_SAMPLES if linked else samples),
            "warmup": min(job.warmup, 1), "keygen_samples": min(job.keygen_samples, 1), "pause_ms": 0.0,
            "tamper": min(job.tamper, 1), "links": _cheapest_links(job.links),
            **reduced_load(job, job.mode == Mode.LOAD)}))  # short steps at two low rates
    return profile.model_copy(update={"name": f"{profile.name} (reduced)", "jobs": jobs})


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
        error = _first_error(exc, None, value)
        raise ProfileError(error.detail, field="--" + (error.field or "link")) from None
    if isinstance(link, str) and link not in link_presets.link_presets():
        raise ProfileError(link_presets.unknown_preset_message(link), field="--link")
    if not any(job.mode == Mode.LOOPBACK for job in profile.jobs):
        raise ProfileError("the profile has no loopback job to run over a link", field="--link")
    return profile.model_copy(update={"jobs": [
        job.model_copy(update={"link": link, "links": None}) if job.mode == Mode.LOOPBACK else job
        for job in profile.jobs]})


def with_placement(profile: Profile, text: str) -> Profile:
    """The same profile with every job's CPU placement set to one policy (CLI --placement)."""
    try:
        policy = PlacementPolicy(text)
    except ValueError:
        raise ProfileError(f"not a placement (got {json.dumps(text)}; one of "
                           f"{', '.join(p.value for p in PlacementPolicy)})", field="--placement") from None
    return profile.model_copy(update={"jobs": [job.model_copy(update={"placement": policy})
                                               for job in profile.jobs]})


_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1000, "kib": 1024, "m": 1 << 20, "mb": 1_000_000,
               "mib": 1 << 20, "g": 1 << 30, "gb": 1_000_000_000, "gib": 1 << 30}


def parse_size_list(text: str) -> list[int]:
    """"18, 1K, 4 KiB, 1M" -> [18, 1024, 4096, 1048576]; ProfileError names the bad item.

    K/M/G and KiB/MiB/GiB are binary; kB/MB/GB are decimal.
    """
    import re

    sizes: list[int] = []
    for item in (part.strip() for part in text.replace(";", ",").split(",")):
        if not item:
            continue
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)", item)
        unit = match.group(2).lower() if match else ""
        if match is None or unit not in _SIZE_UNITS:
            raise ProfileError(f"{item!r} is not a size (examples: 18, 1K, 4 KiB, 1M)")
        value = float(match.group(1)) * _SIZE_UNITS[unit]
        if value != int(value):
            raise ProfileError(f"{item!r} is not a whole number of bytes")
        sizes.append(int(value))
    return sizes


def human_size(size: int) -> str:
    """1024 -> "1 KiB", 18 -> "18 B": for labels, exact when the size is a round unit."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def _human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"


def params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())
