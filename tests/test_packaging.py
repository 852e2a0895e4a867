"""Packaging inputs that `make test` can check without building the bundle.

The bundle itself is checked by `make package-test` (packaging/smoke_test.py). These
tests keep its inputs honest: the icons decode at the sizes they claim and match the
SVG, the desktop entry is valid, the spec excludes no Qt module the window imports, the
installer puts everything where menus look, the `gui` command's startup report (the
budgets' source) works, and the smoke test fails on a broken executable.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage, QImageReader

from app import __version__
from app.cli.main import main as cli_main
from tests.helpers.paths import ROOT
from tests.helpers.pixels import ROUNDING_LEVELS, PixelDifference, compare

ICONS = ROOT / "resources" / "icons"
PACKAGING = ROOT / "packaging"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def _load_packaging_module(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"packaging_{name}", PACKAGING / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("size", SIZES)
def test_png_icon_has_its_size(size: int) -> None:
    image = QImage(str(ICONS / f"cryptobench-{size}.png"))
    assert not image.isNull()
    assert (image.width(), image.height()) == (size, size)
    assert image.hasAlphaChannel()  # rounded corners must be transparent, not white
    assert image.pixelColor(0, 0).alpha() == 0


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("cryptobench.ico", {16, 24, 32, 48, 64, 128, 256}),
        ("cryptobench.icns", {16, 32, 64, 128, 256, 512, 1024}),
    ],
)
def test_platform_icon_files_decode_at_every_size(qapp, name: str, expected: set[int]) -> None:
    reader = QImageReader(str(ICONS / name))
    assert reader.canRead(), f"{name}: {reader.errorString()}"
    sizes = set()
    for index in range(reader.imageCount()):
        reader.jumpToImage(index)
        image = reader.read()
        assert not image.isNull(), f"{name} image {index}: {reader.errorString()}"
        sizes.add(image.width())
    assert sizes == expected


def _render_icons(tmp_path: Path, svg: Path | None = None) -> Path:
    make_icons = _load_packaging_module("make_icons")
    out = tmp_path / "icons"
    assert make_icons.main([str(out)] + ([str(svg)] if svg else [])) == 0
    return out


def _stale_sizes(rendered: Path) -> dict[int, PixelDifference]:
    """Sizes whose committed PNG differs from a fresh rendering by more than rounding."""
    stale = {}
    for size in SIZES:
        fresh = QImage(str(rendered / f"cryptobench-{size}.png"))
        committed = QImage(str(ICONS / f"cryptobench-{size}.png"))
        difference = compare(fresh, committed)
        if not difference.same_picture:
            stale[size] = difference
    return stale


def test_committed_icons_match_the_svg(qapp, tmp_path: Path) -> None:
    # Not pixel-exact: Qt's raster engine rounds blends differently per CPU (tests/helpers/pixels.py),
    # so a fresh rendering may differ from the committed one by a level or two on edges.
    stale = _stale_sizes(_render_icons(tmp_path))
    assert not stale, f"stale icons {sorted(stale)} ({stale}): run packaging/make_icons.py"


@pytest.mark.parametrize(
    ("what", "old", "new"),
    [
        # A colour moved by 16 levels in one bar of the chart.
        ("colour", 'fill="#2f9e6b"', 'fill="#2f9e7b"'),
        # The tallest bar moved by 4 SVG units: a quarter pixel at 32 px, an eighth at 16 px.
        ("shape", 'x="304" y="260"', 'x="308" y="260"'),
    ],
)
def test_the_icon_check_notices_a_changed_svg(qapp, tmp_path: Path, what: str, old: str, new: str) -> None:
    source = (ICONS / "cryptobench.svg").read_text(encoding="utf-8")
    assert old in source, f"the {what} perturbation no longer matches the SVG"
    perturbed = tmp_path / "perturbed.svg"
    perturbed.write_text(source.replace(old, new), encoding="utf-8")
    stale = _stale_sizes(_render_icons(tmp_path, perturbed))
    # The change must show at the sizes a person sees most: the window and menu icons.
    assert {32, 48, 256} <= set(stale), f"a changed {what} went unnoticed: {stale}"


def test_the_tolerance_passes_rounding_and_fails_a_level_beyond_it() -> None:
    image = QImage(8, 8, QImage.Format.Format_RGBA8888)
    image.fill(QColor(40, 120, 200, 255))
    rounded, beyond = QImage(image), QImage(image)
    rounded.setPixelColor(3, 3, QColor(40 + ROUNDING_LEVELS, 120 - ROUNDING_LEVELS, 200, 255))
    beyond.setPixelColor(3, 3, QColor(40, 120, 200, 255 - ROUNDING_LEVELS - 1))
    assert compare(image, rounded).same_picture
    difference = compare(image, beyond)
    assert not difference.same_picture
    assert (difference.pixels_over, difference.max_levels) == (1, ROUNDING_LEVELS + 1)


def test_main_window_uses_the_icon(qtbot) -> None:
    from app.gui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    sizes = {s.width() for s in window.windowIcon().availableSizes()}
    assert set(SIZES) <= sizes


def _desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read(PACKAGING / "linux" / "cryptobench.desktop", encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_names_the_app_and_its_icon() -> None:
    entry = _desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Exec"] == "cryptobench"  # no %f: an argument would be read as a CLI command
    assert entry["Icon"] == "cryptobench"
    assert entry["Terminal"] == "false"
    # Qt sets WM_CLASS's class to the application name; docks match the window with it.
    from app.gui.main_window import APPLICATION

    assert entry["StartupWMClass"] == APPLICATION


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None,
    reason="desktop-file-validate (Debian desktop-file-utils) is not installed",
)
def test_desktop_entry_validates() -> None:
    out = subprocess.run(
        ["desktop-file-validate", str(PACKAGING / "linux" / "cryptobench.desktop")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0 and "error" not in out.stdout.lower(), out.stdout


def _spec_excludes() -> set[str]:
    tree = ast.parse((PACKAGING / "cryptobench.spec").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "excludes" for t in node.targets):
            return set(ast.literal_eval(node.value))
    raise AssertionError("cryptobench.spec has no `excludes = [...]`")


def test_spec_excludes_no_module_the_window_or_reports_import(tmp_path: Path) -> None:
    """A fresh interpreter opens the window and writes a PDF; every Qt module it loaded
    must be in the bundle. (Excluding QtOpenGL once broke the frozen window: pyqtgraph
    imports it for every curve.)"""
    script = """
