"""A throwaway CA and the certificates a Dask cluster on TLS needs (scheduler, worker,
client), made in a folder for the cluster tests, as docs/cluster.md has a lab make them
with openssl: one key and certificate per role, signed by the CA."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ROLES = ("scheduler", "worker", "client")


@dataclass(frozen=True)
class DaskTls:
    """The files: the CA's certificate, and each role's certificate and key by role."""

    ca: Path
    certs: dict[str, Path]
    keys: dict[str, Path]

    def security(self) -> object:
        """distributed's `Security` for a LocalCluster whose scheduler and workers use them."""
        from distributed.security import Security

        return Security(
            tls_ca_file=str(self.ca),
            tls_scheduler_cert=str(self.certs["scheduler"]),
            tls_scheduler_key=str(self.keys["scheduler"]),
            tls_worker_cert=str(self.certs["worker"]),
            tls_worker_key=str(self.keys["worker"]),
            tls_client_cert=str(self.certs["client"]),
            tls_client_key=str(self.keys["client"]),
            require_encryption=True,
        )

    def client_environment(self) -> dict[str, str]:
        """This machine's client settings as the environment gives them to Dask."""
        return {
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(self.ca),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(self.certs["client"]),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(self.keys["client"]),
            "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
        }


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_dask_tls(folder: Path) -> DaskTls:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("CryptoBench test CA"))
        .issuer_name(_name("CryptoBench test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = folder / "ca.pem"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    certs, keys = {}, {}
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(role))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(ca_key, hashes.SHA256())
        )
        certs[role] = folder / f"{role}.pem"
        keys[role] = folder / f"{role}.key"
        certs[role].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        keys[role].write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        keys[role].chmod(0o600)
    return DaskTls(ca_path, certs, keys)
