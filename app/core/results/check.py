"""Validation of results data read back from outside the running process.

A results JSON file and a store row are input (docs/ARCHITECTURE.md, "Trust boundaries"): a
hand-edited or damaged one used to reach the report code and end in a traceback
there (a string where a number was, a negative count, a missing key). Every field
the app reads is checked here once, on load, and the first problem becomes one
line naming the field path and the value:

    jobs[3].metrics.encrypt.n: expected a non-negative integer, got -1

Free-form objects (environment, the profile, per-process CPU blocks) keep extra
keys, but the keys the reports read must have the right type. Anywhere in the
document a string must be encodable as UTF-8 (JSON's "\\ud800" escape decodes to a
lone surrogate that no file or socket can take) and a number must be finite.

The entry points are here (the document, the run, its environment and profile, a job);
the parts they are built from: `check_fields` (the typed field readers and the walk over
every value), `check_metrics` (a metric and its durations) and `check_job_parts` (a job's
CPU, validation, link, placement, load, TCP_INFO and packet path).
"""

from __future__ import annotations

from typing import Any

from app.core.results import plausible
from app.core.results.check_fields import (
    check_bool,
    check_each,
    check_int,
    check_list,
    check_obj,
    check_str,
    check_values,
    fail,
    is_int,
    is_num,
    join,
    num,
)
from app.core.results.check_job_parts import (
    check_cpu,
    check_link,
    check_load,
    check_path,
    check_placement,
    check_tcp_info,
    check_validation,
)
from app.core.results.check_metrics import check_metric
from app.core.results.check_tls import check_tls
from app.core.settings.profile import (
    MAX_DESCRIPTION_CHARS,
    MAX_LABEL_CHARS,
    MAX_LINK_SEED,
    MAX_MESSAGE_SIZE,
    MAX_OVERRIDE_CHARS,
    MAX_OVERRIDES,
)
from app.core.statistics.stability_warnings import WarningCode
from app.core.vocab import (
    KEY_ESTABLISHING,
    Exchange,
    Family,
    JobStatus,
    Mode,
    RunStatus,
    StabilityStatus,
)

#: A job's family may be empty (a results file from before families were recorded).
_FAMILIES = ("", *Family)
# Bounds taken from the limits the producers are held to, not copied, so the two cannot
# drift apart (tests/reliability/test_written_read_back.py writes the largest each allows):
#: A profile refuses messages over 1 GiB.
_MAX_MESSAGE_SIZE = MAX_MESSAGE_SIZE
#: A job's label: the profile's (at most MAX_LABEL_CHARS) or the scheme's, and for a job
#: over a link " over " and the link's title or numbers (`resolve_jobs`; under 300 more).
MAX_JOB_LABEL_CHARS = MAX_LABEL_CHARS + 300


def check_results(data: Any) -> None:
    """Check a decoded results JSON document; ResultsDataError on the first problem."""
    if not isinstance(data, dict):
        raise fail("", "a JSON object at the top level", data)
    check_values(data, "")
    run = check_obj(data, "run", "", required=True)
    check_run(run, "run")
    for index, job in enumerate(check_list(data, "jobs", "")):
        check_job(job, f"jobs[{index}]", walk=False)


def check_run(run: dict[str, Any], path: str) -> None:
    """The run object of a results file (its jobs are checked apart)."""
    check_str(run, "id", path, non_empty=True)
    check_str(run, "started", path)
    check_str(run, "finished", path, required=False, nullable=True)
    for key in ("started", "finished"):  # a naive or far-off time broke the window and reports
        plausible.check_time(run, key, path)
    check_str(run, "status", path, choices=tuple(RunStatus))
    check_environment(check_obj(run, "environment", path), join(path, "environment"))
    check_profile(check_obj(run, "profile", path), join(path, "profile"))


