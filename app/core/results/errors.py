"""The error of results data that fails validation (`app.core.results.check` and
`app.core.results.plausible` raise it; kept apart so neither imports the other's internals)."""

from __future__ import annotations


class ResultsDataError(ValueError):
    """Results data that fails validation; `field` is the path, str() is `field: message`."""

    def __init__(self, field: str, message: str) -> None:
        self.field, self.detail = field, message
        super().__init__(f"{field}: {message}" if field else message)
