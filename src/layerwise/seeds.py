"""The one way the book derives random streams from a chapter's seed.

``stream(seed, *keys)`` is numpy's ``default_rng([seed, k1, k2, …])`` with integer keys as they are
and other keys by the CRC-32 of their text, so every purpose ("pairs", σ_w, a network index) has its
own independent, reproducible stream; ``torch_seed`` turns a stream into an integer seed for a
``torch.Generator``. ``Chapter.rng``/``Chapter.torch_seed`` and code moved from notebooks into the
package both use these, so a computation draws the same numbers wherever it runs. (The moments
engine keeps its own per-network ``SeedSequence([seed, net, stream, tag])``: changing it would
change every simulation of Chapters 3–5.)"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np


def stream(seed: int, *keys: Any) -> np.random.Generator:
    """The numpy generator of ``seed`` for ``keys`` (Python ints as they are, other keys
    by CRC-32)."""
    words = [int(seed)] + [k if isinstance(k, int) else zlib.crc32(str(k).encode()) for k in keys]
    return np.random.default_rng(words)


def torch_seed(seed: int, *keys: Any) -> int:
    """An integer seed for ``torch.Generator`` from the stream of ``seed`` and ``keys``."""
    return int(stream(seed, *keys).integers(2**62))