def check_environment(env: dict[str, Any], path: str) -> None:
    """The keys of environment.collect_environment() that the app reads back."""
    for key in ("app_version", "hostname"):
        check_str(env, key, path, required=False, nullable=True)
    check_int(env, "memory_total_bytes", path, required=False, nullable=True)
    check_int(env, "parallel_workers", path, low=1, required=False, nullable=True)
    cpu_path = join(path, "cpu")
    cpu = check_obj(env, "cpu", path, nullable=True)
    for key in ("model", "architecture", "flags_note"):
        check_str(cpu, key, cpu_path, required=False, nullable=True)
    for key in ("physical_cores", "logical_cores"):
        check_int(cpu, key, cpu_path, required=False, nullable=True)
    for key in ("freq_current_mhz", "freq_max_mhz"):
        num(cpu, key, cpu_path, non_negative=True, required=False, nullable=True)
    flags_path = join(cpu_path, "flags")
    check_each(
        check_obj(cpu, "flags", cpu_path, nullable=True),
        flags_path,
        lambda obj, key, p: check_bool(obj, key, p, nullable=True),
    )
    governors = check_list(cpu, "governors", cpu_path, nullable=True)
    for i, governor in enumerate(governors):
        if not isinstance(governor, str):
            raise fail(f"{join(cpu_path, 'governors')}[{i}]", "a string", governor)
    for section, keys in (
        ("os", ("platform", "system", "release", "pretty_name")),
        ("python", ("version", "implementation", "executable")),
    ):
        block = check_obj(env, section, path, nullable=True)
        for key in keys:
            check_str(block, key, join(path, section), required=False, nullable=True)
    libraries_path = join(path, "libraries")
    libraries = check_obj(env, "libraries", path, nullable=True)
    for name in libraries:
        lib = check_obj(libraries, name, libraries_path, nullable=True)
        lib_path = join(libraries_path, name)
        for key in ("version", "openssl", "note", "integer_class"):
            check_str(lib, key, lib_path, required=False, nullable=True)
        check_bool(lib, "gmp", lib_path, nullable=True)
    emulation_path = join(path, "link_emulation")
    emulation = check_obj(env, "link_emulation", path, nullable=True)
    for key in ("delay_line", "netem"):
        check_bool(emulation, key, emulation_path)
    check_str(emulation, "netem_reason", emulation_path, required=False, nullable=True)
    check_bool(emulation, "packet", emulation_path)  # recorded since the packet path exists
    check_str(emulation, "packet_reason", emulation_path, required=False, nullable=True)
    if env.get("stability") is not None:  # runs from before the pre-flight have none
        _check_stability(check_obj(env, "stability", path), join(path, "stability"))


def _check_stability(stability: dict[str, Any], path: str) -> None:
    """The pre-flight's facts (preflight.facts_to_dict): a code, a status, what was found,
    and for a finding why it matters and its fix. An unknown code is kept (a newer app's)."""
    facts_path = join(path, "facts")
    for i, fact in enumerate(check_list(stability, "facts", path, required=True)):
        fact_path = f"{facts_path}[{i}]"
        if not isinstance(fact, dict):
            raise fail(fact_path, "an object", fact)
        check_str(fact, "code", fact_path, non_empty=True)
        check_str(fact, "status", fact_path, choices=tuple(StabilityStatus))
        check_str(fact, "found", fact_path)
        for key in ("why", "fix"):
            check_str(fact, key, fact_path, required=False, nullable=True)


def check_profile(profile: dict[str, Any], path: str) -> None:
    """The profile as the run recorded it: the keys reports read (not a full profile check:
    an older or newer profile format must still open)."""
    check_str(profile, "name", path, required=False, nullable=True, max_chars=MAX_LABEL_CHARS)
    check_str(profile, "description", path, required=False, nullable=True, max_chars=MAX_DESCRIPTION_CHARS)
    check_str(profile, "experiment", path, required=False, nullable=True)
    check_int(profile, "parallel_workers", path, low=1, required=False, nullable=True)
    check_bool(profile, "reduced", path, nullable=True)
    check_int(profile, "link_seed", path, high=MAX_LINK_SEED, required=False, nullable=True)
    overrides = check_obj(profile, "overrides", path, nullable=True)
    if len(overrides) > MAX_OVERRIDES:
        raise fail(join(path, "overrides"), f"at most {MAX_OVERRIDES} options", f"{len(overrides)} of them")
    for option in overrides:
        check_str(overrides, option, join(path, "overrides"), max_chars=MAX_OVERRIDE_CHARS)
    jobs_path = join(path, "jobs")
    for index, spec in enumerate(check_list(profile, "jobs", path, nullable=True)):
        where = f"{jobs_path}[{index}]"
        if not isinstance(spec, dict):
            raise fail(where, "an object", spec)
        for key in ("scheme", "backend", "mode"):
            check_str(spec, key, where, required=False, nullable=True)
        check_str(spec, "label", where, required=False, nullable=True, max_chars=MAX_LABEL_CHARS)
        for key in ("samples", "warmup", "keygen_samples", "tamper"):
            check_int(spec, key, where, required=False, nullable=True)
        num(spec, "pause_ms", where, non_negative=True, required=False, nullable=True)
        check_bool(spec, "tcp_nodelay", where)
        check_each(check_obj(spec, "params", where, nullable=True), join(where, "params"), _param)
        sizes_path = join(where, "message_sizes")
        for k, size in enumerate(check_list(spec, "message_sizes", where, nullable=True)):
            if not is_int(size) or not 0 <= size <= _MAX_MESSAGE_SIZE:
                raise fail(f"{sizes_path}[{k}]", f"an integer 0..{_MAX_MESSAGE_SIZE}", size)


def _param(obj: dict[str, Any], key: str, path: str) -> None:
    value = obj[key]
    if not (isinstance(value, (str, bool)) or is_num(value) or value is None):
        raise fail(join(path, key), "a string, number, boolean or null", value)


def _check_exchange(job: dict[str, Any], path: str) -> None:
    """A key-establishing job's exchange pattern, if recorded; no other family has one."""
    if "exchange" not in job:
        return
    check_str(job, "exchange", path, choices=tuple(Exchange))
    family = job.get("family")
    if isinstance(family, str) and family in tuple(Family) and Family(family) not in KEY_ESTABLISHING:
        raise fail(
            join(path, "exchange"),
            "no exchange pattern (a " + str(family) + " job establishes no key)",
            job["exchange"],
        )


