"""The certificate chains a tls13 job presents, made in memory for the job.

A chain of 1 is a self-signed end-entity certificate (the client trusts it as it is); of 2,
a root that signs the end-entity certificate; of 3, a root, an intermediate and the
end-entity certificate. The root is the verifying end's trust anchor and is never sent.
Every certificate carries what a CA's does (basic constraints, key usage, subject and
authority key identifiers; the end-entity's names and extended key usage), so the bytes on
the wire are those of a deployed chain, and each is signed with its issuer's key: RSA with
SHA-256 and PKCS #1 v1.5, ECDSA with the curve's hash, EdDSA and ML-DSA pure.

Keys live in memory only: `Chain` never writes one, holds the end-entity's key for the
TLS stack, and its repr shows none.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, mldsa, rsa
from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from app.core.tls.stack import Identity, private_key

#: The name the server's certificate is issued for, and the client verifies (RFC 6761's
#: reserved `.test`: it resolves nowhere).
SERVER_NAME = "server.cryptobench.test"
CLIENT_NAME = "client.cryptobench.test"
#: Certificates are valid from an hour ago (clocks of two machines differ) for a week.
_BEFORE = datetime.timedelta(hours=1)
_AFTER = datetime.timedelta(days=7)


def new_key(kind: str) -> CertificateIssuerPrivateKeyTypes:
    """A fresh private key of a certificate kind (app.core.schemes.tls13.CERTIFICATES)."""
    if kind.startswith("rsa-"):
        return rsa.generate_private_key(public_exponent=65537, key_size=int(kind.split("-")[1]))
    if kind == "ecdsa-p256":
        return ec.generate_private_key(ec.SECP256R1())
    if kind == "ecdsa-p384":
        return ec.generate_private_key(ec.SECP384R1())
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    if kind == "ed448":
        return ed448.Ed448PrivateKey.generate()
    if kind.startswith("ml-dsa-"):
        key: CertificateIssuerPrivateKeyTypes = getattr(mldsa, f"MLDSA{kind.split('-')[2]}PrivateKey").generate()
        return key
    raise ValueError(f"unknown certificate kind {kind!r}")


def _digest(key: CertificateIssuerPrivateKeyTypes) -> hashes.SHA256 | hashes.SHA384 | None:
    """The hash a certificate signed by `key` uses (None: the algorithm hashes itself)."""
    if isinstance(key, rsa.RSAPrivateKey):
        return hashes.SHA256()
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return hashes.SHA384() if key.curve.key_size >= 384 else hashes.SHA256()
    return None


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "CryptoBench"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _certificate(
    subject: str,
    key: CertificateIssuerPrivateKeyTypes,
    issuer: tuple[str, CertificateIssuerPrivateKeyTypes] | None,
    *,
    authority: bool,
    host: str | None,
) -> x509.Certificate:
    """One certificate for `key`, issued by `issuer` (name, key), or self-signed when None."""
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer if issuer is not None else (subject, key)
    public = key.public_key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer_name))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BEFORE)
        .not_valid_after(now + _AFTER)
        .add_extension(x509.BasicConstraints(ca=authority, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
        .add_extension(
            x509.KeyUsage(
                digital_signature=not authority,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=authority,
                crl_sign=authority,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    if not authority:
        usage = ExtendedKeyUsageOID.SERVER_AUTH if host == SERVER_NAME else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if host is not None:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
    return builder.sign(issuer_key, _digest(issuer_key))


@dataclass(frozen=True)
class Chain:
    """A chain made for one end: the trust anchor the other end verifies it against, the
    certificates sent (the end-entity's first) and the end-entity's key, as the TLS stack
    takes them."""

    anchor: x509.Certificate
    sent: tuple[x509.Certificate, ...]
    identity: Identity = field(repr=False)

    def anchor_der(self) -> bytes:
        return self.anchor.public_bytes(serialization.Encoding.DER)


def make_chain(kind: str, length: int, host: str) -> Chain:
    """A chain of `length` certificates of `kind` for `host` (the end-entity's name)."""
    if length not in (1, 2, 3):
        raise ValueError(f"a chain has 1, 2 or 3 certificates, not {length}")
    leaf_key = new_key(kind)
    if length == 1:
        leaf = _certificate(host, leaf_key, None, authority=False, host=host)
        return Chain(leaf, (leaf,), Identity((leaf,), private_key(leaf_key)))
    root_key = new_key(kind)
    root_name = "CryptoBench test root"
    root = _certificate(root_name, root_key, None, authority=True, host=None)
    issuer: tuple[str, CertificateIssuerPrivateKeyTypes] = (root_name, root_key)
    sent: list[x509.Certificate] = []
    if length == 3:
        middle_key = new_key(kind)
        middle_name = "CryptoBench test intermediate"
        sent.append(_certificate(middle_name, middle_key, issuer, authority=True, host=None))
        issuer = (middle_name, middle_key)
    sent.insert(0, _certificate(host, leaf_key, issuer, authority=False, host=host))
    identity = Identity(tuple(sent), private_key(leaf_key))
    return Chain(root, tuple(sent), identity)


def anchor_from_der(der: bytes) -> x509.Certificate:
    """A trust anchor the other end sent (its DER, checked by parsing)."""
    return x509.load_der_x509_certificate(der)
