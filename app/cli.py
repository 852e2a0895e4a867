"""Command line: the headless face of CryptoBench over the same runner as the GUI.

Exit codes: 0 all good; 1 a job or a self-test failed; 2 bad usage or bad input
(the message names the file, the field and the value). Never a traceback for a
user's mistake.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from app import __version__
from app.cli_print import (  # noqa: F401  (escape: imported from here by tests and other modules)
    count_phrase,
    escape,
    print_link_list,
    print_per_sample,
    print_scheme_list,
    print_stability_facts,
    print_summary,
    profile_job_count,
)
from app.cli_common import (  # noqa: F401  (EXIT_*, UsageError: imported from here by tests)
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    MOVE_ASIDE_HINT,
    UsageError,
)
from app.cli_common import console as _console
from app.cli_common import open_store as _open_store
from app.core.session import DEFAULT_PORT
from app.core.vocab import DEFAULT_PLACEMENT, ExportFormat, JobStatus, Mode, PageSize, PlacementPolicy
from app.gui.vocab import PlotTab, Theme



class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep its one-line style
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cryptobench", description="Benchmark cryptographic schemes as they are deployed.")
    parser.add_argument("--version", action="version", version=f"cryptobench {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = commands.add_parser("list", help="list every scheme with family, backends, parameters, security")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    commands.add_parser("presets", help="list the built-in profiles")

    p = commands.add_parser("system", help="report what on this machine makes timings unstable (governor, turbo, "
                                           "SMT, VM steal, other load), each with its fix; changes nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = commands.add_parser("links", help="list the named link presets: their figures and where they come from")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = commands.add_parser("run", help="run a profile file or a preset")
    p.add_argument("profile", metavar="PROFILE_FILE_OR_PRESET")
    p.add_argument("--json", metavar="FILE", type=Path, help="write the results as JSON")
    p.add_argument("--csv", metavar="FILE", type=Path, help="write the results as CSV")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--store", metavar="PATH", type=Path, help="results store (default: user data dir)")
    group.add_argument("--no-store", action="store_true", help="do not record the run in the store")
    p.add_argument("--samples", type=int, metavar="N", help="override every job's sample count")
    p.add_argument("--link", metavar="NAME|JSON",
                   help="run every loopback job over this emulated link: a preset (`cryptobench links`) or a "
                        "JSON object such as '{\"delay_ms\": 20, \"rate_kbit\": 8000}'")
    p.add_argument("--placement", choices=[policy.value for policy in PlacementPolicy],
                   help="override every job's CPU placement: same (all of a job's processes on one CPU), split "
                        "(sender and receiver on different CPUs) or free (the scheduler decides); without it, "
                        f"each job's profile setting, else {DEFAULT_PLACEMENT}")
    p.add_argument("--reduced", action="store_true",
                   help="check a profile end to end in seconds: 3 samples, messages up to 64 KiB "
                        "(the numbers are not for comparison)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--per-sample", action="store_true",
                   help="also print each sample's computation and communication delay (session jobs)")
    p.add_argument("--remote", metavar="HOST:PORT",
                   help="run every job as a session against `cryptobench serve` on HOST:PORT")
    p.add_argument("--token-file", metavar="FILE", type=Path,
                   help="the server's token file (default: the one `serve` made in the user data dir)")

    p = commands.add_parser("serve", help="receive session jobs from `run --remote`, one at a time")
    p.add_argument("--bind", metavar="ADDR", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs --token-file)")
    p.add_argument("--port", metavar="N", type=int, default=None,
                   help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--token-file", metavar="FILE", type=Path,
                   help="token file (64 hex characters, mode 0600); created if missing")

    p = commands.add_parser("history", help="list stored runs")
    p.add_argument("--store", metavar="PATH", type=Path)
    p.add_argument("--json", action="store_true")

    p = commands.add_parser("show", help="show a stored run")
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--store", metavar="PATH", type=Path)
    p.add_argument("--json", action="store_true", help="print the run as results JSON")
    p.add_argument("--per-sample", action="store_true",
                   help="also print each sample's computation and communication delay (session jobs)")

    p = commands.add_parser("report", help="write a report (PDF, Markdown) or export a stored run or results file")
    p.add_argument("source", metavar="RUN_ID_OR_RESULTS_JSON",
                   help="a stored run's id (or a unique prefix), or a results JSON file")
    p.add_argument("--pdf", metavar="FILE", type=Path, help="write a PDF report")
    p.add_argument("--markdown", metavar="FILE", type=Path, help="write a Markdown report")
    p.add_argument("--json", metavar="FILE", type=Path, help="write the results as JSON")
    p.add_argument("--csv", metavar="FILE", type=Path, help="write the results as CSV")
    p.add_argument("--baseline", metavar="RUN_ID_OR_RESULTS_JSON",
                   help="compare against this run (reports: ratio and 95 %% interval per matching job)")
    p.add_argument("--page-size", choices=[size.value for size in PageSize], default=PageSize.A4.value,
                   help="PDF page size (default A4)")
    p.add_argument("--appendix", action=argparse.BooleanOptionalAction, default=True,
                   help="end reports with every statistic of every job (default: on)")
    p.add_argument("--store", metavar="PATH", type=Path, help="results store (default: user data dir)")

    from app.cli_compare import add_parsers as add_compare_parsers

    add_compare_parsers(commands)  # compare, import

    commands.add_parser("selftest", help="known-answer tests for every backend")

    p = commands.add_parser("store", help="check the results store, or move a broken one aside")
    p.add_argument("--store", metavar="PATH", type=Path, help="results store (default: user data dir)")
    p.add_argument("--move-aside", action="store_true",
                   help="rename a corrupted or foreign store file to NAME.broken-DATE (kept, not deleted)")

    p = commands.add_parser("gui", help="open the window (the same as no command)")
    p.add_argument("--quit-after", metavar="SECONDS", type=float,
                   help="close the window after this many seconds (smoke tests, startup budgets)")
    p.add_argument("--startup-report", metavar="FILE", type=Path,
                   help="with --quit-after: write launch time, first paint and peak memory as JSON")
    p.add_argument("--profile", metavar="NAME|FILE", help="open this preset or profile file")
    p.add_argument("--run", action="store_true", help="with --profile: run it at once")
    p.add_argument("--screenshot", metavar="FILE", type=Path,
                   help="save a PNG of the window (after the run with --run), then quit; settings and "
                        "results go to a temporary folder")
    p.add_argument("--tab", choices=[tab.value for tab in PlotTab],
                   help="the plot tab to show")
    p.add_argument("--theme", choices=[theme.value for theme in Theme], help="the theme to show")
    p.add_argument("--size", metavar="WxH", help="window size in pixels, e.g. 1024x700")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from app.cli_output import tolerant_console

    # Every command prints through streams that survive a closed pipe, a closed terminal
    # and a legacy encoding: output is a courtesy, it must never stop the work.
    with tolerant_console():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    from app.cli_compare import cmd_compare, cmd_import
    from app.cli_stored import cmd_history, cmd_report, cmd_show

    handler = {"list": cmd_list, "presets": cmd_presets, "system": cmd_system, "links": cmd_links, "run": cmd_run,
               "history": cmd_history, "show": cmd_show, "selftest": cmd_selftest, "serve": cmd_serve,
               "report": cmd_report, "gui": cmd_gui, "store": cmd_store, "compare": cmd_compare,
               "import": cmd_import}[args.command]
    from app.core.errors import CryptoBenchError

    try:
        return handler(args)
    # A layer's error that no command turned into a UsageError is still the user's
    # message, not a defect: one line and exit code 2 all the same, never a traceback.
    except (UsageError, CryptoBenchError) as exc:
        from app.core.text import escape_control

        print(f"cryptobench: error: {escape_control(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("cryptobench: interrupted", file=sys.stderr)
        return 130


def cmd_store(args: argparse.Namespace) -> int:
    from app.core.store import BrokenStoreError, Store, StoreError, default_store_path, move_aside

    path = args.store or default_store_path()
    runs: list[Any] = []
    damaged: list[str] = []
    try:
        with Store(path) as store:
            try:
                problems = store.integrity_problems()
                runs = store.list_runs()
                if not problems:  # rows SQLite finds sound but that do not read back as results
                    damaged = store.damaged_rows()
                problem = f"{path}: SQLite integrity check failed: {'; '.join(problems[:5])}" if problems else None
            except StoreError as exc:  # it opened, so not busy: pages SQLite cannot read, a damaged file
                problem = str(exc)
    except BrokenStoreError as exc:
        problem = str(exc)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    if problem is None and damaged:
        more = f"; and {len(damaged) - 3} more" if len(damaged) > 3 else ""
        print(f"cryptobench: error: {path}: {len(damaged)} damaged row(s): {'; '.join(damaged[:3])}{more}; the "
              "other jobs of their runs stay readable (`cryptobench show RUN` marks the damaged ones)",
              file=sys.stderr)
        if not args.move_aside:
            return EXIT_FAILED
        problem = f"{path}: {len(damaged)} damaged row(s)"
    elif problem is None:
        if args.move_aside:
            raise UsageError(f"{path}: the store is sound ({len(runs)} runs); nothing was moved")
        print(f"{path}: sound, {len(runs)} runs")
        return EXIT_OK
    if not damaged:
        print(f"cryptobench: error: {problem}{MOVE_ASIDE_HINT}", file=sys.stderr)
    if not args.move_aside:
        return EXIT_FAILED
    try:
        moved = move_aside(path)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    print(f"moved {path} to {moved}; the next run starts a new store at {path}")
    return EXIT_OK


def cmd_gui(args: argparse.Namespace) -> int:
    if args.quit_after is not None and not args.quit_after > 0:
        raise UsageError(f"--quit-after: must be a positive number of seconds, not {args.quit_after}")
    if args.startup_report is not None and args.quit_after is None:
        raise UsageError("--startup-report: needs --quit-after (the report is written when the window closes)")
    if args.run and args.profile is None:
        raise UsageError("--run: needs --profile (the preset or file to run)")
    size = None
    if args.size is not None:
        width, _, height = args.size.lower().partition("x")
        if not (width.isdigit() and height.isdigit() and 320 <= int(width) <= 10000 and 240 <= int(height) <= 10000):
            raise UsageError(f"--size: expected WIDTHxHEIGHT in pixels (320x240 or more), e.g. 1024x700, "
                             f"not {args.size!r}")
        size = (int(width), int(height))
    from app.gui.preflight import check

    problem = check()  # before Qt is imported: no display or a missing library aborts Qt
    if problem is not None:
        raise UsageError(problem.message)
    from app.gui.app import main as gui_main
    from app.gui.screenshot import Plan

    plan = Plan(args.profile, args.run, args.screenshot, args.tab, args.theme, size)
    return gui_main(sys.argv[:1], quit_after=args.quit_after, startup_report=args.startup_report,
                    plan=plan if plan != Plan() else None)


# --- commands -------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from app.core.schemes import registry

    described = [registry.describe(spec) for spec in registry.all_specs()]
    if args.json:
        print(json.dumps(described, indent=2))
        return EXIT_OK
    print_scheme_list(_console(), described)
    return EXIT_OK


def cmd_system(args: argparse.Namespace) -> int:
    """The stability pre-flight every run records (`python -m pyperf system show` is the model);
    exit 0 whatever it finds: it only reports."""
    from app.core.preflight import facts_to_dict, read_facts

    facts = facts_to_dict(read_facts())["facts"]
    if args.json:
        print(json.dumps(facts, indent=2))
        return EXIT_OK
    print_stability_facts(_console(), facts)
    return EXIT_OK


def cmd_presets(args: argparse.Namespace) -> int:
    from app.core.profile import ProfileError, load_profile, preset_names, resolve_jobs

    # The unit `run` reports: measured jobs (a profile job runs once per message size). Any
    # memory: the list describes the presets, not whether this machine can run them now.
    for name in preset_names():
        try:
            profile = load_profile(name)
            measured = sum(len(job.message_sizes) for job in resolve_jobs(profile, name, 1 << 62, has_remote=True))
            sweeps = any(job.links for job in profile.jobs)
            print(f"{name:20s} {count_phrase(measured, len(profile.jobs), links=sweeps)}: {profile.description}")
        except ProfileError as exc:
            print(f"{name:20s} invalid: {exc}")
    return EXIT_OK


def cmd_links(args: argparse.Namespace) -> int:
    from app.core.link.presets import link_presets

    presets = {name: preset.model_dump(mode="json", exclude_none=True) for name, preset in link_presets().items()}
    if args.json:
        print(json.dumps(presets, indent=2))
        return EXIT_OK
    print_link_list(_console(), link_presets())
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from app.core.profile import (
        ProfileError,
        load_profile,
        reduced,
        resolve_jobs,
        with_link,
        with_mode,
        with_placement,
        with_samples,
    )

    remote = _remote_target(args.remote, args.token_file) if args.remote else None
    if args.token_file is not None and remote is None:
        raise UsageError("--token-file is for --remote runs")
    try:
        profile = load_profile(args.profile)
        if args.reduced:
            profile = reduced(profile)
        if args.samples is not None:
            profile = with_samples(profile, args.samples)
        if args.link is not None:
            profile = with_link(profile, args.link)
        if args.placement is not None:
            profile = with_placement(profile, args.placement)
        if remote is not None:
            profile = with_mode(profile, Mode.REMOTE)
        # Validate before opening the store or spawning anything.
        resolve_jobs(profile, args.profile, has_remote=remote is not None)
    except ProfileError as exc:
        raise UsageError(str(exc)) from None
    from app.cli_exports import DestinationError, check_destinations, descriptor_reserve

    try:  # every destination, before the store is opened or anything is spawned
        check_destinations([(option, path) for option, path in (("--json", args.json), ("--csv", args.csv))
                            if path is not None])
    except DestinationError as exc:
        raise UsageError(str(exc)) from None
    # A few descriptors held from the start and freed for the exports: a run that ran
    # out of them midway (a job's spawn failed with EMFILE) can still write its results.
    with descriptor_reserve() as free_reserve:
        return _execute_run(args, profile, remote, free_reserve)


def _execute_run(args: argparse.Namespace, profile: Any, remote: Any, free_reserve: Any) -> int:
    from app.cli_exports import write_all
    from app.cli_stop import StopSignals, describe
    from app.core.events import JobFinished, LogMessage, Progress, RunEvent, RunStarted
    from app.core.runner import Runner
    from app.core.store import StoreError
    from app.core.text import escape_control
    from app.core.vocab import LogLevel
    from app.report.exporters import export  # imported now: descriptors may have run out by the end

    store = None if args.no_store else _open_store(args.store)
    console = _console()
    cancel = threading.Event()
    progress_state: dict[int, tuple[int, int]] = {}
    from rich.progress import (
        BarColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as Bar

    bar = Bar(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:.0f}/{task.total:.0f} jobs"),
              TimeElapsedColumn(), TimeRemainingColumn(), console=console, disable=args.quiet, transient=True)
    task = bar.add_task("starting", total=1)

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
        elif isinstance(event, JobFinished):
            r = event.result
            mark = "[green]ok[/]" if r.status == JobStatus.OK else f"[red]{r.status}[/]"
            bar.console.print(f"{mark} {escape(r.label)} · {r.message_size} B"
                              + (f" — {escape(r.error)}" if r.error else ""))
            bar.update(task, completed=r.index + 1)
        elif isinstance(event, LogMessage) and event.level == LogLevel.WARNING and event.job_index is None:
            # The run's own warnings (stability pre-flight, parallel jobs): one line each on stderr.
            print(f"cryptobench: warning: {escape_control(event.text)}", file=sys.stderr)

    from rich.cells import cell_len

    cell_len("—≥")  # loads rich's character-width tables now, not when files may have run out
    runner = Runner(profile, store=store, on_event=on_event, cancel=cancel, source=args.profile, remote=remote)
    internal_error: str | None = None
    # Ctrl-C, SIGTERM and SIGHUP stop like the window's Stop (app.cli_stop); the handlers
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
            if store is not None:
                store.close()
        stop.running = False
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
    if store is None:
        where = " (not stored)"
    elif runner.store_error:
        where = f" (NOT all stored: {escape(runner.store_error)})"
    else:
        where = f" (stored as {run.id})"
    ok = len(run.jobs) - len(failed)
    sweeps = any(job.links for job in profile.jobs)
    console.print(f"{count_phrase(len(run.jobs), profile_job_count(run), ok, links=sweeps)}{where}")
    written = [path for path, _ in writers if path not in unwritten]
    kept = ("" if store is None or runner.store_error else " in the store") + (" and the exports" if written else "")
    if display_errors:
        print(f"cryptobench: warning: some progress lines could not be shown ({display_errors[0]}); the run "
              "was not affected", file=sys.stderr)
    if internal_error is not None:
        print(f"cryptobench: error: the run stopped on an internal error ({internal_error}); the "
              f"{len(run.jobs)} jobs recorded are kept{kept}", file=sys.stderr)
    if stop.signum is not None:
        done = sum(1 for job in run.jobs if job.status != JobStatus.CANCELLED)
        print(f"cryptobench: stopped by {describe(stop.signum)} after {done} of {runner.total_jobs} jobs; "
              f"their results are kept{kept}", file=sys.stderr)
        return 128 + stop.signum
    if unwritten:
        return EXIT_USAGE
    return EXIT_OK if not failed and not runner.store_error and internal_error is None else EXIT_FAILED


def _host_port(text: str) -> tuple[str, int]:
    """HOST:PORT, or [IPv6]:PORT."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--remote: expected HOST:PORT with a port in 1..65535 (got {text!r})")
    return host, int(port)


