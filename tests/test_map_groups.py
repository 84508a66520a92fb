"""spark.grouped.map_groups: a function per group of rows, over Arrow, one
mapInArrow per partition (issue 36: the checks without a pandas frame per
topic). Every group once, whole, its rows in the order asked for, whatever
the partitions and however Arrow's batches cut the groups."""

from __future__ import annotations

import pytest


@pytest.mark.slow
@pytest.mark.parametrize("partitions, batch", [(1, 2), (3, 5), (7, 10_000)])
def test_every_group_once_whole_and_in_order(spark, partitions, batch):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from qarla_spark.spark.grouped import map_groups

    rows = [(f"t{k % 3}", f"d{k % 7}", (k * 37) % 101, None if k % 5 else "x")
            for k in range(210)]
    df = spark.createDataFrame(rows, "task string, topic string, seq long, note string")
    schema = StructType([StructField("task", StringType(), True),
                         StructField("topic", StringType(), True),
                         StructField("seqs", StringType(), True),
                         StructField("n", LongType(), True),
                         StructField("notes", LongType(), True)])

    def summary(group):
        yield {"task": group[0]["task"], "topic": group[0]["topic"],
               "seqs": ",".join(str(r["seq"]) for r in group), "n": len(group),
               "notes": sum(r["note"] is not None for r in group)}

    before = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(batch))
    try:
        got = map_groups(df, ("task", "topic"), summary, schema, n_partitions=partitions,
                         order=("seq",)).collect()
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", before)
    expected = {}
    for task, topic, seq, note in rows:
        expected.setdefault((task, topic), []).append((seq, note))
    assert len(got) == len(expected) == 21
    for r in got:
        members = sorted(expected[(r["task"], r["topic"])])
        assert r["seqs"] == ",".join(str(s) for s, _ in members)
        assert r["n"] == len(members)
        assert r["notes"] == sum(n is not None for _, n in members)
