"""The results table: texts, numeric sorting, tooltips, selection, replacement by index."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.core.records.job_records import CpuUsage, MemoryUsage, ProcessUsage, Validation
from app.core.records.job_tcp_info import TcpInfo
from app.core.results.model import JobResult, MetricResult
from app.core.statistics.stability_warnings import FIXES, StabilityWarning, WarningCode
from app.gui.results.cells import Column
from app.gui.results.table import RESULT_ROLE, SORT_ROLE, ResultsTable
from app.report.job_figures import primary_metric
from app.report.units import format_bytes, format_rate, format_seconds
from tests.helpers import records

KIB, MIB = 1024, 1024 * 1024
ERROR = "worker process was killed by SIGKILL"


def _metric(median: float, n: int = 30) -> MetricResult:
    """Samples ±2 % around `median`, timed in batches of 10, with a 2 KiB traced peak."""
    return records.metric_at(median, n, below=2, batch=10, traced_peak_bytes=2048)


def _operations_job() -> JobResult:
    return records.job(
        "run",
        0,
        metrics={"keygen": _metric(50e-6), "encrypt": _metric(10e-6), "decrypt": _metric(11e-6)},
        throughput_bytes_per_s=KIB / 10e-6,
        wire_bytes={"payload": KIB + 28, "overhead": 28},
        cpu=CpuUsage(
            {
                "worker": ProcessUsage(
                    samples=12,
                    mean_percent=97.4,
                    max_percent=100.0,
                    rss_peak_bytes=50 * MIB,
                    other_processes_mean_percent=3.0,
                )
            },
            0.1,
        ),
        memory=MemoryUsage(rss_peak_bytes={"worker": 50 * MIB}, traced_peak_bytes={"encrypt": 2048}),
        validation=Validation(checked=110, failed=0, tamper_tried=5, tamper_rejected=5),
    )


def _loopback_job() -> JobResult:
    return records.job(
        "run",
        1,
        scheme="x25519-aesgcm",
        params={"curve": "x25519"},
        label="X25519 + AES-GCM",
        family="key-agreement",
        mode="loopback",
        message_size=MIB,
        metrics={"compute": _metric(2e-6), "receiver": _metric(3e-6), "rtt": _metric(80e-6)},
        wire_bytes={"payload": MIB + 28, "frame": MIB + 36},
        cpu=CpuUsage(
            {
                "sender": ProcessUsage(samples=5, mean_percent=41.2, max_percent=60.0, rss_peak_bytes=60 * MIB),
                "receiver": ProcessUsage(samples=5, mean_percent=38.0, max_percent=55.0, rss_peak_bytes=58 * MIB),
            },
            0.1,
        ),
        memory=MemoryUsage(rss_peak_bytes={"sender": 60 * MIB, "receiver": 58 * MIB}),
        validation=Validation(checked=30),
    )


def _failed_job() -> JobResult:
    return records.job(
        "run",
        2,
        scheme="rsa-oaep",
        params={"bits": 4096},
        label="RSA-4096-OAEP",
        family="public-key-encryption",
        message_size=64,
        status="failed",
        error=ERROR,
    )


def _warned_job() -> JobResult:
    warning = StabilityWarning.make(WarningCode.HIGH_CV, "sign", "CV 23.0 % ≥ 10 %: samples vary too much")
    return records.job(
        "run",
        3,
        scheme="ed25519",
        params={},
        label="Ed25519",
        family="signature",
        message_size=100 * KIB,
        metrics={"sign": _metric(500e-9)},
        warnings=[warning],
    )


def _all() -> list[JobResult]:
    return [_operations_job(), _loopback_job(), _failed_job(), _warned_job()]


@pytest.fixture
def table(qtbot: Any) -> ResultsTable:
    widget = ResultsTable()
    qtbot.addWidget(widget)
    widget.set_results(_all())
    return widget


def _text(table: ResultsTable, source_row: int, column: Column, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
    return table.model.data(table.model.index(source_row, column), role)


def _column_in_view(table: ResultsTable, column: Column) -> list[str]:
    return [table.proxy.data(table.proxy.index(r, column)) for r in range(table.proxy.rowCount())]


def test_formatting_helpers() -> None:
    assert format_seconds(2e-6) == "2 µs"
    assert format_seconds(1.234e-3) == "1.23 ms"
    assert format_seconds(999.96e-6) == "1 ms"
    assert format_seconds(512e-9) == "512 ns"
    assert format_seconds(None) == "-"
    assert format_bytes(64) == "64 B" and format_bytes(KIB) == "1 KiB" and format_bytes(MIB) == "1 MiB"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_rate(102.4e6) == "102 MB/s"


def test_primary_metric_follows_mode_and_family() -> None:
    assert primary_metric(_operations_job()) == "encrypt"
    assert primary_metric(_loopback_job()) == "compute"
    assert primary_metric(_warned_job()) == "sign"
    assert primary_metric(_failed_job()) == "encrypt"  # named even without data


def test_ok_operations_row_texts(table: ResultsTable) -> None:
    assert table.model.rowCount() == 4
    assert _text(table, 0, Column.SCHEME) == "AES-128-GCM"
    assert _text(table, 0, Column.BACKEND) == "cryptography"
    assert _text(table, 0, Column.PARAMETERS) == "key_bits=128"
    assert _text(table, 0, Column.MODE) == "operations"
    assert _text(table, 0, Column.SIZE) == "1 KiB"
    assert _text(table, 0, Column.METRIC) == "encrypt"
    assert _text(table, 0, Column.MEDIAN) == "10 µs"
    assert _text(table, 0, Column.P95).endswith("µs")
    assert _text(table, 0, Column.CI95).startswith("[") and "µs" in _text(table, 0, Column.CI95)
    assert _text(table, 0, Column.THROUGHPUT) == "102 MB/s"
    assert _text(table, 0, Column.WIRE) == "1\u202f052 B"
    assert _text(table, 0, Column.CPU) == "97"
    assert _text(table, 0, Column.MEMORY) == "50.0 MiB; 2 KiB traced"
    assert _text(table, 0, Column.VALIDATION) == "110/110 ok, tamper 5/5"
    assert _text(table, 0, Column.WARNINGS) == "0"
    assert _text(table, 0, Column.STATUS) == "ok"
    assert _text(table, 0, Column.SIZE, SORT_ROLE) == KIB
    assert _text(table, 0, Column.SCHEME, RESULT_ROLE) is table.model.result_at(0)
    assert _text(table, 0, Column.STATUS, Qt.ItemDataRole.BackgroundRole) is None


def test_loopback_row_shows_compute_frame_and_both_cpus(table: ResultsTable) -> None:
    assert _text(table, 1, Column.METRIC) == "compute"
    assert _text(table, 1, Column.MEDIAN) == "2 µs"
    assert _text(table, 1, Column.SIZE) == "1 MiB"
    assert _text(table, 1, Column.WIRE) == "1\u202f048\u202f612 B"  # the frame, exact
    assert _text(table, 1, Column.WIRE, SORT_ROLE) == MIB + 36
    assert _text(table, 1, Column.CPU) == "41 / 38"
    assert "receiver: mean 38 %" in _text(table, 1, Column.CPU, Qt.ItemDataRole.ToolTipRole)
    assert "rtt 80 µs" in _text(table, 1, Column.MEDIAN, Qt.ItemDataRole.ToolTipRole)
    assert _text(table, 1, Column.MEMORY) == "60.0 MiB; 2 KiB traced"  # sender RSS; compute's traced peak
    assert _text(table, 1, Column.VALIDATION) == "30/30 ok"


def test_failed_row_is_tinted_and_shows_the_error(table: ResultsTable) -> None:
    assert _text(table, 2, Column.STATUS) == "failed"
    assert ERROR in _text(table, 2, Column.STATUS, Qt.ItemDataRole.ToolTipRole)
    assert ERROR in _text(table, 2, Column.MEDIAN, Qt.ItemDataRole.ToolTipRole)
    assert ERROR in _text(table, 2, Column.BACKEND, Qt.ItemDataRole.ToolTipRole)
    assert _text(table, 2, Column.SCHEME, Qt.ItemDataRole.BackgroundRole) is not None
    assert _text(table, 2, Column.MEDIAN) == "-"
    assert _text(table, 2, Column.MEDIAN, SORT_ROLE) is None
    assert _text(table, 2, Column.VALIDATION) == "-"


def test_warnings_count_and_tooltip_with_fix(table: ResultsTable) -> None:
    assert _text(table, 3, Column.WARNINGS) == "1"
    tip = _text(table, 3, Column.WARNINGS, Qt.ItemDataRole.ToolTipRole)
    assert "CV 23.0 %" in tip
    assert FIXES[WarningCode.HIGH_CV] in tip
    assert _text(table, 3, Column.MEDIAN) == "500 ns"


def test_sorting_by_median_is_numeric(table: ResultsTable) -> None:
    table.view.sortByColumn(Column.MEDIAN, Qt.SortOrder.AscendingOrder)
    # As text "10 µs" < "2 µs" < "500 ns"; as numbers 500 ns < 2 µs < 10 µs; the failed row last.
    assert _column_in_view(table, Column.MEDIAN) == ["500 ns", "2 µs", "10 µs", "-"]
    table.view.sortByColumn(Column.MEDIAN, Qt.SortOrder.DescendingOrder)
    assert _column_in_view(table, Column.MEDIAN)[1:] == ["10 µs", "2 µs", "500 ns"]


def test_sorting_by_size_is_numeric(table: ResultsTable) -> None:
    table.view.sortByColumn(Column.SIZE, Qt.SortOrder.AscendingOrder)
    assert _column_in_view(table, Column.SIZE) == ["64 B", "1 KiB", "100 KiB", "1 MiB"]


def test_rows_keep_job_order_until_a_header_is_clicked(table: ResultsTable) -> None:
    assert _column_in_view(table, Column.SCHEME) == [
        "AES-128-GCM",
        "X25519 + AES-GCM (session)",
        "RSA-4096-OAEP",
        "Ed25519",
    ]


def test_selection_emits_the_job_result(table: ResultsTable, qtbot: Any) -> None:
    table.view.sortByColumn(Column.SIZE, Qt.SortOrder.DescendingOrder)  # view row 0 = the 1 MiB loopback job
    with qtbot.waitSignal(table.result_selected, timeout=1000) as blocker:
        table.view.selectRow(0)
    assert blocker.args[0] is table.model.result_at(1)
    with qtbot.waitSignal(table.result_selected, timeout=1000) as blocker:
        assert table.select_index(3)
    assert blocker.args[0].index == 3 and table.selected_result() is blocker.args[0]
    with qtbot.waitSignal(table.result_selected, timeout=1000) as blocker:
        table.clear()
    assert blocker.args == [None]
    assert not table.select_index(3)


def test_add_result_appends_or_replaces_by_index(table: ResultsTable, qtbot: Any) -> None:
    table.select_index(2)
    fixed = replace(_failed_job(), status="ok", error=None, metrics={"encrypt": _metric(3e-3)})
    with qtbot.waitSignal(table.result_selected, timeout=1000) as blocker:
        table.add_result(fixed)  # the selected row was replaced: detail views get the new result
    assert blocker.args[0] is fixed
    assert table.model.rowCount() == 4
    assert _text(table, 2, Column.STATUS) == "ok"
    assert _text(table, 2, Column.MEDIAN) == "3 ms"
    assert _text(table, 2, Column.SCHEME, Qt.ItemDataRole.BackgroundRole) is None
    table.add_result(records.job("run", 7, message_size=16))
    assert table.model.rowCount() == 5
    assert [r.index for r in table.results()] == [0, 1, 2, 3, 7]
    assert table.model.result_at(4).index == 7


# --- every metric reachable, copyable -------------------------------------------------------


def test_every_metric_of_every_job_is_one_choice_away(table: ResultsTable) -> None:
    assert table.model.rowCount() == 4  # the headline metric of each job
    table.set_metric("*")
    shown = {(table.model.result_at(r).index, _text(table, r, Column.METRIC)) for r in range(table.model.rowCount())}
    expected = {(job.index, name) for job in _all() for name in job.metrics}
    assert expected <= shown  # keygen and decrypt, receiver and rtt too
    assert (2, "encrypt") in shown  # a failed job keeps its row
    rtt_row = next(r for r in range(table.model.rowCount()) if _text(table, r, Column.METRIC) == "rtt")
    assert _text(table, rtt_row, Column.MEDIAN) == format_seconds(80e-6)
    table.set_metric("keygen")
    assert [_text(table, r, Column.METRIC) for r in range(table.model.rowCount())] == ["keygen"] * 4
    assert table.metric_picker.currentData() == "keygen"
    assert "4 jobs" in table.count_label.text() and "7 metrics" in table.count_label.text()


def test_rows_sort_by_median_across_metrics(table: ResultsTable) -> None:
    table.set_metric("*")
    table.view.sortByColumn(Column.MEDIAN, Qt.SortOrder.AscendingOrder)
    keys = [table.proxy.data(table.proxy.index(r, Column.MEDIAN), SORT_ROLE) for r in range(table.proxy.rowCount())]
    numbers = [k for k in keys if k is not None]
    assert numbers == sorted(numbers) and len(numbers) == 7  # every metric with samples


def test_rows_copy_as_tab_separated_text_with_the_header(table: ResultsTable, qtbot: Any) -> None:
    from PySide6.QtGui import QGuiApplication

    table.view.selectRow(1)
    text = table.copy()
    lines = text.splitlines()
    assert lines[0].split("\t")[:3] == ["Scheme", "Backend", "Parameters"]
    assert len(lines) == 2 and lines[1].split("\t")[0] == "X25519 + AES-GCM (session)"
    assert QGuiApplication.clipboard().text() == text
    table.view.clearSelection()
    assert len(table.copy().splitlines()) == 1 + table.proxy.rowCount()  # nothing selected: every row


def test_counts_are_singular_for_one(qtbot: Any) -> None:
    widget = ResultsTable()
    qtbot.addWidget(widget)
    widget.set_results([_warned_job()])
    assert widget.count_label.text() == "1 job · 1 metric"


def test_the_kernels_view_of_each_end_is_in_the_median_tooltip_of_session_rows(qtbot: Any) -> None:
    sender = TcpInfo(
        smoothed_rtt_s=41e-6,
        rtt_var_s=5e-6,
        retransmits_total=0,
        segments_out=12,
        segments_in=12,
        congestion_window_segments=10,
        mss_bytes=65483,
        exchanges=12,
    )
    job = replace(
        _loopback_job(),
        tcp_info={"receiver": TcpInfo(unavailable="not available on this OS (Darwin)"), "sender": sender},
    )
    widget = ResultsTable()
    qtbot.addWidget(widget)
    widget.set_results([_operations_job(), job])
    kernel = (
        "kernel (sender): sRTT 41 µs, 12 segments out (1.0 per exchange), 12 in, 0 retransmissions, cwnd 10 segments"
    )
    for metric in ("compute", "rtt"):
        widget.set_metric(metric)
        tip = _text(widget, 1, Column.MEDIAN, Qt.ItemDataRole.ToolTipRole)
        assert kernel in tip
        # Sender first, and an end without a reading says why, never zeros.
        assert tip.index(kernel) < tip.index("kernel (receiver): no reading: not available on this OS (Darwin)")
    widget.set_metric("receiver")
    assert "kernel" not in _text(widget, 1, Column.MEDIAN, Qt.ItemDataRole.ToolTipRole)
    widget.set_metric("")
    assert "kernel" not in _text(widget, 0, Column.MEDIAN, Qt.ItemDataRole.ToolTipRole)


# --- what the picker says is what the rows show ---------------------------------------------


def _picker_text(table: ResultsTable) -> str:
    return table.metric_picker.currentText()


def _choose(table: ResultsTable, data: str) -> None:
    """Choose an entry as a user does: the picker's `activated`, even for the entry shown."""
    index = table.metric_picker.findData(data)
    assert index >= 0, data
    table.metric_picker.setCurrentIndex(index)
    table.metric_picker.activated.emit(index)


