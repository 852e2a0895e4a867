"""Benchmark profile files: versioned JSON, validated with messages that name the bad field.

A profile is what a user saves and loads: a name and a list of jobs (scheme,
backend, parameters, mode, message sizes, samples, warm-up, pause). `load_profile`
checks the structure with pydantic, then the meaning against the scheme registry
(unknown schemes, impossible parameters, messages too long for one block, duplicate
jobs, sizes beyond this machine's memory) and raises `ProfileError` whose text is
one line: file, field path, what is wrong, and the value.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.core.fileio import FileReadError, atomic_write_text, read_limited
from app.core.json_bounds import structure_problem
from app.core.resources import resource_path
from app.core.settings.links import UNION_TAGS
from app.core.settings.profile import (
    FORMAT_VERSION,
    MAX_PROFILE_BYTES,
    MAX_PROFILE_CONTAINERS,
    MIGRATIONS,
    Profile,
    ProfileError,
)
from app.core.suggest import closest, did_you_mean


def _field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).isidentifier():  # an unknown key like "my field" or "a\nb": quoted, one line
            path += f"[{json.dumps(str(part))}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def _without_union_tags(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The location without the branch names of a link's tagged unions (jobs, 0, link, custom,
    delay_ms -> jobs, 0, link, delay_ms): only right after the field that holds the union."""
    kept: list[Any] = []
    for i, part in enumerate(loc):
        owner = loc[i - 2] if i >= 2 and isinstance(loc[i - 1], int) else loc[i - 1] if i >= 1 else None
        if (
            isinstance(owner, str)
            and part in UNION_TAGS.get(owner, ())
            and (owner == "links") == (i >= 2 and isinstance(loc[i - 1], int))
        ):
            continue
        kept.append(part)
    return tuple(kept)


def first_error(exc: ValidationError, source: str | None, data: Any) -> ProfileError:
    return _validation_error(exc.errors()[0], source)


def validation_problems(data: Any, source: str | None = None) -> list[ProfileError]:
    """Every structure error of a decoded profile, not only the first (`parse_profile`
    raises the first): what `app.core.profile.problems` lists, one per field."""
    if not isinstance(data, dict):
        try:
            parse_profile(data, source)
        except ProfileError as exc:
            return [exc]
    try:  # what parse_profile checks before pydantic: its one error, as it says it
        _refuse_unencodable(data, source)
        data = migrate(data, source)
    except ProfileError as exc:
        return [exc]
    try:
        Profile.model_validate(data)
    except ValidationError as exc:
        return [_validation_error(error, source) for error in exc.errors()]
    return []


def _validation_error(error: Any, source: str | None) -> ProfileError:
    loc = _without_union_tags(tuple(error["loc"]))
    # pydantic appends the union branch name ("int", "str") to a parameter value's location
    # (jobs, 0, params, name, branch); drop it. Only there: an unknown field may be called "int".
    params_branch = len(loc) >= 3 and loc[-3] == "params" and loc[-1] in {"int", "str", "bool", "float"}
    if params_branch:
        loc = loc[:-1]
    field = _field_path(loc) or None
    message = error["msg"]
    if params_branch and error["type"].endswith("_type"):
        # A union (params values): name every accepted type, not just the first branch's.
        message = "Input should be a valid integer, string or boolean"
    if error["type"] == "extra_forbidden":
        message = "unknown field"
    elif error["type"] == "missing":
        message = "required field is missing"
    message = message.removeprefix("Value error, ")
    if error["type"] != "missing" and "input" in error:
        message += f" (got {_shown(error['input'])})"
    return ProfileError(message, source=source, field=field)


def _shown(value: Any) -> str:
    """A value as JSON for a message; never raises (a value nested near the recursion
    limit cannot be dumped again from deeper in the stack)."""
    if isinstance(value, dict):
        return "{...}"
    try:
        # A long array's first items say enough (dumping four million took a second).
        shown = json.dumps(value[:20] + ["..."] if isinstance(value, list) and len(value) > 20 else value)
    except (ValueError, RecursionError):
        shown = "[...]" if isinstance(value, list) else type(value).__name__
    return shown[:57] + "..." if len(shown) > 60 else shown


