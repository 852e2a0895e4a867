"""`cryptobench run`: a profile file or a preset, measured, stored and exported."""

from __future__ import annotations

import argparse
import signal
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, add_store_option, open_store
from app.cli.common import console as _console
from app.cli.terminal.lines import say
from app.core.vocab import (
    DEFAULT_LINK_EMULATION,
    DEFAULT_PLACEMENT,
    CongestionControl,
    ExportFormat,
    LinkEmulationChoice,
    Mode,
    PlacementPolicy,
    TcpConnection,
)

if TYPE_CHECKING:  # only named in annotations: the command's modules load when it runs
    from app.cli.terminal.run_display import RunDisplay, RunEnd
    from app.cli.terminal.signals import StopSignals
    from app.core.results.model import RunResult
    from app.core.run.estimate import RunEstimate
    from app.core.run.runner import Runner
    from app.core.settings.profile import Profile, ProfileError, ResolvedJob
    from app.core.transport.connect import RemoteTarget

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
    _add_outputs(p)
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
    _add_cluster_options(p)
    _add_link_path_options(p)
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
    _add_remote_options(p)


def _add_outputs(p: argparse.ArgumentParser) -> None:
    """Where the results go besides the terminal: the exports and the store."""
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


def _add_cluster_options(p: argparse.ArgumentParser) -> None:
    """Load jobs' generators placed on a Dask cluster's workers (docs/cluster.md)."""
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
        help="with --cluster tcp://...: confirm that the load server's token may travel over plain TCP, "
        "the loopback's included: anyone who reaches the scheduler runs code on its workers (use tls:// with "
        "Dask's TLS settings to keep it secret; docs/cluster.md)",
    )


def _add_link_path_options(p: argparse.ArgumentParser) -> None:
    """How every linked job's link is emulated, and the TCP its packet path runs."""
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
        "--link-seed",
        type=int,
        metavar="N",
        help="the seed every emulated link's loss and jitter draws come from (0 to 2^63-1): a run with the "
        "seed another recorded (its jobs' link.seed) loses the same packets; without it, each run draws its own",
    )
    p.add_argument(
        "--tcp-congestion-control",
        choices=[control.value for control in CongestionControl],
        help="the congestion control both ends of every linked job use on the packet path (refused where the "
        "kernel does not offer it); without it, each job's profile setting, else the kernel's default",
    )


def _add_remote_options(p: argparse.ArgumentParser) -> None:
    """Every job as a session against `cryptobench serve` on another machine."""
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
    from app.core.profile.edits import blame_options
    from app.core.profile.files import load_profile
    from app.core.profile.resolve import resolve_jobs
    from app.core.settings.profile import ProfileError

    remote = _remote_target(args.remote, args.token_file) if args.remote else None
    if args.token_file is not None and remote is None:
        raise UsageError("--token-file is for --remote runs")
    try:
        written = load_profile(args.profile)
    except ProfileError as exc:
        raise _profile_usage_error(exc, args, remote is not None) from None
    try:
        profile = _edited(written, args, remote is not None)
    except ProfileError as exc:  # an option is wrong: that first (the file is checked as it changes it)
        raise UsageError(str(exc)) from None
    try:  # validate before opening the store or spawning anything
        jobs = resolve_jobs(profile, args.profile, has_remote=remote is not None)
    except ProfileError as exc:  # a value an option set is the option's error, not the file's
        raise _profile_usage_error(blame_options(exc, written, profile), args, remote is not None) from None
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


def _announce_estimate(name: str, jobs: list[ResolvedJob], *, quiet: bool) -> RunEstimate:
    """Say how long the run is expected to take, on stderr, before it starts: always for a
    run whose estimate's upper end passes five minutes (the window asks first; a terminal
    run, perhaps in a pipe or CI, never waits for an answer), else unless --quiet."""
    from app.core.run.estimate import estimate_run

    guess = estimate_run(jobs)
    busy = f" ({guess.busy_note()})" if guess.busy_note() else ""
    if guess.long:
        say(
            f"cryptobench: {name}: estimated {guess.text()} on this machine{busy}; Ctrl-C stops it "
            "(the jobs finished so far are kept)",
            err=True,
        )
    elif not quiet:
        say(f"cryptobench: {name}: estimated {guess.text()} on this machine{busy}", err=True)
    return guess


