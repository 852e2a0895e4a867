"""What does CryptoBench's tls13 job add to a TLS 1.3 handshake, and how does its handshake
rate compare with OpenSSL's own tool?

1. **Operations against a bare pyOpenSSL loop.** The app's `operations` job (through the
   real runner: a spawned child, both ends over memory BIOs, every handshake checked: each
   size's first, untimed, with every message read through OpenSSL's message callback, the
   timed ones from their ServerHellos and the received chain after the clock stops)
   reports each end's time inside its `do_handshake` calls: `handshake_client` and
   `handshake_server`. The bare loop times the same calls in
   this process, with the same certificates (made by the app, outside any timing), the same
   group, signature scheme and cipher suite, the same verification (the chain against the
   root, the host name), and nothing else: no message callback, no transcript, no checks.
   Target: each end's ratio, and their sum's, at most 1.10. Both run unpinned.
   In the same process, without the runner: the app's own handshake pair
   (`app.core.tls.ops.TlsPair.connect`, what the job times) and the bare loop alternating
   handshake by handshake, so what a busy machine does between processes cannot tell them
   apart: the code's own cost, the ratio of medians per round.
2. **Handshakes per second beside `openssl s_time`.** The app's `loopback` job over TCP
   127.0.0.1 (a new connection per handshake; `connect_handshake`: connect's start to the
   client's handshake done) gives 1 / median handshakes per second from one client; the
   system's `openssl s_time -new` counts the connections it completes in `--seconds`
   against `openssl s_server`, one at a time (each a TCP connect, a full handshake and a
   close), with the same ECDSA P-256 certificate and x25519 on the system's OpenSSL. Not a
   target: the two OpenSSL builds differ (named in the output), and s_time's client is C.

Run: .venv/bin/python benchmarks/bench_tls.py [--samples N] [--seconds S] [--rounds R]
Both sides of each comparison alternate within one run (the order flips every round), so
machine noise affects them alike; compare ratios, not absolute times. Exit code 0 means
every operations ratio is within target.
"""

from __future__ import annotations

import argparse
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cryptography.hazmat.bindings.openssl.binding import Binding
from cryptography.hazmat.primitives import serialization
from OpenSSL import SSL, crypto

from app.core.machine.environment import library_versions
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.schemes.tls13 import CERTIFICATES, GROUPS, Tls13Scheme
from app.core.tls import stack
from app.core.tls.certificates import SERVER_NAME, make_chain
from app.core.tls.ops import TlsPair
from app.core.vocab import JobStatus

TARGET = 1.10
CIPHER = "TLS_AES_128_GCM_SHA256"
#: Each case: the group, the certificate (classical, so the bare loop loads its key with
#: pyOpenSSL's public call), the chain's length as the app's jobs default to it.
CASES = (("x25519", "ecdsa-p256"), ("X25519MLKEM768", "ecdsa-p256"))
CHAIN = 2
#: Bytes one bio_read takes.
CHUNK = 64 * 1024
#: OpenSSL's own calls, for the host name check pyOpenSSL does not bind (as app.core.tls.stack).
LIB: Any = Binding().lib


# --- 1. the bare loop ------------------------------------------------------------------------


@dataclass
class BareEnds:
    server: SSL.Context
    client: SSL.Context


def bare_contexts(group: str, certificate: str) -> BareEnds:
    """Two contexts configured with pyOpenSSL's calls (and OpenSSL's own for the group and
    signature scheme, which pyOpenSSL does not bind): no message callback."""
    chain = make_chain(certificate, CHAIN, SERVER_NAME)
    scheme = CERTIFICATES[certificate].scheme

    def context() -> SSL.Context:
        ctx = SSL.Context(SSL.TLS_METHOD)
        ctx.set_min_proto_version(SSL.TLS1_3_VERSION)
        ctx.set_max_proto_version(SSL.TLS1_3_VERSION)
        stack.set_groups(ctx, [GROUPS[group].openssl])
        stack.set_signature_schemes(ctx, [scheme])
        ctx.set_tls13_ciphersuites(CIPHER.encode("ascii"))
        return ctx

    server = context()
    server.use_certificate(chain.identity.certificates[0])
    server.use_privatekey(chain.identity.key)
    server.set_session_id(b"bare")
    client = context()
    client.get_cert_store().add_cert(crypto.X509.from_cryptography(chain.anchor))  # type: ignore[union-attr]
    client.set_verify(SSL.VERIFY_PEER)
    return BareEnds(server, client)


def _step(connection: SSL.Connection) -> bool:
    try:
        connection.do_handshake()
    except SSL.WantReadError:
        return False
    return True


def _drain(connection: SSL.Connection) -> bytes:
    chunks = []
    while True:
        try:
            chunks.append(connection.bio_read(CHUNK))
        except SSL.WantReadError:
            return b"".join(chunks)