def test_a_chosen_metric_survives_new_results_and_the_picker_says_what_the_rows_show(
    table: ResultsTable, qtbot: Any
) -> None:
    _choose(table, "rtt")
    # A run of operations jobs starts (the table is emptied), then its results arrive.
    table.clear()
    assert table.metric_picker.currentData() == "rtt" and _picker_text(table) == "rtt"
    for job in (_operations_job(), _warned_job()):
        table.add_result(job)
    assert table.metric_picker.currentData() == "rtt"
    assert _picker_text(table) == "rtt (no job here has it)"
    assert "no job has rtt" in table.count_label.text()
    for row in range(table.model.rowCount()):
        assert _text(table, row, Column.METRIC) == "rtt"
        assert _text(table, row, Column.MEDIAN) == "no rtt"  # said per row, not "-" everywhere
        tip = _text(table, row, Column.MEDIAN, Qt.ItemDataRole.ToolTipRole)
        assert "has no rtt metric" in tip and "Headline metric of each job" in tip
        assert _text(table, row, Column.THROUGHPUT) == ""
        assert "no rtt" in _text(table, row, Column.THROUGHPUT, Qt.ItemDataRole.ToolTipRole)
    # Choosing Headline applies it; choosing it again (the entry shown) applies it again.
    _choose(table, "")
    assert [_text(table, r, Column.METRIC) for r in range(2)] == ["encrypt", "sign"]
    assert _picker_text(table) == "Headline metric of each job"
    with qtbot.waitSignal(table.model.modelReset, timeout=1000):
        _choose(table, "")  # the entry already shown: applied again, never ignored
    assert [_text(table, r, Column.METRIC) for r in range(2)] == ["encrypt", "sign"]
    assert table.metric_picker.findData("rtt") == -1  # the absent entry went with the choice


