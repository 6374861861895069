"""What a figure's drawing needs to be read on a narrow screen.

A figure is an SVG drawn at some width (its viewBox) with labels of some size. Scaled down to a
phone's 390 px, a 700-unit drawing with 11-unit labels shows them at 6 px: unreadable. The page
gives each figure the width at which its smallest label is LEGIBLE_PX, and on a narrow screen
shows it at that width in a frame the reader swipes sideways (book.css), or taps to open large."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

LEGIBLE_PX = 10          # the smallest label, in CSS px, on any screen
_SIZE = re.compile(r"font-size\s*:\s*([\d.]+)px")


class FigureError(ValueError):
    """An SVG the book cannot measure; the message says what is missing."""


def legible_width(svg: Path) -> int:
    """The width in CSS px at which the smallest label of `svg` is LEGIBLE_PX tall, or the
    drawing's own width if its labels are already that big."""
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as error:
        raise FigureError(f"not a well-formed SVG: {error}") from None
    box = (root.get("viewBox") or "").replace(",", " ").split()
    if len(box) != 4:
        raise FigureError("its <svg> has no viewBox=\"0 0 WIDTH HEIGHT\", so its size is unknown")
    width = float(box[2])
    sizes = [float(size) for size in _SIZE.findall(svg.read_text(encoding="utf-8"))]
    sizes += [float(node.get("font-size").removesuffix("px")) for node in root.iter()
              if node.get("font-size") and re.fullmatch(r"[\d.]+(px)?", node.get("font-size"))]
    smallest = min(sizes, default=LEGIBLE_PX)
    return round(width * max(1.0, LEGIBLE_PX / smallest))
