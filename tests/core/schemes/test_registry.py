"""The scheme registry: ids, lookup, creation errors, describe(), SchemeInfo metadata."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.errors import BadParameter, RegistryError, UnknownBackend, UnknownScheme
from app.core.schemes import registry
from app.core.schemes.base import ParamSpec, Scheme, SchemeInfo, Security
from app.core.vocab import Family

SPECS = list(registry.all_specs())
SPEC_IDS = [spec.scheme_id for spec in SPECS]


def default_scheme(scheme_id: str) -> Scheme:
    """The spec's defaults in the first backend that accepts them."""
    spec = registry.get_spec(scheme_id)
    errors = []
    for backend in spec.backends:
        try:
            return spec.create(backend)
        except RegistryError as exc:
            errors.append(str(exc))
    raise AssertionError(f"no backend accepts the defaults of {scheme_id}: {errors}")


# ----------------------------------------------------------------- ids and lookup


def test_ids_are_unique_and_stable() -> None:
    ids = registry.scheme_ids()
    assert len(ids) == len(set(ids))
    assert ids == SPEC_IDS
    for expected in (
        "aes-gcm",
        "chacha20-poly1305",
        "ecdh",
        "x25519",
        "x448",
        "elgamal",
        "rsa-oaep",
        "rsa-kem",
        "ecies",
        "ml-kem",
        "x25519-ml-kem-768",
    ):
        assert expected in ids
    # Listing order: the module order of the registry (AEAD first).
    assert ids[:2] == ["aes-gcm", "chacha20-poly1305"]


def test_ids_are_lowercase_slugs() -> None:
    for scheme_id in SPEC_IDS:
        assert scheme_id == scheme_id.lower()
        assert " " not in scheme_id


@pytest.mark.parametrize("scheme_id", SPEC_IDS)
def test_get_spec_returns_the_spec(scheme_id: str) -> None:
    spec = registry.get_spec(scheme_id)
    assert spec.scheme_id == scheme_id
    assert spec.backends and len(set(spec.backends)) == len(spec.backends)
    assert spec.name and spec.description
    assert len({p.name for p in spec.params}) == len(spec.params)
    for param in spec.params:
        assert param.check(param.default) is None, f"{scheme_id}.{param.name} default is invalid"


def test_get_spec_unknown_lists_known_ids() -> None:
    with pytest.raises(UnknownScheme) as caught:
        registry.get_spec("nope")
    message = str(caught.value)
    assert message.startswith("unknown scheme 'nope' (known: ")  # no quotes around it, as KeyError added
    for scheme_id in ("aes-gcm", "ecdh", "rsa-oaep", "ml-kem"):
        assert scheme_id in message


def test_create_unknown_scheme_is_a_registry_error() -> None:
    with pytest.raises(RegistryError, match="nope"):
        registry.create("nope", "cryptography")


def test_by_family_partitions_the_specs() -> None:
    grouped = registry.by_family()
    assert set(grouped) == set(Family)
    listed = [spec.scheme_id for specs in grouped.values() for spec in specs]
    assert sorted(listed) == sorted(SPEC_IDS)
    for family, specs in grouped.items():
        assert all(spec.family is family for spec in specs)
    assert [s.scheme_id for s in grouped[Family.AEAD]] == ["aes-gcm", "chacha20-poly1305"]
    assert {s.scheme_id for s in grouped[Family.HYBRID]} == {"rsa-kem", "ecies", "ml-kem", "x25519-ml-kem-768"}


# ----------------------------------------------------------------- creation


@pytest.mark.parametrize("scheme_id", SPEC_IDS)
def test_defaults_create_a_scheme_of_the_spec_family(scheme_id: str) -> None:
    spec = registry.get_spec(scheme_id)
    scheme = default_scheme(scheme_id)
    info = scheme.info
    assert isinstance(info, SchemeInfo)
    assert info.family is spec.family
    assert info.scheme_id == scheme_id
    assert info.backend in spec.backends
    assert info.label
    assert isinstance(info.security, Security)
    assert info.security.classical_bits > 0
    assert 0 <= info.security.pq_category <= 5


