"""The run: tables, run.json, atomic run directories, the bundled testbed."""

from __future__ import annotations

import gzip
import hashlib
import json
from importlib import resources

import pytest

from helpers import make_testbed, write_jsonl
from test_cache import cached_in_session
from qarla_spark import pipeline
from qarla_spark.config import RunConfig
from qarla_spark.errors import ConfigError, InputError
from qarla_spark.spark.output import RunDirectory, read_run_json
from helpers import pandas_of

pytestmark = pytest.mark.spark


@pytest.mark.slow      # a whole default run (every stage, 59 metrics): most of a minute
def test_run_writes_documented_tables_and_run_json(spark, tmp_path):
    spark.catalog.clearCache()
    src = write_jsonl(tmp_path / "in" / "s.jsonl", make_testbed(n_topics=2, n_models=2))
    out = tmp_path / "run"
    config = RunConfig(inputs=(str(src),), out=str(out), seed=7)
    result = pipeline.run(spark, config, command=["qarla", "run"])

    assert sorted(p.name for p in out.iterdir()) == [
        "across", "auc", "auc_ci", "clusters", "comparisons", "correlation_ci", "correlations",
        "hbr", "hbr_correlations", "hbr_systems", "hetero_curve", "heterogeneity",
        "human_test", "jack", "jack_ci", "jack_curve", "judgments", "king", "king_ci",
        "king_pearson", "king_topics", "king_vs_judges", "metric_eval", "metric_ranks",
        "orange", "problems", "queen", "rater_agreement", "report.html", "robustness",
        "run.json", "similarities", "sources", "summaries", "systems", "testbed"]
    from qarla_spark.tables import TABLES
    # every declared table but the plan's (``--plan`` or ``qarla plan`` only)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [t.name for t in TABLES if t.stage != "plan"] + ["report.html", "run.json"])
    # 2 models per topic: QUEEN is undefined everywhere, so the QARLA tables are empty
    assert spark.read.parquet(str(out / "king")).count() == 0
    # HBR needs no more than a model per topic: every peer is ranked
    assert spark.read.parquet(str(out / "hbr")).count() == 6
    assert not list(tmp_path.glob("run.incomplete-*"))
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "complete"
    assert info["seed"] == 7 and info["config"]["seed"] == 7
    assert info["signature"] == f"qarla_spark:{info['qarla_spark_version']}|spark:{spark.version}|seed:7"
    assert info["spark_version"] == spark.version and info["command"] == ["qarla", "run"]
    # 2 models per topic: one grouped line
    assert {k: info["problems"][k] for k in ("errors", "warnings")} == {"errors": 0, "warnings": 2}
    (group,) = info["problems"]["groups"]
    assert (group["kind"], group["task"], group["count"], group["first"]) == (
        "few_models", "t", 2, ["t0", "t1"])
    assert read_run_json(spark, str(out))["status"] == "complete"

    summaries = spark.read.parquet(str(out / "summaries"))
    assert sorted(summaries.columns) == ["role", "summarizer", "task", "text", "topic"]
    assert summaries.count() == 10
    judgments = spark.read.parquet(str(out / "judgments"))
    assert judgments.schema["score"].dataType.simpleString() == "double"
    assert judgments.count() == 6
    testbed = spark.read.parquet(str(out / "testbed")).collect()
    assert [(r.task, r.n_topics, r.models_max, r.judgments) for r in testbed] == [
        ("t", 2, 2, {"quality": 6})]
    problems = spark.read.parquet(str(out / "problems"))
    assert problems.columns == ["severity", "file", "line", "unit", "field", "message"]
    assert problems.count() == 2
    # README documents the same columns that are written
    assert info["tables"]["testbed"]["columns"][0] == "task: string"
    assert "results:" in result.summary()
    # what the stages cached (cube, QUEEN counts, HBR pairs, ...) is released:
    # a session that runs many evaluations does not fill the driver's heap
    assert cached_in_session(spark) == 0


