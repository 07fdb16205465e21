"""The object each chapter notebook works through: parameters, store, claims, figures, results.

A notebook does::

    ch = Chapter("07_meanfield_chaos", scale=scale, seed=seed, device=device, params=P)
    arrays = ch.cached_call(study.circle_ensemble, width=..., seed=ch.torch_seed("circle"))
    ch.figure(fig, "circle_pca", "Poole et al., Fig. 3 ...", arrays={...})
    ch.claim("q_star", "...", kind="predicts", measured=..., reference=..., tol=...,
             why=..., source=...)
    ch.glue("q_star", value, se=se)   # a measured number for the prose: {glue}`q_star`
    ch.finish()   # scorecard + results/<scale>/<chapter>.json
"""

from __future__ import annotations

import base64
import functools
import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import seeds
from .claims import Ledger
from .formatting import join_sentences, scientific
from .params import ParameterError, check_positive_int, check_scale, resolve_device
from .paths import repo_root, results_root, store_root
from .plotting import legends_over_data, plain_log_labels, save_figure, set_style
from .provenance import fingerprint_of, function_fingerprint, git_commit
from .store import ArrayDict, ResultsStore, versions

CHAPTER_NAME = re.compile(r"^\d\d_[a-z0-9_]+$")

#: Widest figure (inches) that displays at >= 1:1 in the book's ~690 px column (96 px per inch).
MAX_FIGURE_WIDTH_IN = 7.5
#: Smallest font size (points) a reader sees: the page shows a figure at its size, or scaled down to
#: the column (:data:`COLUMN_IN` inches) when it is wider.
MIN_FONT_PT = 9.9
COLUMN_IN = 7.2
#: Chapters whose torch and BLAS work is many small tensors (Monte-Carlo batches, tiny
#: convolutions, 2-D region counting, small MLPs and their Fishers): one thread each for torch and
#: for numpy's BLAS is as fast as two or faster on a 2-core machine, where a second thread mostly
#: spins (measured 10–80× under load; Chapter 8 alone: 206 s with two BLAS threads, 172 s with
#: one beside Chapter 6), and frees the other core for a chapter beside it. Set when the chapter
#: starts, however it is run, so the notebooks carry no thread settings and the numbers do not
#: depend on the runner; ``book run`` runs these chapters ``--jobs`` at a time
#: (:mod:`layerwise.book`).
ONE_TORCH_THREAD = frozenset(
    {"01_layer_decoupling", "02_capacity_diffusion", "06_linear_regions",
     "08_information_geometry"}
)
#: myst-nb's prefix for glued values that are not displayed where they are computed.
GLUE_PREFIX = "application/papermill.record/"


