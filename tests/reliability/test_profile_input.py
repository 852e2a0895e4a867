"""Bad profiles, generated: every one is refused with one line naming file, field and value.

tests/core/profile/test_profile.py pins one example per check; here hypothesis varies the field,
the wrong value and the place in the file, so a check that only works for the example
(or a new field nobody wired up) fails. Each refusal must be a ProfileError whose text
starts with the file and the field path (`p.json: jobs[2].samples: ...`) and shows the
value; never another exception, never a silent acceptance.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from app.core.errors import BadParameter
from app.core.profile.edits import reduced, with_samples
from app.core.profile.files import load_profile, parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.profile.sizes import human
from app.core.schemes import registry
from app.core.schemes.base import ParamSpec, SchemeSpec
from app.core.settings.load import IGNORED_BY_LOAD, LOAD_FIELD_NAMES
from app.core.settings.profile import (
    MAX_DESCRIPTION_CHARS,
    MAX_LABEL_CHARS,
    MAX_MESSAGE_SIZE,
    MAX_SAMPLES,
    MEMORY_COPIES,
    JobSpec,
    Profile,
    ProfileError,
)
from app.core.vocab import SESSION_MODES, Family
from tests.helpers.profile_cases import (
    FEW,
    INT_BOUNDS,
    JOB_KINDS,
    JSON_VALUES,
    MANY,
    PLENTY,
    PROFILE_KINDS,
    SCALARS,
    SPECS,
    VALID_JOB,
    _jobs,
    _key_path,
    _kind,
    _profile,
    _refused_at,
    _shown,
    valid_jobs,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("profiles")


def test_every_field_is_covered() -> None:
    """A field added to the models without a row here would escape the type properties."""
    assert set(PROFILE_KINDS) == set(Profile.model_fields)
    assert set(JOB_KINDS) == set(JobSpec.model_fields)
    for name, (low, high) in INT_BOUNDS.items():
        metadata = JobSpec.model_fields[name].metadata
        assert any(getattr(m, "ge", None) == low for m in metadata), name
        assert any(getattr(m, "le", None) == high for m in metadata), name


# --- wrong JSON types -------------------------------------------------------------------


@MANY
@given(field=st.sampled_from(sorted(JOB_KINDS)), value=JSON_VALUES, index=st.integers(0, 2), count=st.integers(1, 3))
def test_job_field_of_wrong_type_is_refused(folder: Path, field: str, value: Any, index: int, count: int) -> None:
    """Strings, floats (also 3.0), lists, objects, null and booleans (true is not 1) where
    the field wants another JSON type: refused at jobs[i].field, showing the value."""
    assume(_kind(value) not in JOB_KINDS[field])
    index = min(index, count - 1)
    jobs = _jobs(count)
    jobs[index] = {**jobs[index], field: value}
    message = _refused_at(folder, _profile(*jobs), f"jobs[{index}].{field}")
    assert f"(got {_shown(value)}" in message


@MANY
@given(field=st.sampled_from(sorted(PROFILE_KINDS)), value=JSON_VALUES)
def test_profile_field_of_wrong_type_is_refused(folder: Path, field: str, value: Any) -> None:
    assume(_kind(value) not in PROFILE_KINDS[field])
    message = _refused_at(folder, _profile(**{field: value}), field)
    assert f"(got {_shown(value)}" in message


@pytest.mark.parametrize("field", ["samples", "warmup", "keygen_samples", "tamper"])
@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_not_integers(folder: Path, field: str, value: bool) -> None:
    """Python's bool is an int: pydantic's lax mode used to read `"samples": true` as 1."""
    message = _refused_at(folder, _profile({**VALID_JOB, field: value}), f"jobs[0].{field}")
    assert "valid integer" in message and f"(got {json.dumps(value)})" in message


@pytest.mark.parametrize("value", [1, 0, "true", "no", "off", 1.0])
def test_tcp_nodelay_takes_only_true_or_false(folder: Path, value: Any) -> None:
    """Lax mode read "no" and 0 as false and ran with Nagle's algorithm on."""
    job = {**VALID_JOB, "mode": "loopback", "tcp_nodelay": value}
    message = _refused_at(folder, _profile(job), "jobs[0].tcp_nodelay")
    assert "valid boolean" in message and f"(got {json.dumps(value)})" in message


