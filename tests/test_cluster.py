"""The cluster check (devtools/cluster_check.py, `make cluster-check`; issue 14):
a standalone Master and two one-core Workers on 127.0.0.1 from the
pip-installed pyspark, the job submitted as the README's cluster section
says (qarla_spark shipped with --py-files, not installed in the executors'
Python), every table equal to a local[2] run, again with an executor killed
mid-run, and nothing left running afterwards, nor after a second cluster
started and stopped in the same place (no pid file, port or process of the
first one in its way)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_cluster_check_passes_and_leaves_nothing_running(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "devtools" / "cluster_check.py"),
                           "--workdir", str(tmp_path), "--topics", "4"],
                          capture_output=True, text=True, timeout=3600)
    said = proc.stdout
    assert proc.returncode == 0, said + proc.stderr[-3000:]
    assert "cluster run vs local: 0 table(s) differ" in said
    assert "killed-executor run vs local: 0 table(s) differ" in said
    assert said.rstrip().endswith("cluster check: passed")
    assert "had to kill" not in said
    assert " = " in said and "x the local[2] run" in said     # the cluster/local ratio
    assert not spark_daemons(), "a Master, Worker or executor is still running"

    from devtools.cluster_check import Cluster
    again = Cluster(tmp_path / "again")
    try:
        again.start()
        assert len(again.pids()) == 3          # a Master and two Workers
    finally:
        assert again.stop() == []
    assert not spark_daemons()


def spark_daemons():
    """Java processes of a standalone cluster running on this machine."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if any(c in cmdline for c in (b"deploy.master.Master", b"deploy.worker.Worker",
                                          b"CoarseGrainedExecutorBackend")):
                found.append(int(proc.name))
    return found
