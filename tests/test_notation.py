"""No raw ``_``/``^`` notation outside math on the reader's pages (issue #30).

A reader sees the chapters' markdown and the strings their code cells hand to the page (figure
captions and alt texts, claim statements, table headers, glued sentences).  There, ``χ_l``,
``χ^L`` or ``r_eff(x^{l−1})`` must be typeset (``$\\chi_l$``) or written in Unicode (χₗ, χᴸ).  This
is the fast check of the notebook sources; ``tests/test_book.py`` (``RAW_NOTATION_JS``) checks
the rendered pages in a browser with the same pattern.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Every chapter of the book.
CHAPTERS = ("01", "02", "03", "04", "05", "06", "07", "08")

#: Raw sub/superscript notation: a letter (any script), ``)``, ``]``, ``‖``, ``|`` or ``∇`` followed
#: by ``_`` or ``^`` and then a letter, a digit, ``{`` or ``(``.  The same pattern as
#: ``RAW_NOTATION_JS`` in test_book.py.
RAW_NOTATION = re.compile(r"(?:[^\W\d_]|[)\]‖|∇\u0300-\u036f])[_^](?:[^\W_]|[{(])")

#: What is not prose: display and inline math, code in backticks (also roles such as
#: {glue}`name` and {numref}`fig-x`), link targets, MyST labels, directive options, HTML comments.
_NOT_PROSE = [
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"(?<!\\)\$(?!\$).*?(?<!\\)\$", re.S),
    re.compile(r"```.*?```", re.S),  # fenced blocks: their options are stripped below
    re.compile(r"`[^`]*`"),
    re.compile(r"\]\([^)]*\)"),
    re.compile(r"^\([^)\s]*\)=\s*$", re.M),
    re.compile(r"<!--.*?-->", re.S),
]
_FENCE = re.compile(r"```\{(\w+)\}([^\n]*)\n(.*?)```", re.S)


def prose(text: str) -> str:
    """``text`` with math, code, link targets and directive arguments/options removed (a
    figure directive's caption, its body, is kept)."""
    text = _FENCE.sub(
        lambda m: "\n".join(ln for ln in m.group(3).splitlines() if not ln.startswith(":")),
        text,
    )
    for pat in _NOT_PROSE:
        text = pat.sub(" ", text)
    return text


def raw_forms(text: str) -> list[str]:
    """The raw notation in the prose of ``text``, each as a short snippet around it."""
    p = prose(text)
    return [p[max(m.start() - 12, 0) : m.end() + 12].strip() for m in RAW_NOTATION.finditer(p)]


def _fields_removed(body: str) -> str:
    """An f-string's text with its replacement fields (``{expr:spec}``, nested braces too)
    replaced by NUL (the caller decides what stands in for a value); ``{{``/``}}`` are literal
    braces."""
    out, depth, i = [], 0, 0
    while i < len(body):
        c = body[i]
        if depth == 0 and body.startswith(("{{", "}}"), i):
            out.append(c)
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append("\x00")  # a field: a number for the pattern, nothing for the filter
        elif depth == 0:
            out.append(c)
        i += 1
    return "".join(out)


def _reader_strings(source: str) -> list[str]:
    """The string literals of a code cell a reader may see: those with a space or a non-ASCII
    character (identifiers, claim ids, file names and keys have neither)."""
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    for tok in tokens:
        if tok.type != tokenize.STRING:
            continue
        prefix = re.match(r"[A-Za-z]*", tok.string).group(0)
        body = re.sub(r"^[A-Za-z]*('''|\"\"\"|'|\")", "", tok.string)
        body = re.sub(r"('''|\"\"\"|'|\")$", "", body)
        text = _fields_removed(body) if "f" in prefix.lower() else body
        if " " in text.replace("\x00", "") or any(ord(c) > 127 for c in text):
            # the scorecard escapes its strings: code in backticks there is shown as typed
            out.append(text.replace("`", "").replace("\x00", "0"))
    return out


def notebook_raw_forms(path: Path) -> list[str]:
    """Every raw form on the page of the paired notebook ``path`` (markdown cells and the
    reader-facing strings of code cells), as ``"cell N: snippet"``."""
    nb = jupytext.read(path)
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            texts = [cell.source]
        elif cell.cell_type == "code":
            texts = _reader_strings(cell.source)
        else:
            continue
        found += [f"cell {i}: {s}" for t in texts for s in raw_forms(t)]
    return found


def chapter_notebook(num: str) -> Path:
    (path,) = sorted((ROOT / "notebooks").glob(f"{num}_*.py"))
    return path


@pytest.mark.parametrize(
    "raw",
    [
        "the sensitivity δ_BN χ grows",
        "χ^l at depth l",
        "r_eff(x^{l−1})",
        "log10 χ^L",
        "f(x)^2 squared",
        "Δ_φ χ ≥ 1",
        "the norm ‖θ‖_fr and ∇_θ f",
        "the block ⟨Σ̃_ij, Σ⟩",
        "a claim id such as train_grows in prose",
    ],
)
def test_the_pattern_flags_raw_notation(raw):
    assert raw_forms(raw), raw


@pytest.mark.parametrize(
    "clean",
    [
        r"the sensitivity $\delta_{BN}\chi$ grows",
        "$$\\chi^l = \\prod_k \\delta_k$$",
        "χᴸ and log₁₀ χᴸ, effective rank r(xˡ⁻¹)",
        "the parameter `n_nets` and {glue}`chi_200_range`",
        "see [the paper](../shared/papers/000_x.pdf) and {numref}`fig_4_1`",
        "(sec_scorecard)=\n## Scorecard",
        "```{figure} figures/fig_4_1.png\n:name: fig_4_1\n:alt: χ against depth\nCaption χ.\n```",
    ],
)
def test_math_code_and_targets_are_not_flagged(clean):
    assert raw_forms(clean) == [], raw_forms(clean)


def test_code_strings_a_reader_sees_are_scanned_and_identifiers_are_not():
    src = 'ch.glue("chi_200", x)\nax.set_title("log10 χ^L against depth")\nd["fig_4_1"] = 1\n'
    assert _reader_strings(src) == ["log10 χ^L against depth"]
    (found,) = raw_forms(_reader_strings(src)[0])
    assert "χ^L" in found
    # an f-string's value stands in for a number: f"χ^{L}" reads χ^200 on the page
    (fstr,) = _reader_strings('ch.claim("x", f"log10 χ^{L} ends at {v:.1f}")\n')
    assert raw_forms(fstr) and not raw_forms(_fields_removed("the {x_y} field"))


@pytest.mark.parametrize("num", CHAPTERS)
def test_no_raw_notation_on_the_chapter_page(num):
    found = notebook_raw_forms(chapter_notebook(num))
    assert found == [], f"{len(found)} raw forms in chapter {num}: {found[:10]}"


_BAD_TITLE = re.compile(r"[_^$]")


def headings(path: Path) -> list[str]:
    """The section titles of the paired notebook ``path`` (they also go to the sidebar)."""
    nb = jupytext.read(path)
    return [
        line
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if re.match(r"#{1,6} ", line)
    ]


def test_the_heading_check_flags_math_and_scripts():
    assert [
        h for h in ["## δ_BN χ and r", "## Fig. 3 — $\\chi$", "## Set-up"] if _BAD_TITLE.search(h)
    ] == [
        "## δ_BN χ and r",
        "## Fig. 3 — $\\chi$",
    ]


@pytest.mark.parametrize("num", CHAPTERS)
def test_section_titles_have_no_raw_notation_or_math(num):
    bad = [h for h in headings(chapter_notebook(num)) if _BAD_TITLE.search(h)]
    assert bad == [], f"chapter {num}: titles with _, ^ or $ (the sidebar shows them raw): {bad}"
