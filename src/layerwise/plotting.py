"""The book's one figure style (seaborn-based) and figure saving (SPEC §1 "Figures")."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: Resolution of saved PNGs: 2× for HiDPI screens at the figure's size in inches (the book shows
#: the saved file itself).
RETINA_DPI = 192
#: Colour cycle used by every chapter (seaborn's colour-blind-safe palette).
PALETTE = "colorblind"
#: Sequential colormap for heat-maps and depth-coded curves.
CMAP = "rocket"
#: Diverging colormap for signed quantities (covariances).
CMAP_DIVERGING = "vlag"


def set_style() -> None:
    """Apply the book's style: seaborn ``ticks`` theme, paper context, colour-blind palette."""
    import matplotlib
    import seaborn as sns

    # ticks and legends 10.6 pt: ≥ 10 pt on the page for figures up to the 7.5 in the book allows
    sns.set_theme(context="paper", style="ticks", palette=PALETTE, font_scale=1.2)
    matplotlib.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": RETINA_DPI,  # the saved PNG is also the one the page shows
            "savefig.bbox": "tight",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "legend.frameon": False,
            "svg.fonttype": "none",
            "svg.hashsalt": "layerwise",  # deterministic SVG ids
            "figure.constrained_layout.use": True,
        }
    )


def tight_layout(fig: Any, **kw: Any) -> None:
    """Lay ``fig`` out once, now, with matplotlib's tight layout (``rect`` keeps room for a
    legend outside the panels) in place of the style's constrained layout, which is switched off
    first: the same layout as ``fig.tight_layout`` on a constrained figure, without its warning."""
    fig.set_layout_engine("none")
    fig.tight_layout(**kw)


def depth_colors(n: int) -> list[Any]:
    """``n`` colours from the sequential map, for curves indexed by depth or time."""
    import seaborn as sns

    return sns.color_palette(CMAP, n)


LAYOUT_SHIFT = 0.02
"""How far (a fraction of the figure) an axes may sit apart in a figure's SVG and PNG: the
constrained layout's iterations move an axes by about 1 % between draws; a collapse by tens."""


def save_figure(fig: Any, stem: str | Path, arrays: Mapping[str, Any]) -> list[Path]:
    """Save ``fig`` as ``stem.png`` and ``stem.svg`` and the arrays it was drawn from
    as ``stem.npz``.

    ``arrays`` must be non-empty: every figure in the book is reproducible from saved numbers.
    The two images must have the same layout: an axes placed more than :data:`LAYOUT_SHIFT` of
    the figure apart in the SVG (drawn second, at another resolution) than in the PNG is an error
    (a constrained layout that feeds back on itself collapsed Chapter 2's SVG once).
    Returns the three paths.
    """
    if not arrays:
        raise ValueError("save_figure needs the arrays the figure was drawn from")
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg"), stem.with_suffix(".npz")]
    fig.savefig(paths[0], metadata={"Software": None})
    placed = np.array([ax.get_position().bounds for ax in fig.axes])
    fig.savefig(paths[1], metadata={"Date": None})
    shift = np.abs(np.array([ax.get_position().bounds for ax in fig.axes]) - placed)
    if shift.size and shift.max() > LAYOUT_SHIFT:
        raise ValueError(
            f"figure {stem.name!r}: its SVG's layout differs from its PNG's (an axes moved by "
            f"{shift.max():.0%} of the figure); a legend or colorbar sized from its axes feeds "
            "back into the constrained layout"
        )
    np.savez(paths[2], **{k: np.asarray(v) for k, v in arrays.items()})
    return paths


def is_blank(png: str | Path, min_std: float = 0.01) -> bool:
    """True when an image is (nearly) uniform: the check that a figure has content."""
    import matplotlib.image as mpimg

    img = mpimg.imread(str(png))
    if img.ndim == 3:
        img = img[..., :3].mean(axis=-1)
    return float(np.std(img)) < min_std


def plain_log_labels(fig: Any, lo: float = 1e-4, hi: float = 1e5) -> None:
    """On every log axis of ``fig`` that still has matplotlib's default labels and whose range lies
    within [``lo``, ``hi``]: the same ticks labelled as plain numbers — 0.9, 4.4, 100 — instead of
    9×10⁻¹, 4.4×10⁰, 10². Axes spanning more (10⁻³⁰ … 1) and formatters a figure chose keep
    theirs."""
    from matplotlib.ticker import LogFormatter, LogFormatterSciNotation

    class Plain(LogFormatter):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return f"{x:g}" if super().__call__(x, pos) else ""

    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            default = isinstance(axis.get_major_formatter(), LogFormatterSciNotation)
            if axis.get_scale() == "log" and default and lo <= min(limits) <= max(limits) <= hi:
                base = axis.get_transform().base  # 2 on a base-2 axis: 8, 16, 32 for 2³, 2⁴, 2⁵
                axis.set_major_formatter(Plain(base))
                minor = axis.get_minor_formatter()
                only = getattr(minor, "labelOnlyBase", True)
                axis.set_minor_formatter(Plain(base, labelOnlyBase=only))