def _execute_run(
    args: argparse.Namespace,
    profile: Profile,
    remote: RemoteTarget | None,
    free_reserve: Callable[[], None],
    guess: RunEstimate | None = None,
) -> int:
    """Run the checked profile with its progress shown, keep every finished job (in the
    store, else a file; in the exports), say how it ended and return the exit code."""
    from app.cli.exports import write_all
    from app.cli.terminal.printing import print_per_sample, print_summary
    from app.cli.terminal.run_display import RunDisplay, RunEnd
    from app.cli.terminal.signals import StopSignals
    from app.core.escaping import escape_control
    from app.core.run.runner import Runner
    from app.core.store.unstored import import_command
    from app.report.exporters import export  # imported now: descriptors may have run out by the end

    # A shared store's server that cannot be reached does not stop the run: it is measured,
    # exported, and kept whole in a results file to import later (app/core/store/unstored.py).
    unreachable: list[str] = []
    store = None if args.no_store else open_store(args.store, unreachable=unreachable)
    for line in unreachable:
        say(f"cryptobench: warning: {escape_control(line)}; the run goes on and is kept in a file", err=True)
    console = _console()
    cancel = threading.Event()
    display = RunDisplay(console, guess, quiet=args.quiet)
    runner = Runner(profile, store=store, on_event=display.on_event, cancel=cancel, source=args.profile, remote=remote)
    if unreachable:
        runner.store_error = unreachable[0]  # kept in a file at the end, as a store failing mid-run
    # Ctrl-C, SIGTERM and SIGHUP stop like the window's Stop (app.cli.terminal.signals); the handlers
    # stay in place until the exports are written, so no signal cuts one in half.
    with StopSignals(cancel, announce=lambda line: say(line, err=True)) as stop:
        try:
            run, internal_error = _run_keeping_finished_jobs(runner, display, stop, cancel)
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
        unwritten = write_all(writers, lambda line: say(f"cryptobench: error: {line}", err=True))
    end = RunEnd(
        run=run,
        total_jobs=runner.total_jobs,
        stored=store is not None,
        store_unreachable=bool(unreachable),
        store_error=runner.store_error,
        kept_file=runner.kept_file,
        import_command=import_command(runner.kept_file, args.store) if runner.kept_file else None,
        internal_error=internal_error,
        stop_signum=stop.signum,
        written=[path for path, _ in writers if path not in unwritten],
        unwritten=unwritten,
    )
    display.print_end(end, sweeps=any(job.links for job in profile.jobs))
    return _exit_code(end)


def _run_keeping_finished_jobs(
    runner: Runner, display: RunDisplay, stop: StopSignals, cancel: threading.Event
) -> tuple[RunResult, str | None]:
    """Run the profile with the progress bar up; the run, and the internal error it stopped
    on (None: none). A second stop signal or a defect midway keeps the jobs that finished
    (a stop is recorded as SIGINT unless a signal was seen); a store that refuses to begin
    the run is a usage error, nothing having run."""
    from app.core.store.store import StoreError

    try:
        with display:
            return runner.run(), None
    except KeyboardInterrupt:
        # A second stop signal (or Ctrl-C before the handlers): the jobs that finished
        # are kept, in the store and in the exports below.
        cancel.set()
        if runner.current_run is None:
            raise
        stop.signum = stop.signum or signal.SIGINT
        return runner.current_run, None
    except StoreError as exc:  # the store refused to begin the run: nothing has run yet
        raise UsageError(str(exc)) from None
    except Exception as exc:  # a defect: say so, and still keep every finished job
        if runner.current_run is None:
            raise
        traceback.print_exc()
        return runner.current_run, f"{type(exc).__name__}: {exc}"


def _exit_code(end: RunEnd) -> int:
    """128 + the signal for a run a signal stopped; EXIT_USAGE when an export could not be
    written; EXIT_FAILED when a job failed, a job is not in the store or the run stopped on
    an internal error; else EXIT_OK."""
    if end.stop_signum is not None:
        return 128 + end.stop_signum
    if end.unwritten:
        return EXIT_USAGE
    return EXIT_OK if not end.failed and not end.store_error and end.internal_error is None else EXIT_FAILED


def _edited(profile: Profile, args: argparse.Namespace, has_remote: bool) -> Profile:
    """The profile as the command line's options change it (--reduced, --samples, --link, ...)."""
    from app.core.profile.edits import (
        reduced,
        with_cluster,
        with_congestion_control,
        with_link,
        with_link_emulation,
        with_link_seed,
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
    if args.link_seed is not None:
        profile = with_link_seed(profile, args.link_seed)
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


def _profile_usage_error(exc: ProfileError, args: argparse.Namespace, has_remote: bool) -> UsageError:
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
    # The core's error as it said it; the others name the file, but for an option's ("--link...").
    said = f"{exc.field}: {exc.detail}" if exc.field else exc.detail
    return UsageError(
        *(str(exc) if line == said else line if line.startswith("--") else f"{profile}: {line}" for line in problems)
    )


def _host_port(text: str) -> tuple[str, int]:
    """HOST:PORT, or [IPv6]:PORT."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--remote: expected HOST:PORT with a port in 1..65535 (got {text!r})")
    return host, int(port)


def _remote_target(text: str, token_file: Path | None) -> RemoteTarget:
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
