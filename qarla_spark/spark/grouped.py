"""Small per-group work in Python on the executors, and exact means.

:func:`per_group` runs a pure function on each group of rows, groups kept
whole (hash-partitioned by their keys) and one Python call per partition
(``groupBy().applyInPandas`` makes one per group, too slow for the 17,600
groups of a SummEval run). :func:`exact_mean` is the aggregation every
reported mean goes through (see :mod:`qarla_spark.measures.exact` for why):
the integer counts are summed in Spark, per denominator, and the rationals
combined and rounded once in Python — the same double under any master,
partitioning or executor loss.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from qarla_spark.spark.partitioning import topic_partitions

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


def local_frame(spark, rows: Sequence[tuple], schema: str):
    """A small DataFrame of driver-side ``rows`` in ``schema`` (DDL) as a
    local relation (from pandas through Arrow): joining or broadcasting it
    needs no Spark job, where ``createDataFrame`` of a list makes an RDD
    that every query using it scans in a job of its own."""
    import pandas as pd
    columns = [c for c, _ in schema_columns(schema)]
    frame = (pd.DataFrame.from_records(list(rows), columns=columns) if len(rows)
             else empty_frame(schema))
    return spark.createDataFrame(frame, schema=schema)


def grouped_by(df, keys: Sequence[str], n_partitions: Optional[int] = None,
               aggregate: Optional[Tuple[Sequence[str], Sequence]] = None):
    """``df`` hash-partitioned by ``keys`` (every group whole in one
    partition), then, with ``aggregate = (more_keys, exprs)``, aggregated
    per ``keys + more_keys`` within those partitions: one shuffle, where a
    ``groupBy`` followed by a repartition by ``keys`` makes two (Spark's
    aggregate needs no exchange of its own when its input is partitioned by
    a subset of its grouping keys)."""
    keys = list(keys)
    out = df.repartition(topic_partitions(df.sparkSession, n_partitions), *keys)
    if aggregate is not None:
        more, exprs = aggregate
        out = out.groupBy(*keys, *more).agg(*exprs)
    return out


def per_group(df, keys: Sequence[str], func: Callable, schema: str,
              n_partitions: Optional[int] = None,
              aggregate: Optional[Tuple[Sequence[str], Sequence]] = None):
    """``func(key, frame)`` for every group of ``df`` by ``keys`` (``key`` a
    tuple, ``frame`` the group's rows as pandas, in no particular order), on
    the executors; it returns the group's output rows as a pandas frame or a
    list of tuples in ``schema``'s column order (or None). Returns the rows
    with ``schema``. A group's rows are held in memory at once: use it on
    aggregated rows — ``aggregate = (more_keys, exprs)`` aggregates ``df``
    per ``keys + more_keys`` first, in the same shuffle (:func:`grouped_by`)."""
    import pandas as pd

    from qarla_spark.measures.frames import stack

    keys = list(keys)
    columns = [c for c, _ in schema_columns(schema)]

    def run(batches):
        frames = [b for b in batches if len(b)]
        if not frames:
            return
        rows = stack(frames, frames[0].columns)
        parts, tuples = [], []
        for key, group in rows.groupby(keys, sort=True, dropna=False):
            out = func(key if isinstance(key, tuple) else (key,), group)
            if isinstance(out, list):
                tuples += out
            elif out is not None and len(out):
                parts.append(out[columns])
        if tuples:
            parts.append(pd.DataFrame.from_records(tuples, columns=columns))
        yield stack(parts, columns) if parts else empty_frame(schema)

    return grouped_by(df, keys, n_partitions, aggregate).mapInPandas(run, schema)


def exact_mean(df, keys: Sequence[str], out: str, num: Optional[str] = None,
               den: Optional[str] = None, value: Optional[str] = None,
               within: Sequence[str] = (), count: Optional[str] = None,
               n_partitions: Optional[int] = None):
    """Per group of ``keys``: the mean over its rows of ``num / den`` (two
    integer columns) or of ``value`` (a double column; nulls are skipped),
    exact and rounded once, as column ``out`` (double). With ``within``, the
    rows are first averaged within each group of ``keys + within`` and those
    means averaged (a mean of means, e.g. over held-out models, then
    topics). ``count``: a column saying how many ratios a row stands for
    (its ``num`` is their sum, over one ``den``; default 1). Groups with no
    value are left out."""
    from pyspark.sql import functions as F

    from qarla_spark.measures.exact import Mean, to_float

    keys, within = list(keys), list(within)
    if (value is None) == (num is None or den is None):
        raise ValueError("exact_mean takes num and den, or value")
    if value is None:
        rows = grouped_by(df.withColumn("_den", F.col(den)), keys, n_partitions, aggregate=(
            [*within, "_den"], [F.sum(num).cast("long").alias("_num"),
                                (F.sum(count) if count else F.count(F.lit(1))).cast("long")
                                .alias("_count")]))
    else:
        rows = grouped_by(df.filter(F.col(value).isNotNull())
                          .select(*keys, *within, F.col(value).alias("_value")),
                          keys, n_partitions)
    types = dict(df.dtypes)
    schema = ", ".join([f"{k} {types[k]}" for k in keys] + [f"{out} double"])
    n_keys, n_within = len(keys), len(within)

    def run(batches):
        import pandas as pd
        inner: dict = {}
        for pdf in batches:
            columns = [pdf[c].to_numpy() for c in keys + within]
            if value is None:
                columns += [pdf["_num"].to_numpy(), pdf["_den"].to_numpy(),
                            pdf["_count"].to_numpy()]
            else:
                columns.append(pdf["_value"].to_numpy())
            for row in zip(*columns):
                at = row[:n_keys + n_within]
                mean = inner.get(at)
                if mean is None:
                    mean = inner[at] = Mean()
                if value is None:
                    mean.add_ratio(row[-3], row[-2], row[-1])
                else:
                    mean.add_real(row[-1])
        outer: dict = {}
        for at, mean in inner.items():
            if n_within:
                outer.setdefault(at[:n_keys], Mean()).add_fraction(mean.value())
            else:
                outer[at] = mean
        records = [tuple(k) + (to_float(m.value()),) for k, m in outer.items()]
        yield (pd.DataFrame.from_records(records, columns=keys + [out]) if records
               else empty_frame(schema))

    return rows.mapInPandas(run, schema)
