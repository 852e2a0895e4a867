"""The field readers every results check is built from (`app.core.results.check`).

A field's path as an error names it (`jobs[3].metrics.encrypt.n`), typed reads of one
field with its bounds (`check_int`, `num`, `check_str`, `check_bool`, `check_obj`, `check_list`), each raising one
`ResultsDataError` naming the path and the value, and `check_values`, the walk over a whole
document: every string encodable as UTF-8, every number finite and in range, nesting bounded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any, TypeGuard

import numpy as np

from app.core.records.load_histogram import max_histogram_chars
from app.core.results.errors import ResultsDataError
from app.core.settings.profile import MAX_SAMPLES

#: Integers beyond SQLite's and most JSON readers' range are not results.
_MAX_INT = (1 << 63) - 1
#: A time, size or rate beyond this is not a measurement (an operation lasting 30 years,
#: a 1 EB message); it also keeps arithmetic in the charts far from overflow.
MAX_MAGNITUDE = 1e18
_MAX_DEPTH = 64
#: Any text in a results file: the longest the app writes is a job's error (an exception's
#: message, clipped to this by JobResult.to_dict) or a path in the environment (4,096 at
#: most). Unbounded, a 1-million-character error took the PDF report 28 s, a label of 1.6
#: million characters never finished. Fields shown in tables have tighter bounds
#: (`app.core.results.check`: labels, the profile's name and description). Encoded data
#: is bounded by what encodes it instead (`_text_limit`).
MAX_TEXT_CHARS = 10_000
#: A store row's packed arrays (`store.rows._unpack_metric`) are base64 text of at most
#: MAX_SAMPLES 8-byte values, unpacked and checked on their own.
_PACKED_KEYS = ("samples_f64", "outlier_indices_u32")
_MAX_PACKED_CHARS = 4 * -(-MAX_SAMPLES * 8 // 3)
#: A load step's latency histogram (and each generator's), HdrHistogram's base64 form: as
#: long as its range and precision make it (`load_histogram.max_histogram_chars`; a step of
#: 2,500/s for 404 s wrote 15,408 characters), checked as such by `check_job_parts`.
_HISTOGRAM_KEY = "histogram"


def _text_limit(key: str | int) -> int:
    """The longest text the value at `key` may be: encoded data as long as its encoder
    makes it, any other text MAX_TEXT_CHARS."""
    if key in _PACKED_KEYS:
        return _MAX_PACKED_CHARS
    if key == _HISTOGRAM_KEY:
        return max_histogram_chars()
    return MAX_TEXT_CHARS


# --- paths and messages ----------------------------------------------------------------


def join(path: str, key: str | int) -> str:
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


def fail(path: str, expected: str, value: Any) -> ResultsDataError:
    return ResultsDataError(path, f"expected {expected}, got {_shown(value)}")


# --- scalar checks ---------------------------------------------------------------------


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _field(obj: dict[str, Any], key: str, path: str, *, required: bool) -> tuple[str, Any]:
    """The field's path and value; a missing required field is the error, a missing
    optional one reads as None (callers return None for it)."""
    where = join(path, key)
    if key not in obj and required:
        raise ResultsDataError(where, "required field is missing")
    return where, obj.get(key)


def is_num(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and abs(value) <= MAX_MAGNITUDE
    )


def check_int(
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
    if not is_int(value) or not low <= value <= high:
        kind = (
            "a non-negative integer"
            if low == 0 and high == _MAX_INT
            else f"an integer {low}..{high}"
            if high != _MAX_INT
            else f"an integer >= {low}"
        )
        raise fail(where, kind + (" or null" if nullable else ""), value)
    return value


def num(
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
    ok = is_num(value) and not (non_negative and value < 0) and not (positive and value <= 0)
    if not ok:
        kind = "a positive number" if positive else "a non-negative number" if non_negative else "a finite number"
        raise fail(where, kind + (" or null" if nullable else ""), value)
    return float(value)


def check_str(
    obj: dict[str, Any],
    key: str,
    path: str,
    *,
    required: bool = True,
    nullable: bool = False,
    choices: tuple[str, ...] | None = None,
    non_empty: bool = False,
    max_chars: int = MAX_TEXT_CHARS,
) -> str | None:
    where, value = _field(obj, key, path, required=required)
    if value is None and (nullable or key not in obj):
        return None
    if choices is not None and value not in choices:
        raise fail(where, "one of " + ", ".join(json.dumps(c) for c in choices if c), value)
    if not isinstance(value, str) or (non_empty and not value):
        raise fail(where, ("a non-empty string" if non_empty else "a string") + (" or null" if nullable else ""), value)
    if len(value) > max_chars:
        raise ResultsDataError(where, f"expected text of at most {max_chars:,} characters, got {len(value):,}")
    return value


def clip_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`text` if it fits `limit` characters, else its start and how long it was, within `limit`."""
    if len(text) <= limit:
        return text
    tail = f"… (cut: {len(text):,} characters in all)"
    return text[: limit - len(tail)] + tail


