"""The long similarity table the executors write from the cube rows
(stages/similarity_plan.long_arrow, issue 36): each topic's rows as the
Spark fallback makes them — every ordered pair s ≠ r and metric, s-major —
and the topic's key as plain string arrays, so the Parquet files are the
same bytes as when the key was a Python string per row."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from qarla_spark.stages.similarity_plan import long_arrow


def cube_frame(n: int = 4, k: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    values = rng.random((n, n, k))
    return values, pd.DataFrame({
        "task": ["t1"], "topic": ["topic é"], "names": [[f"s{i}" for i in range(n)]],
        "roles": [["model"] * 2 + ["peer"] * (n - 2)], "n_models": [2], "n_metrics": [k],
        "values": [values.tobytes()], "problem": [None]})


def test_the_long_rows_and_their_parquet_bytes():
    n, k = 4, 3
    values, frame = cube_frame(n, k)
    (table,) = long_arrow([f"m{j}" for j in range(k)])(frame)
    rows = table.to_pylist()
    want = [(f"s{s}", f"s{r}", f"m{j}", values[s, r, j])
            for s in range(n) for r in range(n) if s != r for j in range(k)]
    assert [(x["summarizer_s"], x["summarizer_r"], x["metric"], x["value"]) for x in rows] == want
    assert table.schema.field("task").type == pa.string()
    assert table.schema.field("topic").type == pa.string()
    assert table.column("task").to_pylist() == ["t1"] * len(want)
    assert table.column("topic").to_pylist() == ["topic é"] * len(want)
    # the same file as with a Python string per row
    old = table.set_column(0, "task", pa.array(np.full(len(want), "t1", dtype=object),
                                               type=pa.string()))
    old = old.set_column(1, "topic", pa.array(np.full(len(want), "topic é", dtype=object),
                                              type=pa.string()))

    def parquet(t):
        sink = io.BytesIO()
        pq.write_table(t, sink, compression="snappy")
        return sink.getvalue()
    assert parquet(table) == parquet(old)