@FEW
@given(value=JSON_VALUES, position=st.integers(0, 2))
def test_message_size_of_wrong_type_is_refused(folder: Path, value: Any, position: int) -> None:
    """One bad item in the list is named by its index ("1024" and 1024.0 included)."""
    assume(_kind(value) != "int")
    sizes: list[Any] = [64, 128, 256]
    sizes[position] = value
    message = _refused_at(folder, _profile({**VALID_JOB, "message_sizes": sizes}), f"jobs[0].message_sizes[{position}]")
    assert f"(got {_shown(value)}" in message


@FEW
@given(sizes=st.lists(st.integers(0, 4096), min_size=1, max_size=5), data=st.data())
def test_a_size_listed_twice_is_refused(folder: Path, sizes: list[int], data: st.DataObject) -> None:
    """[64, 64] would measure the same thing twice under one job."""
    repeated = data.draw(st.sampled_from(sizes), label="repeated")
    sizes = [*sizes, repeated]
    message = _refused_at(
        folder,
        _profile({**VALID_JOB, "scheme": "sha256", "params": {}, "message_sizes": sizes}),
        "jobs[0].message_sizes",
    )
    assert f"lists a size twice (got {sizes})" in message


@FEW
@given(
    value=st.none()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.lists(SCALARS, max_size=2)
    | st.dictionaries(st.text(max_size=4), SCALARS, max_size=2)
)
def test_param_value_of_non_scalar_type_is_refused(folder: Path, value: Any) -> None:
    """Parameters are integers, strings or booleans: anything else is named by its key."""
    job = {**VALID_JOB, "params": {"key_bits": value}}
    message = _refused_at(folder, _profile(job), "jobs[0].params.key_bits")
    assert "integer, string or boolean" in message
    assert f"(got {_shown(value)}" in message


@FEW
@given(key=st.text(min_size=1, max_size=12), value=JSON_VALUES, where=st.sampled_from(["job", "profile"]))
def test_unknown_fields_are_refused(folder: Path, key: str, value: Any, where: str) -> None:
    """A misspelt field ("sample") must not be ignored while its default runs."""
    if where == "job":
        assume(key not in JOB_KINDS)
        data, field = _profile({**VALID_JOB, key: value}), _key_path("jobs[0]", key)
    else:
        assume(key not in PROFILE_KINDS)
        data, field = {**_profile(), key: value}, _key_path("", key)
    assert "unknown field" in _refused_at(folder, data, field)  # one line even for "a\nb"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"jobs": [VALID_JOB]}, "name"),
        ({"name": "x"}, "jobs"),
        ({"name": "x", "jobs": [{k: v for k, v in VALID_JOB.items() if k != "scheme"}]}, "jobs[0].scheme"),
    ],
)
def test_missing_required_field(folder: Path, data: dict[str, Any], field: str) -> None:
    assert "required field is missing" in _refused_at(folder, data, field)


# --- out of range -----------------------------------------------------------------------


@MANY
@given(field=st.sampled_from(sorted(INT_BOUNDS)), data=st.data())
def test_integer_out_of_range_is_refused(folder: Path, field: str, data: st.DataObject) -> None:
    """Zero or negative counts, and counts past the bound (10**12 samples included)."""
    low, high = INT_BOUNDS[field]
    value = data.draw(
        st.integers(max_value=low - 1) | st.integers(min_value=high + 1) | st.sampled_from([low - 1, high + 1, 10**12]),
        label="value",
    )
    message = _refused_at(folder, _profile({**VALID_JOB, field: value}), f"jobs[0].{field}")
    assert f"(got {_shown(value)}" in message
    assert str(low if value < low else high) in message


@FEW
@given(field=st.sampled_from(sorted(INT_BOUNDS)), data=st.data())
def test_integer_in_range_passes_the_structure_check(field: str, data: st.DataObject) -> None:
    """The bounds are not tighter than documented (both ends included)."""
    low, high = INT_BOUNDS[field]
    value = data.draw(st.sampled_from([low, high]) | st.integers(low, high), label="value")
    assert getattr(parse_profile(_profile({**VALID_JOB, field: value})).jobs[0], field) == value


