"""Plans for tests that drive a measuring child's code directly (no runner, no profile file)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.schemes import registry
from app.core.settings.profile import ResolvedJob
from app.core.vocab import DEFAULT_EXCHANGE, KEY_ESTABLISHING, Mode

_JOB_FIELDS = {f.name for f in fields(ResolvedJob)}
_PEER_FIELDS = {f.name for f in fields(SessionPeer)}


def job_plan(
    scheme: str,
    backend: str = "cryptography",
    params: dict[str, Any] | None = None,
    sizes: list[int] | None = None,
    **settings: Any,
) -> JobPlan:
    """A plan for one job of `scheme`: small defaults, any ResolvedJob field (samples,
    warmup, tamper, ...) or SessionPeer field (host, port, token, reply_timeout, ...) by
    name. Giving a `token` makes it a session plan (mode loopback unless `mode` is given)."""
    unknown = set(settings) - _JOB_FIELDS - _PEER_FIELDS
    if unknown:
        raise TypeError(f"job_plan() got unknown settings {sorted(unknown)}")
    peer_settings = {k: v for k, v in settings.items() if k in _PEER_FIELDS}
    job_settings: dict[str, Any] = {
        "index": 0,
        "scheme": scheme,
        "backend": backend,
        "params": dict(params or {}),
        "message_sizes": sizes or [18],
        "mode": Mode.LOOPBACK if peer_settings else Mode.OPERATIONS,
        "samples": 4,
        "warmup": 1,
        "keygen_samples": 2,
        "pause_ms": 0.0,
        "tamper": 3,
        "label": f"{scheme} [{backend}]",
        "family": registry.get_spec(scheme).family,
        # As profile.resolve gives a key-establishing job its pattern (the default, session).
        "exchange": DEFAULT_EXCHANGE if registry.get_spec(scheme).family in KEY_ESTABLISHING else None,
    }
    job_settings.update({k: v for k, v in settings.items() if k in _JOB_FIELDS})
    peer = None
    if peer_settings:
        peer_settings.setdefault("host", "127.0.0.1")
        peer_settings.setdefault("port", 0)
        peer = SessionPeer(**peer_settings)
    return JobPlan(ResolvedJob(**job_settings), first_index=0, peer=peer)
