"""Every window test runs with the QApplication in place (pytest-qt's `qapp`).

A test that builds a widget without asking for `qtbot` or `qapp` worked only when an
earlier test had made the application; on two workers (`make test`) such a test may be a
worker's first Qt test, and Qt aborts the process ("Must construct a QApplication before
a QWidget"), taking the worker and its other tests with it."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def application(qapp: Any) -> Any:
    return qapp
