"""The house (issue 27): the contracts of ``.importlinter`` hold (``make
test`` runs ``lint-imports`` too), the floor of shared names imports nothing
of the project but the floor, and the README is for users."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = ("names", "thresholds", "paths", "errors", "tables")


def test_the_layer_contracts_hold():
    from importlinter.cli import lint_imports
    assert lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True,
                        no_logo=True) == 0


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