def _display_raw(data: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    """Emit one display_data output (a raw MIME bundle with metadata), as myst-nb's glue does."""
    try:
        from IPython.display import display

        display(dict(data), raw=True, metadata=dict(metadata))
    except ImportError:  # pragma: no cover
        pass


def small_texts(fig: Any) -> list[str]:
    """The visible texts of ``fig`` (labels, ticks, legends, annotations) smaller than
    :data:`MIN_FONT_PT` once the figure is shown at the book's column width."""
    from matplotlib.text import Text

    fig.canvas.draw()  # tick labels exist only once drawn
    scale = min(1.0, COLUMN_IN / float(fig.get_size_inches()[0]))
    out = []
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.get_fontsize() * scale < MIN_FONT_PT:
            out.append(f"{t.get_text()[:30]!r} at {t.get_fontsize() * scale:.1f} pt")
    return out


#: Smallest text (CSS px) a figure may show on a phone, and the width of the book's column there
#: (a 390 px screen). A figure whose text would come out smaller is given a minimum width on phones
#: (its class ``lw-phone-<px>``, :func:`phone_width`) and scrolls sideways instead.
PHONE_MIN_TEXT_PX = 9.0
PHONE_COLUMN_PX = 342


def phone_width(fig: Any) -> int:
    """The narrowest width (CSS px, rounded up to 20) at which every visible text of ``fig`` is at
    least :data:`PHONE_MIN_TEXT_PX` tall: shown at D px, a text of f pt in a figure W in wide is
    f·(96/72)·D/(96·W) px, so D ≥ 72·W·PHONE_MIN_TEXT_PX/f_min (at most 1000: the widest the
    book's CSS knows). 0 when the phone's column is wide enough already."""
    from matplotlib.text import Text

    fig.canvas.draw()
    texts = fig.findobj(Text)
    sizes = [t.get_fontsize() for t in texts if t.get_visible() and t.get_text().strip()]
    if not sizes:
        return 0
    need = 72 * float(fig.get_size_inches()[0]) * PHONE_MIN_TEXT_PX / min(sizes)
    return 0 if need <= PHONE_COLUMN_PX else min(int(math.ceil(need / 20) * 20), 1000)


#: Raw sub/superscript notation (``r_ij``, ``κ^l``, ``x_{k+1}``): a letter, ``)``, ``]``, ``‖``,
#: ``|`` or ``∇`` followed by ``_`` or ``^`` and a letter, digit, ``{`` or ``(`` — the pattern the
#: book's page checks use (tests/test_notation.py, tests/test_book.py).
RAW_NOTATION = re.compile(r"(?:[^\W\d_]|[)\]‖|∇\u0300-\u036f])[_^](?:[^\W_]|[{(])")
_MATHTEXT = re.compile(r"(?<!\\)\$.*?(?<!\\)\$")


def raw_notation_texts(fig: Any) -> list[str]:
    """The visible texts of ``fig`` that write notation raw outside mathtext (``"measured r_ij"``
    instead of ``r"measured $r_{ij}$"``)."""
    from matplotlib.text import Text

    out = []
    for t in fig.findobj(Text):
        text = t.get_text()
        if t.get_visible() and RAW_NOTATION.search(_MATHTEXT.sub(" ", text)):
            out.append(text[:60])
    return out


def check_figure(fig: Any, name: str) -> float:
    """Refuse a figure the book could not show legibly — a name that is not lower-case letters,
    digits and _, wider than :data:`MAX_FIGURE_WIDTH_IN` inches, text below :data:`MIN_FONT_PT`
    at the column's width (:func:`small_texts`), notation written raw outside mathtext
    (:func:`raw_notation_texts`) — and return its width in inches."""
    if not re.match(r"^[a-z0-9_]+$", name):
        raise ParameterError(f"figure name={name!r} must be lower-case letters, digits and _")
    width = float(fig.get_size_inches()[0])
    if width > MAX_FIGURE_WIDTH_IN + 1e-9:
        raise ParameterError(
            f"figure {name!r} is {width:.1f} in wide; at most {MAX_FIGURE_WIDTH_IN} in fits the "
            "book's column with fonts >= 10 pt (use a 2×2 grid instead of 1×4 panels)"
        )
    small = small_texts(fig)
    if small:
        raise ParameterError(
            f"figure {name!r} has text below {MIN_FONT_PT} pt at the size the book shows it: "
            f"{small[:5]} (drop explicit small font sizes; the book's style sets ≥ 10 pt)"
        )
    raw = raw_notation_texts(fig)
    if raw:
        raise ParameterError(
            f"figure {name!r} writes notation raw outside mathtext: {raw[:5]} (typeset it: "
            "r'$r_{ij}$')"
        )
    return width


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` without Markdown emphasis or roles (for alt text)."""
    plain = re.sub(r"\{[a-z:]+\}`([^`]*)`", r"\1", text)
    plain = re.sub(r"[*_`$]", "", plain).strip()
    # a sentence ends at . ! ? followed by a space and a capital, but not after an abbreviation
    for m in re.finditer(r"[.!?](?=\s+[A-Z(]|$)", plain):
        head = plain[: m.end()]
        if not re.search(
            r"(\bet al|\bFigs?|\bEqs?|\be\.g|\bi\.e|\bcf|\bvs|\bSec|\bApp|\b[A-Z])\.$", head
        ):
            return head[:300]
    return plain[:300]


def _key_value(v: Any) -> Any:
    """An argument as it enters a cache key: large arrays by content digest, shape and dtype."""
    import hashlib

    if hasattr(v, "detach") and hasattr(v, "cpu"):  # torch tensors
        v = v.detach().cpu().numpy()
    if isinstance(v, np.ndarray) and v.size > 64:
        a = np.ascontiguousarray(v)
        return {
            "array_sha256": hashlib.sha256(a.tobytes()).hexdigest(),
            "shape": list(a.shape),
            "dtype": str(a.dtype),
        }
    if isinstance(v, Mapping):
        return {str(k): _key_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_key_value(x) for x in v]
    return v


def _call_key(func: Callable[..., Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The store key of a call: the function's module and name and every argument
    (:func:`_key_value`), nested so that an argument named like a key the store adds (``seed``)
    is not overwritten by it."""
    return {
        "function": f"{func.__module__}.{func.__qualname__}",
        "args": {k: _key_value(v) for k, v in kwargs.items()},
    }


def format_value(value: Any, *, se: Any = None, digits: int = 3) -> str:
    """``value`` for prose: strings as they are, integers exactly, floats to ``digits`` significant
    digits (scientific notation outside [1e-3, 1e5)), ``± se`` to two significant digits."""
    if isinstance(value, str):
        if se is not None:
            raise ParameterError("se= goes with a numeric value, not a string")
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)) and se is None:
        return f"{int(value):,}".replace(",", "\u2009")

    def num(x: float, d: int) -> str:
        x = float(x)
        if not np.isfinite(x):
            return str(x)
        if x != 0 and not 1e-3 <= abs(x) < 1e5:
            return scientific(x, d, trim=False)
        exp = int(np.floor(np.log10(abs(x)))) if x != 0 else 0
        if exp >= d - 1:  # e.g. 4562 to 2 digits: 4600, not '4.6e+03'
            return f"{round(x, d - 1 - exp):.0f}".replace("-", "−")
        return f"{x:#.{d}g}".rstrip(".").replace("-", "−")

    text = num(value, digits)
    if se is not None:
        text += f" ± {num(se, 2)}"
    return text


def join_words(words: Sequence[str]) -> str:
    """Words joined for a sentence of the prose: 'a', 'a and b', 'a, b and c' ('' for none)."""
    words = [str(w) for w in words]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _label(value: Any) -> Any:
    """A table's index or column label: floats in their shortest form (``1.3``, ``0.05``)."""
    return f"{value:g}" if isinstance(value, (float, np.floating)) else value


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
        self.tables: list[str] = []
        self.figure_meta: list[dict[str, Any]] = []
        self.glued: dict[str, str] = {}
        self._t0 = time.perf_counter()
        set_style()
        if name in ONE_TORCH_THREAD:
            import torch  # only here: a chapter without torch work does not pay its import
            from threadpoolctl import threadpool_limits

            torch.set_num_threads(1)
            threadpool_limits(limits=1)  # numpy's BLAS too, for the rest of this process

    # -- randomness ---------------------------------------------------------------------------
    def rng(self, *keys: Any) -> np.random.Generator:
        """A numpy generator determined by the chapter seed
        and ``keys`` (:func:`layerwise.seeds.stream`)."""
        return seeds.stream(self.seed, *keys)

    def torch_seed(self, *keys: Any) -> int:
        """An integer seed for ``torch.Generator`` determined by the chapter seed and ``keys``."""
        return seeds.torch_seed(self.seed, *keys)

    # -- cached computations ------------------------------------------------------------------
    def cached_call(
        self, func: Callable[..., Mapping[str, Any]], /, *, name: str | None = None, **kwargs: Any
    ) -> ArrayDict:
        """``func(**kwargs)`` through the results store, keyed on the call itself: the function's
        module and name, every argument (arrays by their content's SHA-256), the chapter seed and
        the source of the function's module and of every ``layerwise`` module it imports
        (:func:`layerwise.provenance.function_fingerprint`) — no hand-written cache label, config or
        version to keep in step with the call. ``name`` (default: the function's name) only labels
        the entry."""
        fingerprint, modules = function_fingerprint(func)
        entry = self.store.get_or_compute(
            f"{self.name}.{name or func.__name__}",
            {**_call_key(func, kwargs), "seed": self.seed},
            lambda: func(**kwargs),
            code_version=fingerprint,
            code_modules=modules,
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
        code: str | Sequence[str],
        shared: tuple[str, ...] = (),
    ) -> ArrayDict:
        """Like :meth:`cached_call` for runs split into resumable blocks concatenated on axis 0
        (arrays named in ``shared`` are identical in every block and kept once).  The blocks run
        where ``$LAYERWISE_EXECUTOR``/``$LAYERWISE_SCHEDULER`` say
        (:func:`layerwise.executor.resolve_executor`: here by default, or on a Dask cluster); the
        numbers are the same either way."""
        from .executor import resolve_executor, settings

        fingerprint, modules = fingerprint_of(code)
        entry = self.store.get_or_compute_blocks(
            f"{self.name}.{name}",
            {**config, "seed": self.seed},
            n_blocks,
            compute_block,
            code_version=fingerprint,
            code_modules=modules,
            device=self.device,
            progress=True,
            shared=shared,
            # connected only if a block is missing
            executor=None if settings()[0] == "local" else resolve_executor,
            code=code,
        )
        return entry.arrays

    def cached_units(
        self,
        func: Callable[..., Mapping[str, Any]],
        n_units: int,
        /,
        *,
        name: str | None = None,
        shared: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> ArrayDict:
        """``func(i, **kwargs)`` for the independent units ``i = 0 … n_units − 1``, each stored
        as it is computed and concatenated on axis 0 (:meth:`cached_blocks`: a run resumes from
        the units already stored, and runs them on a Dask cluster when the executor says so).
        Keyed like :meth:`cached_call` — the function, every argument, the chapter seed and the
        source of the function's module and what it imports. ``func`` must be a module-level
        function (it travels to workers with its arguments)."""
        if func.__module__ == "__main__" or "<locals>" in func.__qualname__:
            raise ParameterError(
                f"func={func.__qualname__!r} must be a function defined at the top of a "
                "layerwise module, so that workers can import it"
            )
        return self.cached_blocks(
            name or func.__name__,
            _call_key(func, kwargs),
            n_units,
            functools.partial(func, **kwargs),
            code=func.__module__,
            shared=shared,
        )

    def simulate_moments(
        self,
        name: str,
        cfg: Any,
        *,
        block: int | None = None,
        timings: dict[str, float] | None = None,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The moments engine (:func:`layerwise.moments.simulate`) for ``cfg`` through the results
        store, in resumable blocks: networks ``0 .. cfg.n_sims − 1`` of the
        :class:`~layerwise.moments.MomentsConfig` ``cfg`` in blocks of ``block`` networks (each
        cached on its own, so an interrupted run resumes).  The device is not part of the key:
        results computed on a GPU can be re-used on a CPU (another realisation of the same
        networks' law; the store's metadata records the device).  The code part of the key is the
        source of the engine, :mod:`layerwise.moments` and every ``layerwise`` module it imports.
        Returns ``(depth, arrays)`` with arrays (n_sims, R); the wall time (computing or loading) is
        recorded in ``timings[name]`` when given."""
        from .moments import simulate  # the engine imports torch: only chapters that run it pay

        n = check_positive_int("n_sims", cfg.n_sims)
        block = min(n, check_positive_int("block", block or n))
        n_blocks = -(-n // block)

        def compute(i: int) -> dict[str, np.ndarray]:
            return simulate(cfg, sims=range(i * block, min(n, (i + 1) * block)), progress=False)

        key = {k: v for k, v in cfg.to_dict().items() if k != "device"}
        key["block"] = block
        t0 = time.perf_counter()
        arrays = self.cached_blocks(
            name, key, n_blocks, compute, code="layerwise.moments", shared=("depth",)
        )
        if timings is not None:
            timings[name] = time.perf_counter() - t0
        return arrays["depth"], {k: v for k, v in arrays.items() if k != "depth"}

    # -- claims ---------------------------------------------------------------------------------
    def claim(self, id: str, statement: str, **kw: Any) -> None:
        """Record a claim in the ledger (see :meth:`layerwise.claims.Ledger.claim`); returns
        nothing, so a cell that ends with a claim shows no repr on the page.

        A ``reproduces`` claim whose *conditions* control failed — the run measured a condition in
        which we differ from the paper (input, width, training …) to matter — or whose
        ``conditions`` differ from the paper's with no conditions control showing the difference
        harmless is recorded as ``predicts`` (:func:`layerwise.claims.carried_note`): it is the
        paper's result carried to our conditions, not a like-for-like reproduction, and its
        failure is not a failed reproduction (SPEC §1 "Findings and their controls")."""
        from .claims import _controls, carried_note  # the ledger's own reading of the controls

        kw["controls"] = _controls(id, kw.get("controls"))
        if carried := carried_note(kw.get("kind"), kw["controls"], kw.get("conditions")):
            kw["kind"] = "predicts"
            kw["note"] = join_sentences(kw.get("note") or "", carried)
        self.ledger.claim(id, statement, **kw)

    def status(self, id: str) -> str:
        """The outcome of claim ``id`` so far: ``pass``, ``fail``, ``inconclusive`` or
        ``skipped``."""
        for c in self.ledger.claims:
            if c.id == id:
                return c.status
        known = ", ".join(c.id for c in self.ledger.claims) or "none yet"
        raise ParameterError(f"claim id={id!r} is not in the ledger; claims so far: {known}")

    def verdict(self, ids: Sequence[str], yes: str, no: str, undecided: str) -> str:
        """A sentence that matches the outcomes of the claims ``ids`` at
        this run's scale: ``yes`` if all pass, ``no`` if any fails,
        else ``undecided`` (inconclusive or skipped ones, none failing)."""
        got = [self.status(i) for i in ids]
        if all(g == "pass" for g in got):
            return yes
        return no if "fail" in got else undecided

    def outcomes(self, kind: str | None = "reproduces", prefix: str = "") -> dict[str, list[str]]:
        """Ids of the claims of ``kind`` (None: every kind) whose id starts with ``prefix``, by
        outcome (keys ``pass``, ``fail``, ``inconclusive``, ``skipped``, in ledger order): what a
        chapter's "What we found" lists as reproduced and not."""
        out: dict[str, list[str]] = {"pass": [], "fail": [], "inconclusive": [], "skipped": []}
        for c in self.ledger.claims:
            if (kind is None or c.kind == kind) and c.id.startswith(prefix):
                out[c.status].append(c.id)
        return out

    def glue_outcomes(self, name: str = "found_outcomes") -> None:
        """Glue as ``name`` the sentence a chapter's "What we found" ends with, from the same
        ledger as its scorecard (:func:`layerwise.scorecard.outcomes_sentence`): the scorecard's
        summary, then every claim of any kind that does not pass — failures (finding or not),
        inconclusive ones and those not run at this scale, with how they lean."""
        from .scorecard import outcomes_sentence

        self.glue(name, outcomes_sentence([c.to_json() for c in self.ledger.claims], self.scale))

    # -- numbers for the prose ---------------------------------------------------------------------
    def glue(
        self, name: str, value: Any, *, se: Any = None, digits: int = 3, unit: str = ""
    ) -> None:
        """Make a measured value available to the chapter's prose as {glue}`name` (myst-nb glue).

        Numbers are shown to ``digits`` significant digits (with ``± se`` when given); strings as
        they are — use them for sentences whose truth depends on the run ("at this scale …").
        The text is recorded in the results JSON under ``glued`` (and in :attr:`glued`); nothing is
        returned, so a cell ending in a glue shows nothing on the page."""
        text = format_value(value, se=se, digits=digits) + (f" {unit}" if unit else "")
        self._record(name, {"text/plain": text}, text)

    def glue_math(self, name: str, text: str) -> None:
        """A sentence with inline math (``$\\xi_c$``) for the prose, pasted as MyST markdown with
        {glue:md}`name:myst` so that its symbols are typeset like the prose around it ({glue}
        pastes plain text). The page's plain-text fallback drops the ``$`` signs."""
        if not isinstance(text, str) or text.count("$") % 2:
            raise ParameterError(
                f"glue_math text for {name!r} must be a string with balanced $…$ math"
            )
        self._record(name, {"text/markdown": text, "text/plain": text.replace("$", "")}, text)

    def _record(self, name: str, data: Mapping[str, str], text: str) -> None:
        """Emit ``data`` as myst-nb's glue record ``name`` (hidden where it is computed: the
        prefix and scrapbook metadata of ``myst_nb.glue(..., display=False)``) and keep ``text``
        in :attr:`glued`."""
        if not re.match(r"^[a-z0-9_]+$", name):
            raise ParameterError(f"glue name={name!r} must be lower-case letters, digits and _")
        if name in self.glued:
            raise ParameterError(f"glue name {name!r} is used twice")
        _display_raw(
            {GLUE_PREFIX + k: v for k, v in data.items()},
            {"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}},
        )
        self.glued[name] = text

    def glue_all(self, values: Mapping[str, Any], *, digits: int = 3) -> None:
        """:meth:`glue` every ``name: value`` of ``values`` (a topic module's summary of a run).
        A :class:`layerwise.stats.Estimate` or a ``(value, se)`` pair is glued as ``value ± se``;
        anything else as it is."""
        from layerwise.stats import Estimate

        for name, value in values.items():
            if isinstance(value, Estimate):
                self.glue(name, value.mean, se=value.se, digits=digits)
            elif isinstance(value, tuple) and len(value) == 2:
                self.glue(name, value[0], se=value[1], digits=digits)
            else:
                self.glue(name, value, digits=digits)

    # -- tables ---------------------------------------------------------------------------------
    def table(
        self,
        data: Any,
        caption: str,
        *,
        precision: int = 3,
        formatter: Any = None,
        na_rep: str = "–",
        name: str | None = None,
    ) -> Any:
        """A numbered, captioned table, "Table <chapter>.<k>: caption", numbered in the order the
        chapter shows its tables (the pages number figures the same way): ``data`` is a pandas
        DataFrame, shown with ``precision`` decimals (or ``formatter``, as ``Styler.format``
        takes it) and ``na_rep`` for missing values. Returns the table as HTML in the theme's scroll
        container (a wide table scrolls inside the column on a phone); a cell that ends with it
        shows the table. ``name`` glues its label ("Table 6.2") under that name, so the prose
        refers to the table by number ({glue}`name`) without typing it; cells of tables of
        estimates print with :func:`layerwise.tables.estimate_formats`."""
        import pandas as pd

        if not isinstance(data, pd.DataFrame):
            raise ParameterError(
                f"table data must be a pandas DataFrame, not {type(data).__name__}"
            )
        if not caption.strip():
            raise ParameterError("table caption must say what the table shows")
        label = f"Table {self.number}.{len(self.tables) + 1}"
        if name is not None:
            self.glue(name, label)
        self.tables.append(caption)
        # a single named index: its name in the corner of the last header row, not in a header
        # row of its own (pandas' default: an empty row under the column labels)
        corner = data.index.nlevels == 1 and data.index.name is not None
        if corner and data.columns.names[-1] is None:
            data = data.copy()
            data.columns = data.columns.set_names([*data.columns.names[:-1], data.index.name])
        styled = data.style.format(formatter, precision=precision, na_rep=na_rep)
        if corner:
            styled = styled.hide(axis="index", names=True)
        for axis in (0, 1):  # numeric labels as written (1.3, not 1.300000)
            styled = styled.format_index(_label, axis=axis)
        # "dataframe": the theme styles it as a pandas table (in dark mode too)
        styled = styled.set_caption(f"{label}: {caption}").set_table_attributes(
            'class="lw-table dataframe"'
        )
        from IPython.display import HTML

        # the theme's scroll container: a wide table scrolls inside the column on a phone
        return HTML(f'<div class="pst-scrollable-table-container">{styled.to_html()}</div>')

    # -- figures --------------------------------------------------------------------------------
    def figure(
        self,
        fig: Any,
        name: str,
        caption: str,
        *,
        arrays: Mapping[str, Any],
        alt: str | None = None,
    ) -> None:
        """Save ``fig`` (PNG, SVG and its arrays as NPZ) and show it as a numbered, linkable figure.

        The figure is shown as a crisp (2×) PNG recorded for the book under the label
        ``fig-NN-name`` (the rendered page wraps it in a numbered figure with ``caption``; other
        pages link to it with {numref}`fig-NN-name`).  ``alt`` says what the figure shows for a
        reader who cannot see it (default: the caption's first sentence).  Figures wider than
        :data:`MAX_FIGURE_WIDTH_IN` inches are refused: they would be shrunk below a readable font
        size at the book's column width."""
        import matplotlib.pyplot as plt

        plain_log_labels(fig)  # before the checks below: labels change the layout
        width = check_figure(fig, name)
        covered = legends_over_data(fig)  # plotted points under a legend, per axes
        phone = phone_width(fig)
        paths = save_figure(fig, self.figure_dir / name, arrays)
        rel = str(paths[0].relative_to(self.results_dir.parent))
        if rel in self.figures:
            raise ParameterError(f"figure {name!r} is saved twice")
        self.figures.append(rel)
        label = f"fig-{self.number:02d}-{name.replace('_', '-')}"
        plt.close(fig)
        alt_text = alt or first_sentence(caption)
        self.figure_meta.append(
            {
                "name": name,
                "label": label,
                "caption": caption,
                "alt": alt_text,
                "path": rel,
                "legend_over_data": sum(covered.values()),
            }
        )
        _display_raw(
            {
                "image/png": base64.b64encode(paths[0].read_bytes()).decode("ascii"),
                "text/plain": f"<Figure {label}>",
            },
            {
                "image/png": {"width": int(round(width * 96))},
                "scrapbook": {"name": label, "mime_prefix": ""},
                "layerwise": {
                    "figure": label,
                    "caption": caption,
                    "alt": alt_text,
                    "phone_px": phone,
                },
            },
        )

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
            # the code that computed these results (evidence copied later records this, not the
            # copying checkout's commit)
            "git_commit": git_commit(Path(__file__).resolve().parents[2]),
            "params": json.loads(json.dumps(self.params, default=str)),
            "claims": [c.to_json() for c in self.ledger.claims],
            "figures": list(self.figures),
            "figure_labels": list(self.figure_meta),
            "glued": dict(self.glued),
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
            from IPython.display import HTML, display

            from .dashboard import tracked_claims
            from .scorecard import scorecard_html

            tracked = tracked_claims(repo_root(), self.name)
            display(HTML(scorecard_html(self.ledger.records(), self.scale, tracked=tracked)))
        except ImportError:  # pragma: no cover
            pass