def legend_in_headroom(ax: Any, *, ncols: int = 2, pad: float = 0.06, **kwargs: Any) -> Any:
    """A legend in a band of empty space at the top of ``ax``, the way Labatie (2019) lays out
    Figs. 4–5, so that no curve runs under it: the legend is placed at the top in at most
    ``ncols`` columns (fewer if it would be wider than the panel), then the y range is extended
    (in log space on a log axis) so that the top of the panel — the legend's height plus ``pad``
    of the panel — holds no data. Call :func:`clear_legends` after the figure's layout."""
    if not 0 <= pad < 0.5:
        raise ValueError(f"pad={pad!r} must lie in [0, 0.5)")
    renderer = ax.figure.canvas.get_renderer()
    style = dict(loc="upper center", handlelength=1.6, columnspacing=1.0, borderaxespad=0.3)
    box = ax.get_window_extent(renderer)
    for n in range(max(ncols, 1), 0, -1):
        leg = ax.legend(ncols=n, **{**style, **kwargs})
        ext = leg.get_window_extent(renderer)
        if ext.width <= box.width or n == 1:
            break
    _extend_top(ax, min(ext.height / box.height + pad, 0.8))
    return leg


def legend_above(ax: Any, ncols: int) -> Any:
    """A legend in a band above ``ax``, from its left edge, in ``ncols`` columns: for panels
    whose data leave no free corner at any scale. At its natural width: a legend stretched to the
    panel's width (``mode="expand"``) feeds its width back into the constrained layout, which then
    shrinks the panel a little more at every draw (the SVG, drawn after the PNG, collapsed)."""
    return ax.legend(
        loc="lower left",
        bbox_to_anchor=(0, 1.02),
        ncols=ncols,
        borderaxespad=0,
        handlelength=1.2,
        columnspacing=0.8,
    )


def _extend_top(ax: Any, frac: float) -> None:
    """Raise the top of ``ax``'s y range so that the old range fills ``1 − frac`` of it (in log
    space on a log axis)."""
    lo, hi = ax.get_ylim()
    if ax.get_yscale() == "log":
        a, b = np.log10([lo, hi])
        ax.set_ylim(lo, 10 ** (a + (b - a) / (1 - frac)))
    else:
        ax.set_ylim(lo, lo + (hi - lo) / (1 - frac))


def clear_legends(fig: Any, *, step: float = 0.05, tries: int = 8) -> dict[int, int]:
    """After the figure's layout: while a legend placed by :func:`legend_in_headroom` still
    covers plotted points (the layout may have shrunk its panel), raise that panel's top by
    ``step`` of its range, at most ``tries`` times. Returns what is still covered
    (:func:`legends_over_data`; empty when every legend is clear)."""
    for _ in range(tries):
        covered = legends_over_data(fig)
        if not covered:
            return covered
        for i in covered:
            _extend_top(fig.axes[i], step)
    return legends_over_data(fig)


def legend_overlap(ax: Any, *, draw: bool = True) -> int:
    """How many plotted points of the lines of ``ax`` (and of any axes its legend reaches into)
    fall inside its legend's box, in display coordinates: 0 when the legend covers no data.
    ``draw=False`` when the figure has just been laid out (:func:`legends_over_data`)."""
    leg = ax.get_legend()
    if leg is None:
        return 0
    fig = ax.figure
    if draw:
        fig.draw_without_rendering()
    box = leg.get_window_extent()
    n = 0
    for a in fig.axes:
        if a.bbox.overlaps(box):
            for line in a.get_lines():
                xy = line.get_xydata()
                if len(xy) > 2:  # reference lines (axhline: 2 points) are not data
                    x, y = a.transData.transform(xy).T
                    inside = (box.x0 <= x) & (x <= box.x1) & (box.y0 <= y) & (y <= box.y1)
                    n += int(inside.sum())
    return n


def legends_over_data(fig: Any) -> dict[int, int]:
    """For each axes of ``fig`` whose legend covers plotted points, the axes' index and how many
    (:func:`legend_overlap`); empty when no legend covers data. Lays the figure out once."""
    fig.draw_without_rendering()
    counts = {i: legend_overlap(ax, draw=False) for i, ax in enumerate(fig.axes)}
    return {i: n for i, n in counts.items() if n}
