"""HBR and AUC (SPEC §8-9): pure kernels by hand, invariances (hypothesis),
and the Spark stage equal to the brute-force reference (tests/reference_hbr.py)
in exact mode; the sampled estimate within 3 standard errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_hbr as rh
import reference_qarla as ref
from qarla_spark.measures.hbr import complement, pack, pair_masks, split_counts, topic_scores
from testbeds import make_similarities, stage_config
from helpers import pandas_of


def hbr_exact(topics):
    """HBR of every summary with H over all ordered pairs, from the pure
    kernels the Spark stage runs (pair masks, complements, split counts):
    ``topics`` are score matrices (summaries × measures); one HBR vector per
    topic."""
    k = topics[0].shape[1] if len(topics) else 0
    found = [pair_masks(np.asarray(x, dtype=np.float64)) for x in topics]
    g = np.concatenate([f[2] for f in found])
    l = np.concatenate([f[3] for f in found])
    out = []
    for x, (i, _, _, l_t) in zip(topics, found):
        h = split_counts(complement(l_t, k), g, l, np.ones(len(g), dtype=np.int64)) / len(g)
        out.append(np.array([h[i == a].mean() if (i == a).any() else np.nan
                             for a in range(len(x))]))
    return out


def run_hbr(cube, judgments, **options):
    from qarla_spark.stages.hbr import run_hbr as stage
    return stage(cube, judgments, stage_config(**options))


def build_cube(s_df, m_df, metrics):
    from qarla_spark.stages.cube import TopicCube
    return TopicCube.build(s_df, m_df, metrics)


def test_pack_and_complement_by_hand():
    words = pack([[True, False, True], [False, False, False]])
    assert words.tolist() == [[5], [0]]
    assert complement(words, 3).tolist() == [[2], [7]]
    wide = pack(np.eye(70, dtype=bool)[[0, 63, 69]])
    assert wide.tolist() == [[1, 0], [0, 1], [0, 1 << 6]]


def test_split_counts_by_hand():
    # pairs: G/L over 3 measures; S splits a pair when it meets both G and L
    g = pack([[1, 0, 0], [1, 1, 0], [0, 0, 0]])
    l = pack([[0, 1, 0], [0, 0, 1], [1, 1, 1]])
    sets = pack([[1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1], [1, 0, 0]])
    # {0,1}: pair0 yes, pair1 no (L={2}), pair2 no (G empty) -> weight 1
    # {1,2}: pair0 no (G={0}), pair1 yes -> 2; {0,1,2}: pairs 0 and 1 -> 3
    counts = split_counts(sets, g, l, [1, 2, 4])
    assert counts.tolist() == [1, 2, 2, 3, 0] and counts.dtype == np.int64


NAMES = ["a", "b", "B", "é", "ü-2", "中文", "", "x" * 40, "peer_01", "peer_10"]


@pytest.mark.spark
def test_pair_keys_are_sparks_xxhash64(spark):
    """The sampling key of a pair, computed per topic in Python, is Spark's
    ``xxhash64(seed, task, topic, s, s2)`` (seeds as Spark types them: an
    int, or a long beyond 32 bits)."""
    from pyspark.sql import functions as F

    from qarla_spark.measures.hbr import pair_keys, spark_xxhash64
    pairs = [(s, s2) for s in NAMES for s2 in NAMES if s != s2]
    seeds = (13, 0, -7, 2 ** 35)
    places = (("summeval", "d1_a"), ("t é", ""))
    # one Spark job: every seed a column, both (task, topic) in one frame
    df = spark.createDataFrame([(i, task, topic, s, s2) for i, (task, topic) in enumerate(places)
                                for s, s2 in pairs],
                               "i int, task string, topic string, s string, s2 string")
    rows = df.select("i", *(F.xxhash64(F.lit(seed), "task", "topic", "s", "s2")
                            for seed in seeds)).collect()
    for i, (task, topic) in enumerate(places):
        mine = [r for r in rows if r[0] == i]
        assert len(mine) == len(pairs)
        for j, seed in enumerate(seeds, start=1):
            want = [r[j] for r in mine]
            got = pair_keys(seed, task, topic, [p[0] for p in pairs], [p[1] for p in pairs])
            assert got.tolist() == want
            assert spark_xxhash64(seed, task, topic, *pairs[0]) == want[0]


@pytest.mark.spark
def test_ntile_is_sparks(spark):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from qarla_spark.measures.hbr import ntile
    sizes = (0, 1, 7, 99, 100, 101, 250, 1234)
    # one Spark job: each size a window partition, each bucket count a column
    df = spark.createDataFrame([(n, i) for n in sizes for i in range(n)], "n int, id long")
    w = Window.partitionBy("n").orderBy("id")
    rows = df.select("n", "id", F.ntile(100).over(w).alias("b100"),
                     F.ntile(7).over(w).alias("b7")).orderBy("n", "id").collect()
    for n in sizes:
        mine = [r for r in rows if r.n == n]
        assert [r.id for r in mine] == list(range(n))
        for buckets in (100, 7):
            assert [r[f"b{buckets}"] for r in mine] == ntile(n, buckets).tolist()


@pytest.mark.spark
def test_the_sample_is_the_pairs_with_the_smallest_keys_as_spark_orders_them(spark):
    """A task's sample is drawn per topic (each topic's pairs with the
    smallest keys, at most the sample size) and then per task; it is the
    sample Spark's window ``row_number() over (order by key, topic, s, s2)``
    draws from all the task's pairs, whatever the sample size."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from qarla_spark.measures.hbr import pair_keys, smallest_pairs
    rng = np.random.default_rng(4)
    topics = ["t1", "t10", "t2", "é"]
    pairs = [(t, s, s2) for t in topics for s in NAMES[:6] for s2 in NAMES[:6]
             if s != s2 and rng.random() < 0.8]
    df = spark.createDataFrame([("x", *p) for p in pairs],
                               "task string, topic string, s string, s2 string")
    key = F.xxhash64(F.lit(7), "task", "topic", "s", "s2")
    w = Window.partitionBy("task").orderBy(key, "topic", "s", "s2")
    ranked = df.withColumn("_r", F.row_number().over(w)).collect()    # one Spark job
    for n in (1, 5, 40, len(pairs), len(pairs) + 3):
        want = {(r.topic, r.s, r.s2) for r in ranked if r["_r"] <= n}
        kept = []
        for t in topics:
            mine = [p for p in pairs if p[0] == t]
            keys = pair_keys(7, "x", t, [p[1] for p in mine], [p[2] for p in mine])
            order = smallest_pairs(keys, [t] * len(mine), [p[1] for p in mine],
                                   [p[2] for p in mine], n)
            kept += [(keys[k], *mine[k]) for k in order]
        order = smallest_pairs([k[0] for k in kept], [k[1] for k in kept],
                               [k[2] for k in kept], [k[3] for k in kept], n)
        assert {kept[k][1:] for k in order} == want


