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
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, TypeGuard

import numpy as np

from app.core.analysis.stats import WarningCode
from app.core.link.presets import MAX_DELAY_MS, MAX_RATE_KBIT
from app.core.load.settings import (
    MAX_CLIENTS,
    MAX_DURATION_S,
    MAX_RATE_PER_S,
    MAX_SERVER_WORKERS,
    MAX_STEPS,
    MAX_WARMUP_S,
)
from app.core.profile.model import MAX_MESSAGE_SIZE, MAX_SAMPLES
from app.core.results import plausible
from app.core.results.errors import ResultsDataError
from app.core.results.job_records import MAX_QUEUE_BYTES, MAX_QUEUE_PACKETS, TCP_INFO_COUNTS
from app.core.schemes.base import Family
from app.core.vocab import (
    CongestionControl,
    JobStatus,
    LinkEmulation,
    Mode,
    PlacementPolicy,
    RunStatus,
    StabilityStatus,
    TcpConnection,
)

#: A job's family may be empty (a results file from before families were recorded).
_FAMILIES = ("", *Family)
#: Integers beyond SQLite's and most JSON readers' range are not results.
_MAX_INT = (1 << 63) - 1
# Bounds taken from the limits the producers are held to, not copied, so the two cannot
# drift apart (tests/reliability/test_written_read_back.py writes the largest each allows):
#: A profile refuses messages over 1 GiB.
_MAX_MESSAGE_SIZE = MAX_MESSAGE_SIZE
#: Samples per metric: a profile's `samples`, and what a load step keeps (its generator
#: samples 1 in k requests past this, `app.core.load.generator.sample_stride`).
_MAX_SAMPLES = MAX_SAMPLES
#: A link's one-way delay and rate (app.core.link.presets).
_MAX_LINK_DELAY_MS = int(MAX_DELAY_MS)
_MAX_LINK_RATE_KBIT = int(MAX_RATE_KBIT)
#: A time, size or rate beyond this is not a measurement (an operation lasting 30 years,
#: a 1 EB message); it also keeps arithmetic in the charts far from overflow.
MAX_MAGNITUDE = 1e18
_MAX_DEPTH = 64


# --- paths and messages ----------------------------------------------------------------


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier() and key.isascii():
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"  # "my metric", "a\nb", "\ud800": quoted, escaped, one line


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array" if value else "[]"
    try:
        text = json.dumps(value)  # ensure_ascii: control characters and surrogates come out escaped
    except ValueError:
        text = repr(value)
    return text[:57] + "..." if len(text) > 60 else text


def _fail(path: str, expected: str, value: Any) -> ResultsDataError:
    return ResultsDataError(path, f"expected {expected}, got {_shown(value)}")


# --- scalar checks ---------------------------------------------------------------------


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _field(obj: dict[str, Any], key: str, path: str, *, required: bool) -> tuple[str, Any]:
    """The field's path and value; a missing required field is the error, a missing
    optional one reads as None (callers return None for it)."""
    where = _join(path, key)
    if key not in obj and required:
        raise ResultsDataError(where, "required field is missing")
    return where, obj.get(key)


def _is_num(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and abs(value) <= MAX_MAGNITUDE
    )


def _int(
    obj: dict[str, Any],
    key: str,
    path: str,
    *,
    low: int = 0,
    high: int = _MAX_INT,
    required: bool = True,
    nullable: bool = False,
) -> int | None:
    where, value = _field(obj, key, path, required=required)
    if value is None and (nullable or key not in obj):
        return None
    if not _is_int(value) or not low <= value <= high:
        kind = (
            "a non-negative integer"
            if low == 0 and high == _MAX_INT
            else f"an integer {low}..{high}"
            if high != _MAX_INT
            else f"an integer >= {low}"
        )
        raise _fail(where, kind + (" or null" if nullable else ""), value)
    return value


def _num(
    obj: dict[str, Any],
    key: str,
    path: str,
    *,
    non_negative: bool = False,
    positive: bool = False,
    required: bool = True,
    nullable: bool = False,
) -> float | None:
    where, value = _field(obj, key, path, required=required)
    if value is None and (nullable or key not in obj):
        return None
    ok = _is_num(value) and not (non_negative and value < 0) and not (positive and value <= 0)
    if not ok:
        kind = "a positive number" if positive else "a non-negative number" if non_negative else "a finite number"
        raise _fail(where, kind + (" or null" if nullable else ""), value)
    return float(value)


