"""The columns a row keeps beside its JSON (schema 3), so that the listing, a job's trend
and the duplicate check read indexed columns instead of decoding every row.

- A run's `started_at` and `finished_at` are UTC instants (TIMESTAMP WITH TIME ZONE on
  PostgreSQL; on SQLite fixed-width UTC text, which sorts as the instants do): the
  runs list in the order they started, whatever offset each time was written with. The
  `started` and `finished` columns keep the text as written, which is what a run reads
  back (its results JSON is byte-identical to the file it came from).
- A run's `brief` is what a trend shows of it: the environment's machine and library
  versions, and the profile's marks (`reduced`, `overrides`), a few hundred bytes
  instead of the whole environment.
- A job's `identity` is its `match_key` as canonical JSON (the trend picks a job's rows
  by it, indexed), and its `figures` each metric's count, median and 95 % interval.

A shared store's rows come from other machines, so these are input too: `read_figures`
and `read_brief` check what they hand over, and `damaged_rows` (reading.py) names a row
whose columns disagree with its JSON.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, NamedTuple

from app.core.results.check_metrics import MAX_SAMPLE_SECONDS, METRIC_UNIT
from app.core.results.identity import MatchKey, match_key
from app.core.results.model import JobResult
from app.core.results.plausible import parse_time

#: SQLite's form of an instant: UTC, always 27 characters, so text order is time order.
SQLITE_INSTANT = "%Y-%m-%dT%H:%M:%S.%fZ"
#: Most metrics a job's figures may name, and the longest name (a row beyond is damaged).
MAX_FIGURES = 64
MAX_FIGURE_NAME = 100


def instant(text: Any, *, postgres: bool) -> datetime | str | None:
    """A run's time (ISO 8601 with an offset) as the database keeps the instant: an aware
    datetime for PostgreSQL, UTC text for SQLite; None when it is not a time a run can carry."""
    moment = parse_time(text)
    if moment is None:
        return None
    return moment if postgres else moment.astimezone(UTC).strftime(SQLITE_INSTANT)


def now_instant(*, postgres: bool) -> datetime | str:
    moment = datetime.now(UTC)
    return moment if postgres else moment.strftime(SQLITE_INSTANT)


def as_utc(value: Any) -> datetime | None:
    """An instant as either database hands it back (datetime or SQLite's text); None otherwise."""
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo is not None else None
    if isinstance(value, str):
        try:
            return datetime.strptime(value, SQLITE_INSTANT).replace(tzinfo=UTC)
        except ValueError:
            return None
    return None


def _canonical(value: Any) -> Any:
    """A number that equals an integer as that integer: match_key's tuples compare 20 == 20.0."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, tuple | list):
        return [_canonical(item) for item in value]
    return value


def identity_text(key: MatchKey) -> str:
    """A job's `match_key` as the text the store indexes: equal keys, equal texts. Its
    exchange part (the last) is left out where it is None, as the key was before it had one:
    rows a store kept then are found, and not read as damaged (`reading.damaged_rows`)."""
    parts = list(key[:-1]) if key[-1] is None else list(key)
    return json.dumps(_canonical(parts), separators=(",", ":"), ensure_ascii=False)


def job_identity(job: JobResult) -> str:
    return identity_text(match_key(job))


def job_figures(job: JobResult) -> str:
    """Each metric's [n, median, 95 % low, 95 % high, unit], compact JSON."""
    figures = {}
    for name, metric in job.metrics.items():
        stats = metric.stats
        low, high = stats.ci95 if stats.ci95 is not None else (None, None)
        figures[name] = [stats.n, stats.median, low, high, stats.unit]
    return json.dumps(figures, separators=(",", ":"), allow_nan=False)


def _pruned(block: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(block, dict):
        return {}
    return {key: block[key] for key in keys if key in block}


def run_brief(environment: Any, profile: Any) -> str:
    """The environment as far as a trend reads it (`RecordedEnvironment`: machine, CPU, OS,
    Python, each library's version and OpenSSL), in the environment's own shape, and the
    profile's marks."""
    env = environment if isinstance(environment, dict) else {}
    libraries = env.get("libraries")
    brief_env: dict[str, Any] = _pruned(env, ("hostname",))
    for section, keys in (("cpu", ("model",)), ("os", ("pretty_name", "platform")), ("python", ("version",))):
        if isinstance(env.get(section), dict):
            brief_env[section] = _pruned(env[section], keys)
    if isinstance(libraries, dict):
        brief_env["libraries"] = {
            str(name): _pruned(entry, ("version", "openssl")) for name, entry in libraries.items()
        }
    brief_profile = _pruned(profile, ("reduced", "overrides"))
    return json.dumps(
        {"environment": brief_env, "profile": brief_profile}, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


# --- reading them back -----------------------------------------------------------------


class Figure(NamedTuple):
    """One metric of a stored job as a trend reads it (`read_figures`)."""

    n: int
    median: float
    ci95_low: float | None
    ci95_high: float | None
    unit: str


class FigureDamage(ValueError):
    """A `figures` or `brief` column that is not what this app writes; str() says how."""


_DECODER = json.JSONDecoder()


def read_figures(text: Any) -> dict[str, Figure]:
    """A job's `figures` column, checked: FigureDamage for anything this app never writes.
    Tight, since a trend reads one per stored run (10,000 of them in a 0.3 s trend)."""
    if type(text) is not str:
        raise FigureDamage(f"figures: expected JSON text, got {type(text).__name__}")
    try:
        data, end = _DECODER.raw_decode(text)  # json.loads less its two whitespace scans
    except (ValueError, RecursionError):
        raise FigureDamage("figures: not valid JSON") from None
    if end != len(text) or type(data) is not dict or len(data) > MAX_FIGURES:
        raise FigureDamage(f"figures: expected one object of at most {MAX_FIGURES} metrics")
    found: dict[str, Figure] = {}
    top = MAX_SAMPLE_SECONDS
    for name, entry in data.items():
        # JSON gives a float for every time this app writes ("1e-05"); NaN fails every comparison.
        if (
            type(entry) is list
            and len(entry) == 5
            and type(n := entry[0]) is int
            and 0 <= n < 2**53
            and type(median := entry[1]) is float
            and 0.0 <= median <= top
            and entry[4] == METRIC_UNIT
            and 0 < len(name) <= MAX_FIGURE_NAME
            and name.isprintable()
        ):
            low, high = entry[2], entry[3]
            if low is None and high is None:
                found[name] = Figure(n, median, None, None, METRIC_UNIT)
                continue
            if type(low) is float and type(high) is float and 0.0 <= low <= median <= high <= top:
                found[name] = Figure(n, median, low, high, METRIC_UNIT)
                continue
        raise FigureDamage(f'figures: {json.dumps(name)[:60]}: not [n, median, 95 % low, high, "s"] as written')
    return found


def read_brief(text: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run's `brief` column: (environment, profile marks), each an object; FigureDamage otherwise.
    Their fields are read through `RecordedEnvironment` and `RecordedProfile`, which take
    only text and numbers of the right type, and every face escapes the text it shows."""
    if not isinstance(text, str):
        raise FigureDamage(f"brief: expected JSON text, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise FigureDamage("brief: not valid JSON") from None
    if not isinstance(data, dict) or not all(isinstance(data.get(key), dict) for key in ("environment", "profile")):
        raise FigureDamage("brief: expected an object with an environment and a profile")
    return data["environment"], data["profile"]
