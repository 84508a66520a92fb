"""Agreement with human judgments and the human-summariser test (SPEC §7),
against scipy and plain loops on a generated testbed."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import reference_qarla as ref
from testbeds import evaluate, make_similarities

pytestmark = pytest.mark.spark
METRICS = ["x1", "x2"]


@pytest.fixture(scope="module")
def setup(spark):
    sims, roles, summaries = make_similarities(n_topics=4, n_models=4, n_peers=5,
                                               metrics=METRICS, seed=21)
    rng = np.random.default_rng(5)
    peers = summaries[summaries.role == "peer"]
    judg = pd.DataFrame({"task": peers.task, "topic": peers.topic,
                         "summarizer": peers.summarizer, "criterion": "q",
                         "score": rng.integers(1, 6, len(peers)).astype(float)})
    s_df = spark.createDataFrame(sims)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    res = evaluate(s_df, m_df, METRICS, [METRICS], judgments=spark.createDataFrame(judg),
                   baselines=("x1",))
    return sims, roles, summaries, judg, s_df, m_df, res


def test_correlations_match_scipy(spark, setup):
    sims, roles, summaries, judg, s_df, m_df, res = setup
    got = res.correlations.toPandas()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pd.DataFrame(ref.queen_table(sims, roles, METRICS))
    full = table[table.holdout.isna() & (table.role == "peer")].merge(
        judg, on=["task", "topic", "summarizer"])
    system = full.groupby("summarizer")[["queen", "score"]].mean()
    row = got[(got.metric_set == "x1,x2") & (got.level == "system")].iloc[0]
    assert row.pearson == pytest.approx(stats.pearsonr(system.queen, system.score)[0])
    assert row.spearman == pytest.approx(stats.spearmanr(system.queen, system.score)[0])
    assert row.kendall == pytest.approx(stats.kendalltau(system.queen, system.score)[0])
    per_topic = []
    for _, g in full.groupby("topic"):
        if g.queen.nunique() > 1 and g.score.nunique() > 1:
            per_topic.append((stats.pearsonr(g.queen, g.score)[0],
                              stats.spearmanr(g.queen, g.score)[0],
                              stats.kendalltau(g.queen, g.score)[0]))
    row = got[(got.metric_set == "x1,x2") & (got.level == "summary")].iloc[0]
    assert (row.pearson, row.spearman, row.kendall) == pytest.approx(
        tuple(np.mean(per_topic, axis=0)))


def test_human_summariser_test_by_loops(spark, setup):
    sims, roles, summaries, judg, s_df, m_df, res = setup
    got = res.human_test.toPandas()
    lookup = ref.sim_from_frame(sims)
    topics = ref.topics_of(roles)
    for h in ["m0", "m1", "m2", "m3"]:
        # plain baseline: mean over topics of the mean over m != h of x1(e, m)
        def plain(e):
            return np.mean([np.mean([lookup[("t", t, e, m, "x1")] for m in models if m != h])
                            for (_, t), (models, _) in topics.items()])
        peers = topics[("t", "t0")][1]
        expected = plain(h) > max(plain(a) for a in peers)
        row = got[(got.measure == "x1") & (got.held_out_model == h)].iloc[0]
        assert bool(row.ranked_first) == bool(expected)
        # QUEEN: everyone scored with M∖{h}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = {e: np.mean([ref.queen(lookup, "t", t, e, METRICS, [m for m in models if m != h])
                             for (_, t), (models, _) in topics.items()])
                 for e in [h] + list(peers)}
        expected = q[h] > max(q[a] for a in peers)
        row = got[(got.measure == "QUEEN(x1,x2)") & (got.held_out_model == h)].iloc[0]
        assert bool(row.ranked_first) == bool(expected)


def test_king_pearson_matches_scipy(spark, setup):
    """KING-vs-Pearson rows (Fig. 5): Pearson between each set's system
    scores (mean QUEEN with all models, computed by the brute-force
    reference) and the systems' mean human scores, by scipy."""
    sims, roles, summaries, judg, s_df, m_df, res = setup
    got = res.king_pearson.toPandas().set_index("metric_set")
    assert sorted(got.index) == ["x1", "x1,x2", "x2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["x1", "x1,x2", "x2"]:
            table = pd.DataFrame(ref.queen_table(sims, roles, name.split(",")))
            full = table[table.holdout.isna() & (table.role == "peer")]
            x = full.groupby("summarizer").queen.mean()
            y = judg.groupby("summarizer").score.mean()
            assert got.loc[name, "pearson"] == pytest.approx(stats.pearsonr(x, y[x.index])[0],
                                                             abs=1e-12)
            assert got.loc[name, "king"] == pytest.approx(
                ref.king(sims, roles, name.split(","))["t"][0], abs=1e-12)
