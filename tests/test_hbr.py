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
    from qarla_spark.spark.cube import TopicCube
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


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["t2", "t1", "a"]),
                          st.lists(st.integers(-2**63, 2**63 - 1), min_size=2, max_size=2),
                          st.lists(st.integers(-2**63, 2**63 - 1), min_size=2, max_size=2),
                          st.integers(1, 10**6)), max_size=30, unique_by=lambda r: (
                              r[0], tuple(r[1]), tuple(r[2]))))
def test_mask_counts_are_the_rows_per_task_sorted_by_masks(rows):
    """What the driver gets of the sample (two mask words per set): each
    task's (G, L) rows and counts, sorted as Python sorts the rows, from
    Arrow columns; any row order in, the same arrays out."""
    import pyarrow as pa

    from qarla_spark.stages.hbr import mask_counts
    schema = pa.schema([("task", pa.string()), ("g", pa.list_(pa.int64())),
                        ("l", pa.list_(pa.int64())), ("c", pa.int64())])
    table = pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema=schema)
    out = mask_counts(table)
    assert list(out) == sorted({r[0] for r in rows})
    for task, (g, l, c) in out.items():
        mine = sorted((r[1], r[2], r[3]) for r in rows if r[0] == task)
        assert g.dtype == l.dtype == c.dtype == np.int64 and g.shape == (len(mine), 2)
        assert [(list(a), list(b), int(n)) for a, b, n in zip(g, l, c)] == \
            [(list(a), list(b), n) for a, b, n in mine]
    # in two chunks, the second half first: the same
    again = mask_counts(pa.concat_tables([table.slice(len(rows) // 2),
                                          table.slice(0, len(rows) // 2)]))
    assert {t: [a.tolist() for a in v] for t, v in again.items()} == \
        {t: [a.tolist() for a in v] for t, v in out.items()}


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
    got = res.tables["hbr"].toPandas()
    assert len(got) == len(expected) == 15
    for r in got.itertuples():
        assert r.hbr == pytest.approx(expected[(r.task, r.topic, r.summarizer)], abs=1e-12)
        assert r.measure_set == "x1,x2,x3"
    het = res.tables["heterogeneity"].toPandas()
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
    auc = res.tables["auc"].toPandas()
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
    rob = res.tables["robustness"].toPandas()
    assert rob.worst10_rank.between(0, 1).all() and len(rob) == 2 * 4
    curve = res.tables["hetero_curve"].toPandas()
    assert set(curve.criterion) == {"q", "r"} and curve.p_quality_increase.between(0, 1).all()


@pytest.mark.spark
def test_auc_ties_count_one_half(spark):
    from qarla_spark.stages.auc import auc_table, topic_auc
    long = spark.createDataFrame(
        [("t", "d", "a", "x", 0.5), ("t", "d", "b", "x", 0.5), ("t", "d", "c", "x", 0.1)],
        "task string, topic string, summarizer string, measure string, x double")
    judg = spark.createDataFrame(
        [("t", "d", "a", "q", 3.0), ("t", "d", "b", "q", 2.0), ("t", "d", "c", "q", 1.0)],
        "task string, topic string, summarizer string, criterion string, score double")
    got = auc_table(topic_auc(long, judg)).filter("scope = 'all'").first()
    # pairs with Q(s) > Q(s'): (a,b) tie -> 1/2, (a,c) -> 1, (b,c) -> 1
    assert got.auc == pytest.approx(2.5 / 3) and got.n_pairs == 3


@pytest.mark.spark
def test_sampled_heterogeneity_within_three_standard_errors(spark):
    sims, roles, summaries = make_similarities(n_topics=5, n_models=4, n_peers=9,
                                               metrics=METRICS, seed=9)
    s_df = spark.createDataFrame(sims)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    cube = build_cube(s_df, m_df, METRICS)
    res = run_hbr(cube, None, hbr_measures=tuple(METRICS), hbr_pairs=150, seed=2)
    het = res.tables["heterogeneity"].toPandas()
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
    het = res.tables["heterogeneity"].toPandas()
    assert het.exact.all() and (het.std_error == 0).all() and (het.n_pairs == 2 * 4 * 3).all()
    # the printed line says what was done (it said "10,000 sampled pairs")
    text = describe_hbr(res, 13)
    assert "task t: heterogeneity from all 24 pairs (exact)" in text
    assert "sampled" not in text
    assert res.info()["samples"] == {"t": {"n_pairs": 24, "total_pairs": 24, "exact": True}}
