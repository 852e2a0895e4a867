"""What the command line prints about load jobs (app/cli/terminal/load_printing.py through print_summary)."""

from __future__ import annotations

from tests.helpers.comparisons import samples
from tests.helpers.loads import KNEE_STEPS, LAG_REASON, load_run
from tests.helpers.records import job
from tests.helpers.terminal import printed_summary


def test_piped_a_load_job_prints_one_line_per_step_its_verdict_and_conditions() -> None:
    text = printed_summary(load_run(), terminal=False)
    lines = text.splitlines()
    head = next(k for k, line in enumerate(lines) if line.strip().startswith("steps: offered/s | achieved/s"))
    steps = lines[head + 1 : head + 1 + len(KNEE_STEPS)]
    assert [line.split(" | ")[0].strip() for line in steps] == ["100", "500", "900", "1,000", "1,100", "1,200"]
    assert steps[2].split(" | ")[2:7] == ["0", "0", "2 ms", "5 ms", "8 ms"]  # errors, missed, p50, p90, p99
    assert (
        "server overloaded (p50 40 ms, 20× the low-load p99 (2 ms); achieved 93 % of offered; server CPU 98 %)"
        in steps[3]
    )
    assert steps[-1].endswith(f"generator limited ({LAG_REASON})")
    assert lines[head + 1 + len(KNEE_STEPS)].strip() == (
        "verdict: server overloaded from the step offered 1,000/s (achieved 930/s: p50 40 ms, 20× the low-load "
        "p99 (2 ms), server CPU 98 %); the knee, the most it achieved, 960 handshakes/s on one core (CPU 1) at "
        "the step offered 1,100/s; sustains 897/s at p99 under 8 ms (1 step the generator limited left out)"
    )
    conditions = lines[head + 2 + len(KNEE_STEPS)]
    assert (
        "8 clients, 1 server process, 2 s per step after 0.5 s warm-up, server on CPU 1, generator on CPU 0"
        in conditions
        and "a pool of 64 per client" in conditions
    )
    assert "verdict: at least 998 handshakes/s" in text and "no step showed server overload" in text
    assert "verdict: generator limited: the load generator, not the server, was the limit" in text


def test_load_jobs_get_their_own_summary_instead_of_session_columns() -> None:
    text = printed_summary(load_run(), terminal=False)
    assert "Summary (median per operation)" not in text  # no job has a per-operation median
    summary = text[text.index("Load summary") :].splitlines()
    assert summary[1:] == [
        # Recorded before jobs named their exchange: each read as what it measured, and said.
        "ML-KEM-768 + AES-256-GCM [cryptography] (per-message) | handshakes | 897 | 8 ms | 960 | ok",
        "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography] (session) | handshakes | 998 | 1.1 ms | 998 (at least) | ok",
        "Ed25519 [cryptography] | signed messages | - | - | none: generator-limited | ok",
    ]
    mixed = load_run()
    mixed.jobs.append(job(mixed.id, 3, 1024, {"encrypt": samples(10e-6)}, label="AES-128-GCM"))
    text = printed_summary(mixed, terminal=False)
    operations = text[text.index("Summary (median per operation)") : text.index("Load summary")]
    assert "AES-128-GCM | 1024 B | encrypt/decrypt" in operations and "ML-KEM" not in operations


def test_on_a_terminal_the_steps_are_a_table_that_fits_80_columns() -> None:
    text = printed_summary(load_run(), terminal=True, width=80)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "latency in ms from each request's intended start" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("1,200†"))
    assert row.split()[1:3] == ["1,150", "0"]  # achieved, errors (no step missed: no "missed" column)
    assert "† 1,200/s: generator limited (the generator handed requests" in text
    assert "† 1,000/s: server overloaded (p50 40 ms" in text
    assert "…" not in text  # nothing cut short