def _str(
    obj: dict[str, Any],
    key: str,
    path: str,
    *,
    required: bool = True,
    nullable: bool = False,
    choices: tuple[str, ...] | None = None,
    non_empty: bool = False,
) -> str | None:
    where, value = _field(obj, key, path, required=required)
    if value is None and (nullable or key not in obj):
        return None
    if choices is not None and value not in choices:
        raise _fail(where, "one of " + ", ".join(json.dumps(c) for c in choices if c), value)
    if not isinstance(value, str) or (non_empty and not value):
        raise _fail(
            where, ("a non-empty string" if non_empty else "a string") + (" or null" if nullable else ""), value
        )
    return value


def _bool(obj: dict[str, Any], key: str, path: str, *, nullable: bool = False) -> None:
    if key in obj and not (isinstance(obj[key], bool) or (nullable and obj[key] is None)):
        raise _fail(_join(path, key), "true, false or null" if nullable else "true or false", obj[key])


def _obj(obj: dict[str, Any], key: str, path: str, *, required: bool = False, nullable: bool = False) -> dict[str, Any]:
    """The object at `key` ({} when absent and optional, or null and nullable)."""
    where = _join(path, key)
    if key not in obj:
        if required:
            raise ResultsDataError(where, "required field is missing")
        return {}
    value = obj[key]
    if value is None and nullable:
        return {}
    if not isinstance(value, dict):
        raise _fail(where, "an object" + (" or null" if nullable else ""), value)
    return value


def _list(obj: dict[str, Any], key: str, path: str, *, required: bool = False, nullable: bool = False) -> list[Any]:
    where = _join(path, key)
    if key not in obj:
        if required:
            raise ResultsDataError(where, "required field is missing")
        return []
    value = obj[key]
    if value is None and nullable:
        return []
    if not isinstance(value, list):
        raise _fail(where, "an array" + (" or null" if nullable else ""), value)
    return value


def _each(mapping: dict[str, Any], path: str, check: Callable[[dict[str, Any], str, str], Any]) -> None:
    for key in mapping:
        check(mapping, key, path)


# --- the whole document ------------------------------------------------------------------


