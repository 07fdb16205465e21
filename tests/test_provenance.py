"""The code part of a results-store key (layerwise.provenance): a fingerprint of the source of the
called module and of every module it imports, so that no cached result outlives an edit of its
code."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from layerwise import provenance as pv
from layerwise.chapter import Chapter

# A throwaway package exercising every import form the closure must follow.
FILES = {
    "__init__.py": "",
    "util.py": "def step(x):\n    return x + 1  # the training step\n",
    "sub/__init__.py": "from .engine import run_engine  # noqa: F401\n",
    "sub/engine.py": "from ..util import step\n\n\ndef run_engine(x):\n    return step(x)\n",
    "train.py": (
        "import numpy as np\n\nCALLS = []\n\n\ndef fit(n):\n"
        "    from .sub import engine  # imported inside the function body\n"
        "    CALLS.append(n)\n    return {'y': np.array([engine.run_engine(i) for i in "
        "range(n)])}\n"
    ),
    "plain.py": "X = 1\n",
    "other.py": "import json  # noqa: F401\n\nfrom . import plain  # noqa: F401\n",
    "absolute.py": "import {pkg}.plain  # noqa: F401\nfrom {pkg}.sub.engine import run_engine  # "
    "noqa: F401\n",
    "dynamic.py": "import importlib\n\nmod = importlib.import_module('{pkg}.plain')\n",
    "broken.py": "from .missing import thing  # noqa: F401\n",
}


@pytest.fixture
def pkg(tmp_path, monkeypatch):
    """Write the package under a unique name into ``tmp_path``, importable; forget it afterwards."""
    name = f"lwprov_{uuid.uuid4().hex[:10]}"
    for rel, text in FILES.items():
        path = tmp_path / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{pkg}", name))
    monkeypatch.syspath_prepend(str(tmp_path))
    pv.clear_cache()
    yield name, tmp_path
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]
    pv.clear_cache()


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    # a process fingerprints the code it imported once; the edit is a new process's
    pv.clear_cache()


def test_closure_follows_every_import_form(pkg):
    name, root = pkg
    assert pv.module_closure(f"{name}.train", root) == tuple(
        f"{name}{s}" for s in ("", ".sub", ".sub.engine", ".train", ".util")
    )  # body, `..`, parents
    assert pv.module_closure(f"{name}.absolute", root) == tuple(
        f"{name}{s}" for s in ("", ".absolute", ".plain", ".sub", ".sub.engine", ".util")
    )
    assert pv.module_closure(f"{name}.other", root) == (
        name,
        f"{name}.other",
        f"{name}.plain",
    )  # no json
    assert pv.module_closure(f"{name}.dynamic", root) == (name, f"{name}.dynamic", f"{name}.plain")
    with pytest.raises(ModuleNotFoundError, match="missing"):
        pv.module_closure(f"{name}.broken", root)  # never skipped silently


def test_fingerprint_changes_with_a_transitive_import_only(pkg):
    name, root = pkg
    train, other = (
        pv.code_fingerprint(f"{name}.train", root),
        pv.code_fingerprint(f"{name}.other", root),
    )
    assert len(train) == 64 and train != other
    _edit(
        root / name, "util.py", "x + 1", "x + 2"
    )  # util is imported by sub.engine, imported by train
    assert pv.code_fingerprint(f"{name}.train", root) != train
    assert pv.code_fingerprint(f"{name}.other", root) == other  # other does not import util
    _edit(root / name, "util.py", "x + 2", "x + 1")
    assert pv.code_fingerprint(f"{name}.train", root) == train  # content, not time stamps


def test_cached_call_recomputes_after_an_edit_of_imported_code(pkg, tmp_path):
    name, root = pkg
    train = importlib.import_module(f"{name}.train")
    ch = Chapter("42_demo", scale="ci", seed=0, device="cpu", results=tmp_path / "results")
    a = ch.cached_call(train.fit, n=3)
    b = ch.cached_call(train.fit, n=3)  # an unchanged tree re-uses the entry
    assert (
        train.CALLS == [3] and np.array_equal(a["y"], [1, 2, 3]) and np.array_equal(b["y"], a["y"])
    )
    [meta_path] = (tmp_path / "results" / "store").glob("42_demo.fit/*/meta.json")
    meta = json.loads(meta_path.read_text())
    assert meta["code_version"] == pv.code_fingerprint(f"{name}.train")
    assert meta["code_modules"] == list(pv.module_closure(f"{name}.train"))
    _edit(root / name, "plain.py", "X = 1", "X = 2")  # not imported by train: still re-used
    ch.cached_call(train.fit, n=3)
    assert train.CALLS == [3]
    _edit(
        root / name, "util.py", "x + 1  # the training step", "x + 1  # the training step, edited"
    )
    ch.cached_call(train.fit, n=3)  # the edit of a transitively imported module recomputes
    assert train.CALLS == [3, 3]
    ch.cached_call(train.fit, n=3)
    assert train.CALLS == [3, 3]


def test_fingerprint_is_the_same_in_another_process(pkg):
    name, root = pkg
    here = [pv.code_fingerprint("layerwise.labatie"), pv.code_fingerprint(f"{name}.train", root)]
    code = (
        "import sys; from layerwise.provenance import code_fingerprint as f; "
        "print(f('layerwise.labatie'), f(sys.argv[1], sys.argv[2]))"
    )
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-c", code, f"{name}.train", str(root)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert run.stdout.split() == here


def test_every_layerwise_module_has_a_closure_of_layerwise_modules():
    modules = pv.all_modules()
    assert {
        "layerwise",
        "layerwise.moments",
        "layerwise.moments.config",
        "layerwise.networks",
    } <= set(modules)
    for m in modules:
        closure = pv.module_closure(m)
        assert m in closure and "layerwise" in closure
        assert all(c == "layerwise" or c.startswith("layerwise.") for c in closure)
    # the engine is imported inside Chapter.simulate_moments's body; networks imports none of it
    chapter = set(pv.module_closure("layerwise.chapter"))
    assert {"layerwise.moments", "layerwise.moments.runtime", "layerwise.stats"} <= chapter
    assert "layerwise.moments" not in pv.module_closure("layerwise.networks")
    assert pv.code_fingerprint("layerwise.labatie") != pv.code_fingerprint("layerwise.networks")


def test_a_function_of_a_test_file_or_typed_in_a_kernel_is_fingerprinted():
    def draw(n: int) -> dict:
        return {"y": np.arange(n)}

    fp, modules = pv.function_fingerprint(draw)
    assert fp == pv.code_fingerprint(draw.__module__) and draw.__module__ in modules
    assert (
        "layerwise.provenance" in modules and "layerwise.chapter" in modules
    )  # what this file imports
    draw.__module__ = "__no_such_module__"  # as a function typed into a notebook's kernel
    fp2, modules2 = pv.function_fingerprint(draw)
    assert (
        fp2 != fp
        and modules2[0].endswith("draw (source)")
        and set(pv.all_modules()) <= set(modules2)
    )


def test_git_commit_names_the_head_and_flags_uncommitted_code(tmp_path: Path):
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True
        ).stdout.strip()

    assert pv.git_commit(tmp_path) == "unknown"  # not a checkout
    git("init", "-q")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    head = git("rev-parse", "HEAD")
    assert pv.git_commit(tmp_path) == head
    assert pv.git_commit(tmp_path, short=True) == git("rev-parse", "--short", "HEAD")
    (tmp_path / "notes.txt").write_text("untracked, outside the code\n")
    assert pv.git_commit(tmp_path) == head
    (tmp_path / "src" / "a.py").write_text("x = 2\n")
    assert pv.git_commit(tmp_path) == head + "+uncommitted changes"


@pytest.mark.parametrize("study", [f"layerwise.studies.ch{i:02d}" for i in range(1, 9)])
def test_a_study_cache_does_not_follow_the_book_machinery(study):
    """A study's cached results are keyed on the source of what it imports: a study that imported
    the dashboard or the scorecard (Chapter 6 did, to read tracked evidence) recomputed its hours
    of `paper` training whenever a page's wording changed."""
    machinery = {"book", "chapter", "dashboard", "executor", "htmltable", "pages", "paths",
                 "provenance", "render", "robustness", "runner", "scorecard", "store"}
    _, modules = pv.fingerprint_of(study)
    assert not {m.removeprefix("layerwise.") for m in modules} & machinery
