"""The `tls13` scheme: TLS 1.3 handshakes as deployed, named for the registry.

A tls13 job is a key-exchange group, a certificate chain, a cipher suite and how the
connection is made (resumed or not, the client authenticated or not). Profiles,
`cryptobench list`, the window's scheme tree and `resolve_jobs` know it through this
module's `SPECS`, like every scheme; its job bodies are TLS's own (app.core.tls: an
operations worker over memory BIOs, a client and a server over TCP), run by OpenSSL
through pyOpenSSL, so `new_sender` and `new_receiver` refuse, saying where the job runs.

The vocabulary lives here once: each group, certificate kind and cipher suite with its
IANA codepoint, OpenSSL's name for it and its security, so what a handshake's messages
say (app.core.schemes.tls_messages) is named and checked against what the job asked
(`Tls13Scheme.negotiation_problem`): a job never measures something it did not ask for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.core.schemes.base import (
    ParamSpec,
    Receiver,
    Scheme,
    SchemeError,
    SchemeInfo,
    SchemeSpec,
    Security,
    Sender,
    TamperSpot,
)
from app.core.schemes.tls_messages import MAX_RECORD_PLAINTEXT, RECORD_HEADER, TLS13, Negotiated
from app.core.vocab import Family, ParamValue

#: The one backend: OpenSSL as cryptography's wheel bundles it, through pyOpenSSL.
BACKEND = "pyopenssl"
#: The OpenSSL release that first offers ML-KEM groups and ML-DSA certificates (3.5).
OPENSSL_PQ = 0x30500000
#: What TLS 1.3 adds to a record's data besides its header: the inner content type and the
#: AEAD's 16-byte tag (RFC 8446 §5.2; every TLS 1.3 suite's tag is 16 bytes).
RECORD_EXPANSION = 17


@dataclass(frozen=True)
class Group:
    """A key-exchange group (RFC 8446 §4.2.7; the hybrids: draft-ietf-tls-ecdhe-mlkem)."""

    codepoint: int
    #: OpenSSL's name in a groups list (SSL_CTX_set1_groups_list).
    openssl: str
    security: Security
    #: The first OpenSSL release (OPENSSL_VERSION_NUMBER) that offers it.
    since: int = 0x10101000


#: Classical strength of a hybrid: an attacker must break both parts (app.core.schemes.hybrid's rule).
GROUPS: Mapping[str, Group] = {
    "x25519": Group(0x001D, "x25519", Security(128, 0)),
    "secp256r1": Group(0x0017, "secp256r1", Security(128, 0)),
    "secp384r1": Group(0x0018, "secp384r1", Security(192, 0)),
    "x448": Group(0x001E, "x448", Security(224, 0)),
    "X25519MLKEM768": Group(0x11EC, "X25519MLKEM768", Security(192, 3), OPENSSL_PQ),
    "SecP256r1MLKEM768": Group(0x11EB, "SecP256r1MLKEM768", Security(192, 3), OPENSSL_PQ),
    "SecP384r1MLKEM1024": Group(0x11ED, "SecP384r1MLKEM1024", Security(256, 5), OPENSSL_PQ),
    "MLKEM512": Group(0x0200, "MLKEM512", Security(128, 1), OPENSSL_PQ),
    "MLKEM768": Group(0x0201, "MLKEM768", Security(192, 3), OPENSSL_PQ),
    "MLKEM1024": Group(0x0202, "MLKEM1024", Security(256, 5), OPENSSL_PQ),
}


@dataclass(frozen=True)
class Certificate:
    """A certificate kind: its key, and the TLS 1.3 signature scheme its CertificateVerify uses."""

    label: str
    #: The signature scheme (RFC 8446 §4.2.3; ML-DSA: draft-ietf-tls-mldsa), IANA's name and codepoint.
    scheme: str
    codepoint: int
    security: Security
    since: int = 0x10101000


CERTIFICATES: Mapping[str, Certificate] = {
    "rsa-2048": Certificate("RSA-2048", "rsa_pss_rsae_sha256", 0x0804, Security(112, 0)),
    "rsa-3072": Certificate("RSA-3072", "rsa_pss_rsae_sha256", 0x0804, Security(128, 0)),
    "rsa-4096": Certificate("RSA-4096", "rsa_pss_rsae_sha256", 0x0804, Security(152, 0)),
    "ecdsa-p256": Certificate("ECDSA P-256", "ecdsa_secp256r1_sha256", 0x0403, Security(128, 0)),
    "ecdsa-p384": Certificate("ECDSA P-384", "ecdsa_secp384r1_sha384", 0x0503, Security(192, 0)),
    "ed25519": Certificate("Ed25519", "ed25519", 0x0807, Security(128, 0)),
    "ed448": Certificate("Ed448", "ed448", 0x0808, Security(224, 0)),
    "ml-dsa-44": Certificate("ML-DSA-44", "mldsa44", 0x0904, Security(128, 2), OPENSSL_PQ),
    "ml-dsa-65": Certificate("ML-DSA-65", "mldsa65", 0x0905, Security(192, 3), OPENSSL_PQ),
    "ml-dsa-87": Certificate("ML-DSA-87", "mldsa87", 0x0906, Security(256, 5), OPENSSL_PQ),
}
#: The TLS 1.3 cipher suites (RFC 8446 §B.4), by IANA name.
CIPHERS: Mapping[str, int] = {
    "TLS_AES_128_GCM_SHA256": 0x1301,
    "TLS_AES_256_GCM_SHA384": 0x1302,
    "TLS_CHACHA20_POLY1305_SHA256": 0x1303,
}
#: How many certificates a chain has: 1 a self-signed leaf (itself the trust anchor), 2 a
#: root and a leaf, 3 a root, an intermediate and a leaf. The root is the client's trust
#: anchor and never sent, so a chain of n sends max(1, n - 1) certificates.
CHAINS = (1, 2, 3)
#: "none": every handshake is a full one (a first visit); "ticket": every timed handshake
#: resumes with a PSK ticket from the one before (a return visit, psk_dhe_ke).
RESUMPTION = ("none", "ticket")

#: Every signature scheme by codepoint, and every group (names read back from messages).
SIGNATURE_NAMES = {c.codepoint: c.scheme for c in CERTIFICATES.values()} | {
    0x0401: "rsa_pkcs1_sha256",
    0x0805: "rsa_pss_rsae_sha384",
    0x0806: "rsa_pss_rsae_sha512",
    0x0603: "ecdsa_secp521r1_sha512",
}
GROUP_NAMES = {g.codepoint: name for name, g in GROUPS.items()} | {0x0019: "secp521r1", 0x0100: "ffdhe2048"}
CIPHER_NAMES = {codepoint: name for name, codepoint in CIPHERS.items()}
VERSION_NAMES = {TLS13: "TLSv1.3", 0x0303: "TLSv1.2"}


def name_of(names: Mapping[int, str], codepoint: int | None) -> str:
    """A codepoint's name, or its hex where this vocabulary has none ("none" for None)."""
    if codepoint is None:
        return "none"
    return names.get(codepoint, f"0x{codepoint:04x}")


