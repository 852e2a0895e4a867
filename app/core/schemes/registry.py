"""The scheme registry: every algorithm the app knows, by id.

Profiles, the remote server and the GUI name schemes only through this registry,
so a job description is data (an id, a backend, parameters), never code.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from app.core.errors import RegistryError, UnknownScheme
from app.core.schemes.base import Scheme, SchemeSpec
from app.core.vocab import Exchange, Family

#: One module per family group, each exposing SPECS. Order = listing order.
MODULES = (
    "app.core.schemes.symmetric",
    "app.core.schemes.key_agreement",
    "app.core.schemes.pke",
    "app.core.schemes.hybrid",
    "app.core.schemes.signatures",
    "app.core.schemes.digests",
    "app.core.schemes.tls13",
)


@cache
def _registry() -> dict[str, SchemeSpec]:
    specs: dict[str, SchemeSpec] = {}
    for module_name in MODULES:
        for spec in importlib.import_module(module_name).SPECS:
            if spec.scheme_id in specs:
                raise RuntimeError(f"scheme id {spec.scheme_id!r} registered twice")
            specs[spec.scheme_id] = spec
    return specs


def all_specs() -> Iterator[SchemeSpec]:
    return iter(_registry().values())


def scheme_ids() -> list[str]:
    return list(_registry())


def backend_names() -> list[str]:
    """Every backend some scheme runs on, in first-seen order."""
    return list(dict.fromkeys(backend for spec in _registry().values() for backend in spec.backends))


def get_spec(scheme_id: str) -> SchemeSpec:
    """The spec for `scheme_id`; UnknownScheme, listing the known ids, when unknown."""
    try:
        return _registry()[scheme_id]
    except KeyError:
        raise UnknownScheme(f"unknown scheme {scheme_id!r} (known: {', '.join(_registry())})") from None


def create(
    scheme_id: str, backend: str, params: Mapping[str, Any] | None = None, exchange: Exchange | None = None
) -> Scheme:
    """Build a concrete scheme, a key-establishing one in `exchange`'s pattern (None: the
    default); a RegistryError (UnknownScheme, UnknownBackend, BadParameter) explains a bad
    id, backend, parameter or an exchange for a scheme that establishes no key."""
    return get_spec(scheme_id).create(backend, params, exchange)


def by_family() -> dict[Family, list[SchemeSpec]]:
    grouped: dict[Family, list[SchemeSpec]] = {family: [] for family in Family}
    for spec in all_specs():
        grouped[spec.family].append(spec)
    return grouped


_VARIANT_AXES = ("key_bits", "bits", "curve", "level", "digest")


def describe(spec: SchemeSpec) -> dict[str, Any]:
    """JSON-ready description for `cryptobench list --json` and the GUI's scheme tree.

    Security bits are listed per parameter choice of the first parameter with
    choices (e.g. per key size), measured from the scheme's own metadata.
    """
    variants: list[dict[str, Any]] = []
    backend = spec.backends[0]
    # The axis that changes the security level (size, curve, level), not e.g. the KDF.
    choice_param = next((p for p in spec.params if p.name in _VARIANT_AXES and p.choices), None)
    values = choice_param.choices if choice_param else (None,)
    for value in values:
        params = {choice_param.name: value} if choice_param else {}
        for candidate in spec.backends:
            try:
                scheme = spec.create(candidate, params)
                backend = candidate
                break
            except RegistryError:  # this value is not available in this backend
                continue
        else:
            continue
        info = scheme.info
        if any(v["label"] == info.label for v in variants):
            continue  # an alias of a value already listed (secp256r1 = P-256)
        variants.append(
            {
                "params": dict(info.params.items()),
                "label": info.label,
                "backend_used_for_metadata": backend,
                "classical_bits": info.security.classical_bits,
                "pq_category": info.security.pq_category,
                "insecure": info.insecure,
            }
        )
    return {
        "id": spec.scheme_id,
        "name": spec.name,
        "family": spec.family.value,
        "backends": list(spec.backends),
        "description": spec.description,
        "params": [
            {
                "name": p.name,
                "default": p.default,
                "choices": list(p.choices),
                "minimum": p.minimum,
                "maximum": p.maximum,
                "help": p.help,
            }
            for p in spec.params
        ],
        "variants": variants,
    }
