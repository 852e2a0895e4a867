"""What one operation of a scheme costs on this machine: the figures a run's estimate
(app.core.run.estimate) multiplies by the samples a job will take.

Each scheme/backend/parameters key has its costs per operation in seconds: key
generation, the key agreement's exchange, and each message operation as a line
`fixed + per_byte × size` (measured at two sizes, so a 113 MiB message is priced from
what 1 KiB and 1 MiB cost). `resources/estimates/op_costs.json` holds them for every
job of the presets, measured on the machine named in it by
`benchmarks/catalog_op_costs.py`, with that machine's `speed_probe()`; here the probe is
run again (once, ~20 ms) and the catalogue scaled by the ratio, so a machine twice as
slow gets estimates twice as long. A key the catalogue does not have is probed here
(`probe_costs`: one call of each operation, a key generation included), once per
process.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from app.core.resources import resource_path
from app.core.schemes import registry
from app.core.schemes.base import KEYGEN_ON_SENDER, NO_KEYGEN, OPEN_METRIC, SEAL_METRIC, ExtraOperation
from app.core.schemes.tls13 import Tls13Scheme
from app.core.tls.ops import TlsPair
from app.core.vocab import LEGACY_EXCHANGE, Family

CATALOGUE = ("estimates", "op_costs.json")
#: A machine this many times slower or faster than the catalogue's is taken at this bound:
#: beyond it the probe measured something else (a stall), not the machine.
MAX_SCALE = 4.0
#: How long `cpu_slowdown` watches, how long its figure is kept, and the most it says.
SHARE_WINDOW_S = 0.2
SHARE_TTL_S = 30.0
MAX_SLOWDOWN = 8.0
#: A run loses about half of what the busy loop loses: its processes wait on pipes,
#: forks and sockets, and the scheduler favours a task that slept over one that never
#: does. Fitted on this machine at loads of 7 to 12 on 2 CPUs (benchmarks/README.md,
#: "Run estimates against actual runs").
SLOWDOWN_WEIGHT = 0.5
#: Message sizes a probe times the message operations at; a line through them prices the rest.
PROBE_SMALL = 1024
PROBE_LARGE = 1 << 20
#: A key generation slower than this is timed once, not as the best of several.
SLOW_PROBE_S = 0.02
#: The large probe is kept to about this long a call: a chunked pure-Python ElGamal of
#: 1 MiB would take minutes, so such a scheme's line is drawn through a smaller size.
LARGE_PROBE_BUDGET_S = 0.1


@dataclass(frozen=True)
class Line:
    """A cost `fixed + per_byte × size` seconds."""

    fixed: float
    per_byte: float = 0.0

    def at(self, size: int) -> float:
        return max(self.fixed + self.per_byte * size, 0.0)


@dataclass(frozen=True)
class OpCosts:
    """One scheme/backend/parameters' costs on this machine, in seconds."""

    family: Family
    keygen: float = 0.0  # 0: the family has none (hash, KDF)
    exchange: float = 0.0  # key agreement only: an ephemeral key, the DH, the KDF
    #: Message operations timed per size, by metric (encrypt/decrypt, sign/verify, hash...).
    messages: dict[str, Line] = field(default_factory=dict)
    #: Operations timed besides seal/open (a KEM's encapsulate), independent of size.
    extras: dict[str, float] = field(default_factory=dict)
    #: Where the figures come from: "catalogue" or "probed here".
    source: str = "catalogue"
    #: A tls13 job's handshake bytes (client to server, server to client): what its
    #: handshakes put on a link (0, 0 for every other family).
    handshake_bytes: tuple[int, int] = (0, 0)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "family": str(self.family),
            "keygen": self.keygen,
            "exchange": self.exchange,
            "messages": {name: [line.fixed, line.per_byte] for name, line in self.messages.items()},
            "extras": self.extras,
        }
        if self.handshake_bytes != (0, 0):
            data["handshake_bytes"] = list(self.handshake_bytes)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], scale: float = 1.0, source: str = "catalogue") -> OpCosts:
        return cls(
            family=Family(data["family"]),
            keygen=float(data["keygen"]) * scale,
            exchange=float(data["exchange"]) * scale,
            messages={name: Line(a * scale, b * scale) for name, (a, b) in data["messages"].items()},
            extras={name: float(v) * scale for name, v in data["extras"].items()},
            source=source,
            handshake_bytes=(int(data.get("handshake_bytes", (0, 0))[0]), int(data.get("handshake_bytes", (0, 0))[1])),
        )


