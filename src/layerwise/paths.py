"""Where the book keeps its results: ``results/`` at the repository root (SPEC §1)."""

from __future__ import annotations

import os
from pathlib import Path


def repo_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The nearest ancestor of ``start`` (default: cwd) holding ``_toc.yml`` and ``notebooks/``.

    Falls back to ``start`` itself when the package is used outside the repository.
    """
    here = Path(start or os.getcwd()).resolve()
    for d in (here, *here.parents):
        if (d / "_toc.yml").exists() and (d / "notebooks").is_dir():
            return d
    return here


def results_root(root: str | os.PathLike[str] | None = None) -> Path:
    """``$LAYERWISE_RESULTS`` if set, else ``<root>/results`` (``root`` defaults to the repository
    containing the working directory)."""
    env = os.environ.get("LAYERWISE_RESULTS")
    if env:
        return Path(env).resolve()
    return (Path(root) if root is not None else repo_root()) / "results"


def store_root() -> Path:
    """The results store, shared by all scales: ``<results>/store``."""
    return results_root() / "store"
