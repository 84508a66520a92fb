"""The cluster check (jobs/cluster_check.py, `make cluster-check`; issue 14):
a standalone Master and two one-core Workers on 127.0.0.1 from the
pip-installed pyspark, the job submitted as the README's cluster section
says (qarla_spark shipped with --py-files, not installed in the executors'
Python), every table equal to a local[2] run, again with an executor killed
mid-run, and nothing left running afterwards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_cluster_check_passes_and_leaves_nothing_running(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "jobs" / "cluster_check.py"),
                           "--workdir", str(tmp_path), "--topics", "4"],
                          capture_output=True, text=True, timeout=3600)
    said = proc.stdout
    assert proc.returncode == 0, said + proc.stderr[-3000:]
    assert "cluster run vs local: 0 table(s) differ" in said
    assert "killed-executor run vs local: 0 table(s) differ" in said
    assert said.rstrip().endswith("cluster check: passed")
    assert "had to kill" not in said
