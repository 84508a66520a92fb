"""The qarla command: output, exit statuses, error messages without tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import make_testbed, write_jsonl
from qarla_spark.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def qarla_cmd():
    """The installed console script next to this Python, else the module."""
    script = Path(sys.executable).with_name("qarla")
    return [str(script)] if script.exists() else [sys.executable, "-m", "qarla_spark.cli"]


def test_help_explains_inputs_outputs_and_defaults(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    top = capsys.readouterr().out
    assert "validate" in top and "run" in top
    for command, words in (("validate", ["INPUT", "--judgments", "--task", "bundled SummEval",
                                         "D30001.M.100.T.A", "Exit status 1"]),
                           ("run", ["--out", "runs/latest", "--seed", "13", "run.json",
                                    "summaries/", "--overwrite", "incomplete"])):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        for word in words:
            assert word in text, (command, word)


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage: qarla" in capsys.readouterr().out


@pytest.mark.spark
def test_validate_good_input(spark, tmp_path, capsys):
    path = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=2))
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "task t:" in out and "topics: 2" in out and "problems: none" in out


@pytest.mark.spark
def test_validate_bad_input_exit_1_with_places(spark, tmp_path, capsys):
    recs = make_testbed(n_topics=1, n_models=2)
    recs[1] = dict(recs[1], role="reference")
    path = write_jsonl(tmp_path / "bad.jsonl", recs + ["{oops"])
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"error: {path}, line 2, field 'role': unknown role \"reference\"" in out
    assert f"error: {path}, line 6: malformed JSON" in out
    assert "topic 't0' of task 't' has 1 model(s)" in out
    assert "Traceback" not in out


@pytest.mark.spark
def test_run_with_input_errors_exits_1_and_writes_nothing(spark, tmp_path, capsys):
    path = write_jsonl(tmp_path / "bad.jsonl", [dict(make_testbed()[0], text="  ")])
    out_dir = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out_dir)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qarla: the input has errors: 1 error.")
    assert f"{path}, line 1, field 'text': empty text" in err
    assert "Traceback" not in err and not out_dir.exists()


@pytest.mark.spark
@pytest.mark.slow      # a whole default run (59 metrics, 1,023 subsets): a minute or more
def test_run_options_reach_run_json(spark, tmp_path, capsys):
    path = write_jsonl(tmp_path / "s.jsonl",
                       [{k: v for k, v in r.items() if k != "task"} for r in make_testbed()])
    cfg = tmp_path / "r.toml"
    cfg.write_text('seed = 5\nout = "%s"\n' % (tmp_path / "from_file"))
    out_dir = tmp_path / "out"
    code = main(["run", f"duc={path}", "--config", str(cfg), "--out", str(out_dir),
                 "--seed", "99"])
    assert code == 0, capsys.readouterr()
    info = json.loads((out_dir / "run.json").read_text())
    assert info["seed"] == 99 and info["config"]["out"] == str(out_dir)
    assert info["inputs"][0] == {"path": str(path), "kind": "summaries", "task": "duc"}
    assert [t["task"] for t in info["testbed"]] == ["duc"]
    assert "results:" in capsys.readouterr().out


@pytest.mark.spark
@pytest.mark.parametrize("form", ["file://{}", "file:{}/"])
def test_out_as_a_file_uri(spark, tmp_path, capsys, form):
    """``--out`` as a Hadoop file-system URI (issue 14): the run directory
    is staged beside it and committed there, as with a plain path."""
    path = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=1))
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("a previous run")
    code = main(["similarities", f"t={path}", "--metrics", "R-1.a", "--out",
                 form.format(out), "--overwrite", "--quiet"])
    assert code == 0, capsys.readouterr()
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "complete" and info["config"]["out"] == form.format(out)
    assert (out / "similarities").is_dir() and not (out / "stale.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "s.jsonl"]


@pytest.mark.spark
def test_unknown_config_key_is_a_clear_error(spark, tmp_path, capsys):
    cfg = tmp_path / "r.toml"
    cfg.write_text("sed = 5\n")
    assert main(["run", "--config", str(cfg)]) == 2
    assert "unknown key 'sed' (did you mean 'seed'?)" in capsys.readouterr().err


def test_bad_conf_pair_is_a_clear_error(capsys):
    assert main(["validate", "--conf", "nonsense"]) == 2
    assert "--conf expects KEY=VALUE" in capsys.readouterr().err


def test_parser_accepts_repeated_options():
    args = build_parser().parse_args(["run", "a", "b", "--judgments", "j1", "--judgments", "j2",
                                      "--conf", "x=1", "--conf", "y=2"])
    assert args.inputs == ["a", "b"] and args.judgments == ["j1", "j2"]
    assert args.spark_conf == ["x=1", "y=2"]


def test_missing_java_is_the_first_and_only_thing_said(tmp_path):
    """A fresh process without Java: `qarla run` says in one sentence how to
    install it, exit 3, no traceback (Spark never starts, the input is not
    read); `qarla validate` of a small local input needs no Java at all."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME",)}
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    env["PATH"] = str(bindir)
    proc = subprocess.run(qarla_cmd() + ["run", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 3
    assert proc.stderr.startswith("qarla: Spark needs Java 17 or newer and no `java` was found")
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    proc = subprocess.run(qarla_cmd() + ["validate"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0 and "topics: 100" in proc.stdout, proc.stderr


def test_makefile_java_check_runs_without_dependencies(tmp_path):
    """`make run` checks Java before installing anything: the check imports
    no third-party package."""
    env = dict(os.environ, PATH=str(tmp_path))
    env.pop("JAVA_HOME", None)
    proc = subprocess.run([sys.executable, "-S", "-m", "qarla_spark.spark.java"], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3 and "Java 17" in proc.stderr


@pytest.mark.slow
def test_bad_input_in_a_fresh_process_shows_no_java_trace(tmp_path):
    """End to end, with the JVM: a missing input file is one paragraph."""
    proc = subprocess.run(qarla_cmd() + ["validate", str(tmp_path / "missing.jsonl")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1
    assert "missing.jsonl" in proc.stderr and "not found" in proc.stderr
    for noise in ("Traceback", "py4j", "at org.apache", "Exception in thread"):
        assert noise not in proc.stderr + proc.stdout


@pytest.mark.spark
@pytest.mark.slow      # a whole run with every stage, through the command: a minute or more
def test_user_table_and_plugin_flow_through_qarla_run(spark, tmp_path, capsys):
    """A BERTScore-like table and a plugin function end up in similarities/
    like built-in metrics (issue 3's acceptance)."""
    import pandas as pd

    recs = make_testbed(n_topics=2, n_models=3, n_peers=2)
    path = write_jsonl(tmp_path / "s.jsonl", recs)
    names = {}
    for r in recs:
        names.setdefault(r["topic"], []).append(r["summarizer"])
    table = pd.DataFrame([{"task": "t", "topic": t, "summarizer_s": s, "summarizer_r": r,
                           "metric": "BERTScore", "value": 0.9}
                          for t, who in names.items() for s in who for r in who if s != r])
    table.to_parquet(tmp_path / "bert.parquet")
    plugin = tmp_path / "plug.py"
    plugin.write_text("from qarla_spark.metrics.registry import register_metric\n"
                      "register_metric('n_types.a', lambda s, r: float(len(set(s))))\n")
    out_dir = tmp_path / "out"
    try:
        code = main(["run", str(path), "--out", str(out_dir), "--metrics", "R-1.a,n_types.a",
                     "--user-metrics", str(tmp_path / "bert.parquet"),
                     "--metric-plugin", str(plugin)])
    finally:
        from qarla_spark.metrics.registry import unregister_metric
        unregister_metric("n_types.a")
    assert code == 0, capsys.readouterr()
    sims = spark.read.parquet(str(out_dir / "similarities")).toPandas()
    assert sorted(sims.metric.unique()) == ["BERTScore", "R-1.a", "n_types.a"]
    assert (sims.groupby("metric").size() == 2 * 5 * 4).all()
    info = json.loads((out_dir / "run.json").read_text())["similarities"]
    assert info["user_table_metrics"] == ["BERTScore"]
    assert info["user_function_metrics"] == ["n_types.a"]


def test_unknown_metric_fails_before_spark_reads_anything(tmp_path, capsys):
    code = main(["run", str(tmp_path / "missing.jsonl"), "--metrics", "R-1.x",
                 "--out", str(tmp_path / "o")])
    assert code == 2
    assert "unknown metric 'R-1.x'; did you mean R-1.c, R-1.b, R-1.a?" in capsys.readouterr().err


def test_debug_works_before_and_after_the_command_name(tmp_path):
    """--debug after the command name too (and the one before it is not
    undone by the subcommand's default)."""
    parser = build_parser()
    for argv in (["--debug", "run"], ["run", "--debug"], ["similarities", "--debug"],
                 ["validate", "--debug"]):
        assert parser.parse_args(argv).debug is True, argv
    assert parser.parse_args(["run"]).debug is False
    from qarla_spark.errors import ConfigError
    for argv in (["--debug", "run"], ["run", "--debug"]):
        with pytest.raises(ConfigError, match="unknown metric"):
            main(argv + [str(tmp_path / "missing.jsonl"), "--metrics", "R-1.x"])


def test_an_existing_out_is_refused_before_spark_starts(tmp_path, capsys, monkeypatch):
    import qarla_spark.launcher as launcher

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(launcher, "session_for", no_spark)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["run", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"the output directory {out} already exists" in err and "--overwrite" in err
    assert main(["similarities", "--out", f"file:{out}/"]) == 2
    # with --overwrite (or a new folder) the run goes on to start Spark
    with pytest.raises(AssertionError, match="Spark was started"):
        main(["--debug", "run", "--out", str(out), "--overwrite"])


def test_run_help_names_the_tables_the_issue_missed():
    text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    for name in ("correlations/", "hbr_systems/", "hbr_correlations/"):
        assert f"  {name}" in text, name
    hbr_line = next(line for line in text.splitlines() if line.startswith("  hbr/ "))
    assert "std_error" in hbr_line
    assert "--quiet" in text


@pytest.mark.spark
@pytest.mark.slow      # two runs through the command
def test_progress_lines_then_summary_and_quiet(spark, tmp_path, capsys):
    """Without --quiet: the testbed's description first on stdout, a line on
    stderr as each stage starts and ends, then the results (the description
    is not repeated). --quiet: nothing on stderr, and stdout says the same."""
    path = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=2))
    assert main(["similarities", str(path), "--metrics", "R-1.a",
                 "--out", str(tmp_path / "a")]) == 0
    loud = capsys.readouterr()
    assert loud.out.startswith("task t:\n") and loud.out.count("task t:") == 1
    lines = loud.err.splitlines()
    events = [line.split("] ", 1)[1] for line in lines if line.startswith("qarla [")]
    assert [e.rsplit(" done in ", 1)[0] if " done in " in e else e for e in events] == [
        "spark session ...", "spark session", "testbed tables ...", "testbed tables",
        "similarities ...", "similarities", "writing ...", "writing"], lines
    assert main(["similarities", str(path), "--metrics", "R-1.a", "--quiet",
                 "--out", str(tmp_path / "b")]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == ""
    assert quiet.out.replace(str(tmp_path / "b"), "OUT") == \
        loud.out.replace(str(tmp_path / "a"), "OUT")


@pytest.mark.parametrize("case", ["existing out", "unknown metric"])
def test_the_job_and_qarla_run_share_one_launcher(tmp_path, capsys, monkeypatch, case):
    """jobs/qarla_run.py (spark-submit's entry point) and ``qarla run`` start
    a run through qarla_spark.launcher: the same bad setting gets the same
    message and exit status from both, before Spark starts."""
    import runpy

    import qarla_spark.launcher as launcher

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(launcher, "session_for", no_spark)
    out = tmp_path / "out"
    out.mkdir()
    src = tmp_path / "in.jsonl"
    src.write_text("")
    cfg = tmp_path / "run.toml"
    if case == "unknown metric":
        out, extra = tmp_path / "new", 'metrics = ["R-1.x"]\n'
    else:
        extra = ""
    cfg.write_text(f'inputs = ["{src}"]\nout = "{out}"\n' + extra)
    job = runpy.run_path(str(ROOT / "jobs" / "qarla_run.py"), run_name="qarla_job")
    said = {}
    for name, run in (("qarla run", lambda: main(["run", "--config", str(cfg)])),
                      ("job", lambda: job["main"](["--config", str(cfg)]))):
        status = run()
        said[name] = (status, capsys.readouterr().err)
    assert said["qarla run"] == said["job"]
    status, err = said["job"]
    assert status == 2 and err.startswith("qarla: ") and err.count("\n") == 1
    assert ("already exists" if case == "existing out" else "unknown metric") in err