def test_a_chosen_metric_present_in_a_new_run_is_kept(table: ResultsTable) -> None:
    table.set_metric("rtt")
    table.set_results([_loopback_job(), _operations_job()])
    assert _picker_text(table) == "rtt" and table.model.metric() == "rtt"
    assert _text(table, 0, Column.MEDIAN) == format_seconds(80e-6)
    assert _text(table, 1, Column.MEDIAN) == "no rtt"  # the operations job says it has none
    assert "no job has" not in table.count_label.text()


def test_a_failed_row_without_the_metric_keeps_dashes_and_says_why(table: ResultsTable) -> None:
    table.set_metric("decrypt")
    assert _text(table, 2, Column.MEDIAN) == "-"
    assert ERROR in _text(table, 2, Column.MEDIAN, Qt.ItemDataRole.ToolTipRole)


def test_throughput_follows_the_metric_shown(qtbot: Any) -> None:
    widget = ResultsTable()
    qtbot.addWidget(widget)
    ecdh = records.job(
        "run",
        0,
        scheme="x25519-aesgcm",
        label="X25519 + AES-GCM",
        family="key-agreement",
        mode="loopback",
        message_size=MIB,
        metrics={
            "compute": records.metric_at(2e-3, 20, throughput=MIB / 2e-3),
            "receiver": records.metric_at(4e-3, 20, throughput=MIB / 4e-3),
            "rtt": records.metric_at(9e-3, 20),
        },
        throughput_bytes_per_s=MIB / 2e-3,
    )
    digest = records.job(
        "run",
        1,
        scheme="sha256",
        label="SHA-256",
        family="digest",
        message_size=MIB,
        metrics={"hash": records.metric_at(1.6e-3, 20, throughput=MIB / 1.6e-3)},
        throughput_bytes_per_s=MIB / 1.6e-3,
    )
    widget.set_results([ecdh, digest])
    widget.set_metric("receiver")
    assert _text(widget, 0, Column.THROUGHPUT) == format_rate(MIB / 4e-3)  # the receiver's, not compute's
    widget.set_metric("rtt")
    assert _text(widget, 0, Column.THROUGHPUT) == ""  # a round trip has no throughput: blank, with why
    tip = _text(widget, 0, Column.THROUGHPUT, Qt.ItemDataRole.ToolTipRole)
    assert "No throughput for rtt" in tip and "compute and receiver" in tip
    widget.set_metric("encrypt")  # a digest has no encrypt: no figure of another metric beside it
    assert _text(widget, 1, Column.MEDIAN) == "no encrypt"
    assert _text(widget, 1, Column.THROUGHPUT) == ""
    widget.set_metric("*")
    shown = {
        (_text(widget, r, Column.METRIC), _text(widget, r, Column.THROUGHPUT)) for r in range(widget.model.rowCount())
    }
    assert shown == {
        ("compute", format_rate(MIB / 2e-3)),
        ("receiver", format_rate(MIB / 4e-3)),
        ("rtt", ""),
        ("hash", format_rate(MIB / 1.6e-3)),
    }


