"""The "Your harness now" part of a lesson's closing card, worked out from the harness itself.

A page's card lists what the reader's `harness.py` holds once the page's labs pass: each region of
the file (`# == 3 loop ==`) with its public functions and classes, a class with its public
methods, and marked, what this page added and what it changed (a body that is not the same code,
docstrings aside). Constants are left out: the card names what the harness can do. It is read from the page's reference harness (its last lab's solution)
and the one before its first lab, so it cannot fall behind the code or list a name the file lacks,
and every page lists the same way.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

REGION = re.compile(r"^# == (\d+) (.+?) ==\s*$")


@dataclass(frozen=True)
class Name:
    name: str
    new: bool                                    # not in the harness before this page's labs
    methods: tuple["Name", ...] = ()             # a class's public methods (properties included)
    changed: bool = False                        # there before, and its code is not the same


@dataclass(frozen=True)
class Region:
    number: int
    title: str
    names: tuple[Name, ...] = field(default_factory=tuple)


def _public(name: str) -> bool:
    return not name.startswith("_")


def _code(node: ast.AST) -> str:
    """What a function does, as a comparable string: its AST without its docstring."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return ast.dump(ast.Module(body=body, type_ignores=[])) + ast.dump(node.args)


def _defined(text: str) -> list[tuple[int, str, str, dict[str, str]]]:
    """(line, name, code, {method: code}) of each public top-level function and class."""
    found = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
            found.append((node.lineno, node.name, _code(node) + type(node).__name__, {}))
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            methods = {item.name: _code(item) + type(item).__name__ for item in node.body
                       if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(item.name)}
            found.append((node.lineno, node.name, "", methods))
    return found


def _regions(text: str) -> list[tuple[int, int, str]]:
    """(line, number, title) of each region heading, in file order."""
    return [(i, int(m.group(1)), m.group(2)) for i, line in enumerate(text.splitlines(), 1)
            if (m := REGION.match(line))]


def _known(text: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Every public function and class of `text`: name -> (its code, {method: code})."""
    return {name: (code, methods) for _, name, code, methods in _defined(text)} if text.strip() else {}


def inventory(after: str, before: str = "") -> list[Region]:
    """The regions of the harness `after` that hold a public function or class, each with its
    names in file order, marked new when `before` (the harness the page started from) lacks them
    and changed when their code differs there. A name defined twice is listed once, where it is
    defined last."""
    old = _known(before)
    heads = _regions(after)
    last: dict[str, tuple[int, str, dict[str, str]]] = {}
    for line, name, code, methods in _defined(after):
        last[name] = (line, code, methods)
    placed: dict[int, list[Name]] = {}
    for name, (line, code, methods) in sorted(last.items(), key=lambda item: item[1][0]):
        region = max((h for h in heads if h[0] < line), default=None)
        if region is None:
            continue                      # above the first heading: imports and the like
        had_code, had_methods = old.get(name, (None, None))
        new = had_code is None
        entry = Name(name, new, tuple(
            Name(m, new or m not in had_methods, changed=not new and m in had_methods and had_methods[m] != c)
            for m, c in methods.items()), changed=not new and bool(code) and code != had_code)
        placed.setdefault(region[1], []).append(entry)
    titles = {number: title for _, number, title in heads}
    return [Region(number, titles[number], tuple(names)) for number, names in sorted(placed.items())]
