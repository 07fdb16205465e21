"""Reading numbers back from a published raster figure: colour-mapped ``pcolor`` panels and dotted
contour lines.

A ``pcolor`` panel drawn without antialiasing paints every pixel in the colour of the cell that
holds the pixel's centre, and a colour map with ``N`` entries paints a value ``v`` of a panel with
limits ``[0, vmax]`` in entry ``k = ⌊N v / vmax⌋`` (matplotlib's ``Colormap.__call__``), so each
readable cell gives its value to within half an entry, ``vmax / (2N)``.  The cells' positions are
read from the picture itself: the columns (rows) where the colours change are the cell edges, and a
regular lattice of ``n`` cells is fitted to them (:func:`fit_lattice`), which places every cell
without reference to the values it holds.  Dots of a dotted contour are the dark connected
components over the panel; their darkness-weighted centroids are placed on the same lattices.

Used by :mod:`layerwise.poole2016` to digitise Poole et al. (2016), Figs. 1C, 2C and 2D, the way a
reader would with a plot digitiser, but reproducibly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib import colormaps
from scipy import ndimage

from .params import ParameterError


@dataclass(frozen=True)
class Lattice:
    """``n`` cells of ``pitch`` pixels along one axis, the first starting at pixel coordinate
    ``origin`` (pixel ``i`` spans ``[i, i + 1)``; its centre is ``i + 0.5``)."""

    origin: float
    pitch: float
    n: int

    def cell_of(self, pixels: np.ndarray) -> np.ndarray:
        """Cell index holding each pixel's centre (−1 or ``n`` outside the lattice)."""
        cells = np.floor((np.asarray(pixels) + 0.5 - self.origin) / self.pitch).astype(int)
        return np.clip(cells, -1, self.n)

    def position(self, coordinate: np.ndarray) -> np.ndarray:
        """A continuous pixel coordinate in cell units (0 at the lattice's first edge)."""
        return (np.asarray(coordinate, dtype=float) - self.origin) / self.pitch


def colour_table(cmap: str, n_colours: int = 256) -> np.ndarray:
    """The ``(n_colours, 3)`` RGB table (0–255) of a matplotlib colour map."""
    if cmap not in colormaps:
        raise ParameterError(f"cmap={cmap!r} is not a matplotlib colour map")
    return colormaps[cmap](np.linspace(0.0, 1.0, n_colours))[:, :3] * 255.0


