"""Where a chapter notebook glues each name, read from its jupytext source without running it,
and the markdown cells that quote a name before any code cell has glued it.

A name is glued by ``ch.glue(name, …)``, ``ch.glue_math(name, …)``, ``ch.glue_all({name: …})``
(a dict display, a comprehension, a union or ``**`` of them), ``ch.table(…, name=…)`` and
``ch.glue_outcomes(name)`` (default ``found_outcomes``). A literal name is known exactly; so is a
name taken from a literal collection that a loop or comprehension runs over (``for name in ("a",
"b")``, ``{k: v for k, v in {"a": …}.items()}``) and the keys of the dict a function of
``src/layerwise`` returns (``ch.glue_all(study.summary(…))``). An f-string name with other holes
(``f"dev_{kind}_last"``) is a pattern whose holes stand for any name part; a name computed
otherwise is a wildcard. A glue call in a function defined in the notebook glues where the
function is called, with the call's literal arguments in its name. A quoted name is placed at the
latest cell that can glue it, taking the most specific kind of match that exists (a literal, else
a pattern, else a wildcard), so a name is never taken as glued earlier than it may be. Checked
against executed notebooks (the cell whose outputs hold each glue record): the same late holes.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import jupytext

#: {glue}`name`, {glue:text}`name:fmt`, {glue:md}`name:myst`, {glue:figure}`name` …
ROLE = re.compile(r"\{glue(?::[a-z]+)?\}`([a-z0-9_]+)(?::[^`]*)?`")
#: ```{glue:figure} name``` and ```{glue} name``` directives
DIRECTIVE = re.compile(r"^[`:]{3,}\{glue(?::[a-z]+)?\}\s+([a-z0-9_]+)", re.M)
GLUE_ONE = {"glue", "glue_math"}  # name is the first argument
LITERAL, PATTERN, WILDCARD = 0, 1, 2


@dataclass(frozen=True)
class Glued:
    cell: int  # index of the code cell among all cells
    kind: int  # LITERAL, PATTERN or WILDCARD
    regex: re.Pattern[str]


SRC = Path(__file__).resolve().parents[1] / "src" / "layerwise"


def _literals(node: ast.expr) -> list[str] | None:
    """The strings a loop over ``node`` yields first (its keys, for a dict), if all are literal."""
    is_view = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    if is_view and not node.args and node.func.attr in ("items", "keys"):
        node = node.func.value
    if isinstance(node, ast.Call):
        items = _returned_keys(_callee(node)) or []
    elif isinstance(node, ast.Dict):
        items = list(node.keys)
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [e.elts[0] if isinstance(e, ast.Tuple) and e.elts else e for e in node.elts]
    else:
        return None
    if items and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in items):
        return [k.value for k in items]
    return None


def _loop_names(tree: ast.AST) -> dict[str, list[str]]:
    """Variables bound to literal strings by a ``for`` or a comprehension of ``tree``: the loop's
    target (or the first name of a tuple target) over a literal collection."""
    bound: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)):
            target = node.target
            if isinstance(target, ast.Tuple) and target.elts:
                target = target.elts[0]
            names = _literals(node.iter)
            if isinstance(target, ast.Name) and names is not None:
                bound.setdefault(target.id, []).extend(names)
    return bound


def _function(func: str) -> ast.FunctionDef | None:
    """The one function named ``func`` in ``src/layerwise`` (None if none or several)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text()
        if f"def {func}(" in text:
            found += [
                n for n in ast.walk(ast.parse(text))
                if isinstance(n, ast.FunctionDef) and n.name == func
            ]
    return found[0] if len(found) == 1 else None


