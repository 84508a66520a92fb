"""The notebooks run headless on the bundled testbed (a fresh kernel with
its own local Spark session) and state what the data shows: each claim in
their text is an ``assert`` in a cell, so a notebook that would say something
the run does not show fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

pytestmark = pytest.mark.slow


def execute(name: str, workdir: Path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(nb, timeout=1200, kernel_name="python3",
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return "\n".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                     for out in cell.get("outputs", []))


def test_qarla_summeval_notebook(tmp_path):
    text = execute("qarla_summeval.ipynb", tmp_path)
    for figure in ("king_per_metric.png", "queen_ranking.png", "jack_curve.png",
                   "king_vs_pearson.png"):
        assert (tmp_path / figure).stat().st_size > 10_000, figure
    assert "the best combination beats the best single metric: True" in text
    assert "models above every system: ['ref07', 'ref08', 'ref06', 'ref10', 'ref09']" in text
    assert (tmp_path / "runs" / "notebook" / "run.json").exists()


def test_hbr_summeval_notebook(tmp_path):
    text = execute("hbr_summeval.ipynb", tmp_path)
    for figure in ("auc_hbr_vs_measures.png", "robustness.png", "heterogeneity_vs_quality.png"):
        assert (tmp_path / figure).stat().st_size > 10_000, figure
    assert "HBR over 48 measures (seed 13)" in text
    assert "task summeval: heterogeneity from 10,000 sampled pairs of 24,000" in text
    assert not (tmp_path / "runs" / "hbr_notebook" / "king").exists()   # QARLA not run
