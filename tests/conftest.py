"""Shared fixtures: one local[2] SparkSession for the whole suite.

Spark tests use small hand-made inputs written to ``tmp_path``; nothing here
reads outside the project (no ../shared).
"""

from __future__ import annotations

import os
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
    session = build_session(
        "local", master="local[2]",
        conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "2g",
              "spark.app.name": "qarla_spark-tests"})
    yield session
    session.stop()


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