def bare_handshake(ends: BareEnds) -> tuple[int, int]:
    """One handshake over memory BIOs: ns inside the client's and the server's calls."""
    client = SSL.Connection(ends.client, None)
    client.set_connect_state()
    client.set_tlsext_host_name(SERVER_NAME.encode("ascii"))
    param = LIB.SSL_get0_param(client._ssl)  # the host name check, as the app's client
    LIB.X509_VERIFY_PARAM_set1_host(param, SERVER_NAME.encode("ascii"), len(SERVER_NAME))
    server = SSL.Connection(ends.server, None)
    server.set_accept_state()
    client_ns = server_ns = 0
    client_done = server_done = False
    while not (client_done and server_done):
        start = time.perf_counter_ns()
        client_done = _step(client) or client_done
        client_ns += time.perf_counter_ns() - start
        out = _drain(client)
        if out:
            server.bio_write(out)
        if client_done and server_done:
            break
        start = time.perf_counter_ns()
        server_done = _step(server) or server_done
        server_ns += time.perf_counter_ns() - start
        out = _drain(server)
        if out:
            client.bio_write(out)
    return client_ns, server_ns


def bare_medians(group: str, certificate: str, samples: int, warmup: int) -> tuple[float, float]:
    ends = bare_contexts(group, certificate)
    times = [bare_handshake(ends) for _ in range(warmup + samples)][warmup:]
    return statistics.median(c for c, _ in times) / 1e9, statistics.median(s for _, s in times) / 1e9


def app_medians(group: str, certificate: str, samples: int, warmup: int) -> tuple[float, float]:
    job = {
        "scheme": "tls13",
        "params": {"group": group, "certificate": certificate, "chain": CHAIN, "cipher": CIPHER},
        "message_sizes": [32],
        "samples": samples,
        "warmup": warmup,
        "tamper": 1,
        # Unpinned, as the bare loop in this process: on a shared machine the app's default
        # (its worker pinned to one CPU) waited behind other programs on that CPU (1.8x).
        "placement": "free",
    }
    run = Runner(parse_profile({"name": "bench-tls", "jobs": [job]})).run()
    (result,) = run.jobs
    if result.status != JobStatus.OK:
        raise SystemExit(f"app run failed: {result.label}: {result.error}")
    return result.metrics["handshake_client"].stats.median, result.metrics["handshake_server"].stats.median


def pair_ratios(group: str, certificate: str, samples: int, rounds: int) -> list[float]:
    """The app's timed handshake (`TlsPair.connect`) against the bare loop, alternating
    handshake by handshake in this process: per round, median(app) / median(bare), both ends."""
    params = {"group": group, "certificate": certificate, "chain": CHAIN, "cipher": CIPHER}
    scheme = Tls13Scheme({**params, "resumption": "none", "mutual": False})
    pair, ends = TlsPair(scheme), bare_contexts(group, certificate)
    ratios = []
    for _ in range(rounds):
        apps, bares = [], []
        for k in range(20 + samples):
            if k % 2:  # the order flips every handshake
                bares.append(sum(bare_handshake(ends)))
            connected = pair.connect()
            pair.close_all()
            apps.append(connected.client_ns + connected.server_ns)
            if not k % 2:
                bares.append(sum(bare_handshake(ends)))
        ratios.append(statistics.median(apps[20:]) / statistics.median(bares[20:]))
    return ratios


# --- 2. handshakes per second ----------------------------------------------------------------