@FEW
@given(
    value=st.floats(max_value=0, exclude_max=True)
    | st.floats(min_value=60_000, exclude_min=True)
    | st.integers(max_value=-1)
    | st.integers(min_value=60_001)
)
def test_pause_out_of_range_is_refused(folder: Path, value: float) -> None:
    assume(not math.isnan(value))
    message = _refused_at(folder, _profile({**VALID_JOB, "pause_ms": value}), "jobs[0].pause_ms")
    assert "(got " in message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("field", ["pause_ms", "samples"])
def test_nan_and_infinity_literals_are_refused(folder: Path, literal: str, field: str) -> None:
    """Python's json module reads these non-standard literals; they must not get through."""
    text = json.dumps(_profile({**VALID_JOB, field: 1})).replace(f'"{field}": 1', f'"{field}": {literal}')
    message = _refused_at(folder, text, f"jobs[0].{field}")
    assert f"(got {literal})" in message


@FEW
@given(size=st.integers(max_value=-1) | st.integers(min_value=MAX_MESSAGE_SIZE + 1, max_value=10**30))
def test_message_size_out_of_range_is_refused(folder: Path, size: int) -> None:
    message = _refused_at(
        folder,
        _profile({**VALID_JOB, "scheme": "sha256", "params": {}, "message_sizes": [size]}),
        "jobs[0].message_sizes",
    )
    assert str(size)[:20] in message
    assert ("must not be negative" if size < 0 else "1 GiB limit") in message


def test_too_many_sizes_and_empty_lists(folder: Path) -> None:
    assert "at most 256" in _refused_at(
        folder, _profile({**VALID_JOB, "message_sizes": list(range(257))}), "jobs[0].message_sizes"
    )
    assert "at least 1" in _refused_at(folder, _profile({**VALID_JOB, "message_sizes": []}), "jobs[0].message_sizes")
    assert "at least 1" in _refused_at(folder, {"name": "x", "jobs": []}, "jobs")


@pytest.mark.parametrize("value", ["", "e1", "E", "E1x", "E1\n", "1"])
def test_experiment_id_pattern(folder: Path, value: str) -> None:
    message = _refused_at(folder, _profile(experiment=value), "experiment")
    assert f"(got {json.dumps(value)})" in message


def test_empty_backend_is_refused_not_defaulted(folder: Path) -> None:
    """ "" used to fall back to the first backend silently."""
    assert '(got "")' in _refused_at(folder, _profile({**VALID_JOB, "backend": ""}), "jobs[0].backend")


def test_empty_label_means_the_default_label(folder: Path) -> None:
    """Documented acceptance: an empty label is no label (the generated one is used)."""
    jobs = resolve_jobs(parse_profile(_profile({**VALID_JOB, "label": ""})))
    assert jobs[0].label == "AES-256-GCM [cryptography]"


# --- the registry: schemes, backends, parameters --------------------------------------

SPECS_WITH_PARAMS = [spec for spec in SPECS if spec.params]


def _base_job(spec: SchemeSpec, **extra: Any) -> dict[str, Any]:
    return {"scheme": spec.scheme_id, "backend": spec.backends[0], **extra}


@FEW
@given(name=st.text(min_size=1, max_size=20))
def test_unknown_scheme_is_refused(folder: Path, name: str) -> None:
    assume(name not in registry.scheme_ids())
    message = _refused_at(folder, _profile({"scheme": name}), "jobs[0].scheme")
    # A close name is suggested after the value ("(got "SH1"; did you mean "sha512"?)").
    assert re.search(rf"\(got {re.escape(json.dumps(name))}(\)|; did you mean \"[^\"]+\"\?\))", message), message
    assert "cryptobench list" in message


@FEW
@given(spec=st.sampled_from(SPECS), backend=st.text(min_size=1, max_size=15))
def test_unknown_backend_is_refused(folder: Path, spec: SchemeSpec, backend: str) -> None:
    assume(backend not in spec.backends)
    message = _refused_at(folder, _profile({"scheme": spec.scheme_id, "backend": backend}), "jobs[0].backend")
    assert json.dumps(backend) in message
    assert f"available: {', '.join(spec.backends)}" in message


@FEW
@given(spec=st.sampled_from(SPECS), name=st.text(min_size=1, max_size=12), value=SCALARS)
def test_unknown_parameter_is_refused(folder: Path, spec: SchemeSpec, name: str, value: Any) -> None:
    assume(name not in {p.name for p in spec.params} and value is not None and not isinstance(value, float))
    message = _refused_at(folder, _profile(_base_job(spec, params={name: value})), "jobs[0].params")
    assert f"unknown parameter {name!r} for {spec.scheme_id}" in message