@pytest.mark.parametrize(
    ("scheme_id", "backend", "params", "names"),
    [
        ("aes-gcm", "cryptography", {"nope": 1}, ("'nope'", "key_bits")),
        ("aes-gcm", "cryptography", {"key_bits": 100}, ("'key_bits'", "100")),
        ("aes-gcm", "cryptography", {"key_bits": "128"}, ("'key_bits'", "'128'")),
        ("aes-gcm", "cryptography", {"key_bits": 128.0}, ("'key_bits'", "128.0")),
        ("aes-gcm", "cryptography", {"key_bits": True}, ("'key_bits'", "True")),
        ("chacha20-poly1305", "cryptography", {"key_bits": 256}, ("'key_bits'", "none")),
        ("ecdh", "cryptography", {"curve": "P-999"}, ("'curve'", "'P-999'")),
        ("ecdh", "cryptography", {"kdf": "md5"}, ("'kdf'", "'md5'")),
        ("ecdh", "pycryptodome", {"curve": "brainpoolP384r1"}, ("'brainpoolP384r1'", "'pycryptodome'")),
        ("rsa-oaep", "cryptography", {"bits": 512}, ("'bits'", "512")),
        ("rsa-oaep", "cryptography", {"chunked": "yes"}, ("'chunked'", "'yes'")),
        ("elgamal", "python", {"bits": 8192}, ("'bits'", "8192")),
        ("ml-kem", "cryptography", {"level": 512}, ("'level'", "512")),
        ("ecies", "pycryptodome", {"curve": "secp256k1"}, ("secp256k1", "'pycryptodome'")),
        ("aes-gcm", "tinyec", {}, ("backend", "'tinyec'")),
        ("elgamal", "cryptography", {}, ("backend", "'cryptography'", "python")),
        ("ml-kem", "pycryptodome", {}, ("backend", "'pycryptodome'")),
    ],
)
def test_create_errors_name_the_parameter_and_value(
    scheme_id: str, backend: str, params: dict[str, Any], names: tuple[str, ...]
) -> None:
    expected = BadParameter if params else UnknownBackend
    with pytest.raises(expected) as caught:
        registry.create(scheme_id, backend, params)
    message = str(caught.value)
    for name in names:
        assert name in message, f"{name!r} missing from {message!r}"


def test_create_accepts_aliases_and_explicit_defaults() -> None:
    alias = registry.create("ecdh", "cryptography", {"curve": "secp256r1"})
    canonical = registry.create("ecdh", "cryptography", {"curve": "P-256", "kdf": "hkdf-sha256"})
    assert alias.info.label == canonical.info.label
    assert registry.create("aes-gcm", "pycryptodome", None).info.params == {"key_bits": 256}


def test_param_spec_check() -> None:
    choice = ParamSpec("size", 2, (1, 2, 3))
    assert choice.check(3) is None
    assert "must be one of 1, 2, 3" == choice.check(4)
    assert choice.check(True) is not None  # bool is not an int choice
    ranged = ParamSpec("count", 5, minimum=1, maximum=10)
    assert ranged.check(1) is None and ranged.check(10) is None
    assert ranged.check(0) == "must be at least 1"
    assert ranged.check(11) == "must be at most 10"
    assert ranged.check("5") == "must be an integer"
    assert ranged.check(False) == "must be an integer"
    flag = ParamSpec("flag", False)
    assert flag.check(True) is None
    assert flag.check(1) == "must be true or false"


# ----------------------------------------------------------------- describe()


@pytest.mark.parametrize("scheme_id", SPEC_IDS)
def test_describe_is_json_and_complete(scheme_id: str) -> None:
    spec = registry.get_spec(scheme_id)
    described = registry.describe(spec)
    assert json.loads(json.dumps(described)) == described
    assert described["id"] == scheme_id
    assert described["family"] == spec.family.value
    assert described["backends"] == list(spec.backends)
    assert [p["name"] for p in described["params"]] == [p.name for p in spec.params]
    assert described["variants"], f"{scheme_id} lists no variant"
    labels = [v["label"] for v in described["variants"]]
    assert len(labels) == len(set(labels))
    for variant in described["variants"]:
        assert variant["backend_used_for_metadata"] in spec.backends
        assert isinstance(variant["classical_bits"], int) and variant["classical_bits"] > 0
        assert isinstance(variant["insecure"], bool)


def _variants(scheme_id: str) -> list[tuple[Any, ...]]:
    described = registry.describe(registry.get_spec(scheme_id))
    return [(v["label"], v["classical_bits"], v["pq_category"], v["insecure"]) for v in described["variants"]]


