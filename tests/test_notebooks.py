"""The notebooks run headless on the bundled testbed (a fresh kernel with
its own local Spark session) and state what the data shows: each claim in
their text is an ``assert`` in a cell, so a notebook that would say something
the run does not show fails here. The committed notebooks carry the outputs
of their committed code (``make notebooks`` refreshes them); this is checked
without running anything."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ("qarla_summeval.ipynb", "hbr_summeval.ipynb")


def _executor():
    """notebooks/execute.py (what ``make notebooks`` runs), as a module."""
    spec = importlib.util.spec_from_file_location("notebooks_execute", NOTEBOOKS / "execute.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def execute(name: str, workdir: Path):
    """Execute a copy of the committed notebook in ``workdir``; the text of
    its outputs."""
    copy = workdir / name
    shutil.copy(NOTEBOOKS / name, copy)
    nb = _executor().execute(copy, workdir)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", out
    return "\n".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                     for out in cell.get("outputs", []))


@pytest.mark.slow
def test_qarla_summeval_notebook(tmp_path):
    text = execute("qarla_summeval.ipynb", tmp_path)
    for figure in ("king_per_metric.png", "queen_ranking.png", "jack_curve.png",
                   "king_vs_pearson.png"):
        assert (tmp_path / figure).stat().st_size > 10_000, figure
    assert "the best combination beats the best single metric: True" in text
    assert "models above every system: ['ref07', 'ref08', 'ref06', 'ref10', 'ref09']" in text
    assert (tmp_path / "runs" / "notebook" / "run.json").exists()


@pytest.mark.slow
def test_hbr_summeval_notebook(tmp_path):
    text = execute("hbr_summeval.ipynb", tmp_path)
    for figure in ("auc_hbr_vs_measures.png", "robustness.png", "heterogeneity_vs_quality.png"):
        assert (tmp_path / figure).stat().st_size > 10_000, figure
    assert "HBR over 48 measures (seed 13)" in text
    assert "task summeval: heterogeneity from 10,000 sampled pairs of 24,000" in text
    assert not (tmp_path / "runs" / "hbr_notebook" / "king").exists()   # QARLA not run


# --- the committed notebooks carry their outputs (no kernel, no Spark) -------

@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_carries_the_outputs_of_its_code(name):
    import nbformat
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    # executed top to bottom in one kernel, by `make notebooks` ...
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1)), \
        f"{name} is not executed in order: run `make notebooks`"
    # ... from the code as committed (a cell edited afterwards changes the hash)
    assert nb.metadata.get("qarla", {}).get("code_sha256") == _executor().code_sha256(nb), \
        f"{name}: its code changed since it was executed: run `make notebooks`"
    outputs = [out for cell in code for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    # every figure the notebook saves is also shown inline, as a PNG
    for cell in code:
        if "savefig(" in cell.source:
            pngs = [out for out in cell.outputs if "image/png" in out.get("data", {})]
            assert len(pngs) == 1, (name, cell.source[:60])
    # the first cell prints the run's summary
    assert any("best" in out.get("text", "") or "HBR" in out.get("text", "")
               for out in code[0].outputs)
    size = (NOTEBOOKS / name).stat().st_size
    assert size < 2_000_000, f"{name} is {size:,} bytes"
