"""Every dialog, tab and plot of the window, painted in both themes at 1024×700.

History's Trend… ended the process with a segmentation fault at its first paint
(pyqtgraph's legend drew a per-point symbol list), and its test passed because it never
painted. Here a child process per theme (tests/helpers/painting.py) paints them all with
`grab()`, with real data of every job kind (tests/helpers/window_runs.py: a real run of
operations, loopback, the stream relay, the packet path and load jobs, a failed and a
cancelled run; cluster load, sweeps, the trend's history and an interrupted run built by
the producers' code): a crash fails the test with the child's faulthandler trace instead
of killing the pytest worker. Each picture is then judged: not blank, on the theme's
background, and each plot holding data shows it in its view box.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage

from app.gui.theme import luminance
from tests.helpers import window_runs
from tests.helpers.paint_child import finish_child, run_child
from tests.helpers.painting import MANIFEST, SIZE

#: Both themes' tests on one worker: the module's fixture builds every job kind's real runs
#: and paints both themes at once (16 s of CPU), and split over two workers it ran twice.
pytestmark = pytest.mark.xdist_group("every-picture")

THEMES = ("light", "dark")
#: A hang, not a slow machine: both children paint in a few seconds each on an idle one.
CHILD_TIMEOUT_S = 240
#: Pictures whose plots must show data: every plot tab with real data, live and finished,
#: every job kind in the tabs of one job, load sweeps with a cluster job, and the trend.
PLOTTED = (
    "live/samples",
    "live/resources",
    "live/load",
    "live-selected/samples",
    "live-selected/histogram",
    "live-selected/resources",
    *(
        f"run/{kind}/{tab}"
        for kind in ("operations", "loopback", "relay-link", "packet-link", "load")
        for tab in ("samples", "histogram")
    ),
    "run/comparison",
    "run/scaling",
    "run/load",
    "sweeps/load",
    "sweeps/comparison",
    "sweeps/cluster/samples",
    "sweeps/cluster/histogram",
    "sweeps/tls/samples",
    "sweeps/tls/load",
    "cluster-failed/samples",
    "interrupted/samples",
    "dialog/trend",
)
#: Every other picture the children must take: the empty and failed states, the docks,
#: the configuration panel's editors, every dialog and the exported plots.
PAINTED = (
    "run/cancelled/samples",
    "run/cancelled/histogram",
    "cluster-failed/load",
    "failed/samples",
    "failed/comparison",
    "interrupted/comparison",
    "dock/log",
    "dock/history",
    "dock/results-load",
    *(f"config/{state}" for state in ("start", "custom-link", "sweep", "load-cluster", "remote")),
    *(
        f"dialog/{name}"
        for name in ("about", "getting-started", "preferences", "report", "compare", "trend-one-run", "error")
    ),
    *(f"export/{plot}" for plot in ("run-load", "run-comparison", "run-scaling", "sweeps-load")),
)
#: A pixel of a data series: its channels this far apart (the plots' series colours are
#: Tableau 10's; axes, grid, text and the themes' backgrounds are grey, under 10 apart).
CHROMA = 40
#: Series pixels a plot with data shows at least (a single 9-pixel symbol has more).
SERIES_PIXELS = 20
#: A picture with anything drawn on it: the About dialog's few lines of text in a window
#: of 1024×700 are some 14,000 pixels off its background, in dozens of colours (counted
#: on a ninth of the pixels).
DRAWN_PIXELS, DRAWN_COLOURS = 2000, 20
#: Rounding between a palette colour and the pixel Qt paints with it.
LEVELS = 3


@pytest.fixture(scope="module")
def painted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Any]]]:
    """Both themes' pictures and their manifests, painted by two children at once."""
    folder = tmp_path_factory.mktemp("pictures")
    with pytest.MonkeyPatch.context() as patch:  # module-scoped: the autouse isolation comes later
        patch.setenv("CRYPTOBENCH_HOME", str(folder / "home"))
        runs = window_runs.build(folder / "runs")
        children = {
            theme: run_child(["-m", "tests.helpers.painting", *runs.arguments(), theme, str(folder / theme)])
            for theme in THEMES
        }
        try:
            for theme, child in children.items():
                finish_child(child, CHILD_TIMEOUT_S, f"painting the window in the {theme} theme")
        finally:
            for child in children.values():
                if child.poll() is None:
                    child.kill()
                    child.wait()
    manifests = {}
    for theme in THEMES:
        manifest = json.loads((folder / theme / MANIFEST).read_text(encoding="utf-8"))
        manifest["folder"] = folder / theme
        manifests[theme] = manifest
    yield manifests


def _pixels(path: Path) -> np.ndarray:
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB888)
    assert not image.isNull(), f"{path}: not a picture"
    width, height, stride = image.width(), image.height(), image.bytesPerLine()
    rows = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes()).reshape(height, stride)
    return rows[:, : width * 3].reshape(height, width, 3).copy()


def _codes(pixels: np.ndarray) -> np.ndarray:
    """Each pixel's colour as one number."""
    flat = pixels.reshape(-1, 3).astype(np.int32)
    codes: np.ndarray = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    return codes


