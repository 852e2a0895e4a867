"""How much does CryptoBench's harness add to what it measures?

For each case, the app's reported median time per operation (measured through the
real runner: spawned child process, batching, validation outside the timed region)
is divided by a plain `timeit` of the same library calls made in this process.
A ratio near 1.0 means the harness reports the library's cost, not its own.

"The same library calls" means exactly what the scheme does per operation, written
plainly: AES-GCM seal = take a nonce + AESGCM.encrypt; Ed25519 sign = sign();
X25519 "exchange" (the sender's side of a key agreement) = ephemeral key pair +
decode the peer's public key + exchange + HKDF-SHA256 + AESGCM(key); SHA-256 = one digest.

Run: make bench   (or .venv/bin/python benchmarks/bench_ops_overhead.py [--samples N])
Target: every ratio within 0.90 - 1.10. Both sides run in one session, one after the
other, so machine noise affects them alike; compare ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.vocab import JobStatus

KIB, MIB = 1024, 1024 * 1024


def plain_per_op(stmt: Callable[[], object], repeats: int, target_s: float = 0.002) -> float:
    """Median per-operation time of `stmt` with timeit, batched like the app batches."""
    timer = timeit.Timer(stmt)
    number, _ = timer.autorange()  # smallest count taking >= 0.2 s
    number = max(1, int(number * target_s / 0.2))
    times = timer.repeat(repeat=repeats, number=number)
    return statistics.median(t / number for t in times)


def references() -> dict[str, Callable[[], object]]:
    key = AESGCM.generate_key(bit_length=256)
    aes = AESGCM(key)
    counter = iter(range(1 << 62))
    prefix = 0x12345678 << 64
    data_1k, data_1m = b"\x01" * KIB, b"\x02" * MIB

    def aes_seal(data: bytes) -> Callable[[], object]:
        def seal() -> object:
            nonce = (prefix | next(counter)).to_bytes(12, "big")
            return (nonce, aes.encrypt(nonce, data, None))

        return seal

    signer = ed25519.Ed25519PrivateKey.generate()
    peer_bytes = x25519.X25519PrivateKey.generate().public_key().public_bytes_raw()

    def x25519_exchange() -> object:
        ephemeral = x25519.X25519PrivateKey.generate()
        shared = ephemeral.exchange(x25519.X25519PublicKey.from_public_bytes(peer_bytes))
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"cryptobench session key").derive(shared)
        ephemeral.public_key().public_bytes_raw()
        return AESGCM(key)

    def sha256() -> object:
        digest = hashes.Hash(hashes.SHA256())
        digest.update(data_1m)
        return digest.finalize()

    return {
        "AES-256-GCM encrypt 1 KiB": aes_seal(data_1k),
        "AES-256-GCM encrypt 1 MiB": aes_seal(data_1m),
        "Ed25519 sign 1 KiB": lambda: signer.sign(data_1k),
        "X25519 exchange (+HKDF)": x25519_exchange,
        "SHA-256 1 MiB": sha256,
    }


def app_medians(samples: int) -> dict[str, float]:
    jobs = [
        {"scheme": "aes-gcm", "params": {"key_bits": 256}, "message_sizes": [KIB, MIB]},
        {"scheme": "ed25519", "message_sizes": [KIB]},
        {"scheme": "x25519", "params": {"kdf": "hkdf-sha256"}, "message_sizes": [18]},
        {"scheme": "sha256", "backend": "cryptography", "message_sizes": [MIB]},
    ]
    for job in jobs:
        job.update(
            {
                "backend": job.get("backend", "cryptography"),
                "samples": samples,
                "warmup": 10,
                "keygen_samples": 1,
                "tamper": 1,
            }
        )
    run = Runner(parse_profile({"name": "overhead", "jobs": jobs})).run()
    bad = [job for job in run.jobs if job.status != JobStatus.OK]
    if bad:
        raise SystemExit(f"app run failed: {[(j.label, j.error) for j in bad]}")
    by = {(j.scheme, j.message_size): j for j in run.jobs}
    return {
        "AES-256-GCM encrypt 1 KiB": by[("aes-gcm", KIB)].metrics["encrypt"].stats.median,
        "AES-256-GCM encrypt 1 MiB": by[("aes-gcm", MIB)].metrics["encrypt"].stats.median,
        "Ed25519 sign 1 KiB": by[("ed25519", KIB)].metrics["sign"].stats.median,
        "X25519 exchange (+HKDF)": by[("x25519", 18)].metrics["exchange"].stats.median,
        "SHA-256 1 MiB": by[("sha256", MIB)].metrics["hash"].stats.median,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    app = app_medians(args.samples)
    plain = {name: plain_per_op(stmt, args.samples) for name, stmt in references().items()}
    print(f"{'case':28s} {'app median':>12s} {'timeit':>12s} {'ratio':>7s}  within 0.90-1.10")
    worst = 0.0
    for name in app:
        ratio = app[name] / plain[name]
        worst = max(worst, abs(ratio - 1))
        ok = "yes" if 0.90 <= ratio <= 1.10 else "NO"
        print(f"{name:28s} {app[name] * 1e6:10.3f}us {plain[name] * 1e6:10.3f}us {ratio:7.3f}  {ok}")
    return 0 if worst <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
