"""Shaping executed chapters for the page (CONTRIBUTING "The shape of a chapter"):
:func:`decorate` turns the notebook papermill executed into what Jupyter Book renders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .chapter import GLUE_PREFIX  # the prefix Chapter.glue/Chapter.figure write their records under


def figure_directive(label: str, caption: str, alt: str, phone_px: int = 0) -> str:
    """The MyST markdown of a numbered, linkable figure pasted from a glued image; a figure whose
    text needs more than a phone's column (``phone_px``, :func:`layerwise.chapter.phone_width`)
    gets the class ``lw-phone-<px>``: that minimum width on phones, scrolling sideways."""
    alt = " ".join(alt.split()).replace("`", "'")
    cls = f":figclass: lw-phone-{int(phone_px)}\n" if phone_px else ""
    return f"```{{glue:figure}} {label}\n:name: {label}\n:alt: {alt}\n{cls}\n{caption.strip()}\n```"


def execution_header(info: dict[str, Any], scale: str, stem: str, duration: float | None) -> str:
    """The admonition under a chapter's title: the scorecard's one-line summary, where, how and
    with what the chapter was executed (from its results JSON ``info``), how to re-run it,
    downloads."""
    from .scorecard import summary_of

    store = info.get("store", {})
    versions = info.get("versions", {})
    params = ", ".join(f"`{k}={v}`" for k, v in info.get("params", {}).items())
    wall = f"{duration:.1f} s" if duration is not None else "unknown"
    return (
        "```{admonition} Scorecard and run\n:class: note lw-run\n"
        f"**{summary_of(info.get('claims', []), '`' + scale + '`')}** "
        '<a href="#scorecard">Go to the scorecard.</a>\n\n'
        f"Executed at scale **`{scale}`** on **{info.get('device', '?')}** "
        f"({versions.get('machine', '?')}) "
        f"in **{wall}** of wall time with layerwise **{versions.get('layerwise', '?')}**, "
        f"torch {versions.get('torch', '?')}, seed {info.get('seed', '?')}; "
        f"{store.get('hits', 0)} cached and {store.get('computed', 0)} freshly computed simulation "
        "results.\n\n"
        f"Parameters: {params or '—'}. "
        f"Re-run this chapter with `make chapter CH={stem[:2]} SCALE=<ci|default|paper>` (see "
        f"{{doc}}`../reproduce`). "
        f"Download: {{download}}`the source (.py) <../../notebooks/{stem}.py>` · "
        f"{{download}}`the executed notebook (.ipynb) <{stem}.ipynb>`.\n```"
    )


def decorate(executed: Path, results: Path, scale: str) -> None:
    """Shape the executed notebook for the page: each code cell as :func:`shape_code_cell` says,
    and the execution header (with the scorecard's one-line summary) added after the title.
    Idempotent: the cells it added before (tags ``lw-execution-header``, ``lw-figure``) are
    replaced."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    cells = []
    for cell in nb.cells:
        if not {"lw-execution-header", "lw-figure"} & set(cell.metadata.setdefault("tags", [])):
            cells += [cell, *(shape_code_cell(cell) if cell.cell_type == "code" else [])]
    nb.cells = cells
    duration = nb.metadata.get("papermill", {}).get("duration")
    info: dict[str, Any] = json.loads(results.read_text()) if results.exists() else {}
    nb.metadata["layerwise"] = {"scale": scale, "chapter": executed.stem}
    header = nbformat.v4.new_markdown_cell(
        execution_header(info, scale, executed.stem, duration),
        metadata={"tags": ["lw-execution-header"]},
    )
    first_md = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1)
    if first_md >= 0:
        # the header goes between the chapter's introduction and its first section: a title cell
        # that runs on into "## Set-up" is split there
        src = nb.cells[first_md].source
        cut = src.find("\n## ")
        if cut > 0:
            nb.cells[first_md].source = src[:cut].rstrip() + "\n"
            rest = nbformat.v4.new_markdown_cell(src[cut + 1 :])
            rest.metadata["tags"] = ["lw-split-intro"]
            nb.cells.insert(first_md + 1, rest)
    nb.cells.insert(first_md + 1, header)
    nbformat.write(nb, executed)


def shape_code_cell(cell: Any) -> list[Any]:
    """Tag an executed code cell for the page — parameter cells removed, code collapsed behind a
    toggle (``hide-input``), a cell that shows nothing removed (``remove-cell``; it stays in the
    downloadable notebook; a glue record or stderr shows nothing: myst-nb's
    ``nb_output_stderr: remove`` keeps stderr off the page) — and return the markdown cells of
    its figures (``Chapter.figure``'s images moved under the glue prefix, each pasted by a
    numbered ``{glue:figure}``, :func:`figure_directive`) to go right after it."""
    import nbformat

    tags = cell.metadata.setdefault("tags", [])
    if {"parameters", "injected-parameters"} & set(tags):
        if "remove-cell" not in tags:
            tags.append("remove-cell")
        return []
    figures, visible = [], False
    for out in cell.get("outputs", []):
        meta = out.get("metadata", {})
        lw = meta.get("layerwise", {})
        if "figure" in lw:
            out["data"] = {
                (k if k.startswith(GLUE_PREFIX) else GLUE_PREFIX + k): v
                for k, v in out["data"].items()
            }
            meta["scrapbook"]["mime_prefix"] = GLUE_PREFIX
            md = figure_directive(lw["figure"], lw["caption"], lw["alt"], lw.get("phone_px", 0))
            figures.append(nbformat.v4.new_markdown_cell(md, metadata={"tags": ["lw-figure"]}))
        elif not (meta.get("scrapbook", {}).get("mime_prefix") or out.get("name") == "stderr"):
            visible = True
    if not {"hide-input", "remove-cell", "remove-input"} & set(tags):
        tags.append("hide-input" if (visible or figures) else "remove-cell")
    return figures
