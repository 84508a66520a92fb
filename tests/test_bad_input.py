"""Issue 29 (bad input, round two): inputs that yield nothing, tasks with
nothing to evaluate, missing local inputs and wrong metric names are refused
before Spark starts, with one message naming the input, task or name.

"Before Spark starts" is shown by running the command line in a subprocess
whose Java cannot be found: a command that needed a JVM would end with
"Java not found" (exit 3) instead of the message asserted. (``qarla run``
says a missing Java before reading inputs, DECISIONS: its input checks run
with Java found and show no JVM's start-up line.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import make_testbed, write_jsonl
from qarla_spark.config import RunConfig
from qarla_spark.errors import ConfigError, InputError
from qarla_spark.io import check_in_driver, parse_input_arg
from qarla_spark.io.validate import ValidationReport, nothing_to_evaluate
from qarla_spark.stages.similarities import check_chosen_names, reused_metrics
from qarla_spark.stages.testbed import check_local_inputs, plain_paths_are_local


def qarla_without_java(args, cwd, java: bool = False) -> subprocess.CompletedProcess:
    """``python -m qarla_spark.cli ARGS`` with no Java to be found (with
    ``java``: as it is)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_SUBMIT_ARGS",)}
    if not java:
        env.pop("JAVA_HOME", None)
        env["JAVA_HOME"] = str(Path(cwd) / "no-java")
        env["PATH"] = str(Path(sys.executable).parent)     # no java on it
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return subprocess.run([sys.executable, "-m", "qarla_spark.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def checked(*paths):
    return check_in_driver([parse_input_arg(str(p)) for p in paths])


# ---------------------------------------------------------------------------
# inputs that yield nothing, tasks with nothing to evaluate
# ---------------------------------------------------------------------------

def test_an_empty_file_is_an_error_naming_it(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    report = checked(empty).report
    assert not report.ok and report.n_errors == 1
    (problem,) = report.problems
    assert problem.file.endswith("empty.jsonl") and "yields no record" in problem.message


def test_an_empty_input_among_good_ones_is_named(tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", make_testbed())
    folder = tmp_path / "nothing"
    folder.mkdir()
    (folder / "a.jsonl").write_text("")
    (folder / "b.jsonl").write_text("\n\n")
    report = checked(good, folder).report
    assert [p.file for p in report.problems if p.severity == "error"] == [str(folder)]
    assert checked(good).report.ok                  # the good input alone is fine


@pytest.mark.parametrize("role", ["model", "peer"])
def test_a_task_with_no_peer_or_no_model_has_nothing_to_evaluate(tmp_path, role):
    """Every record of task "only" has one role (a wrong role field, say):
    an error naming the task; the other task is fine."""
    records = make_testbed(task="fine") + [
        dict(r, role=role) for r in make_testbed(task="only", judged=False)]
    report = checked(write_jsonl(tmp_path / "in.jsonl", records)).report
    errors = [p.message for p in report.problems if p.severity == "error"]
    lacking = "peer" if role == "model" else "model"
    assert len(errors) == 1 and errors[0].startswith(f"task only: no {lacking} summary")
    with pytest.raises(InputError, match="task only"):
        report.raise_for_errors()


def test_a_report_without_any_summary_is_an_error():
    """The last net (the Spark path, where inputs are not counted one by
    one): no task, no error — nothing to evaluate."""
    empty = ValidationReport([], [], 0, 0)
    found = nothing_to_evaluate(empty)
    assert found.n_errors == 1 and "no valid summary" in found.problems[0].message
    # a report that already has errors gets no second, vaguer one
    with_errors = ValidationReport([], found.problems, 1, 0)
    assert nothing_to_evaluate(with_errors) is with_errors


def test_validate_and_run_refuse_an_empty_input_without_spark(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    for args in (["validate", "empty.jsonl"], ["run", "empty.jsonl", "--out", "run"]):
        proc = qarla_without_java(args, tmp_path, java=args[0] == "run")
        assert proc.returncode == 1, proc.stderr
        text = proc.stdout + proc.stderr
        assert "empty.jsonl" in text and "yields no record" in text
        assert "Traceback" not in text and "internal error" not in text
        assert "Java" not in text and "WARNING" not in text     # no JVM started
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------------------
# missing local inputs
# ---------------------------------------------------------------------------

def test_missing_local_inputs_are_named_without_spark(tmp_path):
    write_jsonl(tmp_path / "good.jsonl", make_testbed())
    for args in (["validate", "missing.jsonl"],
                 ["run", "good.jsonl", "--judgments", "nojudgments.csv", "--out", "run"],
                 ["run", "good.jsonl", "--similarities", "old/similarities", "--out", "run"]):
        proc = qarla_without_java(args, tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert "not found" in proc.stderr and args[-1 if args[0] == "validate" else 3] \
            in proc.stderr
        assert "Java" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()


def test_plain_paths_are_left_to_spark_when_another_file_system_may_hold_them(tmp_path):
    config = RunConfig(inputs=(str(tmp_path / "missing.jsonl"),))
    assert plain_paths_are_local(config, environ={})
    with pytest.raises(InputError, match="missing.jsonl"):
        check_local_inputs(config)
    for other in (RunConfig(inputs=config.inputs, master="spark://host:7077"),
                  RunConfig(inputs=config.inputs,
                            spark_conf={"spark.hadoop.fs.defaultFS": "hdfs://nn:8020"})):
        assert not plain_paths_are_local(other, environ={})
    assert not plain_paths_are_local(config, environ={"HADOOP_CONF_DIR": "/etc/hadoop"})
    # a remote URI is Spark's to check; a file: URI is local whatever the settings
    check_local_inputs(RunConfig(inputs=("hdfs://nn:8020/missing.jsonl",)))
    with pytest.raises(InputError, match="missing"):
        check_local_inputs(RunConfig(inputs=(f"file://{tmp_path}/missing.jsonl",),
                                     master="spark://host:7077"))


# ---------------------------------------------------------------------------
# metric names
# ---------------------------------------------------------------------------

KNOWN = ("R-1.a", "R-2.a", "Rpre-1.a", "TVM.512")


@pytest.mark.parametrize("sets, measures, expected", [
    (["R-1.a,NOPE"], [], r"'NOPE' \(in 'R-1.a,NOPE'\) is an unknown metric"),
    (["R-1.a,Rpre1.a"], [], r"did you mean Rpre-1.a"),
    (["R-1.a,F-1.a"], [], r"'F-1.a' .* is not computed in this run: add it to --metrics"),
    ([], ["R-9*"], r"--hbr-measures / hbr_measures: 'R-9\*' matches no metric"),
    ([], ["R-*.a, TVM.52"], r"'TVM.52' is an unknown metric; did you mean TVM.512"),
])
def test_wrong_metric_names_are_named_with_the_closest(sets, measures, expected):
    with pytest.raises(ConfigError, match=expected):
        check_chosen_names(sets, measures, KNOWN)


def test_right_metric_names_pass():
    check_chosen_names(["R-1.a,TVM.512", " Rpre-1.a "], ["R-*.a", "TVM.512"], KNOWN)


def test_a_reused_tables_metrics_come_from_its_run_json(tmp_path):
    (tmp_path / "old" / "similarities").mkdir(parents=True)
    assert reused_metrics(str(tmp_path / "old" / "similarities")) is None   # no run.json
    (tmp_path / "old" / "run.json").write_text('{"similarities": {"metrics": ["R-1.a"]}}')
    assert reused_metrics(str(tmp_path / "old" / "similarities/")) == ("R-1.a",)
    assert reused_metrics("hdfs://nn/old/similarities") is None


def test_a_wrong_metric_set_fails_before_spark(tmp_path):
    write_jsonl(tmp_path / "good.jsonl", make_testbed())
    (tmp_path / "run.toml").write_text('hbr_measures = ["R-1.a", "Rpre-7.x"]\n')
    for args in (["run", "good.jsonl", "--metric-set", "R-1.a,NOPE", "--out", "run"],
                 ["run", "good.jsonl", "--config", "run.toml", "--out", "run"]):
        proc = qarla_without_java(args, tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert ("'NOPE'" in proc.stderr or "'Rpre-7.x'" in proc.stderr) and \
            "Java" not in proc.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.spark
def test_spark_reads_of_empty_inputs_are_refused_too(spark, tmp_path):
    """Inputs Spark reads (large or remote ones; here local, read by Spark
    all the same): an input of 0-byte files is named by Hadoop's probe; an
    input of blank lines yields no summary, which the report says."""
    from qarla_spark.io import load_testbed
    good = write_jsonl(tmp_path / "good.jsonl", make_testbed())
    folder = tmp_path / "zero"
    folder.mkdir()
    (folder / "a.jsonl").write_text("")
    with pytest.raises(InputError, match="zero.*yields no record"):
        load_testbed(spark, [parse_input_arg(str(good)), parse_input_arg(str(folder))])
    (tmp_path / "blank.jsonl").write_text("\n \n")
    _, report = load_testbed(spark, [parse_input_arg(str(tmp_path / "blank.jsonl"))])
    assert not report.ok and "no valid summary" in report.problems[0].message