def check_job(job: Any, path: str, *, walk: bool = True) -> None:
    """One job as in a results file (or a store row after its samples are unpacked)."""
    if not isinstance(job, dict):
        raise fail(path, "an object", job)
    if walk:
        check_values(job, path)
    check_str(job, "id", path, non_empty=True)
    check_int(job, "index", path, required=False)
    check_str(job, "scheme", path)
    check_str(job, "backend", path)
    check_str(job, "label", path, required=False, max_chars=MAX_JOB_LABEL_CHARS)
    check_str(job, "family", path, required=False, choices=_FAMILIES)
    check_str(job, "mode", path, required=False, choices=tuple(Mode))
    check_int(job, "message_size", path, high=_MAX_MESSAGE_SIZE, required=False)
    check_str(job, "status", path, choices=tuple(JobStatus))
    for key in ("error", "started", "finished"):
        check_str(job, key, path, required=False, nullable=True)
    for key in ("started", "finished"):
        plausible.check_time(job, key, path)
    check_bool(job, "tcp_nodelay", path, nullable=True)
    _check_exchange(job, path)
    num(job, "throughput_bytes_per_s", path, non_negative=True, required=False, nullable=True)
    if job.get("link") not in (None, {}):  # both read as no link (JobResult.from_dict)
        check_link(check_obj(job, "link", path), join(path, "link"))
    if job.get("placement") not in (None, {}):  # both read as no placement (JobResult.from_dict)
        check_placement(check_obj(job, "placement", path), join(path, "placement"))
    if job.get("path") not in (None, {}):  # both read as no path (JobResult.from_dict)
        check_path(check_obj(job, "path", path), join(path, "path"))
    if job.get("load") not in (None, {}):  # both read as no load (JobResult.from_dict)
        check_load(check_obj(job, "load", path), join(path, "load"))
    if job.get("tls") not in (None, {}):  # both read as no TLS record (JobResult.from_dict)
        load = job.get("load")
        steps = load.get("steps") if isinstance(load, dict) else None
        check_tls(check_obj(job, "tls", path), join(path, "tls"), len(steps) if isinstance(steps, list) else None)
    check_each(check_obj(job, "params", path), join(path, "params"), _param)
    metrics_path = join(path, "metrics")
    metrics = check_obj(job, "metrics", path)
    for name in metrics:
        check_metric(check_obj(metrics, name, metrics_path, required=True), join(metrics_path, name))
    _late_samples_timed(job, metrics, path)
    check_each(
        check_obj(job, "wire_bytes", path),
        join(path, "wire_bytes"),
        lambda obj, key, p: check_int(obj, key, p, nullable=True),
    )
    check_cpu(check_obj(job, "cpu", path), join(path, "cpu"))
    memory_path = join(path, "memory")
    memory = check_obj(job, "memory", path)
    for key in ("rss_peak_bytes", "traced_peak_bytes"):
        check_each(
            check_obj(memory, key, memory_path, nullable=True),
            join(memory_path, key),
            lambda obj, k, p: check_int(obj, k, p, nullable=True),
        )
    check_validation(check_obj(job, "validation", path), join(path, "validation"))
    for i, warning in enumerate(check_list(job, "warnings", path)):
        where = f"{join(path, 'warnings')}[{i}]"
        if not isinstance(warning, dict):
            raise fail(where, "an object", warning)
        check_str(warning, "code", where, choices=tuple(code.value for code in WarningCode))
        check_str(warning, "metric", where, required=False, nullable=True)
        check_str(warning, "message", where)
        check_str(warning, "fix", where, required=False, nullable=True)
    security_path = join(path, "security")
    security = check_obj(job, "security", path)
    check_int(security, "classical_bits", security_path, high=100_000, required=False, nullable=True)
    check_int(security, "pq_category", security_path, high=5, required=False, nullable=True)
    check_bool(security, "insecure", security_path, nullable=True)
    for i, note in enumerate(check_list(job, "notes", path)):
        if not isinstance(note, str):
            raise fail(f"{join(path, 'notes')}[{i}]", "a string", note)
    check_tcp_info(check_obj(job, "tcp_info", path), join(path, "tcp_info"))


def _late_samples_timed(job: dict[str, Any], metrics: dict[str, Any], path: str) -> None:
    """A path's late round trips are among the size's timed ones: a session's floor pings
    and messages, each counted once in `floor_rtt` and `rtt`; a tls13 job's connections,
    each one `connect` sample."""
    link_path = job.get("path")
    late = link_path.get("late_samples") if isinstance(link_path, dict) else None
    if not late:
        return
    timed = sum(metrics[name]["n"] for name in ("floor_rtt", "rtt") if name in metrics)
    if "rtt" not in metrics and "connect" in metrics:
        timed = metrics["connect"]["n"]
    if late > timed:
        raise fail(join(join(path, "path"), "late_samples"), f"at most the {timed} timed round trips", late)
