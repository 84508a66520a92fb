"""The Spark similarity table: shape, equality with the pure kernels, user
metrics (tables and functions), validation of user tables."""

from __future__ import annotations

import gzip
import json
from importlib import resources

import pandas as pd
import pytest

from helpers import write_jsonl
from qarla_spark.errors import InputError
from qarla_spark.metrics import registry
from qarla_spark.stages.similarity_plan import add_user_tables, compute_similarities
from qarla_spark.text.variants import prepare
from reference_rouge import rouge_scores

pytestmark = pytest.mark.spark

SUMMARY_DDL = "task string, topic string, summarizer string, role string, text string"


def summeval_topics(n):
    path = resources.files("qarla_spark") / "data" / "summeval" / "summaries.jsonl.gz"
    rows = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    topics = sorted({r["topic"] for r in rows})[:n]
    return [(r["task"], r["topic"], r["summarizer"], r["role"], r["text"])
            for r in rows if r["topic"] in topics]


@pytest.fixture(scope="module")
def two_topics(spark):
    return spark.createDataFrame(summeval_topics(2), SUMMARY_DDL).persist()


def test_every_ordered_pair_once_per_metric(spark, two_topics):
    metrics = ("R-1.a", "Rpre-L.c", "F-2.b")
    sims = compute_similarities(two_topics, metrics).toPandas()
    assert list(sims.columns) == ["task", "topic", "summarizer_s", "summarizer_r", "metric",
                                  "value"]
    assert len(sims) == 2 * 27 * 26 * 3
    assert not sims.duplicated(["topic", "summarizer_s", "summarizer_r", "metric"]).any()
    assert (sims["summarizer_s"] != sims["summarizer_r"]).all()
    assert sims["value"].between(0, 1).all()


def test_spark_equals_the_pure_kernels(spark, two_topics):
    """Every R/Rpre value of every pair of 2 SummEval topics equals the test
    reference's rouge_scores() called on the pair (itself checked against
    ROUGE-1.5.5)."""
    metrics = registry.GROUPS["rouge"]
    sims = compute_similarities(two_topics, metrics).toPandas()
    texts = {(t, s): text for _, t, s, _, text in summeval_topics(2)}
    prepared = {k: prepare(v) for k, v in texts.items()}
    wide = sims.pivot_table(index=["topic", "summarizer_s", "summarizer_r"], columns="metric",
                            values="value")
    checked = 0
    for (topic, s, r), row in wide.iloc[::37].iterrows():
        expected = rouge_scores(prepared[(topic, s)], prepared[(topic, r)])
        for name, value in expected.items():
            assert row[name] == value, (topic, s, r, name)
            checked += 1
    assert checked >= 48 * 30


def test_the_battery_cube_equals_the_cube_built_from_its_long_table(spark, two_topics):
    """A run's cube comes straight from the battery's rows
    (``compute_cube`` + ``TopicCube.of_rows``); an earlier run's table is
    turned into one by ``TopicCube.build``. Both give the same cube, bit
    for bit, and only the topics with enough models (a topic without
    models here, left out of both)."""
    import numpy as np

    from qarla_spark.stages.cube import TopicCube, topic_of
    from qarla_spark.stages.similarity_plan import compute_cube, cube_to_long

    metrics = ("R-1.a", "Rpre-L.c", "TVM.8", "AVLS")
    no_models = spark.createDataFrame(
        [("summeval", "zz", f"p{i}", "peer", f"a peer summary number {i} .") for i in range(3)],
        SUMMARY_DDL)
    summaries = two_topics.unionByName(no_models)
    rows = compute_cube(summaries, metrics).persist()
    try:
        direct = TopicCube.of_rows(rows, metrics)
        built = TopicCube.build(cube_to_long(rows, metrics), summaries, metrics)

        def topics(cube):
            return {(t.task, t.topic): t for t in
                    (topic_of(r.asDict()) for r in cube.frame.collect())}

        a, b = topics(direct), topics(built)
        assert sorted(a) == sorted(b) == [("summeval", t) for t in
                                          sorted({r[1] for r in summeval_topics(2)})]
        for key in a:
            assert list(a[key].names) == list(b[key].names) == sorted(a[key].names)
            assert list(a[key].roles) == list(b[key].roles)
            assert a[key].values.tobytes() == b[key].values.tobytes()
            assert np.isnan(a[key].values[np.arange(27), np.arange(27)]).all()
        assert rows.count() == 3      # the long table has every topic
    finally:
        rows.unpersist()


def test_user_function_metric_runs_on_executors(spark, two_topics):
    def shared_types(s, r):
        return len(set(s) & set(r)) / max(1, len(set(r)))

    metric = registry.UserMetric("shared_types.b", shared_types, "b")
    sims = compute_similarities(two_topics, ("R-1.b", "shared_types.b"),
                                user={"shared_types.b": metric}).toPandas()
    got = sims[sims.metric == "shared_types.b"].iloc[0]
    texts = {(t, s): text for _, t, s, _, text in summeval_topics(2)}
    s_tok = prepare(texts[(got.topic, got.summarizer_s)]).tokens("b")
    r_tok = prepare(texts[(got.topic, got.summarizer_r)]).tokens("b")
    assert got.value == shared_types(list(s_tok), list(r_tok))