def check_values(value: Any, path: str) -> None:
    """Every string encodable, every number finite and in range, nesting bounded.

    Iterative: a hostile file may nest deeply; the path is built only on failure.
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        problem = None
        if len(loc) > _MAX_DEPTH:
            problem = f"nested deeper than {_MAX_DEPTH} levels"
        elif isinstance(item, str):
            if not _encodable(item):
                problem = f"text that cannot be written as UTF-8 (a lone surrogate), got {_shown(item)}"
        elif isinstance(item, float):
            if not math.isfinite(item):
                problem = f"expected a finite number, got {_shown(item)}"
        elif _is_int(item):
            if abs(item) > _MAX_INT:
                problem = f"expected an integer within ±2**63, got {_shown(item)}"
        elif isinstance(item, dict):
            for key, child in item.items():
                if not _encodable(key):
                    problem = f"a key that cannot be written as UTF-8 (a lone surrogate), got {_shown(key)}"
                    break
                stack.append((child, (*loc, key)))
        elif isinstance(item, list):
            if not _all_finite_floats(item):  # samples (most of a file) skip the per-item walk
                stack.extend((child, (*loc, i)) for i, child in enumerate(item))
        if problem is not None:
            where = path
            for part in loc:
                where = _join(where, part)
            raise ResultsDataError(where, problem)


def _all_finite_floats(values: list[Any], limit: float = math.inf) -> bool:
    """Whether every item is a float (an int too, when `limit` is finite) that is finite and
    within ±limit: one vectorised check for a list of 100,000 samples, where a loop in
    Python took seconds per file. False sends the caller to its per-item check, which
    names the first bad item."""
    if not values:
        return True
    kinds = (float, int) if math.isfinite(limit) else (float,)
    if not all(type(x) in kinds for x in values):  # type(): bool is an int subclass, and not a sample
        return False
    try:
        array = np.asarray(values, dtype=np.float64)
    except OverflowError:  # an int beyond float64
        return False
    return bool(np.isfinite(array).all()) and float(np.abs(array).max()) <= limit


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
    for key in ("name", "description", "experiment"):
        _str(profile, key, path, required=False, nullable=True)
    _int(profile, "parallel_workers", path, low=1, required=False, nullable=True)
    jobs_path = _join(path, "jobs")
    for index, spec in enumerate(_list(profile, "jobs", path, nullable=True)):
        where = f"{jobs_path}[{index}]"
        if not isinstance(spec, dict):
            raise _fail(where, "an object", spec)
        for key in ("scheme", "backend", "mode", "label"):
            _str(spec, key, where, required=False, nullable=True)
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
    _str(job, "label", path, required=False)
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


def check_metric(metric: dict[str, Any], path: str) -> None:
    _str(metric, "unit", path)
    n = _int(metric, "n", path, low=1, high=_MAX_SAMPLES)
    assert n is not None
    values = {
        key: _num(metric, key, path) for key in ("mean", "median", "min", "max", "p5", "p25", "p75", "p95", "p99")
    }
    _num(metric, "std", path, non_negative=True)
    _num(metric, "cv", path, non_negative=True, required=False, nullable=True)
    low, high, median = values["min"], values["max"], values["median"]
    assert low is not None and high is not None and median is not None
    if not low <= median <= high:
        raise ResultsDataError(path, f"min <= median <= max does not hold (got {low!r}, {median!r}, {high!r})")
    ci = _list(metric, "ci95", path, nullable=True)
    if (
        "ci95" in metric
        and metric["ci95"] is not None
        and (len(ci) != 2 or not all(_is_num(v) for v in ci) or ci[0] > ci[1])
    ):
        raise _fail(_join(path, "ci95"), "null or [low, high] with low <= high", metric["ci95"])
    outliers = _int(metric, "outliers", path)
    assert outliers is not None
    if outliers > n:
        raise _fail(_join(path, "outliers"), f"at most n ({n})", outliers)
    indices_path = _join(path, "outlier_indices")
    for i, index in enumerate(_list(metric, "outlier_indices", path, nullable=True)):
        if not _is_int(index) or not 0 <= index < n:
            raise _fail(f"{indices_path}[{i}]", f"a sample index 0..{n - 1}", index)
    _int(metric, "batch", path, low=1, required=False)
    _int(metric, "traced_peak_bytes", path, required=False, nullable=True)
    _num(metric, "throughput_bytes_per_s", path, non_negative=True, required=False, nullable=True)
    if "samples" in metric:
        samples = _list(metric, "samples", path)
        if len(samples) != n:
            raise ResultsDataError(_join(path, "samples"), f"expected n = {n} samples, got {len(samples)}")
        for i, sample in enumerate([] if _all_finite_floats(samples, MAX_MAGNITUDE) else samples):
            if not _is_num(sample):
                raise _fail(f"{_join(path, 'samples')}[{i}]", "a finite number", sample)
    check_metric_magnitudes(metric, path)
    plausible.check_metric_plausible(metric, path)


def _check_cpu(cpu: dict[str, Any], path: str) -> None:
    """{"worker" | "sender" | "receiver": {samples, mean_percent, ...}, "interval_s": seconds}."""
    for key, block in cpu.items():
        if key == "interval_s":
            _num(cpu, key, path, positive=True, nullable=True)
            continue
        block = _obj(cpu, key, path, nullable=True)
        where = _join(path, key)
        _int(block, "samples", where, required=False, nullable=True)
        _int(block, "rss_peak_bytes", where, required=False, nullable=True)
        for name in ("mean_percent", "max_percent", "other_processes_mean_percent"):
            _num(block, name, where, non_negative=True, required=False, nullable=True)
        plausible.check_cpu_plausible(block, where)


def _check_link(link: dict[str, Any], path: str) -> None:
    """{"name", "delay_ms", "jitter_ms", "rate_kbit": {"up", "down"}, "loss_percent", "emulation"}
    (job_records.Link): numbers a link could have been emulated with."""
    _str(link, "name", path, required=False, nullable=True)
    delay = _num(link, "delay_ms", path, non_negative=True)
    assert delay is not None
    if delay > _MAX_LINK_DELAY_MS:
        raise _fail(_join(path, "delay_ms"), f"at most {_MAX_LINK_DELAY_MS} ms", link["delay_ms"])
    jitter = _num(link, "jitter_ms", path, non_negative=True, required=False) or 0.0
    if jitter > delay:
        raise _fail(_join(path, "jitter_ms"), f"at most delay_ms ({delay!r})", link["jitter_ms"])
    rate_path = _join(path, "rate_kbit")
    rate = _obj(link, "rate_kbit", path, nullable=True)
    for direction in ("up", "down"):
        value = _num(rate, direction, rate_path, positive=True, required=False, nullable=True)
        if value is not None and value > _MAX_LINK_RATE_KBIT:
            raise _fail(_join(rate_path, direction), f"at most {_MAX_LINK_RATE_KBIT} kbit/s or null", value)
    loss = _num(link, "loss_percent", path, non_negative=True, required=False)
    if loss is not None and loss > 100:
        raise _fail(_join(path, "loss_percent"), "a percentage 0..100", link["loss_percent"])
    emulation = _str(link, "emulation", path, choices=tuple(LinkEmulation))
    _str(link, "congestion_control", path, required=False, nullable=True, choices=tuple(CongestionControl))
    _bool(link, "slow_start_after_idle", path, nullable=True)
    _int(link, "queue_packets", path, low=1, high=MAX_QUEUE_PACKETS, required=False, nullable=True)
    _int(link, "queue_bytes", path, low=1500, high=MAX_QUEUE_BYTES, required=False, nullable=True)
    if link.get("burst_loss") is not None:
        bursts_path = _join(path, "burst_loss")
        bursts = _obj(link, "burst_loss", path)
        for key in ("p_percent", "r_percent", "bad_loss_percent", "good_loss_percent"):
            value = _num(bursts, key, bursts_path, non_negative=True, required=key in ("p_percent", "r_percent"))
            if value is not None and value > 100:
                raise _fail(_join(bursts_path, key), "a percentage 0..100", value)
        if bursts["r_percent"] == 0:
            raise _fail(_join(bursts_path, "r_percent"), "a percentage above 0 (the bad state must end)", 0)
    connection = _str(link, "connection", path, required=False, choices=tuple(TcpConnection))
    if connection == TcpConnection.FRESH and emulation != LinkEmulation.PACKET:
        # Only the packet path puts the kernel's TCP on the link; a relay's fresh connection
        # would start slow on loopback, not on the path.
        raise _fail(_join(path, "connection"), 'fresh only with "emulation": "packet"', connection)


def _check_placement(placement: dict[str, Any], path: str) -> None:
    """Where a job's processes ran (job_records.Placement): a policy, and per role lists of
    CPU numbers (non-negative integers)."""
    _str(placement, "policy", path, choices=tuple(PlacementPolicy))
    _str(placement, "unavailable", path, required=False, nullable=True)
    processes_path = _join(path, "processes")
    processes = _obj(placement, "processes", path, nullable=True)
    for role in processes:
        role_path = _join(processes_path, role)
        process = _obj(processes, role, processes_path, required=True)
        for key in ("allowed_cpus", "observed_cpus"):
            cpus = _list(process, key, role_path)
            for i, cpu in enumerate(cpus):
                if not _is_int(cpu) or cpu < 0:
                    raise _fail(f"{_join(role_path, key)}[{i}]", "a CPU number (a non-negative integer)", cpu)


#: A load step's histogram: HdrHistogram's compressed base64 (a few hundred bytes to a few KiB).
_MAX_HISTOGRAM_CHARS = 1 << 20
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _check_load(load: dict[str, Any], path: str) -> None:
    """A load job's record (job_records.Load): counts, rates, and per step the figures
    and the histogram's encoded form (checked as text here; decoded only by code that
    bounds what it accepts)."""
    _int(load, "clients", path, low=1, high=MAX_CLIENTS)
    _int(load, "server_workers", path, low=1, high=MAX_SERVER_WORKERS, required=False)
    _str(load, "request", path, required=False)
    _int(load, "pool", path, required=False)
    for key in (
        "duration_s",
        "warmup_s",
        "client_prepare_s",
        "server_request_s",
        "knee_per_s",
        "sustained_per_s",
        "sustained_p99_s",
    ):
        _num(load, key, path, non_negative=True, required=False, nullable=True)
    for key, most in (("duration_s", MAX_DURATION_S), ("warmup_s", MAX_WARMUP_S)):
        if key in load and load[key] is not None and load[key] > most:
            raise _fail(_join(path, key), f"at most {most:g} s (the profile's limit)", load[key])
    _bool(load, "saturated", path)
    if len(_list(load, "steps", path)) > MAX_STEPS:
        raise _fail(_join(path, "steps"), f"at most {MAX_STEPS} steps", f"{len(load['steps'])} steps")
    steps_path = _join(path, "steps")
    for i, step in enumerate(_list(load, "steps", path)):
        where = f"{steps_path}[{i}]"
        if not isinstance(step, dict):
            raise _fail(where, "an object", step)
        offered = _num(step, "offered_per_s", where, positive=True)
        if offered is not None and offered > MAX_RATE_PER_S:
            raise _fail(
                _join(where, "offered_per_s"), f"at most {MAX_RATE_PER_S:,.0f} requests/s", step["offered_per_s"]
            )
        _num(step, "achieved_per_s", where, non_negative=True)
        for key in ("errors", "sent", "completed", "missed"):
            _int(step, key, where, required=False)
        _bool(step, "generator_saturated", where)
        if step.get("missed") and not step["generator_saturated"]:
            # A step that did not send its schedule did not offer its rate: never the server's figure.
            raise _fail(_join(where, "generator_saturated"), "true for a step with missed requests", False)
        for key in ("generator_cpu_percent", "send_lag_p99_s", "server_cpu_percent"):
            _num(step, key, where, non_negative=True, required=False, nullable=True)
        _str(step, "saturation_reason", where, required=False, nullable=True)
        latency = _obj(step, "latency_s", where, nullable=True)
        for name in latency:
            _num(latency, name, _join(where, "latency_s"), non_negative=True)
        histogram = _str(step, "histogram", where, required=False, nullable=True)
        if histogram is not None and (len(histogram) > _MAX_HISTOGRAM_CHARS or not _BASE64.fullmatch(histogram)):
            raise _fail(
                _join(where, "histogram"),
                f"HdrHistogram's base64 form (at most {_MAX_HISTOGRAM_CHARS} characters)",
                histogram[:40],
            )
    plausible.check_load_plausible(load, path)


def _check_validation(validation: dict[str, Any], path: str) -> None:
    checked = _int(validation, "checked", path, required=False) or 0
    failed = _int(validation, "failed", path, required=False) or 0
    tried = _int(validation, "tamper_tried", path, required=False) or 0
    rejected = _int(validation, "tamper_rejected", path, required=False) or 0
    if failed > checked:
        raise _fail(_join(path, "failed"), f"at most checked ({checked})", failed)
    if rejected > tried:
        raise _fail(_join(path, "tamper_rejected"), f"at most tamper_tried ({tried})", rejected)


def _check_tcp_info(tcp_info: dict[str, Any], path: str) -> None:
    """{"sender" | "receiver": {smoothed_rtt_s, rtt_var_s, segments_out, ...} or {"unavailable": reason}}."""
    for role in tcp_info:
        info = _obj(tcp_info, role, path, required=True)
        where = _join(path, role)
        if _str(info, "unavailable", where, required=False, nullable=True) is not None:
            continue
        for key in ("smoothed_rtt_s", "rtt_var_s"):
            _num(info, key, where, non_negative=True, required=False, nullable=True)
        for key in TCP_INFO_COUNTS:
            _int(info, key, where, required=False, nullable=True)


def _check_path(link_path: dict[str, Any], path: str) -> None:
    """A packet link's path over a size (link_path.LinkPath): counts a path could have."""
    for direction in ("up", "down"):
        where = _join(path, direction)
        counts = _obj(link_path, direction, path, required=True)
        for key in ("packets_in", "bytes_in", "packets_out", "bytes_out", "dropped_queue", "dropped_loss"):
            _int(counts, key, where)
        if counts["dropped_queue"] + counts["dropped_loss"] > counts["packets_in"]:
            raise _fail(_join(where, "dropped_loss"), "no more drops than packets in", counts["dropped_loss"])
        _num(counts, "loss_rate", where, non_negative=True, required=False, nullable=True)
        interval = _list(counts, "loss_ci95", where, nullable=True)
        if interval and not (len(interval) == 2 and all(_is_num(v) and 0 <= v <= 1 for v in interval)):
            raise _fail(_join(where, "loss_ci95"), "two proportions from 0 to 1", interval)
    for key in ("late_p50_s", "late_p99_s", "late_max_s"):
        _num(link_path, key, path, non_negative=True, nullable=True)
    _num(link_path, "emulator_cpu_s", path, non_negative=True)
    _bool(link_path, "late", path)
    _bool(link_path, "slow_start_after_idle", path, nullable=True)
    _bool(link_path, "realtime", path)
    _str(link_path, "congestion_control", path, required=False, nullable=True)
    _int(link_path, "read_late_packets", path, required=False, nullable=True)
    _int(link_path, "device_dropped", path, required=False, nullable=True)
    _num(link_path, "late_limit_s", path, non_negative=True, required=False, nullable=True)
    _num(link_path, "read_late_max_s", path, non_negative=True, required=False, nullable=True)
    _int(link_path, "queue_packets", path, low=1, required=False, nullable=True)
    _int(link_path, "queue_bytes", path, low=1, required=False, nullable=True)


