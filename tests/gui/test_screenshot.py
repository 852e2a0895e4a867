"""`cryptobench gui --profile P --run --screenshot OUT.png --tab NAME`: the real window,
driven to a state and saved (the screenshots in docs/ are made this way)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QImage

from app.cli.main import main as cli_main
from app.core.profile.files import parse_profile, save_profile
from app.gui.screenshot import Plan


@pytest.mark.parametrize(
    "argv, message",
    [
        (["gui", "--run"], "--run: needs --profile"),
        (["gui", "--size", "big"], "--size: expected WIDTHxHEIGHT"),
        (["gui", "--size", "100x100"], "--size: expected WIDTHxHEIGHT"),
    ],
)
def test_bad_screenshot_options_are_refused(argv: list[str], message: str, capsys: Any) -> None:
    assert cli_main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_run_is_shown_and_saved_at_the_asked_size(qtbot: Any, qapp: Any, tmp_path: Path) -> None:
    from app.gui.app import main as gui_main
    from app.gui.theme import apply_theme

    profile = tmp_path / "two.json"
    save_profile(
        parse_profile(
            {
                "name": "two",
                "jobs": [
                    {"scheme": "sha256", "message_sizes": [64, 1024], "samples": 6, "warmup": 1},
                    {"scheme": "aes-gcm", "message_sizes": [1024], "samples": 6, "warmup": 1},
                ],
            }
        ),
        profile,
    )
    out = tmp_path / "shot.png"
    try:
        code = gui_main([], plan=Plan(str(profile), True, out, "comparison", "dark", (1024, 700)))
    finally:
        apply_theme(qapp, "system")  # the screenshot's theme must not leak into other tests
    assert code == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1024, 700)
    colours = {image.pixel(x, y) for x in range(0, image.width(), 9) for y in range(0, image.height(), 9)}
    assert len(colours) > 20, "the screenshot looks blank"
    dark = sum(QImage(str(out)).pixelColor(x, 690).lightness() < 100 for x in range(0, 1024, 32))
    assert dark > 16  # the dark theme was applied


def test_an_unknown_profile_is_bad_input(qtbot: Any, qapp: Any, tmp_path: Path, capsys: Any) -> None:
    from app.gui.app import main as gui_main
    from app.gui.theme import apply_theme

    try:
        code = gui_main([], plan=Plan("no-such-profile", False, tmp_path / "x.png", None, None, None))
    finally:
        apply_theme(qapp, "system")
    assert code == 2 and "no-such-profile" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_gui_store_records_the_window_s_run_in_the_named_store(qtbot: Any, qapp: Any, tmp_path: Path) -> None:
    """`gui --store`: the session's store, over a screenshot's own temporary one."""
    from app.core.store.store import Store
    from app.gui.app import main as gui_main
    from app.gui.theme import apply_theme

    profile = tmp_path / "one.json"
    save_profile(
        parse_profile({"name": "one", "jobs": [{"scheme": "sha256", "message_sizes": [64], "samples": 6}]}), profile
    )
    store = tmp_path / "named.sqlite3"
    try:
        code = gui_main([], plan=Plan(str(profile), True, tmp_path / "shot.png", None, "light", None), store=str(store))
    finally:
        apply_theme(qapp, "system")
    assert code == 0
    with Store(store) as opened:
        assert [run.name for run in opened.list_runs()] == ["one"]
