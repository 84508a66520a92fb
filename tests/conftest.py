"""Shared fixtures: one local[2] SparkSession for the whole suite, and one
two-task run that several modules read.

Spark tests use small hand-made inputs written to ``tmp_path``; nothing here
reads outside the project (no ../shared).
"""

from __future__ import annotations

import os
from typing import NamedTuple

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# Python workers import functions defined in test modules: put tests/ on
# their path (they inherit the environment of the JVM this process starts).
_TESTS = os.path.dirname(os.path.abspath(__file__))
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (_TESTS, os.environ.get("PYTHONPATH")) if p)


@pytest.fixture(scope="session")
def spark():
    from qarla_spark.spark.session import build_session
    # Every testbed of the suite is small (the largest, the bundled
    # SummEval of the slow tests, has 2,700 summaries): the session gets the
    # JVM options `qarla run` gives a small local input (the profile's
    # smallTestbed options: C1 only; DECISIONS.md "The JVM's flags and class
    # archive"). Measured on the Spark-heavy modules (test_measures,
    # _similarities, _hbr, _qarla_stage, _agreement, _output): 86-102 CPU s
    # against 135-151 with C2 (load 6-7).
    session = build_session(
        "local", master="local[2]", summaries=2700,
        conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "2g",
              "spark.app.name": "qarla_spark-tests"})
    from qarla_spark.spark.warmup import wait_warm
    wait_warm(120)      # its Spark job is not counted by a test's listener
    yield session
    session.stop()


class TwoTaskRun(NamedTuple):
    out: str            # the run's folder
    result: object      # what pipeline.run returned (summary(), info)


@pytest.fixture(scope="session")
def two_task_run(spark, tmp_path_factory) -> TwoTaskRun:
    """A finished run of helpers.two_task_records() (every stage, 4 metrics,
    exact HBR, 300 bootstrap replicates, seed 4), made once per session:
    the report, browser and statistics tests all read it (one run instead
    of one per module)."""
    from helpers import two_task_records, write_jsonl
    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig
    tmp = tmp_path_factory.mktemp("two_task")
    path = write_jsonl(tmp / "in.jsonl", two_task_records())
    out = tmp / "run"
    result = pipeline.run(spark, RunConfig(
        inputs=(str(path),), out=str(out), metrics=("R-1.a", "R-2.a", "Rpre-1.a", "AVLS"),
        clusters=2, jack_orders=2, hbr_exact=True, bootstrap=300, seed=4))
    return TwoTaskRun(str(out), result)


@pytest.fixture(scope="session")
def report_run(two_task_run) -> str:
    """The shared two-task run's folder (tests/test_report*.py)."""
    return two_task_run.out


@pytest.fixture(autouse=True, scope="module")
def _release_cached_frames():
    """Tests also call stage functions directly (outside a run's cache
    scope); what a module cached is dropped after it, so the shared
    session's heap does not fill up over the suite."""
    yield
    from pyspark.sql import SparkSession
    session = SparkSession.getActiveSession()
    if session is not None:
        session.catalog.clearCache()
