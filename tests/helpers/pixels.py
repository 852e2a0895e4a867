"""Compare rendered images with a stated tolerance, never exactly.

Qt's raster engine picks its blending code at run time from the CPU's SIMD features
(SSE2, SSSE3, AVX2, AVX-512). The paths round premultiplied-alpha arithmetic
differently, so the same Qt build renders the same picture a level or two apart on
antialiased edges, depending on the machine. Seen on two machines with PySide6 6.11.3:
2 pixels of the 22 px icon, 16 of the 256 px one, each one level apart.

Colours are compared premultiplied by their alpha, as Qt paints them: a PNG stores
straight alpha, and a nearly transparent corner pixel (alpha 1 of 255) un-premultiplies
a one-level rounding into a colour up to 200 levels off, though nobody can see it.

A picture that *changed* differs by far more: a colour moved by 16 levels, or an edge
shifted by a fraction of a pixel, which moves the coverage of the edge pixels by tens
of levels. The tolerance sits between the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtGui import QImage

#: Largest difference of any channel (0-255) that rounding alone produces. Each
#: antialiased pixel goes through at most a few blends (fill, gradient, stroke), each
#: rounding by at most one level on any SIMD path.
ROUNDING_LEVELS = 4


@dataclass(frozen=True)
class PixelDifference:
    """How two same-sized images differ."""

    max_levels: int  # largest per-channel difference, 0-255
    pixels_over: int  # pixels with any channel differing by more than the tolerance
    tolerance: int

    @property
    def same_picture(self) -> bool:
        return self.pixels_over == 0


def _rgba(image: QImage) -> np.ndarray:
    converted = image.convertToFormat(QImage.Format.Format_RGBA8888_Premultiplied)
    width, height = converted.width(), converted.height()
    buffer = np.frombuffer(converted.constBits(), dtype=np.uint8, count=converted.sizeInBytes())
    # Rows may be padded to a 4-byte boundary; 4-byte pixels never are, but slice to be sure.
    pixels = buffer.reshape(height, converted.bytesPerLine())[:, : width * 4].reshape(height, width, 4)
    return pixels.copy()  # the buffer dies with `converted` when this function returns


def compare(a: QImage, b: QImage, tolerance: int = ROUNDING_LEVELS) -> PixelDifference:
    """Per-pixel, per-channel comparison of two images of the same size."""
    if a.size() != b.size():
        raise AssertionError(f"sizes differ: {a.width()}x{a.height()} against {b.width()}x{b.height()}")
    delta = np.abs(_rgba(a).astype(np.int16) - _rgba(b).astype(np.int16))
    per_pixel = delta.max(axis=2)
    return PixelDifference(
        max_levels=int(per_pixel.max(initial=0)), pixels_over=int((per_pixel > tolerance).sum()), tolerance=tolerance
    )
