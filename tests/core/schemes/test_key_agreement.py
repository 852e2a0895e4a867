"""Key agreement schemes (ECDH, X25519, X448) and the DhGroup layer beneath them."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import os
import random
import warnings
from functools import cache
from typing import Any

import pytest

from app.core.errors import BadParameter
from app.core.schemes import registry
from app.core.schemes.base import AuthenticationError, PayloadFormatError, Receiver, Scheme, Sender, flip_bit
from app.core.schemes.dh import (
    CURVES,
    KDF_INFO,
    KDFS,
    MONTGOMERY,
    CryptographyEc,
    CryptographyMontgomery,
    DhGroup,
    PycryptodomeEc,
    PycryptodomeMontgomery,
    TinyecEc,
    _reject_all_zero,
    canonical_curve,
    derive_key,
    dh_group,
    group_backends,
    group_security_bits,
)
from app.core.schemes.key_agreement import SPECS
from app.core.schemes.symmetric import AEAD_OVERHEAD, NONCE_LEN, AeadKey
from app.core.vocab import Family

#: The key pairs and sessions below are made once per module (key generation is the slow
#: part); under `make test` the module's tests share one worker, or each worker made them.
pytestmark = pytest.mark.xdist_group("scheme-sessions-key-agreement")

REJECTED = (AuthenticationError, PayloadFormatError)
MESSAGE_SIZES = (0, 1, 18, 1000)
ECDH_CURVES = ("P-256", "P-384", "P-521", "brainpoolP256r1", "brainpoolP384r1")
WEIERSTRASS_BACKENDS = ("cryptography", "pycryptodome", "tinyec")
MONTGOMERY_BACKENDS = ("cryptography", "pycryptodome")

#: Field primes, written out from the standards (SEC 2 / FIPS 186-4 / RFC 5639).
FIELD_PRIME = {
    "P-256": 2**256 - 2**224 + 2**192 + 2**96 - 1,
    "P-384": 2**384 - 2**128 - 2**96 + 2**32 - 1,
    "P-521": 2**521 - 1,
    "brainpoolP256r1": 0xA9FB57DBA1EEA9BC3E660A909D838D726E3BF623D52620282013481D1F6E5377,
    "brainpoolP384r1": int(
        "8CB91E82A3386D280F5D6F7E50E641DF152F7109ED5456B412B1DA197FB71123ACD3A729901D1A71874700133107EC53", 16
    ),
    "secp256k1": 2**256 - 2**32 - 977,
}
P25519 = 2**255 - 19
P448 = 2**448 - 2**224 - 1

#: The only (scheme, backend, params) combinations the specs refuse: pycryptodome
#: has no brainpool curves (dh.CURVES lists pycryptodome_name None for them).
DOCUMENTED_UNAVAILABLE = {
    ("ecdh", "pycryptodome", (("curve", curve), ("kdf", kdf)))
    for curve in ("brainpoolP256r1", "brainpoolP384r1")
    for kdf in KDFS
}


def enumerate_combos() -> tuple[list[tuple[str, str, dict[str, Any]]], set[tuple[str, str, tuple]]]:
    """Every combination of choices per backend: (allowed list, refused set)."""
    allowed, refused = [], set()
    for spec in SPECS:
        axes = [[(p.name, c) for c in p.choices] for p in spec.params if p.choices]
        for backend in spec.backends:
            for values in itertools.product(*axes):
                params = dict(values)
                try:
                    spec.resolve_params(backend, params)  # validation only, no keys
                except BadParameter:
                    refused.add((spec.scheme_id, backend, tuple(sorted(params.items()))))
                else:
                    allowed.append((spec.scheme_id, backend, params))
    return allowed, refused


COMBOS, REFUSED = enumerate_combos()
COMBO_IDS = [f"{sid}-{backend}-{'-'.join(str(v) for v in params.values())}" for sid, backend, params in COMBOS]


def connect(scheme: Scheme, sender_scheme: Scheme | None = None) -> tuple[Sender, Receiver, bytes, bytes]:
    sender, receiver = (sender_scheme or scheme).new_sender(), scheme.new_receiver()
    public = receiver.setup()
    message = sender.handshake(public)
    receiver.handshake(message)
    return sender, receiver, public, message


@cache
def session(scheme_id: str, backend: str, params_items: tuple) -> tuple[Scheme, Sender, Receiver, bytes, bytes]:
    scheme = registry.create(scheme_id, backend, dict(params_items))
    return (scheme, *connect(scheme))


def combo_session(
    scheme_id: str, backend: str, params: dict[str, Any]
) -> tuple[Scheme, Sender, Receiver, bytes, bytes]:
    return session(scheme_id, backend, tuple(sorted(params.items())))


@cache
def group(name: str, backend: str) -> DhGroup:
    return dh_group(name, backend)


def reference_hkdf(hash_name: str, ikm: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 with an empty salt, written out with the standard library's HMAC."""
    prk = hmac.new(bytes(hashlib.new(hash_name).digest_size), ikm, hash_name).digest()
    okm, block, counter = b"", b"", 1
    while len(okm) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hash_name).digest()
        okm += block
        counter += 1
    return okm[:length]


