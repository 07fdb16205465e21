"""Author–year labels for the bibliography, matching the author–year citations in the text.

sphinxcontrib-bibtex formats the bibliography with a pybtex style; pybtex's own label styles are
numbers or alpha codes ("Lab19").  This extension registers ``layerwise`` (pybtex's plain style with
labels such as "Labatie 2019", "Poole et al. 2016"), selected by ``bibtex_default_style``."""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle


def _plain(latex: str) -> str:
    return Text.from_latex(latex).render_as("text")


class AuthorYearLabels(BaseLabelStyle):
    """"Surname Year", "A and B Year", "A et al. Year"; a, b, … appended to repeated labels."""

    def format_labels(self, sorted_entries):
        labels = [self.format_label(e) for e in sorted_entries]
        seen: dict[str, int] = {}
        for lab in labels:
            seen[lab] = seen.get(lab, 0) + 1
        count: dict[str, int] = {}
        for lab in labels:
            if seen[lab] > 1:
                count[lab] = count.get(lab, 0) + 1
                yield lab + "abcdefghijklmnopqrstuvwxyz"[count[lab] - 1]
            else:
                yield lab

    def format_label(self, entry) -> str:
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [_plain(" ".join(p.prelast_names + p.last_names)) for p in persons]
        if not names:
            who = _plain(entry.fields.get("title", entry.key))[:20]
        elif len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        return f"{who} {entry.fields.get('year', '')}".strip()


class LayerwiseStyle(PlainStyle):
    default_label_style = "layerwise_author_year"
    default_sorting_style = "author_year_title"


def setup(app):
    register_plugin("pybtex.style.labels", "layerwise_author_year", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "layerwise", LayerwiseStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
