"""The minimum evidence for a verdict, one rule for every face that compares.

A comparison of two medians ranks them (faster, slower, a regression) only when each side
has enough samples for its median's 95 % interval to mean something. With n = 1 a side the
bootstrap interval of the ratio has zero width: not certainty, but no spread to measure.
The rule: at least `MIN_SAMPLES` a side. Ten is where the app's own stability check stops
warning about too few samples ("Only 3 samples (< 10)"); below six a distribution-free 95 %
interval of a median does not even exist (the whole sample range covers less than 95 %).
"""

from __future__ import annotations

#: Samples a side a verdict needs (see the module's docstring).
MIN_SAMPLES = 10


def too_few_samples(base_n: int, new_n: int) -> str | None:
    """What is said instead of a verdict when a side has too few samples, or None."""
    if base_n >= MIN_SAMPLES and new_n >= MIN_SAMPLES:
        return None
    return f"too few samples: n = {base_n} and {new_n} (a verdict needs {MIN_SAMPLES} a side); no verdict"