def _returned_keys(func: str) -> list[ast.expr] | None:
    """The key expressions of the dict the function ``func`` of ``src/layerwise`` returns: a dict
    display's keys, or the keys a returned variable is given by ``out[key] = …`` in the function's
    body (None if there is no such single function or it returns anything else)."""
    fdef = _function(func)
    if fdef is None:
        return None
    keys: list[ast.expr] = []
    for node in ast.walk(fdef):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        if isinstance(node.value, ast.Dict) and None not in node.value.keys:
            keys += [k for k in node.value.keys if k is not None]
        elif isinstance(node.value, ast.Name):
            var = node.value.id
            assigned = [
                t.slice
                for a in ast.walk(fdef)
                if isinstance(a, ast.Assign)
                for t in a.targets
                if isinstance(t, ast.Subscript) and getattr(t.value, "id", None) == var
            ]
            if not assigned:
                return None
            keys += assigned
        else:
            return None
    return keys or None


def _returned_names(func: str) -> list[tuple[int, re.Pattern[str]]] | None:
    """The names :func:`_returned_keys` finds, as glued-name matches."""
    keys = _returned_keys(func)
    if keys is None:
        return None
    fdef = _function(func)
    bound = _loop_names(fdef) if fdef is not None else {}
    return [g for k in keys for g in _name_regexes(k, bound)]


def _name_regexes(node: ast.expr, bound: dict[str, list[str]]) -> list[tuple[int, re.Pattern[str]]]:
    """How exactly the expression ``node`` names glue records."""
    if isinstance(node, ast.Name) and node.id in bound:
        return [(LITERAL, re.compile(re.escape(n))) for n in bound[node.id]]
    if isinstance(node, ast.JoinedStr):
        parts, free = [], False
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(re.escape(v.value))
            elif isinstance(v.value, ast.Name) and v.value.id in bound and v.format_spec is None:
                parts.append("(?:" + "|".join(map(re.escape, bound[v.value.id])) + ")")
            else:
                parts.append("[a-z0-9_]+")
                free = True
        return [(PATTERN if free else LITERAL, re.compile("".join(parts)))]
    return [_name_regex(node)]


def _name_regex(node: ast.expr) -> tuple[int, re.Pattern[str]]:
    """How exactly the expression ``node`` names a glue record."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return LITERAL, re.compile(re.escape(node.value))
    if isinstance(node, ast.JoinedStr):
        parts = [
            re.escape(v.value) if isinstance(v, ast.Constant) else "[a-z0-9_]+"
            for v in node.values
        ]
        return PATTERN, re.compile("".join(parts))
    return WILDCARD, re.compile("[a-z0-9_]+")


def _dict_names(node: ast.expr, bound: dict[str, list[str]]) -> list[tuple[int, re.Pattern[str]]]:
    """The keys of the dict ``node`` builds: a display (``**`` parts included), a comprehension,
    a union ``a | b`` or a call of a ``src/layerwise`` function returning a display."""
    if isinstance(node, ast.Dict):
        return [
            g
            for k, v in zip(node.keys, node.values, strict=True)
            for g in (_dict_names(v, bound) if k is None else _name_regexes(k, bound))
        ]
    if isinstance(node, ast.DictComp):
        return _name_regexes(node.key, {**bound, **_loop_names(node)})
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _dict_names(node.left, bound) + _dict_names(node.right, bound)
    if isinstance(node, ast.Call):
        names = _returned_names(_callee(node))
        if names is not None:
            return names
    return [_name_regex(node)]


def _callee(node: ast.Call) -> str:
    """The called function's own name (``f`` of ``module.f(…)``)."""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _name_arg(node: ast.Call) -> ast.expr | None:
    """The expression a call ``ch.glue/glue_math/glue_outcomes/table(…)`` names its record by
    (``found_outcomes`` for a bare ``ch.glue_outcomes()``; None for other calls)."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    if func.value.id != "ch":
        return None
    kw = {k.arg: k.value for k in node.keywords}
    if func.attr in GLUE_ONE:
        return node.args[0] if node.args else kw.get("name")
    if func.attr == "glue_outcomes":
        return node.args[0] if node.args else kw.get("name", ast.Constant("found_outcomes"))
    if func.attr == "table":
        name = kw.get("name")
        return None if isinstance(name, ast.Constant) and name.value is None else name
    return None


def _is_glue_all(node: ast.Call) -> bool:
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "ch"
        and func.attr == "glue_all"
        and bool(node.args)
    )


@dataclass
class Function:
    """A function defined in the notebook that glues: its parameters, the glue calls of its body
    and the names its own loops bind."""

    params: list[str]
    calls: list[ast.Call]
    bound: dict[str, list[str]]


def _glues_of_call(
    node: ast.Call, bound: dict[str, list[str]]
) -> list[tuple[int, re.Pattern[str]]]:
    """The names one ``ch.glue…``/``ch.table`` call glues (none for other calls)."""
    if _is_glue_all(node):
        return _dict_names(node.args[0], bound)
    arg = _name_arg(node)
    return [] if arg is None else _name_regexes(arg, bound)


def _call_bound(node: ast.Call, fn: Function) -> dict[str, list[str]]:
    """The function's parameters that a call passes a literal string, bound to it."""
    args = dict(zip(fn.params, node.args, strict=False))
    args.update({k.arg: k.value for k in node.keywords if k.arg in fn.params})
    return {
        name: [arg.value]
        for name, arg in args.items()
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    }


