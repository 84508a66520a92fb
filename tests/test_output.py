"""Run directories committed in place (object stores; issue 14), forced on
file:// here: run.json first as a marker, the tables under OUT, run.json
last; a failed or interrupted run never looks complete and every reader of
a run refuses it; --overwrite never mixes two runs. Also: which mode each
file system gets."""

from __future__ import annotations

import json
import os

import pytest

from helpers import make_testbed, write_jsonl
from qarla_spark import names, pipeline
from qarla_spark.config import RunConfig
from qarla_spark.errors import ConfigError, InputError
from qarla_spark.spark import output
from qarla_spark.spark.output import RunDirectory, commit_mode, read_run_json


@pytest.mark.parametrize("scheme,mode", [
    ("s3a", "in-place"), ("s3", "in-place"), ("S3A", "in-place"), ("gs", "in-place"),
    ("abfss", "in-place"), ("wasb", "in-place"), ("oss", "in-place"),
    ("file", "rename"), ("hdfs", "rename"), ("viewfs", "rename"), ("", "rename"),
    (None, "rename")])
def test_auto_commits_in_place_on_object_stores_only(scheme, mode):
    assert commit_mode(scheme) == mode
    assert commit_mode(scheme, "rename") == "rename"
    assert commit_mode(scheme, "in-place") == "in-place"


def test_an_unknown_commit_mode_is_one_sentence():
    with pytest.raises(ConfigError, match="commit must be one of auto, rename, in-place"):
        commit_mode("s3a", "copy")
    with pytest.raises(ConfigError, match="'commit' must be auto, rename or in-place"):
        RunConfig(commit="copy")


def test_unfinished_says_why_in_one_sentence():
    assert names.unfinished("r", json.dumps({"status": "complete"})) is None
    assert names.unfinished("r", None) == "r has no run.json: it is not a finished qarla run"
    said = names.unfinished("r", json.dumps({"status": "incomplete"}))
    assert said.startswith("r is not a finished qarla run: its run.json says status "
                           "'incomplete'") and "\n" not in said
    assert "not valid JSON" in names.unfinished("r", '{"status": "compl')
    assert "status None" in names.unfinished("r", "[1, 2]")


def _recording(monkeypatch):
    """Record, in order, every file a RunDirectory creates, every table it
    writes and the report: ('run.json', status), ('table', name),
    ('report.html',)."""
    events = []
    create, write = RunDirectory._create, RunDirectory.write

    def _create(self, name, text):
        create(self, name, text)
        events.append((name, json.loads(text)["status"]) if name == "run.json" else (name,))

    def _write(self, declared, df, *args, **kwargs):
        # every table, whoever writes it (Spark, the executors, the driver)
        write(self, declared, df, *args, **kwargs)
        events.append(("table", declared.name))

    import qarla_spark.report as report
    staged_report = report.write_staged_report

    def _write_staged_report(folder, info=None, spark=None):
        staged_report(folder, info, spark)
        events.append(("report.html",))

    monkeypatch.setattr(report, "write_staged_report", _write_staged_report)
    monkeypatch.setattr(RunDirectory, "_create", _create)
    monkeypatch.setattr(RunDirectory, "write", _write)
    return events


@pytest.mark.spark
def test_an_in_place_run_writes_under_out_and_run_json_last(spark, tmp_path, monkeypatch):
    """The same tables as a renamed run, written directly under OUT (no
    staging folder): run.json first as an 'incomplete' marker, then the
    tables and the report, and run.json 'complete' last."""
    from devtools.compare import compare_runs
    from qarla_spark.report.data import load_run

    src = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=2))
    config = RunConfig(inputs=(str(src),), metrics=("R-1.a",), stages=("testbed", "similarities"))
    pipeline.run(spark, config.updated(out=str(tmp_path / "renamed")))
    events = _recording(monkeypatch)
    seen = []
    monkeypatch.setattr(RunDirectory, "__init__", _spy_init(RunDirectory.__init__, seen))
    out = tmp_path / "in_place"
    result = pipeline.run(spark, config.updated(out=f"file://{out}", commit="in-place"))

    assert seen == [("in-place", str(out))]   # the staging folder is OUT itself
    assert result.out == f"file://{out}"
    assert events[0] == ("run.json", "incomplete") and events[-2:] == [
        ("report.html",), ("run.json", "complete")]
    assert {e for e in events[1:-1] if e[0] == "table"} == {
        ("table", n) for n in ("summaries", "judgments", "sources", "testbed", "problems",
                               "similarities")}
    assert not [e for e in events[1:-1] if e[0] == "run.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in_place", "renamed", "s.jsonl"]
    assert (out / "report.html").is_file()
    info = read_run_json(spark, str(out))
    assert info["status"] == "complete" and info["config"]["commit"] == "in-place"
    assert load_run(str(out)).info["status"] == "complete"
    assert compare_runs(str(tmp_path / "renamed"), str(out)) == {
        n: [] for n in ("judgments", "problems", "similarities", "sources", "summaries",
                        "testbed")}


