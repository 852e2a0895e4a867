"""Where the local SQLite store lives by default: `$CRYPTOBENCH_HOME`, else the user data folder."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

STORE_FILENAME = "results.sqlite3"


def data_dir() -> Path:
    """`$CRYPTOBENCH_HOME`, else the platform's user data directory."""
    home = os.environ.get("CRYPTOBENCH_HOME")
    if home:
        return Path(home)
    return Path(platformdirs.user_data_dir("cryptobench", appauthor=False))


def default_store_path() -> Path:
    return data_dir() / STORE_FILENAME
