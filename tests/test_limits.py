"""Topic size limits (qarla_spark.io.limits): the model at, under and over a
limit, and a run over it refused before Spark starts (docs/DECISIONS.md,
"Topic size limits")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from qarla_spark.errors import ConfigError
from qarla_spark.io import limits
from qarla_spark.io.limits import Budget, TopicSize, budget_of, topics_over

ROOT = Path(__file__).resolve().parents[1]
MB = limits.MB
GB = 1 << 30


def test_default_local_settings_accept_918_summaries_of_59_metrics():
    """The README's numbers: the local profile's 4 GB heap, 59 metrics."""
    budget = budget_of({"spark.master": "local[*]", "spark.driver.memory": "4g"})
    assert budget.heap_setting == "spark.driver.memory" and budget.python is None
    assert limits.max_summaries(budget.heap - limits.JVM_RESERVED, 59,
                                limits.JVM_PER_CUBE_BYTE) == 918
    assert not [o for o in topics_over([TopicSize("t", "a", 918)], 59, budget)
                if o.severity == "error"]
    [over] = [o for o in topics_over([TopicSize("t", "a", 919)], 59, budget)
              if o.severity == "error"]
    assert over.need > over.limit


@pytest.mark.parametrize("n, expected", [(300, []), (380, ["warning"]), (401, ["warning"]),
                                         (402, ["error"])])
def test_heap_limit_at_under_and_over(n, expected):
    # 1 GB heap: (1024 - 300) MB / (10 × 8 × 59) bytes -> 401 summaries
    budget = Budget(GB, "spark.driver.memory")
    assert limits.max_summaries(GB - limits.JVM_RESERVED, 59, limits.JVM_PER_CUBE_BYTE) == 401
    found = topics_over([TopicSize("duc", "d30001", n)], 59, budget)
    assert [o.severity for o in found] == expected


def test_the_error_names_task_topic_size_limit_and_setting():
    sizes = [TopicSize("duc", "small", 27), TopicSize("duc", "d30001", 2000)]
    found = topics_over(sizes, 59, budget_of({"spark.master": "local[2]",
                                              "spark.driver.memory": "4g"}))
    assert [(o.severity, o.size.topic) for o in found] == [("error", "d30001")]
    with pytest.raises(ConfigError) as info:
        limits.raise_or_warn(found)
    text = str(info.value)
    for part in ("task 'duc', topic 'd30001'", "2,000 summaries", "59 metrics",
                 "at most 918 summaries", "--conf spark.driver.memory="):
        assert part in text


def test_cluster_settings_and_the_python_worker_limit():
    budget = budget_of({"spark.master": "yarn", "spark.executor.memory": "8g",
                        "spark.executor.pyspark.memory": "2g"})
    assert (budget.heap, budget.heap_setting) == (8 * GB, "spark.executor.memory")
    assert (budget.python, budget.python_setting) == (2 * GB, "spark.executor.pyspark.memory")
    # the Python worker's limit binds: 300 MB + 14 cube bytes <= 2 GB
    [over] = topics_over([TopicSize("t", "a", 550)], 59, budget)
    assert over.setting == "spark.executor.pyspark.memory" and over.severity == "error"
    # a long sentence: the ROUGE-L/W tables, 24 S² bytes
    [long] = topics_over([TopicSize("t", "b", 20, longest_sentence=9000)], 59, budget)
    assert "9,000 tokens" in long.message and long.severity == "error"
    assert not topics_over([TopicSize("t", "b", 20, longest_sentence=4000)], 59, budget)


def test_memory_sizes_are_parsed_like_spark():
    assert limits.parse_bytes("4g") == 4 * GB
    assert limits.parse_bytes("512m") == 512 * MB
    assert limits.parse_bytes("1024") == GB
    with pytest.raises(ConfigError):
        limits.parse_bytes("lots")


def test_topic_sizes_count_summaries_and_the_longest_sentence():
    table = pa.table({"task": ["t", "t", "t"], "topic": ["a", "a", "b"],
                      "text": ["One two. Three", "x " * 50, "a b c\nd"]})
    assert limits.topic_sizes(table) == [TopicSize("t", "a", 2, 50), TopicSize("t", "b", 1, 3)]


def test_a_run_over_the_limit_is_refused_before_spark_starts(tmp_path):
    """200 summaries × 59 metrics need ~189 MB of heap beyond Spark's
    reserved 300: a 460 MB heap (just above Spark's own minimum of 450)
    refuses them at once, exit status 2, nothing written, no Spark session
    started."""
    path = tmp_path / "big.jsonl"
    with open(path, "w") as f:
        for i in range(200):
            f.write(json.dumps({"task": "big", "topic": "t0", "summarizer": f"s{i:03d}",
                                "role": "model" if i < 4 else "peer",
                                "text": f"summary number {i} of a topic."}) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1"}
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "qarla_spark.cli", "run", str(path),
                           "--out", str(out), "--conf", "spark.driver.memory=460m"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "task 'big', topic 't0': 200 summaries × 59 metrics" in proc.stderr
    assert "Raise spark.driver.memory (--conf spark.driver.memory=...)" in proc.stderr
    assert "spark session" not in proc.stderr
    assert not out.exists()


@pytest.mark.spark
def test_inputs_spark_reads_are_checked_by_their_largest_topic(spark, tmp_path, monkeypatch):
    """Inputs Spark reads (``--driver-read-mb 0`` here): the validation
    report carries each task's largest topic, the same in both readers;
    the run stops on it after validation, before the similarities (a
    budget made tiny, so that 9 summaries are over it), nothing written."""
    from helpers import make_testbed, write_jsonl
    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig
    from qarla_spark.io import check_in_driver, load_testbed, parse_input_arg
    records = make_testbed(n_topics=2, n_models=4, n_peers=3)
    records += [dict(r, topic="t9") for r in make_testbed(n_topics=1, n_models=5, n_peers=4)]
    path = write_jsonl(tmp_path / "in.jsonl", records)
    specs = [parse_input_arg(str(path))]
    _, report = load_testbed(spark, specs)
    (task,) = report.tasks
    assert (task.largest_topic, task.summaries_max) == ("t9", 9)
    assert check_in_driver(specs).report.tasks == report.tasks
    tiny = Budget(limits.JVM_RESERVED + 9 ** 2 * 59 * 8 * limits.JVM_PER_CUBE_BYTE - 1,
                  "spark.driver.memory")
    monkeypatch.setattr(limits, "_budget_or_none", lambda settings: tiny)
    out = tmp_path / "run"
    with pytest.raises(ConfigError, match="topic 't9'.*9 summaries"):
        pipeline.run(spark, RunConfig(inputs=(str(path),), out=str(out), driver_read_mb=0))
    assert not out.exists()


@pytest.mark.parametrize("memory", ["lots", "1m", "400m"])
def test_settings_spark_refuses_are_left_to_spark(memory):
    """A heap Spark cannot read or start with (below 1.5 × its reserved
    300 MB) is not a limit of ours: Spark's own reason is said as it fails
    to start (tests/test_spark_start.py)."""
    assert limits._budget_or_none({"spark.master": "local[2]",
                                   "spark.driver.memory": memory}) is None
    assert limits._budget_or_none({"spark.master": "local[2]",
                                   "spark.driver.memory": "460m"}) is not None
