"""The object each chapter notebook works through: parameters, store, claims, figures, results.

A notebook does::

    ch = Chapter("07_meanfield_chaos", scale=scale, seed=seed, device=device, params=P)
    arrays = ch.cached("circle", config, compute, code_version=meanfield.CODE_VERSION)
    ch.figure(fig, "circle_pca", "Poole et al., Fig. 3 ...", arrays={...})
    ch.claim("q_star", "...", measured=..., reference=..., tol=..., why=..., source=...)
    ch.finish()   # scorecard + results/<scale>/<chapter>.json
"""

from __future__ import annotations

import json
import re
import time
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .claims import Claim, Ledger
from .params import ParameterError, check_scale, resolve_device
from .paths import results_root, store_root
from .plotting import save_figure, set_style
from .store import ArrayDict, ResultsStore, versions

CHAPTER_NAME = re.compile(r"^\d\d_[a-z0-9_]+$")


def _display(obj: Any) -> None:
    try:
        from IPython.display import display

        display(obj)
    except ImportError:  # pragma: no cover - IPython ships with the book extra
        pass


class Chapter:
    """State of one chapter run: scale, seed, device, results store, claims and figures."""

    def __init__(
        self,
        name: str,
        *,
        scale: str,
        seed: int,
        device: str = "auto",
        params: Mapping[str, Any] | None = None,
        results: str | Path | None = None,
    ):
        if not CHAPTER_NAME.match(name):
            raise ParameterError(f"chapter name={name!r} must look like 'NN_topic'")
        self.name = name
        self.number = int(name[:2])
        self.scale = check_scale(scale)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ParameterError(f"seed={seed!r} must be a non-negative integer")
        self.seed = int(seed)
        self.device = resolve_device(device)
        self.params = dict(params or {})
        root = Path(results) if results is not None else results_root()
        self.results_dir = root / self.scale
        self.figure_dir = self.results_dir / "figures" / name
        self.store = ResultsStore(root / "store" if results is not None else store_root())
        self.ledger = Ledger(self.scale)
        self.figures: list[str] = []
        self._t0 = time.perf_counter()
        set_style()

    # -- randomness ---------------------------------------------------------------------------
    def rng(self, *keys: Any) -> np.random.Generator:
        """A numpy generator determined by the chapter seed and ``keys`` (strings or ints)."""
        words = [self.seed] + [k if isinstance(k, int) else zlib.crc32(str(k).encode()) for k in keys]
        return np.random.default_rng(words)

    def torch_seed(self, *keys: Any) -> int:
        """An integer seed for ``torch.Generator`` determined by the chapter seed and ``keys``."""
        return int(self.rng(*keys).integers(2**62))

    # -- cached computations ------------------------------------------------------------------
    def cached(
        self,
        name: str,
        config: Mapping[str, Any],
        compute: Callable[[], Mapping[str, Any]],
        *,
        code_version: str,
    ) -> ArrayDict:
        """Arrays of ``compute()`` for ``config`` (the chapter seed is added to the key)."""
        entry = self.store.get_or_compute(
            f"{self.name}.{name}",
            {**config, "seed": self.seed},
            compute,
            code_version=code_version,
            device=self.device,
        )
        return entry.arrays

    def cached_blocks(
        self,
        name: str,
        config: Mapping[str, Any],
        n_blocks: int,
        compute_block: Callable[[int], Mapping[str, Any]],
        *,
        code_version: str,
        shared: tuple[str, ...] = (),
    ) -> ArrayDict:
        """Like :meth:`cached` for runs split into resumable blocks concatenated on axis 0
        (arrays named in ``shared`` are identical in every block and kept once)."""
        entry = self.store.get_or_compute_blocks(
            f"{self.name}.{name}",
            {**config, "seed": self.seed},
            n_blocks,
            compute_block,
            code_version=code_version,
            device=self.device,
            progress=True,
            shared=shared,
        )
        return entry.arrays

    # -- claims ---------------------------------------------------------------------------------
    def claim(self, id: str, statement: str, **kw: Any) -> Claim:
        """Record a claim in the ledger (see :meth:`layerwise.claims.Ledger.claim`)."""
        return self.ledger.claim(id, statement, **kw)

    # -- figures --------------------------------------------------------------------------------
    def figure(self, fig: Any, name: str, caption: str, *, arrays: Mapping[str, Any]) -> Path:
        """Save ``fig`` (PNG, SVG and its arrays as NPZ), show it, and show its numbered caption."""
        import matplotlib.pyplot as plt

        if not re.match(r"^[a-z0-9_]+$", name):
            raise ParameterError(f"figure name={name!r} must be lower-case letters, digits and _")
        paths = save_figure(fig, self.figure_dir / name, arrays)
        rel = str(paths[0].relative_to(self.results_dir.parent))
        if rel in self.figures:
            raise ParameterError(f"figure {name!r} is saved twice")
        self.figures.append(rel)
        _display(fig)
        plt.close(fig)
        try:
            from IPython.display import Markdown

            _display(Markdown(f"**Figure {self.number}.{len(self.figures)}.** {caption}"))
        except ImportError:  # pragma: no cover
            pass
        return paths[0]

    # -- the end ------------------------------------------------------------------------------
    def results(self) -> dict[str, Any]:
        """The chapter's machine-readable results (SPEC §1 schema)."""
        return {
            "chapter": self.name,
            "scale": self.scale,
            "seed": self.seed,
            "device": self.device,
            "wall_time_s": round(time.perf_counter() - self._t0, 3),
            "versions": versions(),
            "params": json.loads(json.dumps(self.params, default=str)),
            "claims": [c.to_json() for c in self.ledger.claims],
            "figures": list(self.figures),
            "store": {
                "hits": sum(e[0] == "hit" for e in self.store.events),
                "computed": sum(e[0] == "miss" for e in self.store.events),
                "corrupt": sum(e[0] == "corrupt" for e in self.store.events),
            },
        }

    @property
    def results_path(self) -> Path:
        """Where :meth:`finish` writes the chapter's results: ``results/<scale>/<chapter>.json``."""
        return self.results_dir / f"{self.name}.json"

    def finish(self) -> None:
        """Write ``results/<scale>/<chapter>.json`` and show the scorecard."""
        out = self.results_path
        out.parent.mkdir(parents=True, exist_ok=True)
        data = self.results()
        out.write_text(json.dumps(data, indent=1, ensure_ascii=False))
        try:
            from IPython.display import HTML

            _display(HTML(self.ledger.to_html()))
        except ImportError:  # pragma: no cover
            pass