def test_topic_scores_mean_max_and_jackknifed_models():
    roles = np.array(["model", "model", "model", "peer"], dtype=object)
    v = np.full((4, 4, 1), np.nan)
    v[3, :3, 0] = [0.1, 0.2, 0.6]          # the peer against the 3 models
    v[0, 1:3, 0] = [0.5, 0.7]              # model 0 against the other two
    who, x = topic_scores(roles, v, [0])
    assert who.tolist() == [3] and x[:, 0] == pytest.approx([0.3])
    who, x = topic_scores(roles, v, [0], aggregate="max")
    assert x[:, 0] == pytest.approx([0.6])
    who, x = topic_scores(roles, v, [0], models=True)
    assert who.tolist()[0] == 0 and x[0, 0] == pytest.approx(0.6)   # mean over m != itself


def test_single_measure_and_identical_scores_give_zero():
    x = np.array([[0.1], [0.5], [0.3]])
    assert hbr_exact([x])[0].tolist() == [0.0, 0.0, 0.0]   # one measure never splits
    same = np.array([[0.2, 0.2], [0.2, 0.2]])
    assert hbr_exact([same])[0].tolist() == [0.0, 0.0]


matrices = st.integers(min_value=3, max_value=6).flatmap(
    lambda n: st.lists(st.lists(st.integers(0, 4), min_size=3, max_size=3),
                       min_size=n, max_size=n))