def cost_key(scheme: str, backend: str, params: object) -> str:
    return f"{scheme}|{backend}|{json.dumps(params, sort_keys=True, default=str)}"


def speed_probe(rounds: int = 15) -> float:
    """Seconds this machine takes for a fixed mix of interpreter work and hashing, the two
    kinds of work the catalogue's operations are made of: the best of `rounds` short
    tries (~1.5 ms each), so that other programs sharing the CPUs slow few of them: this
    is the machine's speed; how much of it other programs leave is `cpu_slowdown`'s."""
    block = os.urandom(1 << 20)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        total = 0
        for k in range(20_000):
            total += k * k % 7
        hashlib.sha256(block).digest()
        best = min(best, time.perf_counter() - start)
    return best


def cpu_slowdown(window_s: float = SHARE_WINDOW_S) -> float:
    """How much longer CPU work takes here now than on an idle machine: the busy loop's
    reading (`busy_loop_slowdown`, at least 1, at most MAX_SLOWDOWN) weighted by
    SLOWDOWN_WEIGHT. Measured at most every SHARE_TTL_S (the Presets menu and the question
    before Run ask within moments of each other). The load average was tried beside it
    (the lesser of the two): on this machine it lagged bursts of other work and fitted
    the runs worse (benchmarks/README.md, "Run estimates against actual runs")."""
    now = time.monotonic()
    if _share_cache and now - _share_cache[0] < SHARE_TTL_S:
        return _share_cache[1]
    slowdown = weighted(raw_slowdown(busy_loop_slowdown(window_s)))
    _share_cache[:] = [now, slowdown]
    return slowdown


def busy_loop_slowdown(window_s: float = SHARE_WINDOW_S) -> float:
    """A busy loop's wall time over the CPU time it got: other programs sharing the CPUs
    take the rest. A burst of other work in its 0.2 s reads as a busy machine."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < window_s:
        sum(range(2_000))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return wall / max(cpu, 1e-9)


def raw_slowdown(busy_loop: float) -> float:
    """The busy loop's reading, at least 1 and at most MAX_SLOWDOWN (beyond, a stall)."""
    return min(max(busy_loop, 1.0), MAX_SLOWDOWN)


def weighted(raw: float) -> float:
    """The slowdown a run sees for a `raw` one (SLOWDOWN_WEIGHT)."""
    return 1.0 + SLOWDOWN_WEIGHT * (raw - 1.0)


_share_cache: list[float] = []