_JSON_TYPE_NAMES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


def migrate(data: dict[str, Any], source: str | None = None) -> dict[str, Any]:
    """Upgrade an older profile dict to FORMAT_VERSION; refuse a newer one."""
    version = data.get("format_version", FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ProfileError(f"must be a positive integer (got {_shown(version)})", source=source, field="format_version")
    if version > FORMAT_VERSION:
        raise ProfileError(
            f"written by a newer CryptoBench (format {version}; this version reads up to {FORMAT_VERSION}); "
            "update CryptoBench to open it",
            source=source,
            field="format_version",
        )
    while version < FORMAT_VERSION:
        data = MIGRATIONS[version](dict(data))
        version += 1
        data["format_version"] = version
    return data


def parse_profile(data: Any, source: str | None = None) -> Profile:
    """Structure check of a decoded JSON value."""
    if not isinstance(data, dict):
        kind = _JSON_TYPE_NAMES.get(type(data), type(data).__name__)
        raise ProfileError(f"a profile must be a JSON object (got {kind})", source=source)
    _refuse_unencodable(data, source)
    data = migrate(data, source)
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, source, data) from None


def _refuse_unencodable(data: Any, source: str | None) -> None:
    """Refuse text that cannot be written as UTF-8, in any string or key of the profile.

    JSON's "\\ud800" escape (and a GUI field fed one) decodes to a lone surrogate: a valid
    Python string that no file, pipe or database can take. Such a label passed every
    check and then broke the run in the middle, and a description broke the Markdown
    report. Iterative and in document order: the first bad field is the one named.
    """
    if _encodable(data):
        return
    # Lazy (one iterator per open container, memory bounded by the depth): building an entry
    # per item took 12 s and a GiB for a 16 MiB profile of four million numbers.
    _refuse_unencodable_value((), data, source)
    stack: list[tuple[tuple[Any, ...], Iterator[tuple[Any, Any]]]] = []
    if isinstance(data, dict | list):
        stack.append(((), _items(data)))
    while stack:
        loc, items = stack[-1]
        for key, child in items:
            where = (*loc, key)
            _refuse_unencodable_value(where, child, source)
            if isinstance(child, dict | list):
                stack.append((where, _items(child)))
                break
        else:
            stack.pop()


def _encodable(data: Any) -> bool:
    """Whether every string and key in `data` can be written as UTF-8: one pass of the C
    encoder. The walk of `_refuse_unencodable` only names the field, so it runs when this
    fails (or cannot tell: a value JSON cannot hold, a nesting deeper than its recursion).
    On a 16 MiB profile of four million numbers the encoder took 1.9 s of CPU and the walk
    3.2 s; of two-letter strings, 0.4 s and 2.8 s (2026-11-29, the 2-core VM)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError, RecursionError):
        return False
    return True


def _items(value: dict[str, Any] | list[Any]) -> Iterator[tuple[Any, Any]]:
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)


def _refuse_unencodable_value(loc: tuple[Any, ...], value: Any, source: str | None) -> None:
    """One string, or one object's keys (not its values: the walk reaches those)."""
    if isinstance(value, str):
        bad = _surrogate_at(value)
        if bad is not None:
            raise ProfileError(
                f"text cannot be written as UTF-8 (a lone surrogate at character {bad}; got {_shown(value)})",
                source=source,
                field=_field_path(loc) or None,
            )
    elif isinstance(value, dict):
        for key in value:
            bad = _surrogate_at(key)
            if bad is not None:
                raise ProfileError(
                    f"a field name cannot be written as UTF-8 (a lone surrogate at character {bad}; got {_shown(key)})",
                    source=source,
                    field=_field_path(loc) or None,
                )