@settings(max_examples=40, deadline=None)
@given(matrices, matrices)
def test_hbr_invariant_to_increasing_transforms_and_duplicate_measures(a, b):
    topics = [np.array(a, dtype=float), np.array(b, dtype=float)]
    base = hbr_exact(topics)
    transformed = [np.column_stack([np.exp(x[:, 0]), x[:, 1] ** 3 + 2, np.log1p(x[:, 2])])
                   for x in topics]
    duplicated = [np.column_stack([x, x[:, 1]]) for x in topics]
    for other in (hbr_exact(transformed), hbr_exact(duplicated)):
        for u, v in zip(base, other):
            assert np.allclose(u, v, atol=1e-12)


def test_a_random_measure_changes_hbr_only_slightly():
    """Paper 001 §3: with a random measure added, H grows to about
    H + (1 − H)/2, so HBR stays roughly proportional to what it was. Measured
    here (4 topics × 30 summaries, 8 noisy measures of one quality): Pearson
    0.82 between HBR with and without it (not a strict invariance: the paper
    assumes much data)."""
    rng = np.random.default_rng(0)
    base_topics = []
    for _ in range(4):
        quality = rng.random(30)
        base_topics.append(np.column_stack([quality + 0.3 * rng.random(30) for _ in range(8)]))
    base = np.concatenate(hbr_exact(base_topics))
    noisy = np.concatenate(hbr_exact([np.column_stack([x, rng.random(len(x))])
                                      for x in base_topics]))
    assert np.corrcoef(base, noisy)[0, 1] > 0.75


# ---------------------------------------------------------------- Spark

METRICS = ["x1", "x2", "x3"]


def judged(summaries, seed):
    rng = np.random.default_rng(seed)
    peers = summaries[summaries.role == "peer"]
    rows = []
    for crit in ("q", "r"):
        rows.append(pd.DataFrame({"task": peers.task, "topic": peers.topic,
                                  "summarizer": peers.summarizer, "criterion": crit,
                                  "score": rng.integers(1, 4, len(peers)).astype(float)}))
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def exact_case(spark):
    sims, roles, summaries = make_similarities(n_topics=3, n_models=4, n_peers=5,
                                               metrics=METRICS, seed=8, ties=True)
    judg = judged(summaries, 3)
    s_df = spark.createDataFrame(sims)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    cube = build_cube(s_df, m_df, METRICS)
    res = run_hbr(cube, spark.createDataFrame(judg), hbr_measures=tuple(METRICS),
                  hbr_exact=True)
    return sims, roles, judg, res


@pytest.mark.spark
def test_exact_hbr_and_heterogeneity_equal_the_reference(exact_case):
    sims, roles, judg, res = exact_case
    lookup = ref.sim_from_frame(sims)
    x = rh.scores(lookup, roles, METRICS)
    pairs = rh.ordered_pairs(x)
    expected = rh.hbr(x, pairs)
    got = pandas_of(res.tables["hbr"])
    assert len(got) == len(expected) == 15
    for r in got.itertuples():
        assert r.hbr == pytest.approx(expected[(r.task, r.topic, r.summarizer)], abs=1e-12)
        assert r.measure_set == "x1,x2,x3"
    het = pandas_of(res.tables["heterogeneity"])
    assert (het.exact.all() and (het.std_error == 0).all()
            and (het.n_pairs == len(pairs)).all())
    for r in het.itertuples():
        S = [METRICS.index(m) for m in r.measure_set.split(",")] if r.measure_set else []
        assert r.h == pytest.approx(rh.heterogeneity(x, S, pairs), abs=1e-12)