import json, sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.gui.main_window import MainWindow
from app.report.pdf import charts, writer
from app.report import exporters
import pyqtgraph.exporters
window = MainWindow(); window.show(); app.processEvents()
window.close(); app.processEvents()
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {'PySide6', 'pyqtgraph', 'numpy'})))
"""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    excludes = _spec_excludes()
    assert "PySide6.QtWidgets" in loaded  # the probe did load the GUI
    clash = {m for m in loaded if any(m == e or m.startswith(e + ".") for e in excludes)}
    assert not clash, f"cryptobench.spec excludes modules the app imports: {sorted(clash)}"


def _fake_bundle(tmp_path: Path, script: str) -> Path:
    bundle = tmp_path / "bundle"
    shutil.copytree(ICONS, bundle / "_internal" / "resources" / "icons")
    exe = bundle / "cryptobench"
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return bundle


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the desktop installer is for Linux")
def test_linux_installer_installs_and_uninstalls(tmp_path: Path) -> None:
    bundle = _fake_bundle(tmp_path, f'echo "cryptobench {__version__}"\n')
    prefix = tmp_path / "prefix"
    env = {**os.environ, "PREFIX": str(prefix)}
    run = subprocess.run(
        ["sh", str(PACKAGING / "linux" / "install.sh"), str(bundle)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    launcher = prefix / "bin" / "cryptobench"
    assert (
        subprocess.run([str(launcher), "--version"], capture_output=True, text=True, check=False).stdout.strip()
        == f"cryptobench {__version__}"
    )
    entry = (prefix / "share" / "applications" / "cryptobench.desktop").read_text()
    assert f"Exec={launcher}\n" in entry and f"TryExec={launcher}\n" in entry
    for size in SIZES:
        assert (prefix / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "cryptobench.png").is_file()
    assert (prefix / "share" / "icons" / "hicolor" / "scalable" / "apps" / "cryptobench.svg").is_file()
    assert not list((prefix / "lib").glob(".cryptobench-new.*"))  # no staging folder left behind

    # Reinstalling replaces the app in place; uninstalling removes every file it put there.
    assert (
        subprocess.run(
            ["sh", str(PACKAGING / "linux" / "install.sh"), str(bundle)],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        ).returncode
        == 0
    )
    gone = subprocess.run(
        ["sh", str(PACKAGING / "linux" / "install.sh"), "--uninstall"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert gone.returncode == 0, gone.stderr
    assert not launcher.exists() and not (prefix / "lib" / "cryptobench").exists()
    assert not list((prefix / "share").rglob("cryptobench*"))


def test_linux_installer_refuses_a_missing_bundle(tmp_path: Path) -> None:
    run = subprocess.run(
        ["sh", str(PACKAGING / "linux" / "install.sh"), str(tmp_path / "nothing")],
        env={**os.environ, "PREFIX": str(tmp_path / "prefix")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert "make package" in run.stderr and not (tmp_path / "prefix" / "bin").exists()


def test_gui_command_writes_the_startup_report(tmp_path: Path) -> None:
    report = tmp_path / "startup.json"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    run = subprocess.run(
        [sys.executable, "-m", "app", "gui", "--quit-after", "0.3", "--startup-report", str(report)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(report.read_text())
    assert data["frozen"] is False
    assert data["window_painted_at"] is not None
    assert 0 < data["window_painted_at"] - data["process_created_at"] < 60
    assert data["peak_rss_bytes"] > 20 * 2**20  # a Qt window cannot take less than 20 MiB


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gui", "--quit-after", "0"], "--quit-after: must be a positive number"),
        (["gui", "--startup-report", "r.json"], "--startup-report: needs --quit-after"),
    ],
)
def test_gui_command_refuses_bad_options(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert cli_main(args) == 2
    assert message in capsys.readouterr().err


def test_smoke_test_fails_on_a_broken_executable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The smoke test must be able to fail: a bundle that prints a traceback and exits 0."""
    smoke = _load_packaging_module("smoke_test")
    bundle = _fake_bundle(
        tmp_path,
        'echo "Traceback (most recent call last):" >&2\n'
        'echo "ModuleNotFoundError: No module named PySide6.QtOpenGL" >&2\n',
    )
    assert smoke.main([str(bundle), "--launches", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  --version" in out and "FAIL  selftest" in out and "FAIL  GUI offscreen" in out


def test_smoke_test_names_a_missing_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    smoke = _load_packaging_module("smoke_test")
    assert smoke.main([str(tmp_path / "dist" / "cryptobench")]) == 2
    assert "make package" in capsys.readouterr().err


def test_the_smoke_test_holds_the_bundle_to_a_tls13_operations_job() -> None:
    """The frozen run of quick must have timed TLS 1.3 handshakes on the bundle's pyOpenSSL
    and read pyOpenSSL's version from the metadata the spec copies."""
    smoke = _load_packaging_module("smoke_test")
    job = {"scheme": "tls13", "mode": "operations", "label": "TLS", "metrics": {"handshake_client": {}}}
    environment = {"libraries": {"pyOpenSSL": {"version": "26.4.0"}}}
    good = {"run": {"environment": environment}, "jobs": [{**job, "tls": {"group": "X25519MLKEM768"}}]}
    assert smoke.check_tls13(good) is None
    assert "no tls13 operations job" in smoke.check_tls13({**good, "jobs": []})
    assert "negotiated group" in smoke.check_tls13({**good, "jobs": [job]})
    unnamed = {"run": {"environment": {"libraries": {"pyOpenSSL": {"version": None}}}}, "jobs": good["jobs"]}
    assert "metadata" in smoke.check_tls13(unnamed)
    spec = (ROOT / "packaging" / "cryptobench.spec").read_text(encoding="utf-8")
    assert '"pyOpenSSL"' in spec  # its metadata, for the version above
