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
    _bool,
    _each,
    _fail,
    _int,
    _is_int,
    _is_num,
    _join,
    _list,
    _num,
    _obj,
    _str,
    check_values,
)
from app.core.results.check_job_parts import (
    _check_cpu,
    _check_link,
    _check_load,
    _check_path,
    _check_placement,
    _check_tcp_info,
    _check_validation,
)
from app.core.results.check_metrics import check_metric
from app.core.settings.profile import (
    MAX_DESCRIPTION_CHARS,
    MAX_LABEL_CHARS,
    MAX_MESSAGE_SIZE,
    MAX_OVERRIDE_CHARS,
    MAX_OVERRIDES,
)
from app.core.statistics.stability_warnings import WarningCode
from app.core.vocab import (
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
        raise _fail("", "a JSON object at the top level", data)
    check_values(data, "")
    run = _obj(data, "run", "", required=True)
    check_run(run, "run")
    for index, job in enumerate(_list(data, "jobs", "")):
        check_job(job, f"jobs[{index}]", walk=False)


def check_run(run: dict[str, Any], path: str) -> None:
    """The run object of a results file (its jobs are checked apart)."""
    _str(run, "id", path, non_empty=True)
    _str(run, "started", path)
    _str(run, "finished", path, required=False, nullable=True)
    for key in ("started", "finished"):  # a naive or far-off time broke the window and reports
        plausible.check_time(run, key, path)
    _str(run, "status", path, choices=tuple(RunStatus))
    check_environment(_obj(run, "environment", path), _join(path, "environment"))
    check_profile(_obj(run, "profile", path), _join(path, "profile"))


def check_environment(env: dict[str, Any], path: str) -> None:
    """The keys of environment.collect_environment() that the app reads back."""
    for key in ("app_version", "hostname"):
        _str(env, key, path, required=False, nullable=True)
    _int(env, "memory_total_bytes", path, required=False, nullable=True)
    _int(env, "parallel_workers", path, low=1, required=False, nullable=True)
    cpu_path = _join(path, "cpu")
    cpu = _obj(env, "cpu", path, nullable=True)
    for key in ("model", "architecture", "flags_note"):
        _str(cpu, key, cpu_path, required=False, nullable=True)
    for key in ("physical_cores", "logical_cores"):
        _int(cpu, key, cpu_path, required=False, nullable=True)
    for key in ("freq_current_mhz", "freq_max_mhz"):
        _num(cpu, key, cpu_path, non_negative=True, required=False, nullable=True)
    flags_path = _join(cpu_path, "flags")
    _each(
        _obj(cpu, "flags", cpu_path, nullable=True), flags_path, lambda obj, key, p: _bool(obj, key, p, nullable=True)
    )
    governors = _list(cpu, "governors", cpu_path, nullable=True)
    for i, governor in enumerate(governors):
        if not isinstance(governor, str):
            raise _fail(f"{_join(cpu_path, 'governors')}[{i}]", "a string", governor)
    for section, keys in (
        ("os", ("platform", "system", "release", "pretty_name")),
        ("python", ("version", "implementation", "executable")),
    ):
        block = _obj(env, section, path, nullable=True)
        for key in keys:
            _str(block, key, _join(path, section), required=False, nullable=True)
    libraries_path = _join(path, "libraries")
    libraries = _obj(env, "libraries", path, nullable=True)
    for name in libraries:
        lib = _obj(libraries, name, libraries_path, nullable=True)
        lib_path = _join(libraries_path, name)
        for key in ("version", "openssl", "note", "integer_class"):
            _str(lib, key, lib_path, required=False, nullable=True)
        _bool(lib, "gmp", lib_path, nullable=True)
    emulation_path = _join(path, "link_emulation")
    emulation = _obj(env, "link_emulation", path, nullable=True)
    for key in ("delay_line", "netem"):
        _bool(emulation, key, emulation_path)
    _str(emulation, "netem_reason", emulation_path, required=False, nullable=True)
    _bool(emulation, "packet", emulation_path)  # recorded since the packet path exists
    _str(emulation, "packet_reason", emulation_path, required=False, nullable=True)
    if env.get("stability") is not None:  # runs from before the pre-flight have none
        _check_stability(_obj(env, "stability", path), _join(path, "stability"))


def _check_stability(stability: dict[str, Any], path: str) -> None:
    """The pre-flight's facts (preflight.facts_to_dict): a code, a status, what was found,
    and for a finding why it matters and its fix. An unknown code is kept (a newer app's)."""
    facts_path = _join(path, "facts")
    for i, fact in enumerate(_list(stability, "facts", path, required=True)):
        fact_path = f"{facts_path}[{i}]"
        if not isinstance(fact, dict):
            raise _fail(fact_path, "an object", fact)
        _str(fact, "code", fact_path, non_empty=True)
        _str(fact, "status", fact_path, choices=tuple(StabilityStatus))
        _str(fact, "found", fact_path)
        for key in ("why", "fix"):
            _str(fact, key, fact_path, required=False, nullable=True)


def check_profile(profile: dict[str, Any], path: str) -> None:
    """The profile as the run recorded it: the keys reports read (not a full profile check:
    an older or newer profile format must still open)."""
    _str(profile, "name", path, required=False, nullable=True, max_chars=MAX_LABEL_CHARS)
    _str(profile, "description", path, required=False, nullable=True, max_chars=MAX_DESCRIPTION_CHARS)
    _str(profile, "experiment", path, required=False, nullable=True)
    _int(profile, "parallel_workers", path, low=1, required=False, nullable=True)
    _bool(profile, "reduced", path, nullable=True)
    overrides = _obj(profile, "overrides", path, nullable=True)
    if len(overrides) > MAX_OVERRIDES:
        raise _fail(_join(path, "overrides"), f"at most {MAX_OVERRIDES} options", f"{len(overrides)} of them")
    for option in overrides:
        _str(overrides, option, _join(path, "overrides"), max_chars=MAX_OVERRIDE_CHARS)
    jobs_path = _join(path, "jobs")
    for index, spec in enumerate(_list(profile, "jobs", path, nullable=True)):
        where = f"{jobs_path}[{index}]"
        if not isinstance(spec, dict):
            raise _fail(where, "an object", spec)
        for key in ("scheme", "backend", "mode"):
            _str(spec, key, where, required=False, nullable=True)
        _str(spec, "label", where, required=False, nullable=True, max_chars=MAX_LABEL_CHARS)
        for key in ("samples", "warmup", "keygen_samples", "tamper"):
            _int(spec, key, where, required=False, nullable=True)
        _num(spec, "pause_ms", where, non_negative=True, required=False, nullable=True)
        _bool(spec, "tcp_nodelay", where)
        _each(_obj(spec, "params", where, nullable=True), _join(where, "params"), _param)
        sizes_path = _join(where, "message_sizes")
        for k, size in enumerate(_list(spec, "message_sizes", where, nullable=True)):
            if not _is_int(size) or not 0 <= size <= _MAX_MESSAGE_SIZE:
                raise _fail(f"{sizes_path}[{k}]", f"an integer 0..{_MAX_MESSAGE_SIZE}", size)


def _param(obj: dict[str, Any], key: str, path: str) -> None:
    value = obj[key]
    if not (isinstance(value, (str, bool)) or _is_num(value) or value is None):
        raise _fail(_join(path, key), "a string, number, boolean or null", value)


def check_job(job: Any, path: str, *, walk: bool = True) -> None:
    """One job as in a results file (or a store row after its samples are unpacked)."""
    if not isinstance(job, dict):
        raise _fail(path, "an object", job)
    if walk:
        check_values(job, path)
    _str(job, "id", path, non_empty=True)
    _int(job, "index", path, required=False)
    _str(job, "scheme", path)
    _str(job, "backend", path)
    _str(job, "label", path, required=False, max_chars=MAX_JOB_LABEL_CHARS)
    _str(job, "family", path, required=False, choices=_FAMILIES)
    _str(job, "mode", path, required=False, choices=tuple(Mode))
    _int(job, "message_size", path, high=_MAX_MESSAGE_SIZE, required=False)
    _str(job, "status", path, choices=tuple(JobStatus))
    for key in ("error", "started", "finished"):
        _str(job, key, path, required=False, nullable=True)
    for key in ("started", "finished"):
        plausible.check_time(job, key, path)
    _bool(job, "tcp_nodelay", path, nullable=True)
    _num(job, "throughput_bytes_per_s", path, non_negative=True, required=False, nullable=True)
    if job.get("link") not in (None, {}):  # both read as no link (JobResult.from_dict)
        _check_link(_obj(job, "link", path), _join(path, "link"))
    if job.get("placement") not in (None, {}):  # both read as no placement (JobResult.from_dict)
        _check_placement(_obj(job, "placement", path), _join(path, "placement"))
    if job.get("path") not in (None, {}):  # both read as no path (JobResult.from_dict)
        _check_path(_obj(job, "path", path), _join(path, "path"))
    if job.get("load") not in (None, {}):  # both read as no load (JobResult.from_dict)
        _check_load(_obj(job, "load", path), _join(path, "load"))
    _each(_obj(job, "params", path), _join(path, "params"), _param)
    metrics_path = _join(path, "metrics")
    metrics = _obj(job, "metrics", path)
    for name in metrics:
        check_metric(_obj(metrics, name, metrics_path, required=True), _join(metrics_path, name))
    _each(
        _obj(job, "wire_bytes", path), _join(path, "wire_bytes"), lambda obj, key, p: _int(obj, key, p, nullable=True)
    )
    _check_cpu(_obj(job, "cpu", path), _join(path, "cpu"))
    memory_path = _join(path, "memory")
    memory = _obj(job, "memory", path)
    for key in ("rss_peak_bytes", "traced_peak_bytes"):
        _each(
            _obj(memory, key, memory_path, nullable=True),
            _join(memory_path, key),
            lambda obj, k, p: _int(obj, k, p, nullable=True),
        )
    _check_validation(_obj(job, "validation", path), _join(path, "validation"))
    for i, warning in enumerate(_list(job, "warnings", path)):
        where = f"{_join(path, 'warnings')}[{i}]"
        if not isinstance(warning, dict):
            raise _fail(where, "an object", warning)
        _str(warning, "code", where, choices=tuple(code.value for code in WarningCode))
        _str(warning, "metric", where, required=False, nullable=True)
        _str(warning, "message", where)
        _str(warning, "fix", where, required=False, nullable=True)
    security_path = _join(path, "security")
    security = _obj(job, "security", path)
    _int(security, "classical_bits", security_path, high=100_000, required=False, nullable=True)
    _int(security, "pq_category", security_path, high=5, required=False, nullable=True)
    _bool(security, "insecure", security_path, nullable=True)
    for i, note in enumerate(_list(job, "notes", path)):
        if not isinstance(note, str):
            raise _fail(f"{_join(path, 'notes')}[{i}]", "a string", note)
    _check_tcp_info(_obj(job, "tcp_info", path), _join(path, "tcp_info"))
