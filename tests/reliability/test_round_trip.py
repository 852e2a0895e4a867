"""What the app writes, it reads back: every producer of results through every reader.

Producers (tests/helpers/round_trips.py): the runner in operations, loopback, over the
stream relay and the packet path with loss, tls13 jobs (operations, loopback resumed, over
the packet path with loss; load resumed, and load over the packet path with loss; load
from two cluster generators, remote and remote load against a serve), local load, load over a link, load from a
Dask cluster of 1 to 3 generators, remote and remote load against a serve, key agreement
and hybrid jobs in both exchange patterns, the golden results file written before jobs named
their exchange; a failed, a
cancelled and an interrupted run; and, where running them cannot fit a test, records
built by the producers' own code: a cluster step a generator did not return, 64
generators whose every text is at its longest, load steps of 404 s up to 2,500/s, a load
record at every profile limit, and sweeps as users recorded them. Readers: the results
check of the JSON, `show` (and `show --json`) and `store` on the producer's store,
`import` of the JSON into a fresh store, `store copy` there and back (and through
PostgreSQL where one can be started), `report`, `compare` of the run with itself and the
window's History. Each reader must take the run whole: nothing refused, no job read as
damaged, every job and figure as written.

The runs are made once for the module, when a test first asks for one (a serve and a
Dask cluster with them); every test of the module runs on one worker, the one that
starts PostgreSQL for the session.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.core.records.job_conditions import Load
from app.core.results.check import check_results
from app.core.results.check_fields import MAX_TEXT_CHARS
from app.core.results.model import load_results_file, parse_results_text
from app.core.settings.load import step_schedule
from app.core.store.store import Store
from app.core.transport.netns import packet_path_refusal, try_packet_path
from app.core.vocab import JobStatus, RunStatus
from tests.helpers import loads, records
from tests.helpers import written as written_docs
from tests.helpers.paths import GOLDEN
from tests.helpers.round_trips import (
    Producers,
    Written,
    cancelled_run,
    cluster_run,
    failed_run,
    interrupted_run,
    long_load_run,
    remote_target,
    run_profile,
    written,
)
from tests.helpers.windows import opened_window

pytestmark = pytest.mark.xdist_group("postgres")  # the worker that starts PostgreSQL runs them all

OPERATIONS = {"scheme": "aes-gcm", "message_sizes": [64], "samples": 3, "warmup": 1, "keygen_samples": 1}
SESSION = {**OPERATIONS, "mode": "loopback"}
#: Two short steps.
LOAD = {"scheme": "x25519", "mode": "load", "clients": 3, "rates": [20, 30], "duration_s": 0.1, "warmup_s": 0.05}
CLUSTER_STEP_S = 0.5
PACKET_REFUSAL = packet_path_refusal() or try_packet_path()
#: Key agreement and hybrid jobs in each exchange pattern, as operations and sessions.
EXCHANGES = [
    {**OPERATIONS, "scheme": "x25519", "exchange": "session"},
    {**OPERATIONS, "scheme": "x25519", "exchange": "per-message"},
    {**OPERATIONS, "scheme": "ml-kem", "exchange": "session"},
    {**SESSION, "scheme": "ml-kem", "exchange": "per-message"},
]
#: A Dask worker's failure as the coordinator keeps it (its first line, up to 300 characters).
LONG_FAILURE = "the generator process on a-very-long-host-name ended (exit code -9): " + "x" * 400


@contextmanager
def _serve() -> Iterator[Any]:
    from app.core.serve.server import Server

    server = Server(os.urandom(32), "127.0.0.1", 0, log=lambda line: None)
    stop = threading.Event()
    thread = threading.Thread(target=server.serve_forever, args=(stop,))
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        thread.join(15)


def _packet_path(p: Producers, folder: Path) -> Written:
    if PACKET_REFUSAL is not None:
        pytest.skip(f"no packet path here: {PACKET_REFUSAL}")
    from unittest import mock

    from app.core.run import supervisor

    link = {"delay_ms": 2, "rate_kbit": 100_000, "loss_percent": 5}
    job = {**SESSION, "message_sizes": [16384], "samples": 4, "link": link, "link_emulation": "packet"}
    # The emulator stalled once (PacketPathPlan.stall), so that the path names the samples
    # it touched (`late_samples`) and the size carries its `link-emulator-late` warning.
    stalled = functools.partial(supervisor.PacketPathPlan, stall=(60, 0.05))
    with mock.patch.object(supervisor, "PacketPathPlan", stalled):
        written = run_profile([job], folder, "packet path")
    return written


#: A tls13 job (app/core/tls): its own processes, its `tls` record.
TLS = {
    **{key: value for key, value in OPERATIONS.items() if key != "keygen_samples"},
    "scheme": "tls13",
    "params": {"group": "X25519MLKEM768", "certificate": "ecdsa-p256"},
}


def _tls_packet_path(p: Producers, folder: Path) -> Written:
    if PACKET_REFUSAL is not None:
        pytest.skip(f"no packet path here: {PACKET_REFUSAL}")
    link = {"delay_ms": 2, "rate_kbit": 100_000, "loss_percent": 2}
    job = {**TLS, "mode": "loopback", "params": {"group": "x25519", "certificate": "ml-dsa-44"}, "link": link}
    return run_profile([job], folder, "tls13 packet path")


#: A tls13 load job: a new connection and handshake per request, resumed with tickets.
TLS_LOAD = {
    **LOAD,
    "scheme": "tls13",
    "params": {"group": "x25519", "certificate": "ecdsa-p256", "resumption": "ticket"},
    "message_sizes": [64],
}


def _tls_load(jobs: list[dict[str, Any]], folder: Path) -> Written:
    """A tls13 load run, whose every job kept its handshakes step by step (what the readers
    must then take whole)."""
    made = run_profile(jobs, folder, "tls13 load")
    for job in made.run.jobs:
        assert job.status == JobStatus.OK and job.tls is not None and job.load is not None, job.error
        assert len(job.tls.steps) == len(job.load.steps) and all(step.handshakes for step in job.tls.steps)
    return made


def _tls_load_packet_path(p: Producers, folder: Path) -> Written:
    if PACKET_REFUSAL is not None:
        pytest.skip(f"no packet path here: {PACKET_REFUSAL}")
    job = {**TLS_LOAD, "params": {"group": "X25519MLKEM768", "certificate": "ml-dsa-44"}, "rates": [20]}
    return _tls_load([{**job, "link": {"delay_ms": 2, "rate_kbit": 100_000, "loss_percent": 2}}], folder)


def _cluster(p: Producers, folder: Path) -> Written:
    if p.dask is None:
        pytest.skip("the cluster extra (Dask distributed) is not installed")
    # One step each where generators rounding their own shares sent more than the schedule:
    # two at 6/s for 0.5 s sent 2 + 2 of 3, three at 2/s 1 + 1 + 1 of 1. (Half-second steps:
    # a worker's clock must be known to 2 % of a step on a busy machine.)
    jobs = [
        {
            **LOAD,
            "cluster": p.dask.scheduler_address,
            "cluster_plain_tcp": True,  # a tcp:// scheduler, even on the loopback, needs the leave
            "generators": n,
            "rates": [rate],
            "duration_s": CLUSTER_STEP_S,
        }
        for n, rate in ((1, 30), (2, 6), (3, 2))
    ]
    # And a tls13 job's handshakes from two generators, their counts added.
    tls = {**jobs[1], **{key: TLS_LOAD[key] for key in ("scheme", "params", "message_sizes")}, "rates": [20]}
    made = run_profile([*jobs, tls], folder, "cluster")
    handshakes = made.run.jobs[-1].tls
    assert handshakes is not None and handshakes.steps and handshakes.steps[0].handshakes, made.run.jobs[-1].error
    return made


def _remote(jobs: list[dict[str, Any]], token: bytes | None = None) -> Callable[[Producers, Path], Written]:
    def make(p: Producers, folder: Path) -> Written:
        server = p.shared("serve", _serve)
        made = run_profile(jobs, folder, "remote", remote=remote_target(server, token))
        assert all(job.status == JobStatus.OK for job in made.run.jobs), [job.error for job in made.run.jobs]
        return made

    return make


def _sweeps(p: Producers, folder: Path) -> Written:
    """Sweeps as users recorded them (a sweep cannot run in a test: its estimate and up to ten
    steps): past a knee, never overloaded, limited by the generator, and an X25519 sweep
    whose last steps the server fell behind on (calls made from the figures, as for
    results written before calls were recorded)."""
    x25519 = loads.load_job(3, "X25519", loads.load(loads.OVERLOADED_SWEEP), family="key-agreement", pq=0)
    return written("sweeps", loads.load_run([*loads.load_run().jobs, x25519]), folder)


def _every_limit(p: Producers, folder: Path) -> Written:
    job = written_docs.load_job(written_docs.max_load())
    return written("every limit", records.run(written_docs.RUN_ID, [job], finished=written_docs.STARTED), folder)


#: Each producer, and how it makes its run (the real ones run; see the module's docstring).
MAKERS: dict[str, Callable[[Producers, Path], Written]] = {
    "operations": lambda p, folder: run_profile([OPERATIONS], folder, "operations"),
    "loopback": lambda p, folder: run_profile([{**SESSION, "scheme": "x25519"}], folder, "loopback"),
    "stream relay": lambda p, folder: run_profile(
        [{**SESSION, "link": {"delay_ms": 1, "rate_kbit": 100_000}, "link_emulation": "stream-relay"}], folder, "relay"
    ),
    "packet path with loss": _packet_path,
    "tls13 operations": lambda p, folder: run_profile(
        [TLS, {**TLS, "params": {"group": "x25519", "certificate": "ed25519", "chain": 3, "mutual": True}}],
        folder,
        "tls13 operations",
    ),
    "tls13 loopback, resumed": lambda p, folder: run_profile(
        [{**TLS, "mode": "loopback", "params": {"group": "x25519", "certificate": "rsa-2048", "resumption": "ticket"}}],
        folder,
        "tls13 loopback",
    ),
    "tls13 over the packet path with loss": _tls_packet_path,
    "local load": lambda p, folder: run_profile([LOAD], folder, "load"),
    "tls13 load, resumed": lambda p, folder: _tls_load([TLS_LOAD], folder),
    "tls13 load over the packet path with loss": _tls_load_packet_path,
    "load over a link": lambda p, folder: run_profile([{**LOAD, "link": {"delay_ms": 1}}], folder, "load link"),
    "cluster load, 1-3 generators": _cluster,
    "remote": _remote([{**OPERATIONS, "mode": "remote"}, {**TLS, "mode": "remote"}]),
    "remote load": _remote([{**LOAD, "rates": [30]}, {**TLS_LOAD, "rates": [20]}]),
    "failed": lambda p, folder: failed_run(
        [{**OPERATIONS, "mode": "remote"}, {**OPERATIONS, "mode": "remote", "message_sizes": [128]}],
        folder,
        remote=remote_target(p.shared("serve", _serve), b"\x01" * 32),  # the wrong token: the job fails
    ),
    "cancelled": lambda p, folder: cancelled_run(
        [OPERATIONS, {**OPERATIONS, "message_sizes": [128], "samples": 1_000_000}], folder
    ),
    "interrupted": lambda p, folder: interrupted_run(p["loopback"], folder),
    "cluster step a generator did not return": lambda p, folder: cluster_run(
        folder, "incomplete", generators=3, failing={1}
    ),
    "64 generators, every text at its longest": lambda p, folder: cluster_run(
        folder,
        "64 generators",
        generators=64,
        failing=set(range(40, 64)),
        missed=3,
        failure=LONG_FAILURE,
        host=lambda k: f"loadgen-{k:02d}." + "rack-b." * 8 + "lab.example.org",
    ),
    "a worker's 20,052-character host name": lambda p, folder: cluster_run(
        folder, "long host", generators=2, failing=set(), host=lambda k: f"h{k}" + "x" * 20_050
    ),
    "load steps of 404 s, up to 2,500/s": lambda p, folder: long_load_run(folder),
    "load sweeps as recorded": _sweeps,
    "load at every profile limit": _every_limit,
    "both key exchange patterns": lambda p, folder: run_profile(EXCHANGES, folder, "exchange"),
    "results from before jobs named their exchange": lambda p, folder: written(
        "golden", load_results_file(GOLDEN / "results-v1.json"), folder
    ),
}


@pytest.fixture(scope="module")
def dask_cluster() -> Iterator[Any]:
    """Three Dask workers on this machine (None without the cluster extra), started before
    any test of the module: their processes outlive each test, as the module's runs do."""
    try:
        import distributed
    except ImportError:
        yield None
        return
    with distributed.LocalCluster(
        n_workers=3, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0", silence_logs=40
    ) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def producers(tmp_path_factory: pytest.TempPathFactory, dask_cluster: Any) -> Iterator[Producers]:
    with ExitStack() as resources:
        yield Producers(tmp_path_factory.mktemp("producers"), MAKERS, {}, resources, dask_cluster)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _same(back: Any, item: Written) -> None:
    """`back` is the producer's run whole: none of it damaged, every job and figure as written."""
    assert back.damaged == [], back.damaged
    assert back.to_dict() == item.document


