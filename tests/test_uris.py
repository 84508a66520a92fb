"""Every path a run takes — inputs, judgments, sources, user metric tables,
run files, metric plugins, --similarities and --out — as a file:// URI, an
absolute path or a relative one (issue 14); run files and plugins on
another Hadoop file system are read through Hadoop's FileSystem API
(viewfs:// mounted on a temporary folder stands in for HDFS or S3 here:
a scheme Python cannot open, served by Hadoop).

(``--out`` as ``file://`` and ``file:`` URIs: tests/test_cli.py.)"""

from __future__ import annotations

import itertools
import json
import os

import pytest

from helpers import make_testbed, write_jsonl
from qarla_spark.cli import main

pytestmark = pytest.mark.spark

FORMS = {
    "file-uri": lambda p: f"file://{p}",
    "absolute": str,
    # relative to the working directory, which is the JVM's too
    "relative": lambda p: os.path.relpath(p),
}
#: the short file: URI (no authority), as Hadoop itself writes paths
ALL_FORMS = {**FORMS, "file-short": lambda p: f"file:{p}"}

_MOUNTS = itertools.count()


def run_forms(*extra):
    """The forms of a test that runs a stage (a small run, seconds each):
    every form a case; the fast suite keeps the file:// URI (and Hadoop's
    file systems), the absolute and relative paths are marked slow (CI runs
    them: `make test` with CI=true); the validate tests: :func:`input_forms`."""
    return [pytest.param(f, marks=pytest.mark.slow if f in ("absolute", "relative") else ())
            for f in [*FORMS, *extra]]


def input_forms():
    """The forms of a validate test (each reader): every form a case; the
    absolute path is marked slow (CI runs it), as the fast suite gives
    absolute paths of inputs, judgments and sources everywhere else
    (tests/test_validate.py, test_cli.py, the summaries of this file's own
    validate tests); the URIs and the relative path stay fast."""
    return [pytest.param(f, marks=pytest.mark.slow if f == "absolute" else ())
            for f in ALL_FORMS]


def viewfs(spark, folder) -> str:
    """A ``viewfs://`` URI for ``folder`` (a mount table of the session's
    Hadoop configuration; a new name each time, as Hadoop caches a file
    system by its authority)."""
    name = f"qarlatest{next(_MOUNTS)}"
    spark.sparkContext._jsc.hadoopConfiguration().set(
        f"fs.viewfs.mounttable.{name}.link./remote", f"file://{folder}")
    return f"viewfs://{name}/remote"


def make_inputs(tmp_path, n_topics=2):
    """Summaries without judgments, the judgments in long form (CSV) and
    sources, in three files."""
    records = make_testbed(n_topics=n_topics, n_models=3, n_peers=2)
    judgments = ["task,topic,summarizer,criterion,score"]
    for rec in records:
        for criterion, score in rec.pop("human", {}).items():
            judgments.append(f"t,{rec['topic']},{rec['summarizer']},{criterion},{score}")
    summaries = write_jsonl(tmp_path / "in" / "s.jsonl", records)
    (tmp_path / "in" / "j.csv").write_text("\n".join(judgments) + "\n")
    sources = write_jsonl(tmp_path / "in" / "src.jsonl",
                          [{"task": "t", "topic": f"t{i}", "documents": [f"source {i} ."]}
                           for i in range(n_topics)])
    return summaries, tmp_path / "in" / "j.csv", sources


