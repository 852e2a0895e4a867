"""A profile's jobs checked against the scheme registry and this machine, and resolved.

`resolve_jobs` turns each profile job into the `ResolvedJob`s the runner runs (one per
link of a sweep) or raises `ProfileError` naming the field: unknown schemes, impossible
parameters, messages too long for one block, duplicate jobs, links outside loopback,
sizes beyond this machine's memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import psutil

from app.core.errors import RegistryError, UnknownScheme
from app.core.link.probe import loss_refusal
from app.core.link.wire_time import wire_time_problem
from app.core.profile.pauses import pause_count, pause_problem
from app.core.profile.sizes import human
from app.core.records.job_conditions import Link
from app.core.schemes import registry
from app.core.schemes.base import Scheme, SchemeSpec
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
    DEFAULT_EXCHANGE,
    DEFAULT_LINK_EMULATION,
    KEY_ESTABLISHING,
    SESSION_MODES,
    Exchange,
    Family,
    LinkEmulation,
    LinkEmulationChoice,
    Mode,
    PlacementPolicy,
    TcpConnection,
    default_placement,
)

# --- meaning checks ------------------------------------------------------------------

#: A problem of a job: the field (under the job's `jobs[i].`) and the message.
Problem = tuple[str, str]


@dataclass
class _Candidate:
    """One profile job on its way to being resolved: what its rules read, worked out once,
    when a rule first asks. Each rule reads only what the rules before it have checked
    (the backend once the scheme is known, the sizes once the load settings are)."""

    job: JobSpec
    #: The memory this machine has available, in bytes.
    memory: int
    #: Whether a `cryptobench serve` receiver was given, for jobs in mode "remote".
    has_remote: bool

    @cached_property
    def spec(self) -> SchemeSpec:
        return registry.get_spec(self.job.scheme)

    @cached_property
    def backend(self) -> str:
        return self.job.backend or self.spec.backends[0]

    @property
    def exchange(self) -> Exchange | None:
        """The job's exchange pattern: its own or the default for a key-establishing
        scheme, None for any other (which `_exchange_without_a_key` refuses to set)."""
        if self.spec.family not in KEY_ESTABLISHING:
            return None
        return self.job.exchange or DEFAULT_EXCHANGE

    @cached_property
    def scheme(self) -> Scheme:
        return self.spec.create(self.backend, self.job.params, self.exchange)

    @cached_property
    def load_and_problems(self) -> tuple[LoadSettings | None, list[Problem]]:
        return resolve_load(self.job) if self.job.mode == Mode.LOAD else (None, [])

    @property
    def load(self) -> LoadSettings | None:
        return self.load_and_problems[0]

    @cached_property
    def sizes(self) -> list[int]:
        fixed = self.scheme.info.fixed_message_size
        if fixed is not None:
            return [fixed]
        # A load request seals one short message unless the profile says otherwise.
        return list(self.job.message_sizes or ((DEFAULT_LOAD_MESSAGE_SIZE,) if self.load else DEFAULT_MESSAGE_SIZES))


def _unknown_scheme(c: _Candidate) -> Problem | None:
    try:
        c.spec  # noqa: B018 (looked up here, so that the rules after it may read it)
    except UnknownScheme:
        hint = did_you_mean(c.job.scheme, registry.scheme_ids())
        return "scheme", f"unknown scheme (got {json.dumps(c.job.scheme)}{hint}); see `cryptobench list`"
    return None


def _backend_without_the_scheme(c: _Candidate) -> Problem | None:
    backend, backends = c.backend, c.spec.backends
    if backend in backends:
        return None
    known = registry.backend_names()
    if backend not in known:  # a typo, not a real backend that lacks the scheme
        return (
            "backend",
            f"unknown backend (got {json.dumps(backend)}{did_you_mean(backend, known)}); "
            f"backends for {c.job.scheme}, available: {', '.join(backends)}",
        )
    return (
        "backend",
        f"{c.job.scheme} is not available in this backend (got {json.dumps(backend)}; "
        f"available: {', '.join(backends)})",
    )


def _exchange_without_a_key(c: _Candidate) -> Problem | None:
    if c.job.exchange is None or c.spec.family in KEY_ESTABLISHING:
        return None
    return (
        "exchange",
        f"applies to key agreement and hybrid (KEM) jobs only: {c.job.scheme} ({c.spec.family.label}) establishes "
        "no key to exchange; remove exchange",
    )


def _impossible_params(c: _Candidate) -> Problem | None:
    try:
        c.scheme  # noqa: B018 (created here, so that the rules after it may read it)
    except RegistryError as exc:
        return "params", str(exc)
    return None


def _nagle_without_a_socket(c: _Candidate) -> Problem | None:
    if c.job.tcp_nodelay or c.job.mode in SESSION_MODES:
        return None
    why = (
        "operations jobs use no socket)"
        if c.job.mode == Mode.OPERATIONS
        else "a load job's connections always send at once)"
    )
    return "tcp_nodelay", "applies to loopback and remote jobs only (" + why


def _remote_without_a_receiver(c: _Candidate) -> Problem | None:
    if c.job.mode != Mode.REMOTE or c.has_remote:
        return None
    return (
        "mode",
        'mode "remote" needs a receiver: start `cryptobench serve` on the other machine '
        "and run with --remote HOST:PORT --token-file FILE",
    )


def _load_settings(c: _Candidate) -> Problem | None:
    problems = c.load_and_problems[1]
    return problems[0] if problems else None


def _cluster_over_a_link(c: _Candidate) -> Problem | None:
    if c.load is None or c.load.cluster is None or c.job.link is None:
        return None
    return (
        "cluster",
        "generators on a Dask cluster reach the server over the real network: an emulated link "
        "runs on this machine only; remove link, or cluster",
    )


def _set_but_ignored_by_load(c: _Candidate) -> Problem | None:
    if c.load is None:
        return None
    for name, why in IGNORED_BY_LOAD.items():
        value = getattr(c.job, name)
        if value != JobSpec.model_fields[name].default:
            return name, f"a load job has no use for {name}: {why} (got {value:g}); remove it"
    return None


def _load_fields_outside_load(c: _Candidate) -> Problem | None:
    if c.job.mode == Mode.LOAD or not (stray := fields_set_outside_load(c.job)):
        return None
    return stray[0], f'applies to "mode": "load" only (this job is in mode {c.job.mode})'


def _sizes_of_a_fixed_input(c: _Candidate) -> Problem | None:
    if c.scheme.info.fixed_message_size is None or c.job.message_sizes is None:
        return None
    return "message_sizes", f"{c.job.scheme} takes its input size from params.secret_size; remove message_sizes"


def _a_size_twice(c: _Candidate) -> Problem | None:
    sizes = c.sizes
    return ("message_sizes", f"lists a size twice (got {sizes})") if len(set(sizes)) != len(sizes) else None


def _over_one_block(c: _Candidate, size: int) -> str | None:
    info = c.scheme.info
    if info.max_plaintext is None or size <= info.max_plaintext:
        return None
    return (
        f"a {size}-byte message does not fit one {info.label} block (at most "
        f"{info.max_plaintext} bytes); set params.chunked to true to split it"
    )


def _over_a_session_message(c: _Candidate, size: int) -> str | None:
    if not _sent(c) or size <= MAX_SESSION_MESSAGE:
        return None
    return (
        f"a session message is at most {human(MAX_SESSION_MESSAGE)} "
        f"(got {size} bytes); use mode operations for larger ones"
    )


def _over_the_frame_cap(c: _Candidate, size: int) -> str | None:
    if not _sent(c):
        return None
    frame = job_capacity(c.scheme, [size])
    if frame <= HARD_MAX_FRAME:
        return None
    return (
        f"a {size}-byte message becomes a {human(frame)} payload "
        f"with {c.scheme.info.label}, over the {human(HARD_MAX_FRAME)} frame cap"
    )


def _over_this_machine_s_memory(c: _Candidate, size: int) -> str | None:
    needed = size * MEMORY_COPIES
    if needed <= c.memory * 0.8:
        return None
    return (
        f"a {human(size)} message needs about {human(needed)} of memory "
        f"({MEMORY_COPIES} copies); this machine has {human(c.memory)} available"
    )


def _sent(c: _Candidate) -> bool:
    """Whether the job's messages cross a connection (a session's or a load's)."""
    return c.job.mode in SESSION_MODES or c.job.mode == Mode.LOAD


