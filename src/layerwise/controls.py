"""The inputs, the configurations and the controls of a claim graded against a published
reference (Chapters 4 and 5): a data set and an architecture in words, a configuration in the words
of a claim's ``conditions`` beside the reference's, and the three controls of such a claim
(:class:`layerwise.claims.Control`): the rule applied to the reference's own networks
(:func:`reference_control`), to synthetic networks of known truth (:func:`estimator_control`), and
the differing conditions weighed by their measured effects (:func:`conditions_control`,
:func:`input_difference`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import published
from .claims import Control, outcome
from .params import ParameterError
from .stats import Estimate, estimate_or_point, versus_reference

BUILTIN_INPUTS: tuple[str, ...] = ("patches", "digits", "gaussian")
"""The inputs every run can draw offline; the chapters compare the chosen input with the others."""
INPUT_WORDS: dict[str, str] = {
    "patches": "photo patches",
    "digits": "digits",
    "gaussian": "i.i.d. Gaussian images",
    "cifar10": "CIFAR-10",
    "mnist": "MNIST",
    "mnist5k": "MNIST (5 000 digits)",
}
"""A data-set kind (:func:`layerwise.data.check_source`) in words."""


def input_words(dataset: str) -> str:
    """The data set ``dataset`` (a name or ``NAME:DIR``) in words: ``"cifar10:/x"`` → CIFAR-10."""
    kind = str(dataset).partition(":")[0]
    if kind not in INPUT_WORDS:
        raise ParameterError(
            f"dataset={dataset!r} is not allowed; choose one of: {', '.join(INPUT_WORDS)}"
        )
    return INPUT_WORDS[kind]


def compared_inputs(dataset: str) -> list[str]:
    """The chosen input first, then the built-in inputs (:data:`BUILTIN_INPUTS`) it is not: the
    inputs a chapter runs side by side to measure what the input does."""
    return [dataset, *(d for d in BUILTIN_INPUTS if d != dataset)]


def architecture_words(arch: str, kernel_size: int, boundary: str = "periodic") -> str:
    """``"BN feedforward, conv 3×3 periodic"``, ``"BN ResNet, fully-connected"``, …"""
    net = {"bn_ff": "BN feedforward", "bn_res": "BN ResNet", "vanilla": "vanilla"}.get(arch, arch)
    if kernel_size == 1:
        return f"{net}, fully-connected"
    return f"{net}, conv {kernel_size}×{kernel_size} {boundary.replace('_', ' ')}"


def configuration(
    arch: str,
    kernel_size: int,
    width: int,
    batch: int,
    depth: int,
    dataset: str,
    *,
    res_depth: int | None = None,
    boundary: str = "periodic",
    epsilon: float | None = None,
) -> dict[str, Any]:
    """A configuration in the words of a claim's ``conditions``: architecture, width, batch,
    depth (``"500 units of 2 layers"`` for a ResNet), input and, when given, BN's ε."""
    out: dict[str, Any] = {
        "architecture": architecture_words(arch, kernel_size, boundary),
        "width": int(width),
        "batch": int(batch),
        "depth": f"{depth} units of {res_depth} layers" if res_depth else int(depth),
        "input": input_words(dataset),
    }
    if epsilon is not None:
        out["BN ε"] = float(epsilon)
    return out


def authors_configuration(experiment: str, *, epsilon: bool = False) -> dict[str, Any]:
    """:func:`configuration` of the authors' ``experiment`` (:func:`layerwise.published.config`)."""
    c = published.config(experiment)
    return configuration(
        c["architecture"],
        c["kernel_size"],
        c["num_channels"],
        c["batch_size"],
        c["total_depth"],
        c["dataset"],
        res_depth=c.get("res_depth") if c["architecture"] == "bn_res" else None,
        boundary=c.get("boundary", "periodic"),
        epsilon=c.get("epsilon") if epsilon else None,
    )


