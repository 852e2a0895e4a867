"""`cryptobench run`: a profile file or a preset, measured, stored and exported."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, add_store_option, open_store
from app.cli.common import console as _console
from app.cli.terminal.console import escape
from app.cli.terminal.printing import count_phrase, print_per_sample, print_summary, profile_job_count
from app.core.vocab import (
    DEFAULT_LINK_EMULATION,
    DEFAULT_PLACEMENT,
    CongestionControl,
    ExportFormat,
    JobStatus,
    LinkEmulationChoice,
    Mode,
    PlacementPolicy,
    TcpConnection,
)

NAME = "run"
HELP = "run a profile file or a preset"
GUIDES = ("docs/command-line.md", "docs/profiles.md")
#: What it prints is an account of the work, whose result is the store and the files it
#: writes: standard output lost to a full disk is said, and does not fail it (`app.cli.main`).
PRINTS_RESULT = False


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "profile", metavar="PROFILE_FILE_OR_PRESET", help="a profile file, or a preset's name (cryptobench presets)"
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        type=Path,
        help="also write the results to FILE as results JSON (docs/results-format.md)",
    )
    p.add_argument(
        "--csv", metavar="FILE", type=Path, help="also write the results to FILE as CSV, one row per job and metric"
    )
    group = p.add_mutually_exclusive_group()
    add_store_option(group, "record the run in")
    group.add_argument("--no-store", action="store_true", help="do not record the run in the store")
    p.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="measure N samples per metric in every job instead of the profile's (load jobs take none: left alone)",
    )
    p.add_argument(
        "--link",
        metavar="NAME|JSON",
        help="run every loopback job over this emulated link: a preset (`cryptobench links`) or a "
        'JSON object such as \'{"delay_ms": 20, "rate_kbit": 8000}\'',
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run every load job's generators on the workers of this Dask scheduler, tcp://HOST:PORT or "
        "tls://HOST:PORT (one generator per worker; needs the cluster extra; docs/cluster.md)",
    )
    p.add_argument(
        "--generators",
        type=int,
        metavar="N",
        help="with --cluster: use N of the scheduler's workers (default: every worker)",
    )
    p.add_argument(
        "--cluster-plain-tcp",
        action="store_true",
        help="with --cluster tcp://...: confirm that the load server's token may travel to workers on other "
        "machines over plain TCP (use tls:// to keep it secret)",
    )
    p.add_argument(
        "--link-emulation",
        choices=[choice.value for choice in LinkEmulationChoice],
        help="how every linked job's link is emulated: packet (the kernel's TCP over emulated packets; needs root), "
        "stream-relay, or auto (packet where this machine allows it, else the relay); without it, each job's "
        f"profile setting, else {DEFAULT_LINK_EMULATION}",
    )
    p.add_argument(
        "--tcp-connection",
        choices=[choice.value for choice in TcpConnection],
        help="which TCP connection every linked job's messages use on the packet path: warm (the session's "
        "one connection) or fresh (a new one per message: slow start from the initial window, what first "
        "contact pays); without it, each job's profile setting, else warm",
    )
    p.add_argument(
        "--tcp-congestion-control",
        choices=[control.value for control in CongestionControl],
        help="the congestion control both ends of every linked job use on the packet path (refused where the "
        "kernel does not offer it); without it, each job's profile setting, else the kernel's default",
    )
    p.add_argument(
        "--placement",
        choices=[policy.value for policy in PlacementPolicy],
        help="override every job's CPU placement: same (all of a job's processes on one CPU), split "
        "(sender and receiver on different CPUs) or free (the scheduler decides); without it, "
        f"each job's profile setting, else {DEFAULT_PLACEMENT}",
    )
    p.add_argument(
        "--reduced",
        action="store_true",
        help="check a profile end to end in seconds: 3 samples, messages up to 64 KiB "
        "(the numbers are not for comparison)",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar (the line per finished job and the summary are still printed)",
    )
    p.add_argument(
        "--per-sample",
        action="store_true",
        help="also print each sample's computation and communication delay (session jobs)",
    )
    p.add_argument(
        "--remote", metavar="HOST:PORT", help="run every job as a session against `cryptobench serve` on HOST:PORT"
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        type=Path,
        help="the server's token file (default: the one `serve` made in the user data dir)",
    )


def run(args: argparse.Namespace) -> int:
    from app.core.profile.files import load_profile
    from app.core.profile.resolve import resolve_jobs
    from app.core.settings.profile import ProfileError

    remote = _remote_target(args.remote, args.token_file) if args.remote else None
    if args.token_file is not None and remote is None:
        raise UsageError("--token-file is for --remote runs")
    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        raise _profile_usage_error(exc, args, remote is not None) from None
    try:
        profile = _edited(profile, args, remote is not None)
    except ProfileError as exc:  # an option is wrong: that first (the file is checked as it changes it)
        raise UsageError(str(exc)) from None
    try:  # validate before opening the store or spawning anything
        jobs = resolve_jobs(profile, args.profile, has_remote=remote is not None)
    except ProfileError as exc:
        raise _profile_usage_error(exc, args, remote is not None) from None
    guess = _announce_estimate(profile.name, jobs, quiet=args.quiet)
    from app.cli.exports import DestinationError, check_destinations, descriptor_reserve

    try:  # every destination, before the store is opened or anything is spawned
        check_destinations(
            [(option, path) for option, path in (("--json", args.json), ("--csv", args.csv)) if path is not None]
        )
    except DestinationError as exc:
        raise UsageError(str(exc)) from None
    # A few descriptors held from the start and freed for the exports: a run that ran
    # out of them midway (a job's spawn failed with EMFILE) can still write its results.
    with descriptor_reserve() as free_reserve:
        return _execute_run(args, profile, remote, free_reserve, guess)


def _announce_estimate(name: str, jobs: Any, *, quiet: bool) -> Any:
    """Say how long the run is expected to take, on stderr, before it starts: always for a
    run whose estimate's upper end passes five minutes (the window asks first; a terminal
    run, perhaps in a pipe or CI, never waits for an answer), else unless --quiet."""
    from app.core.run.estimate import estimate_run

    guess = estimate_run(jobs)
    busy = f" ({guess.busy_note()})" if guess.busy_note() else ""
    if guess.long:
        print(
            f"cryptobench: {name}: estimated {guess.text()} on this machine{busy}; Ctrl-C stops it "
            "(the jobs finished so far are kept)",
            file=sys.stderr,
        )
    elif not quiet:
        print(f"cryptobench: {name}: estimated {guess.text()} on this machine{busy}", file=sys.stderr)
    return guess


def _execute_run(args: argparse.Namespace, profile: Any, remote: Any, free_reserve: Any, guess: Any = None) -> int:
    from app.cli.exports import write_all
    from app.cli.terminal.signals import StopSignals, describe
    from app.core.contracts.events import JobFinished, LogMessage, Progress, RunEvent, RunStarted
    from app.core.escaping import escape_control
    from app.core.run.runner import Runner
    from app.core.store.store import StoreError
    from app.core.store.unstored import import_command
    from app.core.vocab import LogLevel
    from app.report.exporters import export  # imported now: descriptors may have run out by the end

    # A shared store's server that cannot be reached does not stop the run: it is measured,
    # exported, and kept whole in a results file to import later (app/core/store/unstored.py).
    unreachable: list[str] = []
    store = None if args.no_store else open_store(args.store, unreachable=unreachable)
    for line in unreachable:
        print(f"cryptobench: warning: {escape_control(line)}; the run goes on and is kept in a file", file=sys.stderr)
    console = _console()
    cancel = threading.Event()
    progress_state: dict[int, tuple[int, int]] = {}
    from rich.progress import (
        BarColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as Bar

    from app.cli.terminal.time_left import TimeLeft

    time_left = TimeLeft(guess)
    bar = Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:.0f}/{task.total:.0f} jobs"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[left]}"),
        console=console,
        disable=args.quiet,
        transient=True,
    )
    task = bar.add_task("starting", total=1, left="")

    display_errors: list[str] = []

    def on_event(event: RunEvent) -> None:
        # Display only: a line that cannot be drawn (a lazy import of rich's tables when
        # no file descriptor is left) must never stop the measurement.
        try:
            show(event)
        except Exception as exc:  # noqa: BLE001
            if not display_errors:
                display_errors.append(f"{type(exc).__name__}: {exc}")

    def show(event: RunEvent) -> None:
        if isinstance(event, RunStarted):
            bar.update(task, total=event.total_jobs, description=f"run {event.run_id}")
        elif isinstance(event, Progress):
            progress_state[event.job_index] = (event.done, event.total)
            done, total = event.done, max(1, event.total)
            finished = sum(1 for i in progress_state if i < event.job_index)
            bar.update(task, completed=min(finished + done / total, bar.tasks[0].total or 1))
            bar.update(task, left=time_left.text(event.job_index, done / total))
        elif isinstance(event, JobFinished):
            r = event.result
            mark = "[green]ok[/]" if r.status == JobStatus.OK else f"[red]{r.status}[/]"
            error = escape(r.error) if r.error else ""
            if console.is_terminal:
                line = f"{mark} #{r.index + 1} {escape(r.label)} · {r.message_size} B" + (
                    f" — {error}" if error else ""
                )
            else:  # one plain line per finished job, led by its status as on a terminal ("ok | #3 | ...")
                line = f"{mark} | #{r.index + 1} | {escape(r.label)} | {r.message_size} B" + (
                    f" | {error}" if error else ""
                )
            bar.console.print(line)
            time_left.finished(r.index + 1)
            bar.update(task, completed=r.index + 1, left=time_left.text(r.index + 1, 0.0))
        elif isinstance(event, LogMessage) and event.level == LogLevel.WARNING and event.job_index is None:
            # The run's own warnings (stability pre-flight, parallel jobs): one line each on stderr.
            print(f"cryptobench: warning: {escape_control(event.text)}", file=sys.stderr)

    from rich.cells import cell_len

    cell_len("—≥")  # loads rich's character-width tables now, not when files may have run out
    runner = Runner(profile, store=store, on_event=on_event, cancel=cancel, source=args.profile, remote=remote)
    if unreachable:
        runner.store_error = unreachable[0]  # kept in a file at the end, as a store failing mid-run
    internal_error: str | None = None
    # Ctrl-C, SIGTERM and SIGHUP stop like the window's Stop (app.cli.terminal.signals); the handlers
    # stay in place until the exports are written, so no signal cuts one in half.
    with StopSignals(cancel, announce=lambda line: print(line, file=sys.stderr)) as stop:
        try:
            with bar:
                run = runner.run()
        except KeyboardInterrupt:
            # A second stop signal (or Ctrl-C before the handlers): the jobs that finished
            # are kept, in the store and in the exports below.
            cancel.set()
            if runner.current_run is None:
                raise
            run = runner.current_run
            stop.signum = stop.signum or signal.SIGINT
        except StoreError as exc:  # the store refused to begin the run: nothing has run yet
            raise UsageError(str(exc)) from None
        except Exception as exc:  # a defect: say so, and still keep every finished job
            if runner.current_run is None:
                raise
            run = runner.current_run
            internal_error = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        finally:
            # The run is over (or aborted): a signal from here on must not cut the store's
            # close or the exports in half (it escaped as "interrupted", exit 130, no export).
            stop.running = False
            if store is not None:
                store.close()
        free_reserve()
        print_summary(console, run)
        if args.per_sample:
            print_per_sample(console, run)
        writers = []  # each one written even if another fails
        if args.json is not None:
            writers.append((args.json, lambda: export(ExportFormat.JSON, run, args.json)))
        if args.csv is not None:
            writers.append((args.csv, lambda: export(ExportFormat.CSV, run, args.csv)))
        unwritten = write_all(writers, lambda line: print(f"cryptobench: error: {line}", file=sys.stderr))
    failed = [job for job in run.jobs if job.status != JobStatus.OK]
    if store is None and not unreachable:
        where = " (not stored)"
    elif runner.store_error:
        kept_file = (
            f"; kept in {runner.kept_file}: `{import_command(runner.kept_file, args.store)}`"
            if runner.kept_file
            else ""
        )
        where = f" (NOT all stored: {escape(runner.store_error)}{escape(kept_file)})"
    else:
        where = f" (stored as {run.id})"
    ok = len(run.jobs) - len(failed)
    sweeps = any(job.links for job in profile.jobs)
    console.print(f"{count_phrase(len(run.jobs), profile_job_count(run), ok, links=sweeps)}{where}")
    written = [path for path, _ in writers if path not in unwritten]
    kept = ("" if store is None or runner.store_error else " in the store") + (" and the exports" if written else "")
    if display_errors:
        print(
            f"cryptobench: warning: some progress lines could not be shown ({display_errors[0]}); the run "
            "was not affected",
            file=sys.stderr,
        )
    if internal_error is not None:
        print(
            f"cryptobench: error: the run stopped on an internal error ({internal_error}); the "
            f"{len(run.jobs)} jobs recorded are kept{kept}",
            file=sys.stderr,
        )
    if stop.signum is not None:
        done = sum(1 for job in run.jobs if job.status != JobStatus.CANCELLED)
        print(
            f"cryptobench: stopped by {describe(stop.signum)} after {done} of {runner.total_jobs} jobs; "
            f"their results are kept{kept}",
            file=sys.stderr,
        )
        return 128 + stop.signum
    if unwritten:
        return EXIT_USAGE
    return EXIT_OK if not failed and not runner.store_error and internal_error is None else EXIT_FAILED


def _edited(profile: Any, args: argparse.Namespace, has_remote: bool) -> Any:
    """The profile as the command line's options change it (--reduced, --samples, --link, ...)."""
    from app.core.profile.edits import (
        reduced,
        with_cluster,
        with_congestion_control,
        with_link,
        with_link_emulation,
        with_mode,
        with_placement,
        with_samples,
        with_tcp_connection,
    )

    if args.reduced:
        profile = reduced(profile)
    if args.samples is not None:
        profile = with_samples(profile, args.samples)
    if args.link is not None:
        profile = with_link(profile, args.link)
    if args.link_emulation is not None:
        profile = with_link_emulation(profile, args.link_emulation)
    if args.tcp_connection is not None:
        profile = with_tcp_connection(profile, args.tcp_connection)
    if args.tcp_congestion_control is not None:
        profile = with_congestion_control(profile, args.tcp_congestion_control)
    if args.placement is not None:
        profile = with_placement(profile, args.placement)
    if args.cluster is not None:
        profile = with_cluster(profile, args.cluster, args.generators, args.cluster_plain_tcp)
    elif args.generators is not None or args.cluster_plain_tcp:
        from app.core.settings.profile import ProfileError

        raise ProfileError(
            "is for generators on a Dask cluster: give --cluster ADDRESS too",
            field="--generators" if args.generators is not None else "--cluster-plain-tcp",
        )
    if has_remote:
        profile = with_mode(profile, Mode.REMOTE, "--remote", args.remote)
    return profile


