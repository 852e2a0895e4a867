"""The stored form of a job and how a stored row is read back (`app.core.store.store`).

A job row holds the job's results JSON with its raw samples packed as base64 (`packed_job`);
reading a row back unpacks and checks every field, and a row that does not read back
(cut short, edited, a wrong type) becomes a `DamagedRow` naming the damage, or a failed
placeholder job beside the run's intact ones. Split from store.py, which keeps the
connection, the transactions and the queries.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import numpy as np

from app.core.results.check import check_job
from app.core.results.check_fields import MAX_MAGNITUDE, check_values
from app.core.results.check_metrics import sample_magnitude_problem
from app.core.results.errors import ResultsDataError
from app.core.results.model import JobResult
from app.core.results.plausible import time_problem
from app.core.store.columns import job_figures, job_identity
from app.core.vocab import Family, JobStatus, Mode


def packed_job(job: JobResult) -> dict[str, Any]:
    """The stored form of a job: its dict, raw samples packed straight from the result
    (no list of Python floats is built on the way)."""
    data = job.to_dict(samples=False)
    for name, metric in job.metrics.items():
        data["metrics"][name]["samples"] = metric.samples
    return _pack_samples(data)


def _pack_samples(job: dict[str, Any]) -> dict[str, Any]:
    """Raw samples as base64 float64 inside the stored JSON.

    A 100,000-sample loopback job has 400,000 floats; `json.dumps` spends about a
    microsecond on each, in one C call that holds the interpreter lock, which froze
    the GUI for over 100 ms when a job was stored. As bytes they encode in about a
    millisecond, exactly (float64 round-trips bit for bit). Outlier indices (up to a
    few percent of the samples, tens of thousands on a noisy loopback job) are packed
    as uint32 for the same reason. Exports still write lists.
    """
    for metric in job.get("metrics", {}).values():
        samples = metric.pop("samples", None)
        if samples is not None:
            metric["samples_f64"] = base64.b64encode(np.asarray(samples, dtype="<f8").tobytes()).decode("ascii")
        indices = metric.pop("outlier_indices", None)
        if indices is not None:
            metric["outlier_indices_u32"] = base64.b64encode(np.asarray(indices, dtype="<u4").tobytes()).decode("ascii")
    return job


# --- reading rows back -------------------------------------------------------------------


def run_time(value: Any) -> str | None:
    """A run's stored time as written, or None when it is not a time a run can carry."""
    return value if isinstance(value, str) and time_problem(value) is None else None


class DamagedRow(Exception):
    """A stored row that does not read back; str() says how, in one line."""


def row_name(job_id: Any, idx: Any) -> str:
    return f"job #{idx} ({job_id})" if isinstance(idx, int) else f"job {job_id}"