def test_the_scheme_column_says_each_key_establishing_job_s_exchange_pattern(qtbot: Any) -> None:
    """The pattern stays in the Scheme cell when the backend and link are dropped from it; a
    result recorded before jobs named it says what it measured, and its tooltip why."""
    from app.core.records.job_conditions import Link
    from app.core.vocab import LinkEmulation

    lte = Link("lte", 35.0, 0.0, 12000.0, 12000.0, 0.0, LinkEmulation.PACKET)
    x25519 = "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]"
    jobs = [
        records.job("run", 0, scheme="x25519", family="key-agreement", exchange="session", label=f"{x25519} (session)"),
        records.job(
            "run", 1, scheme="x25519", family="key-agreement", exchange="per-message", label=f"{x25519} (per-message)"
        ),
        records.job(
            "run",
            2,
            scheme="x25519",
            family="key-agreement",
            exchange="session",
            mode="loopback",
            link=lte,
            label=f"{x25519} (session) over LTE",
        ),
        records.job("run", 3, scheme="ml-kem", family="hybrid", label="ML-KEM-768 + AES-256-GCM [cryptography]"),
        records.job("run", 4),  # AES: no key to exchange
    ]
    widget = ResultsTable()
    qtbot.addWidget(widget)
    widget.set_results(jobs)
    assert _column_in_view(widget, Column.SCHEME) == [
        "X25519 + HKDF-SHA256 + AES-256-GCM (session)",
        "X25519 + HKDF-SHA256 + AES-256-GCM (per-message)",
        "X25519 + HKDF-SHA256 + AES-256-GCM (session)",
        "ML-KEM-768 + AES-256-GCM (per-message)",
        "AES-128-GCM",
    ]
    # The Mode column, never cut, says it too.
    assert [mode.rsplit(" · ", 1)[-1] for mode in _column_in_view(widget, Column.MODE)] == [
        "session",
        "per-message",
        "session",
        "per-message",
        "operations",
    ]
    tip = _text(widget, 3, Column.SCHEME, Qt.ItemDataRole.ToolTipRole)
    assert "exchange per-message: recorded before jobs named it, read as what it measured" in tip
    widget.resize(1024, 400)
    assert not widget.grab().toImage().isNull()  # painted


