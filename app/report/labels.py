"""Short, distinct names for jobs, and the key that maps them back to the full names.

A full job label ("ECDH brainpoolP256r1 + SHA-256 + AES-256-GCM [tinyec] (Nagle on)")
is too long for a chart row and makes a summary sentence hard to read. Charts and the
summary use a short label instead: the scheme without its AEAD tail and without its
backend, the backend put back only where two schemes would otherwise read the same.
The report's key table lists every short label beside the full one, so nothing that
identifies data is lost: a chart row is the short label, the size and (for sessions)
the mode, never a name cut off with "…".
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from app.core.results.model import JobResult
from app.core.vocab import Mode
from app.report.job_figures import size_text
from app.report.model import Table

_BACKEND = re.compile(r" \[([^\]]+)\]")
#: The symmetric part of hybrid and key-agreement schemes: the same in every one of them.
_AEAD_TAILS = (" + AES-256-GCM", " + AES-128-GCM", " + ChaCha20-Poly1305")


def _base(label: str) -> str:
    name = _BACKEND.sub("", label)
    for tail in _AEAD_TAILS:
        # At the end, or before what follows it: a variant "(Nagle on)", a link " over LTE".
        if name.endswith(tail) or f"{tail} (" in name or f"{tail} over " in name:
            name = name.replace(tail, "", 1)
            break
    return name.strip()


def _backend(label: str) -> str | None:
    match = _BACKEND.search(label)
    return match.group(1) if match else None


class Labels:
    """Short labels for the jobs of one run (and its baseline)."""

    def __init__(self, jobs: Iterable[JobResult]) -> None:
        full = list(dict.fromkeys(job.label for job in jobs))
        groups: dict[str, list[str]] = defaultdict(list)
        for label in full:
            groups[_base(label)].append(label)
        self.short: dict[str, str] = {}
        for base, labels in groups.items():
            for label in labels:
                backend = _backend(label)
                name = base if len(labels) == 1 or backend is None else f"{base} [{backend}]"
                self.short[label] = name
        # Still the same (two labels differ only in what the base drops): keep them whole.
        seen: dict[str, list[str]] = defaultdict(list)
        for label, name in self.short.items():
            seen[name].append(label)
        for labels in seen.values():
            if len(labels) > 1:
                for label in labels:
                    self.short[label] = label

    def name(self, job: JobResult) -> str:
        """The short scheme name, for sentences: "ECDH brainpoolP256r1 + SHA-256 [tinyec]"."""
        return self.short.get(job.label, job.label)

    def row(self, job: JobResult, *, size: bool = True) -> str:
        """A chart row: short name, size, and the mode of a session job."""
        parts = [self.name(job)]
        if size:
            parts.append(size_text(job))
        if job.mode != Mode.OPERATIONS:
            parts.append(job.mode)
        return " · ".join(parts)

    def in_text(self, text: str) -> str:
        """`text` with every full label replaced by its short one (longest first, so a label
        inside a longer one is not replaced on its own)."""
        changed = {full: short for full, short in self.short.items() if full != short}
        if not changed:
            return text
        pattern = re.compile("|".join(re.escape(f) for f in sorted(changed, key=len, reverse=True)))
        return pattern.sub(lambda m: changed[m.group(0)], text)

    def key_table(self) -> Table | None:
        """Short label beside full label, for every label that was shortened."""
        rows = [[short, full] for full, short in self.short.items() if short != full]
        if not rows:
            return None
        return Table(
            ["Short label", "Full job name (scheme [backend])"],
            rows,
            caption="Key to the short labels: charts and the sentences above use them; tables give the full names.",
            widths=[1.6, 2.4],
            align=["left", "left"],
        )