def _stored(path: Path | str, run_id: str) -> Any:
    with Store(path) as store:
        return store.load_run(run_id)


# --- the readers ---------------------------------------------------------------------------------


def read_check(item: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: Any) -> None:
    """The results check of the JSON, and the run it reads."""
    text = item.json_path.read_text(encoding="utf-8")
    check_results(json.loads(text))
    _same(parse_results_text(text, str(item.json_path)), item)


def read_show(item: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: Any) -> None:
    """`show` and `show --json` of the producer's store, and `store` finding it sound."""
    code, out, err = _cli(capsys, "show", item.run_id, "--store", str(item.store_path))
    assert code == 0 and "damaged" not in err + out, err
    assert item.run_id in out
    code, out, err = _cli(capsys, "show", item.run_id, "--store", str(item.store_path), "--json")
    assert code == 0, err
    assert json.loads(out) == item.document
    code, out, err = _cli(capsys, "store", "--store", str(item.store_path))
    assert code == 0, out + err


def read_import(item: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: Any) -> None:
    """`import` of the JSON into a fresh store."""
    target = tmp_path / "imported.sqlite3"
    code, _, err = _cli(capsys, "import", str(item.json_path), "--store", str(target))
    assert code == 0, err
    _same(_stored(target, item.run_id), item)