def side_by_side(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """A claim's ``conditions``: ``{name: (ours, theirs)}`` for every name of ``theirs``."""
    return {k: (ours[k], theirs[k]) for k in theirs}


def rule_outcome(e: Estimate, comparison: str, reference: Any, tol: float | None) -> str:
    """The ledger's outcome (:func:`layerwise.claims.outcome`) for estimate ``e`` under a rule."""
    return outcome(e.mean, comparison, reference, tol, se=e.se, dof=e.dof)


def reference_control(
    authors: Estimate | tuple[float, float],
    comparison: str,
    reference: Any,
    tol: float | None,
    label: str,
) -> Control:
    """Reference control: the claim's rule applied to the authors' own data, ``authors`` = their
    mean and SE over their networks (an :class:`~layerwise.stats.Estimate`, or the pair), as if they
    were a second set of networks of theirs (the SE of the difference √2·SE, normal interval; SE 0:
    a value of their mean curves, graded as a point). Passes when the rule accepts them."""
    m, se = float(authors[0]), float(authors[1])
    got = outcome(m, comparison, reference, tol, se=math.sqrt(2.0) * se if se > 0 else None)
    error = f" ± {_fmt(se)} over their networks, √2 × their error" if se > 0 else ""
    note = f"the rule applied to {label} ({_fmt(m)}{error}): {got}"
    return Control("reference", got == "pass", note)


def estimator_control(
    values: Any,
    comparison: str,
    reference: Any,
    tol: float | None,
    good: float,
    bad: float,
    *,
    reference_se: float | None = None,
    seed: int = 0,
) -> Control:
    """Estimator control of a claim graded on a mean over networks of per-network ``values``:
    as many synthetic networks, normal with our spread between networks (standard deviation of
    ``values``; 0 for one network), drawn with a true mean ``good`` (one the rule
    accepts) must not fail, and with a true mean ``bad`` (one it rejects) must not pass — graded
    as the claim is (against a published (``reference``, ``reference_se``) with both errors
    combined, :func:`layerwise.stats.versus_reference`, when ``reference_se`` is given)."""
    v = np.asarray(values, dtype=float).ravel()
    n, sd = max(v.size, 2), float(np.std(v, ddof=1)) if v.size > 1 else 0.0
    rng = np.random.default_rng([seed, 0x4C45])
    got = []
    for truth in (good, bad):
        x = float(truth) + sd * rng.standard_normal(n)
        e = (
            versus_reference(x, (float(reference), float(reference_se)))
            if reference_se is not None
            else estimate_or_point(x)
        )
        got.append(rule_outcome(e, comparison, reference, tol))
    return Control(
        "estimator",
        got[0] != "fail" and got[1] != "pass",
        f"{n} synthetic networks (spread {_fmt(sd)} between networks, as ours) with a true "
        f"mean {_fmt(good)}: {got[0]}; with {_fmt(bad)}: {got[1]}",
    )


def conditions_control(
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
    effects: Mapping[str, Estimate | None],
    margin: float,
    unit: str = "",
) -> Control:
    """Conditions control: our configuration ``ours`` beside the reference's ``theirs``
    (:func:`configuration`). A condition that differs *matters* unless the chapter measured its
    effect on the claim's quantity (``effects``: condition → an Estimate of the change it makes,
    e.g. the difference between two inputs) and the whole interval of |effect| lies below the
    claim's ``margin`` (absolute: the half-width of the accepted set). Passes when no differing
    condition matters."""
    differ = [k for k in theirs if ours.get(k) != theirs[k]]
    parts, ok = [], True
    for k in differ:
        e = effects.get(k)
        if e is None:
            ok = False
            parts.append(f"{k} {ours.get(k)!s} against {theirs[k]!s}: its effect not measured")
            continue
        lo, hi = e.bounds()
        worst = max(abs(lo), abs(hi))
        harmless = Estimate(worst).side(margin) == -1
        ok = ok and harmless
        parts.append(
            f"{k} {ours.get(k)!s} against {theirs[k]!s}: measured to move it by "
            f"{_fmt(e.mean)}{unit} (99 % bound {_fmt(worst)}{unit}) against the margin "
            f"{_fmt(margin)}{unit}"
            + ("" if harmless else ": not shown to lie within it, so it matters")
        )
    note = "; ".join(parts) if parts else "same conditions as the reference"
    return Control("conditions", ok, note)


def _fmt(x: float) -> str:
    x = float(x)
    return f"{x:.3g}" if math.isfinite(x) else "nan"


def input_difference(a: Any, b: Any) -> Estimate | None:
    """Mean of per-network values ``a`` minus mean of ``b`` (two independent runs) with the
    combined standard error and the d.o.f. of the smaller run (n − 1: the t interval errs wide);
    ``None`` when either run has a single network (no error: the effect is not measured)."""
    ea, eb = estimate_or_point(a), estimate_or_point(b)
    if ea.se is None or eb.se is None:
        return None
    n = min(ea.n, eb.n)
    return Estimate(ea.mean - eb.mean, math.hypot(ea.se, eb.se), n - 1, n)
