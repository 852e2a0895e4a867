"""A profile's jobs checked against the scheme registry and this machine, and resolved.

`resolve_jobs` turns each profile job into the `ResolvedJob`s the runner runs (one per
link of a sweep) or raises `ProfileError` naming the field: unknown schemes, impossible
parameters, messages too long for one block, duplicate jobs, links outside loopback,
sizes beyond this machine's memory.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil

from app.core.errors import RegistryError, UnknownScheme
from app.core.link.probe import loss_refusal
from app.core.link.wire_time import wire_time_problem
from app.core.profile.pauses import pause_count, pause_problem
from app.core.profile.sizes import _human
from app.core.records.job_conditions import Link
from app.core.schemes import registry
from app.core.session.protocol import job_capacity
from app.core.settings import links as link_presets
from app.core.settings.links import LinkPresetError, LinkSpec
from app.core.settings.load import (
    DEFAULT_LOAD_MESSAGE_SIZE,
    IGNORED_BY_LOAD,
    LoadSettings,
    fields_set_outside_load,
    resolve_load,
)
from app.core.settings.profile import (
    DEFAULT_MESSAGE_SIZES,
    MEMORY_COPIES,
    JobSpec,
    Profile,
    ProfileError,
    ResolvedJob,
)
from app.core.suggest import did_you_mean
from app.core.transport.netns import packet_path_refusal
from app.core.transport.wire import HARD_MAX_FRAME, MAX_SESSION_MESSAGE
from app.core.vocab import (
    DEFAULT_LINK_EMULATION,
    SESSION_MODES,
    LinkEmulation,
    LinkEmulationChoice,
    Mode,
    TcpConnection,
    default_placement,
)

# --- meaning checks ------------------------------------------------------------------


def resolve_jobs(
    profile: Profile, source: str | None = None, available_memory: int | None = None, has_remote: bool = False
) -> list[ResolvedJob]:
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

        def fail(field: str, message: str, where: str = where) -> ProfileError:
            return ProfileError(message, source=source, field=f"{where}.{field}")

        try:
            spec = registry.get_spec(job.scheme)
        except UnknownScheme:
            hint = did_you_mean(job.scheme, registry.scheme_ids())
            raise fail(
                "scheme", f"unknown scheme (got {json.dumps(job.scheme)}{hint}); see `cryptobench list`"
            ) from None
        backend = job.backend or spec.backends[0]
        if backend not in spec.backends:
            known = registry.backend_names()
            if backend not in known:  # a typo, not a real backend that lacks the scheme
                raise fail(
                    "backend",
                    f"unknown backend (got {json.dumps(backend)}{did_you_mean(backend, known)}); "
                    f"backends for {job.scheme}, available: {', '.join(spec.backends)}",
                )
            raise fail(
                "backend",
                f"{job.scheme} is not available in this backend (got {json.dumps(backend)}; "
                f"available: {', '.join(spec.backends)})",
            )
        try:
            scheme = spec.create(backend, job.params)
        except RegistryError as exc:
            raise fail("params", str(exc)) from None
        if not job.tcp_nodelay and job.mode not in SESSION_MODES:
            raise fail(
                "tcp_nodelay",
                "applies to loopback and remote jobs only ("
                + (
                    "operations jobs use no socket)"
                    if job.mode == Mode.OPERATIONS
                    else "a load job's connections always send at once)"
                ),
            )
        if job.mode == Mode.REMOTE and not has_remote:
            raise fail(
                "mode",
                'mode "remote" needs a receiver: start `cryptobench serve` on the other machine '
                "and run with --remote HOST:PORT --token-file FILE",
            )
        load: LoadSettings | None = None
        if job.mode == Mode.LOAD:
            load, problems = resolve_load(job)
            if problems:
                raise fail(*problems[0])
            if load.cluster is not None and job.link is not None:
                raise fail(
                    "cluster",
                    "generators on a Dask cluster reach the server over the real network: an emulated link "
                    "runs on this machine only; remove link, or cluster",
                )
            for name, why in IGNORED_BY_LOAD.items():
                value = getattr(job, name)
                if value != JobSpec.model_fields[name].default:
                    raise fail(name, f"a load job has no use for {name}: {why} (got {value:g}); remove it")
        elif stray := fields_set_outside_load(job):
            raise fail(stray[0], f'applies to "mode": "load" only (this job is in mode {job.mode})')
        info = scheme.info
        if info.fixed_message_size is not None:
            if job.message_sizes is not None:
                raise fail(
                    "message_sizes", f"{job.scheme} takes its input size from params.secret_size; remove message_sizes"
                )
            sizes = [info.fixed_message_size]
        else:
            # A load request seals one short message unless the profile says otherwise.
            sizes = list(job.message_sizes or ((DEFAULT_LOAD_MESSAGE_SIZE,) if load else DEFAULT_MESSAGE_SIZES))
        if len(set(sizes)) != len(sizes):
            raise fail("message_sizes", f"lists a size twice (got {sizes})")
        for k, size in enumerate(sizes):
            if info.max_plaintext is not None and size > info.max_plaintext:
                raise fail(
                    f"message_sizes[{k}]",
                    f"a {size}-byte message does not fit one {info.label} block (at most "
                    f"{info.max_plaintext} bytes); set params.chunked to true to split it",
                )
            if job.mode in SESSION_MODES or job.mode == Mode.LOAD:
                if size > MAX_SESSION_MESSAGE:
                    raise fail(
                        f"message_sizes[{k}]",
                        f"a session message is at most {_human(MAX_SESSION_MESSAGE)} "
                        f"(got {size} bytes); use mode operations for larger ones",
                    )
                frame = job_capacity(scheme, [size])
                if frame > HARD_MAX_FRAME:
                    raise fail(
                        f"message_sizes[{k}]",
                        f"a {size}-byte message becomes a {_human(frame)} payload "
                        f"with {info.label}, over the {_human(HARD_MAX_FRAME)} frame cap",
                    )
            needed = size * MEMORY_COPIES
            if needed > memory * 0.8:
                raise fail(
                    f"message_sizes[{k}]",
                    f"a {_human(size)} message needs about {_human(needed)} of memory "
                    f"({MEMORY_COPIES} copies); this machine has {_human(memory)} available",
                )
        pauses = pause_problem(
            job.pause_ms, pause_count(job.mode, info.family, len(sizes), job.samples, job.warmup, job.keygen_samples)
        )
        if pauses is not None:
            raise fail("pause_ms", pauses)
        params = dict(info.params)
        # A curve alias (secp256r1 = P-256) is the same job under another name: same label,
        # same numbers, so it must count as a repeat too.
        same = {k: canonical_curve(v) if k == "curve" and isinstance(v, str) else v for k, v in params.items()}
        label = job.label or f"{info.label} [{backend}]" + ("" if job.tcp_nodelay else " (Nagle on)")
        # A sweep ("links") is one job per link, in its order; each link's numbers are part of
        # what is measured, so two links with the same numbers are a repeat.
        placement = job.placement or default_placement(job.mode)
        for place, link in _job_links(job, where, source):
            if link is not None:
                _refuse_endless_wire(job, link, sizes, place, source)
            key = (
                job.scheme,
                backend,
                json.dumps(same, sort_keys=True),
                job.mode,
                job.tcp_nodelay,
                placement,
                load,
                None
                if link is None
                # Everything that shapes the path is what is measured; only the preset's name is not.
                else replace(link, name=None),
            )
            for size in sizes:
                if (key, size) in seen:
                    raise ProfileError(
                        f"repeats {seen[(key, size)]}: same scheme, backend, parameters, mode, "
                        f"transport{'' if link is None else ', link'} and message size {_human(size)}",
                        source=source,
                        field=place,
                    )
                seen[(key, size)] = place
            resolved.append(
                ResolvedJob(
                    index=index,
                    scheme=job.scheme,
                    backend=backend,
                    params=params,
                    mode=job.mode,
                    message_sizes=sizes,
                    samples=job.samples,
                    warmup=job.warmup,
                    keygen_samples=job.keygen_samples,
                    pause_ms=job.pause_ms,
                    tamper=job.tamper,
                    label=label if link is None else f"{label} over {link_presets.link_title(link)}",
                    family=info.family,
                    tcp_nodelay=job.tcp_nodelay,
                    link=link,
                    placement=placement,
                    load=load,
                )
            )
    return resolved


def _refuse_endless_wire(job: JobSpec, link: Link, sizes: list[int], place: str, source: str | None) -> None:
    """Refuse a job whose messages would take longer on its link than a run may wait
    (`wire_time`: one message over ten minutes, a job's messages over a day), naming the
    size, the link's rate and the estimate."""
    from app.core.session.sender import FLOOR_MAX_SAMPLES  # the session's floor ping-pong per size

    exchanges = None
    if job.mode != Mode.LOAD:  # a session: per size, its messages and its floor's echoes
        floor = job.warmup + min(job.samples, FLOOR_MAX_SAMPLES)
        exchanges = [(3 + job.warmup + job.samples + job.tamper, floor)] * len(sizes)
    problem = wire_time_problem(link, sizes, exchanges)
    if problem is not None:
        raise ProfileError(problem[1], source=source, field=place)


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
    an unknown preset, jitter beyond the delay, a packet path this machine cannot make
    (the reason, and what would make it possible), and loss on the stream relay.
    """
    if job.link is not None and job.links is not None:
        raise ProfileError(
            "give link (one link) or links (a sweep over several), not both", source=source, field=f"{where}.links"
        )
    specs = (
        [("link", job.link)]
        if job.link is not None
        else [(f"links[{k}]", spec) for k, spec in enumerate(job.links or [])]
    )
    if not specs:
        for name in ("link_emulation", *_PATH_TCP):
            if getattr(job, name) is not None:
                raise ProfileError(
                    "applies to a job's emulated link, and the job has no link (set link or links, or leave it out)",
                    source=source,
                    field=f"{where}.{name}",
                )
        return [(where, None)]
    if job.mode not in (Mode.LOOPBACK, Mode.LOAD):
        raise ProfileError(_NO_LINK[job.mode], source=source, field=f"{where}.{specs[0][0].split('[')[0]}")
    links: list[tuple[str, Link | None]] = []
    for field, spec in specs:
        place = f"{where}.{field}"
        if isinstance(spec, LinkSpec):
            for problem, name in (
                (link_presets.jitter_problem(spec), "jitter_ms"),
                (link_presets.loss_problem(spec), "burst_loss"),
            ):
                if problem is not None:
                    raise ProfileError(problem, source=source, field=f"{place}.{name}")
        try:
            link = link_presets.resolve_link(spec)
        except LinkPresetError as exc:
            raise ProfileError(f"{exc}; see `cryptobench links`", source=source, field=place) from None
        link = _path_tcp(job, _emulated(job, link, place, source), where, source)
        if link.emulation != LinkEmulation.PACKET:
            _packet_only(link, spec, place, source)
        links.append((place, link))
    return links


def _packet_only(link: Link, spec: object, place: str, source: str | None) -> None:
    """Refuse what only the packet path emulates (loss, a packet queue) on another emulation."""

    def field(name: str) -> str:  # a preset's figures are not the profile's to fix: name the link
        return f"{place}.{name}" if isinstance(spec, LinkSpec) else place

    if link.loss_percent > 0:
        name = "burst_loss" if link.burst_loss is not None else "loss_percent"
        # The value first: the refusal's reason may end in figures of its own (a device's mode).
        raise ProfileError(
            f"{link.loss_percent:g} % loss asked for: {loss_refusal()}", source=source, field=field(name)
        )
    for name in ("queue_packets", "queue_bytes"):
        if getattr(link, name) is not None:
            raise ProfileError(
                "bounds the packet path's queue of IP packets; the stream relay queues a byte stream, without "
                "bounds to set (use the packet path)",
                source=source,
                field=field(name),
            )


#: The job fields that set the packet path's TCP.
_PATH_TCP = ("tcp_congestion_control", "tcp_slow_start_after_idle", "tcp_connection")
AVAILABLE_CONGESTION_CONTROL = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def _path_tcp(job: JobSpec, link: Link, where: str, source: str | None) -> Link:
    """The link with the TCP settings the job asks of its packet path (refused elsewhere)."""
    asked = {name: getattr(job, name) for name in _PATH_TCP if getattr(job, name) is not None}
    if not asked:
        return link
    if link.emulation != LinkEmulation.PACKET:
        refusal = packet_path_refusal() if job.link_emulation == LinkEmulationChoice.AUTO else None
        raise ProfileError(
            "sets the kernel's TCP on the packet path, and this job runs over the stream relay, whose ends talk to "
            + (
                f"the link process on loopback (the packet path is not available here: {refusal})"
                if refusal is not None
                else 'the link process on loopback (set "link_emulation": "packet")'
            ),
            source=source,
            field=f"{where}.{next(iter(asked))}",
        )
    control = job.tcp_congestion_control
    if control is not None:
        try:
            available = AVAILABLE_CONGESTION_CONTROL.read_text().split()
        except OSError:
            available = []
        if available and str(control) not in available:
            raise ProfileError(
                f"{control} is not a congestion control this kernel offers ({AVAILABLE_CONGESTION_CONTROL}: "
                f"{' '.join(available)})",
                source=source,
                field=f"{where}.tcp_congestion_control",
            )
    return replace(
        link,
        congestion_control=None if control is None else str(control),
        slow_start_after_idle=job.tcp_slow_start_after_idle,
        connection=str(job.tcp_connection or TcpConnection.WARM),
    )


def _emulated(job: JobSpec, link: Link, place: str, source: str | None) -> Link:
    """The link with the emulation the job asks for and this machine allows (the packet path
    unless the job chooses, or allows, the stream relay)."""
    relay = replace(link, emulation=LinkEmulation.DELAY_LINE)
    field = f"{place.rsplit('.', 1)[0]}.link_emulation"
    if job.mode == Mode.LOAD:  # a load job's clients share one stream relay
        if job.link_emulation == LinkEmulationChoice.PACKET:
            raise ProfileError(
                "a load job's clients share one stream relay; the packet path is for loopback jobs so far",
                source=source,
                field=field,
            )
        return relay
    choice = job.link_emulation or DEFAULT_LINK_EMULATION
    if choice == LinkEmulationChoice.STREAM_RELAY:
        return relay
    refusal = packet_path_refusal()
    if refusal is None:
        return replace(link, emulation=LinkEmulation.PACKET)
    if choice == LinkEmulationChoice.PACKET:
        raise ProfileError(
            f'the packet path is not available here: {refusal}; "link_emulation": "auto" allows the stream '
            "relay instead (no TCP dynamics on the path, no loss), labelled as such",
            source=source,
            field=field,
        )
    return relay  # auto: the stream relay, which the result's link records
