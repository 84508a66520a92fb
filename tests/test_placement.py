"""Groups placed in the partitions their costs give them (issue 36): the
hash Spark places an int column's rows by, the handles that put a row in a
chosen partition, the greedy spread of costs, and a reduce whose groups run
where the placement says and give what a hashed reduce gives."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.spark import rounds as rd


def test_murmur3_of_ints_is_spark_s_hash(spark):
    from pyspark.sql import functions as F
    values = [0, 1, -1, 2, 7, 42, 1000, 123456, 2 ** 31 - 1, -2 ** 31, -987654]
    rows = spark.createDataFrame([(v,) for v in values], "v int") \
        .select("v", F.hash("v").alias("h")).collect()
    assert {r["v"]: r["h"] for r in rows} == {v: rd.murmur3_int(v) for v in values}


def test_handles_put_each_row_in_its_chosen_partition(spark):
    from pyspark.sql import functions as F
    for n in (1, 3, 16):
        handles = rd.partition_handles(n)
        assert len(handles) == n
        assert [rd.spark_partition_of(h, n) for h in handles] == list(range(n))
        wanted = [(i, (5 * i + 1) % n) for i in range(40)]
        frame = spark.createDataFrame([(i, handles[p]) for i, p in wanted], "i int, h int")
        got = frame.repartition(n, "h").select("i", F.spark_partition_id().alias("p")).collect()
        assert sorted((r["i"], r["p"]) for r in got) == wanted


def _brute_best(costs, n):
    best = None
    for assign in itertools.product(range(n), repeat=len(costs)):
        loads = [0.0] * n
        for c, p in zip(costs, assign):
            loads[p] += c
        best = max(loads) if best is None else min(best, max(loads))
    return best


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=7), st.integers(1, 3))
def test_the_greedy_spread_is_within_four_thirds_of_the_best(costs, n):
    keys = {f"k{i}": float(c) for i, c in enumerate(costs)}
    placed = rd.placement_by_cost(keys, n)
    assert set(placed) == set(keys) and set(placed.values()) <= set(range(n))
    loads = [sum(keys[k] for k in keys if placed[k] == p) for p in range(n)]
    assert max(loads) <= 4 / 3 * _brute_best(list(keys.values()), n) + 1e-9
    # the same placement whatever the order the costs come in
    assert rd.placement_by_cost(dict(reversed(list(keys.items()))), n) == placed


def test_a_placed_reduce_runs_each_group_where_it_is_placed(spark):
    import pandas as pd

    records = [(f"g{k}", "x", rd.dumps(i)) for k in range(9) for i in range(k + 1)]
    frame = spark.createDataFrame(pd.DataFrame(records, columns=list(rd.ENVELOPE_COLUMNS)),
                                  rd.ENVELOPE)

    def reducer(key, items, _):
        from pyspark import TaskContext
        return [(key, "out", (sum(v for _, v in items), TaskContext.get().partitionId()))]

    costs = {f"g{k}": float(k + 1) for k in range(9)}
    placement = rd.placement_by_cost(costs, 4)
    placed = {k: rd.loads(d) for k, _, d in rd.reduce_by_key(
        frame, reducer, 4, placement=placement).collect()}
    hashed = {k: rd.loads(d) for k, _, d in rd.reduce_by_key(frame, reducer, 4).collect()}
    assert {k: v[0] for k, v in placed.items()} == {k: v[0] for k, v in hashed.items()} \
        == {f"g{k}": k * (k + 1) // 2 for k in range(9)}
    assert {k: v[1] for k, v in placed.items()} == placement
    # a key the placement does not name goes by Spark's hash of the key
    partial = {k: rd.loads(d) for k, _, d in rd.reduce_by_key(
        frame, reducer, 4, placement={"g0": 3}).collect()}
    assert partial["g0"][1] == 3
    assert {k: v[0] for k, v in partial.items()} == {k: v[0] for k, v in hashed.items()}
    again = {k: rd.loads(d) for k, _, d in rd.reduce_by_key(
        frame, reducer, 4, placement={"g0": 3}).collect()}
    assert again == partial


def test_a_placement_holds_keys_of_any_characters(spark):
    """The placement reaches the JVM as one JSON literal: keys with quotes,
    backslashes, non-ASCII letters and separators land where placed."""
    import pandas as pd

    keys = ['t"1/king', "t\\2/meta", "tâche·3/auc/rouge", "任务/corr", "a b\tc/x"]
    records = [(k, "x", rd.dumps(i)) for i, k in enumerate(keys)]
    frame = spark.createDataFrame(pd.DataFrame(records, columns=list(rd.ENVELOPE_COLUMNS)),
                                  rd.ENVELOPE)

    def reducer(key, items, _):
        from pyspark import TaskContext
        return [(key, "out", TaskContext.get().partitionId())]

    placement = {k: (i * 2 + 1) % 3 for i, k in enumerate(keys)}
    got = {k: rd.loads(d) for k, _, d in rd.reduce_by_key(
        frame, reducer, 3, placement=placement).collect()}
    assert got == placement


@pytest.mark.parametrize("n", [1, 2, 5])
def test_placement_by_cost_fills_the_cheapest_partition_first(n):
    placed = rd.placement_by_cost({"a": 5.0, "b": 4.0, "c": 3.0, "d": 3.0, "e": 1.0}, n)
    if n == 1:
        assert set(placed.values()) == {0}
    if n == 2:
        # a → 0, b → 1, c → 1 (4 < 5), d → 0 (5 < 7), e → 1 (7 < 8)
        assert placed == {"a": 0, "b": 1, "c": 1, "d": 0, "e": 1}
    if n == 5:
        assert sorted(placed.values()) == list(range(5))



def test_a_detached_frame_has_the_rows_and_partitions_of_its_frame_in_a_one_scan_plan(spark):
    """:func:`rounds.detached` (the statistics stage's union of the QARLA
    and HBR stages' records, issue 36): the same rows in the same
    partitions as the persisted frame it reads, its plan a single scan
    (the frame's own long plan not analysed again by what is built on it),
    no Spark job to make it; a union built on it gives the same rows."""
    from pyspark.sql import functions as F
    base = spark.createDataFrame([(i, f"k{i % 7}", bytes([i % 256])) for i in range(300)],
                                 "i int, key string, data binary")
    frame = base.repartition(5, "key").filter(F.col("i") % 3 > 0).withColumn(
        "j", F.col("i") * 2).persist()
    try:
        def by_partition(df):
            rows = df.select(F.spark_partition_id().alias("p"), *df.columns).collect()
            return sorted(tuple(r) for r in rows)
        expected = by_partition(frame)
        tracker = spark.sparkContext.statusTracker()
        jobs = len(tracker.getJobIdsForGroup(None))
        short = rd.detached(frame)
        assert len(tracker.getJobIdsForGroup(None)) == jobs          # no job to make it
        plan = short._jdf.queryExecution().analyzed()
        assert plan.children().size() == 0                           # one scan
        assert "LogicalRDD" in plan.nodeName()
        assert short.rdd.getNumPartitions() == frame.rdd.getNumPartitions() == 5
        assert short.schema == frame.schema
        assert by_partition(short) == expected
        union = short.unionByName(rd.detached(frame.filter(F.col("i") < 50)))
        assert sorted(tuple(r) for r in union.collect()) == sorted(
            [tuple(r) for r in frame.collect()] + [tuple(r) for r in frame.filter(
                F.col("i") < 50).collect()])
    finally:
        frame.unpersist()
