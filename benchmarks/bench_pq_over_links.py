"""The `pq-over-links` preset on both emulations, side by side: what the packet path changes.

Runs the preset twice, over the packet path (the kernel's TCP over emulated IP packets)
and over the stream relay, or reads two results files from such runs, and prints per
scheme and link the median handshake round trip (`handshake_rtt`: the receiver's public
material and the sender's handshake, each one frame) and message round trip (`rtt`,
1 KiB) on each, their ratio, and per link and metric which pairs of schemes change order.
Only pairs whose medians' 95 % intervals are apart in both runs are compared; the rest
are within noise on one side, and are counted apart.

Needs root for the packet path. Run:
    .venv/bin/python benchmarks/bench_pq_over_links.py               # both runs, ~25 min
    .venv/bin/python benchmarks/bench_pq_over_links.py --packet P.json --relay R.json
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.results.model import JobResult, load_results_file
from app.core.vocab import LinkEmulation

CLI = [sys.executable, "-m", "app", "run", "pq-over-links", "--no-store", "--quiet"]


def _run(emulation: str, out: Path) -> Path:
    subprocess.run([*CLI, "--link-emulation", emulation, "--json", str(out)], check=True)
    return out


def _key(job: JobResult) -> tuple[str, str]:
    assert job.link is not None
    return job.label.split(" over ")[0], str(job.link.name)


def _median(job: JobResult, metric: str) -> float | None:
    found = job.metrics.get(metric)
    return found.stats.median if found is not None else None


def _interval(job: JobResult, metric: str) -> tuple[float, float] | None:
    found = job.metrics.get(metric)
    if found is None or found.stats.ci95 is None:
        return None
    low, high = found.stats.ci95
    return low, high


def _separated(a: JobResult, b: JobResult, metric: str) -> bool:
    """The two medians' 95 % intervals do not overlap."""
    first, second = _interval(a, metric), _interval(b, metric)
    return first is not None and second is not None and (first[1] < second[0] or second[1] < first[0])


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packet", type=Path, help="results JSON of the preset over the packet path")
    parser.add_argument("--relay", type=Path, help="results JSON of the preset over the stream relay")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        packet_file = args.packet or _run("packet", Path(folder) / "packet.json")
        relay_file = args.relay or _run("stream-relay", Path(folder) / "relay.json")
        packet, relay = load_results_file(packet_file), load_results_file(relay_file)
    for run, emulation in ((packet, LinkEmulation.PACKET), (relay, LinkEmulation.DELAY_LINE)):
        wrong = [job.label for job in run.jobs if job.link is None or job.link.emulation != emulation]
        if wrong:
            print(f"{run.id}: {len(wrong)} jobs not over the {emulation} emulation, e.g. {wrong[0]}")
            return 2
    by_key = {_key(job): job for job in relay.jobs if job.status == "ok"}
    print(f"packet path: run {packet.id} ({packet.started}); stream relay: run {relay.id} ({relay.started})")
    print("scheme | link | handshake rtt packet / relay (ms) | ratio | message rtt packet / relay (ms) | ratio")
    links: dict[str, list[tuple[JobResult, JobResult]]] = {}
    for job in packet.jobs:
        other = by_key.get(_key(job))
        if job.status != "ok" or other is None:
            print(f"{' | '.join(_key(job))} | not measured on both: {job.error or 'missing over the relay'}")
            continue
        links.setdefault(_key(job)[1], []).append((job, other))
        cells = []
        for metric in ("handshake_rtt", "rtt"):
            a, b = _median(job, metric), _median(other, metric)
            ratio = f"{a / b:.3f}" if a and b else "-"
            cells.append(f"{_ms(a)} / {_ms(b)} | {ratio}")
        print(f"{' | '.join(_key(job))} | {' | '.join(cells)}")
    print()
    print("link | metric | pairs of schemes both emulations separate (95 % intervals apart) | of them, order flipped")
    for link, pairs in links.items():
        for metric in ("handshake_rtt", "rtt"):
            separated, flipped = 0, []
            for k, (a_packet, a_relay) in enumerate(pairs):
                for b_packet, b_relay in pairs[k + 1 :]:
                    if not (_separated(a_packet, b_packet, metric) and _separated(a_relay, b_relay, metric)):
                        continue  # within noise on one side or both: not a ranking to compare
                    separated += 1
                    packet_first = (_median(a_packet, metric) or 0) < (_median(b_packet, metric) or 0)
                    relay_first = (_median(a_relay, metric) or 0) < (_median(b_relay, metric) or 0)
                    if packet_first != relay_first:
                        flipped.append(f"{_key(a_packet)[0]} / {_key(b_packet)[0]}")
            print(f"{link} | {metric} | {separated} | {len(flipped)}" + "".join(f"\n    {f}" for f in flipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
