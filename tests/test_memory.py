"""qarla_spark.memory: memory the driver has freed goes back to the
operating system (docs/DECISIONS.md, "The driver's freed memory goes back")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CODE = """
import numpy as np, pyarrow as pa
from qarla_spark.memory import release_freed_memory
def rss():
    with open('/proc/self/status') as handle:
        return int(next(l for l in handle if l.startswith('VmRSS')).split()[1]) // 1024
kept = pa.array(np.arange(1000, dtype=np.int64))
arrays = [pa.array(np.arange(20000, dtype=np.int64) + i) for i in range(1000)]
strings = [[str(i) * 5 for i in range(1000)] for _ in range(200)]
del arrays, strings
freed = rss()
release_freed_memory()
print(freed - rss(), kept.to_numpy()[-1])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_freed_memory_goes_back_and_what_is_in_use_stays():
    """~200 MB of Arrow buffers and Python strings freed: most of it stays
    with the process until release_freed_memory, which leaves live data be."""
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         check=True, timeout=120)
    returned_mb, last = out.stdout.split()
    assert int(returned_mb) > 50, out.stdout
    assert last == "999"


CHECKED = """
import tempfile
import pandas, pyarrow, pyarrow.compute, pyspark.sql.pandas.types  # a run has them
from devtools.testbeds import scale_testbed, write_testbed
from qarla_spark.io import check_in_driver, parse_input_arg
from qarla_spark.memory import release_freed_memory
def status(key):
    with open('/proc/self/status') as handle:
        return int(next(l for l in handle if l.startswith(key)).split()[1]) // 1024
def made():   # what a run makes after the check (its Spark session), alive to its end
    return [dict(a=str(i), b=[str(i)] * 3) for i in range(20000)]
summaries, sources = write_testbed(scale_testbed(4, 100, 13), tempfile.mkdtemp())
specs = [parse_input_arg(summaries), parse_input_arg(sources, kind="sources")]
release_freed_memory()
base = status('VmRSS')
kept = made()
cost = status('VmRSS') - base
del kept
release_freed_memory()
before = status('VmRSS')
checked = check_in_driver(specs)
peak = status('VmHWM') - before
kept = made()
checked.tables = None   # handed to Spark (CheckedInput.testbed)
release_freed_memory()
print(peak, status('VmRSS') - before - cost)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_checked_input_leaves_nothing_behind_once_handed_over():
    """A 10,800-summary input checked in the driver, then objects made
    that live on (a run's Spark session), then the tables handed over: the
    driver keeps a small part of what the check took. Before the rows were
    turned into Arrow and freed inside the check, the objects made next
    were placed among them and kept most of it (15 of 18 MB with three
    tasks, 49 of 61 MB with ten; now 4 of 41 and 9 of 108)."""
    out = subprocess.run([sys.executable, "-c", CHECKED], capture_output=True, text=True,
                         check=True, timeout=300, cwd=ROOT)   # devtools: from the root
    peak, held = map(int, out.stdout.split())
    assert peak > 20, out.stdout
    assert held < peak / 4, out.stdout


POOL = """
import sys
from qarla_spark.cli import main
main(sys.argv[1:2] if sys.argv[1] == 'metrics' else sys.argv[1:3])
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
"""


@pytest.mark.parametrize("command, pool", [("report", "system"), ("validate", "system"),
                                           ("metrics", None)])
def test_the_commands_that_read_tables_take_arrow_memory_from_the_system(tmp_path, command,
                                                                         pool):
    """``qarla report``/``run``/``validate``/``similarities`` give pyarrow
    glibc's allocator, which returns what is freed (mimalloc, pyarrow's
    default, kept ~60 MB more after ten tasks' report); other commands keep
    the default."""
    missing = str(tmp_path / "missing")
    out = subprocess.run([sys.executable, "-c", POOL, command, missing], capture_output=True,
                         text=True, timeout=120)
    backend = out.stdout.split()[-1]
    assert backend == pool if pool else backend in ("mimalloc", "jemalloc"), out.stdout
