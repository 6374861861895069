"""builder/ is a pipeline of small modules: each imports only modules before it, never in a
circle, not even through an import tucked inside a function."""
from __future__ import annotations

import ast
from pathlib import Path

BUILDER = Path(__file__).resolve().parents[1] / "builder"


def imports() -> dict[str, set[str]]:
    """{module: the builder modules it imports, anywhere in its text}."""
    graph = {}
    for path in sorted(BUILDER.glob("*.py")):
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("builder."):
                found.add(node.module.split(".")[1])
            elif isinstance(node, ast.ImportFrom) and node.module == "builder":
                found |= {alias.name for alias in node.names}
        graph[path.stem] = {name for name in found if (BUILDER / f"{name}.py").exists()}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of `graph`, as the list of modules around it, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for other in sorted(graph.get(module, ())):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[module] = 2
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_the_finder_finds_a_circle():
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None


def test_builder_has_no_import_circle():
    graph = imports()
    assert graph["html"] and graph["directives"], "the graph was read"
    assert circle(graph) is None, " -> ".join(circle(graph))