def app_loopback_rate(samples: int) -> float:
    job = {
        "scheme": "tls13",
        "params": {"group": "x25519", "certificate": "ecdsa-p256", "chain": CHAIN, "cipher": CIPHER},
        "mode": "loopback",
        "message_sizes": [32],
        "samples": samples,
        "warmup": 5,
        "tamper": 1,
    }
    run = Runner(parse_profile({"name": "bench-tls-loopback", "jobs": [job]})).run()
    (result,) = run.jobs
    if result.status != JobStatus.OK:
        raise SystemExit(f"app loopback run failed: {result.error}")
    return 1 / result.metrics["connect_handshake"].stats.median


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def s_time_rate(openssl: str, seconds: int, folder: Path) -> tuple[float, float]:
    """`openssl s_time -new` against `openssl s_server` with an ECDSA P-256 chain and x25519:
    (connections per second of wall time, per second of the client's user CPU)."""
    chain = make_chain("ecdsa-p256", CHAIN, SERVER_NAME)
    cert, key, root = folder / "leaf.pem", folder / "leaf.key", folder / "root.pem"
    cert.write_bytes(chain.identity.certificates[0].public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        chain.identity.key.private_bytes(  # type: ignore[union-attr]
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    root.write_bytes(chain.anchor.public_bytes(serialization.Encoding.PEM))
    port = _free_port()
    server_args = [openssl, "s_server", "-quiet", "-accept", f"127.0.0.1:{port}", "-cert", str(cert), "-key", str(key)]
    server_args += ["-tls1_3", "-groups", "X25519", "-ciphersuites", CIPHER, "-naccept", "1000000"]
    server = subprocess.Popen(server_args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:  # bounded by the server's start: it accepts once listening
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError as exc:
                if server.poll() is not None or time.monotonic() > deadline:
                    why = server.stderr.read() if server.stderr else b""
                    raise SystemExit(f"openssl s_server did not start: {why!r}") from exc
        client = [openssl, "s_time", "-connect", f"127.0.0.1:{port}", "-new", "-tls1_3", "-time", str(seconds)]
        client += ["-ciphersuites", CIPHER, "-CAfile", str(root), "-verify", "2"]
        started = time.monotonic()
        out = subprocess.run(client, capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
        # s_time prints its real time in whole seconds ("N connections in 3 real seconds"),
        # and its first line's seconds are user CPU: the wall time is taken here instead.
        wall = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=10)
    found = re.search(r"(\d+) connections in [\d.]+s; ([\d.]+) connections/user sec", out)
    if found is None:
        raise SystemExit(f"openssl s_time printed no count:\n{out}")
    return int(found.group(1)) / wall, float(found.group(2))


def system_openssl_version(openssl: str) -> str:
    return subprocess.run([openssl, "version"], capture_output=True, text=True, check=True).stdout.strip()


# --- the run ---------------------------------------------------------------------------------


def _versions() -> str:
    libraries: dict[str, dict[str, Any]] = library_versions()
    bound = stack.openssl_version()[1]
    return (
        f"Python {sys.version.split()[0]}, pyOpenSSL {libraries['pyOpenSSL']['version']}, "
        f"cryptography {libraries['cryptography']['version']} with {bound}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200, help="handshakes per side and round (default 200)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, app and bare alternating (default 3)")
    parser.add_argument("--seconds", type=int, default=5, help="s_time's measuring time (default 5)")
    args = parser.parse_args()
    print(f"app: {_versions()}")
    ok = True
    print("\n1. operations handshake, each end's median time in its do_handshake calls")
    print("case | end | app median | bare median | ratio")
    for group, certificate in CASES:
        apps, bares = [], []
        for round_ in range(args.rounds):
            order = ("app", "bare") if round_ % 2 == 0 else ("bare", "app")
            for side in order:
                if side == "app":
                    apps.append(app_medians(group, certificate, args.samples, 20))
                else:
                    bares.append(bare_medians(group, certificate, args.samples, 20))
        app_c, app_s = statistics.median(a[0] for a in apps), statistics.median(a[1] for a in apps)
        bare_c, bare_s = statistics.median(b[0] for b in bares), statistics.median(b[1] for b in bares)
        for end, a, b in (
            ("client", app_c, bare_c),
            ("server", app_s, bare_s),
            ("both", app_c + app_s, bare_c + bare_s),
        ):
            ratio = a / b
            ok = ok and ratio <= TARGET
            print(f"{group} + {certificate} | {end} | {a * 1e6:.1f} µs | {b * 1e6:.1f} µs | {ratio:.3f}")
    print(f"target: every ratio at most {TARGET:.2f}: {'PASS' if ok else 'FAIL'}")
    print("\n1b. in this process, the app's handshake pair and the bare loop alternating (both ends)")
    for group, certificate in CASES:
        ratios = pair_ratios(group, certificate, args.samples, args.rounds)
        listed = ", ".join(f"{r:.3f}" for r in ratios)
        print(f"{group} + {certificate}: ratio per round {listed}; median {statistics.median(ratios):.3f}")

    openssl = shutil.which("openssl")
    print("\n2. handshakes per second, x25519 + ECDSA P-256, one client, TCP 127.0.0.1")
    ours = statistics.median(app_loopback_rate(args.samples) for _ in range(args.rounds))
    print(f"app loopback (1 / median connect_handshake): {ours:.0f} handshakes/s ({_versions()})")
    if openssl is None:
        print("openssl s_time: not installed (apt-get install openssl)")
        return 0 if ok else 1
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as folder:
        rates = [s_time_rate(openssl, args.seconds, Path(folder)) for _ in range(args.rounds)]
    real = statistics.median(r for r, _ in rates)
    user = statistics.median(u for _, u in rates)
    print(
        f"openssl s_time -new: {real:.0f} connections/s, {user:.0f} per user second ({system_openssl_version(openssl)})"
    )
    print(f"app / s_time: {ours / real:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
