"""Scales, parameter resolution and input validation shared by every chapter.

Every chapter declares a table ``{scale: {name: value}}`` of its tunable parameters at the
three named scales (SPEC §1 "Scales").  The notebook's papermill ``parameters`` cell holds
``scale``, ``seed``, ``device`` and one variable per tunable, ``None`` meaning "take the value
of the chosen scale"; :func:`resolve` merges the two and validates them before any work.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SCALES: tuple[str, ...] = ("ci", "default", "paper")
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")


class ParameterError(ValueError):
    """A parameter has a value outside its allowed set; raised before any computation."""


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise naming ``name`` and the choices."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise ParameterError(
            f"{name}={value!r} is not allowed; choose one of: {', '.join(map(repr, allowed))}"
        )
    return value


def check_scale(scale: str) -> str:
    """Validate a scale name (``ci``, ``default`` or ``paper``)."""
    return check_choice("scale", scale, SCALES)


def scale_rank(scale: str) -> int:
    """Order of a scale: ci < default < paper."""
    return SCALES.index(check_scale(scale))


def check_positive_int(name: str, value: Any) -> int:
    """Validate a strictly positive integer (bools and floats rejected)."""
    import operator

    try:
        if isinstance(value, bool):
            raise TypeError
        n = operator.index(value)
    except TypeError:
        raise ParameterError(f"{name}={value!r} must be a positive integer") from None
    if n <= 0:
        raise ParameterError(f"{name}={value!r} must be a positive integer (> 0)")
    return n


def check_positive(name: str, value: Any) -> float:
    """Validate a strictly positive finite real number."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name}={value!r} must be a positive number") from None
    if not (x > 0 and x < float("inf")):
        raise ParameterError(f"{name}={value!r} must be a positive finite number (> 0)")
    return x


def check_nonnegative(name: str, value: Any) -> float:
    """Validate a non-negative finite real number."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name}={value!r} must be a non-negative number") from None
    if not (x >= 0 and x < float("inf")):
        raise ParameterError(f"{name}={value!r} must be a non-negative finite number (>= 0)")
    return x


def check_fraction(name: str, value: Any) -> float:
    """Validate a number in [0, 1]."""
    x = check_nonnegative(name, value)
    if x > 1:
        raise ParameterError(f"{name}={value!r} must lie in [0, 1]")
    return x


def check_divisible(name: str, value: int, by_name: str, by: int) -> None:
    """Raise unless ``value`` is a multiple of ``by``."""
    if value % by:
        raise ParameterError(
            f"{name}={value} must be divisible by {by_name}={by} "
            f"(allowed: multiples of {by}, e.g. {by * max(1, value // by)})"
        )


def resolve(
    table: Mapping[str, Mapping[str, Any]], scale: str, **overrides: Any
) -> dict[str, Any]:
    """Merge a chapter's per-scale parameter table with explicit overrides.

    ``overrides`` whose value is ``None`` are ignored (they mean "use the scale's value"); an
    override naming a parameter the table does not define is an error, as is an unknown scale.
    """
    check_scale(scale)
    missing = [s for s in SCALES if s not in table]
    if missing:
        raise ParameterError(f"parameter table lacks scales {missing}")
    params = dict(table[scale])
    unknown = sorted(k for k, v in overrides.items() if v is not None and k not in params)
    if unknown:
        raise ParameterError(
            f"unknown parameter(s) {unknown}; allowed: {', '.join(sorted(params))}"
        )
    params.update({k: v for k, v in overrides.items() if v is not None})
    return params


def resolve_from(table: Mapping[str, Mapping[str, Any]], scale: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`resolve` with the overrides read from ``namespace`` (a notebook's ``globals()``): every
    parameter of the table is taken from the variable of the same name in the parameters cell, so a
    chapter declares each parameter once, in its scale table. Every scale must define the same
    parameters."""
    check_scale(scale)
    keys = {s: set(row) for s, row in table.items()}
    if any(k != keys.get(scale, set()) for k in keys.values()):
        raise ParameterError(f"the scales of the parameter table define different parameters: {keys}")
    return resolve(table, scale, **{k: namespace.get(k) for k in table.get(scale, {})})


def resolve_device(device: str = "auto") -> str:
    """Map ``auto`` to ``cuda`` when a GPU is visible, else ``cpu``; validate explicit choices."""
    check_choice("device", device, DEVICES)
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ParameterError("device='cuda' was requested but no CUDA device is available")
    return device