def read_store_copy(item: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: Any) -> None:
    """`store copy` into another store and back again."""
    there, back = tmp_path / "there.sqlite3", tmp_path / "back.sqlite3"
    for source, target in ((item.store_path, there), (there, back)):
        code, out, err = _cli(capsys, "store", "copy", "--store", str(source), "--to", str(target))
        assert code == 0 and "copied 1 run(s)" in out, out + err
        _same(_stored(target, item.run_id), item)


def read_report(item: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: Any) -> None:
    """`report` of the JSON and of the stored run (Markdown): the same report."""
    from_file, from_store = tmp_path / "file.md", tmp_path / "store.md"
    code, _, err = _cli(capsys, "report", str(item.json_path), "--markdown", str(from_file))
    assert code == 0, err
    code, _, err = _cli(capsys, "report", item.run_id, "--store", str(item.store_path), "--markdown", str(from_store))
    assert code == 0, err
    assert from_file.read_text(encoding="utf-8") == from_store.read_text(encoding="utf-8")
    assert item.run_id in from_file.read_text(encoding="utf-8")


def read_compare(item: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: Any) -> None:
    """`compare` of the run with itself (the file against the stored run): nothing slower or faster."""
    code, out, err = _cli(
        capsys, "compare", str(item.json_path), item.run_id, "--store", str(item.store_path), "--json"
    )
    assert code == 0, err
    (comparison,) = json.loads(out)["comparisons"]
    assert not comparison["only_base"] and not comparison["only_new"] and not comparison["regressions"]
    verdicts = {metric["verdict"] for pair in comparison["pairs"] for metric in pair["metrics"]}
    assert verdicts <= {"within noise", "not comparable"}, verdicts


