"""The HTML report's bars of what `gpuprof try` measured: no label overlaps another label, a bar's
spread or its estimate tick, and none leaves the picture, whatever the values and names."""

import json
import re

import pytest

from gpuprof.present.render.html_plots import try_plot
from tests.golden import outputs

GLYPH_W, GLYPH_H = 7.2, 12.0      # a 12 px sans-serif face, generously: wider than its average glyph

TEXT = re.compile(r'<text class="(\w+)" x="([-\d.]+)" y="([-\d.]+)"(?: text-anchor="(\w+)")?>([^<]*)')
LINE = re.compile(r'<line class="(range|marker)" x1="([-\d.]+)" x2="([-\d.]+)" y1="([-\d.]+)" y2="([-\d.]+)"')


def labels(svg: str) -> list:
    """(kind, text, left, right, top, bottom) of every label, from its anchor and its length."""
    boxes = []
    for kind, x, y, anchor, text in TEXT.findall(svg):
        x, y, width = float(x), float(y), GLYPH_W * len(text.replace("&amp;", "&"))
        left = {"end": x - width, "middle": x - width / 2}.get(anchor, x)
        boxes.append((kind, text, left, left + width, y - GLYPH_H + 2, y + 2))
    return boxes


def overlap(a, b) -> bool:
    return a[2] < b[3] and b[2] < a[3] and a[4] < b[5] and b[4] < a[5]


def check_layout(svg: str) -> None:
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    boxes = labels(svg)
    assert boxes
    for i, a in enumerate(boxes):
        assert 0 <= a[2] and a[3] <= width, f"{a[1]!r} leaves the picture"
        for b in boxes[i + 1:]:
            assert not overlap(a, b), f"{a[1]!r} overlaps {b[1]!r}"
    for kind, x1, x2, y1, y2 in LINE.findall(svg):
        line = (kind, "", min(float(x1), float(x2)) - 1.5, max(float(x1), float(x2)) + 1.5,
                min(float(y1), float(y2)), max(float(y1), float(y2)))
        for box in boxes:
            assert not overlap(box, line), f"{box[1]!r} crosses a {kind} line"


def plot(rows: list) -> str:
    record = {"rows": [{"label": "baseline", "speedup": 1.0}] + rows}
    return try_plot({}, record)


def row(label, speedup, low=None, high=None, estimate=None):
    return {"label": label, "speedup": speedup, "speedup_min": low, "speedup_max": high, "estimate": estimate}


def test_the_saved_try_s_bars_have_labels_apart():
    with open(outputs.TRY_RECORD, "r", encoding="utf-8") as handle:
        check_layout(try_plot({}, json.load(handle)))


@pytest.mark.parametrize("rows", [
    [row("input ceiling", 63.93, 58.5, 69.3, 34.9), row("echo x2", 1.73, 1.7, 1.8, 1.94)],       # spread past the top
    [row("a", 0.05, 0.01, 0.1, 120.0), row("b", 119.5)],                                           # tick at the far right
    [row("hdf5-chunk-cache: hdf5_cache_bytes=2097152, hdf5_keep_handles=true", 1.2, 1.1, 1.3)],    # a long name
    [row(f"num_workers={n}", 1.0 + n / 10, 0.9, 1.5 + n, 1.4) for n in range(12)],                 # many rows
    [row("slower", 0.5, 0.45, 0.55, 2.0), row("same", 1.0, 0.99, 1.01, 1.0)],
])
def test_labels_never_overlap_whatever_the_values(rows):
    check_layout(plot(rows))