# ----------------------------------------------------------------- coverage of the specs


def test_refused_combinations_are_exactly_the_documented_ones() -> None:
    assert REFUSED == DOCUMENTED_UNAVAILABLE
    # 7 curve names x 3 KDFs x 3 backends, less the 6 refused; X25519/X448 in 2 backends.
    assert len(COMBOS) == 7 * 3 * 3 - 6 + 2 * 3 * 2


@pytest.mark.parametrize(("scheme_id", "backend", "params_items"), sorted(DOCUMENTED_UNAVAILABLE))
def test_refused_combination_raises_value_error_naming_it(scheme_id: str, backend: str, params_items: tuple) -> None:
    params = dict(params_items)
    with pytest.raises(BadParameter) as caught:
        registry.create(scheme_id, backend, params)
    assert params["curve"] in str(caught.value)
    assert backend in str(caught.value)
    with pytest.raises(ValueError, match="is not available in backend"):
        dh_group(params["curve"], backend)


def test_ecdh_curve_choices() -> None:
    curve = registry.get_spec("ecdh").param("curve")
    assert set(curve.choices) == set(ECDH_CURVES) | {"secp256r1", "secp384r1"}
    assert curve.default == "P-256"
    assert set(registry.get_spec("ecdh").param("kdf").choices) == {"sha256", "hkdf-sha256", "hkdf-sha384"}


def test_group_backends() -> None:
    assert group_backends("P-256") == ("cryptography", "pycryptodome", "tinyec")
    assert group_backends("secp384r1") == ("cryptography", "pycryptodome", "tinyec")
    assert group_backends("brainpoolP256r1") == ("cryptography", "tinyec")
    assert group_backends("secp256k1") == ("cryptography",)
    assert group_backends("X25519") == ("cryptography", "pycryptodome")
    assert canonical_curve("prime256v1") == "P-256"
    assert canonical_curve("brainpoolP384r1") == "brainpoolP384r1"


@pytest.mark.parametrize(
    ("name", "backend", "cls"),
    [
        ("P-256", "cryptography", CryptographyEc),
        ("P-384", "pycryptodome", PycryptodomeEc),
        ("brainpoolP256r1", "tinyec", TinyecEc),
        ("secp521r1", "tinyec", TinyecEc),
        ("X25519", "cryptography", CryptographyMontgomery),
        ("X448", "pycryptodome", PycryptodomeMontgomery),
    ],
)
def test_dh_group_picks_the_implementation(name: str, backend: str, cls: type) -> None:
    g = dh_group(name, backend)
    assert isinstance(g, cls)
    assert g.name == canonical_curve(name)


@pytest.mark.parametrize(
    ("name", "backend"),
    [("X25519", "tinyec"), ("secp256k1", "pycryptodome"), ("P-256", "openssl"), ("nope", "cryptography")],
)
def test_dh_group_unavailable(name: str, backend: str) -> None:
    with pytest.raises(ValueError, match="not available"):
        dh_group(name, backend)


# ----------------------------------------------------------------- round trips


@pytest.mark.parametrize("size", MESSAGE_SIZES)
@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_round_trip(scheme_id: str, backend: str, params: dict[str, Any], size: int) -> None:
    scheme, sender, receiver, public, message_ = combo_session(scheme_id, backend, params)
    assert len(public) == len(message_) == scheme.group.public_len
    message = os.urandom(size)
    payload = b"".join(sender.seal(message))
    assert len(payload) == size + AEAD_OVERHEAD
    assert scheme.payload_overhead(size) >= len(payload) - size
    assert bytes(receiver.open(payload)) == message
    assert bytes(receiver.open(memoryview(payload))) == message


