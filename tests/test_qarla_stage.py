"""The QARLA stage: clusters, representatives, best set, detailed tables,
several tasks at once — checked against the brute-force reference."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import reference_qarla as ref
from qarla_spark.measures.clustering import subsets
from qarla_spark.measures.metric_sets import MetricSet
from qarla_spark.stages.cube import TopicCube
from qarla_spark.stages.qarla import run_qarla
from qarla_spark.summary import describe_qarla
from testbeds import make_similarities, stage_config
from helpers import pandas_of

pytestmark = pytest.mark.spark

METRICS = ["x1", "x2", "x3", "x4"]


@pytest.fixture(scope="module")
def two_tasks(spark):
    a = make_similarities(n_topics=3, n_models=4, n_peers=4, metrics=METRICS, seed=11, task="a")
    b = make_similarities(n_topics=2, n_models=5, n_peers=3, metrics=METRICS, seed=12, task="b",
                          ties=True)
    sims = pd.concat([a[0], b[0]], ignore_index=True)
    summaries = pd.concat([a[2], b[2]], ignore_index=True)
    roles = {**a[1], **b[1]}
    s_df = spark.createDataFrame(sims)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    config = stage_config(metric_sets=("x1,x3",), clusters=2, seed=3, jack_orders=4)
    result = run_qarla(TopicCube.build(s_df, m_df, METRICS), m_df, None, config)
    return sims, roles, result


def ref_king(sims, roles, names, task):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ref.king(sims, roles, names)[task][0]


def test_clusters_representatives_and_best_set(two_tasks):
    sims, roles, result = two_tasks
    clusters = pandas_of(result.tables["clusters"])
    king = pandas_of(result.tables["king"])
    assert [t.task for t in result.tasks] == ["a", "b"]
    for summary in result.tasks:
        task = summary.task
        mine = clusters[clusters.task == task]
        assert sorted(mine.metric) == METRICS and mine.cluster.nunique() == 2
        for _, group in mine.groupby("cluster"):
            kings = {m: ref_king(sims, roles, [m], task) for m in group.metric}
            rep = group[group.representative].metric.item()
            assert kings[rep] == max(kings.values())
            for row in group.itertuples():
                assert row.king == pytest.approx(kings[row.metric], abs=1e-12)
        reps = summary.representatives
        expected = {s.label: ref_king(sims, roles, list(s), task) for s in subsets(reps)}
        best = min(expected, key=lambda n: (-expected[n], n.count(","), n))
        assert summary.best_set.label == best
        assert summary.best_king == pytest.approx(expected[best], abs=1e-12)
        task_king = king[king.task == task].set_index("metric_set")["king"]
        for name, value in expected.items():
            assert task_king[name] == pytest.approx(value, abs=1e-12)
        assert task_king["x1,x3"] == pytest.approx(ref_king(sims, roles, ["x1", "x3"], task))


def test_detailed_tables_cover_best_reps_and_requested(two_tasks):
    sims, roles, result = two_tasks
    jack = pandas_of(result.tables["jack"])
    for summary in result.tasks:
        names = set(jack[jack.task == summary.task].metric_set)
        # exactly the task's own (issue 36): not the other task's best set
        assert names == {summary.best_set.label, "x1,x3", *summary.representatives}
        assert set(result.detailed[summary.task]) == {
            summary.best_set, MetricSet.parse("x1,x3"),
            *(MetricSet([r]) for r in summary.representatives)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = ref.jack(sims, roles, list(summary.best_set))[summary.task]
        assert summary.jack == pytest.approx(expected, abs=1e-12)
        assert "best metric set" in describe_qarla(summary)
    curve = pandas_of(result.tables["jack_curve"])
    assert set(curve.n_peers[curve.task == "b"]) == {2, 3}


def test_topics_with_too_few_models_are_skipped_with_a_warning(spark):
    from qarla_spark.names import QarlaWarning
    sims, roles, summaries = make_similarities(n_topics=4, n_models=[2, 3, 4, 4], n_peers=3,
                                               metrics=METRICS[:2], seed=5)
    s_df = spark.createDataFrame(sims)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    cube = TopicCube.build(s_df, m_df, METRICS[:2])
    with pytest.warns(QarlaWarning) as caught:
        result = run_qarla(cube, m_df, None, stage_config(clusters=1, jack_orders=2))
    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        "task t: 1 topic(s) with 3 models or no peer (QUEEN and JACK only; no KING, ORANGE, "
        "held-out scores) are skipped: t1",
        "task t: 1 topic(s) with fewer than 3 models (no QUEEN, KING, JACK) are skipped: t0"]
    (summary,) = result.tasks
    assert summary.skipped["with fewer than 3 models (no QUEEN, KING, JACK)"] == (1, ["t0"])
    assert "skipped: 1 topic(s) with fewer than 3 models" in describe_qarla(summary)
    king = pandas_of(result.tables["king"]).set_index("metric_set")
    assert king.loc["x1", "n_cases"] == 8        # t2 and t3, 4 held-out models each
    assert king.loc["x1", "king"] == pytest.approx(ref_king(sims, roles, ["x1"], "t"), abs=1e-12)
    queen = pandas_of(result.tables["queen"])
    assert "t0" not in set(queen.topic) and "t1" in set(queen.topic)   # QUEEN where |M| = 3


def test_an_incomplete_similarity_table_is_an_error_naming_the_pair(spark):
    from qarla_spark.errors import ConfigError
    sims, roles, summaries = make_similarities(n_topics=2, n_models=4, n_peers=2,
                                               metrics=METRICS[:2], seed=6)
    gone = sims[(sims.topic == "t1") & (sims.summarizer_s == "p1")
                & (sims.summarizer_r == "m2") & (sims.metric == "x2")].index
    s_df = spark.createDataFrame(sims.drop(gone))
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    with pytest.raises(ConfigError, match=r"topic t1: pair \(p1, m2\) has no value of x2"):
        TopicCube.build(s_df, m_df, METRICS[:2])
    dup = pd.concat([sims, sims.iloc[[0]]], ignore_index=True)
    first = sims.iloc[0]
    with pytest.raises(ConfigError, match=rf"pair \({first.summarizer_s}, {first.summarizer_r}\) "
                                          rf"has more than one value of {first.metric}"):
        TopicCube.build(spark.createDataFrame(dup), m_df, METRICS[:2])


def test_models_tied_with_every_system_do_not_rank_above_them(spark):
    """Fix 2 of issue 10: every summary has QUEEN 1 under a constant metric;
    the run said "4 of 4 models rank above every system" (the sort order),
    the strict rule says 0."""
    sims, roles, summaries = make_similarities(n_topics=2, n_models=4, n_peers=3,
                                               metrics=["c"], seed=7, constant_metric="c")
    s_df = spark.createDataFrame(sims)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    result = run_qarla(TopicCube.build(s_df, m_df, ["c"]), m_df, None,
                       stage_config(clusters=1, jack_orders=2))
    (task,) = result.tasks
    assert task.best_king == 0.0 and {r.queen for r in task.ranking} == {1.0}
    assert (task.models_above, task.n_models) == (0, 4)
    assert "0 of 4 models rank above every system" in describe_qarla(task)
    assert [r.name for r in task.ranking[:3]] == ["m0", "m1", "m2"]     # ties: by name
