"""Chapter 3's spread figure (layerwise.figures.ch03.log_moment_spreads) draws what it is given."""

from __future__ import annotations

import numpy as np
from conftest import assert_fits_column

from layerwise.chapter import small_texts
from layerwise.figures import ch03 as F
from layerwise.stats import Estimate


def test_log_moment_spreads_draws_ours_and_the_authors_two_widths():
    q = [50, 100, 150, 200]
    spread = {
        k: {
            "ours": [Estimate(m * f, 0.1) for m in (1.0, 1.5, 1.8, 2.1)],
            "w128": np.array([1.1, 1.6, 1.9, 2.2]) * f,
            "w512": np.array([0.55, 0.8, 0.95, 1.1]) * f,
        }
        for k, f in (("nu2", 1.0), ("mu2dx", 0.5))
    }
    fig = F.log_moment_spreads(q, spread)
    assert len(fig.axes) == 2
    for ax, key in zip(fig.axes, ("nu2", "mu2dx"), strict=True):
        ys = [line.get_ydata() for line in ax.get_lines()]
        for col in ("w128", "w512"):
            assert any(np.allclose(y, spread[key][col]) for y in ys), col
        ours = [e.mean for e in spread[key]["ours"]]
        assert any(np.allclose(y, ours) for y in ys)
        assert ax.get_ylim()[0] == 0
    assert_fits_column(fig)
    assert small_texts(fig) == []  # readable at the size the book shows it
