"""Message sizes as people write and read them: "1K, 4 KiB, 1M" and "1 KiB"."""

from __future__ import annotations

from app.core.settings.profile import (
    ProfileError,
)

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1000,
    "kib": 1024,
    "m": 1 << 20,
    "mb": 1_000_000,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1_000_000_000,
    "gib": 1 << 30,
}


def parse_size_list(text: str) -> list[int]:
    """ "18, 1K, 4 KiB, 1M" -> [18, 1024, 4096, 1048576]; ProfileError names the bad item.

    K/M/G and KiB/MiB/GiB are binary; kB/MB/GB are decimal.
    """
    import re

    sizes: list[int] = []
    for item in (part.strip() for part in text.replace(";", ",").split(",")):
        if not item:
            continue
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)", item)
        unit = match.group(2).lower() if match else ""
        if match is None or unit not in _SIZE_UNITS:
            raise ProfileError(f"{item!r} is not a size (examples: 18, 1K, 4 KiB, 1M)")
        value = float(match.group(1)) * _SIZE_UNITS[unit]
        if value != int(value):
            raise ProfileError(f"{item!r} is not a whole number of bytes")
        sizes.append(int(value))
    return sizes


def human_size(size: int) -> str:
    """1024 -> "1 KiB", 18 -> "18 B": for labels, exact when the size is a round unit."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"