def _bad_param_values(param: ParamSpec) -> st.SearchStrategy[Any]:
    """JSON scalars the parameter must refuse (wrong type, not a choice, out of range)."""
    values = st.integers(-(10**6), 10**6) | st.booleans() | st.text(max_size=12)
    if param.choices:
        return values.filter(lambda v: not (v in param.choices and type(v) is type(param.choices[0])))
    if isinstance(param.default, bool):
        return values.filter(lambda v: not isinstance(v, bool))
    assert param.minimum is not None and param.maximum is not None
    return (
        st.text(max_size=8)
        | st.booleans()
        | st.integers(max_value=param.minimum - 1)
        | st.integers(min_value=param.maximum + 1)
    )


@MANY
@given(data=st.data())
def test_ill_typed_or_impossible_parameter_is_refused(folder: Path, data: st.DataObject) -> None:
    """Every parameter of every scheme: "256" for 256, 1 for true, a value not among the
    choices, an integer out of range. The message names the parameter and the value."""
    spec = data.draw(st.sampled_from(SPECS_WITH_PARAMS), label="scheme")
    param = data.draw(st.sampled_from(spec.params), label="param")
    value = data.draw(_bad_param_values(param), label="value")
    message = _refused_at(folder, _profile(_base_job(spec, params={param.name: value})), "jobs[0].params")
    assert f"parameter {param.name!r} of {spec.scheme_id}" in message
    assert f"got {value!r}" in message


# --- duplicates -------------------------------------------------------------------------


def _sizes(job: dict[str, Any]) -> list[int]:
    return job.get("message_sizes") or [
        registry.create(
            job["scheme"], job.get("backend") or registry.get_spec(job["scheme"]).backends[0], job.get("params")
        ).info.fixed_message_size
        or 1024
    ]


@MANY
@given(
    job=valid_jobs(),
    changes=st.fixed_dictionaries(
        {},
        optional={
            "samples": st.integers(1, 50),
            "warmup": st.integers(0, 5),
            "keygen_samples": st.integers(1, 5),
            "tamper": st.integers(0, 5),
            "pause_ms": st.floats(0, 10),
            "label": st.text(max_size=10),
        },
    ),
    extra_sizes=st.lists(st.integers(0, 64), max_size=2),
    spell_out=st.booleans(),
    gap=st.integers(0, 2),
)
def test_duplicate_jobs_are_refused(
    folder: Path, job: dict[str, Any], changes: dict[str, Any], extra_sizes: list[int], spell_out: bool, gap: int
) -> None:
    """Two jobs that would measure the same thing twice (they differ only in samples,
    warm-up, pause, tamper count, label, in how the default backend and parameters are
    written, or share one message size) are refused at the second, naming the first."""
    if job.get("mode") == "load":  # a load job refuses these itself (test_load_fields)
        changes = {k: v for k, v in changes.items() if k not in IGNORED_BY_LOAD}
    copy = {**job, **changes}
    spec = registry.get_spec(job["scheme"])
    backend = job.get("backend") or spec.backends[0]
    if spell_out:  # the defaults written out are the same job
        copy["backend"] = backend
        copy["params"] = dict(spec.resolve_params(backend, job.get("params") or {}))
    shared = _sizes(job)[0]
    if "message_sizes" in job:  # sizes up to the job's largest are valid for it too
        extra = {size for size in extra_sizes if size <= max(job["message_sizes"])} - set(job["message_sizes"])
        if spec.family == Family.TLS:  # a tls13 job takes no empty message (refused for that instead)
            extra.discard(0)
        copy["message_sizes"] = sorted({shared, *extra})
    filler = "sha512" if job["scheme"] != "sha512" else "sha384"
    fillers = [{"scheme": filler, "message_sizes": [7 + i]} for i in range(gap)]
    message = _refused_at(folder, _profile(job, *fillers, copy), f"jobs[{1 + gap}]", has_remote=True)
    assert "repeats jobs[0]" in message and f"message size {human(shared)}" in message  # with its unit


