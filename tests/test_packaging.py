"""Packaging: every package is installed, package data is present."""

from __future__ import annotations

import re
import sys
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "qarla_spark").rglob("__init__.py")}
    found.add("qarla_spark.conf")
    assert found == listed


def test_the_package_does_not_need_the_developer_tools():
    """devtools/ (benchmarks, checks, synthetic testbeds, the run comparer)
    is not installed: pyproject lists qarla_spark's packages only, and no
    module of qarla_spark imports devtools."""
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert {name.split(".")[0] for name in listed} == {"qarla_spark"}
    importing = [f"{path.relative_to(ROOT)}:{number}"
                 for path in sorted((ROOT / "qarla_spark").rglob("*.py"))
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if re.match(r"\s*(from|import)\s+devtools\b", line)]
    assert importing == []


def test_conf_is_installed_as_a_package():
    conf = resources.files("qarla_spark.conf")
    for name in ("local.conf", "cluster.conf", "log4j2.properties", "summeval.toml"):
        assert (conf / name).is_file(), name


def test_readme_quick_start_is_two_make_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["make run", "make test"]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#") and not line.startswith("set ")
          and not line.startswith("cd ")]
    assert ci == ["make test"]
