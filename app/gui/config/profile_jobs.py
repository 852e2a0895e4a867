"""A configuration-panel row (`JobEntry`) as a profile job, and as the tree's texts.

`job_dict` writes the job a row stands for as a profile writes it (the panel builds its
profile from these, and the core checks it); `mode_text`, `sizes_text` and
`security_badge` are what the tree shows of it. Qt-free: the rules can be read and
tested on their own.
"""

from __future__ import annotations

from typing import Any

from app.core.errors import RegistryError
from app.core.profile.sizes import human_size
from app.core.schemes import registry
from app.core.schemes.base import SchemeSpec
from app.core.settings.load import LoadSettings
from app.core.vocab import SESSION_MODES, Family, Mode
from app.gui.config.job_settings import NOT_FOR_LOAD, NUMBER_KEYS, JobEntry, default_settings
from app.gui.config.link_editor import link_fields, mode_suffix
from app.gui.config.load_editor import LOAD_KEYS, rate_summary
from app.gui.vocab import Tone

#: Settings a load job does not use (it runs no sample rounds, no key-generation rounds and
#: no pause between them): written only when a profile set them, so a saved load job reads
#: as what it runs. Tamper applies (tampered requests must be refused).
_NOT_FOR_LOAD = frozenset(NOT_FOR_LOAD)


def security_badge(spec: SchemeSpec, backend: str, params: dict[str, Any]) -> tuple[str, Tone | None]:
    """Badge text and its tone (bad, good or none) for a scheme row."""
    try:
        info = spec.create(backend, params).info
    except RegistryError:
        return "invalid", None  # the panel's validation names the problem
    if info.insecure:
        return f"insecure ({info.security.classical_bits}-bit)", Tone.BAD
    if info.security.pq_category and spec.family not in (Family.AEAD, Family.HASH, Family.KDF):
        # Symmetric primitives keep a PQ category (Grover only halves them); the badge
        # marks the public-key schemes built to resist a quantum computer.
        return f"post-quantum cat. {info.security.pq_category}", Tone.GOOD
    return f"{info.security.classical_bits}-bit", None


def _fixed_size(entry: JobEntry) -> int | None:
    spec = registry.get_spec(entry.scheme)
    try:
        return spec.create(entry.backend, entry.params).info.fixed_message_size
    except RegistryError:
        return None


def sizes_text(entry: JobEntry) -> str:
    fixed = _fixed_size(entry)
    if fixed is not None:
        return f"{human_size(fixed)} (fixed)"
    return ", ".join(human_size(size) for size in entry.sizes())


def mode_text(entry: JobEntry) -> str:
    """ "loopback (Nagle on) · LTE", "load · 4 clients · sweep", "ops · per-message"."""
    mode = Mode(entry.settings["mode"])
    text = mode.short
    if mode in SESSION_MODES and entry.settings.get("tcp_nodelay") is False:
        text += " (Nagle on)"
    if mode == Mode.LOAD:
        clients = entry.settings.get("clients") or LoadSettings().clients
        text += f" · {clients} clients · {rate_summary(entry.settings)}"
    exchange = entry.exchange()
    if exchange is not None:  # how a key agreement or hybrid job establishes its keys
        text += f" · {exchange}"
    return text + mode_suffix(entry.settings)


def job_dict(entry: JobEntry) -> dict[str, Any]:
    """The profile job a row stands for, as a profile file writes it."""
    settings = entry.settings
    job: dict[str, Any] = {
        "scheme": entry.scheme,
        "backend": entry.backend,
        "params": dict(entry.params),
        "mode": settings["mode"],
    }
    load = settings["mode"] == Mode.LOAD
    defaults = default_settings()
    for key in NUMBER_KEYS:
        if not (load and key in _NOT_FOR_LOAD and settings[key] == defaults[key]):
            job[key] = settings[key]
    if settings.get("message_sizes") is not None:
        job["message_sizes"] = list(settings["message_sizes"])
    if settings.get("label"):
        job["label"] = settings["label"]
    if settings.get("tcp_nodelay") is False and job["mode"] in SESSION_MODES:
        job["tcp_nodelay"] = False
    if settings.get("placement") is not None:
        job["placement"] = str(settings["placement"])
    if settings.get("exchange") is not None and entry.establishes_a_key:
        job["exchange"] = str(settings["exchange"])
    job.update(link_fields(settings))
    if load:
        job.update(
            {
                key: (list(settings[key]) if isinstance(settings[key], list) else settings[key])
                for key in LOAD_KEYS
                if settings.get(key) is not None
            }
        )
    if _fixed_size(entry) is not None:
        job.pop("message_sizes", None)  # a KDF's input size is its secret_size parameter
    return job
