"""Names in app/ that vulture (`make lint`, [tool.vulture] in pyproject.toml) reports as unused
but that are used where it cannot see: each entry says by whom.

vulture matches by name only, so `_.name` keeps every attribute, method or variable called
`name`. Code that nothing uses is removed, not listed here. Code that only the tests or the
benchmarks use stays where it is the tests' way in (a hook that drives or reads a widget, a
counter that proves a bound) and is listed with its user; a convenience that only wraps
what the app uses was removed, its tests rewritten on what the app uses. Pydantic's
validators and the self-test checks are kept by `ignore_decorators` in pyproject.toml.

This file is read by vulture, never run or imported.
"""

# ruff: noqa
# mypy: ignore-errors

_ = object()

# --- Qt and pyqtgraph call these overrides and read these attributes --------------------------
_.eventFilter  # app/gui/app.py: QObject.eventFilter, installed with installEventFilter
_.closeEvent  # app/gui/main_window.py: QWidget.closeEvent, Qt calls it on close
_.dragEnterEvent  # app/gui/profile_files.py: QWidget drag and drop of a profile file
_.dropEvent  # app/gui/profile_files.py: QWidget drag and drop of a profile file
_.textFromValue  # app/gui/config/link_editor.py: QDoubleSpinBox.textFromValue
_.columnCount  # app/gui/results/table.py: QAbstractTableModel, the views call it
_.headerData  # app/gui/results/table.py: QAbstractTableModel, the header view calls it
_.mouseDragEvent  # app/gui/plots/axes.py: pyqtgraph GraphicsObject override
_.logTickStrings  # app/gui/plots/axes.py, load.py: pyqtgraph AxisItem override for log axes
_.autoSIPrefixScale  # app/gui/plots/axes.py: pyqtgraph AxisItem reads it when it labels
_.labelUnitPrefix  # app/gui/plots/axes.py: pyqtgraph AxisItem reads it when it labels
_.picture  # app/gui/plots/axes.py: pyqtgraph AxisItem's cached drawing; None redraws it
# app/gui/plots/*.py: a pyqtgraph SignalProxy stops delivering once nothing references it.
_._cmp_proxy
_._hist_proxy
_._load_proxy
_._samples_proxy
_._scl_proxy

# --- read by other code by name or through a protocol -------------------------------------------
_.model_config  # pydantic reads a model's configuration from this class attribute
_.format_version  # app/core/settings: a pydantic field, a profile file's "format_version" key
_.writelines  # app/cli/terminal/streams.py: the file protocol of the sys.stdout it replaces
_._check_value  # app/cli/usage.py: argparse.ArgumentParser calls it on every value with choices
# app/core/vocab.py CongestionControl: enum members, reached by iteration and by value
_.CUBIC
_.BBR
_.RENO
# app/core/transport/tcpinfo.py KernelReading: filled from _LAYOUT by name, read with getattr
_.total_retrans
_.segs_out
_.segs_in
_.data_segs_in
_.data_segs_out
_.data_segments_in  # app/core/records/job_tcp_info.py: a results field, written and read back by name

# --- events read by whoever listens, and the benchmarks ----------------------------------------
_.pids  # app/core/contracts/events.py JobProcesses: on_event listeners (tests/reliability kill by them)
# app/core/contracts/events.py LinkDone: the link's own account, read by benchmarks/bench_link.py
# and tests/core/link/test_relay.py (the supervisor reads only `broken`)
_.bytes_up
_.bytes_down
_.late_mean_s
_.cpu_s
_.try_packet_path  # app/core/transport/netns.py: benchmarks/bench_packet_link.py and the packet path tests probe with it

# --- the tests' way in: hooks that drive or read the window, and what proves a bound -----------
_.set_checked  # app/gui/config/panel.py: tests tick a scheme's row
_.empty_state  # app/gui/config/panel.py: tests read the panel's hint
_.is_complete  # app/gui/history/compare_dialog.py: tests wait for its work to end
_.full_text  # app/gui/messages.py, history/panel.py: tests read a label's whole text, not its elided one
_.select_job  # app/gui/history/trend_view.py: tests pick a job
_.shown_lines  # app/gui/log_view.py: tests read the log as shown
_.last_error  # app/gui/main_window.py: tests read the error the window last showed
_.select_index  # app/gui/results/table.py: tests select a result's row
_.sample_count  # app/gui/plots/panel.py: tests prove the live buffers hold at most their cap of samples
_.job_processes  # app/core/processes/jobstart.py: tests check that no job process outlived its job
_.clear_cache  # app/core/selftest/vectors.py: tests read a changed vector file again
_.contrast_ratio  # app/gui/theme.py: tests/gui/test_theme.py holds both themes to WCAG AA with it
_._bar_layout  # app/report/pdf/charts/bar.py: the chart's layout, exposed for tests/report/pdf/test_charts.py
_.widest_line  # app/report/pdf/text.py: tests/report/pdf/test_pdf.py checks that text fits its box
_.content_rect  # app/report/pdf/text.py LaidOut: tests check the pages' margins against it
_.mean_loss  # app/core/link/packet_line.py: tests hold the loss model to the link's stated loss
_.migrated_from  # app/core/store/store.py: tests check which schema a store was migrated from
_.dispose_engines  # app/core/store/backends.py: tests close the kept PostgreSQL connections between servers
_.close_idle  # app/core/store/liveness.py: tests close idle lock connections between servers
_.SCHEMA_2  # app/core/store/schema.py: the schema _from_2 migrates; tests build schema-2 stores from it
_.SCHEMA_1  # app/core/store/schema.py: the schema _from_1 migrates; tests build old stores from it
# app/core/transport/wire.py FrameReader: the fuzz tests prove no byte past a frame is read;
# also KernelReading's and job_tcp_info.py's field of that name (above)
_.bytes_received
