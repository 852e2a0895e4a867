"""Shared by the generated bad-profile tests (test_profile_input.py, test_profile_files.py):
the JSON kinds and bounds of every field, strategies, and helpers that write a profile
and return its one-line refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

from app.core.errors import BadParameter
from app.core.profile.files import load_profile
from app.core.profile.pauses import MAX_JOB_PAUSE_S, pause_count
from app.core.profile.resolve import resolve_jobs
from app.core.schemes import registry
from app.core.schemes.base import SchemeSpec
from app.core.settings.load import IGNORED_BY_LOAD
from app.core.settings.profile import DEFAULT_MESSAGE_SIZES, FORMAT_VERSION, MAX_SAMPLES, JobSpec, ProfileError
from app.core.vocab import SESSION_MODES, Family, Mode

PLENTY = 1 << 40  # "available memory" for checks that are not about memory

FEW = settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])

#: JSON kinds each field accepts. Must list every model field (test_every_field_is_covered).
PROFILE_KINDS: dict[str, set[str]] = {
    "format_version": {"int"},
    "name": {"str"},
    "description": {"str"},
    "experiment": {"str", "null"},
    "jobs": {"list"},
    "reduced": {"bool", "null"},
    "overrides": {"dict", "null"},
    "link_seed": {"int", "null"},
}
JOB_KINDS: dict[str, set[str]] = {
    "scheme": {"str"},
    "backend": {"str", "null"},
    "params": {"dict"},
    "mode": {"str"},
    "message_sizes": {"list", "null"},
    "samples": {"int"},
    "warmup": {"int"},
    "keygen_samples": {"int"},
    "pause_ms": {"int", "float"},
    "tamper": {"int"},
    "tcp_nodelay": {"bool"},
    "label": {"str", "null"},
    "link": {"str", "dict", "null"},
    "links": {"list", "null"},
    "link_emulation": {"str", "null"},
    "tcp_congestion_control": {"str", "null"},
    "tcp_slow_start_after_idle": {"bool", "null"},
    "tcp_connection": {"str", "null"},
    "placement": {"str", "null"},
    "exchange": {"str", "null"},
    # Load mode's fields (rate_per_s: a number or "sweep").
    "clients": {"int", "null"},
    "server_workers": {"int", "null"},
    "rate_per_s": {"int", "float", "str", "null"},
    "rates": {"list", "null"},
    "duration_s": {"int", "float", "null"},
    "warmup_s": {"int", "float", "null"},
    # Load from many machines.
    "cluster": {"str", "null"},
    "generators": {"int", "null"},
    "cluster_plain_tcp": {"bool", "null"},
}
#: Integer job fields and their inclusive bounds.
INT_BOUNDS = {"samples": (1, MAX_SAMPLES), "warmup": (0, 100_000), "keygen_samples": (1, 10_000), "tamper": (0, 10_000)}

VALID_JOB: dict[str, Any] = {
    "scheme": "aes-gcm",
    "backend": "cryptography",
    "params": {"key_bits": 256},
    "message_sizes": [18],
    "samples": 3,
    "warmup": 0,
}


# --- helpers ----------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "bool"
    return {int: "int", float: "float", str: "str", list: "list", dict: "dict"}[type(value)]


def _profile(*jobs: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"format_version": FORMAT_VERSION, "name": "t", "jobs": list(jobs or [VALID_JOB]), **top}


def _jobs(count: int) -> list[dict[str, Any]]:
    """`count` valid, mutually distinct jobs."""
    return [{**VALID_JOB, "message_sizes": [18 + i]} for i in range(count)]


def _write(folder: Path, content: bytes | str | Any, name: str = "p.json") -> Path:
    path = folder / name
    if isinstance(content, str):
        content = content.encode()
    elif not isinstance(content, bytes):
        content = json.dumps(content).encode()
    path.write_bytes(content)
    return path


def _refusal(path: Path | str, memory: int = PLENTY, has_remote: bool = False) -> ProfileError:
    """Load and check a profile file as `cryptobench run` does; it must be refused."""
    with pytest.raises(ProfileError) as info:
        resolve_jobs(load_profile(path), str(path), available_memory=memory, has_remote=has_remote)
    error = info.value
    assert "\n" not in str(error), f"not one line: {error!s}"
    assert str(error).startswith(f"{path}: "), f"does not name the file: {error!s}"
    return error


def _refused_at(folder: Path, data: Any, field: str, **kwargs: Any) -> str:
    """The message for `data`, asserting it names `field` right after the file."""
    path = _write(folder, data)
    error = _refusal(path, **kwargs)
    assert error.field == field, f"field {error.field!r}, expected {field!r}: {error!s}"
    assert str(error).startswith(f"{path}: {field}: ")
    return str(error)


def _key_path(prefix: str, key: str) -> str:
    """How a message writes an object key: `.key`, or quoted when not an identifier."""
    if not key.isidentifier():
        return f"{prefix}[{json.dumps(key)}]"
    return f"{prefix}.{key}" if prefix else key


def _shown(value: Any) -> str:
    """The start of how a message shows a JSON value (long values are cut after 57 chars)."""
    return "{...}" if isinstance(value, dict) else json.dumps(value)[:40]


# JSON values of every kind; `_kind` picks out the wrong ones for a field.
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON_VALUES = SCALARS | st.lists(SCALARS, max_size=3) | st.dictionaries(st.text(max_size=6), SCALARS, max_size=3)


SPECS = list(registry.all_specs())


@st.composite
def valid_jobs(draw: st.DrawFn, specs: list[SchemeSpec] = SPECS) -> dict[str, Any]:
    """A job the registry accepts, with every optional field sometimes written out."""
    spec = draw(st.sampled_from(specs), label="scheme")
    backend = draw(st.sampled_from(spec.backends), label="backend")
    params: dict[str, Any] = {}
    for param in spec.params:
        if draw(st.booleans()):
            if param.choices:
                params[param.name] = draw(st.sampled_from(param.choices))
            elif isinstance(param.default, bool):
                params[param.name] = draw(st.booleans())
            else:
                params[param.name] = draw(st.integers(param.minimum, min(param.maximum or 64, 64)))
    try:
        scheme = spec.create(backend, params)
    except BadParameter:  # a combination a constraint forbids (e.g. tinyec has no P-521)
        assume(False)
    info = scheme.info
    # A tls13 job runs in operations and on loopback, and exchanges at least a byte of data.
    tls = info.family == Family.TLS
    modes = [Mode.OPERATIONS, Mode.LOOPBACK] if tls else list(Mode)
    mode = draw(st.sampled_from([str(m) for m in modes]), label="mode")
    job: dict[str, Any] = {"scheme": spec.scheme_id, "mode": mode}
    if backend != spec.backends[0] or draw(st.booleans()):
        job["backend"] = backend
    if bool(params) or draw(st.booleans()):
        job["params"] = params
    if info.fixed_message_size is None:
        largest = min(info.max_plaintext if info.max_plaintext is not None else 1 << 20, 1 << 20)
        job["message_sizes"] = draw(st.lists(st.integers(int(tls), largest), min_size=1, max_size=4, unique=True))
    for field, (low, high) in INT_BOUNDS.items():
        if draw(st.booleans()) and not (mode == Mode.LOAD and field in IGNORED_BY_LOAD):  # refused for load
            job[field] = draw(st.integers(low, high))
    if draw(st.booleans()) and mode != Mode.LOAD:
        # Within a field's bound and within a day of pauses for the whole job (refused beyond),
        # even with up to four sizes (tests add sizes to a copy of the job).
        defaults = JobSpec.model_fields
        sizes = max(4, len(job.get("message_sizes", DEFAULT_MESSAGE_SIZES)))
        count = pause_count(
            Mode(mode),
            info.family,
            sizes,
            job.get("samples", defaults["samples"].default),
            job.get("warmup", defaults["warmup"].default),
            job.get("keygen_samples", defaults["keygen_samples"].default),
        )
        job["pause_ms"] = draw(st.floats(0, min(60_000, MAX_JOB_PAUSE_S * 999 / max(1, count))))
    if mode in SESSION_MODES and draw(st.booleans()):
        job["tcp_nodelay"] = draw(st.booleans())
    if mode == Mode.LOAD and draw(st.booleans()):
        job["clients"] = draw(st.integers(1, 16))
        job["rates"] = draw(st.lists(st.floats(1, 10_000), min_size=1, max_size=4))
        job["duration_s"] = draw(st.floats(0.1, 10))
        if draw(st.booleans()):
            job["cluster"] = draw(st.sampled_from(["tcp://127.0.0.1:8786", "tls://scheduler.lab:8786"]))
            job["generators"] = draw(st.none() | st.integers(1, 64))
    if draw(st.booleans()):
        job["label"] = draw(st.text(max_size=30))
    return job