def decode_colours(rgb: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest colour-table entry of every pixel of an ``(H, W, 3)`` image and its RGB distance."""
    rgb = np.asarray(rgb, dtype=float)
    if rgb.ndim != 3 or rgb.shape[-1] != 3:
        raise ParameterError(f"rgb must have shape (H, W, 3), not {rgb.shape}")
    dist = np.sqrt(((rgb[:, :, None, :] - table[None, None]) ** 2).sum(-1))
    return dist.argmin(-1), dist.min(-1)


def colour_mapped_boxes(
    rgb: np.ndarray, cmap: str = "viridis", min_lines: int = 20
) -> list[tuple[int, int, int, int]]:
    """Boxes ``(x0, x1, y0, y1)`` (inclusive pixels) of the runs of columns with at least
    ``min_lines`` pixels painted from the colour map: the panels and their colour bars, left to
    right."""
    _, dist = decode_colours(rgb, colour_table(cmap))
    painted = dist < 2.5
    columns = painted.sum(0) >= min_lines
    labels, n = ndimage.label(columns)
    boxes = []
    for k in range(1, n + 1):
        cols = np.flatnonzero(labels == k)
        block = painted[:, cols[0] : cols[-1] + 1]
        rows = np.flatnonzero(block.sum(1) > block.shape[1] // 2)
        boxes.append((int(cols[0]), int(cols[-1]), int(rows[0]), int(rows[-1])))
    return boxes


def fit_lattice(
    change: np.ndarray,
    n: int,
    first: int,
    last: int,
    pitch_slack: float = 0.08,
    anchors: tuple[np.ndarray, np.ndarray] | None = None,
) -> Lattice:
    """The lattice of ``n`` cells whose edges best match the observed colour changes.

    ``change[i]`` is the fraction of lines whose colour differs between pixels ``i`` and ``i + 1``
    of the panel; ``first`` and ``last`` are the first and last pixels painted by the panel (the
    lattice must cover both). The score is Σ change at predicted edges − Σ change elsewhere, over a
    grid of origins (0.01 px) and pitches (0.0005 px); of the best-scoring set the central one is
    returned.

    Free, the origin is sought within 1.5 px before the first painted pixel; a first cell hidden
    further under the axes' frame makes the fit slip by a whole cell (lattices one cell apart match
    the pixel edges equally well, and only the one inside the range is found). With
    ``anchors = (pixels, cells)`` — pixel coordinates of marks drawn at known lattice coordinates
    (cell units from the first edge) — origins are sought over a whole cell more and the
    registration is the marks': for each pitch p only origins within p/2 of the marks'
    least-squares origin mean(pixels − p·cells) are allowed, so the marks say which cell is which
    and the colour edges place the lattice within its cell (the marks need only be right to less
    than half a cell).
    """
    change = np.asarray(change, dtype=float)
    if n < 2 or last - first + 1 < n:
        raise ParameterError(f"n={n}: need 2 ≤ n ≤ the panel's {last - first + 1} pixels")
    if anchors is not None:
        a_px, a_cells = (np.atleast_1d(np.asarray(a, dtype=float)) for a in anchors)
        if a_px.size == 0 or a_px.shape != a_cells.shape or a_px.ndim != 1:
            raise ParameterError(
                "anchors must be (pixels, cells), two equal-length non-empty 1-D arrays: got "
                f"shapes {a_px.shape} and {a_cells.shape}"
            )
    base = (last - first + 1) / n
    pitches = np.arange(base - pitch_slack, base + pitch_slack, 0.0005)
    reach = 1.5 + (base + pitch_slack if anchors is not None else 0.0)
    origins = np.arange(first - reach, first + 0.5, 0.01)
    pix = np.arange(change.size + 1)
    o, p = np.meshgrid(origins, pitches, indexing="ij")
    cells = np.floor((pix[None, None, :] + 0.5 - o[..., None]) / p[..., None])
    edge = np.diff(cells, axis=-1) != 0  # (O, P, len(change)): an edge between i and i + 1
    weights = 2.0 * change[None, None, :] - 1.0
    score = (edge * weights).sum(-1)
    covers = (o <= first + 0.5) & (o + n * p >= last + 0.5)
    if anchors is not None:  # edge strokes may paint a pixel beyond the last cell
        covers = (o <= first + 1.5) & (o + n * p >= last - 0.5)
        marked = np.mean(a_px[None, :] - pitches[:, None] * a_cells[None, :], axis=1)  # (P,)
        covers &= np.abs(o - marked[None, :]) <= p / 2
        if not covers.any():
            raise ParameterError(
                f"anchors={anchors!r} place no lattice of {n} cells over pixels {first}..{last}"
            )
    score = np.where(covers, score, -np.inf)
    best = np.argwhere(score == score.max())
    i, j = best[len(best) // 2]
    return Lattice(origin=float(origins[i]), pitch=float(pitches[j]), n=n)


def marker_centres(
    rgb: np.ndarray,
    box: tuple[int, int, int, int],
    cmap: str = "viridis",
    margin: int = 6,
    min_pixels: int = 5,
    chroma: float = 60.0,
) -> np.ndarray:
    """Centres ``(x, y)`` (pixel coordinates, pixel ``i`` spanning ``[i, i + 1)``) of the coloured
    markers drawn over a colour-mapped panel ``box`` (up to ``margin`` pixels outside it): the
    connected components of at least ``min_pixels`` pixels that are neither a colour of ``cmap``
    (farther than 20 RGB units from every entry) nor grey (max − min channel ≥ ``chroma``),
    each centred on its pixels' mean. Sorted from the top of the picture down."""
    x0, x1, y0, y1 = box
    img = np.asarray(rgb, dtype=float)
    ya, xa = max(y0 - margin, 0), max(x0 - margin, 0)
    sub = img[ya : y1 + margin + 1, xa : x1 + margin + 1]
    _, dist = decode_colours(sub, colour_table(cmap))
    mask = (dist > 20.0) & (sub.max(-1) - sub.min(-1) >= chroma)
    labels, n = ndimage.label(mask)
    out = []
    for k in range(1, n + 1):
        rows, cols = np.nonzero(labels == k)
        if rows.size >= min_pixels:
            out.append((cols.mean() + xa + 0.5, rows.mean() + ya + 0.5))
    return np.array(sorted(out, key=lambda p: p[1])).reshape(-1, 2)


@dataclass(frozen=True)
class PcolorReading:
    """The colour-table entry read in each cell of a panel (−1 where no clean pixel was found)."""

    entry: np.ndarray
    """(ny, nx) entries, row 0 at the *top* of the picture."""
    pixels: np.ndarray
    """(ny, nx) number of clean pixels that agreed on the entry."""
    conflicts: int
    """cells whose clean pixels disagreed (the majority entry is kept)."""
    x: Lattice
    y: Lattice