@dataclass(frozen=True)
class Asked:
    """What a tls13 job asks for, resolved from its parameters."""

    group: str
    certificate: str
    chain: int
    cipher: str
    resumption: str
    mutual: bool

    @classmethod
    def of(cls, params: Mapping[str, ParamValue]) -> Asked:
        return cls(
            group=str(params["group"]),
            certificate=str(params["certificate"]),
            chain=int(params["chain"]),
            cipher=str(params["cipher"]),
            resumption=str(params["resumption"]),
            mutual=bool(params["mutual"]),
        )

    @property
    def sent_certificates(self) -> int:
        """Certificates the server sends: the chain less its root (a lone leaf is sent)."""
        return max(1, self.chain - 1)


class Tls13Scheme(Scheme):
    """The registry's face of a tls13 job: its metadata and what it must negotiate."""

    def __init__(self, params: Mapping[str, ParamValue]) -> None:
        self.asked = asked = Asked.of(params)
        group, certificate = GROUPS[asked.group], CERTIFICATES[asked.certificate]
        # The connection holds while both hold: the weaker of the two, classically and against
        # a quantum computer (the key exchange protects the data later, the certificate
        # authenticates the peer now).
        security = Security(
            min(group.security.classical_bits, certificate.security.classical_bits),
            min(group.security.pq_category, certificate.security.pq_category),
        )
        extras = [f"chain {asked.chain}"]
        if asked.cipher != DEFAULT_CIPHER:
            extras.append(asked.cipher)
        if asked.resumption != "none":
            extras.append("resumed")
        if asked.mutual:
            extras.append("mutual")
        self.info = SchemeInfo(
            scheme_id="tls13",
            family=Family.TLS,
            backend=BACKEND,
            params=params,
            label=f"TLS 1.3 {asked.group} + {certificate.label} ({', '.join(extras)})",
            security=security,
            insecure=certificate.security.classical_bits < 112,
            authenticated=True,
            notes=(
                # One clause: after "authentication: " a certificate's name read, to the report's
                # checks, as a sentence of its own, the same for every job with that certificate.
                f"key exchange {asked.group} (PQ category {group.security.pq_category}) and authentication "
                f"{certificate.label} (PQ category {certificate.security.pq_category}): the job's security is the "
                "weaker of the two",
            ),
        )

    def new_sender(self) -> Sender:
        raise SchemeError("a tls13 job runs TLS's own client and server (app/core/tls), not the session protocol")

    def new_receiver(self) -> Receiver:
        raise SchemeError("a tls13 job runs TLS's own client and server (app/core/tls), not the session protocol")

    def tamper_spots(self, payload_len: int, plaintext_len: int) -> list[TamperSpot]:
        """Bits of the first application-data record: its first ciphertext byte, its middle
        and its tag's last byte (its header's length field would only make a peer wait)."""
        body = min(plaintext_len, MAX_RECORD_PLAINTEXT) + RECORD_EXPANSION
        return [
            TamperSpot("record's first ciphertext byte", RECORD_HEADER),
            TamperSpot("record's middle byte", RECORD_HEADER + body // 2),
            TamperSpot("record's tag", RECORD_HEADER + body - 1),
        ]

    def payload_overhead(self, plaintext_len: int) -> int:
        """A TLS record adds 22 bytes (header, inner type, 16-byte tag) per 16 KiB of data."""
        return (RECORD_HEADER + RECORD_EXPANSION) * (plaintext_len // MAX_RECORD_PLAINTEXT + 1)

    def negotiation_problem(self, negotiated: Negotiated) -> str | None:
        """Why a handshake did not negotiate what the job asked (None: it did), naming both:
        a job never measures a fallback, a HelloRetryRequest or another suite silently."""
        asked = self.asked
        problems = []
        if negotiated.version != TLS13:
            problems.append(f"version {name_of(VERSION_NAMES, negotiated.version)} (asked TLSv1.3)")
        if negotiated.retries:
            problems.append(
                f"{negotiated.retries} HelloRetryRequest(s): the server asked for another key share than "
                f"the client's {asked.group}"
            )
        if negotiated.group != GROUPS[asked.group].codepoint:
            problems.append(f"group {name_of(GROUP_NAMES, negotiated.group)} (asked {asked.group})")
        if negotiated.cipher != CIPHERS[asked.cipher]:
            problems.append(f"cipher {name_of(CIPHER_NAMES, negotiated.cipher)} (asked {asked.cipher})")
        wanted = CERTIFICATES[asked.certificate]
        resumed = asked.resumption == "ticket"
        if negotiated.resumed != resumed:
            problems.append(
                f"{'a resumed' if negotiated.resumed else 'a full'} handshake (asked "
                f"{'a resumed' if resumed else 'a full'} one)"
            )
        elif not resumed:
            # An unwatched handshake's CertificateVerify is encrypted and unread: its scheme is
            # the watched one's of the size (each end's context allows that scheme alone).
            if negotiated.signatures_read and negotiated.signature != wanted.codepoint:
                problems.append(
                    f"server signature {name_of(SIGNATURE_NAMES, negotiated.signature)} (asked {wanted.scheme})"
                )
            if asked.mutual and negotiated.signatures_read and negotiated.client_signature != wanted.codepoint:
                problems.append(
                    f"client signature {name_of(SIGNATURE_NAMES, negotiated.client_signature)} (asked {wanted.scheme})"
                )
            if len(negotiated.chain) != asked.sent_certificates:
                problems.append(f"{len(negotiated.chain)} certificate(s) sent (asked {asked.sent_certificates})")
        return "; ".join(problems) or None


DEFAULT_GROUP = "X25519MLKEM768"
DEFAULT_CERTIFICATE = "ecdsa-p256"
DEFAULT_CIPHER = "TLS_AES_128_GCM_SHA256"

SPECS = (
    SchemeSpec(
        scheme_id="tls13",
        name="TLS 1.3 handshake",
        family=Family.TLS,
        backends=(BACKEND,),
        params=(
            ParamSpec("group", DEFAULT_GROUP, tuple(GROUPS), help="the key-exchange group (a hybrid: X25519MLKEM768)"),
            ParamSpec(
                "certificate",
                DEFAULT_CERTIFICATE,
                tuple(CERTIFICATES),
                help="the server's certificate chain: its key and signatures",
            ),
            ParamSpec("chain", 2, CHAINS, help="certificates: 1 self-signed, 2 root + leaf, 3 with an intermediate"),
            ParamSpec("cipher", DEFAULT_CIPHER, tuple(CIPHERS), help="the TLS 1.3 cipher suite"),
            ParamSpec("resumption", "none", RESUMPTION, help="none: full handshakes; ticket: resumed with a PSK"),
            ParamSpec("mutual", False, help="the client authenticates too, with a chain of the same kind"),
        ),
        factory=lambda backend, params: Tls13Scheme(params),
        description="TLS 1.3 handshakes through OpenSSL (pyOpenSSL): a group, a certificate chain, a cipher; "
        "the chain and host name verified, application data exchanged after",
    ),
)