def _spy_init(init, seen):
    def spied(self, *args, **kwargs):
        init(self, *args, **kwargs)
        seen.append((self.mode, self.staging.replace("file://", "")))
    return spied


@pytest.mark.spark
def test_a_run_cut_short_in_place_is_refused_by_every_reader(spark, tmp_path, capsys):
    """A run that stops after writing a table (a crash: neither commit nor
    abort) leaves OUT with run.json saying 'incomplete': read_run_json,
    qarla report, compare_runs and --similarities refuse it in one
    sentence, and a new run without --overwrite says it is unfinished."""
    from qarla_spark.cli import main
    from devtools.compare import compare_runs
    from qarla_spark.report.data import ReportError

    out = tmp_path / "run"
    run_dir = RunDirectory(spark, str(out), commit="in-place", run_id="c1")
    assert not out.exists()   # nothing before the first write
    run_dir.write_table("similarities", spark.createDataFrame(
        [("t", "t0", "a", "b", "R-1.a", 0.5)],
        "task string, topic string, summarizer_s string, summarizer_r string, metric string, "
        "value double"))
    assert sorted(p.name for p in out.iterdir()) == ["run.json", "similarities"]
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"
    sentence = (f"{out} is not a finished qarla run: its run.json says status 'incomplete', "
                "not 'complete' (the run failed, was interrupted or is still being written)")

    with pytest.raises(ConfigError) as info:
        read_run_json(spark, str(out))
    assert str(info.value) == sentence
    assert main(["report", str(out)]) == 2
    assert capsys.readouterr().err == f"qarla: {sentence}\n"
    assert not (out / "report.html").exists()
    with pytest.raises(ReportError, match="not a finished qarla run"):
        compare_runs(str(out), str(out))
    with pytest.raises(ConfigError) as info:
        output.check_reused_table(spark, str(out / "similarities"))
    assert str(info.value) == f"--similarities {out / 'similarities'}: {sentence}"
    with pytest.raises(ConfigError, match="already exists \\(an unfinished run: its run.json "
                                          "does not say status 'complete'\\).*--overwrite"):
        RunDirectory(spark, str(out), commit="in-place")

    run_dir.abort()
    assert not out.exists()


@pytest.mark.spark
def test_reused_similarities_must_come_from_a_finished_run(spark, tmp_path):
    """--similarities: a table in a complete run, or outside any run, is
    taken; one in a staging folder (rename mode) is refused."""
    table = spark.createDataFrame([("t", 1.0)], "task string, value double")
    table.write.parquet(str(tmp_path / "loose" / "similarities"))
    output.check_reused_table(spark, str(tmp_path / "loose" / "similarities"))
    run_dir = RunDirectory(spark, str(tmp_path / "run"), run_id="s1")
    run_dir.write_table("similarities", table)
    with pytest.raises(ConfigError, match="has no run.json: it is not a finished qarla run"):
        output.check_reused_table(spark, run_dir.path("similarities"))
    run_dir.commit({})
    output.check_reused_table(spark, str(tmp_path / "run" / "similarities"))


@pytest.mark.spark
def test_a_failed_in_place_run_leaves_no_out(spark, tmp_path):
    """An error after the first tables were written (a bad user metric
    table, found in the similarity stage): the run removes OUT."""
    src = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=1))
    bad = tmp_path / "user.csv"
    bad.write_text("task,topic,metric\nt,t0,X\n")
    out = tmp_path / "run"
    with pytest.raises(InputError, match="lacks column"):
        pipeline.run(spark, RunConfig(inputs=(str(src),), out=str(out), metrics=("R-1.a",),
                                      user_metrics=(str(bad),), commit="in-place",
                                      stages=("testbed", "similarities")))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl", "user.csv"]


