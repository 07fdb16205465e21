"""Checks that glued prose reads as written by a person (issue #46): no phrase said twice in a row,
no count left dangling after a colon, every paragraph ending with a full stop, no minus sign typed
as a hyphen (a value formatted with Python's "-5.7 %" beside the page's "−5.7 %"), no markdown
left raw (a glued plain-text string shows its `backticks`). Used on the rendered pages by
tests/test_book.py and tested on synthetic text in tests/test_prose.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser

#: A run of four or more words said twice in a row ("linear regions of ReLU networks — linear
#: regions of ReLU networks"), whatever punctuation stands between the two.
DOUBLED = re.compile(r"\b((?:\w+\W+){3,}?\w+)\W+\1\b", re.IGNORECASE)
#: A sentence that ends in a bare count after a colon ("Graded only from a larger scale: 4.").
DANGLING = re.compile(r":\s*[−-]?\d+(?:[.,]\d+)?\s*\.?$")
#: A hyphen standing for a minus sign before a number ("-53 %"): the page writes − (U+2212).
HYPHEN_MINUS = re.compile(r"(?:^|(?<=[\s(\[=≈]))-\d")
#: Markdown code left raw in visible text: {glue} pastes plain text, so "`default`" shows its
#: backticks (code the page renders is in <code>, outside the text checked).
RAW_CODE = re.compile(r"`[^`\s][^`]*`")
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
    for m in HYPHEN_MINUS.finditer(text):
        out.append(f"hyphen for a minus sign: {text[max(m.start() - 20, 0) : m.end() + 10]!r}")
    m = RAW_CODE.search(text)
    if m:
        out.append(f"markdown left raw: {m.group(0)!r}")
    if not ENDS.search(text):
        out.append(f"no full stop at the end: {text[-60:]!r}")
    return out


#: Stands where math or code was left out of a paragraph's text.
GAP = "\x00"


class _Paragraphs(HTMLParser):
    """Visible text of the article's <p> elements outside code, math, tables, figures and
    captions (the prose a reader reads)."""

    SKIP = {"pre", "code", "table", "figure", "figcaption", "script", "style", "mjx-container",
            "nav", "math", "details"}
    VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "area", "base"}

    #: A paragraph followed by one of these leads into it and may end with a comma, a colon or
    #: nothing (a displayed equation, a list, a code block carries the sentence on).
    LEAD_INTO = {"ul", "ol", "pre", "dl", "blockquote"}

    def __init__(self) -> None:
        super().__init__()
        self.paragraphs: list[str] = []
        self.lead_ins: set[int] = set()  # indices of paragraphs followed by a display block
        self._after_p = False
        self._open: list[tuple[str, bool]] = []  # open elements: (tag, starts a skipped part)
        self._p: list[str] | None = None

    @property
    def _skipping(self) -> bool:
        return any(skip for _, skip in self._open)

    @property
    def _in_article(self) -> bool:
        return any(tag == "article" for tag, _ in self._open)

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        cls = (dict(attrs).get("class") or "").split()
        if self._after_p and tag != "p" and (
            tag in self.LEAD_INTO or "math" in cls or "highlight" in "".join(cls)
        ):
            self.lead_ins.add(len(self.paragraphs) - 1)
        if tag in ("p", "section", "h1", "h2", "h3", "h4", "table", "figure"):
            self._after_p = False
        skip = tag in self.SKIP or "math" in cls or "cell_input" in cls or "lw-card" in cls
        if tag == "p" and self._in_article and not self._skipping and not skip:
            self._p = []
        self._open.append((tag, skip))

    def handle_endtag(self, tag):
        if tag in self.VOID or not any(t == tag for t, _ in self._open):
            return
        while self._open:  # close up to the matching element (tolerates unclosed children)
            t, skip = self._open.pop()
            if skip and not self._skipping and self._p is not None:
                self._p.append(GAP)  # where math or code stood
            if t == tag:
                break
        if tag == "p" and self._p is not None and not any(t == "p" for t, _ in self._open):
            self.paragraphs.append("".join(self._p))
            self._p = None
            self._after_p = True

    def handle_data(self, data):
        if self._p is not None and not self._skipping:
            self._p.append(data)


def page_problems(html_text: str) -> list[str]:
    """Every paragraph problem of a rendered page, each with the start of its paragraph.
    Math and code are left out of the text (their place is a gap, so a paragraph that ends in an
    equation or a formula is not checked for its full stop)."""
    parser = _Paragraphs()
    parser.feed(html_text)
    out = []
    for i, p in enumerate(parser.paragraphs):
        ends_in_gap = p.rstrip().endswith(GAP) or i in parser.lead_ins
        text = " ".join(p.replace(GAP, " ").split())
        if len(text.split()) < 4:  # a label, a lone formula's leftover
            continue
        found = prose_problems(text)
        if ends_in_gap:  # ends in a formula or code, or leads into a displayed one or a list
            found = [f for f in found if not f.startswith("no full stop")]
        out += [f"{problem} in {text[:50]!r}…" for problem in found]
    return out
