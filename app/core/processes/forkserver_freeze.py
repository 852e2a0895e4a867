"""Imported by the fork server only, last of `jobstart.CHILD_PRELOAD`: moves everything the
preload made out of the collector's reach (`gc.freeze`) before the server forks any job.

A job's processes call `gc.collect()` outside their timed regions (between message sizes,
before a load step), so no collector pause lands inside a timing. Each call scanned every
object the fork server had preloaded (the measuring code, the crypto libraries, numpy:
some 57,000 objects, 30-60 ms a call on the 2-core VM), though none of it is ever garbage,
and wrote into each one's header, so every job process copied the server's pages it
otherwise shares. Frozen, those objects stay shared and unscanned; what a job makes is
collected as before. This is the use the Python documentation gives for `gc.freeze`.
"""

from __future__ import annotations

import gc

from app.core.processes.forkserver_guard import in_fork_server


def freeze_preloaded() -> None:
    """Collect what the imports left behind, then freeze the rest for every fork."""
    gc.collect()
    gc.freeze()


if in_fork_server():
    freeze_preloaded()