def _surrogate_at(text: str) -> int | None:
    """The index of the first character UTF-8 cannot encode, or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def profile_structure_problem(text: str) -> str | None:
    """Why the profile text holds more than a valid profile can (MAX_PROFILE_CONTAINERS),
    checked before parsing; None when it may be parsed."""
    return structure_problem(
        text,
        max_containers=MAX_PROFILE_CONTAINERS,
        max_values=MAX_PROFILE_BYTES,  # bounded by the bytes (see MAX_PROFILE_CONTAINERS)
        holds=f"a valid profile holds in {MAX_PROFILE_BYTES >> 20} MiB",
    )


def read_profile_file(path: str | Path) -> Profile:
    """Read and structure-check a profile file (UTF-8 JSON)."""
    path = Path(path)
    source = str(path)
    try:  # a FIFO, a device, a folder or a file over the cap is refused before any read
        raw = read_limited(path, MAX_PROFILE_BYTES, "a profile")
    except FileReadError as exc:
        raise ProfileError(exc.reason, source=source) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(f"not UTF-8 text (bad byte at offset {exc.start})", source=source) from None
    problem = profile_structure_problem(text)
    if problem is not None:
        raise ProfileError(f"not a profile: {problem}", source=source)
    # id(object) -> (object, key, first value, last value); holding the object keeps its id
    # from being reused by a later one when a repeated key drops it from the data.
    duplicates: dict[int, tuple[dict[str, Any], str, Any, Any]] = {}

    def make_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj and id(obj) not in duplicates:
                duplicates[id(obj)] = (obj, key, obj[key], value)
            obj[key] = value
        return obj

    try:
        data = json.loads(text, object_pairs_hook=make_object)
    except json.JSONDecodeError as exc:
        raise ProfileError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", source=source
        ) from None
    except RecursionError:  # the C scanner recurses per nesting level
        raise ProfileError("not valid JSON: nested too deeply", source=source) from None
    except ValueError:  # an integer longer than Python's int/str conversion limit (4300 digits)
        raise ProfileError("not valid JSON: a number has too many digits", source=source) from None
    if duplicates:
        # json.loads keeps the last of two equal keys; a hand-edited profile whose first
        # "samples" silently loses is refused instead, naming where.
        loc, (_, key, first, last) = _first_duplicate(data, duplicates)
        raise ProfileError(
            f"appears twice in one object (got {_shown(first)}, then {_shown(last)}); keep one",
            source=source,
            field=_field_path((*loc, key)),
        )
    return parse_profile(data, source)


def _first_duplicate(
    data: Any, duplicates: Mapping[int, tuple[dict[str, Any], str, Any, Any]]
) -> tuple[tuple[Any, ...], tuple[dict[str, Any], str, Any, Any]]:
    """The location (as a pydantic-style loc) of the first object, in document order,
    holding a repeated key. Iterative: the data may nest close to the recursion limit."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, dict):
            if id(value) in duplicates:
                return loc, duplicates[id(value)]
            stack.extend(((*loc, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*loc, i), v) for i, v in reversed(list(enumerate(value))))
    raise AssertionError("duplicate key recorded for an object not in the data")


def save_profile(profile: Profile, path: str | Path) -> None:
    """Write a profile atomically (a crash never leaves half a file)."""
    atomic_write_text(Path(path), json.dumps(profile.to_dict(), indent=2) + "\n")


# --- presets -----------------------------------------------------------------------


def preset_dir() -> Path:
    return resource_path("presets")


def preset_names() -> list[str]:
    return sorted(p.stem for p in preset_dir().glob("*.json"))


def load_profile(name_or_path: str | Path) -> Profile:
    """A preset by name, or a profile file by path."""
    candidate = Path(name_or_path)
    if candidate.suffix.lower() == ".json" or _exists(candidate) or "/" in str(name_or_path):
        return read_profile_file(candidate)  # its errors (a name too long too) name the file
    if str(name_or_path) in preset_names():
        return read_profile_file(preset_dir() / f"{name_or_path}.json")
    raise ProfileError(
        f"no such profile file or preset ({did_you_mean(str(name_or_path), preset_names()).lstrip('; ')}"
        f"{' ' if closest(str(name_or_path), preset_names()) else ''}presets: {', '.join(preset_names()) or 'none'})",
        source=str(name_or_path) if len(str(name_or_path)) <= 120 else f"{str(name_or_path)[:80]}...",
    )


def _exists(path: Path) -> bool:
    """Whether anything is at `path`, never raising: `Path.exists()` raised ENAMETOOLONG for
    a name past the system's limit. A name that cannot be looked at is "there", so that
    reading it says why."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return False
    except OSError:
        return True
    return True