def cell_glues(
    source: str, functions: dict[str, Function] | None = None
) -> list[tuple[int, re.Pattern[str]]]:
    """Every name one code cell's source glues (IPython magics are dropped before parsing).

    A glue call in the body of a function defined in the notebook glues where the function is
    called, not where it is defined: ``functions`` (updated in place) keeps each such function,
    and a call of it glues its body's names with the literal arguments of the call bound to the
    parameters (``def f(tag): ch.glue(f"{tag}_x", …)`` then ``f("conv")`` glues ``conv_x``)."""
    functions = {} if functions is None else functions
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    tree = ast.parse("\n".join(lines))
    bound = _loop_names(tree)
    inside: set[int] = set()  # glue calls of a function's body
    for fdef in ast.walk(tree):
        if isinstance(fdef, ast.FunctionDef):
            calls = [n for n in ast.walk(fdef) if isinstance(n, ast.Call)]
            calls = [n for n in calls if _is_glue_all(n) or _name_arg(n) is not None]
            if calls:
                functions[fdef.name] = Function([a.arg for a in fdef.args.args], calls,
                                                _loop_names(fdef))
                inside.update(id(n) for n in calls)
    out: list[tuple[int, re.Pattern[str]]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in inside:
            continue
        fn = functions.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if fn is None:
            out += _glues_of_call(node, bound)
        else:
            at_call = {**fn.bound, **_call_bound(node, fn)}
            out += [g for call in fn.calls for g in _glues_of_call(call, at_call)]
    return out


def quoted(markdown: str) -> list[str]:
    """The glue names a markdown cell quotes, in order."""
    return ROLE.findall(markdown) + DIRECTIVE.findall(markdown)


def late_glues(cells: list[tuple[str, str]]) -> list[str]:
    """``cell k quotes 'name' glued only in cell j (below)`` for every name a markdown cell quotes
    that no code cell above it glues. ``cells``: ``(cell_type, source)`` in order."""
    glued: list[Glued] = []
    functions: dict[str, Function] = {}
    for i, (kind, source) in enumerate(cells):
        if kind == "code":
            glued += [Glued(i, k, r) for k, r in cell_glues(source, functions)]
    problems = []
    for i, (kind, source) in enumerate(cells):
        if kind != "markdown":
            continue
        for name in quoted(source):
            matches = [g for g in glued if g.regex.fullmatch(name)]
            if not matches:
                problems.append(f"cell {i} quotes {name!r}, which no cell glues")
                continue
            best = min(g.kind for g in matches)
            where = max(g.cell for g in matches if g.kind == best)
            if where > i:
                problems.append(f"cell {i} quotes {name!r} glued only in cell {where} (below)")
    return problems


def notebook_cells(path: Path) -> list[tuple[str, str]]:
    """``(cell_type, source)`` of the jupytext notebook ``path`` in order."""
    nb = jupytext.read(path)
    return [(c.cell_type, c.source) for c in nb.cells]
