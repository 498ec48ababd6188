"""The import graph of ``verigrad/`` has no circle between files.

Every module under ``verigrad/`` is read (not run) with ``ast``; every ``import`` and
``from ... import`` statement counts, at the top of the file or inside a function (a
lazy import that dodges a circle at run time is still a circle in the design).
Relative imports are resolved against the importing module's package.

What an import statement points at:

- ``import a.b.c`` -> the module ``a.b.c``;
- ``from a.b import c`` -> the module ``a.b.c`` when it is one (a submodule), else the
  module ``a.b`` (a package means its ``__init__.py``).

Only modules inside ``verigrad`` are nodes; the standard library and third-party
packages are not, and neither are modules imported by a name computed at run time
(``importlib.import_module(name)``). A tangle is a strongly connected component of
two or more files; the test prints a shortest circle through each, and the tangle's
other files if the circle does not pass through them all.

The layers of ``verigrad.proof`` are checked too: each module imports only from its
own layer and the layers below it.
"""
from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest

PACKAGE = "verigrad"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE


def module_files(root: Path = ROOT) -> dict:
    """``{module name: path}`` for every ``.py`` file of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _package_of(module: str, path: Path) -> str:
    """The package a relative import of ``module`` is resolved against."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def imported_modules(module: str, path: Path, modules: dict) -> set:
    """The modules of ``modules`` that ``module`` (the file ``path``) imports anywhere."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(module, path).split(".")
                anchor = package[:len(package) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in modules:
                    out.add(sub)
                elif base in modules:
                    out.add(base)
    out.discard(module)
    return out


def import_graph(root: Path = ROOT) -> dict:
    """``{module: set of modules it imports}`` over the package."""
    modules = module_files(root)
    return {m: imported_modules(m, p, modules) for m, p in modules.items()}


def strongly_connected(graph: dict) -> list:
    """The strongly connected components of ``graph`` (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                out.append(sorted(component))
    return out


def shortest_cycle(graph: dict, component: list) -> list:
    """A shortest circle through the first module of ``component`` (breadth first)."""
    inside = set(component)
    start = component[0]
    parent = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node] & inside):
            if nxt == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return list(reversed(path)) + [start]
            if nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return component


def tangles(graph: dict) -> list:
    """``(circle, component)`` for each strongly connected component of two or more
    modules: a shortest circle in it, and all its modules."""
    return [(shortest_cycle(graph, c), c) for c in strongly_connected(graph) if len(c) > 1]


def describe(circle: list, component: list) -> str:
    text = " -> ".join(circle)
    others = sorted(set(component) - set(circle))
    return text + (f"\n    (the same tangle also holds {', '.join(others)})" if others else "")


def _area(module: str) -> str:
    """``verigrad.kernel`` for ``verigrad.kernel.terms``; ``verigrad`` for top-level modules."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or (len(parts) == 2 and (ROOT / parts[1]).is_dir()) else parts[0]


GRAPH = import_graph()
AREAS = sorted({_area(m) for m in GRAPH})


def test_the_graph_is_read():
    assert "verigrad.kernel.terms" in GRAPH["verigrad.kernel.theorem"]
    assert "verigrad.proof.facts" in GRAPH["verigrad.proof.proof_log"]
    assert {"verigrad.kernel", "verigrad.proof", "verigrad.report"} <= set(AREAS)


@pytest.mark.parametrize("area", AREAS)
def test_no_import_cycle_between_files(area):
    """No circle passes through a file of ``area`` (one test per package of verigrad/,
    so a circle is reported where it is; every circle fails at least one)."""
    found = [(c, comp) for c, comp in tangles(GRAPH) if any(_area(m) == area for m in comp)]
    if found:
        report = "\n".join(describe(c, comp) for c, comp in found)
        pytest.fail(f"{len(found)} import circle(s) through {area}:\n{report}", pytrace=False)


# The layers of verigrad.proof, bottom to top (see its __init__). A module may import
# from its own layer (the test above rules out circles) and from the layers below.
PROOF_LAYERS = [
    ["errors"],
    ["expressions"],
    ["statements"],
    ["tactics"],
    ["justification", "cursor", "facts", "proof_log", "closing"],
    ["context", "complex_symbols", "script", "citation", "theorem", "falsify", "workers"],
    ["library"],
    ["command"],
    [""],                      # the package itself: the public API
]


def _proof_layer(module: str) -> int:
    rest = module[len("verigrad.proof"):].lstrip(".").split(".")[0]
    for k, names in enumerate(PROOF_LAYERS):
        if rest in names:
            return k
    raise AssertionError(f"{module} is in no layer of verigrad.proof: add it to PROOF_LAYERS")


def test_the_proof_language_imports_only_downward():
    """And the layers above expressions use that layer through its package only."""
    proof = [m for m in GRAPH if m == "verigrad.proof" or m.startswith("verigrad.proof.")]
    layer = "verigrad.proof.expressions"
    wrong = []
    for m in proof:
        for n in GRAPH[m]:
            if n in proof and _proof_layer(n) > _proof_layer(m):
                wrong.append(f"{m} -> {n} (a higher layer)")
            elif n.startswith(layer + ".") and not (m == layer or m.startswith(layer + ".")):
                wrong.append(f"{m} -> {n} (past verigrad.proof.expressions)")
    if wrong:
        pytest.fail("imports against the layers of verigrad.proof:\n" + "\n".join(sorted(wrong)), pytrace=False)


def test_cycles_are_found(tmp_path):
    """The detector itself: a circle through a relative and a function-level import."""
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import a\n")
    (pkg / "sub" / "a.py").write_text("from .b import thing\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..sub import c\n")
    (pkg / "sub" / "c.py").write_text("import verigrad.sub.a\nimport os\n")
    (pkg / "lone.py").write_text("from verigrad.sub import a\n")
    graph = import_graph(pkg)
    assert graph["verigrad.sub.a"] == {"verigrad.sub.b"}
    assert graph["verigrad.sub.b"] == {"verigrad.sub.c"}
    assert graph["verigrad.lone"] == {"verigrad.sub.a"}
    circle = ["verigrad.sub.a", "verigrad.sub.b", "verigrad.sub.c", "verigrad.sub.a"]
    assert tangles(graph) == [(circle, circle[:3])]
    assert describe(*tangles(graph)[0]) == " -> ".join(circle)
