"""A load job's steps in the CSV export: a row per step, and per generator of a cluster job.

The CSV gives one row per job and metric (app.core.results.model `to_csv`); a load job's
figures are its steps, which no metric row holds. So a load job also gets one row per step
(metric `load step`: the step's merged figures) and, when its generators ran on Dask
workers, one row per generator and step (metric `load generator`: that generator's own
record, where it ran and how its clock stood), so a spreadsheet can filter or pivot on
them. A generator an incomplete step lacks gets a row with its place and no figures, the
step's reason in `load_note`. These rows fill only LOAD_CSV_COLUMNS (appended after every
earlier column) beside the job's identity; every other job's rows leave them empty.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.core.records.job_conditions import LOAD_PERCENTILES, Load, LoadGeneratorPlace, LoadStep

#: The metric cell of a step's row and of a generator's row.
STEP_METRIC = "load step"
GENERATOR_METRIC = "load generator"
#: The latency columns of a step's row, seconds ("latency_p99.9" for p99.9).
LATENCY_CSV_COLUMNS = tuple(f"latency_{name}" for name, _ in LOAD_PERCENTILES) + ("latency_max",)
LOAD_CSV_COLUMNS = (
    "load_step",
    "load_generator",
    "generator_host",
    "generator_worker",
    "generator_clients",
    "generator_clock_offset",
    "generator_clock_uncertainty",
    "offered_per_s",
    "achieved_per_s",
    "sent",
    "completed",
    "load_errors",
    "missed",
    *LATENCY_CSV_COLUMNS,
    "send_lag_p99",
    "generator_cpu_percent",
    "server_cpu_percent",
    "step_limit",
    "load_note",
)


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _figures(step: LoadStep) -> dict[str, object]:
    latency = {column: _number(step.latency_s.get(column.removeprefix("latency_"))) for column in LATENCY_CSV_COLUMNS}
    return {
        "unit": "s",
        "offered_per_s": _number(step.offered_per_s),
        "achieved_per_s": _number(step.achieved_per_s),
        "sent": step.sent,
        "completed": step.completed,
        "load_errors": step.errors,
        "missed": step.missed,
        **latency,
        "send_lag_p99": _number(step.send_lag_p99_s),
        "generator_cpu_percent": _number(step.generator_cpu_percent),
        "server_cpu_percent": _number(step.server_cpu_percent),
    }


def _place(number: int, place: LoadGeneratorPlace) -> dict[str, object]:
    return {
        "metric": GENERATOR_METRIC,
        "load_generator": number,
        "generator_host": place.host,
        "generator_worker": place.worker,
        "generator_clients": place.clients,
        "generator_clock_offset": _number(place.clock_offset_s),
        "generator_clock_uncertainty": _number(place.clock_uncertainty_s),
    }


def load_rows(load: Load) -> Iterator[dict[str, object]]:
    """The step rows (and generator rows) of one load job, in step order, each step's
    generators after it by number; cells of LOAD_CSV_COLUMNS plus `metric` and `unit`."""
    for index, step in enumerate(load.steps, start=1):
        note = step.incomplete or step.limit_reason or step.saturation_reason or ""
        yield {
            "metric": STEP_METRIC,
            "load_step": index,
            **_figures(step),
            "step_limit": step.limit.value if step.limit is not None else "",
            "load_note": note,
        }
        by_number = {part.generator: part for part in step.generators}
        for number, place in enumerate(load.generators, start=1):
            part = by_number.get(number)
            if part is None:
                missing = (
                    f"did not return this step: {step.incomplete}" if step.incomplete else "did not return this step"
                )
                yield {"load_step": index, **_place(number, place), "load_note": missing}
            else:
                yield {
                    "load_step": index,
                    **_place(number, place),
                    **_figures(part),
                    "load_note": part.saturation_reason or "",
                }