@pytest.mark.parametrize("size", (0, 1000))
@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_every_tamper_spot_is_rejected(scheme_id: str, backend: str, params: dict[str, Any], size: int) -> None:
    scheme, sender, receiver, _, _ = combo_session(scheme_id, backend, params)
    assert scheme.info.authenticated is True
    message = os.urandom(size)
    payload = b"".join(sender.seal(message))
    spots = scheme.tamper_spots(len(payload), size)
    assert len(spots) == (3 if size else 2)
    for spot in spots:
        with pytest.raises(REJECTED):
            receiver.open(flip_bit(payload, spot.offset))
    for bad in (b"", payload[: AEAD_OVERHEAD - 1]):
        with pytest.raises(PayloadFormatError):
            receiver.open(bad)
    assert receiver.open(payload) == message


@pytest.mark.parametrize(
    ("scheme_id", "backend", "kdf"),
    [
        ("ecdh", "cryptography", "hkdf-sha256"),
        ("ecdh", "tinyec", "sha256"),
        ("x25519", "pycryptodome", "hkdf-sha384"),
        ("x448", "cryptography", "sha256"),
    ],
)
def test_thousand_seals_use_thousand_distinct_nonces(scheme_id: str, backend: str, kdf: str) -> None:
    scheme = registry.create(scheme_id, backend, {"kdf": kdf})
    sender, _, _, _ = connect(scheme)
    nonces = {b"".join(sender.seal(b"same"))[:NONCE_LEN] for _ in range(1000)}
    assert len(nonces) == 1000


@pytest.mark.parametrize(
    ("scheme_id", "backend"),
    [
        ("ecdh", "cryptography"),
        ("ecdh", "pycryptodome"),
        ("ecdh", "tinyec"),
        ("x25519", "cryptography"),
        ("x448", "pycryptodome"),
    ],
)
def test_each_session_has_a_fresh_ephemeral_key_and_session_key(scheme_id: str, backend: str) -> None:
    scheme = registry.create(scheme_id, backend)
    receiver = scheme.new_receiver()
    public = receiver.setup()
    first, second = scheme.new_sender(), scheme.new_sender()
    assert first.handshake(public) != second.handshake(public)
    # A payload sealed under one session's key does not open under the other's.
    receiver.handshake(second.handshake(public))
    with pytest.raises(AuthenticationError):
        receiver.open(b"".join(first.seal(b"hello")))


def test_use_before_handshake_is_an_error() -> None:
    scheme = registry.create("x25519", "cryptography")
    with pytest.raises(RuntimeError):
        scheme.new_sender().seal(b"x")
    receiver = scheme.new_receiver()
    receiver.setup()
    with pytest.raises(RuntimeError):
        receiver.open(bytes(40))


# ----------------------------------------------------------------- cross-backend interop


def _shared_pairs() -> list[tuple[str, str, str]]:
    pairs = []
    for name in (*ECDH_CURVES, *MONTGOMERY):
        for a, b in itertools.permutations(group_backends(name), 2):
            pairs.append((name, a, b))
    return pairs


@pytest.mark.parametrize(("name", "receiver_backend", "sender_backend"), _shared_pairs())
def test_backends_derive_the_same_shared_secret(name: str, receiver_backend: str, sender_backend: str) -> None:
    receiving, sending = group(name, receiver_backend), group(name, sender_backend)
    assert receiving.public_len == sending.public_len
    static, static_public = receiving.generate()
    ephemeral, ephemeral_public = sending.generate()
    shared = sending.exchange(ephemeral, static_public)
    assert receiving.exchange(static, ephemeral_public) == shared
    size = CURVES[name].field_bytes if name in CURVES else MONTGOMERY[name][1]
    assert len(shared) == size
    assert any(shared)