def validate(capsys, *argv):
    code = main(["validate", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


READERS = {"driver": "16", "spark": "0"}   # --driver-read-mb: who reads the inputs
#: the judgments' and sources' tests: Spark's reader loads every kind of
#: input by the same binaryFile read of its path (io/readers.py, read_raw),
#: whose forms test_inputs checks in the fast suite; theirs are slow (CI)
KIND_READERS = ["driver", pytest.param("spark", marks=pytest.mark.slow)]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("form", input_forms())
def test_inputs(tmp_path, capsys, form, reader):
    summaries, _, _ = make_inputs(tmp_path)
    out = validate(capsys, ALL_FORMS[form](summaries), "--driver-read-mb", READERS[reader])
    assert "topics: 2" in out and "summaries: 10 (6 model, 4 peer)" in out
    # and a folder
    out = validate(capsys, ALL_FORMS[form](summaries.parent / "s.jsonl"), "--driver-read-mb",
                   READERS[reader])
    assert "topics: 2" in out


@pytest.mark.parametrize("reader", KIND_READERS)
@pytest.mark.parametrize("form", input_forms())
def test_judgments(tmp_path, capsys, form, reader):
    summaries, judgments, _ = make_inputs(tmp_path)
    out = validate(capsys, str(summaries), "--judgments", ALL_FORMS[form](judgments),
                   "--driver-read-mb", READERS[reader])
    assert "judgments by criterion (judged summaries): quality (4)" in out


@pytest.mark.parametrize("reader", KIND_READERS)
@pytest.mark.parametrize("form", input_forms())
def test_sources(tmp_path, capsys, form, reader):
    summaries, _, sources = make_inputs(tmp_path)
    out = validate(capsys, str(summaries), "--sources", ALL_FORMS[form](sources),
                   "--driver-read-mb", READERS[reader])
    assert "topics with source documents: 2" in out


def similarities(capsys, tmp_path, *argv, out=None):
    """``qarla similarities`` (R-1.a, one run) and its run.json."""
    from qarla_spark.paths import local_path
    out = out or str(tmp_path / "run")
    code = main(["similarities", *argv, "--out", out, "--quiet"])
    said = capsys.readouterr()
    assert code == 0, said.err
    with open(os.path.join(local_path(out), "run.json"), encoding="utf-8") as handle:
        return json.load(handle)


def user_table(tmp_path):
    rows = ["task,topic,summarizer_s,summarizer_r,metric,value"]
    for rec in make_testbed(n_topics=1, n_models=3, n_peers=2):
        for other in make_testbed(n_topics=1, n_models=3, n_peers=2):
            if rec["summarizer"] != other["summarizer"]:
                rows.append(f"t,t0,{rec['summarizer']},{other['summarizer']},Mine,0.5")
    path = tmp_path / "tables" / "mine.csv"
    path.parent.mkdir()
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("form", run_forms())
def test_user_metric_tables(spark, tmp_path, capsys, form):
    summaries, _, _ = make_inputs(tmp_path, n_topics=1)
    info = similarities(capsys, tmp_path, str(summaries), "--metrics", "R-1.a",
                        "--user-metrics", FORMS[form](user_table(tmp_path)))
    assert info["similarities"]["user_table_metrics"] == ["Mine"]


PLUGIN = ("from qarla_spark.metrics.registry import register_metric\n"
          "register_metric('plugged.a', lambda s, r: float(len(set(s) & set(r))))\n")


@pytest.fixture
def plugged():
    yield
    from qarla_spark.metrics.registry import unregister_metric
    unregister_metric("plugged.a")


@pytest.mark.parametrize("form", run_forms("hadoop"))
def test_metric_plugins(spark, tmp_path, capsys, plugged, form):
    """A plugin on another Hadoop file system is read through Hadoop, and
    its function reaches the executors as a local plugin's does."""
    summaries, _, _ = make_inputs(tmp_path, n_topics=1)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "plug.py").write_text(PLUGIN)
    path = (f"{viewfs(spark, tmp_path / 'plugins')}/plug.py" if form == "hadoop"
            else FORMS[form](tmp_path / "plugins" / "plug.py"))
    info = similarities(capsys, tmp_path, str(summaries), "--metrics", "R-1.a,plugged.a",
                        "--metric-plugin", path)
    assert info["similarities"]["user_function_metrics"] == ["plugged.a"]
    values = spark.read.parquet(str(tmp_path / "run" / "similarities")).where(
        "metric = 'plugged.a'").count()
    assert values == 5 * 4


def test_a_plugin_on_hadoop_needs_spark(tmp_path, monkeypatch):
    """Read before any SparkContext exists, a plugin URI of another file
    system is one sentence."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from qarla_spark.errors import ConfigError
    from qarla_spark.metrics.registry import load_plugins
    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)
    with pytest.raises(ConfigError) as info:
        load_plugins(["hdfs://namenode/plugins/plug.py"])
    assert str(info.value) == (
        "metric plugin hdfs://namenode/plugins/plug.py: hdfs://namenode/plugins/plug.py is not "
        "on the local file system: reading it needs Spark, which has not started (give a "
        "local path or file: URI)")


def run_file(tmp_path, summaries, extra=""):
    (tmp_path / "conf").mkdir(exist_ok=True)
    path = tmp_path / "conf" / "run.toml"
    path.write_text(f'inputs = ["{summaries}"]\nmetrics = "R-1.a"\nseed = 5\n{extra}')
    return path


@pytest.mark.parametrize("form", run_forms("hadoop"))
def test_run_files(spark, tmp_path, capsys, form):
    summaries, _, _ = make_inputs(tmp_path, n_topics=1)
    path = run_file(tmp_path, summaries)
    given = (f"{viewfs(spark, tmp_path / 'conf')}/run.toml" if form == "hadoop"
             else FORMS[form](path))
    info = similarities(capsys, tmp_path, "--config", given)
    assert info["seed"] == 5 and info["config"]["metrics"] == ["R-1.a"]


def test_a_run_file_on_hadoop_cannot_configure_spark(spark, tmp_path, capsys):
    """Spark starts before a run file on another file system is read (from
    the command line's options): such a file setting master, profile or
    spark_conf is an error saying so."""
    summaries, _, _ = make_inputs(tmp_path, n_topics=1)
    run_file(tmp_path, summaries, 'master = "local[1]"\n')
    given = f"{viewfs(spark, tmp_path / 'conf')}/run.toml"
    assert main(["similarities", "--config", given, "--out", str(tmp_path / "run"),
                 "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"qarla: {given}: 'master' cannot be set in a run file that is read through Hadoop "
        "(Spark starts before such a file is read): give it on the command line or to "
        "spark-submit, or use a local run file\n")
    assert not (tmp_path / "run").exists()


@pytest.mark.slow   # the spark-submit entry point (the other Hadoop run-file tests stay fast)
def test_the_job_reads_a_run_file_on_hadoop(spark, tmp_path, capsys):
    """jobs/qarla_run.py (spark-submit's entry point; here in this process,
    with its session) takes a run file on another file system."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "qarla_run_job", Path(__file__).resolve().parents[1] / "jobs" / "qarla_run.py")
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    summaries, _, _ = make_inputs(tmp_path, n_topics=1)
    run_file(tmp_path, summaries, f'out = "{tmp_path / "run"}"\nstages = ["testbed", '
                                  '"similarities"]\n')
    assert job.main(["--config", f"{viewfs(spark, tmp_path / 'conf')}/run.toml"]) == 0, \
        capsys.readouterr()
    assert json.loads((tmp_path / "run" / "run.json").read_text())["seed"] == 5


# the absolute --out is slow (CI runs it): the fast suite has it in
# test_output.py's in-place test, whose renamed run's --out is an absolute
# path and leaves nothing else beside it
@pytest.mark.parametrize("form", [pytest.param("absolute", marks=pytest.mark.slow), "relative"])
def test_out(spark, tmp_path, capsys, form):
    summaries, _, _ = make_inputs(tmp_path, n_topics=1)
    info = similarities(capsys, tmp_path, str(summaries), "--metrics", "R-1.a",
                        out=FORMS[form](tmp_path / "run"))
    assert info["status"] == "complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "run"]


@pytest.mark.parametrize("form", run_forms())
def test_reused_similarities(spark, tmp_path, capsys, form):
    summaries, _, _ = make_inputs(tmp_path, n_topics=1)
    similarities(capsys, tmp_path, str(summaries), "--metrics", "R-1.a",
                 out=str(tmp_path / "first"))
    (tmp_path / "reuse.toml").write_text('stages = ["testbed", "similarities"]\n')
    code = main(["run", str(summaries), "--config", str(tmp_path / "reuse.toml"),
                 "--similarities", FORMS[form](tmp_path / "first" / "similarities"),
                 "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["similarities"]["reused"] == FORMS[form](tmp_path / "first" / "similarities")
