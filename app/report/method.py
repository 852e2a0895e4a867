"""The report's Method section: what each metric times, warm-up and batching, where the
processes ran (CPU placement) and how many samples each figure rests on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.records import placement_words as placement
from app.core.records.job_records import SAMPLING_INTERVAL_S
from app.core.results.model import METRIC_DESCRIPTIONS, JobResult, RunResult
from app.core.vocab import SESSION_MODES, Exchange, LinkEmulation, Mode, TcpConnection
from app.report.load import load_method
from app.report.load_words import placement_text
from app.report.model import (
    Block,
    Bullets,
    Paragraph,
    Section,
)
from app.report.units import span_text


def method_section(run: RunResult) -> Section:
    present = {name for job in run.jobs for name in job.metrics}
    ordered = [n for n in METRIC_DESCRIPTIONS if n in present] + sorted(present - set(METRIC_DESCRIPTIONS))
    blocks: list[Block] = [Paragraph("What each metric times (every time is per operation, in seconds):")]
    blocks.append(
        Bullets(
            [f"**{n}**: {METRIC_DESCRIPTIONS.get(n, 'no description recorded')}" for n in ordered]
            or ["No metric was measured."]
        )
    )
    # Each paragraph describes only what some job of this run did: samples, warm-up, key
    # generations and batching belong to timed jobs (operations, sessions); a load job
    # offers requests at rates for durations, which its own paragraph (load_method) says.
    timed = [job for job in run.jobs if job.mode != Mode.LOAD]
    blocks += _sample_counts(run, timed)
    if timed:
        blocks.append(Paragraph(_batching(timed)))
    if any(job.mode in SESSION_MODES for job in run.jobs):
        blocks.append(
            Paragraph(
                "Loopback and remote jobs run the sender and the receiver as separate processes connected by TCP. "
                "**compute** is the sender sealing a message, **receiver** the receiver opening and validating it "
                "(timed in its own process), **rtt** the time from sending a message to receiving its "
                "acknowledgement at the sender, and **network** = rtt − receiver, per sample: the transport's share. "
                "**floor_rtt** is a raw ping-pong of frames of the payload's size on the same connection, without "
                "cryptography: the fastest round trip that connection allows."
            )
        )
    blocks += _exchange(run)
    blocks += _links(run)
    blocks += load_method(run)
    blocks += _placement(run)
    interval = next((job.cpu.interval_s for job in run.jobs if job.cpu.interval_s), SAMPLING_INTERVAL_S)
    traced = any(m.traced_peak_bytes is not None for job in timed for m in job.metrics.values())
    blocks.append(
        Paragraph(
            (
                "Time and memory come from separate passes. Python's tracemalloc slows the code it traces "
                "several-fold, so the peak traced memory (allocations through Python's allocator) is measured in an "
                "extra, untimed pass. "
                if traced
                else ""
            )
            + "Resident memory (RSS) and CPU use per process come from a psutil sampler every "
            f"{interval * 1000:.0f} ms; CPU above 100 % means more than one core was busy."
        )
    )
    throughput = any(m.throughput_bytes_per_s for job in timed for m in job.metrics.values())
    blocks.append(
        Paragraph(
            "Statistics: the headline is the **median**, because timings are skewed (an interruption costs far more "
            "than it saves). Its 95 % confidence interval comes from order statistics, which needs no assumption "
            "about the distribution. p95 is the 95th percentile, CV the coefficient of variation (standard "
            "deviation / mean). Outliers are samples whose modified z-score (from the median and the median "
            "absolute deviation, MAD) exceeds 3.5: they are counted and flagged, never dropped."
            + (" Throughput is the message size divided by the median time." if throughput else "")
        )
    )
    return Section("Method", blocks)


#: What each exchange pattern does, in the Method section's words.
_PATTERN_WORDS = {
    Exchange.SESSION: "one key establishment per session, in the handshake (the sender's ephemeral key pair and "
    "key agreement, or its encapsulation, and the KDF; the receiver's agreement or decapsulation and the KDF), "
    "then AES-256-GCM per message under that key, as TLS does: **handshake** and **handshake_receiver** hold the key "
    "exchange, **compute** and **receiver** (operations: encrypt and decrypt) are AEAD alone",
    Exchange.PER_MESSAGE: "a fresh key establishment in every message (KEM-DEM, ECIES-style public-key encryption: "
    "each payload carries its encapsulation or ephemeral public key): **compute** and **receiver** (operations: "
    "encrypt and decrypt) hold the key exchange, and the handshake only loads the receiver's key",
}


def _exchange(run: RunResult) -> list[Block]:
    """How the run's key-establishing jobs established their keys (`exchange`), pattern by
    pattern, and how results recorded before jobs named it are read."""
    keyed = [job for job in run.jobs if job.exchange_used is not None]
    if not keyed:
        return []
    items = []
    for pattern in Exchange:
        jobs = list(dict.fromkeys(job.label for job in keyed if job.exchange_used is pattern))
        if jobs:
            shown = ", ".join(jobs[:PLACEMENT_ITEMS]) + (
                f" and {len(jobs) - PLACEMENT_ITEMS} more" if len(jobs) > PLACEMENT_ITEMS else ""
            )
            items.append(f"**exchange {pattern}** ({_plural(len(jobs), 'job')}: {shown}): {_PATTERN_WORDS[pattern]}.")
    text = (
        "Key agreement and hybrid (KEM) jobs say how they establish their AES-256-GCM keys (their exchange "
        "pattern); figures of the two patterns are different work per message, and are compared only within one. "
        "Operations jobs time one key establishment at each end whatever the pattern (**exchange**, "
        "**exchange_receiver**)."
    )
    legacy = sum(1 for job in keyed if job.exchange is None)
    if legacy:
        text += (
            f" {_plural(legacy, 'result')} of this run were recorded before jobs named their pattern and are read as "
            "what they measured then: a key agreement once per session, a hybrid per message."
        )
    return [Paragraph(text), Bullets(items)]


def _batching(timed: list[JobResult]) -> str:
    metrics = [m for job in timed for m in job.metrics.values()]
    batched = [m.batch for m in metrics if m.batch > 1]
    text = (
        "Fast operations are batched: when one call is too short for the clock to time reliably, each "
        "sample times a batch of consecutive calls and reports the time per call."
    )
    if not batched:
        return text + " No metric of this run needed batching: every sample is one call."
    return text + (
        f" In this run {len(batched)} of {len(metrics)} metrics were batched "
        f"({span_text(min(batched), max(batched), '{:,}'.format)} calls per sample); their samples are "
        "per-call averages, so their spread understates the spread of single calls."
    )


def _plural(count: Any, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


#: The placement lines and unusual placements the Method section lists before summarizing.
PLACEMENT_ITEMS = 8


def _placement(run: RunResult) -> list[Block]:
    """The CPU placement policy and, per distinct placement, where the processes were
    allowed (and seen); a sentence for each job whose placement looks wrong or mixed."""
    placed = [job for job in run.jobs if job.placement is not None]
    if not placed:
        return [Paragraph("Which CPUs the processes ran on was not recorded for this run (CPU placement).")]
    policies = sorted({job.placement.policy for job in placed if job.placement is not None})
    text = (
        f"CPU placement: {' and '.join(policies)} (same: all of a job's processes pinned to one CPU; split: "
        "sender and receiver pinned to different CPUs, the link process with the receiver"
        + (
            "; a load job's generator is its sender, its server the receiver"
            if any(j.mode == Mode.LOAD for j in placed)
            else ""
        )
        + "; free: the "
        "scheduler decides). Each process's allowed CPUs were read back after pinning; the CPUs it was seen "
        "on come from the resource sampler's readings."
    )
    if len(placed) < len(run.jobs):
        text += f" {len(run.jobs) - len(placed)} of {len(run.jobs)} jobs have no placement record."
    lines: dict[str, int] = {}
    for job in placed:
        if job.placement is not None:
            # A load job's processes by the names its own section uses (server, generator).
            line = placement_text(job) if job.mode == Mode.LOAD else placement.describe(job.placement)
            lines[line] = lines.get(line, 0) + 1
    items = [f"{line}: {count} job{'s' if count != 1 else ''}" for line, count in list(lines.items())[:PLACEMENT_ITEMS]]
    if len(lines) > PLACEMENT_ITEMS:
        items.append(f"and {len(lines) - PLACEMENT_ITEMS} other placements (each job's is in the results file)")
    blocks: list[Block] = [Paragraph(text), Bullets(items)]
    unusual = [
        f"{job.label} ({job.message_size} B): {found}"
        for job in placed
        if job.placement is not None
        for found in placement.anomalies(job.placement)
    ]
    if unusual:
        shown = unusual[:PLACEMENT_ITEMS]
        if len(unusual) > len(shown):
            shown.append(f"and {len(unusual) - len(shown)} more")
        blocks.append(Paragraph("Worth knowing about the placement:"))
        blocks.append(Bullets(shown))
    return blocks


def _sample_counts(run: RunResult, timed: list[JobResult]) -> list[Block]:
    """Samples, warm-up and key generations of the timed jobs (none for a run of load jobs);
    key generations only where some job timed key generation."""
    if not timed:
        return []
    specs = [s for s in run.profile_view.jobs or () if s.get("mode", Mode.OPERATIONS) != Mode.LOAD]
    if not specs:
        return [Paragraph("The profile's sample counts were not recorded; the appendix gives n per metric.")]
    keygen_schemes = {job.scheme for job in timed if "keygen" in job.metrics}

    def counts(spec: Mapping[str, Any], keygen: str | None) -> str:
        text = (
            f"{_plural(spec.get('samples'), 'timed sample')} per metric after "
            f"{_plural(spec.get('warmup'), 'discarded warm-up sample')}"
        )
        return text + (
            f"; {_plural(spec.get('keygen_samples'), 'key generation')} timed{keygen}" if keygen is not None else ""
        )

    combos = {(s.get("samples"), s.get("warmup"), s.get("keygen_samples")) for s in specs}
    who = "Every job" if len(timed) == len(run.jobs) else "Every operations and session job"
    if len(combos) == 1:
        every = keygen_schemes == {job.scheme for job in timed}
        keygen = None if not keygen_schemes else "" if every else " where a job times key generation (keygen)"
        return [Paragraph(f"{who} took {counts(specs[0], keygen)}.")]
    items = []
    for s in specs:
        params = ", ".join(f"{k}={v}" for k, v in (s.get("params") or {}).items())
        name = f"{s.get('scheme')} [{s.get('backend') or 'default'}]" + (f" {params}" if params else "")
        keygen = "" if s.get("scheme") in keygen_schemes else None
        items.append(f"{name}, {s.get('mode', Mode.OPERATIONS)}: {counts(s, keygen)}")
    return [Paragraph("Sample counts per profile job:"), Bullets(items)]


def _links(run: RunResult) -> list[Block]:
    """How this run's links were emulated, with the settings its figures rest on."""
    linked = [job for job in run.jobs if job.link is not None]
    packet = [job for job in linked if job.link is not None and job.link.emulation == LinkEmulation.PACKET]
    relay = [job for job in linked if job.link is not None and job.link.emulation == LinkEmulation.DELAY_LINE]
    blocks: list[Block] = []
    if packet:
        paths = [job.path for job in packet if job.path is not None]
        queues = sorted({(p.queue_packets, p.queue_bytes) for p in paths if p.queue_packets and p.queue_bytes})
        controls = sorted({p.congestion_control for p in paths if p.congestion_control})
        fresh = sum(1 for job in packet if job.link is not None and job.link.connection == TcpConnection.FRESH)
        flagged = sum(1 for p in paths if p.late)
        text = (
            f"{len(packet)} of this run's measured jobs ran over the **packet path**: sender and receiver each in a "
            "network namespace of the job's own, joined through TUN devices by a link process that forwards their IP "
            "packets per direction through a drop-tail queue"
            + (
                " (" + "; ".join(f"{packets:,} packets or {size / 1e6:g} MB" for packets, size in queues) + ")"
                if queues
                else ""
            )
            + ", serialization at the rate counting every header byte, the one-way delay plus jitter without "
            "reordering, and loss (independent, or bursty where a link says so). The kernel's own TCP runs over "
            "it" + (f" ({', '.join(controls)})" if controls else "") + ": slow start, ACK clocking and retransmission "
            "act on the emulated path. "
            + (
                ("All of them" if fresh == len(packet) else f"{fresh} of them")
                + " sent every timed message and floor ping-pong on a fresh connection (slow start from the initial "
                "window of 10 segments; its set-up timed apart as **connect**)"
                + ("; the others used the session's warm connection. " if fresh < len(packet) else ". ")
                if fresh
                else "Messages travelled on the session's warm connection, whose window had grown. "
            )
            + "Each job records what the path did (packets, drops by cause, the loss achieved with its 95 % interval) "
            "and how late the emulator itself ran"
            + (
                f"; {flagged} measured job(s) carry the link-emulator-late warning: their figures include the "
                "emulator's delay."
                if flagged
                else "; none ran later than its limit (2 % of its link's round trip, at least 0.5 ms)."
            )
        )
        blocks.append(Paragraph(text))
    if relay:
        blocks.append(
            Paragraph(
                f"{len(relay)} of this run's measured jobs ran over the **stream relay** (labelled so): each end's "
                "TCP connection ends at a link process on loopback, which delays each direction's byte stream "
                "(serialization at the rate, then the delay). It models a message of F bytes arriving 8F/rate plus "
                "the delay after it was sent, but no TCP dynamics on the path (no slow start, no header bytes, no "
                "loss): a message beyond the initial window that a fresh connection would wait a round trip for "
                "arrives without it."
            )
        )
    return blocks