@FEW
@given(job=valid_jobs(), change=st.sampled_from(["size", "mode", "tcp_nodelay", "backend"]))
def test_jobs_that_differ_in_what_is_measured_are_not_duplicates(job: dict[str, Any], change: str) -> None:
    """The check must not refuse a real comparison (E1 runs the same job with Nagle on)."""
    spec = registry.get_spec(job["scheme"])
    other = dict(job)
    if change == "size":
        assume("message_sizes" in job)
        other["message_sizes"] = [max(job["message_sizes"]) + 1]
        assume(
            other["message_sizes"][0]
            <= (
                registry.create(
                    spec.scheme_id, job.get("backend") or spec.backends[0], job.get("params")
                ).info.max_plaintext
                or 1 << 30
            )
        )
    elif change == "mode":
        other["mode"] = "loopback" if job["mode"] != "loopback" else "operations"
        # pause_ms too: another mode pauses per message, and a pause valid for the first job's
        # count can add up past the day a job's pauses may take in the other's.
        for field in ("tcp_nodelay", "pause_ms", *LOAD_FIELD_NAMES):
            other.pop(field, None)
    elif change == "tcp_nodelay":
        assume(job["mode"] in SESSION_MODES)
        other["tcp_nodelay"] = not job.get("tcp_nodelay", True)
    else:
        backend = job.get("backend") or spec.backends[0]
        others = [b for b in spec.backends if b != backend]
        assume(others)
        other["backend"] = others[0]
        try:
            info = spec.create(others[0], job.get("params")).info
        except BadParameter:  # e.g. a curve the other backend lacks
            assume(False)
        assume(max(job.get("message_sizes", [0])) <= (info.max_plaintext or 1 << 30))
    jobs = resolve_jobs(parse_profile(_profile(job, other)), available_memory=PLENTY, has_remote=True)
    assert len(jobs) == 2


def test_curve_alias_is_a_duplicate(folder: Path) -> None:
    """secp256r1 is P-256 (same label, same numbers): it used to run twice unnoticed."""
    first = {"scheme": "ecdh", "backend": "cryptography", "params": {"curve": "P-256"}}
    second = {"scheme": "ecdh", "backend": "cryptography", "params": {"curve": "secp256r1"}}
    assert "repeats jobs[0]" in _refused_at(folder, _profile(first, second), "jobs[1]")


def test_preset_pair_differing_only_by_nagle_stays_valid() -> None:
    """ecdh-vs-elgamal measures the same tinyec job with and without TCP_NODELAY on purpose."""
    preset = load_profile("ecdh-vs-elgamal")
    jobs = resolve_jobs(preset, available_memory=PLENTY)
    pair = [job for job in jobs if job.backend == "tinyec"]
    assert sorted(job.tcp_nodelay for job in pair) == [False, True]
    # ...and the very same pair with equal transport is a duplicate.
    data = preset.to_dict()
    for job in data["jobs"]:
        job.pop("tcp_nodelay", None)
    with pytest.raises(ProfileError, match="repeats jobs"):
        resolve_jobs(parse_profile(data), available_memory=PLENTY)


# --- memory and time bounds ------------------------------------------------------------


@MANY
@given(size=st.integers(1, MAX_MESSAGE_SIZE), memory=st.integers(1 << 20, 64 << 30))
def test_memory_estimate_refuses_before_running(folder: Path, size: int, memory: int) -> None:
    """A message whose MEMORY_COPIES copies exceed 80 % of the available memory is refused
    with the estimate; any other size passes the check."""
    data = _profile({"scheme": "sha256", "message_sizes": [size]})
    if size * MEMORY_COPIES > memory * 0.8:
        message = _refused_at(folder, data, "jobs[0].message_sizes[0]", memory=memory)
        assert f"needs about {human(size * MEMORY_COPIES)} of memory" in message
        assert f"({MEMORY_COPIES} copies); this machine has {human(memory)} available" in message
    else:
        assert resolve_jobs(parse_profile(data), available_memory=memory)[0].message_sizes == [size]


def test_samples_override_is_bounded_like_the_file() -> None:
    """--samples bypassed JobSpec's bound (model_copy does not validate): 10**12 was accepted."""
    profile = parse_profile(_profile())
    assert with_samples(profile, MAX_SAMPLES).jobs[0].samples == MAX_SAMPLES
    for bad in (0, -3, MAX_SAMPLES + 1, 10**12):
        with pytest.raises(ProfileError, match=rf"--samples: must be 1\.\.{MAX_SAMPLES} \(got {bad}\)"):
            with_samples(profile, bad)