def read_history(item: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: Any) -> None:
    """The window's History on the producer's store: listed, opened into the table and plots."""
    qtbot = request.getfixturevalue("qtbot")
    with opened_window(qtbot, tmp_path) as window:
        history = window.history
        history.set_store_path(item.store_path)
        assert history.refresh() and history.run_ids() == [item.run_id], history.error
        history.select_runs([item.run_id])
        with qtbot.waitSignal(history.run_opened, timeout=5000):
            history.open_action.trigger()
        assert window.last_run is not None
        _same(window.last_run, item)
        assert window.table.model.rowCount() >= len(item.run.jobs)


#: The producers that need the packet path (skipped where the machine cannot make it).
_ON_THE_PACKET_PATH = (
    "packet path with loss",
    "tls13 over the packet path with loss",
    "tls13 load over the packet path with loss",
)

READERS: dict[str, Callable[[Written, Path, pytest.CaptureFixture[str], Any], None]] = {
    "check": read_check,
    "show": read_show,
    "import": read_import,
    "store copy": read_store_copy,
    "report": read_report,
    "compare": read_compare,
    "history": read_history,
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("producer", list(MAKERS))
def test_what_a_producer_writes_its_reader_reads(
    producer: str,
    reader: str,
    producers: Producers,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    READERS[reader](producers[producer], tmp_path, capsys, request)


def test_a_store_copy_through_postgresql_keeps_every_producer_s_run(
    producers: Producers, pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every producer's store copied into one PostgreSQL store and back out: each run whole."""
    made = [producers[name] for name in MAKERS if name not in _ON_THE_PACKET_PATH or PACKET_REFUSAL is None]
    for item in made:
        code, out, err = _cli(capsys, "store", "copy", "--store", str(item.store_path), "--to", pg_url)
        assert code == 0 and "copied 1 run(s)" in out, out + err
    back = tmp_path / "back.sqlite3"
    code, out, err = _cli(capsys, "store", "copy", "--store", pg_url, "--to", str(back))
    assert code == 0 and f"copied {len(made)} run(s)" in out, out + err
    for item in made:
        _same(_stored(pg_url, item.run_id), item)
        _same(_stored(back, item.run_id), item)


def test_a_pdf_report_of_the_longest_producers(
    producers: Producers, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("64 generators, every text at its longest", "load steps of 404 s, up to 2,500/s"):
        item = producers[name]
        pdf = tmp_path / f"{name[:2]}.pdf"
        code, _, err = _cli(capsys, "report", str(item.json_path), "--pdf", str(pdf))
        assert code == 0, err
        assert pdf.read_bytes().startswith(b"%PDF")


# --- what the producers at their extremes wrote -----------------------------------------------------


def test_the_producers_extremes_are_what_the_readers_were_given(producers: Producers) -> None:
    """The hand-built producers reach the bounds they are here for (a test of the test)."""
    cluster = producers["cluster load, 1-3 generators"].run
    for job, generators in zip(cluster.jobs, (1, 2, 3, 2), strict=True):  # the last a tls13 job's
        assert job.status == JobStatus.OK, job.error
        assert job.load is not None and len(job.load.generators) == generators
        for step in job.load.steps:
            assert step.sent == step_schedule(step.offered_per_s, 0.0, CLUSTER_STEP_S)[1]  # the schedule, shared
    wide = producers["64 generators, every text at its longest"]
    (job,) = wide.run.jobs
    assert job.load is not None and job.status == JobStatus.FAILED
    (step,) = job.load.steps
    assert len(step.generators) == 40 and step.incomplete is not None
    (written_step,) = wide.document["jobs"][0]["load"]["steps"]
    for key in ("incomplete", "saturation_reason", "limit_reason"):
        assert len(getattr(step, key)) > MAX_TEXT_CHARS  # longer than any text is read back
        assert len(written_step[key]) == MAX_TEXT_CHARS and "(cut: " in written_step[key]  # so written cut
    long_steps = producers["load steps of 404 s, up to 2,500/s"].run.jobs[0]
    assert long_steps.load is not None and long_steps.load.steps[-1].sent == 1_010_000
    assert len(long_steps.load.steps[-1].histogram or "") > MAX_TEXT_CHARS
    assert long_steps.metrics["latency"].stats.n == 40_400
    assert producers["cancelled"].run.status == RunStatus.CANCELLED
    assert [job.status for job in producers["cancelled"].run.jobs] == [JobStatus.OK, JobStatus.CANCELLED]
    assert producers["failed"].run.status == RunStatus.FAILED
    assert [job.status for job in producers["failed"].run.jobs] == [JobStatus.FAILED]
    assert producers["interrupted"].run.status == RunStatus.INTERRUPTED
    assert isinstance(producers["load at every profile limit"].run.jobs[0].load, Load)


# --- every face says which exchange pattern a job used ----------------------------------------------


@pytest.mark.parametrize("producer", ["both key exchange patterns", "results from before jobs named their exchange"])
def test_every_face_says_which_exchange_a_job_used(
    producer: str, producers: Producers, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: Any
) -> None:
    """The JSON and CSV, `show`, the report's Method, `compare --json` and the window's table
    each name every key-establishing job's pattern; results from before jobs named it are
    read as what they measured (a key agreement session) and left without the field."""
    from app.core.results.model import to_csv
    from app.gui.results.cells import Column

    item = producers[producer]
    keyed = [job for job in item.run.jobs if job.exchange_used is not None]
    patterns = [str(job.exchange_used) for job in keyed]
    assert keyed and (producer != "both key exchange patterns" or all(job.status == JobStatus.OK for job in keyed))
    recorded = [job.get("exchange") for job in item.document["jobs"] if job["family"] in ("key-agreement", "hybrid")]
    assert recorded == (patterns if producer.startswith("both") else [None] * len(keyed))
    rows = list(csv.DictReader(io.StringIO(to_csv(item.run))))
    assert {row["exchange"] for row in rows if row["scheme"] in ("x25519", "ml-kem")} == set(patterns)
    assert {row["exchange"] for row in rows if row["scheme"] not in ("x25519", "ml-kem")} <= {""}
    code, out, err = _cli(capsys, "show", item.run_id, "--store", str(item.store_path))
    assert code == 0, err
    for pattern in set(patterns):
        assert f"exchange {pattern}" in out
    report = tmp_path / "report.md"
    assert _cli(capsys, "report", str(item.json_path), "--markdown", str(report))[0] == 0
    method = report.read_text(encoding="utf-8").split("## Method", 1)[1]
    for pattern in set(patterns):
        assert f"**exchange {pattern}**" in method
    code, out, err = _cli(capsys, "compare", str(item.json_path), str(item.json_path), "--json")
    assert code == 0, err
    (comparison,) = json.loads(out)["comparisons"]
    assert [pair["job"].get("exchange") for pair in comparison["pairs"] if "exchange" in pair["job"]] == patterns
    qtbot = request.getfixturevalue("qtbot")
    with opened_window(qtbot, tmp_path) as window:
        window.show_run(item.run)
        modes = [window.table.model.data(window.table.model.index(k, Column.MODE)) for k in range(len(item.run.jobs))]
    assert [mode.rsplit(" · ", 1)[-1] for mode, job in zip(modes, item.run.jobs) if job.exchange_used] == patterns
