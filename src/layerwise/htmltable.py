"""The one HTML table of the book's generated pages — the chapters' scorecards
(:mod:`layerwise.scorecard`), the reproduction dashboard (:mod:`layerwise.dashboard`) and the
robustness table (:mod:`layerwise.robustness`) — as a single Jinja template: a cell's content is
markup its caller built (a link, a span with its class) or text it escapes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import jinja2
from markupsafe import Markup

#: The theme's scroll container: a table wider than the column scrolls inside it on a phone
#: instead of widening the page (the page's CSS shades the edges that hide columns).
SCROLL_CLASS = "pst-scrollable-table-container"

_TEMPLATE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(
    "{% if scroll %}<div class=\"" + SCROLL_CLASS + "\">{% endif %}"
    '<table class="{{ cls }}"><thead><tr>{% for h in head %}<th>{{ h }}</th>{% endfor %}'
    "</tr></thead><tbody>"
    "{% for r in rows %}<tr"
    '{% if r.id %} id="{{ r.id }}"{% endif %}{% if r.cls %} class="{{ r.cls }}"{% endif %}>'
    "{% for c in r.cells %}<td"
    '{% if c.cls %} class="{{ c.cls }}"{% endif %}{% if c.title %} title="{{ c.title }}"{% endif %}'
    '{% if c.colspan > 1 %} colspan="{{ c.colspan }}"{% endif %}>{{ c.html }}</td>{% endfor %}'
    "</tr>{% endfor %}</tbody></table>{% if scroll %}</div>{% endif %}"
)


@dataclass(frozen=True)
class Cell:
    """One ``<td>``: its content (markup, or text to escape), class, title and column span."""

    html: str = ""
    cls: str = ""
    title: str = ""
    colspan: int = 1


@dataclass(frozen=True)
class Row:
    """One ``<tr>``: its cells (:class:`Cell` or a plain value), anchor ``id`` and ``class``."""

    cells: Sequence[Cell | str]
    id: str = ""
    cls: str = ""


#: ``markup(html)``: ``html`` taken as markup — the caller escaped what it holds of the records'
#: text.
markup = Markup


def table_html(head: Iterable[str], rows: Iterable[Row], *, cls: str, scroll: bool = False) -> str:
    """The table: header ``head`` (escaped), ``rows``, class ``cls``; inside the theme's scroll
    container when ``scroll``; a plain cell is escaped text (the template's autoescape)."""
    cells = [Row([c if isinstance(c, Cell) else Cell(c) for c in r.cells], r.id, r.cls)
             for r in rows]
    return _TEMPLATE.render(head=list(head), rows=cells, cls=cls, scroll=scroll)