def _complete_run(spark, out, rows=3):
    run_dir = RunDirectory(spark, str(out), overwrite=True, run_id="old")
    run_dir.write_table("numbers", spark.range(rows))
    run_dir.write_table("stale", spark.range(1))
    run_dir.commit({"which": "old"})


@pytest.mark.spark
def test_overwrite_in_place_never_mixes_two_runs(spark, tmp_path):
    """--overwrite in place: the previous run stays whole until the new run
    writes its first table; then run.json says 'incomplete' before any old
    table is deleted, and only the new run's tables are there when run.json
    says 'complete' again."""
    out = tmp_path / "run"
    _complete_run(spark, out)
    run_dir = RunDirectory(spark, str(out), overwrite=True, commit="in-place", run_id="new")
    assert json.loads((out / "run.json").read_text())["which"] == "old"   # untouched yet
    assert sorted(p.name for p in out.iterdir()) == ["numbers", "run.json", "stale"]

    run_dir.write_table("numbers", spark.range(5))
    assert sorted(p.name for p in out.iterdir()) == ["numbers", "run.json"]
    marker = json.loads((out / "run.json").read_text())
    assert marker["status"] == "incomplete" and marker["run_id"] == "new"
    with pytest.raises(ConfigError, match="not a finished qarla run"):
        read_run_json(spark, str(out))

    run_dir.commit({"which": "new"})
    info = read_run_json(spark, str(out))
    assert info["which"] == "new" and list(info["tables"]) == ["numbers"]
    assert spark.read.parquet(str(out / "numbers")).count() == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.spark
def test_overwrite_in_place_keeps_the_previous_run_when_the_input_is_bad(spark, tmp_path):
    out = tmp_path / "run"
    _complete_run(spark, out)
    src = write_jsonl(tmp_path / "s.jsonl", ['{"task": "t", "topic": "t0"}'])
    with pytest.raises(InputError):
        pipeline.run(spark, RunConfig(inputs=(str(src),), out=str(out), overwrite=True,
                                      commit="in-place"))
    assert read_run_json(spark, str(out))["which"] == "old"
    assert sorted(p.name for p in out.iterdir()) == ["numbers", "run.json", "stale"]


@pytest.mark.spark
@pytest.mark.parametrize("commit", ["rename", "in-place"])
def test_remove_local_clears_what_abort_removes_without_the_jvm(spark, tmp_path, commit):
    """After an interrupt a background write may start a Spark job after the
    cancel and recreate part of the staging folder once abort removed it
    (seen: ``sources/_temporary/0``); remove_local, called once the JVM has
    ended, removes it with Python alone, as abort would have (and, in place,
    leaves OUT alone before the run's first write)."""
    out = tmp_path / "run"
    run_dir = RunDirectory(spark, f"file://{out}", commit=commit, run_id="i1")
    target = (tmp_path / "run.incomplete-i1") if commit == "rename" else out
    if commit == "in-place":
        out.mkdir(parents=True)
        (out / "previous-run-file").write_text("kept")
        run_dir.remove_local()          # not begun: a previous run stays
        assert (out / "previous-run-file").exists()
        run_dir._begun = True           # as after the first table written
    (target / "sources" / "_temporary" / "0").mkdir(parents=True, exist_ok=True)
    run_dir.remove_local()
    assert not target.exists()
    run_dir.remove_local()              # twice: nothing left to remove, no error


def test_after_jvm_end_callbacks_run_once_in_order_despite_errors():
    from qarla_spark.spark import interrupts
    ran = []

    def broken():
        ran.append("broken")
        raise OSError("gone")

    interrupts.after_jvm_end(lambda: ran.append("first"))
    interrupts.after_jvm_end(broken)
    interrupts.after_jvm_end(lambda: ran.append("last"))
    interrupts._run_after_end()
    interrupts._run_after_end()
    assert ran == ["first", "broken", "last"]