def _remote_target(text: str, token_file: Path | None) -> Any:
    from app.core.session.sender import RemoteTarget
    from app.core.session.server import TokenFileError, default_token_path, load_token

    host, port = _host_port(text)
    path = token_file or default_token_path()
    try:
        token = load_token(path)
    except TokenFileError as exc:
        hint = "" if token_file else " (pass --token-file FILE: a copy of the server's token file)"
        raise UsageError(f"{exc}{hint}") from None
    return RemoteTarget(host, port, token)


def cmd_serve(args: argparse.Namespace) -> int:
    from app.core.session.server import (
        Server,
        TokenFileError,
        create_token_file,
        default_token_path,
        is_loopback,
        load_token,
    )

    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port < 65536:
        raise UsageError(f"--port: must be 0..65535 (got {port})")
    if args.token_file is None and not is_loopback(args.bind):
        raise UsageError(f"--bind {args.bind} is not a loopback address: pass --token-file FILE (mode 0600) and "
                         "give the client a copy of it")
    path = args.token_file or default_token_path()
    console = _console()
    try:
        if path.exists():
            token = load_token(path)
        else:
            token = create_token_file(path)
            console.print(f"created token file {escape(str(path))} (copy it to the client machine, keep it private)")
    except TokenFileError as exc:
        raise UsageError(str(exc)) from None

    def log(text: str) -> None:
        from datetime import datetime

        console.print(f"{datetime.now():%H:%M:%S} {escape(text)}")

    try:
        server = Server(token, args.bind, port, log=log)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.bind}:{port}: {exc.strerror or exc}") from None
    host, bound = server.address
    console.print(f"serving on {host}:{bound} with token file {escape(str(path))}; Ctrl-C stops")
    console.print(f"client: cryptobench run PROFILE --remote {args.bind if ':' not in args.bind else f'[{args.bind}]'}"
                  f":{bound} --token-file {escape(str(path))}", soft_wrap=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print(f"stopped after {server.served} job(s), {server.refused} connection(s) refused")
    return EXIT_OK


def cmd_selftest(args: argparse.Namespace) -> int:
    from app.core.selftest import run_selftests

    results = run_selftests()
    for r in results:
        status = "PASS" if r.passed else "FAIL"
        print(f"{status}  {r.backend:13s} {r.kind:12s} {r.name} — {r.source}" + (f": {r.detail}" if r.detail else ""))
    failed = sum(1 for r in results if not r.passed)
    print(f"{len(results) - failed} passed, {failed} failed")
    return EXIT_OK if failed == 0 and results else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