@pytest.mark.parametrize("kdf", KDFS)
@pytest.mark.parametrize(
    ("scheme_id", "curve", "receiver_backend", "sender_backend"),
    [
        ("ecdh", "P-256", "cryptography", "pycryptodome"),
        ("ecdh", "P-256", "cryptography", "tinyec"),
        ("ecdh", "P-384", "tinyec", "cryptography"),
        ("ecdh", "brainpoolP256r1", "cryptography", "tinyec"),
        ("ecdh", "P-521", "pycryptodome", "tinyec"),
        ("x25519", None, "cryptography", "pycryptodome"),
        ("x448", None, "pycryptodome", "cryptography"),
    ],
)
def test_sessions_interoperate_across_backends(
    scheme_id: str, curve: str | None, receiver_backend: str, sender_backend: str, kdf: str
) -> None:
    params: dict[str, Any] = {"kdf": kdf} | ({"curve": curve} if curve else {})
    receiving = registry.create(scheme_id, receiver_backend, params)
    sending = registry.create(scheme_id, sender_backend, params)
    sender, receiver, _, _ = connect(receiving, sender_scheme=sending)
    message = os.urandom(300)
    assert receiver.open(b"".join(sender.seal(message))) == message


# ----------------------------------------------------------------- KDF


def test_sha256_kdf_is_plain_sha256() -> None:
    shared = os.urandom(48)
    for backend in WEIERSTRASS_BACKENDS:
        assert derive_key("sha256", shared, backend) == hashlib.sha256(shared).digest()
    with pytest.raises(ValueError, match="gives exactly 32 bytes"):
        derive_key("sha256", shared, "cryptography", length=16)


@pytest.mark.parametrize("kdf", ("hkdf-sha256", "hkdf-sha384"))
@pytest.mark.parametrize("length", (16, 32, 64))
def test_hkdf_is_identical_in_every_backend_and_matches_rfc5869(kdf: str, length: int) -> None:
    shared = os.urandom(32)
    keys = {derive_key(kdf, shared, backend, length=length) for backend in WEIERSTRASS_BACKENDS}
    assert len(keys) == 1
    (key,) = keys
    assert len(key) == length
    assert key == reference_hkdf(kdf.removeprefix("hkdf-"), shared, KDF_INFO, length)
    # The info string and the digest matter.
    assert derive_key(kdf, shared, "cryptography", length=length, info=b"other") != key
    other = "hkdf-sha384" if kdf == "hkdf-sha256" else "hkdf-sha256"
    assert derive_key(other, shared, "pycryptodome", length=length) != key


def test_kdfs_give_distinct_keys() -> None:
    shared = os.urandom(32)
    assert len({derive_key(kdf, shared, "cryptography") for kdf in KDFS}) == 3


@pytest.mark.parametrize("kdf", KDFS)
@pytest.mark.parametrize("backend", WEIERSTRASS_BACKENDS)
def test_session_key_is_the_kdf_of_the_shared_secret(kdf: str, backend: str) -> None:
    scheme = registry.create("ecdh", backend, {"curve": "P-256", "kdf": kdf})
    receiver = scheme.new_receiver()
    public = receiver.setup()
    # Play the sender by hand with the cryptography group to get the shared secret.
    independent = group("P-256", "cryptography")
    ephemeral, ephemeral_public = independent.generate()
    shared = independent.exchange(ephemeral, public)
    receiver.handshake(ephemeral_public)
    key = (
        hashlib.sha256(shared).digest()
        if kdf == "sha256"
        else reference_hkdf(kdf.removeprefix("hkdf-"), shared, KDF_INFO, 32)
    )
    payload = b"".join(AeadKey("aes-gcm", "cryptography", key).seal(b"by hand"))
    assert receiver.open(payload) == b"by hand"


# ----------------------------------------------------------------- public-key validation


def _weierstrass_cases(name: str, public: bytes) -> dict[str, bytes]:
    p = FIELD_PRIME[name]
    n = CURVES[name].field_bytes
    x = int.from_bytes(public[1 : 1 + n], "big")
    y = int.from_bytes(public[1 + n :], "big")

    def point(px: int, py: int, prefix: bytes = b"\x04") -> bytes:
        return prefix + px.to_bytes(n, "big") + py.to_bytes(n, "big")

    garbage = random.Random(f"garbage {name}").randbytes(len(public))
    return {
        "not on the curve (y + 1)": point(x, (y + 1) % p),
        "not on the curve (x + 1)": point((x + 1) % p, y),
        "x = p": point(p, y),
        "y = p": point(x, p),
        "x + p (same point mod p if it fit)": point(x + p, y) if x + p < 256**n else point(p + 1, y),
        "coordinates all ones": b"\x04" + b"\xff" * (2 * n),
        "identity encoding 04 00..00": point(0, 0),
        "all-zero bytes": bytes(len(public)),
        "single zero byte (SEC1 infinity)": b"\x00",
        "compressed 02 || x": b"\x02" + public[1 : 1 + n],
        "compressed 03 || x": b"\x03" + public[1 : 1 + n],
        "prefix 02 on an uncompressed point": b"\x02" + public[1:],
        "hybrid prefix 06": b"\x06" + public[1:],
        "hybrid prefix 07": b"\x07" + public[1:],
        "one byte short": public[:-1],
        "one byte long": public + b"\x00",
        "empty": b"",
        "random garbage": garbage,
        "random garbage with 04 prefix": b"\x04" + garbage[1:],
    }