def test_input_errors_stop_the_run_and_leave_nothing(spark, tmp_path):
    recs = make_testbed()
    recs[2] = dict(recs[2], role="judge")
    src = write_jsonl(tmp_path / "s.jsonl", recs)
    out = tmp_path / "run"
    with pytest.raises(InputError) as info:
        pipeline.run(spark, RunConfig(inputs=(str(src),), out=str(out)))
    assert f"{src}, line 3, field 'role'" in str(info.value)
    assert not out.exists() and not list(tmp_path.glob("run.incomplete-*"))


def test_existing_output_needs_overwrite(spark, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("previous run")
    with pytest.raises(ConfigError, match="already exists.*--overwrite"):
        RunDirectory(spark, str(out))
    assert (out / "keep.txt").exists()


def test_crash_keeps_the_previous_run_and_never_looks_complete(spark, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text('{"status": "complete", "old": true}')
    run_dir = RunDirectory(spark, str(out), overwrite=True, run_id="x1")
    run_dir.write_table("t", spark.range(3))
    # a crash here: the staged folder exists, has no run.json, and out is untouched
    staged = tmp_path / "run.incomplete-x1"
    assert staged.is_dir() and not (staged / "run.json").exists()
    assert json.loads((out / "run.json").read_text())["old"] is True
    run_dir.abort()
    assert not staged.exists()


def test_overwrite_replaces_only_when_complete(spark, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    run_dir = RunDirectory(spark, str(out), overwrite=True, run_id="x2")
    run_dir.write_table("numbers", spark.range(4), description="0..3")
    run_dir.commit({"seed": 1})
    assert not (out / "stale.txt").exists()
    assert spark.read.parquet(str(out / "numbers")).count() == 4
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "complete" and info["tables"]["numbers"]["path"] == "numbers/"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_bundled_data_matches_its_provenance():
    """md5 of the decompressed files = the values in the data README (taken
    from the original JSONL files when they were bundled)."""
    base = resources.files("qarla_spark") / "data" / "summeval"
    readme = (base / "README.md").read_text()
    for name, lines in (("summaries.jsonl.gz", 2700), ("sources.jsonl.gz", 100)):
        data = gzip.decompress((base / name).read_bytes())
        assert data.count(b"\n") == lines
        assert hashlib.md5(data).hexdigest() in readme
    assert "MIT" in (base / "LICENSE").read_text()


@pytest.mark.slow      # the whole bundled SummEval, every stage: minutes
def test_bundled_testbed_run(spark, tmp_path):
    """The issue's acceptance numbers for the bundled SummEval testbed."""
    out = tmp_path / "summeval"
    chosen = "R-1.a,TVM.512"     # a set the user names (--metric-set)
    result = pipeline.run(spark, RunConfig(out=str(out), metric_sets=(chosen,)))
    (t,) = result.report.tasks
    assert (t.task, t.n_topics, t.models_min, t.models_median, t.models_max) == (
        "summeval", 100, 11, 11.0, 11)
    assert (t.n_peer_systems, t.n_summaries, t.n_topics_with_sources) == (16, 2700, 100)
    assert t.judgments == {"coherence": 1600, "consistency": 1600, "fluency": 1600,
                           "relevance": 1600}
    assert result.report.n_errors == 0 and result.report.n_warnings == 0
    info = json.loads((out / "run.json").read_text())
    assert info["bundled_testbed"] == "summeval"
    assert spark.read.parquet(str(out / "summaries")).count() == 2700
    # issue 3: 59 metrics x 70,200 ordered pairs (100 topics x 27 x 26), all finite
    from pyspark.sql import functions as F
    sims = spark.read.parquet(str(out / "similarities"))
    stats = sims.agg(F.count(F.lit(1)).alias("rows"), F.countDistinct("metric").alias("metrics"),
                     F.sum((~F.isnan("value") & (F.abs("value") < float("inf"))).cast("long"))
                     .alias("finite")).first()
    assert (stats.rows, stats.metrics, stats.finite) == (59 * 70_200, 59, 59 * 70_200)
    assert info["similarities"]["n_metrics"] == 59
    assert info["similarities"]["tvm_terms_from"] == {
        "summeval": {"topics_with_sources": 100, "topics_with_pooled_models": 0}}
    # issue 4: QARLA from the run's own similarities/ equals the brute-force
    # reference (tests/reference_qarla.py) over all 100 topics, for the best set
    import warnings

    import reference_qarla as ref
    best = info["qarla"]["tasks"]["summeval"]["best_set"]
    X = best.split(",")
    mine = sims.filter(F.col("metric").isin(X)).toPandas()
    summ = spark.read.parquet(str(out / "summaries")).toPandas()
    lookup, roles = ref.sim_from_frame(mine), ref.roles_from_frame(summ)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (k, n), = ref.king(lookup, roles, X).values()
        (o, n_o), = ref.orange(lookup, roles, X).values()
        (j,) = ref.jack(lookup, roles, X).values()
    king = spark.read.parquet(str(out / "king")).filter(F.col("metric_set") == best).first()
    assert king.king == pytest.approx(k, abs=1e-12) and king.n_cases == n == 1100
    orange = (spark.read.parquet(str(out / "orange"))
              .filter((F.col("metric_set") == best) & (F.col("score") == "QUEEN")).first())
    assert orange.orange == pytest.approx(o, abs=1e-12) and orange.n_cases == n_o
    jack = spark.read.parquet(str(out / "jack")).filter(F.col("metric_set") == best).first()
    assert jack.jack == pytest.approx(j, abs=1e-12)
    queen = (spark.read.parquet(str(out / "queen")).filter(F.col("metric_set") == best)
             .orderBy("topic", "summarizer", "holdout").limit(300).toPandas())
    for r in queen.itertuples():
        M = [m for m in sorted(summ[(summ.topic == r.topic) & (summ.role == "model")].summarizer)
             if m != r.holdout]
        assert r.queen == pytest.approx(ref.queen(lookup, "summeval", r.topic, r.summarizer, X, M),
                                        abs=1e-12)
    # the set the user named: its QUEEN rows (a sample) equal the reference,
    # KING and ORANGE equal plain aggregations of the run's own jackknifed
    # QUEEN rows (model beats every peer / peer <= model), JACK the reference
    Xc = chosen.split(",")
    lookup_c = ref.sim_from_frame(sims.filter(F.col("metric").isin(Xc)).toPandas())
    q = spark.read.parquet(str(out / "queen")).filter(F.col("metric_set") == chosen).toPandas()
    jk = q[q.holdout.notna()]
    assert len(jk) == 100 * 11 * 17 and (q.holdout.isna() & (q.role == "peer")).sum() == 1600
    for r in jk.sample(150, random_state=0).itertuples():
        M = [m for m in sorted(summ[(summ.topic == r.topic) & (summ.role == "model")].summarizer)
             if m != r.holdout]
        assert r.queen == pytest.approx(ref.queen(lookup_c, "summeval", r.topic, r.summarizer, Xc,
                                                  M), abs=1e-12)
    model_q = jk[jk.role == "model"].set_index(["topic", "holdout"]).queen
    peer_q = jk[jk.role == "peer"].join(model_q.rename("model_q"), on=["topic", "holdout"])
    best_peer = peer_q.groupby(["topic", "holdout"]).queen.max()
    king_c = (model_q > best_peer.reindex(model_q.index)).groupby(level="topic").mean().mean()
    row = spark.read.parquet(str(out / "king")).filter(F.col("metric_set") == chosen).first()
    assert row.king == pytest.approx(king_c, abs=1e-12) and row.n_cases == 1100
    row = (spark.read.parquet(str(out / "orange"))
           .filter((F.col("metric_set") == chosen) & (F.col("score") == "QUEEN")).first())
    assert row.orange == pytest.approx((peer_q.queen <= peer_q.model_q).mean(), abs=1e-12)
    assert row.n_cases == len(peer_q) == 100 * 11 * 16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (j_c,) = ref.jack(lookup_c, roles, Xc).values()
    row = spark.read.parquet(str(out / "jack")).filter(F.col("metric_set") == chosen).first()
    assert row.jack == pytest.approx(j_c, abs=1e-12)
    # the seeds' findings, checked on this data (printed in the summary)
    task = info["qarla"]["tasks"]["summeval"]
    assert task["best_king"] > task["best_single_king"]
    assert "5 of 11 models rank above every system" in info["qarla_summary"]
    # issue 5: HBR in exact mode from the run's own similarities/ equals an
    # independent implementation (tests/reference_hbr.py, matrix products);
    # the run's sampled H and HBR are within 3 standard errors of exact
    import reference_hbr as rh
    from qarla_spark.stages.cube import TopicCube
    from qarla_spark.stages.hbr import run_hbr
    hbr_info = info["hbr"]
    measures = hbr_info["measures"]
    assert len(measures) == 48 and hbr_info["pairs"] == 10_000
    assert hbr_info["samples"] == {"summeval": {"n_pairs": 10_000, "total_pairs": 24_000,
                                                "exact": False}}
    cube = TopicCube.build(sims, spark.read.parquet(str(out / "summaries")), measures)
    judg = spark.read.parquet(str(out / "judgments"))
    exact = run_hbr(cube, judg, RunConfig(hbr_measures=tuple(measures), hbr_exact=True, seed=13))
    # 3.4 million values: read with pyarrow, not through the JVM of the test session
    import pandas as pd
    mine = pd.read_parquet(out / "similarities", filters=[("metric", "in", measures)])
    mine["task"] = mine["task"].astype(str)
    x = rh.scores(ref.sim_from_frame(mine), roles, measures)
    expected = rh.hbr_matrix(x)
    got = pandas_of(exact.tables["hbr"])
    assert len(got) == len(expected) == 1600
    for r in got.itertuples():
        assert r.hbr == pytest.approx(expected[("summeval", r.topic, r.summarizer)], abs=1e-12)
    sampled = spark.read.parquet(str(out / "hbr")).toPandas().set_index(["topic", "summarizer"])
    joined = got.set_index(["topic", "summarizer"]).join(sampled, rsuffix="_s")
    assert ((joined.hbr_s - joined.hbr).abs() <= 3 * joined.std_error_s).all()
    het_s = spark.read.parquet(str(out / "heterogeneity")).toPandas().set_index("measure_set")
    het_e = pandas_of(exact.tables["heterogeneity"]).set_index("measure_set")
    assert len(het_s) == len(het_e) > 10_000
    z = (het_s.h - het_e.h.reindex(het_s.index)).abs() / het_s.std_error.clip(lower=1e-12)
    assert (z <= 3).all()
    # AUC of HBR and of two measures, pooled and per topic, against plain loops
    jd = {(r.task, r.topic, r.summarizer, r.criterion): r.score
          for r in judg.toPandas().itertuples()}
    auc = pandas_of(exact.tables["auc"])
    for criterion in ("relevance", "consistency"):
        for measure in ("HBR", "R-1.a", "Rpre-2.c"):
            values = ({k: v for k, v in expected.items()} if measure == "HBR" else
                      {k: v[measures.index(measure)] for k, v in x.items()})
            pooled, n, per_topic = rh.auc(values, jd, criterion)
            row = auc[(auc.criterion == criterion) & (auc.measure == measure)].set_index("scope")
            assert row.loc["all", "auc"] == pytest.approx(pooled, abs=1e-12)
            assert row.loc["all", "n_pairs"] == n
            assert all(row.loc[t, "auc"] == pytest.approx(a, abs=1e-12)
                       for t, (a, _) in per_topic.items())
    assert "AUC of HBR" in info["qarla_summary"]
    # issue 11: every headline carries its 95% interval, every comparison its
    # p-value, and the printed numbers are those of the tables
    text = result.summary()
    king_ci = (spark.read.parquet(str(out / "king_ci")).filter("method = 'percentile'")
               .toPandas().set_index("metric_set"))
    low, high = king_ci.loc[best, ["ci_low", "ci_high"]]
    assert f"KING {task['best_king']:.3f} [{low:.3f}, {high:.3f}]" in text
    comp = spark.read.parquet(str(out / "comparisons")).toPandas()
    row = comp[comp.family == "best set vs best single metric"].iloc[0]
    assert (row.a, row.b) == (best, task["best_single"])
    assert (f"best set − best single: {row.difference:+.3f} [{row.ci_low:.3f}, "
            f"{row.ci_high:.3f}] (percentile), p = {row.p_value:.3f}") in text
    for criterion in ("coherence", "consistency", "fluency", "relevance"):
        hbr_vs = comp[(comp.family == "HBR vs best single measure")
                      & (comp.criterion == criterion)].iloc[0]
        assert f"HBR − best: {hbr_vs.difference:+.3f}" in text and hbr_vs.a == "HBR"
    cci = spark.read.parquet(str(out / "correlation_ci")).toPandas()
    pearson = cci[(cci.metric_set == best) & (cci.level == "system")
                  & (cci.correlation == "pearson") & (cci.method == "percentile")
                  & (cci.unit == "both") & (cci.criterion == "relevance")].iloc[0]
    assert f"relevance {pearson.value:.2f} [{pearson.ci_low:.2f}, {pearson.ci_high:.2f}]" in text
    assert info["statistics"]["n_resamples"] == 1000


class _SlowDirectory(RunDirectory):
    """A run directory that only records writes, each taking the time its
    'frame' says (no Spark)."""

    def __init__(self):
        self.tables, self.finished = {}, []

    def write(self, declared, df):
        import time
        time.sleep(abs(df))
        if df < 0:
            raise RuntimeError(f"{declared.name} failed")
        self.tables[declared.name] = {"path": declared.name}
        self.finished.append(declared.name)


def test_tables_are_written_at_once_and_listed_in_declared_order():
    """A stage's tables are written CONCURRENT_WRITES at a time; run.json
    lists them in the order of their declarations, whatever order they end
    in; the timings hold every table."""
    out, timings = _SlowDirectory(), {}
    pipeline.write_tables(out, {"queen": 0.01, "king": 0.3, "orange": 0.15}, timings)
    assert out.finished[0] == "queen" and out.finished[-1] == "king"
    assert list(out.ordered_tables()) == ["king", "orange", "queen"]
    assert set(timings) == {"write_king_s", "write_orange_s", "write_queen_s"}
    assert timings["write_king_s"] >= 0.3


def test_a_failed_write_waits_for_the_others_before_the_run_is_aborted():
    """An error is raised once the writes already running have ended (so
    that removing the staging folder afterwards is final)."""
    out = _SlowDirectory()
    tables = {"king": -0.05, "orange": 0.3, "queen": 0.3}
    with pytest.raises(RuntimeError, match="king failed"):
        pipeline.write_tables(out, tables, {})
    assert sorted(out.finished) == ["orange", "queen"]   # were running: waited for


def test_the_writer_writes_in_the_background_and_waits_before_the_commit():
    """A run hands each stage's tables to a TableWriter and goes on: submit
    returns before the tables are written; wait() returns once they are,
    their times in the stage's timings (declared order)."""
    import time
    out, timings = _SlowDirectory(), {"singles_s": 1.0}
    writer = pipeline.TableWriter(out)
    started = time.time()
    writer.submit({"queen": 0.3, "king": 0.2}, timings)
    assert time.time() - started < 0.15 and out.finished == []
    writer.check()                                      # nothing failed (yet)
    writer.wait()
    writer.close()
    assert sorted(out.finished) == ["king", "queen"]
    assert list(timings) == ["singles_s", "write_king_s", "write_queen_s"]
    assert timings["write_queen_s"] >= 0.3


def test_a_failed_background_write_is_raised_at_the_next_check():
    """A write that fails in the background stops the run at the next stage
    boundary (check), and closing the writer after that error waits for
    the writes still running."""
    import time
    out = _SlowDirectory()
    writer = pipeline.TableWriter(out)
    writer.submit({"king": -0.05, "orange": 0.3}, {})
    time.sleep(0.15)
    with pytest.raises(RuntimeError, match="king failed"):
        writer.check()
    writer.close(interrupted=False)
    assert out.finished == ["orange"]


@pytest.mark.spark
def test_a_stage_gives_its_job_property_back(spark):
    """The jobs of a stage carry its name (qarla profile reads it); after the
    stage the session's jobs do not (in a shared session the next run's
    input was read under the last run's "writing")."""
    from qarla_spark.names import STAGE_PROPERTY
    from qarla_spark.pipeline import run_stage
    from qarla_spark.progress import NullProgress
    sc = spark.sparkContext
    windows = []
    with run_stage(spark, windows, NullProgress(), "writing"):
        assert sc.getLocalProperty(STAGE_PROPERTY) == "writing"
    assert sc.getLocalProperty(STAGE_PROPERTY) is None
    assert windows[0]["stage"] == "writing" and windows[0]["end"] is not None