def _profile_usage_error(exc: Any, args: argparse.Namespace, has_remote: bool) -> UsageError:
    """Every problem of a profile file, one line each naming the file and the field (the
    window's Open names them all too); each job is checked as this command runs it, with
    the options' changes. A preset's or an option's error alone."""
    from app.cli.common import is_regular_file
    from app.core.profile.problems import all_problems

    profile = args.profile
    problems = all_problems(
        exc,
        Path(profile) if is_regular_file(profile) else None,
        edit=lambda p: _edited(p, args, has_remote),
        has_remote=has_remote,
    )
    if len(problems) < 2:
        return UsageError(str(exc))
    # The core's error as it said it (an override's names no file); the others name the file.
    said = f"{exc.field}: {exc.detail}" if exc.field else exc.detail
    return UsageError(*(str(exc) if line == said else f"{profile}: {line}" for line in problems))


def _host_port(text: str) -> tuple[str, int]:
    """HOST:PORT, or [IPv6]:PORT."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--remote: expected HOST:PORT with a port in 1..65535 (got {text!r})")
    return host, int(port)


def _remote_target(text: str, token_file: Path | None) -> Any:
    from app.core.serve.server import TokenFileError, default_token_path, load_token
    from app.core.transport.connect import RemoteTarget

    host, port = _host_port(text)
    path = token_file or default_token_path()
    try:
        token = load_token(path)
    except TokenFileError as exc:
        hint = "" if token_file else " (pass --token-file FILE: a copy of the server's token file)"
        raise UsageError(f"{exc}{hint}") from None
    return RemoteTarget(host, port, token)