@pytest.mark.spark
def test_a_tables_spark_jobs_are_described_and_the_threads_description_restored(spark,
                                                                                  tmp_path):
    """Each table's write names its Spark jobs (``qarla: write <table>``: the
    event log's label for writes started by background threads, which have
    no call site), read here by the write's own tasks; the thread's
    description is what it was afterwards."""
    from pyspark import TaskContext

    def described(batches):
        for pdf in batches:
            yield pdf.assign(seen=TaskContext.get().getLocalProperty(output.JOB_DESCRIPTION))

    sc = spark.sparkContext
    sc.setLocalProperty(output.JOB_DESCRIPTION, "the caller's")
    try:
        run_dir = RunDirectory(spark, str(tmp_path / "run"), run_id="d1")
        run_dir.write_table("probe", spark.range(3).mapInPandas(described,
                                                                "id long, seen string"))
        assert sc.getLocalProperty(output.JOB_DESCRIPTION) == "the caller's"
        seen = {r["seen"] for r in spark.read.parquet(run_dir.path("probe")).collect()}
        assert seen == {"qarla: write probe"}
    finally:
        sc.setLocalProperty(output.JOB_DESCRIPTION, None)
    run_dir.abort()


@pytest.mark.slow       # reads conftest's two-task run (a whole run): CI runs it
def test_the_similarity_table_has_no_statistics_where_they_never_skip_anything(two_task_run):
    """Issue 13: the similarity table's summary, metric and value columns
    span their whole range in every row group, so their Parquet min/max
    statistics (a comparison per value to write) are left out; the topic's
    stay (a reader of one topic can skip row groups)."""
    import glob

    import pyarrow.parquet as pq

    from qarla_spark.tables import table
    declared = table("similarities")
    assert set(declared.no_statistics) == {"summarizer_s", "summarizer_r", "metric", "value"}
    files = sorted(glob.glob(os.path.join(two_task_run.out, "similarities", "task=*", "*.parquet")))
    assert len({os.path.dirname(f) for f in files}) == 2          # both tasks
    for path in files:
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            columns = {group.column(c).path_in_schema: group.column(c)
                       for c in range(group.num_columns)}
            for name in declared.no_statistics:
                stats = columns[name].statistics
                assert stats is None or not stats.has_min_max, (path, name)
            assert columns["topic"].statistics.has_min_max


@pytest.mark.spark
def test_tables_written_by_the_driver_or_the_executors_read_as_sparks(spark, tmp_path):
    """Issue 26: a table the driver writes (pyarrow, no Spark job) and one
    the executors write (an ExecutorTable: each Spark task its file) have
    Spark's layout — partition folders named and escaped as Spark names
    them — and read back as the same rows as Spark's own write."""
    import pandas as pd
    import pyarrow as pa

    from qarla_spark import tables
    from devtools.compare import compare_table
    from qarla_spark.spark.output import ExecutorTable

    declared = tables.table("summaries")              # partitioned by task
    rows = pd.DataFrame({"task": ["a/b", "x=y", "é ü", "a/b", "plain"],
                         "topic": ["t1", "t2", "t3", "t4", "t5"],
                         "summarizer": ["s"] * 5, "role": ["peer", "model"] * 2 + ["peer"],
                         "text": ["one", "two", "three", None, "five"]})
    df = spark.createDataFrame(rows, declared.ddl).repartition(3)
    dirs = {}
    for how in ("spark", "driver", "executors"):
        out = RunDirectory(spark, str(tmp_path / how))
        if how == "spark":
            out.write(declared, df)
        elif how == "driver":
            out.write(declared, pa.Table.from_pandas(rows, preserve_index=False))
        else:
            out.write(declared, ExecutorTable(
                df, lambda pdf: [pa.Table.from_pandas(pdf, preserve_index=False)],
                lambda: df))
        dirs[how] = out.staging
        assert out.tables["summaries"]["columns"] == [f"{c.name}: {c.spark_type}"
                                                       for c in declared.columns]
    folders = {how: sorted(p for p in os.listdir(os.path.join(d, "summaries"))
                           if not p.startswith(("_", "."))) for how, d in dirs.items()}
    assert folders["driver"] == folders["executors"] == folders["spark"]
    assert "task=a%2Fb" in folders["spark"] and "task=x%3Dy" in folders["spark"]
    for how in ("driver", "executors"):
        assert compare_table(os.path.join(dirs["spark"], "summaries"),
                             os.path.join(dirs[how], "summaries")) == []
        back = spark.read.parquet(os.path.join(dirs[how], "summaries"))
        assert sorted(back.columns) == sorted(declared.column_names) and back.count() == 5


