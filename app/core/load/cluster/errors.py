"""What a cluster load job raises when the cluster cannot run it."""

from __future__ import annotations


class ClusterError(RuntimeError):
    """The cluster cannot run this job (unreachable, too few workers, a loose clock, a
    version mismatch, a secret that would travel in clear): said before any step."""
