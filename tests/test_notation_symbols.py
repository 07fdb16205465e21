"""One typography per symbol (issue #46): a quantity is written one way on a chapter's page.

A reader meets each symbol in three places — typeset math in the prose, Unicode in captions, table
rows and claim statements, and glued sentences — and should see the same glyph and the same name
in all three. The page text here is every markdown cell (math included) and every string a code
cell hands to the page (:func:`test_notation._reader_strings`), plus the row labels and captions of
the chapter's studies and figures modules.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import pytest
from test_notation import _reader_strings, chapter_notebook

ROOT = Path(__file__).resolve().parents[1]
#: The chapters held to this check (Chapters 6–8 are not yet: Chapter 7 writes φ = tanh in
#: Unicode beside \phi in its math).
CHAPTERS = ("01", "02", "03", "04", "05")

#: Glyph families of one letter: a page uses one of each pair, never both. Unicode φ (U+03C6) and ε
#: (U+03B5) are drawn as MathJax's \varphi and \varepsilon; ϕ and ϵ as \phi and \epsilon.
GLYPHS = {
    "phi": (re.compile(r"\\varphi|φ"), re.compile(r"\\phi\b|ϕ")),
    "epsilon": (re.compile(r"\\varepsilon|ε"), re.compile(r"\\epsilon\b|ϵ")),
}

#: Forms a page must not use, each with the form it uses instead.
FORBIDDEN = {
    # subscript Greek modifier letters read as noise ("δᵩᵪ"): math or words instead
    re.compile(r"[ᵦᵧᵨᵩᵪ]"): r"$\delta_\varphi\chi$ in math or δχ (ReLU step) in text",
    # the BN and ReLU steps' increments: $\delta_\mathrm{BN}\chi$, $\delta_\varphi\chi$ in math,
    # δχ (BN step), δχ (ReLU step) in captions, tables and claims
    re.compile(r"δχ, (?:BN|ReLU) step"): "δχ (BN step), δχ (ReLU step)",
    re.compile(r"\\delta_(?:\{|\\rm|\\text|BN|\\phi)"): (
        r"$\delta_\mathrm{BN}\chi$, $\delta_\varphi\chi$"
    ),
    # the effective rank is r (r(x), r(dx)) in math as in tables and claims; Chapter 3 says once
    # that the paper writes it r_eff
    re.compile(r"(?<!writes it \$)r_(?:\\mathrm\{eff\}|\{\\mathrm\{eff\}\})"): (
        "$r(x)$, as in the tables"
    ),
    # Chapter 5's three exponents are named in words on every page: the Eq. 15 τ, the free τ, the
    # end-to-end τ (the tables' words), not τ with a subscript in the prose only
    re.compile(r"\\tau_|τ_|τ(?:fit|ends)\b"): "the Eq. 15 τ, the free τ or the end-to-end τ",
}


def page_texts(num: str) -> list[str]:
    """What chapter ``num`` shows a reader: its markdown (math kept), the strings its code cells
    hand to the page, and those of its studies and figures modules."""
    nb = jupytext.read(chapter_notebook(num))
    texts = [c.source for c in nb.cells if c.cell_type == "markdown"]
    texts += [s for c in nb.cells if c.cell_type == "code" for s in _reader_strings(c.source)]
    paths = [ROOT / "src" / "layerwise" / m / f"ch{num}.py" for m in ("studies", "figures")]
    if num in ("03", "04", "05"):  # the moments chapters' shared figures (Figs. 2-5 panels)
        paths.append(ROOT / "src" / "layerwise" / "figures" / "moments.py")
    for path in paths:
        if path.exists():
            texts += module_strings(path.read_text(encoding="utf-8"))
    return texts


def module_strings(source: str) -> list[str]:
    """The string constants of a module that can reach a page (labels, captions, row names):
    every str constant but docstrings and other bare string statements (a reader never sees
    those)."""
    tree = ast.parse(source)
    bare = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in bare
    ]


def typography_problems(texts: list[str]) -> list[str]:
    """Each symbol written two ways across ``texts``, and each forbidden form, in words."""
    joined = "\n".join(texts)
    out = [
        f"{name} drawn two ways: {a.search(joined).group(0)!r} and {b.search(joined).group(0)!r}"
        for name, (a, b) in GLYPHS.items()
        if a.search(joined) and b.search(joined)
    ]
    for pattern, instead in FORBIDDEN.items():
        for m in pattern.finditer(joined):
            context = joined[max(m.start() - 20, 0) : m.end() + 20].replace("\n", " ")
            out.append(f"{m.group(0)!r} in {context!r}: write {instead}")
    return out


@pytest.mark.parametrize(
    "texts, found",
    [
        (["(a fatter-tailed BN output makes the ReLU step less harmful, δᵩ → 1)"], "'ᵩ'"),
        ([r"the ReLU step $\delta_\varphi\chi$", r"a label $\kappa^\phi$"], "phi"),
        (["ε = 10⁻³", r"$dy = dz/\sqrt{v + \epsilon}$"], "epsilon"),
        (['"dbn_late": "δχ, BN step (late)"'], "δχ, BN step"),
        ([r"the BN step's $\delta_{BN}\chi$"], r"\\delta_{"),
        ([r"the free exponent $\tau_\mathrm{fit}$ = 0.648"], r"\\tau_"),
        ([r"the signal keeps $r_\mathrm{eff}(x)$ = 8.55 directions"], "r_"),
    ],
)
def test_each_second_form_is_found(texts, found):
    problems = typography_problems(texts)
    assert len(problems) == 1 and found in problems[0], problems


def test_docstrings_of_a_module_are_not_page_text():
    src = 'def f():\n    """τ_fit in a docstring."""\n    return "δχ (BN step), late"\n'
    assert module_strings(src) == ["δχ (BN step), late"]


def test_one_form_per_symbol_passes():
    assert typography_problems([
        r"$\delta_\mathrm{BN}\chi^l$ and $\delta_\varphi\chi^l$, with φ the ReLU",
        "increments δχ, δχ (BN step), δχ (ReLU step) per layer; ε = 10⁻³",
        "the Eq. 15 τ, the free τ and the end-to-end τ over units 50–500",
        r"its effective rank $r(x^l)$ (the paper writes it $r_\mathrm{eff}$)",
    ]) == []


@pytest.mark.parametrize("num", CHAPTERS)
def test_each_symbol_is_written_one_way_on_the_chapter_page(num):
    problems = typography_problems(page_texts(num))
    assert problems == [], f"chapter {num}: {problems[:8]}"