@pytest.mark.spark
def test_executors_that_do_not_see_the_run_folder_leave_the_table_to_spark(spark, tmp_path,
                                                                          monkeypatch):
    """On a cluster each writing task first checks it sees the staging folder
    (a shared file system). One that does not writes nothing, and Spark
    writes the table — and every later one — with the same rows."""
    import pandas as pd
    import pyarrow as pa

    from qarla_spark import tables
    from devtools.compare import compare_table
    from qarla_spark.spark.output import ExecutorTable

    declared = tables.table("summaries")
    rows = pd.DataFrame({"task": ["a", "b", "a"], "topic": ["t1", "t2", "t3"],
                         "summarizer": ["s"] * 3, "role": ["peer", "model", "peer"],
                         "text": ["one", "two", "three"]})
    df = spark.createDataFrame(rows, declared.ddl).repartition(2)
    table = ExecutorTable(df, lambda pdf: [pa.Table.from_pandas(pdf, preserve_index=False)],
                          lambda: df)
    seen = RunDirectory(spark, str(tmp_path / "seen"))
    monkeypatch.setattr(RunDirectory, "folder_to_check", lambda self: self._local_target)
    assert seen.write_on_executors(declared, table)          # a shared file system
    unseen = RunDirectory(spark, str(tmp_path / "unseen"))
    monkeypatch.setattr(RunDirectory, "folder_to_check",
                        lambda self: str(tmp_path / "elsewhere"))
    assert not unseen.write_on_executors(declared, table)
    assert not os.path.exists(os.path.join(unseen.staging, "summaries"))
    assert not unseen.executors_write_here()
    unseen.write(declared, table)                            # by Spark
    assert compare_table(os.path.join(seen.staging, "summaries"),
                         os.path.join(unseen.staging, "summaries")) == []


def test_runs_of_parts_splits_a_batch_where_its_partition_changes():
    """A coalesced writing task reads its partitions one after the other: a
    batch may end one and start the next; each run of rows goes to the file
    of its partition, in order (issue 36)."""
    import pandas as pd

    from qarla_spark.spark.output import PART_COLUMN, runs_of_parts
    plain = pd.DataFrame({"kind": ["a", "b"], "data": [b"1", b"2"]})
    assert [(p, list(r["kind"])) for p, r in runs_of_parts(plain, 7)] == [(7, ["a", "b"])]
    batch = pd.DataFrame({"kind": list("abcdef"), "data": [b"x"] * 6,
                          PART_COLUMN: [3, 3, 5, 5, 5, 0]})
    found = [(p, list(r["kind"]), list(r.columns)) for p, r in runs_of_parts(batch, 1)]
    assert found == [(3, ["a", "b"], ["kind", "data"]), (5, ["c", "d", "e"], ["kind", "data"]),
                     (0, ["f"], ["kind", "data"])]
    one = batch[batch[PART_COLUMN] == 5]
    assert [(p, len(r)) for p, r in runs_of_parts(one, 1)] == [(5, 3)]
    assert list(runs_of_parts(batch.iloc[:0], 1)) == []