# --- physically possible durations ----------------------------------------------------------

#: Every metric is a duration in seconds (unit "s"); these are the durations a timed
#: operation can take on any machine. Below: the clocks tick in nanoseconds
#: (`time.perf_counter_ns`) and the cheapest call the app times, a Python call into a
#: library, costs tens of them, so a sample under 1 ns (5e-324 s, 1e-300 s) was never
#: measured. Batched operations are reported per operation, and still cost more than 1 ns.
MIN_SAMPLE_SECONDS = 1e-9
#: Above: a session waits at most `reply_timeout` (600 s by default) for one answer, a load
#: step lasts at most 600 s, and the slowest single operation the app offers (an
#: RSA-16384 key, a chunked ElGamal-4096 open of a large message) takes minutes; a day
#: is far beyond all of them, and keeps every ratio of two samples (at most 8.64e13)
#: finite and printable.
MAX_SAMPLE_SECONDS = 86_400.0
#: The fields of a metric that are samples or statistics of them (hence durations too).
_DURATION_FIELDS = ("min", "max", "median", "mean", "p5", "p25", "p75", "p95", "p99")


def duration_problem(value: float) -> str | None:
    """Why `value` (seconds) cannot be a timed operation's duration, or None."""
    if not MIN_SAMPLE_SECONDS <= value <= MAX_SAMPLE_SECONDS:
        return (
            f"{value!r} s is not a duration any machine measures "
            f"({MIN_SAMPLE_SECONDS:g} s to {MAX_SAMPLE_SECONDS:g} s, 1 ns to a day)"
        )
    return None


