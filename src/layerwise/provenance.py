"""Which code a cached result depends on: a fingerprint of source text, never a hand-kept version.

The results store (SPEC §1 "Results store") keys an entry on the source of the code that computes
it: the module of the called function and every module of the package it imports, directly or
transitively.  :func:`module_closure` finds that set by parsing each module's imports with
:mod:`ast` — ``import pkg.x``, ``from pkg.x import y``, ``from .x import y``, ``from . import x``,
``from ..x import y`` inside subpackages, ``importlib.import_module("pkg.x")``, anywhere in the file
(function bodies included, where this code base imports a lot) — plus the parent packages
(``__init__.py``) that importing a module executes.  :func:`code_fingerprint` is the SHA-256 over
the sorted ``(module name, source)`` pairs of that set.

Only modules of the tracked packages are followed and hashed: ``layerwise`` and the top-level
package (or plain module) of the module asked about, which is ``layerwise`` itself for the book's
chapters and a throwaway package in the tests.  numpy, torch and the standard library are recorded
by version in the store's metadata, not hashed.  Both functions are cached per process: the code a
process runs is the code it imported, so the fingerprint is computed once and costs nothing after.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path

#: The package whose modules are always followed and hashed.
PACKAGE = "layerwise"
#: The directory that holds the ``layerwise`` package folder (``src/`` in the repository).
PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def _top(name: str) -> str:
    return name.partition(".")[0]


def _locate_root(top: str) -> Path:
    """The directory holding top-level package or module ``top``, where Python imports it from."""
    if top == PACKAGE:
        return PACKAGE_ROOT
    mod = sys.modules.get(top)
    origin = getattr(mod, "__file__", None)
    if origin is None:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            spec = None
        origin = None if spec is None else spec.origin
    if origin is None or not origin.endswith(".py"):
        raise ModuleNotFoundError(f"module {top!r} has no Python source file to fingerprint")
    path = Path(origin).resolve()
    return path.parent.parent if path.name == "__init__.py" else path.parent


def _module_file(name: str, roots: dict[str, Path]) -> Path | None:
    """Source file of dotted module ``name`` (a package's ``__init__.py``), or ``None`` if none."""
    parts = name.split(".")
    base = roots[parts[0]].joinpath(*parts)
    init = base / "__init__.py"
    if init.is_file():
        return init
    plain = base.parent / (base.name + ".py")
    return plain if plain.is_file() else None


@lru_cache(maxsize=None)
def _imports(name: str, path: Path, tracked: frozenset[str]) -> tuple[tuple[str, bool], ...]:
    """Modules of the tracked packages that module ``name`` (file ``path``) may import, each with
    whether it must exist (``False`` for ``from m import x``, where ``x`` may be an attribute)."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, True) for a in node.names if _top(a.name) in tracked]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 >= len(package) or not package:
                    raise ImportError(
                        f"{path}: relative import beyond the top-level package (line {node.lineno})"
                    )
                base = package[: len(package) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if _top(mod) not in tracked:
                continue
            found.append((mod, True))
            found += [(f"{mod}.{a.name}", False) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call):  # importlib.import_module("pkg.x") with a literal name
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if fname == "import_module" and node.args and isinstance(node.args[0], ast.Constant):
                target = node.args[0].value
                if (
                    isinstance(target, str)
                    and not target.startswith(".")
                    and _top(target) in tracked
                ):
                    found.append((target, True))
    return tuple(found)


@lru_cache(maxsize=None)
def _closure(module: str, root: Path | None) -> tuple[tuple[str, Path], ...]:
    tracked = frozenset({PACKAGE, _top(module)})
    given = {} if root is None else {_top(module): root}
    roots = {top: given[top] if top in given else _locate_root(top) for top in tracked}
    seen: dict[str, Path] = {}
    todo = [(module, True)]
    loaded = getattr(sys.modules.get(module), "__file__", None)
    while todo:
        name, required = todo.pop()
        if name in seen:
            continue
        if name == module and root is None and loaded and loaded.endswith(".py"):
            path: Path | None = Path(
                loaded
            ).resolve()  # the file it was imported from (a script's too)
        else:
            path = _module_file(name, roots)
        if path is None:
            if required:
                raise ModuleNotFoundError(
                    f"no source file for module {name!r} under {roots[_top(name)]}"
                )
            continue  # ``from m import x`` where ``x`` is a name defined in ``m``
        seen[name] = path
        parts = name.split(".")
        todo += [
            (".".join(parts[:i]), True) for i in range(1, len(parts))
        ]  # parent packages run first
        todo += _imports(name, path, tracked)
    return tuple(sorted(seen.items()))


def module_closure(module: str, root: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """Sorted names of ``module`` and of every module of its top-level package and of ``layerwise``
    that it imports, directly or transitively, with the parent packages those imports execute.

    ``root`` is the directory holding ``module``'s top-level package (default: where Python imports
    it from); raises ``ModuleNotFoundError`` when an import of a tracked package has no source."""
    return tuple(
        name for name, _ in _closure(module, None if root is None else Path(root).resolve())
    )


@lru_cache(maxsize=None)
def _fingerprint(module: str, root: Path | None) -> str:
    h = hashlib.sha256()
    for name, path in _closure(module, root):
        text = path.read_bytes().replace(
            b"\r\n", b"\n"
        )  # the same checkout on any OS: the same key
        h.update(name.encode() + b"\0" + hashlib.sha256(text).digest())
    return h.hexdigest()


def code_fingerprint(module: str, root: str | os.PathLike[str] | None = None) -> str:
    """SHA-256 over the source text of ``module`` and of every module in :func:`module_closure`,
    in sorted order: it changes exactly when the source of one of those modules changes."""
    return _fingerprint(module, None if root is None else Path(root).resolve())


def fingerprint_of(modules: str | Iterable[str]) -> tuple[str, tuple[str, ...]]:
    """Fingerprint and hashed modules of the code of several modules (the union of
    their closures)."""
    names = [modules] if isinstance(modules, str) else sorted(set(modules))
    if not names:
        raise ValueError("fingerprint_of needs at least one module name")
    if len(names) == 1:
        return code_fingerprint(names[0]), module_closure(names[0])
    h = hashlib.sha256()
    for n in names:
        h.update(n.encode() + b"\0" + code_fingerprint(n).encode())
    return h.hexdigest(), tuple(sorted({m for n in names for m in module_closure(n)}))


def function_fingerprint(func: Callable[..., object]) -> tuple[str, tuple[str, ...]]:
    """Fingerprint and hashed modules of the code behind ``func``: its module's closure when the
    module has a source file; otherwise (a function typed into a notebook's kernel) the function's
    own source together with the whole ``layerwise`` package, which it may use through any name."""
    module = func.__module__
    try:
        return code_fingerprint(module), module_closure(module)
    except ModuleNotFoundError:
        if getattr(sys.modules.get(module), "__file__", None):
            raise  # a file that imports a module that does not exist: not a case to paper over
    source = inspect.getsource(func)  # raises OSError when even that is unknown: never an empty key
    whole, names = fingerprint_of(all_modules())
    h = hashlib.sha256(source.encode() + b"\0" + whole.encode())
    return h.hexdigest(), (f"{module}.{func.__qualname__} (source)", *names)


def all_modules() -> tuple[str, ...]:
    """Every module of the ``layerwise`` package, packages included, sorted."""
    out = set()
    for p in (PACKAGE_ROOT / PACKAGE).rglob("*.py"):
        parts = p.relative_to(PACKAGE_ROOT).with_suffix("").parts
        out.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return tuple(sorted(out))


def clear_cache() -> None:
    """Forget the fingerprints computed in this process (for tests that edit source files)."""
    _imports.cache_clear()
    _closure.cache_clear()
    _fingerprint.cache_clear()


def git_commit(
    root: Path, *, short: bool = False, paths: Sequence[str] = ("src", "notebooks")
) -> str:
    """The checkout's commit at ``root`` (``short``: abbreviated), with ``+uncommitted changes``
    when tracked files under ``paths`` differ from it (the code that computes results), or
    ``unknown`` outside a git checkout — what evidence and robustness runs record."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head = git("rev-parse", *(["--short"] if short else []), "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", *paths)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+uncommitted changes" if dirty else "")