#: What one message size must fit, in the order they are checked for each size.
_SIZE_RULES: tuple[Callable[[_Candidate, int], str | None], ...] = (
    _over_one_block,
    _over_a_session_message,
    _over_the_frame_cap,
    _over_this_machine_s_memory,
)


def _a_size_too_large(c: _Candidate) -> Problem | None:
    for k, size in enumerate(c.sizes):
        for rule in _SIZE_RULES:
            message = rule(c, size)
            if message is not None:
                return f"message_sizes[{k}]", message
    return None


def _tls_where_it_runs(c: _Candidate) -> Problem | None:
    """A tls13 job runs TLS's own bodies in every mode: operations, loopback and over the
    packet path (its link checked with the links), against `serve`, and under load (whose
    server authenticates itself only)."""
    if c.spec.family != Family.TLS:
        return None
    if c.job.mode == Mode.LOAD and c.job.params.get("mutual") is True:
        return (
            "params.mutual",
            "a tls13 load job's clients do not authenticate (mutual is not built for load); "
            'run it in "mode": "loopback", or remove mutual',
        )
    if c.job.tcp_connection is not None:
        return "tcp_connection", "a tls13 job opens a new TCP connection for every handshake already; remove it"
    if 0 in c.sizes:
        return "message_sizes", "a tls13 job exchanges application data after each handshake: sizes of 1 byte or more"
    return None


