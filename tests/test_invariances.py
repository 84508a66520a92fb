"""SPEC §4's required properties, on the Spark implementation itself.

Slow (CI runs them), but the random metric's: each is a few QARLA stages
on Spark, and the fast suite holds the same properties on the kernels the
stage applies (tests/test_properties_qarla.py: a constant metric, a
duplicate metric, a strictly increasing transform, a duplicate peer) and
the stage's tables equal to the brute-force reference
(tests/test_measures.py; the battery on SummEval topics:
tests/test_similarities.py::test_spark_equals_the_pure_kernels). The random
metric's KING near zero (a probability statement, tested here only) stays
in the fast suite."""

from __future__ import annotations

import gzip
import json
import warnings
from importlib import resources

import numpy as np
import pandas as pd
import pytest

import reference_qarla as ref
from qarla_spark.stages.similarity_plan import compute_similarities
from testbeds import add_duplicate_peer, evaluate, make_similarities, transform_metric

pytestmark = pytest.mark.spark


def kings(spark, sims, summaries, metrics, sets):
    s_df = spark.createDataFrame(sims[["task", "topic", "summarizer_s", "summarizer_r", "metric",
                                       "value"]])
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    res = evaluate(s_df, m_df, metrics, sets)
    king = res.king.toPandas().set_index("metric_set")["king"].to_dict()
    jack = res.jack.toPandas().set_index("metric_set")["jack"].to_dict()
    queen = res.queen.toPandas()
    return king, jack, queen


@pytest.mark.slow
def test_constant_metric_has_king_zero(spark):
    sims, _, summaries = make_similarities(n_topics=3, n_models=4, n_peers=4, metrics=["x"],
                                           seed=1, constant_metric="const")
    king, _, _ = kings(spark, sims, summaries, ["x", "const"], [])
    assert king["const"] == 0.0


def test_random_metric_has_king_near_zero_with_8_peers(spark):
    """0.5^8 for a pure guess; with 12 topics x 5 models the estimate stays small."""
    sims, _, summaries = make_similarities(n_topics=12, n_models=5, n_peers=8, metrics=["r"],
                                           seed=7)
    king, _, _ = kings(spark, sims, summaries, ["r"], [])
    assert king["r"] <= 0.15


@pytest.mark.slow
def test_duplicate_metric_and_monotone_transform_change_nothing(spark):
    sims, _, summaries = make_similarities(n_topics=3, n_models=4, n_peers=3, metrics=["x", "y"],
                                           seed=2)
    base, base_jack, base_q = kings(spark, sims, summaries, ["x", "y"], [["x", "y"]])
    dup = transform_metric(sims, "x", lambda v: v, new_name="x_copy")
    mono = transform_metric(sims, "y", lambda v: np.exp(3 * v) - 7)  # strictly increasing
    both = pd.concat([mono, dup[dup.metric == "x_copy"]], ignore_index=True)
    king, jack, q = kings(spark, both, summaries, ["x", "y", "x_copy"], [["x", "y", "x_copy"]])
    assert king["x,x_copy,y"] == base["x,y"] and king["y"] == base["y"]
    assert jack["x,x_copy,y"] == base_jack["x,y"]
    left = base_q[base_q.metric_set == "x,y"].drop(columns="metric_set")
    right = q[q.metric_set == "x,x_copy,y"].drop(columns="metric_set")
    key = ["task", "topic", "summarizer", "holdout"]
    merged = left.merge(right, on=key, suffixes=("", "_2"))
    assert len(merged) == len(left) and (merged.queen == merged.queen_2).all()


@pytest.mark.slow
def test_duplicate_peer_does_not_change_king(spark):
    sims, roles, summaries = make_similarities(n_topics=3, n_models=4, n_peers=3,
                                               metrics=["x", "y"], seed=4)
    base, _, _ = kings(spark, sims, summaries, ["x", "y"], [["x", "y"]])
    sims2, _, summaries2 = add_duplicate_peer(sims, roles, summaries, "p1", "p1_copy")
    king, _, _ = kings(spark, sims2, summaries2, ["x", "y"], [["x", "y"]])
    assert king == base


@pytest.mark.slow
def test_summeval_topics_equal_the_reference(spark):
    """QUEEN, KING, ORANGE, JACK on 3 real SummEval topics (R-1.a and
    Rpre-1.b computed by the battery) equal the brute-force reference to 1e-12
    (3 topics, not 6: the same checks, half the time)."""
    path = resources.files("qarla_spark") / "data" / "summeval" / "summaries.jsonl.gz"
    rows = [json.loads(x) for x in gzip.decompress(path.read_bytes()).splitlines()]
    topics = sorted({r["topic"] for r in rows})[:3]
    summ = pd.DataFrame([r for r in rows if r["topic"] in topics])[
        ["task", "topic", "summarizer", "role", "text"]]
    m_df = spark.createDataFrame(summ)
    metrics = ["R-1.a", "Rpre-1.b"]
    sims = compute_similarities(m_df, metrics).toPandas()
    s_df = spark.createDataFrame(sims)
    res = evaluate(s_df, m_df, metrics, [metrics], n_orders=2)
    roles = ref.roles_from_frame(summ)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, X in (("R-1.a", ["R-1.a"]), ("R-1.a,Rpre-1.b", metrics)):
            (k, n), = ref.king(sims, roles, X).values()
            (o, _), = ref.orange(sims, roles, X).values()
            (j,) = ref.jack(sims, roles, X).values()
            king = res.king.toPandas().set_index("metric_set")
            assert king.loc[name, "king"] == pytest.approx(k, abs=1e-12) and king.loc[name, "n_cases"] == n
            assert res.orange.toPandas().set_index("metric_set").loc[name, "orange"] == \
                pytest.approx(o, abs=1e-12)
            assert res.jack.toPandas().set_index("metric_set").loc[name, "jack"] == \
                pytest.approx(j, abs=1e-12)
        expected = {(r["topic"], r["summarizer"], r["holdout"]): r["queen"]
                    for r in ref.queen_table(sims, roles, metrics)}
    got = res.queen.toPandas()
    got = got[got.metric_set == "R-1.a,Rpre-1.b"]
    assert len(got) == len(expected)
    for r in got.itertuples():
        assert r.queen == pytest.approx(expected[(r.topic, r.summarizer, r.holdout)], abs=1e-12)