@FEW
@given(job=valid_jobs())
def test_reduced_profile_of_a_valid_one_is_valid(job: dict[str, Any]) -> None:
    """`run --reduced` keeps every job runnable and inside the small budget."""
    small = reduced(parse_profile(_profile(job)))
    resolved = resolve_jobs(small, available_memory=PLENTY, has_remote=True)
    if resolved[0].load is not None:  # no sample rounds: two short steps
        assert resolved[0].load.duration_s <= 0.2 and len(resolved[0].load.rates) <= 2
    else:
        assert resolved[0].samples <= 3 and resolved[0].warmup <= 1 and resolved[0].pause_ms == 0
    assert len(resolved[0].message_sizes) <= 3


# --- free text: bounded where it is written ----------------------------------------------------
# Before: a job label of 1.6 million characters ran and exported, and `report --pdf` of it
# never finished; a 2 MB description made the PDF take 14 s.


@pytest.mark.parametrize(
    ("where", "field", "limit"),
    [("job", "label", MAX_LABEL_CHARS), ("profile", "description", MAX_DESCRIPTION_CHARS), ("profile", "name", 200)],
)
def test_free_text_is_accepted_to_its_bound_and_refused_past_it(where: str, field: str, limit: int) -> None:
    def profile(text: str) -> dict[str, Any]:
        job: dict[str, Any] = {"scheme": "aes-gcm", "message_sizes": [64]}
        data: dict[str, Any] = {"name": "p", "jobs": [dict(job), dict(job)]}
        (data["jobs"][1] if where == "job" else data)[field] = text
        return data

    parsed = parse_profile(profile("x" * limit), "p.json")
    assert getattr(parsed.jobs[1] if where == "job" else parsed, field) == "x" * limit
    named = f"jobs[1].{field}" if where == "job" else field
    for past in (limit + 1, 1_600_000):
        with pytest.raises(ProfileError) as refused:
            parse_profile(profile("y" * past), "p.json")
        message = str(refused.value)
        assert message.startswith(f"p.json: {named}: String should have at most {limit} characters"), message
        assert len(message) < 200  # the value is shown by its start


def test_a_label_of_a_million_characters_is_refused_by_run_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.main import main

    path = tmp_path / "lab8.json"
    job = {"scheme": "aes-gcm", "message_sizes": [64], "samples": 5, "warmup": 1, "label": "L" * 1_600_000}
    path.write_text(json.dumps({"format_version": 1, "name": "lab8", "jobs": [job]}))
    assert main(["run", str(path), "--store", str(tmp_path / "s.db"), "--json", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: jobs[0].label: String should have at most {MAX_LABEL_CHARS} characters" in err
    assert not (tmp_path / "o.json").exists()


def test_every_free_text_field_of_a_profile_is_bounded() -> None:
    """A text field added to the models without a bound fails here. Scheme, backend and a
    link's preset name are looked up (an unknown one is refused, shown by its start); the
    experiment has a pattern; enumerations take their members only."""
    looked_up = {"scheme", "backend", "link", "links", "params"}  # params: the next test
    for model in (Profile, JobSpec):
        for name, info in model.model_fields.items():
            if name in looked_up or "str" not in str(info.annotation) or "Literal" in str(info.annotation):
                continue
            bounded = [m for m in info.metadata if getattr(m, "max_length", None) or getattr(m, "pattern", None)]
            assert bounded, f"{model.__name__}.{name} is free text without a bound"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"curve": "c" * 201}, "parameter 'curve': text of at most 200 characters expected, got 201"),
        ({"k" * 65: 1}, "a parameter name of at most 64 characters expected, got one of 65"),
        ({f"p{i}": i for i in range(33)}, "at most 32 parameters, got 33"),
    ],
    ids=["long-value", "long-name", "too-many"],
)
def test_parameters_are_bounded_and_not_echoed(params: dict[str, Any], message: str) -> None:
    data = {"name": "p", "jobs": [{"scheme": "aes-gcm", "params": params}]}
    with pytest.raises(ProfileError) as refused:
        parse_profile(data, "p.json")
    assert str(refused.value) == f"p.json: jobs[0].params: {message} (got {{...}})"
