"""What a results file or store row must satisfy beyond its types: figures a measurement
could have produced (docs/ARCHITECTURE.md, "Trust boundaries": "physically possible").

`app.core.results.check` checks that every field has its type and range; the checks here
relate fields to each other and to the clock, and run after it (so every value they read
is already a number of the right kind). The first problem is one `ResultsDataError`
naming the field:

    jobs[0].metrics.encrypt.min: expected a non-negative time (seconds), got -4.98e-05
    jobs[0].load.steps[0].completed: expected at most sent (5), got 1000000000000

The invariants, per record (each is what the producer guarantees, so nothing the app
writes is refused; tests/reliability/test_written_read_back.py holds both sides):

- timestamps (run and job `started`/`finished`): ISO 8601 with a UTC offset, from
  `EARLIEST_TIME` to `LATEST_TIME`. `finished` before `started` is accepted: a wall
  clock stepped back mid-run writes exactly that.
- a metric: in seconds, no negative time; min <= p5 <= p25 <= median <= p75 <= p95 <= p99
  <= max; min <= mean <= max; the median's interval inside [min, max].
- a load step: completed + errors <= sent; sent at most what the step's duration holds at
  its rate (`settings.load.step_schedule`, the generator's own rule, which several
  generators share); the achieved rate at most what the window could complete (its own completed
  requests and the warm-up's backlog: without a warm-up, no completed request, no rate); latency percentiles positive and ordered p50 <= p90 <= p99 <=
  p99.9 <= max.
- a load job: knee and sustained rate each a step's achieved rate (sustained <= knee), the
  sustained p99 a step's p99.
- CPU usage: mean_percent <= max_percent.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.core.results.errors import ResultsDataError
from app.core.settings.load import step_schedule

#: The earliest time a run may carry: the Unix epoch, which is what a machine whose clock
#: was never set reads (so a run on it is still stored and read back).
EARLIEST_TIME = datetime(1970, 1, 1, tzinfo=UTC)
#: The latest: far past any real run, and far enough from datetime's year 9999 that
#: converting to any UTC offset (up to ±24 h) or adding a duration cannot overflow.
LATEST_TIME = datetime(2200, 1, 1, tzinfo=UTC)
#: Floating-point slack for relations between figures computed from the same samples
#: (a mean of identical values may differ from them in the last bits).
_REL = 1e-9

_PERCENTILE_ORDER = ("min", "p5", "p25", "median", "p75", "p95", "p99", "max")
_LATENCY_ORDER = ("p50", "p90", "p99", "p99.9", "max")


def _where(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f'{path}["{key}"]'


def _le(a: float, b: float) -> bool:
    """a <= b, up to rounding in the last bits."""
    return a <= b + _REL * max(abs(a), abs(b))


def parse_time(text: Any) -> datetime | None:
    """The moment an ISO 8601 time with a UTC offset names, inside the accepted range;
    None for anything else (no offset, out of range, not a time, not a string)."""
    if not isinstance(text, str) or len(text) > 64:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None or moment.utcoffset() is None:
        return None
    try:
        in_range = EARLIEST_TIME <= moment < LATEST_TIME
    except OverflowError:  # year 1 or 9999 with an offset: beyond datetime's range in UTC
        return None
    return moment if in_range else None


def time_problem(text: Any) -> str | None:
    """Why `text` is not a time a run can carry, or None."""
    if parse_time(text) is not None:
        return None
    shown = repr(text) if not isinstance(text, str) else text[:60]
    return (
        f"expected an ISO 8601 time with a UTC offset, from {EARLIEST_TIME.year} to before "
        f"{LATEST_TIME.year} (e.g. 2024-05-01T12:00:00+00:00), got {shown!r}"
        if isinstance(text, str)
        else f"expected an ISO 8601 time, got {shown}"
    )


def check_time(obj: dict[str, Any], key: str, path: str) -> None:
    """`obj[key]`, when present and not null, is a time a run can carry."""
    value = obj.get(key)
    if value is None:
        return
    problem = time_problem(value)
    if problem is not None:
        raise ResultsDataError(_where(path, key), problem)


def check_metric_plausible(metric: dict[str, Any], path: str) -> None:
    """A metric's statistics as summarize() makes them (see the module's docstring)."""
    values = {key: float(metric[key]) for key in _PERCENTILE_ORDER}
    # Every metric is a time in seconds (check_metrics.METRIC_UNIT, checked before this).
    for key in _PERCENTILE_ORDER[:1] + ("mean",):
        if float(metric[key]) < 0:
            raise ResultsDataError(_where(path, key), f"expected a non-negative time (seconds), got {metric[key]!r}")
    for lower, upper in zip(_PERCENTILE_ORDER, _PERCENTILE_ORDER[1:], strict=False):
        if not _le(values[lower], values[upper]):
            raise ResultsDataError(
                _where(path, upper),
                f"expected at least {lower} ({values[lower]!r}): percentiles must not decrease, got {values[upper]!r}",
            )
    mean = float(metric["mean"])
    if not (_le(values["min"], mean) and _le(mean, values["max"])):
        raise ResultsDataError(
            _where(path, "mean"),
            f"expected a mean between min ({values['min']!r}) and max ({values['max']!r}), got {mean!r}",
        )
    ci = metric.get("ci95")
    if ci is not None and not (_le(values["min"], float(ci[0])) and _le(float(ci[1]), values["max"])):
        raise ResultsDataError(
            _where(path, "ci95"),
            f"expected the median's interval inside [min, max] ({values['min']!r}, {values['max']!r}), got {ci!r}",
        )


def check_load_plausible(load: dict[str, Any], path: str) -> None:
    """A load job's steps and what they add up to (see the module's docstring)."""
    duration = load.get("duration_s")
    warmup = load.get("warmup_s") or 0.0
    steps = load.get("steps") or []
    achieved: list[float] = []
    p99s: list[float] = []
    for i, step in enumerate(steps):
        where = f"{path}.steps[{i}]"
        offered = float(step["offered_per_s"])
        sent = step.get("sent")
        completed, errors = step.get("completed"), step.get("errors")
        if sent is not None:
            if duration:
                most = _most_sent(step, float(duration), offered)
                if sent > most:
                    raise ResultsDataError(
                        f"{where}.sent",
                        f"expected at most {most} (a {float(duration):g} s window at {offered:g}/s), got {sent}",
                    )
            for key, count in (("completed", completed), ("errors", errors)):
                if count is not None and count > sent:
                    raise ResultsDataError(f"{where}.{key}", f"expected at most sent ({sent}), got {count}")
            if completed is not None and errors is not None and completed + errors > sent:
                raise ResultsDataError(
                    f"{where}.errors",
                    f"expected completed + errors at most sent ({sent}), got {completed} + {errors}",
                )
            if sent > 0:
                # The window lasts at least sent / offered seconds; in it the server may
                # complete the step's own requests that succeeded (every one is `completed`:
                # its latency is recorded wherever it lands) and the warm-up's backlog
                # (overload), no more. So a step of 948 errors and 0 completed may show an
                # achieved rate only with a warm-up: the warm-up's replies, answered in the
                # window (LoadGenerator._replied). (+1 request and -2 ns: the window's ends
                # are whole nanoseconds.)
                backlog = _warm_up(step, float(warmup), offered)
                own = completed if completed is not None else sent
                most_rate = (own + backlog + 1) / max(sent / offered - 2e-9, 1e-12)
                rate = float(step["achieved_per_s"])
                if not _le(rate, most_rate):
                    raise ResultsDataError(
                        f"{where}.achieved_per_s",
                        f"expected at most {most_rate:g}/s ({own} requests {'completed' if completed is not None else 'sent'} "
                        f"and {backlog} of warm-up in a window of {sent / offered:g} s), got {rate!r}",
                    )
        latency = step.get("latency_s") or {}
        for name, value in latency.items():
            if float(value) <= 0:
                raise ResultsDataError(
                    f"{where}.latency_s{_where('', name)}", f"expected a positive time (seconds), got {value!r}"
                )
        present = [name for name in _LATENCY_ORDER if name in latency]
        for lower, upper in zip(present, present[1:], strict=False):
            if not _le(float(latency[lower]), float(latency[upper])):
                raise ResultsDataError(
                    f"{where}.latency_s{_where('', upper)}",
                    f"expected at least {lower} ({latency[lower]!r}), got {latency[upper]!r}",
                )
        achieved.append(float(step["achieved_per_s"]))
        if "p99" in latency:
            p99s.append(float(latency["p99"]))
    for key in ("knee_per_s", "sustained_per_s"):
        value = load.get(key)
        if value is not None and float(value) not in achieved:
            raise ResultsDataError(
                f"{path}.{key}",
                f"expected one of the steps' achieved rates ({_rates(achieved)}), got {value!r}",
            )
    knee, sustained = load.get("knee_per_s"), load.get("sustained_per_s")
    if knee is not None and sustained is not None and float(sustained) > float(knee):
        raise ResultsDataError(f"{path}.sustained_per_s", f"expected at most knee_per_s ({knee!r}), got {sustained!r}")
    p99 = load.get("sustained_p99_s")
    if p99 is not None and float(p99) not in p99s:
        raise ResultsDataError(f"{path}.sustained_p99_s", f"expected one of the steps' p99 latencies, got {p99!r}")


def _shares(step: dict[str, Any]) -> list[float]:
    """The offered rates of a step's generators' own records (none for one generator)."""
    return [float(part["offered_per_s"]) for part in step.get("generators") or () if isinstance(part, dict)]


def _most_sent(step: dict[str, Any], duration: float, offered: float) -> int:
    """The most requests a step's window may have sent: its schedule (`step_schedule`, which
    several generators share, each sending its part of it). Results written before they
    shared it have each generator round its own share's window, up to one request a
    generator more: their sum is allowed too."""
    most = step_schedule(offered, 0.0, duration)[1]
    shares = _shares(step)
    if shares:
        most = max(most, sum(step_schedule(share, 0.0, duration)[1] for share in shares))
    return most


def _warm_up(step: dict[str, Any], warmup: float, offered: float) -> int:
    """The requests of a step's warm-up (`step_schedule`), or for results written before its
    generators shared one schedule, the sum of each one's own."""
    most = step_schedule(offered, warmup, 0.0)[0]
    shares = _shares(step)
    if shares:
        most = max(most, sum(step_schedule(share, warmup, 0.0)[0] for share in shares))
    return most


def _rates(rates: list[float]) -> str:
    if not rates:
        return "there are no steps"
    shown = ", ".join(f"{r:g}" for r in rates[:6])
    return shown + (", ..." if len(rates) > 6 else "")


def check_cpu_plausible(block: dict[str, Any], path: str) -> None:
    """One process's CPU summary: its mean at most its maximum."""
    mean, top = block.get("mean_percent"), block.get("max_percent")
    if mean is not None and top is not None and not _le(float(mean), float(top)):
        raise ResultsDataError(f"{path}.mean_percent", f"expected at most max_percent ({top!r}), got {mean!r}")
