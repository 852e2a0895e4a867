"""Where the repository and the golden files are, for tests at any depth of tests/."""

from __future__ import annotations

from pathlib import Path

#: The repository's root (the folder with pyproject.toml).
ROOT = Path(__file__).resolve().parents[2]
#: Files whose every byte is checked: the results format and a profile as shipped.
GOLDEN = ROOT / "tests" / "golden"