def read_pcolor(
    rgb: np.ndarray,
    box: tuple[int, int, int, int],
    cells: tuple[int, int],
    cmap: str = "viridis",
    clean: float = 1.0,
    guard: int = 2,
    anchors: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> PcolorReading:
    """Read a non-antialiased ``pcolor`` panel occupying pixels ``box = (x0, x1, y0, y1)``
    (inclusive) with ``cells = (ny, nx)`` cells.

    A pixel is clean if its colour is within ``clean`` (RGB units) of a table entry and no unclean
    pixel (a marker, a contour, a frame) lies within ``guard`` pixels of it. The cell lattices are
    fitted to the colour changes (:func:`fit_lattice`), or, for an axis ``"x"``/``"y"`` in
    ``anchors`` (``(pixels, cells)`` in the picture's coordinates: marks drawn at known lattice
    coordinates, cells counted from the left / top edge), registered on those marks
    (:func:`fit_lattice`'s ``anchors``).
    """
    anchors = dict(anchors or {})
    if set(anchors) - {"x", "y"}:
        raise ParameterError(f"anchors has keys {sorted(anchors)}: allowed are 'x' and 'y'")
    x0, x1, y0, y1 = box
    ny, nx = cells
    entry, dist = decode_colours(np.asarray(rgb)[y0 : y1 + 1, x0 : x1 + 1], colour_table(cmap))
    good = dist < clean
    usable = good & ~ndimage.binary_dilation(~good, iterations=guard)
    changes_x = (entry[:, 1:] != entry[:, :-1]).mean(0)
    changes_y = (entry[1:] != entry[:-1]).mean(1)
    shifted = {
        axis: (np.asarray(at) - (x0 if axis == "x" else y0), values)
        for axis, (at, values) in anchors.items()
    }
    lat_x, lat_y = (
        fit_lattice(changes, k, 0, hi - lo, anchors=shifted.get(axis))
        for axis, changes, k, lo, hi in (("x", changes_x, nx, x0, x1), ("y", changes_y, ny, y0, y1))
    )
    cx = lat_x.cell_of(np.arange(x1 - x0 + 1))
    cy = lat_y.cell_of(np.arange(y1 - y0 + 1))
    out = np.full((ny, nx), -1)
    count = np.zeros((ny, nx), dtype=int)
    conflicts = 0
    for r in range(ny):
        rows = np.flatnonzero(cy == r)
        for c in range(nx):
            cols = np.flatnonzero(cx == c)
            vals = entry[np.ix_(rows, cols)][usable[np.ix_(rows, cols)]]
            if vals.size == 0:
                continue
            uniq, n = np.unique(vals, return_counts=True)
            out[r, c] = int(uniq[n.argmax()])
            count[r, c] = int(n.max())
            conflicts += int(uniq.size > 1)
    shifted = (
        Lattice(lat_x.origin + x0, lat_x.pitch, nx),
        Lattice(lat_y.origin + y0, lat_y.pitch, ny),
    )
    return PcolorReading(entry=out, pixels=count, conflicts=conflicts, x=shifted[0], y=shifted[1])


def dark_dots(
    rgb: np.ndarray,
    box: tuple[int, int, int, int],
    cmap: str = "viridis",
    darker: float = 60.0,
    exclude: list[tuple[float, float]] | None = None,
    radius: float = 4.0,
) -> np.ndarray:
    """Centroids ``(x, y)`` in pixel coordinates of the dark dots drawn over a colour-mapped panel.

    A pixel belongs to a dot if it is at least ``darker`` (luminance, 0–255) darker than the
    median of the clean colour-mapped pixels around it (7 × 7) and not itself a table colour;
    the centroid of each connected component is weighted by that darkness. Dots whose centroid lies
    within ``radius`` pixels of a point in ``exclude`` (markers drawn at known places) are dropped.
    """
    x0, x1, y0, y1 = box
    sub = np.asarray(rgb, dtype=float)[y0 : y1 + 1, x0 : x1 + 1]
    _, dist = decode_colours(sub, colour_table(cmap))
    lum = sub @ np.array([0.299, 0.587, 0.114])
    clean = np.where(dist < 1.0, lum, np.nan)
    padded = np.pad(clean, 3, constant_values=np.nan)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (7, 7))
    background = np.nanmedian(windows.reshape(*clean.shape, 49), axis=-1)
    darkness = np.nan_to_num(background - lum)
    mask = (darkness >= darker) & (dist >= 1.0)
    labels, n = ndimage.label(mask)
    if n == 0:
        return np.zeros((0, 2))
    weights = np.where(mask, darkness, 0.0)
    centres = np.array(ndimage.center_of_mass(weights, labels, np.arange(1, n + 1)))  # (row, col)
    points = np.column_stack([centres[:, 1] + x0 + 0.5, centres[:, 0] + y0 + 0.5])
    if exclude:
        far = np.ones(len(points), dtype=bool)
        for ex, ey in exclude:
            far &= np.hypot(points[:, 0] - ex, points[:, 1] - ey) > radius
        points = points[far]
    return points
