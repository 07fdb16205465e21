"""How the book prints a number: four significant digits for a value, two for a standard error,
``m×10ⁿ`` outside [10⁻³, 10⁵), true minus signs — one form for the scorecards, the tables
(:mod:`layerwise.tables`) and the prose's glued values."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt(x: Any) -> str:
    """Short human form of a number, pair or flag."""
    if x is None:
        return "—"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in x) + "]"
    return str(x) if isinstance(x, (bool, str)) else significant(x, 4)


def fmt_se(x: Any) -> str:
    """A standard error to two significant digits."""
    return "—" if x is None else significant(x, 2)


def scientific(x: float, digits: int, *, trim: bool = True) -> str:
    """``x`` as ``m×10ⁿ`` with ``digits`` significant digits in m (trailing zeros dropped when
    ``trim``) and true minus signs: ``scientific(-1.234e-5, 2) == "−1.2×10⁻⁵"``."""
    mant, exp = f"{float(x):.{digits - 1}e}".split("e")
    if trim and "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return f"{mant}×10{str(int(exp)).translate(_SUPERSCRIPT)}".replace("-", "−")


def significant(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, trailing zeros dropped, as a book prints it:
    plain in [1e-3, 1e5) (and 0), otherwise ``m×10ⁿ`` (:func:`scientific`, as the prose's glued
    values), with a true minus sign."""
    x = float(x)
    if not math.isfinite(x):
        return "nan" if math.isnan(x) else ("∞" if x > 0 else "−∞")
    if x == 0 or 1e-3 <= abs(x) < 1e5:  # rounded, then written out (99.99 to 2 digits: 100)
        return np.format_float_positional(float(f"{x:.{digits}g}"), trim="-").replace("-", "−")
    return scientific(x, digits)


def sentence_case(text: str) -> str:
    """``text`` with its first word capitalised when that word is a plain lower-case English word
    ("regions grow …" → "Regions grow …"); a symbol or formula stays as written ("log(mˡ/m⁰) …",
    "δχ ≥ 1 …", "q* …")."""
    first = text.split(" ", 1)[0]
    if first.isascii() and first.isalpha() and first.islower():
        return text[0].upper() + text[1:]
    return text


def as_sentence(text: str) -> str:
    """``text`` as a sentence of its own: :func:`sentence_case`, and a full stop at the end unless
    it ends with one (``.``, ``!`` or ``?``, perhaps before a closing bracket or quote)."""
    text = sentence_case(text.strip())
    return text if not text or re.search(r"[.!?][)\]'\"”’]*$", text) else text + "."


def join_sentences(*parts: str) -> str:
    """Phrases of a chapter joined as prose: each a sentence of its own (:func:`as_sentence`),
    unless one ends with ``;``, ``,``, ``:`` or a dash, which the next continues."""
    text = ""
    for part in (p.strip() for p in parts if p and p.strip()):
        if not text or re.search(r"[;,:—–]$", text):
            text = f"{text} {part}".strip()
        else:
            text = f"{as_sentence(text)} {sentence_case(part)}"
    return as_sentence(text)
