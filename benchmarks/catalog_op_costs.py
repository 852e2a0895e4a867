"""Measure what one operation of every preset's schemes costs on this machine, and store it
as the catalogue run estimates start from (`resources/estimates/op_costs.json`).

Each scheme/backend/parameters key of the presets is probed in this process
(app.core.run.op_costs.probe_costs: a key generation, the exchange, each message
operation at 1 KiB and 1 MiB), with this machine's speed probe beside them so that
another machine scales the figures by its own. Takes a minute or two (pure-Python RSA
key generations). Run:
    .venv/bin/python benchmarks/catalog_op_costs.py
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.profile.files import load_profile, preset_names
from app.core.profile.resolve import resolve_jobs
from app.core.resources import resource_path
from app.core.run.op_costs import CATALOGUE, cost_key, probe_costs, speed_probe


def main() -> None:
    keys: dict[str, tuple[str, str, dict[str, object]]] = {}
    for name in preset_names():
        for job in resolve_jobs(load_profile(name), has_remote=True):
            keys.setdefault(cost_key(job.scheme, job.backend, job.params), (job.scheme, job.backend, dict(job.params)))
    probes = [speed_probe()]
    costs = {}
    for key, (scheme, backend, params) in sorted(keys.items()):
        start = time.perf_counter()
        costs[key] = probe_costs(scheme, backend, params).to_json()
        print(f"{key}: {time.perf_counter() - start:.2f} s", flush=True)
    probes.append(speed_probe())
    out = {
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "speed_probe_s": min(probes),
        "costs": costs,
    }
    path = resource_path(*CATALOGUE)
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(costs)} keys -> {path}")


if __name__ == "__main__":
    main()