@pytest.mark.spark
def test_a_bundle_read_by_core_writes_the_rows_of_one_task_a_partition_in_few_files(
        spark, two_task_run, tmp_path, monkeypatch):
    """Issue 36: a bundle's records (persisted) are read by one Spark task
    per core at most, not one per partition (the statistics stage's 20
    partitions were 20 tasks of a few records each, mostly fixed cost), over
    a union of two persisted frames, as the statistics stage's records. A
    task's partitions go to one file a table: the same rows as one file per
    partition (the tables' contract: their rows, compared in a canonical
    order — a coalesced task's partitions need not be consecutive), in
    fewer files; with a file of at most one partition's rows
    (``FILE_BYTES`` 1), the same files, byte for byte."""
    import filecmp
    import glob

    import pandas as pd
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from qarla_spark import tables
    from qarla_spark.spark import output as op
    from qarla_spark.spark import rounds as rd
    names = ["king_ci", "comparisons"]
    rows = []
    for name in names:
        frame = pq.read_table(os.path.join(two_task_run.out, name)).to_pandas()
        for task, part in frame.groupby("task", sort=True):
            for i, piece in enumerate((part.iloc[::2], part.iloc[1::2])):  # two records a task
                rows.append((f"{task}/{i}", name, rd.dumps(piece.reset_index(drop=True)),
                             len(rows) % 7))
    records = spark.createDataFrame(pd.DataFrame(rows, columns=["key", "kind", "data", "p"]))
    first = records.filter(F.col("p") < 5).repartition(5, "p").drop("p").persist()
    second = records.filter(F.col("p") >= 5).repartition(3, "p").drop("p").persist()
    union = first.unionByName(second)
    assert union.rdd.getNumPartitions() == 8 > spark.sparkContext.defaultParallelism
    bundle = rd.records_tables(union, names)[names[0]].bundle
    declared = [tables.table(n) for n in names]
    written = {}
    try:
        for label, by_core, file_bytes in (("plain", False, op.FILE_BYTES),
                                           ("by_core", True, op.FILE_BYTES),
                                           ("by_core_small", True, 1)):
            monkeypatch.setattr(op, "FILE_BYTES", file_bytes)
            out = RunDirectory(spark, str(tmp_path / label), run_id="r")
            converters = {n: bundle.to_arrow(n) for n in names}

            def split(pdf, converters=converters):
                return {n: c(pdf[pdf["kind"] == n]) for n, c in converters.items()}
            assert out._write_by_executors(declared, bundle.frame.filter(
                F.col("kind").isin(names)), split, by_core=by_core)
            written[label] = out.staging
    finally:
        first.unpersist(), second.unpersist()
    files = {k: sorted(os.path.relpath(p, d) for p in glob.glob(f"{d}/**/*", recursive=True)
                       if os.path.isfile(p)) for k, d in written.items()}
    plain = [f for f in files["plain"] if f.startswith("comparisons/part-")]
    combined = [f for f in files["by_core"] if f.startswith("comparisons/part-")]
    assert len(plain) > 2 and 1 <= len(combined) <= spark.sparkContext.defaultParallelism
    assert set(combined) <= set(plain)
    from devtools.compare import compare_table
    for name in names:
        assert compare_table(os.path.join(written["plain"], name),
                             os.path.join(written["by_core"], name)) == []
        assert pq.read_table(os.path.join(written["by_core"], name)).num_rows == \
            pq.read_table(os.path.join(written["plain"], name)).num_rows > 0
    assert files["by_core_small"] == files["plain"]
    for f in files["plain"]:
        assert filecmp.cmp(os.path.join(written["plain"], f),
                           os.path.join(written["by_core_small"], f), shallow=False), f


def _rows_by_value_reference(data, column):
    """Each value's rows by a filter a value (what the writers did before
    issue 36's change), the values sorted."""
    import pyarrow.compute as pc
    keys = sorted(data[column].unique().to_pylist())
    return [(k, data.filter(pc.equal(data[column], k)).drop([column])) for k in keys]


def test_rows_by_value_gives_each_values_rows_in_order_as_a_filter_does():
    """The writers split a table partitioned by ``task`` in one pass
    (issue 36): each value's rows, in their order, the values sorted —
    the same as a filter a value, grouped or interleaved, in chunks or not;
    a grouped table is sliced, not copied; Parquet bytes unchanged."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from qarla_spark.spark.output import rows_by_value

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(st.sampled_from(["b", "a", "c=d", "é", "z9"]),
                              st.integers(-5, 5)), max_size=40),
           st.integers(1, 4))
    def check(rows, pieces):
        table = pa.table({"task": [t for t, _ in rows], "value": [float(v) for _, v in rows],
                          "n": list(range(len(rows)))})
        cut = max(1, len(rows) // pieces)
        chunked = pa.concat_tables([table.slice(i, cut) for i in range(0, len(rows), cut)]
                                   or [table])
        want = _rows_by_value_reference(table, "task")
        for data in (table, chunked):
            found = rows_by_value(data, "task")
            assert [k for k, _ in found] == [k for k, _ in want]
            for (_, a), (_, b) in zip(found, want):
                assert a.equals(b)
                one, two = io.BytesIO(), io.BytesIO()
                pq.write_table(a, one, compression="snappy")
                pq.write_table(b, two, compression="snappy")
                assert one.getvalue() == two.getvalue()
    check()
    grouped = pa.table({"task": ["a", "a", "b"], "n": [1, 2, 3]})
    found = dict(rows_by_value(grouped, "task"))
    assert found["b"].column("n").to_pylist() == [3]
    assert rows_by_value(grouped.slice(0, 0), "task") == []
    missing = pa.table({"task": ["b", None, "a", None], "n": [1, 2, 3, 4]})
    assert [(k, t.column("n").to_pylist()) for k, t in rows_by_value(missing, "task")] == \
        [(None, [2, 4]), ("a", [3]), ("b", [1])]
