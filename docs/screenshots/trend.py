"""The README's picture of the trend view (History > Trend…), from the hand-built history
the tests use (tests/helpers/trend_cases.py: four runs of one job, a cryptography and OpenSSL
upgrade, then another machine), in a temporary store. Not measurements: the medians are
the tests' known values. Run from the repository root (make.sh does):
    python docs/screenshots/trend.py OUT.png [light|dark]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtWidgets import QApplication

from app.gui.history.trend_view import TrendDialog
from app.gui.theme import apply_theme
from tests.helpers import trend_cases


def main() -> int:
    out = Path(sys.argv[1])
    app = QApplication([])
    apply_theme(app, sys.argv[2] if len(sys.argv) > 2 else "light")
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "results.sqlite3"
        trend_cases.build(store)
        run_id = trend_cases.RUNS[0][0]
        dialog = TrendDialog(store, [trend_cases.job(run_id, 0, 1.0)])
        dialog.resize(1024, 700)
        dialog.show()
        for _ in range(5):  # layouts settle, then pyqtgraph paints at the final size
            app.processEvents()
        if not dialog.grab().save(str(out)):
            print(f"{out}: cannot write the picture", file=sys.stderr)
            return 2
        dialog.close()
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