def test_user_function_that_fails_names_metric_and_topic(spark):
    df = spark.createDataFrame([("t", "x", "a", "model", "one two"),
                                ("t", "x", "b", "peer", "two three")], SUMMARY_DDL)
    metric = registry.UserMetric("bad", lambda s, r: float("nan"))
    with pytest.raises(Exception) as info:
        compute_similarities(df, ("bad",), user={"bad": metric}).collect()
    assert "metric 'bad' returned nan on task 't', topic 'x'" in str(info.value)


def small_testbed(spark):
    rows = [("t", topic, who, "model" if who.startswith("m") else "peer", f"{who} text {topic}")
            for topic in ("x", "y") for who in ("m1", "m2", "p1")]
    return spark.createDataFrame(rows, SUMMARY_DDL)


def user_rows(metric="BERTScore", skip=0, extra=()):
    rows = []
    for topic in ("x", "y"):
        for s in ("m1", "m2", "p1"):
            for r in ("m1", "m2", "p1"):
                if s != r:
                    rows.append({"task": "t", "topic": topic, "summarizer_s": s,
                                 "summarizer_r": r, "metric": metric,
                                 "value": 0.5 + len(rows) / 100})
    return rows[skip:] + list(extra)


def test_user_table_joins_the_battery(spark, tmp_path):
    summaries = small_testbed(spark)
    path = tmp_path / "bert.parquet"
    pd.DataFrame(user_rows()).to_parquet(path)
    csv = tmp_path / "other.csv"
    pd.DataFrame(user_rows("Other")).to_csv(csv, index=False)
    sims = compute_similarities(summaries, ("R-1.a",))
    both, added = add_user_tables(sims, summaries, [str(path), str(csv)], ("R-1.a",))
    assert added == ("BERTScore", "Other")
    counts = both.groupBy("metric").count().toPandas().set_index("metric")["count"].to_dict()
    assert counts == {"R-1.a": 12, "BERTScore": 12, "Other": 12}
    assert [(f.name, f.dataType) for f in both.schema] == [(f.name, f.dataType) for f in sims.schema]


@pytest.mark.parametrize("rows,needle", [
    (user_rows(skip=1), "metric 'BERTScore' has no value for the pair (t, x, m1, m2)"),
    (user_rows(extra=[dict(user_rows()[0])]), "(t, x, m1, m2) is given 2 times"),
    (user_rows(extra=[{"task": "t", "topic": "x", "summarizer_s": "m1", "summarizer_r": "zz",
                       "metric": "BERTScore", "value": 1.0}]),
     "pair (t, x, m1, zz): not an ordered pair of summaries of the testbed"),
    ([dict(r, value=float("nan")) if i == 3 else r for i, r in enumerate(user_rows())],
     "(t, x, m2, p1): value null is missing or not a finite number"),
    (user_rows(metric="R-1.a"), "already taken: R-1.a"),
])
def test_bad_user_tables_are_named_errors(spark, tmp_path, rows, needle):
    summaries = small_testbed(spark)
    path = tmp_path / "u.parquet"
    pd.DataFrame(rows).to_parquet(path)
    sims = compute_similarities(summaries, ("R-1.a",))
    with pytest.raises(InputError) as info:
        add_user_tables(sims, summaries, [str(path)], ("R-1.a",))
    assert needle in str(info.value) and str(path) in str(info.value)


def test_user_table_missing_column(spark, tmp_path):
    path = tmp_path / "u.csv"
    path.write_text("task,topic,summarizer_s,summarizer_r,value\nt,x,m1,m2,1\n")
    with pytest.raises(InputError, match="lacks column"):
        add_user_tables(compute_similarities(small_testbed(spark), ("R-1.a",)),
                        small_testbed(spark), [str(path)], ("R-1.a",))


@pytest.mark.slow      # a whole run (every stage): half a minute
def test_run_writes_similarities_and_their_provenance(spark, tmp_path):
    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig

    recs = [{"task": "t", "topic": topic, "summarizer": who,
             "role": "model" if who.startswith("m") else "peer",
             "text": f"{who} says something about {topic} ."}
            for topic in ("x", "y") for who in ("m1", "m2", "m3", "p1")]
    src = write_jsonl(tmp_path / "s.jsonl", recs)
    out = tmp_path / "run"
    result = pipeline.run(spark, RunConfig(inputs=(str(src),), out=str(out),
                                           metrics=("R-1.a,Rpre-2.c",)))
    sims = spark.read.parquet(str(out / "similarities"))
    assert sims.count() == 2 * 4 * 3 * 2
    info = json.loads((out / "run.json").read_text())
    assert info["similarities"]["metrics"] == ["R-1.a", "Rpre-2.c"]
    assert info["config"]["metrics"] == ["R-1.a,Rpre-2.c"]
    assert "similarities" in result.info["tables"]
