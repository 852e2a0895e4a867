"""The Qt-free core: everything that measures, computes, checks and stores.

Grouped by purpose (docs/ARCHITECTURE.md, "Layers"): `profile/` (what to measure),
`run/` (running it: runner, supervisor, job processes, events), `measure/` (taking a
figure), `schemes/` (the cryptography, one module per family), `session/`, `link/` and
`load/` (measuring over a connection, an emulated link, under load), `results/` (the
result model, its checks, the store), `analysis/` (statistics, comparisons, trends),
`machine/` (the machine's facts and CPU placement) and `selftest/`. The top-level modules
(errors, vocab, escaping, fileio, resources) are what every group uses.
"""
