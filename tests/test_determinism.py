"""Fix 3 of issue 10: the same input and seed give bit-identical tables
whatever the partitioning — every table of a whole run (texts to HBR) under
other shuffle and topic partition counts. (The bundled SummEval run under
local[1], local[2] and 7 shuffle partitions: ``devtools/determinism.py``.)"""

from __future__ import annotations

import os

import numpy as np
import pytest

from devtools.compare import compare_runs, differences, read_sorted, table_names
from helpers import write_jsonl
from qarla_spark import pipeline
from qarla_spark.config import RunConfig
from qarla_spark.spark.partitioning import PARTITIONS_CONF


WORDS = ("the cat sat on a mat while dogs ran past the old red barn near green hills "
         "and rivers under a grey sky").split()


def tie_heavy_testbed(n_topics=4, n_models=5, n_peers=6, seed=3):
    """Short texts drawn from a small vocabulary (many equal similarities,
    hence ties everywhere), judged peers."""
    rng = np.random.default_rng(seed)
    records = []
    for t in range(n_topics):
        for i in range(n_models + n_peers):
            role = "model" if i < n_models else "peer"
            name = f"m{i}" if role == "model" else f"p{i - n_models}"
            text = " ".join(rng.choice(WORDS, size=int(rng.integers(5, 12)))) + " ."
            rec = {"task": "t", "topic": f"d{t}", "summarizer": name, "role": role,
                   "text": text}
            if role == "peer":
                rec["human"] = {"q": float(rng.integers(1, 4)), "r": float(rng.integers(1, 6))}
            records.append(rec)
    return records


def run(spark, path, out, settings):
    from qarla_spark.spark.partitioning import conf_restored
    with conf_restored(spark, list(settings)):
        for k, v in settings.items():
            spark.conf.set(k, v)
        pipeline.run(spark, RunConfig(
            inputs=(str(path),), out=str(out), metrics=("R-1.a", "R-2.a", "Rpre-1.a", "R-L.a",
                                                        "AVLS", "TVM.8"),
            clusters=3, jack_orders=3, hbr_pairs=60, metric_sets=("R-1.a,AVLS",),
            bootstrap=200))
    return str(out)


@pytest.mark.spark
@pytest.mark.slow
def test_every_table_is_bit_identical_under_other_partitionings(spark, tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", tie_heavy_testbed())
    first = run(spark, path, tmp_path / "a", {"spark.sql.shuffle.partitions": "2"})
    other = run(spark, path, tmp_path / "b", {"spark.sql.shuffle.partitions": "7",
                                              PARTITIONS_CONF: "1"})
    assert len(table_names(first)) == 34      # metric_eval, metric_ranks, king_vs_judges, across,
    #                                           rater_agreement, king_topics
    assert len(read_sorted(f"{first}/king")) > 6 and len(read_sorted(f"{first}/hbr")) == 24
    assert len(read_sorted(f"{first}/metric_eval")) > 6
    assert compare_runs(first, other) == {name: [] for name in table_names(first)}


def test_differences_are_found():
    import pandas as pd
    a = pd.DataFrame({"k": ["x", "y"], "v": [0.1 + 0.2, 1.0]})
    b = pd.DataFrame({"k": ["x", "y"], "v": [0.3, 1.0]})
    assert differences(a, a) == [] and differences(a, b) == ["v: 1 of 2 rows"]
    assert differences(a, b.iloc[:1]) == ["2 rows vs 1"]


def test_partitioned_tables_are_compared_a_partition_at_a_time(tmp_path, monkeypatch):
    """A table written by task (the similarities, QUEEN and HBR of every
    summary) is compared partition by partition, so a run of many tasks
    is never read whole; a differing or missing partition is named."""
    import pandas as pd

    import devtools.compare as compare

    def write(root, frames):
        for task, frame in frames.items():
            (root / "sims" / f"task={task}").mkdir(parents=True)
            frame.to_parquet(root / "sims" / f"task={task}" / "part-0.parquet")
        return str(root / "sims")
    one = pd.DataFrame({"s": ["a", "b"], "v": [0.5, 0.25]})
    a = write(tmp_path / "a", {"t1": one, "t2": one})
    b = write(tmp_path / "b", {"t1": one, "t2": one.assign(v=[0.5, 0.75]), "t3": one})
    read = []
    real = compare.read_sorted

    def reading(path):
        read.append(os.path.basename(path))
        return real(path)
    monkeypatch.setattr(compare, "read_sorted", reading)
    assert compare.compare_table(a, a) == []
    assert set(read) == {"task=t1", "task=t2"}
    assert compare.compare_table(a, b) == ["task=t2: v: 1 of 2 rows", f"task=t3 only in {b}"]
