"""The bootstrap's medians drawn from their order statistics: the same distribution as
resampling, at one or two random numbers per resample instead of n samples.

`median_ratio.compare` and `compare.compare_repeated` resample each side's samples to get
the distribution of its median; the cost grows with the sample count, and at a million
samples a side even 500 resamples drew two billion samples (over 40 s). Past
RESAMPLED_DRAWS_MAX draws they switch to `order_statistic_medians` (docs/comparing.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: One comparison of two sample sets resamples at most this many samples in all (resamples
#: x samples of both sides; ~30 ns each, under a second); beyond it, the medians are drawn
#: from their order statistics (`order_statistic_medians`), whose cost does not grow with
#: the sample count. 1,000,000 samples a side at 2000 resamples used to draw 4e9 samples.
RESAMPLED_DRAWS_MAX = 25_000_000


def exact_medians_needed(sizes: Sequence[int], resamples: int) -> bool:
    """Whether resampling sets of these sizes `resamples` times would pass RESAMPLED_DRAWS_MAX."""
    return sum(sizes) * resamples > RESAMPLED_DRAWS_MAX


def order_statistic_medians(ordered: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Medians of `resamples` bootstrap resamples of the sorted samples `ordered`, each
    drawn with one or two random numbers instead of n.

    Exactly the resampling bootstrap's distribution: a resample draws n indices uniformly,
    floor(n U) for n uniforms U, and its k-th smallest value is ordered[floor(n U_(k))],
    where U_(k), the k-th smallest of n uniforms, has a Beta(k, n - k + 1) distribution.
    For an even n, np.median's upper middle value is the next order statistic, U_(k) +
    (1 - U_(k)) V with V ~ Beta(1, n - k): the smallest of the n - k uniforms above U_(k).
    """
    n = ordered.size
    k = (n + 1) // 2  # the (lower) middle rank, 1-based
    u = rng.beta(k, n - k + 1, size=resamples)
    low: np.ndarray = ordered[np.minimum((u * n).astype(np.int64), n - 1)]
    if n % 2:
        return low
    upper = u + (1 - u) * rng.beta(1, n - k, size=resamples)
    high: np.ndarray = ordered[np.minimum((upper * n).astype(np.int64), n - 1)]
    middle: np.ndarray = (low + high) / 2
    return middle
