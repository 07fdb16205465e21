"""Shared test set-up: figures are drawn off-screen in the book's style and closed after each
test."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _book_figure_style(request):
    """For the figure tests: the book's style, as ``Chapter`` applies it (it registers seaborn's
    colormaps), and every figure closed afterwards."""
    if not request.module.__name__.split(".")[-1].startswith("test_figures_"):
        yield
        return
    from layerwise.plotting import set_style

    set_style()
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def one_torch_thread():
    """Small tensors: one torch thread is faster, and much faster on a loaded machine."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def assert_fits_column(fig) -> None:
    """A book figure is at most ``MAX_FIGURE_WIDTH_IN`` wide (readable at the column width)."""
    from layerwise.chapter import MAX_FIGURE_WIDTH_IN

    assert fig.get_size_inches()[0] <= MAX_FIGURE_WIDTH_IN + 1e-9


def assert_layout_stable(fig) -> None:
    """Saved by ``save_figure`` — which refuses an SVG whose axes sit more than
    ``plotting.LAYOUT_SHIFT`` away from the PNG's — with every warning an error ("constrained_layout
    not applied" included)."""
    import tempfile
    import warnings
    from pathlib import Path

    from layerwise.plotting import save_figure

    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("error")
        save_figure(fig, Path(tmp) / "figure", {"x": [0]})
