"""Checks that glued prose reads as written by a person (issue #46): no phrase said twice in a row,
no count left dangling after a colon, every paragraph ending with a full stop. Used on the rendered
pages by tests/test_book.py and tested on synthetic text in tests/test_prose.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser

#: A run of four or more words said twice in a row ("linear regions of ReLU networks — linear
#: regions of ReLU networks"), whatever punctuation stands between the two.
DOUBLED = re.compile(r"\b((?:\w+\W+){3,}?\w+)\W+\1\b", re.IGNORECASE)
#: A sentence that ends in a bare count after a colon ("Graded only from a larger scale: 4.").
DANGLING = re.compile(r":\s*[−-]?\d+(?:[.,]\d+)?\s*\.?$")
#: How a finished paragraph may end (a full stop, a question, a colon before a list or an
#: equation, a closing bracket or quote after one of them).
ENDS = re.compile(r"[.!?:;]\W{0,3}$|[.!?]['\"”’)\]]+$")


def sentences(text: str) -> list[str]:
    """``text`` split after . ! ? followed by a space and an upper-case letter or a digit."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(])", text) if s.strip()]


def prose_problems(paragraph: str) -> list[str]:
    """What is wrong with one paragraph's visible text (empty when it reads as written)."""
    text = " ".join(paragraph.split())
    out = []
    if not text:
        return out
    m = DOUBLED.search(text)
    if m:
        out.append(f"phrase said twice: {m.group(1)!r}")
    for s in sentences(text):
        if DANGLING.search(s):
            out.append(f"dangling count: {s[-60:]!r}")
    if not ENDS.search(text):
        out.append(f"no full stop at the end: {text[-60:]!r}")
    return out


class _Paragraphs(HTMLParser):
    """Visible text of the article's <p> elements outside code, math, tables, figures and
    captions (the prose a reader reads)."""

    SKIP = {"pre", "code", "table", "figure", "figcaption", "script", "style", "mjx-container",
            "nav", "math", "details"}

    def __init__(self) -> None:
        super().__init__()
        self.paragraphs: list[str] = []
        self._skip = 0
        self._p: list[str] | None = None
        self._in_article = 0

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class") or ""
        if tag == "article":
            self._in_article += 1
        if tag in self.SKIP or "math" in cls.split() or "cell_input" in cls:
            self._skip += 1
        elif tag == "p" and self._in_article and not self._skip:
            self._p = []

    def handle_endtag(self, tag):
        if tag == "article":
            self._in_article -= 1
        if tag in self.SKIP and self._skip:
            self._skip -= 1
        elif tag == "p" and self._p is not None:
            self.paragraphs.append("".join(self._p))
            self._p = None

    def handle_data(self, data):
        if self._p is not None and not self._skip:
            self._p.append(data)


def page_problems(html_text: str) -> list[str]:
    """Every paragraph problem of a rendered page, each with the start of its paragraph.
    Math and code are left out of the text (their place is a gap, so a paragraph that ends in an
    equation or a formula is not checked for its full stop)."""
    parser = _Paragraphs()
    parser.feed(html_text)
    out = []
    for p in parser.paragraphs:
        text = " ".join(p.split())
        if len(text.split()) < 4:  # a label, a lone formula's leftover
            continue
        out += [f"{problem} in {text[:50]!r}…" for problem in prose_problems(text)]
    return out
