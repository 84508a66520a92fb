"""DDL schemas as pandas: the columns of a schema string and a typed empty
frame of it (what a Python function on the executors yields when it has no
row); and :func:`map_groups`, a function per group of rows in plain Python
over Arrow (no pandas frame per group)."""

from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Sequence

_EMPTY_DTYPES = {"string": object, "int": "int32", "long": "int64", "double": "float64",
                 "boolean": "bool"}


def schema_columns(schema: str) -> List[tuple]:
    """``"a string, b long"`` -> [("a", "string"), ("b", "long")] (top-level
    types only; a complex type is kept whole)."""
    out, depth, current = [], 0, ""
    for ch in schema:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return [tuple(part.split(None, 1)) for part in out]


def empty_frame(schema: str):
    """A typed empty pandas frame with the columns of a DDL ``schema``."""
    import pandas as pd
    return pd.DataFrame({c: pd.Series([], dtype=_EMPTY_DTYPES.get(t, object))
                         for c, t in schema_columns(schema)})


#: how many rows :func:`map_groups` gathers before it yields them as one
#: Arrow batch
ROWS_PER_BATCH = 10_000


def map_groups(df, keys: Sequence[str], func: Callable[[List[dict]], Iterable[dict]],
               schema, n_partitions: Optional[int] = None, order: Sequence[str] = ()):
    """``func(rows)`` once per group of ``df``'s rows with equal ``keys`` (the
    rows as dicts, Spark's nulls as ``None``), returning dicts with the
    fields of ``schema`` (a ``StructType``; a missing field is null): what
    ``groupBy(*keys).applyInPandas`` does, without a pandas frame in and
    out of each group (issue 36: a fixed cost that many small groups
    multiply). The rows are hash-partitioned by ``keys`` into
    :func:`~qarla_spark.spark.partitioning.topic_partitions` partitions
    (``n_partitions`` if given; never coalesced) and sorted by ``keys``
    within them, then by ``order`` (without it a group's rows come in the
    order the shuffle gives them, as to ``groupBy``) — and one
    ``mapInArrow`` per partition walks its consecutive groups in plain
    Python."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from qarla_spark.spark.partitioning import by_topic
    from qarla_spark.spark.worker import worker_ready

    arrow_schema = to_arrow_schema(schema)
    keys = tuple(keys)

    def run(batches):
        import pyarrow as pa
        worker_ready()
        current, group, out = None, [], []
        for batch in batches:
            for row in batch.to_pylist():
                key = tuple(row[k] for k in keys)
                if group and key != current:
                    out.extend(func(group))
                    group = []
                current = key
                group.append(row)
            if len(out) >= ROWS_PER_BATCH:
                yield pa.RecordBatch.from_pylist(out, schema=arrow_schema)
                out = []
        if group:
            out.extend(func(group))
        if out:
            yield pa.RecordBatch.from_pylist(out, schema=arrow_schema)

    return (by_topic(df, n_partitions, keys).sortWithinPartitions(*keys, *order)
            .mapInArrow(run, schema))
