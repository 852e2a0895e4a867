"""Render the application icon from resources/icons/cryptobench.svg.

Writes, beside the SVG:
  cryptobench-N.png   N in ICON_SIZES (Linux hicolor theme sizes; the window icon)
  cryptobench.ico     Windows executable icon (PNG-compressed entries, 16-256 px)
  cryptobench.icns    macOS bundle icon (PNG entries, 16-1024 px)

The rendered files are committed, so building the app needs neither this script
nor QtSvg at runtime. Run it after editing the SVG:
  .venv/bin/python packaging/make_icons.py [OUT_DIR]
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICON_DIR = Path(__file__).resolve().parents[1] / "resources" / "icons"
SVG = ICON_DIR / "cryptobench.svg"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types holding PNG data, by pixel size (Apple's "icns" format).
ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09", 1024: b"ic10"}


def render_png(renderer: QSvgRenderer, size: int) -> bytes:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICO file whose entries are PNG images (valid since Windows Vista)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        png = pngs[size]
        dim = 0 if size >= 256 else size  # 0 means 256 in an ICO directory entry
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(png), offset)
        blobs += png
        offset += len(png)
    return header + entries + blobs


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    body = b"".join(ICNS_TYPES[size] + struct.pack(">I", 8 + len(png)) + png for size, png in sorted(pngs.items()))
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main(argv: list[str] | None = None) -> int:
    """Render into resources/icons/, or into the folder given as the first argument.

    A second argument names another SVG to render (the tests render a perturbed copy
    to prove the staleness check notices a real change).
    """
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else ICON_DIR
    svg = Path(args[1]) if len(args) > 1 else SVG
    out.mkdir(parents=True, exist_ok=True)
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841  (painting needs it)
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        print(f"error: {svg}: not a valid SVG", file=sys.stderr)
        return 1
    all_sizes = sorted(set(ICON_SIZES) | set(ICO_SIZES) | set(ICNS_TYPES))
    pngs = {size: render_png(renderer, size) for size in all_sizes}
    for size in ICON_SIZES:
        (out / f"cryptobench-{size}.png").write_bytes(pngs[size])
    (out / "cryptobench.ico").write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    (out / "cryptobench.icns").write_bytes(icns_bytes({s: pngs[s] for s in ICNS_TYPES}))
    print(f"wrote {len(ICON_SIZES)} PNGs, cryptobench.ico and cryptobench.icns to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