def _tls_not_offered(c: _Candidate) -> Problem | None:
    """A group or certificate the linked OpenSSL cannot do, with the reason and what would."""
    if c.spec.family != Family.TLS:
        return None
    # Imported here: the TLS stack loads pyOpenSSL, which reading a profile need not.
    from app.core.schemes.tls13 import Asked
    from app.core.tls.stack import refusal

    asked = Asked.of(c.scheme.info.params)
    problem = refusal(asked)
    if problem is None:
        return None
    return ("params.group" if problem.startswith("group") else "params.certificate"), problem


def _pauses_too_long(c: _Candidate) -> Problem | None:
    job, info = c.job, c.scheme.info
    count = pause_count(job.mode, info.family, len(c.sizes), job.samples, job.warmup, job.keygen_samples)
    problem = pause_problem(job.pause_ms, count)
    return None if problem is None else ("pause_ms", problem)


#: A job's checks before its links, in order: the first problem found is the one reported.
_RULES: tuple[Callable[[_Candidate], Problem | None], ...] = (
    _unknown_scheme,
    _backend_without_the_scheme,
    _exchange_without_a_key,
    _impossible_params,
    _nagle_without_a_socket,
    _remote_without_a_receiver,
    _load_settings,
    _cluster_over_a_link,
    _set_but_ignored_by_load,
    _load_fields_outside_load,
    _sizes_of_a_fixed_input,
    _a_size_twice,
    _a_size_too_large,
    _tls_where_it_runs,
    _tls_not_offered,
    _pauses_too_long,
)


def resolve_jobs(
    profile: Profile, source: str | None = None, available_memory: int | None = None, has_remote: bool = False
) -> list[ResolvedJob]:
    """Check every job against the registry and this machine; ProfileError on the first problem.

    `has_remote` says whether a `cryptobench serve` receiver was given for jobs in
    mode "remote". Each job goes through `_RULES` in order, then its links and the check
    that no job repeats another.
    """
    resolved: list[ResolvedJob] = []
    seen: dict[tuple[Any, ...], str] = {}
    memory = available_memory if available_memory is not None else psutil.virtual_memory().available
    for index, job in enumerate(profile.jobs):
        where = f"jobs[{index}]"
        candidate = _Candidate(job, memory, has_remote)
        for rule in _RULES:
            problem = rule(candidate)
            if problem is not None:
                field, message = problem
                raise ProfileError(message, source=source, field=f"{where}.{field}")
        resolved.extend(_resolved_links(index, candidate, where, source, seen))
    return resolved