def _json_row(text: Any, what: str) -> Any:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DamagedRow(f"{what}: not UTF-8 text (bad byte at offset {exc.start})") from None
    if not isinstance(text, str):
        raise DamagedRow(f"{what}: expected JSON text, got SQLite {type(text).__name__}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            raise DamagedRow(f"{what}: JSON cut short ({len(text)} characters)") from None
        raise DamagedRow(f"{what}: JSON damaged at character {exc.pos} of {len(text)} ({exc.msg})") from None
    except RecursionError:
        raise DamagedRow(f"{what}: JSON nested too deeply") from None
    except ValueError as exc:  # a number beyond the int/str conversion limit
        raise DamagedRow(f"{what}: not valid JSON ({exc})") from None


def decode_block(text: Any, column: str, check: Any) -> dict[str, Any]:
    data = _json_row(text, column)
    try:
        if not isinstance(data, dict):
            raise ResultsDataError(column, f"expected an object, got {type(data).__name__}")
        check_values(data, column)  # text that cannot be encoded, NaN, ints beyond 64 bits
        check(data, column)
    except ResultsDataError as exc:
        raise DamagedRow(str(exc)) from None
    return data


def _decode_job(text: Any) -> dict[str, Any]:
    """A job row as a results dict (samples unpacked), every field checked."""
    data: dict[str, Any] = _json_row(text, "result")  # check_job refuses anything but an object
    try:
        check_job(data, "result")  # the packed form: samples are base64 strings here
        for name, metric in data["metrics"].items():
            where = f"result.metrics.{name}" if name.isidentifier() else f"result.metrics[{json.dumps(name)}]"
            _unpack_metric(metric, where)
    except ResultsDataError as exc:
        raise DamagedRow(str(exc)) from None
    return data


def read_job(text: Any) -> JobResult:
    """A job row as a JobResult; DamagedRow if it does not read back."""
    data = _decode_job(text)
    try:
        return JobResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:  # not expected after check_job: a last line of defence
        raise DamagedRow(f"result: {type(exc).__name__}: {exc}") from None


def read_job_of(text: Any, run_id: str, row_id: Any, idx: Any) -> JobResult:
    """A job row of run `run_id` as a JobResult, checked against its run: its JSON's id must be
    the run's id and its index (`RUN/INDEX`, as import demands of a file), and the row's own
    id and index columns must say the same. A row of another run's job (a shared store is
    written by other machines) would otherwise be shown as this run's, and every copy of
    the run would then collide with the other run's row."""
    job = read_job(text)
    expected = f"{run_id}/{job.index}"
    if job.id != expected:
        raise DamagedRow(f"result.id: {json.dumps(job.id)[:80]} is not a job of run {run_id} (expected {expected})")
    if row_id != job.id or idx != job.index:
        raise DamagedRow(
            f"the row's id and index ({json.dumps(row_id)[:80]}, {json.dumps(idx)[:20]}) are not its result's "
            f"({job.id}, {job.index})"
        )
    return job


def light_job(text: Any) -> dict[str, str] | None:
    """The `identity` and `figures` columns of a stored job row (schema 3's migration), read
    from its JSON without unpacking its samples; None for a row that does not read back."""
    try:
        data = _json_row(text, "result")
        if not isinstance(data, dict):
            return None
        for metric in (data.get("metrics") or {}).values():
            if isinstance(metric, dict):
                metric.pop("samples_f64", None)
                metric.pop("outlier_indices_u32", None)
        check_job(data, "result")
        job = JobResult.from_dict(data)
    except (DamagedRow, ResultsDataError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return {"identity": job_identity(job), "figures": job_figures(job)}


def _unpack_metric(metric: dict[str, Any], where: str) -> None:
    """Unpack one metric's samples and outlier indices (`_pack_samples` in reverse), refusing
    packed arrays of the wrong size or with non-finite samples (the checks check_metric
    makes on a results file's lists)."""
    n = metric["n"]
    for key, dtype, target in (("samples_f64", "<f8", "samples"), ("outlier_indices_u32", "<u4", "outlier_indices")):
        packed = metric.pop(key, None)
        if packed is None:
            continue
        try:
            raw = base64.b64decode(packed, validate=True) if isinstance(packed, str) else None
        except ValueError:
            raw = None
        width = np.dtype(dtype).itemsize
        if raw is None or len(raw) % width:
            raise ResultsDataError(f"{where}.{key}", "not a packed array (bad base64 or cut short)")
        values = np.frombuffer(raw, dtype=dtype)
        if target == "samples":
            if values.size != n:
                raise ResultsDataError(f"{where}.{key}", f"expected n = {n} samples, got {values.size}")
            if not np.isfinite(values).all() or (values.size and float(np.abs(values).max()) > MAX_MAGNITUDE):
                raise ResultsDataError(f"{where}.{key}", "holds a sample that is not a finite time")
            found = sample_magnitude_problem(values)  # every metric is a time (check_metrics.METRIC_UNIT)
            if found is not None:
                raise ResultsDataError(f"{where}.{key}[{found[0]}]", found[1])
        elif values.size and int(values.max()) >= n:
            raise ResultsDataError(f"{where}.{key}", f"holds a sample index beyond n = {n}")
        metric[target] = values.tolist()


def placeholder_job(job_id: Any, idx: Any, text: Any, reason: str) -> JobResult:
    """A failed job standing for a damaged row, with what can be read off its start
    (a row is written id, index, scheme, backend, params, label, family, mode,
    message_size first, so a row cut short usually still names its job)."""
    head = text.decode("utf-8", "replace") if isinstance(text, bytes) else text if isinstance(text, str) else ""
    found: dict[str, Any] = {}
    for key in ("scheme", "backend", "label", "family", "mode"):
        match = re.search(rf'"{key}": ("(?:[^"\\]|\\.)*")', head)
        if match:
            try:
                value = json.loads(match.group(1))
            except ValueError:
                continue
            if isinstance(value, str) and value.isprintable() and len(value) <= 200:
                found[key] = value
    match = re.search(r'"message_size": (\d{1,10})[,}]', head)
    size = int(match.group(1)) if match else 0
    index = idx if isinstance(idx, int) and not isinstance(idx, bool) else 0
    family = found.get("family", "")
    return JobResult(
        id=str(job_id),
        index=index,
        scheme=found.get("scheme", "unknown"),
        backend=found.get("backend", ""),
        params={},
        label=found.get("label", f"job #{index}"),
        family=family if family in set(Family) else "",
        mode=str(found["mode"]) if found.get("mode") in set(Mode) else Mode.OPERATIONS,
        message_size=size,
        status=JobStatus.FAILED,
        error=f"the stored result of this job is damaged ({reason}); the run's other jobs are intact",
    )