def test_a_tls13_row_shows_its_handshake_and_what_it_negotiated(qtbot: Any) -> None:
    job = records.job(
        "run",
        0,
        scheme="tls13",
        family="tls",
        mode="loopback",
        label="TLS 1.3 X25519MLKEM768 + ML-DSA-65 (chain 2) [pyopenssl]",
        metrics={"connect": _metric(40e-3), "handshake": _metric(57e-3), "first_byte": _metric(148e-3)},
        tls=records.tls_record(),
        throughput_bytes_per_s=1e8,  # its record layer's, never shown beside the handshake
    )
    widget = ResultsTable()
    qtbot.addWidget(widget)
    widget.set_results([job])
    assert primary_metric(job) == "handshake"
    assert _text(widget, 0, Column.MEDIAN) == format_seconds(57e-3)
    tip = _text(widget, 0, Column.MEDIAN, Qt.ItemDataRole.ToolTipRole)
    assert "TLS: TLSv1.3, X25519MLKEM768, TLS_AES_128_GCM_SHA256, signed mldsa65" in tip
    assert "chain: 1 certificate sent: 5\u202f652 B (ML-DSA-65)" in tip
    assert "first_byte 148 ms" in tip
    assert _text(widget, 0, Column.THROUGHPUT) == ""


def test_a_job_too_short_for_the_sampler_says_not_measured_never_0(qtbot: Any) -> None:
    """The window's Quick check showed "0.0 MiB" for a job the sampler never read (its one
    reading was a process already gone); not measured is said so, and painted."""
    short = replace(
        _operations_job(),
        cpu=CpuUsage({"worker": ProcessUsage(samples=0)}, 0.1),
        memory=MemoryUsage.from_dict({"rss_peak_bytes": {"worker": 0}, "traced_peak_bytes": {"encrypt": 2048}}),
    )
    assert short.memory.rss_peak_bytes == {"worker": None}  # a 0 read back is not a figure
    widget = ResultsTable()
    qtbot.addWidget(widget)
    widget.set_results([short])
    widget.resize(1600, 300)
    widget.show()
    qtbot.waitExposed(widget)
    assert _text(widget, 0, Column.MEMORY) == "RSS not measured; 2 KiB traced"
    assert "worker: not measured (not sampled)" in _text(widget, 0, Column.MEMORY, Qt.ItemDataRole.ToolTipRole)
    assert _text(widget, 0, Column.CPU) == "not measured"
    assert widget.grab().width() > 0  # painted with the words, not a 0