def _weierstrass_groups() -> list[tuple[str, str]]:
    return [(name, backend) for name in (*ECDH_CURVES, "secp256k1") for backend in group_backends(name)]


@pytest.mark.parametrize(("name", "backend"), _weierstrass_groups())
def test_weierstrass_group_rejects_invalid_points(name: str, backend: str) -> None:
    g = group(name, backend)
    private, public = g.generate()
    assert len(public) == g.public_len == 1 + 2 * CURVES[name].field_bytes
    for label, bad in _weierstrass_cases(name, public).items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(PayloadFormatError):
                g.exchange(private, bad)
        assert caught == [], f"{label}: warnings {[str(w.message) for w in caught]}"
    # The valid point is still accepted (the cases above are rejected for their flaw).
    other_private, other_public = g.generate()
    assert g.exchange(private, other_public) == g.exchange(other_private, public)


#: Cases also sent to a sender's handshake (the receiver's handshake gets them all).
SENDER_CASES = (
    "not on the curve (y + 1)",
    "x = p",
    "identity encoding 04 00..00",
    "compressed 02 || x",
    "random garbage",
)


@pytest.mark.parametrize(("name", "backend"), [(c, b) for c in ECDH_CURVES for b in group_backends(c)])
def test_ecdh_handshakes_reject_invalid_points(name: str, backend: str) -> None:
    scheme = registry.create("ecdh", backend, {"curve": name})
    receiver = scheme.new_receiver()
    public = receiver.setup()
    for label, bad in _weierstrass_cases(name, public).items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(PayloadFormatError):
                receiver.handshake(bad)
            if label in SENDER_CASES:  # each sender handshake costs a key generation
                with pytest.raises(PayloadFormatError):
                    scheme.new_sender().handshake(bad)
        assert caught == [], f"{label}: warnings {[str(w.message) for w in caught]}"
    # The receiver is still usable after the rejected handshakes.
    sender = scheme.new_sender()
    receiver.handshake(sender.handshake(public))
    assert receiver.open(b"".join(sender.seal(b"after"))) == b"after"


def test_tinyec_point_constructor_would_warn_without_validation() -> None:
    # The control for the no-warning assertions above: tinyec's own Point warns
    # (and carries on) for a point off the curve, so validating first matters.
    from tinyec import ec
    from tinyec import registry as tinyec_registry

    curve = tinyec_registry.get_curve("secp256r1")
    with pytest.warns(UserWarning, match="not on curve"):
        ec.Point(curve, curve.g.x, curve.g.y + 1)


@pytest.mark.parametrize("name", ("P-256", "brainpoolP384r1"))
def test_tinyec_validate_returns_the_point(name: str) -> None:
    g = group(name, "tinyec")
    assert isinstance(g, TinyecEc)
    _, public = g.generate()
    point = g.validate(public)
    n = CURVES[name].field_bytes
    assert point.x == int.from_bytes(public[1 : 1 + n], "big")
    assert point.y == int.from_bytes(public[1 + n :], "big")
    assert point.on_curve


def test_field_primes_match_tinyec() -> None:
    # The test's own constants against the library's, so the cases above are right.
    from tinyec import registry as tinyec_registry

    for name in ECDH_CURVES:
        assert tinyec_registry.get_curve(CURVES[name].tinyec_name).field.p == FIELD_PRIME[name]