def _time_one(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _best(call: Callable[[], object], budget_s: float = 0.05, most: int = 50) -> float:
    """The fastest of up to `most` calls within about `budget_s`: one call for a slow one."""
    first = _time_one(call)
    best, spent, done = first, first, 1
    while spent < budget_s and done < most:
        took = _time_one(call)
        best, spent, done = min(best, took), spent + took, done + 1
    return best


def _keygen_cost(call: Callable[[], object]) -> float:
    """A fast key generation: the best of a few calls. A slow one: the mean of three (an RSA
    key generation varies several-fold with its primes; the best would flatter it)."""
    first = _time_one(call)
    if first < SLOW_PROBE_S:
        return min(first, _best(call, most=5))
    return (first + _time_one(call) + _time_one(call)) / 3


def probe_costs(scheme_id: str, backend: str, params: dict[str, Any], large: int = PROBE_LARGE) -> OpCosts:
    """Time each operation of one scheme here: a key generation (`_keygen_cost`), the
    exchange, and each message operation at PROBE_SMALL and `large` bytes."""
    family = registry.get_spec(scheme_id).family
    # In the family's legacy pattern, as the catalogue was timed: `estimate.in_pattern`
    # moves a key establishment into or out of each message for the other one.
    scheme = registry.create(scheme_id, backend, params, LEGACY_EXCHANGE.get(family))
    if isinstance(scheme, Tls13Scheme):
        return _probe_tls(scheme)
    receiver = scheme.new_receiver()
    keygen = 0.0
    if family in KEYGEN_ON_SENDER:
        public = receiver.setup()
        keygen = _keygen_cost(lambda: scheme.new_sender().handshake(public))
    elif family not in NO_KEYGEN:
        public = receiver.setup()
        keygen = _keygen_cost(lambda: scheme.new_receiver().setup())
    else:
        public = receiver.setup()
    exchange = 0.0
    if family is Family.KEY_AGREEMENT:
        exchange = _best(lambda: scheme.new_sender().handshake(public))
    sender = scheme.new_sender()
    receiver.handshake(sender.handshake(public))

    def costs_at(size: int) -> dict[str, float]:
        plaintext = os.urandom(size)
        out = {SEAL_METRIC[family]: _best(lambda: sender.seal(plaintext))}
        open_metric = OPEN_METRIC[family]
        if open_metric is not None:
            payload = b"".join(sender.seal(plaintext))
            out[open_metric] = _best(lambda: receiver.open(payload))
        return out

    info = scheme.info
    # A single-block cipher's largest message, a KDF's one fixed input size.
    small = info.fixed_message_size or min(PROBE_SMALL, info.max_plaintext or PROBE_SMALL)
    at_small = costs_at(small)
    if info.fixed_message_size or info.max_plaintext:
        large = small  # no other size to draw a line through
    # As large as the budget allows if the cost grew in proportion to the size (the worst case).
    large = min(large, int(small * LARGE_PROBE_BUDGET_S / max(max(at_small.values()), 1e-9)))
    messages = {name: Line(cost) for name, cost in at_small.items()}
    if large >= 4 * small:
        big = costs_at(large)
        span = large - small
        for name, cost in at_small.items():
            per_byte = max(big[name] - cost, 0.0) / span
            messages[name] = Line(max(cost - per_byte * small, 0.0), per_byte)
    extras: dict[str, float] = {}
    for extra in scheme.extra_operations(sender, receiver):
        given = extra.make_input()

        def call(extra: ExtraOperation = extra, given: object = given) -> object:
            return extra.run(given)

        extras[extra.metric] = _best(call)
    return OpCosts(family, keygen, exchange, messages, extras, source="probed here")


def _probe_tls(scheme: Tls13Scheme) -> OpCosts:
    """A tls13 job's costs: making its chains (its "key generation"), one handshake of both
    ends over memory (its "exchange", and the bytes each way), a record's seal and open."""
    start = time.perf_counter()
    pair = TlsPair(scheme)
    keygen = time.perf_counter() - start
    flights = pair.connect().log.flights
    handshake = _best(pair.connect, most=3)
    pair.close_all()
    up = sum(flight.bytes for flight in flights if flight.sender == "client")
    down = sum(flight.bytes for flight in flights if flight.sender == "server")
    # The record layer costs about what AES-GCM does, a few microseconds a KiB: priced as
    # a fixed part and a per-byte part, without a probe of its own.
    record = Line(20e-6, 1e-9)
    return OpCosts(Family.TLS, keygen, handshake, {"encrypt": record, "decrypt": record}, {}, "probed here", (up, down))


@dataclass(frozen=True)
class Catalogue:
    """The stored costs, already scaled to this machine."""

    costs: dict[str, OpCosts]
    scale: float  # this machine's speed probe / the catalogue machine's


def load_catalogue(data: dict[str, Any], here_probe_s: float) -> Catalogue:
    reference = float(data.get("speed_probe_s") or here_probe_s)
    scale = min(max(here_probe_s / reference, 1 / MAX_SCALE), MAX_SCALE) if reference > 0 else 1.0
    costs = {key: OpCosts.from_json(value, scale) for key, value in data.get("costs", {}).items()}
    return Catalogue(costs, scale)


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The bundled catalogue scaled to this machine (probed once per process)."""
    try:
        data = json.loads(resource_path(*CATALOGUE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    return load_catalogue(data, speed_probe())


_probed: dict[str, OpCosts | None] = {}


def costs_for(scheme: str, backend: str, params: object, *, probe: bool = True) -> OpCosts | None:
    """The costs of one key: the catalogue's, else probed here (once per process, when
    `probe`), else None (the scheme cannot be created here)."""
    key = cost_key(scheme, backend, params)
    found = catalogue().costs.get(key)
    if found is not None or not probe:
        return found
    if key not in _probed:
        try:
            _probed[key] = probe_costs(scheme, backend, dict(params) if isinstance(params, dict) else {})
        except Exception:  # noqa: BLE001 - an estimate must not fail a run: unknown is said as such
            _probed[key] = None
    return _probed[key]