def sample_magnitude_problem(samples: Any) -> tuple[int, str] | None:
    """The index of the first sample that is not a possible duration and why, or None.
    Vectorised: a metric may hold 1,000,000 samples. Non-finite samples are found here too."""
    array = np.asarray(samples, dtype=np.float64)
    if not array.size:
        return None
    with np.errstate(invalid="ignore"):
        bad = ~((array >= MIN_SAMPLE_SECONDS) & (array <= MAX_SAMPLE_SECONDS))
    if not bad.any():
        return None
    index = int(np.argmax(bad))
    return index, duration_problem(float(array[index])) or "not a duration"


def check_metric_magnitudes(metric: dict[str, Any], path: str) -> None:
    """A time metric's (unit "s") statistics, interval and samples are possible durations.
    Called after `check_metric` (types, finiteness and order are already checked); samples
    that are still packed (a store row) are checked by the store once unpacked."""
    if metric.get("unit") != "s":
        return
    for key in _DURATION_FIELDS:
        problem = duration_problem(float(metric[key]))
        if problem is not None:
            raise ResultsDataError(_join(path, key), problem)
    ci = metric.get("ci95")
    for i, value in enumerate(ci if isinstance(ci, list) else ()):
        problem = duration_problem(float(value))
        if problem is not None:
            raise ResultsDataError(f"{_join(path, 'ci95')}[{i}]", problem)
    samples = metric.get("samples")
    if isinstance(samples, list):
        found = sample_magnitude_problem(samples)
        if found is not None:
            raise ResultsDataError(f"{_join(path, 'samples')}[{found[0]}]", found[1])
