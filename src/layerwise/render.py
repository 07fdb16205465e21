"""Rendering the book: the offline MathJax assets, the HTML build and the PDF.

:func:`build_html` writes the dashboard and summary, checks that the table of contents
(:func:`toc_files`) names existing files, installs MathJax (:func:`install_mathjax`: the book
displays offline) and runs Jupyter Book with warnings as errors; :func:`build_pdf` prints Sphinx's
single-page build with headless Chromium.  Build failures raise
:class:`layerwise.runner.ChapterFailed` (the command line reports them as errors).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .dashboard import executed_scale, write_dashboard, write_summary
from .paths import repo_root
from .runner import ChapterFailed


def install_mathjax(root: Path | None = None) -> Path:
    """Copy MathJax 3 (from the ``django-static-mathjax`` wheel) into the book's static folder."""
    root = root or repo_root()
    dest = root / "book" / "_static_mathjax" / "mathjax"
    if (dest / "tex-mml-chtml.js").exists():
        return dest
    import importlib.util

    spec = importlib.util.find_spec("mathjax")
    if spec is None or spec.origin is None:
        raise RuntimeError("MathJax is not installed: pip install django-static-mathjax==3.2.2.1")
    src = Path(spec.origin).parent / "static" / "mathjax" / "es5"
    if not (src / "tex-mml-chtml.js").exists():
        raise RuntimeError(f"MathJax files not found under {src}")
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / "tex-mml-chtml.js", dest / "tex-mml-chtml.js")
    for sub in ("output", "input", "ui", "a11y", "adaptors", "sre"):
        if (src / sub).exists():
            shutil.copytree(src / sub, dest / sub, dirs_exist_ok=True)
    return dest


def toc_files(root: Path) -> list[str]:
    """Every document ``_toc.yml`` names (its root first), as written there (no suffix)."""
    import yaml

    def walk(node: Any) -> list[str]:
        if isinstance(node, dict):
            return ([node["file"]] if "file" in node else []) + walk(list(node.values()))
        return [f for v in node for f in walk(v)] if isinstance(node, list) else []

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    return [toc["root"], *walk(toc.get("parts", toc.get("chapters", [])))]


def _prepare(root: Path) -> None:
    """What every build needs: the dashboard and landing cards written from the results, every
    document of the table of contents present, MathJax in the static folder."""
    write_dashboard(root)
    write_summary(root)
    missing = [
        e
        for e in toc_files(root)
        if not (root / e).exists() and not any((root / e).parent.glob((root / e).name + ".*"))
    ]
    if missing:
        raise ChapterFailed(
            f"the table of contents names files that do not exist yet: {missing}; "
            "run `make book` first"
        )
    install_mathjax(root)


def _jupyter_book(root: Path, builder: str, *flags: str) -> subprocess.CompletedProcess:
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb), "build", str(root), "--builder", builder, *flags]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True)


def build_html(root: Path | None = None) -> Path:
    """Render ``_build/html`` with warnings as errors (all reported)."""
    root = root or repo_root()
    _prepare(root)
    proc = _jupyter_book(root, "html", "--warningiserror", "--nitpick", "--keep-going")
    sys.stdout.write(proc.stdout[-4000:])
    if proc.returncode != 0:
        raise ChapterFailed(
            f"jupyter-book build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}"
        )
    return root / "_build" / "html"


def built_scale(root: Path | None = None) -> str:
    """The scale the book's executed chapters were run at: one of the scales, ``mixed`` if they
    differ, ``unexecuted`` if none records one."""
    root = root or repo_root()
    executed = [root / f"{entry}.ipynb" for entry in toc_files(root)]
    scales = {executed_scale(nb) for nb in executed if nb.exists()} - {None}
    return "unexecuted" if not scales else scales.pop() if len(scales) == 1 else "mixed"


def pdf_path(root: Path | None = None, scale: str | None = None) -> Path:
    """Where the PDF of a build is printed: ``_build/pdf/layerwise-<scale>.pdf``, named by the scale
    of the build it prints (so a PDF of an earlier build at another scale is never taken for this
    one)."""
    root = root or repo_root()
    return root / "_build" / "pdf" / f"layerwise-{scale or built_scale(root)}.pdf"


#: Headless Chromium, offline and unattended: the PDF print and the browser tests use these.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str | None:
    """The headless browser that prints the PDF, or None when none is installed."""
    names = ("chromium", "chromium-browser", "google-chrome")
    return next((path for path in map(shutil.which, names) if path), None)


def build_pdf(root: Path | None = None) -> Path:
    """The whole book as one PDF, offline: Sphinx's ``singlehtml`` build printed by headless
    Chromium (math typeset by the local MathJax, figures included) to :func:`pdf_path`,
    ``_build/pdf/layerwise-<scale>.pdf``."""
    root = root or repo_root()
    if (browser := chromium()) is None:
        raise ChapterFailed(
            "make pdf needs headless Chromium: `make browser` installs Debian's chromium"
        )
    _prepare(root)
    proc = _jupyter_book(root, "singlehtml")
    single = root / "_build" / "singlehtml"
    page = single / f"{toc_files(root)[0]}.html"
    if proc.returncode != 0 or not page.exists():
        raise ChapterFailed(
            f"singlehtml build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
        )
    # Sphinx writes the single page where the root document lives (book/) but links its assets from
    # the build's root: the page is printed from the root, where those links resolve.
    index = single / "layerwise-print.html"
    index.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    out = pdf_path(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    (out.parent / "layerwise.pdf").unlink(missing_ok=True)  # the unnamed PDF of older versions
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--run-all-compositor-stages-before-draw",
            "--virtual-time-budget=60000",
            "--no-pdf-header-footer",
            f"--print-to-pdf={out}",
            index.as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if not out.exists() or out.stat().st_size < 10_000:
        raise ChapterFailed(f"Chromium did not print the book to {out}:\n{proc.stderr[-3000:]}")
    return out


def pdf_pages(path: Path) -> int:
    """Number of pages of a PDF (counts its page objects; enough for the PDFs Chromium writes)."""
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", path.read_bytes()))
