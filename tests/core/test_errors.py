"""One error hierarchy: every layer's errors under CryptoBenchError, none a built-in
(KeyError quoted its message), and str() is the message a face shows as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import errors
from app.core.errors import BadParameter, CryptoBenchError, RegistryError, SessionError, UnknownBackend, UnknownScheme
from app.core.results.model import ResultsFileError
from app.core.schemes import registry
from app.core.schemes.base import AuthenticationError, SchemeError
from app.core.serve.server import TokenFileError
from app.core.session.protocol import JobRejected
from app.core.session.sender import ServerBusy, SessionFailed
from app.core.settings.profile import ProfileError
from app.core.store.store import AmbiguousRunId, BrokenStoreError, RunNotFound, Store, StoreError
from app.core.transport.auth import AuthenticationFailed
from app.core.transport.wire import PeerTimeout, WireError
from app.report.exporters import ExportError
from tests.helpers import records
from tests.helpers.stores import RUN_ID, damage_jobs_table, stored_run

#: Each error class and the base a face catches for it.
LAYERS: list[tuple[type[Exception], type[Exception]]] = [
    (StoreError, StoreError),
    (BrokenStoreError, StoreError),
    (RunNotFound, StoreError),
    (AmbiguousRunId, RunNotFound),
    (UnknownScheme, RegistryError),
    (UnknownBackend, RegistryError),
    (BadParameter, RegistryError),
    (ProfileError, ProfileError),
    (ResultsFileError, ResultsFileError),
    (TokenFileError, SessionError),
    (JobRejected, SessionError),
    (SessionFailed, SessionError),
    (WireError, WireError),
    (PeerTimeout, WireError),
    (AuthenticationFailed, WireError),
    (SchemeError, SchemeError),
    (AuthenticationError, SchemeError),
    (ExportError, ExportError),
]


@pytest.mark.parametrize(("cls", "base"), LAYERS, ids=lambda value: value.__name__)
def test_str_is_the_message_and_the_base_is_the_layers(cls: type[Exception], base: type[Exception]) -> None:
    message = "no run with id 'nope' in /data/results.sqlite3"
    error = cls(message)
    assert str(error) == message  # a KeyError would show "\"no run with id 'nope' ...\""
    assert isinstance(error, base) and isinstance(error, CryptoBenchError)
    assert not isinstance(error, (LookupError, ValueError, OSError))


def test_errors_with_their_own_arguments_say_the_whole_message() -> None:
    assert (
        str(ProfileError("unknown scheme", source="p.json", field="jobs[0].scheme"))
        == "p.json: jobs[0].scheme: unknown scheme"
    )
    busy = ServerBusy(2.0)
    assert str(busy) == "the server is busy; retry in 2 s" and isinstance(busy, SessionError)


def test_the_registry_errors_are_importable_where_they_are_raised() -> None:
    assert (RegistryError, UnknownScheme, UnknownBackend, BadParameter) == (
        errors.RegistryError,
        errors.UnknownScheme,
        errors.UnknownBackend,
        errors.BadParameter,
    )


def test_registry_lookups_raise_registry_errors_with_the_old_messages() -> None:
    with pytest.raises(UnknownScheme) as unknown:
        registry.get_spec("rot13")
    assert str(unknown.value).startswith("unknown scheme 'rot13' (known: aes-gcm, ")
    with pytest.raises(UnknownBackend, match=r"^backend 'tinyec' is not available for aes-gcm "):
        registry.create("aes-gcm", "tinyec")
    with pytest.raises(BadParameter, match=r"^parameter 'key_bits' of aes-gcm "):
        registry.create("aes-gcm", "cryptography", {"key_bits": 100})


# --- the store ----------------------------------------------------------------------------------


def test_unknown_and_ambiguous_run_ids_are_run_not_found(tmp_path: Path) -> None:
    path = stored_run(tmp_path / "s.sqlite3")
    with Store(path) as store:
        store.begin_run(records.run("20260101-000000-aaaabb", status="running"))
        with pytest.raises(RunNotFound) as missing:
            store.load_run("nope")
        assert str(missing.value) == f"no run with id 'nope' in {path}"
        with pytest.raises(AmbiguousRunId) as several:
            store.load_run("2026")
        assert str(several.value) == "run id prefix '2026' is ambiguous (2 runs match)"


def test_a_run_deleted_after_its_id_was_resolved_is_run_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store(stored_run(tmp_path / "s.sqlite3")) as store:
        monkeypatch.setattr(store, "resolve_run_id", lambda prefix: "20260101-000000-gone00")
        with pytest.raises(RunNotFound, match="no run with id '20260101-000000-gone00'"):
            store.load_run("2026")


def test_a_damaged_store_is_a_store_error_naming_the_file(tmp_path: Path) -> None:
    path = stored_run(tmp_path / "s.sqlite3")
    damage_jobs_table(path)
    with Store(path) as store:  # opens: only the jobs are unreadable
        reads = {
            "list_runs": store.list_runs,
            "load_run": lambda: store.load_run(RUN_ID),
            "damaged_rows": store.damaged_rows,
        }
        for name, read in reads.items():
            with pytest.raises(StoreError) as caught:
                read()
            assert not isinstance(caught.value, RunNotFound), name
            assert str(caught.value).startswith(f"{path}: cannot read "), name
            assert "malformed" in str(caught.value), name