def _dominant(pixels: np.ndarray) -> tuple[tuple[int, int, int], int, int]:
    """The most common colour, how many pixels are of another, and how many colours there
    are (the colours counted on every third pixel each way: sorting them all is slow)."""
    values, counts = np.unique(_codes(pixels[::3, ::3]), return_counts=True)
    top = int(values[counts.argmax()])
    colour = ((top >> 16) & 255, (top >> 8) & 255, top & 255)
    others = int((pixels != np.array(colour, dtype=np.uint8)).any(axis=2).sum())
    return colour, others, len(values)


def _plot_background(inside: np.ndarray) -> tuple[int, int, int]:
    """A plot's background: the most common of its grey pixels. Not simply its most common
    colour: a histogram of a few samples has bars wide enough to cover more of the plot
    than its background does (a run's data decides, so the check failed now and then)."""
    wide = inside[::3, ::3].astype(np.int16)
    grey = inside[::3, ::3][(wide.max(axis=2) - wide.min(axis=2)) < CHROMA]
    if not len(grey):
        return _dominant(inside)[0]
    values, counts = np.unique(_codes(grey), return_counts=True)
    top = int(values[counts.argmax()])
    return ((top >> 16) & 255, (top >> 8) & 255, top & 255)


def _near(colour: tuple[int, int, int], name: str) -> bool:
    wanted = QColor(name)
    return max(abs(a - b) for a, b in zip(colour, (wanted.red(), wanted.green(), wanted.blue()))) <= LEVELS


def _series_pixels(pixels: np.ndarray) -> int:
    wide = pixels.astype(np.int16)
    return int(((wide.max(axis=2) - wide.min(axis=2)) >= CHROMA).sum())


def _problems(picture: dict[str, Any], pixels: np.ndarray, colours: dict[str, str]) -> list[str]:
    """What is wrong with one picture (nothing: an empty list)."""
    problems = []
    name, (height, width) = picture["name"], pixels.shape[:2]
    if picture["size"] is not None and name != "dialog/error" and [width, height] != list(SIZE):
        problems.append(f"painted at {width}x{height}, not {SIZE[0]}x{SIZE[1]}")
    colour, others, count = _dominant(pixels)
    if others < DRAWN_PIXELS or count < DRAWN_COLOURS:
        problems.append(f"blank: {others} pixels and {count} colours besides its background {colour}")
    if picture["size"] is not None and not any(
        _near(colour, colours[role]) for role in ("window", "base", "alternate")
    ):
        problems.append(f"its background {colour} is none of the theme's {colours}")
    for plot in picture["plots"]:
        x, y, w, h = (int(v) for v in plot["rect"])
        inside = pixels[y + 2 : y + h - 2, x + 2 : x + w - 2]
        if inside.size == 0:
            problems.append(f"a plot at {plot['rect']} lies outside the picture")
            continue
        background = _plot_background(inside)
        if not _near(background, colours["window"]):
            problems.append(f"the plot at {plot['rect']} is on {background}, not the theme's {colours['window']}")
        if plot["points"] and _series_pixels(inside) < SERIES_PIXELS:
            problems.append(f"the plot at {plot['rect']} holds {plot['points']} points but shows none of them")
    if picture["size"] is None and _series_pixels(pixels) < SERIES_PIXELS:  # an exported plot
        problems.append("the exported plot shows no data series")
    return problems


@pytest.mark.parametrize("theme", THEMES)
def test_every_picture_of_the_window_is_painted_and_shows_what_it_holds(
    theme: str, painted: dict[str, dict[str, Any]]
) -> None:
    manifest = painted[theme]
    colours = manifest["colours"]
    assert (luminance(QColor(colours["window"])) > 0.6) == (theme == "light"), colours
    pictures = {picture["name"]: picture for picture in manifest["pictures"]}
    missing = [name for name in (*PLOTTED, *PAINTED) if name not in pictures]
    assert not missing, f"not painted: {missing}"
    empty = [name for name in PLOTTED if not any(plot["points"] for plot in pictures[name]["plots"])]
    assert not empty, f"these plots hold no data: {empty}"
    found = {}
    for name, picture in pictures.items():
        problems = _problems(picture, _pixels(manifest["folder"] / picture["file"]), colours)
        if problems:
            found[name] = problems
    assert not found, f"{theme} theme, pictures in {manifest['folder']}:\n" + "\n".join(
        f"{name}: {'; '.join(problems)}" for name, problems in found.items()
    )


def test_a_child_that_crashes_while_painting_fails_with_its_trace(tmp_path: Path) -> None:
    """The harness itself: a segmentation fault in the child is a failure naming it, with
    the Python frames faulthandler printed, never a worker gone."""
    script = tmp_path / "crash.py"
    script.write_text("import faulthandler\n\ndef paint():\n    faulthandler._sigsegv()\n\npaint()\n")
    child = run_child([str(script)])
    with pytest.raises(AssertionError) as failure:
        finish_child(child, 60, "painting")
    text = str(failure.value)
    assert "Segmentation fault" in text and "line 4 in paint" in text, text
    assert child.returncode != 0
