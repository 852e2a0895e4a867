"""Load from many machines: the open-loop generator placed on Dask workers.

Dask distributed (the optional `cluster` extra) only places and starts our generator, one
per worker, and carries commands and results; everything that measures is our own code
(app.core.load.generator, run in a subprocess on each worker) and the merging is
app.core.load.merge's. `coordinator` drives a job from this machine, `worker_side` is
what runs on each worker, and `remote_generator` is the subprocess it starts there.
"""