def check_bool(obj: dict[str, Any], key: str, path: str, *, nullable: bool = False) -> None:
    if key in obj and not (isinstance(obj[key], bool) or (nullable and obj[key] is None)):
        raise fail(join(path, key), "true, false or null" if nullable else "true or false", obj[key])


def check_obj(
    obj: dict[str, Any], key: str, path: str, *, required: bool = False, nullable: bool = False
) -> dict[str, Any]:
    """The object at `key` ({} when absent and optional, or null and nullable)."""
    where = join(path, key)
    if key not in obj:
        if required:
            raise ResultsDataError(where, "required field is missing")
        return {}
    value = obj[key]
    if value is None and nullable:
        return {}
    if not isinstance(value, dict):
        raise fail(where, "an object" + (" or null" if nullable else ""), value)
    return value


def check_list(
    obj: dict[str, Any], key: str, path: str, *, required: bool = False, nullable: bool = False
) -> list[Any]:
    where = join(path, key)
    if key not in obj:
        if required:
            raise ResultsDataError(where, "required field is missing")
        return []
    value = obj[key]
    if value is None and nullable:
        return []
    if not isinstance(value, list):
        raise fail(where, "an array" + (" or null" if nullable else ""), value)
    return value


def check_each(mapping: dict[str, Any], path: str, check: Callable[[dict[str, Any], str, str], Any]) -> None:
    for key in mapping:
        check(mapping, key, path)


# --- the whole document ------------------------------------------------------------------


def check_values(value: Any, path: str) -> None:
    """Every string (and key) encodable and at most MAX_TEXT_CHARS long (encoded data:
    `_text_limit`), every number
    finite and in range, nesting bounded.

    Iterative: a hostile file may nest deeply; the path is built only on failure. Lazy:
    the walk holds one iterator per open container (memory bounded by the nesting depth),
    never a pending entry per item. Pending entries cost ~120 bytes per item, more than the
    parse itself: a 30 MB file of ten million empty arrays took 2.4 GiB, of which json.loads
    was 0.8 GiB.
    """
    problem = _value_problem(value, 0)
    if problem is not None:
        raise ResultsDataError(path, problem)
    stack: list[tuple[Iterator[tuple[str | int, Any]], tuple[str | int, ...]]] = []
    if _has_children(value):
        stack.append((_children(value), ()))
    while stack:
        children, loc = stack[-1]
        for key, child in children:
            where = (*loc, key)
            key_problem = _key_problem(key) if isinstance(key, str) else None
            limit = _text_limit(key)
            problem = key_problem or _value_problem(child, len(where), limit)
            if problem is not None:
                at = path
                for part in loc if key_problem else where:  # a bad key: named by its object
                    at = join(at, part)
                raise ResultsDataError(at, problem)
            if _has_children(child):
                stack.append((_children(child), where))
                break
        else:
            stack.pop()


def _has_children(value: Any) -> bool:
    """A container the walk descends into: an object, or an array that is not all finite
    floats (samples, most of a file, skip the per-item walk)."""
    return isinstance(value, dict) or (isinstance(value, list) and not all_finite_floats(value))


def _children(value: dict[str, Any] | list[Any]) -> Iterator[tuple[str | int, Any]]:
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)


def _key_problem(key: str) -> str | None:
    if len(key) > MAX_TEXT_CHARS:
        return f"a key of at most {MAX_TEXT_CHARS:,} characters expected, got {len(key):,}"
    if not _encodable(key):
        return f"a key that cannot be written as UTF-8 (a lone surrogate), got {_shown(key)}"
    return None


def _value_problem(item: Any, depth: int, limit: int = MAX_TEXT_CHARS) -> str | None:
    """What is wrong with one value itself (not its children), or None."""
    if depth > _MAX_DEPTH:
        return f"nested deeper than {_MAX_DEPTH} levels"
    if isinstance(item, str):
        if len(item) > limit:
            return f"expected text of at most {limit:,} characters, got {len(item):,}"
        if not _encodable(item):
            return f"text that cannot be written as UTF-8 (a lone surrogate), got {_shown(item)}"
    elif isinstance(item, float):
        if not math.isfinite(item):
            return f"expected a finite number, got {_shown(item)}"
    elif is_int(item) and abs(item) > _MAX_INT:
        return f"expected an integer within ±2**63, got {_shown(item)}"
    return None


def all_finite_floats(values: list[Any], limit: float = math.inf) -> bool:
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