def _montgomery_cases(name: str, public: bytes) -> dict[str, bytes]:
    size = MONTGOMERY[name][1]

    def u(value: int) -> bytes:
        return value.to_bytes(size, "little")

    cases = {
        "all zero (u = 0)": u(0),
        "u = 1": u(1),
        "one byte short": public[:-1],
        "one byte long": public + b"\x00",
        "empty": b"",
    }
    if name == "X25519":
        cases |= {
            # RFC 7748 / cr.yp.to/ecdh.html#validate: the points of small order.
            "order 8 (e0eb..)": bytes.fromhex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
            "order 8 (5f9c..)": bytes.fromhex("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
            "u = p - 1 (order 2)": u(P25519 - 1),
            "u = p (= 0)": u(P25519),
            "u = p + 1 (= 1)": u(P25519 + 1),
            "u = 1 with the masked top bit set": u(1 | 1 << 255),
            "u = 0 with the masked top bit set": u(1 << 255),
        }
    else:
        cases |= {"u = p - 1 (order 2)": u(P448 - 1), "u = p (= 0)": u(P448), "u = p + 1 (= 1)": u(P448 + 1)}
    return cases


@pytest.mark.parametrize("backend", MONTGOMERY_BACKENDS)
@pytest.mark.parametrize("name", MONTGOMERY)
def test_montgomery_group_rejects_low_order_points(name: str, backend: str) -> None:
    g = group(name, backend)
    private, public = g.generate()
    assert len(public) == g.public_len == MONTGOMERY[name][1]
    for _label, bad in _montgomery_cases(name, public).items():
        with pytest.raises(PayloadFormatError):
            g.exchange(private, bad)


@pytest.mark.parametrize("backend", MONTGOMERY_BACKENDS)
@pytest.mark.parametrize("name", MONTGOMERY)
def test_montgomery_handshakes_reject_low_order_points(name: str, backend: str) -> None:
    scheme = registry.create(name.lower(), backend)
    receiver = scheme.new_receiver()
    public = receiver.setup()
    for bad in _montgomery_cases(name, public).values():
        with pytest.raises(PayloadFormatError):
            receiver.handshake(bad)
        with pytest.raises(PayloadFormatError):
            scheme.new_sender().handshake(bad)


def test_all_zero_secret_is_rejected() -> None:
    with pytest.raises(PayloadFormatError):
        _reject_all_zero("X25519", bytes(32))
    secret = bytes(31) + b"\x01"
    assert _reject_all_zero("X25519", secret) == secret


# ----------------------------------------------------------------- metadata


@pytest.mark.parametrize(
    ("scheme_id", "params", "bits", "label"),
    [
        ("ecdh", {"curve": "P-256"}, 128, "ECDH P-256 + HKDF-SHA256 + AES-256-GCM"),
        ("ecdh", {"curve": "secp256r1", "kdf": "sha256"}, 128, "ECDH P-256 + SHA-256 + AES-256-GCM"),
        ("ecdh", {"curve": "P-384", "kdf": "hkdf-sha384"}, 192, "ECDH P-384 + HKDF-SHA384 + AES-256-GCM"),
        ("ecdh", {"curve": "secp384r1"}, 192, "ECDH P-384 + HKDF-SHA256 + AES-256-GCM"),
        ("ecdh", {"curve": "P-521"}, 256, "ECDH P-521 + HKDF-SHA256 + AES-256-GCM"),
        ("ecdh", {"curve": "brainpoolP256r1"}, 128, "ECDH brainpoolP256r1 + HKDF-SHA256 + AES-256-GCM"),
        ("ecdh", {"curve": "brainpoolP384r1"}, 192, "ECDH brainpoolP384r1 + HKDF-SHA256 + AES-256-GCM"),
        ("x25519", {}, 128, "X25519 + HKDF-SHA256 + AES-256-GCM"),
        ("x448", {"kdf": "sha256"}, 224, "X448 + SHA-256 + AES-256-GCM"),
    ],
)
def test_scheme_info(scheme_id: str, params: dict[str, Any], bits: int, label: str) -> None:
    info = registry.create(scheme_id, "cryptography", params).info
    assert info.scheme_id == scheme_id
    assert info.family is Family.KEY_AGREEMENT
    assert info.label == label
    assert info.security.classical_bits == bits
    assert info.security.pq_category == 0
    assert info.insecure is False
    assert info.authenticated is True
    assert info.params["kdf"] == params.get("kdf", "hkdf-sha256")


def test_tinyec_scheme_notes_the_pure_python_arithmetic() -> None:
    notes = " ".join(registry.create("ecdh", "tinyec").info.notes)
    assert "pure-Python" in notes
    assert "pure-Python" not in " ".join(registry.create("ecdh", "cryptography").info.notes)


def test_group_security_bits() -> None:
    assert group_security_bits("secp256r1") == 128
    assert group_security_bits("brainpoolP384r1") == 192
    assert group_security_bits("X448") == 224
