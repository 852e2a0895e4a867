"""A load job on a reduced budget (`app.core.profile.edits.reduced`: CI and `--reduced`).

A full load job offers each rate for its warm-up plus its duration, and a sweep offers up
to ten of them after a closed-loop estimate: the handshakes-under-load preset spends
about 25 s a job. A reduced job checks the same path (server, generator, steps, the
`Load` record, the report) in about a second: few clients (each prepares its pool of
requests first, up to half a second each), two short steps at fixed low rates that any
scheme's server keeps up with on a small machine. Its numbers are not for comparison.
"""

from __future__ import annotations

from typing import Any

from app.core.settings.load import LoadFields, LoadSettings

REDUCED_CLIENTS = 2
REDUCED_DURATION_S = 0.2
REDUCED_WARMUP_S = 0.05
#: A reduced sweep offers these instead of sweeping: a sweep's closed-loop estimate and its
#: up to ten steps are what makes a full job long. Low enough for RSA-3072 decryption on
#: a busy two-core machine (about 2 ms a request: 500/s at most).
REDUCED_RATES: tuple[float, ...] = (20.0, 50.0)


def reduced_load(fields: LoadFields, is_load: bool) -> dict[str, Any]:
    """The field updates that shorten a load job (none for a job in another mode). Explicit
    rates keep their first and last; a sweep becomes REDUCED_RATES."""
    if not is_load:
        return {}
    defaults = LoadSettings()
    rates = fields.rates
    if rates is None and isinstance(fields.rate_per_s, float):
        rates = [fields.rate_per_s]
    kept = [rates[0], rates[-1]] if rates is not None and len(rates) > 2 else rates
    return {
        "clients": min(fields.clients or defaults.clients, REDUCED_CLIENTS),
        "server_workers": min(fields.server_workers or defaults.server_workers, REDUCED_CLIENTS),
        "rates": kept if kept is not None else list(REDUCED_RATES),
        "rate_per_s": None,
        "duration_s": min(fields.duration_s or defaults.duration_s, REDUCED_DURATION_S),
        "warmup_s": min(fields.warmup_s if fields.warmup_s is not None else defaults.warmup_s, REDUCED_WARMUP_S),
    }