@pytest.mark.spark
def test_auc_of_measures_and_hbr_equal_the_reference(exact_case):
    sims, roles, judg, res = exact_case
    lookup = ref.sim_from_frame(sims)
    x = rh.scores(lookup, roles, METRICS)
    h = rh.hbr(x, rh.ordered_pairs(x))
    jd = {(r.task, r.topic, r.summarizer, r.criterion): r.score for r in judg.itertuples()}
    auc = pandas_of(res.tables["auc"])
    for crit in ("q", "r"):
        for measure in METRICS + ["HBR"]:
            values = h if measure == "HBR" else {k: v[METRICS.index(measure)]
                                                for k, v in x.items()}
            pooled, n, per_topic = rh.auc(values, jd, crit)
            mine = auc[(auc.criterion == crit) & (auc.measure == measure)].set_index("scope")
            assert mine.loc["all", "auc"] == pytest.approx(pooled, abs=1e-12)
            assert mine.loc["all", "n_pairs"] == n
            for topic, (a, m) in per_topic.items():
                assert mine.loc[topic, "auc"] == pytest.approx(a, abs=1e-12)
                assert mine.loc[topic, "n_pairs"] == m
    rob = pandas_of(res.tables["robustness"])
    assert rob.worst10_rank.between(0, 1).all() and len(rob) == 2 * 4
    curve = pandas_of(res.tables["hetero_curve"])
    assert set(curve.criterion) == {"q", "r"} and curve.p_quality_increase.between(0, 1).all()


def test_auc_ties_count_one_half_and_nan_compares_as_in_spark():
    from qarla_spark.measures.hbr import auc_counts
    # pairs with Q(s) > Q(s'): (a,b) tie -> 1/2, (a,c) -> 1, (b,c) -> 1
    wins2, n = auc_counts([[0.5], [0.5], [0.1]], [[3.0], [2.0], [1.0]])
    assert wins2.tolist() == [5] and n == 3 and wins2[0] / (2 * n) == pytest.approx(2.5 / 3)
    # an unjudged summary is in no pair; a summary judged twice counts twice
    wins2, n = auc_counts([[0.2], [0.9], [0.4]], [[1.0, 3.0], [], [2.0]])
    assert n == 2 and wins2.tolist() == [2]      # (a:3 > c:2): 0.2 < 0.4; (c:2 > a:1): 0.4 > 0.2
    # Spark compares NaN as greater than any number and equal to NaN
    wins2, n = auc_counts([[np.nan, np.nan], [0.1, np.nan]], [[2.0], [1.0]])
    assert wins2.tolist() == [2, 1] and n == 1


@pytest.mark.spark
def test_sampled_heterogeneity_within_three_standard_errors(spark):
    sims, roles, summaries = make_similarities(n_topics=5, n_models=4, n_peers=9,
                                               metrics=METRICS, seed=9)
    s_df = spark.createDataFrame(sims)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    cube = build_cube(s_df, m_df, METRICS)
    res = run_hbr(cube, None, hbr_measures=tuple(METRICS), hbr_pairs=150, seed=2)
    het = pandas_of(res.tables["heterogeneity"])
    x = rh.scores(ref.sim_from_frame(sims), roles, METRICS)
    pairs = rh.ordered_pairs(x)
    assert len(pairs) == 5 * 9 * 8 and (het.n_pairs == 150).all() and not het.exact.any()
    for r in het.itertuples():
        S = [METRICS.index(m) for m in r.measure_set.split(",")] if r.measure_set else []
        exact = rh.heterogeneity(x, S, pairs)
        assert abs(r.h - exact) <= 3 * max(r.std_error, 1e-9), (r.measure_set, r.h, exact)
    assert set(res.tables) == {"hbr", "heterogeneity", "hbr_systems"}   # no judgments


@pytest.mark.spark
def test_a_sample_as_large_as_the_task_is_exact(spark):
    from qarla_spark.summary import describe_hbr
    sims, roles, summaries = make_similarities(n_topics=2, n_models=3, n_peers=4,
                                               metrics=METRICS, seed=10)
    s_df = spark.createDataFrame(sims)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    cube = build_cube(s_df, m_df, METRICS)
    res = run_hbr(cube, None, hbr_measures=tuple(METRICS), hbr_pairs=10_000)
    het = pandas_of(res.tables["heterogeneity"])
    assert het.exact.all() and (het.std_error == 0).all() and (het.n_pairs == 2 * 4 * 3).all()
    # the printed line says what was done (it said "10,000 sampled pairs")
    text = describe_hbr(res, 13)
    assert "task t: heterogeneity from all 24 pairs (exact)" in text
    assert "sampled" not in text
    assert res.info()["samples"] == {"t": {"n_pairs": 24, "total_pairs": 24, "exact": True}}
