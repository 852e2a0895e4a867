"""A bound on what parsing a JSON document may allocate, checked before parsing it.

A byte bound alone does not bound memory: json.loads makes one Python object per value,
about 75 bytes for an empty array or object and 40 to 80 for a number or a short string,
so the densest documents cost 25 to 40 bytes of memory per byte of file (a 30 MB file of
ten million `[]` took 0.8 GiB to parse, 2.4 GiB with the checks that followed; the
512 MiB a results file may hold would have needed tens of GiB).

So a reader counts first, in a few passes of `str.count` (a fraction of a second for
512 MiB): every `[` and `{` opens a container, every `,` separates two values. Brackets
and commas inside strings are counted too, which only over-counts: the bound can refuse
early, never let more through. Each reader derives its caps from the densest document
the app itself writes (`app.core.results.model`, `app.core.profile.files`), so nothing
the app writes is refused.
"""

from __future__ import annotations


def structure_problem(text: str, *, max_containers: int, max_values: int, holds: str) -> str | None:
    """Why `text` holds more JSON arrays and objects, or more values, than a document of its
    kind can (`holds`: "a results file of this app holds in 512 MiB"), or None."""
    containers = text.count("[") + text.count("{")
    if containers > max_containers:
        return f"{containers:,} arrays and objects, more than the {max_containers:,} {holds}"
    values = text.count(",") + 1
    if values > max_values:
        return f"{values:,} values, more than the {max_values:,} {holds}"
    return None
