"""Where each captioned figure is on its page: its drawings and images, with its own text labels.

A figure is what the page paints that is not running text: vector paths (plots, diagrams) and
images, grouped into clusters of marks that touch, plus the short label lines that
:mod:`engine.ingest.regions` calls figure text. A figure caption ("Figure 3: ...") owns the
clusters right above it (or beside it, or, failing both, below it), and the region grows from the
nearest one over its neighbours until it would take in a line of running text, a table or another
caption.

Only pages with a figure caption are looked at: a figure with no caption has nothing that names
it, so nothing can cite it as a figure (its labels stay figure text, searchable as before). The
marks come from ``Page.get_bboxlog`` (one rectangle per painted path or image, no path details),
which costs about a third of what ``get_drawings`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.ingest.layout import PageLayout
from engine.ingest.regions import CAPTION, TEXT, figure_caption
from engine.types import Rect

# Marks closer than this (points) belong to one cluster: the axis, ticks and bars of one plot.
_TOUCH = 3.0
# A region grows over marks and labels this close to it (points): panels of one figure, a legend.
_REACH = 14.0
# A cluster thinner than this (points) on either side is a rule, an underline or a fraction bar.
_THIN = 8.0
_BACKGROUND_SHARE = 0.6  # a mark over this share of the page is a background, not a figure
_MIN_SIDE = 20.0  # a region smaller than this on either side is no figure
_WALL_WORDS = 4  # a line of running text has at least this many words
_PAINTS = frozenset({"fill-path", "stroke-path", "fill-image", "fill-shade", "fill-imgmask"})
_IMAGE_MASK_SIDE = 20.0  # smaller image masks are a Type 3 font's glyphs, i.e. text


@dataclass(frozen=True)
class FoundFigure:
    """A figure caption's lines and the region of the figure it names, in the layout's coordinates."""

    page: int
    caption: Rect  # the caption's lines together
    region: Rect
    label: str  # the caption's opening words ("Figure 3")


def has_figure_caption(layout: PageLayout) -> bool:
    """Whether the page has a line that opens a figure caption: only then are its marks read."""
    return any(layout.kinds[index] == CAPTION and figure_caption(layout.lines[index].text)
               for index in layout.region_starts if index < len(layout.kinds))


def page_marks(page: Any) -> list[Rect]:
    """The rectangles of what ``page`` paints other than text (an unrotated page: the words' coordinates)."""
    area = page.rect.width * page.rect.height
    marks = []
    for kind, box in page.get_bboxlog():
        if kind not in _PAINTS:
            continue
        x0, y0, x1, y1 = box
        if kind == "fill-imgmask" and (x1 - x0 < _IMAGE_MASK_SIDE or y1 - y0 < _IMAGE_MASK_SIDE):
            continue
        if (x1 - x0) * (y1 - y0) > _BACKGROUND_SHARE * area or (x1 - x0 <= 0 and y1 - y0 <= 0):
            continue
        marks.append(Rect(x0, y0, x1, y1))
    return marks


def cluster(rects: Sequence[Rect], tolerance: float = _TOUCH) -> list[Rect]:
    """Join rectangles that touch or lie within ``tolerance`` of each other, until none do."""
    clusters: list[Rect] = []
    for rect in sorted(rects, key=lambda r: (r.y0, r.x0)):
        merged = rect
        # A union can reach clusters it did not touch before: merge until it stops growing.
        grown = True
        while grown:
            grown = False
            rest = []
            for other in clusters:
                if _near(merged, other, tolerance):
                    merged, grown = merged.union(other), True
                else:
                    rest.append(other)
            clusters = rest
        clusters.append(merged)
    return clusters


def _near(a: Rect, b: Rect, tolerance: float) -> bool:
    return (a.x0 - tolerance <= b.x1 and b.x0 - tolerance <= a.x1
            and a.y0 - tolerance <= b.y1 and b.y0 - tolerance <= a.y1)


def _centre_in(rect: Rect, area: Rect) -> bool:
    cx, cy = (rect.x0 + rect.x1) / 2, (rect.y0 + rect.y1) / 2
    return area.x0 < cx < area.x1 and area.y0 < cy < area.y1


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return min(a1, b1) - max(a0, b0)


def find_figures(layout: PageLayout, marks: Sequence[Rect]) -> list[FoundFigure]:
    """The region of each figure captioned on this page (a caption whose figure is not found has none)."""
    shapes = [rect for rect in cluster(marks) if rect.x1 - rect.x0 >= _THIN and rect.y1 - rect.y0 >= _THIN]
    captions = _captions(layout)
    if not shapes or not captions:
        return []
    # Labels join a figure; any other line a region may not take in, unless it is drawn inside a
    # mark (the words in a diagram's boxes read like text).
    labels, walls = [], []
    margin = set(layout.margin_lines())  # running heads and page numbers: neither labels nor walls
    for index, line in enumerate(layout.lines):
        kind = layout.kinds[index] if layout.kinds else "text"
        if kind == CAPTION or index in margin:
            continue
        # Running text stops a figure; short lines (labels, a table inside the figure) and words drawn
        # inside a mark (the words in a diagram's boxes read like text) join it.
        if kind == TEXT and len(line.words) >= _WALL_WORDS and not any(line.rect.within(s, 2.0) for s in shapes):
            walls.append(line.rect)
        else:
            labels.append(line.rect)
    figures = []
    for position, (caption, label) in enumerate(captions):
        others = [rect for i, (rect, _) in enumerate(captions) if i != position]
        region = _region(caption, shapes, labels, walls + others, others)
        if region is not None:
            region = Rect(max(0.0, region.x0 - 1), max(0.0, region.y0 - 1),
                          min(layout.width, region.x1 + 1), min(layout.height, region.y1 + 1))
            figures.append(FoundFigure(layout.number, caption, region, label))
    return figures


def _captions(layout: PageLayout) -> list[tuple[Rect, str]]:
    """Each figure caption on the page: the box of its lines in its opening line's column, and its label.

    A caption set beside its figure may go on below it across the page; those lines are left out, or the
    caption would seem to lie under the figure it stands beside."""
    found = []
    for start in sorted(layout.region_starts):
        if start >= len(layout.kinds) or layout.kinds[start] != CAPTION:
            continue
        label = figure_caption(layout.lines[start].text)
        if label is None:
            continue
        box = opener = layout.lines[start].rect
        end = start + 1
        while end < len(layout.lines) and layout.kinds[end] == CAPTION and end not in layout.region_starts:
            if layout.lines[end].rect.x0 >= opener.x0 - 6:
                box = box.union(layout.lines[end].rect)
            end += 1
        found.append((box, label))
    return found


def _region(caption: Rect, shapes: Sequence[Rect], labels: Sequence[Rect], walls: Sequence[Rect],
            other_captions: Sequence[Rect]) -> Rect | None:
    """The figure ``caption`` names: seeded by the nearest shape above or beside it (else below it), then grown."""
    seeds = [(seed[0], side, seed[1]) for side in ("above", "beside")
             if (seed := _seed(caption, shapes, walls, other_captions, side)) is not None]
    if not seeds:
        seeds = [(seed[0], "below", seed[1]) for seed in [_seed(caption, shapes, walls, other_captions, "below")]
                 if seed is not None]
    for _, side, shape in sorted(seeds, key=lambda seed: seed[0]):
        region = _grow(shape, caption, shapes, labels, walls, other_captions, side)
        if region.x1 - region.x0 >= _MIN_SIDE and region.y1 - region.y0 >= _MIN_SIDE:
            return region
    return None


def _seed(caption: Rect, shapes: Sequence[Rect], walls: Sequence[Rect], other_captions: Sequence[Rect],
          side: str) -> tuple[float, Rect] | None:
    """The shape nearest the caption on ``side`` with nothing but space between them, and its distance."""
    best: tuple[float, Rect] | None = None
    height = caption.y1 - caption.y0
    for shape in shapes:
        if side == "beside":
            # Beside: the caption's lines lie level with the shape, left or right of it, and not in it.
            if _overlap(shape.y0, shape.y1, caption.y0, caption.y1) < 0.6 * min(height, shape.y1 - shape.y0):
                continue
            gap = max(caption.x0 - shape.x1, shape.x0 - caption.x1)
            if gap < 0 or gap > 3 * _REACH:
                continue
            # A shape with another caption straight under or over it is that caption's figure.
            if any(_overlap(shape.x0, shape.x1, other.x0, other.x1) > 0
                   and min(abs(other.y0 - shape.y1), abs(shape.y0 - other.y1)) < 3 * _REACH
                   for other in other_captions):
                continue
            between = Rect(min(shape.x1, caption.x1), max(shape.y0, caption.y0),
                           max(shape.x0, caption.x0), min(shape.y1, caption.y1))
        else:
            if _overlap(shape.x0, shape.x1, caption.x0, caption.x1) <= 0:
                continue
            gap = caption.y0 - shape.y1 if side == "above" else shape.y0 - caption.y1
            if gap < -2:
                continue
            # A shape closer to another caption on this side is that caption's figure.
            if any(_owns(other, caption, shape, side) for other in other_captions):
                continue
            x0, x1 = max(shape.x0, caption.x0), min(shape.x1, caption.x1)
            between = (Rect(x0, shape.y1, x1, caption.y0) if side == "above" else Rect(x0, caption.y1, x1, shape.y0))
        if any(_overlap(wall.x0, wall.x1, between.x0, between.x1) > 0
               and _overlap(wall.y0, wall.y1, between.y0, between.y1) > 0 for wall in walls):
            continue
        if best is None or gap < best[0]:
            best = (gap, shape)
    return best


def _owns(other: Rect, caption: Rect, shape: Rect, side: str) -> bool:
    """Whether caption ``other`` has a better claim to ``shape`` than ``caption``: it lies on the same side
    of it, straight across from it, and nearer (or as near, where ``caption`` is not straight across)."""
    if _overlap(shape.x0, shape.x1, other.x0, other.x1) <= 0:
        return False
    gap = caption.y0 - shape.y1 if side == "above" else shape.y0 - caption.y1
    other_gap = other.y0 - shape.y1 if side == "above" else shape.y0 - other.y1
    if other_gap < -2:
        return False
    across = _overlap(shape.x0, shape.x1, caption.x0, caption.x1) > 0
    return other_gap < gap - 2 or (not across and other_gap <= max(1.5 * gap, gap + 20))


def _grow(seed: Rect, caption: Rect, shapes: Sequence[Rect], labels: Sequence[Rect], walls: Sequence[Rect],
          other_captions: Sequence[Rect], side: str) -> Rect:
    """``seed`` united with every shape and label in reach, as long as the union takes in no wall and no
    part nearer another caption (two figures side by side, each over its own caption)."""
    region = seed
    pending = [*shapes, *labels]
    grown = True
    while grown:
        grown = False
        rest = []
        for part in pending:
            if part == region or part.within(region, 0.0):
                continue
            if not _near(region, part, _REACH):
                rest.append(part)
                continue
            candidate = region.union(part)
            if side != "beside" and any(_owns(other, caption, part, side) for other in other_captions):
                rest.append(part)
                continue
            if _beyond_caption(candidate, caption, side) or any(_centre_in(wall, candidate) for wall in walls):
                rest.append(part)
                continue
            region, grown = candidate, True
        pending = rest
    return region


def _beyond_caption(region: Rect, caption: Rect, side: str) -> bool:
    """Whether ``region`` has grown over its own caption, or past it to the caption's far side."""
    if _overlap(region.x0, region.x1, caption.x0, caption.x1) > 0 and \
            _overlap(region.y0, region.y1, caption.y0, caption.y1) > 0:
        return True
    if side == "above":
        return region.y1 > caption.y0 + 2
    if side == "below":
        return region.y0 < caption.y1 - 2
    return False