def test_describe_rsa_oaep_security_per_size() -> None:
    described = registry.describe(registry.get_spec("rsa-oaep"))
    assert [v["params"]["bits"] for v in described["variants"]] == [1024, 2048, 3072, 4096]
    assert _variants("rsa-oaep") == [
        ("RSA-OAEP-1024", 80, 0, True),
        ("RSA-OAEP-2048", 112, 0, False),
        ("RSA-OAEP-3072", 128, 0, False),
        ("RSA-OAEP-4096", 152, 0, False),
    ]


def test_describe_aes_gcm_and_ml_kem() -> None:
    assert _variants("aes-gcm") == [
        ("AES-128-GCM", 128, 1, False),
        ("AES-192-GCM", 192, 3, False),
        ("AES-256-GCM", 256, 5, False),
    ]
    assert _variants("ml-kem") == [
        ("ML-KEM-768 + AES-256-GCM", 192, 3, False),
        ("ML-KEM-1024 + AES-256-GCM", 256, 5, False),
    ]
    assert _variants("x25519") == [("X25519 + HKDF-SHA256 + AES-256-GCM", 128, 0, False)]


def test_describe_ecdh_lists_each_curve_once() -> None:
    described = registry.describe(registry.get_spec("ecdh"))
    curves = [v["params"]["curve"] for v in described["variants"]]
    assert curves == ["P-256", "P-384", "P-521", "brainpoolP256r1", "brainpoolP384r1"]  # aliases folded
    bits = {v["params"]["curve"]: v["classical_bits"] for v in described["variants"]}
    assert bits == {"P-256": 128, "P-384": 192, "P-521": 256, "brainpoolP256r1": 128, "brainpoolP384r1": 192}


def test_describe_ecies_uses_a_backend_that_has_the_curve() -> None:
    described = registry.describe(registry.get_spec("ecies"))
    by_curve = {v["params"]["curve"]: v["backend_used_for_metadata"] for v in described["variants"]}
    assert set(by_curve) == {"secp256k1", "P-256", "X25519"}
    assert by_curve["secp256k1"] == "cryptography"


def test_describe_elgamal_marks_small_groups_insecure() -> None:
    insecure = {v["params"]["bits"]: v["insecure"] for v in registry.describe(registry.get_spec("elgamal"))["variants"]}
    assert insecure == {128: True, 256: True, 512: True, 1024: True, 2048: False, 3072: False, 4096: False}


# ----------------------------------------------------------------- security levels


@pytest.mark.parametrize(
    ("scheme_id", "backend", "params", "bits", "category"),
    [
        ("aes-gcm", "cryptography", {"key_bits": 128}, 128, 1),
        ("aes-gcm", "pycryptodome", {"key_bits": 192}, 192, 3),
        ("aes-gcm", "pycryptodome", {"key_bits": 256}, 256, 5),
        ("chacha20-poly1305", "cryptography", {}, 256, 5),
        ("ml-kem", "cryptography", {"level": 768}, 192, 3),
        ("ml-kem", "cryptography", {"level": 1024}, 256, 5),
        ("x25519-ml-kem-768", "cryptography", {}, 192, 3),
        ("x25519", "pycryptodome", {}, 128, 0),
        ("x448", "cryptography", {}, 224, 0),
        ("ecdh", "tinyec", {"curve": "brainpoolP384r1"}, 192, 0),
        ("ecdh", "cryptography", {"curve": "brainpoolP256r1"}, 128, 0),
        ("ecdh", "pycryptodome", {"curve": "P-521"}, 256, 0),
        ("ecies", "cryptography", {"curve": "secp256k1"}, 128, 0),
        ("rsa-oaep", "pycryptodome", {"bits": 1024}, 80, 0),
        ("rsa-kem", "cryptography", {"bits": 4096}, 152, 0),
        ("elgamal", "python", {"bits": 2048}, 112, 0),
    ],
)
def test_security_levels(scheme_id: str, backend: str, params: dict[str, Any], bits: int, category: int) -> None:
    security = registry.create(scheme_id, backend, params).info.security
    assert security.classical_bits == bits
    assert security.pq_category == category


def test_insecure_flags() -> None:
    assert registry.create("rsa-oaep", "cryptography", {"bits": 1024}).info.insecure is True
    assert registry.create("rsa-oaep", "cryptography", {"bits": 2048}).info.insecure is False
    assert registry.create("elgamal", "python", {"bits": 512}).info.insecure is True
    assert registry.create("aes-gcm", "cryptography", {"key_bits": 128}).info.insecure is False
