"""Shared fixtures: one local[2] SparkSession for the whole suite.

Spark tests use small hand-made inputs written to ``tmp_path``; nothing here
reads outside the project (no ../shared).
"""

from __future__ import annotations

import os
import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture(scope="session")
def spark():
    from qarla_spark.spark.session import build_session
    session = build_session(
        "local", master="local[2]",
        conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "2g",
              "spark.app.name": "qarla_spark-tests"})
    yield session
    session.stop()
