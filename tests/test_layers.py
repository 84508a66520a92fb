"""The house (issue 27): the contracts of ``.importlinter`` hold (``make
test`` runs ``lint-imports`` too), no import circle between modules (issue
37), the floor of shared names imports nothing of the project but the
floor, and the README is for users."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = ("names", "thresholds", "paths", "errors", "tables", "meta_statistics")


def test_the_layer_contracts_hold():
    from importlinter.cli import lint_imports
    assert lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True,
                        no_logo=True) == 0


def module_cycles(graph, package: str = "qarla_spark"):
    """The import circles between modules of ``package`` in a grimp import
    graph: its strongly connected components of two modules or more (a
    module importing itself does not count). Every import counts, at any
    depth of the code (a function-level import too)."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    edges = {m: sorted(n for n in graph.find_modules_directly_imported_by(m)
                       if n in graph.modules and (n == package or n.startswith(package + "."))
                       and n != m) for m in modules}
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):            # Tarjan's algorithm, iteratively
        work = [(v, iter(edges[v]))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for m in modules:
        if m not in index:
            visit(m)
    return sorted(found)


def test_no_import_circle_between_modules():
    """Issue 37: no two modules of qarla_spark import each other, directly or
    through others (the layers' contract allows it inside a layer: this
    test does not). Fails with the circles found, e.g. ``stages.hbr`` ↔
    ``stages.statistics``."""
    import grimp
    graph = grimp.build_graph("qarla_spark", include_external_packages=False, cache_dir=None)
    assert module_cycles(graph) == []


def test_the_circle_check_finds_a_circle():
    """The check above sees a circle through a function-level import (a
    graph of three modules, a → b → c → a) and none once it is broken."""
    import grimp
    graph = grimp.ImportGraph()
    for m in ("qarla_spark", "qarla_spark.a", "qarla_spark.b", "qarla_spark.c"):
        graph.add_module(m)
    for a, b in (("a", "b"), ("b", "c"), ("c", "a")):
        graph.add_import(importer=f"qarla_spark.{a}", imported=f"qarla_spark.{b}")
    assert module_cycles(graph) == [["qarla_spark.a", "qarla_spark.b", "qarla_spark.c"]]
    graph.remove_import(importer="qarla_spark.c", imported="qarla_spark.a")
    assert module_cycles(graph) == []


def test_the_floor_imports_only_the_floor():
    """Every import of a floor module, at any depth of its code, is of the
    standard library, a third-party package or another floor module."""
    for name in FLOOR:
        tree = ast.parse((ROOT / "qarla_spark" / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            for module in modules:
                if module.startswith("qarla_spark"):
                    assert module.split(".")[1] in FLOOR or module == "qarla_spark", \
                        (name, module)


def test_the_readme_is_for_users():
    """README.md (issue 27): at most 500 lines and no dated measurement
    (measurements are docs/PERFORMANCE.md's and the benchmarks' JSON)."""
    import re
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 500
    assert not re.findall(r"\b20\d\d-[01]\d-[0-3]\d\b", text)
    assert (ROOT / "docs" / "PERFORMANCE.md").is_file()
