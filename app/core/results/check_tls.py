"""The check of a tls13 job's `tls` record (app.core.records.tls_record) read back from a
results file or a store row: names as text, counts a handshake could have, and the last
handshake's flights within the byte range the record states for every handshake.
"""

from __future__ import annotations

from typing import Any

from app.core.records.tls_record import SENDERS
from app.core.results.check_fields import (
    check_bool,
    check_int,
    check_list,
    check_str,
    fail,
    is_int,
    join,
)
from app.core.results.errors import ResultsDataError

#: Bounds of what a handshake can hold: a record's names are short; a flight or a chain
#: of this app's is under 64 KiB (app.core.tls.sides.MAX_HANDSHAKE_BYTES), a handshake
#: has a few flights, a chain a few certificates.
_NAME_CHARS = 100
_MAX_BYTES = 1 << 24
_MAX_FLIGHTS = 16
_MAX_MESSAGES = 32
_MAX_CERTIFICATES = 16
_MAX_HANDSHAKES = 1 << 40


def check_tls(tls: dict[str, Any], path: str, load_steps: int | None = None) -> None:
    """{"version", "group", "cipher", "signature", "client_signature", "resumed", "retries",
    "handshakes", "client_bytes", "server_bytes", "flights", "round_trips", "chain_bytes",
    "chain_signatures", "client_chain_bytes", "ticket_bytes", "library", "steps"}; a load
    job's `steps` one per step of its `load` (`load_steps`; None: the job has no load)."""
    for key in ("version", "group", "cipher"):
        check_str(tls, key, path, non_empty=True, max_chars=_NAME_CHARS)
    for key in ("signature", "client_signature"):
        check_str(tls, key, path, required=False, nullable=True, max_chars=_NAME_CHARS)
    check_str(tls, "library", path, required=False, max_chars=_NAME_CHARS)
    check_bool(tls, "resumed", path)
    check_int(tls, "retries", path, high=_MAX_FLIGHTS, required=False)
    check_int(tls, "handshakes", path, low=1, high=_MAX_HANDSHAKES)
    check_int(tls, "round_trips", path, high=_MAX_FLIGHTS)
    check_int(tls, "ticket_bytes", path, high=_MAX_BYTES, required=False)
    ranges = {sender: _byte_range(tls, f"{sender}_bytes", path) for sender in SENDERS}
    totals = dict.fromkeys(SENDERS, 0)
    flights = check_list(tls, "flights", path, required=True)
    if len(flights) > _MAX_FLIGHTS:
        raise fail(join(path, "flights"), f"at most {_MAX_FLIGHTS} flights", f"{len(flights)} of them")
    for k, flight in enumerate(flights):
        where = join(join(path, "flights"), k)
        if not isinstance(flight, dict):
            raise fail(where, "an object", flight)
        sender = check_str(flight, "sender", where, choices=SENDERS)
        size = check_int(flight, "bytes", where, low=1, high=_MAX_BYTES)
        assert sender is not None and size is not None
        totals[sender] += size
        messages = check_list(flight, "messages", where)
        if len(messages) > _MAX_MESSAGES or not all(isinstance(m, str) and len(m) <= _NAME_CHARS for m in messages):
            raise fail(join(where, "messages"), f"at most {_MAX_MESSAGES} message names", messages)
    for sender, (low, high) in ranges.items():
        if flights and not low <= totals[sender] <= high:
            raise ResultsDataError(
                join(path, "flights"),
                f"the {sender}'s flights add up to {totals[sender]:,} bytes, outside its {sender}_bytes [{low}, {high}]",
            )
    for key in ("chain_bytes", "client_chain_bytes"):
        sizes = check_list(tls, key, path)
        if len(sizes) > _MAX_CERTIFICATES or not all(is_int(s) and 0 < s <= _MAX_BYTES for s in sizes):
            raise fail(join(path, key), f"at most {_MAX_CERTIFICATES} certificate sizes in bytes", sizes)
    _check_steps(tls, path, load_steps)
    names = check_list(tls, "chain_signatures", path)
    if len(names) > _MAX_CERTIFICATES or not all(isinstance(n, str) and len(n) <= _NAME_CHARS for n in names):
        raise fail(join(path, "chain_signatures"), f"at most {_MAX_CERTIFICATES} algorithm names", names)


def _byte_range(tls: dict[str, Any], key: str, path: str) -> tuple[int, int]:
    value = tls.get(key)
    if not (isinstance(value, list) and len(value) == 2 and all(is_int(v) and 0 <= v <= _MAX_BYTES for v in value)):
        raise fail(join(path, key), f"[fewest, most] bytes per handshake (0..{_MAX_BYTES})", value)
    if value[0] > value[1]:
        raise fail(join(path, key), "[fewest, most] in order", value)
    return value[0], value[1]


def _check_steps(tls: dict[str, Any], path: str, load_steps: int | None) -> None:
    """A load job's handshakes per step: as many as its load steps, each count a step could
    have (resumed ones among those completed)."""
    steps = check_list(tls, "steps", path)
    where = join(path, "steps")
    if steps and load_steps is None:
        raise fail(where, "no steps: the job ran no load", f"{len(steps)} steps")
    if load_steps is not None and len(steps) != load_steps:
        raise fail(where, f"one per load step ({load_steps})", f"{len(steps)} steps")
    for k, step in enumerate(steps):
        at = join(where, k)
        if not isinstance(step, dict):
            raise fail(at, "an object", step)
        counts = {key: check_int(step, key, at, high=_MAX_HANDSHAKES) for key in ("handshakes", "resumed", "failed")}
        check_int(step, "retries", at, high=_MAX_HANDSHAKES, required=False)
        if (counts["resumed"] or 0) > (counts["handshakes"] or 0):
            raise fail(join(at, "resumed"), f"at most its handshakes ({counts['handshakes']})", counts["resumed"])