def _resolved_links(
    index: int, c: _Candidate, where: str, source: str | None, seen: dict[tuple[Any, ...], str]
) -> list[ResolvedJob]:
    """The checked job as the runner runs it: one `ResolvedJob` per link of a sweep (one
    without a link), each refused if its messages would take endless time on its link or
    if it repeats a job before it (`seen`: what each job so far measures, by its place)."""
    job, info = c.job, c.scheme.info
    label = job_label(job.label, info.label, c.backend, c.exchange, job.tcp_nodelay)
    placement = job.placement or default_placement(job.mode)
    params = dict(info.params)
    resolved = []
    # A sweep ("links") is one job per link, in its order; each link's numbers are part of
    # what is measured, so two links with the same numbers are a repeat.
    for place, link in _job_links(job, where, source):
        if link is not None:
            _refuse_tls_off_the_packet_path(c, link, place, source)
            _refuse_endless_wire(job, link, c.sizes, place, source)
        _refuse_a_repeat(_measured_key(c, placement, link), c.sizes, place, link, source, seen)
        resolved.append(
            ResolvedJob(
                index=index,
                scheme=job.scheme,
                backend=c.backend,
                params=params,
                mode=job.mode,
                message_sizes=c.sizes,
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
                load=c.load,
                exchange=c.exchange,
            )
        )
    return resolved


def job_label(label: str | None, scheme_label: str, backend: str, exchange: Exchange | None, nodelay: bool) -> str:
    """A job's label in every face: the profile's, else the scheme's name and backend; a
    key-establishing job's then says its exchange pattern, " (session)" or " (per-message)"
    (also after a label the profile gave, unless it ends so already), and a session with
    Nagle's algorithm on says so."""
    text = label or f"{scheme_label} [{backend}]"
    if exchange is not None and not text.endswith(exchange.suffix):
        text += exchange.suffix
    return text + ("" if label or nodelay else " (Nagle on)")


def _measured_key(c: _Candidate, placement: PlacementPolicy, link: Link | None) -> tuple[Any, ...]:
    """What a job measures, less its sizes: two jobs with one key and a size in common repeat."""
    # Imported here: it loads the crypto libraries, which importing a profile need not.
    from app.core.schemes.dh import canonical_curve

    # A curve alias (secp256r1 = P-256) is the same job under another name: same label,
    # same numbers, so it must count as a repeat too.
    same = {
        k: canonical_curve(v) if k == "curve" and isinstance(v, str) else v for k, v in c.scheme.info.params.items()
    }
    job = c.job
    return (
        job.scheme,
        c.backend,
        json.dumps(same, sort_keys=True),
        job.mode,
        c.exchange,
        job.tcp_nodelay,
        placement,
        c.load,
        None
        if link is None
        # Everything that shapes the path is what is measured; only the preset's name is not.
        else replace(link, name=None),
    )


def _refuse_a_repeat(
    key: tuple[Any, ...],
    sizes: list[int],
    place: str,
    link: Link | None,
    source: str | None,
    seen: dict[tuple[Any, ...], str],
) -> None:
    """Refuse a job that measures, at one of its sizes, what a job before it did; else note it in `seen`."""
    for size in sizes:
        if (key, size) in seen:
            raise ProfileError(
                f"repeats {seen[(key, size)]}: same scheme, backend, parameters, mode, exchange, "
                f"transport{'' if link is None else ', link'} and message size {human(size)}",
                source=source,
                field=place,
            )
        seen[(key, size)] = place


def _refuse_tls_off_the_packet_path(c: _Candidate, link: Link, place: str, source: str | None) -> None:
    """A tls13 job over a link runs on the packet path only: each handshake opens a TCP
    connection, whose slow start and losses only the packet path puts on the link."""
    if c.spec.family == Family.TLS and link.emulation != LinkEmulation.PACKET:
        refusal = packet_path_refusal()
        raise ProfileError(
            "a tls13 job over an emulated link needs the packet path (a new TCP connection per handshake, on the "
            + (f"path); it is not available here: {refusal}" if refusal else 'path): set "link_emulation": "packet"'),
            source=source,
            field=f"{place.rsplit('.', 1)[0]}.link_emulation",
        )


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
    # A load job's too: on the packet path every client connection crosses one emulated path
    # (a bottleneck they share), on the stream relay one link process they share.
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
