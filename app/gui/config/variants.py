"""What "Add variant" adds: a job of the same scheme that differs from every other row
of that scheme, so it is a second job and not a repeat that disables Run.

The new row takes a key agreement or hybrid job's other exchange pattern (ML-KEM-768
per session gives ML-KEM-768 per message), the next value of the first parameter with a
choice of values (AES-GCM 256 gives AES-GCM 128... in the order the scheme lists them,
after the current one), a switch turned over (textbook RSA with and without the CRT), or
another backend; the first of these that no row of the scheme has yet, and that the
scheme accepts. A scheme with nothing left to vary (SHA-256 through one backend) gets a
copy, and the panel says at once what must change (problem_words.REPEAT_FIX): its mode,
exchange, link or message sizes.
Qt-free, so the rule can be read and tested on its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from app.core.errors import RegistryError
from app.core.schemes.base import SchemeSpec
from app.core.schemes.dh import canonical_curve
from app.core.vocab import Exchange
from app.gui.config.job_settings import JobEntry

__all__ = ["distinct_variant"]


def _copy(entry: JobEntry, backend: str, params: dict[str, Any], exchange: Exchange | None) -> JobEntry:
    settings = {k: (list(v) if isinstance(v, list) else v) for k, v in entry.settings.items()}
    settings["label"] = None  # a label names one job: the new one is another
    if exchange is not None:
        settings["exchange"] = exchange
    return JobEntry(entry.scheme, backend, params, settings)


Candidate = tuple[str, dict[str, Any], Exchange | None]


def _candidates(spec: SchemeSpec, entry: JobEntry) -> Iterator[Candidate]:
    exchange = entry.exchange()
    if exchange is not None:  # the same key establishment in the other pattern first
        yield entry.backend, dict(entry.params), next(other for other in Exchange if other is not exchange)
    for param in spec.params:
        current = entry.params.get(param.name, param.default)
        if param.choices:
            at = param.choices.index(current) if current in param.choices else -1
            for step in range(1, len(param.choices)):
                changed = entry.params | {param.name: param.choices[(at + step) % len(param.choices)]}
                yield entry.backend, changed, exchange
        elif isinstance(param.default, bool):
            yield entry.backend, entry.params | {param.name: not current}, exchange
    for backend in spec.backends:
        if backend != entry.backend:
            yield backend, dict(entry.params), exchange


def _same(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters as the core tells jobs apart: a curve's alias (secp256r1) is its curve (P-256)."""
    return {k: canonical_curve(v) if k == "curve" and isinstance(v, str) else v for k, v in params.items()}


def distinct_variant(spec: SchemeSpec, entry: JobEntry, rows: Sequence[JobEntry]) -> JobEntry | None:
    """A copy of `entry` (its settings too) whose backend, parameters and exchange pattern no
    row in `rows` has; None when the scheme offers no such combination."""
    taken = [(row.backend, _same(row.params), row.exchange()) for row in rows if row.scheme == entry.scheme]
    for backend, params, exchange in _candidates(spec, entry):
        try:
            resolved = spec.resolve_params(backend, params)
        except RegistryError:
            continue  # e.g. a key size this backend does not offer
        if (backend, _same(resolved), exchange) not in taken:
            return _copy(entry, backend, resolved, exchange)
    return None
