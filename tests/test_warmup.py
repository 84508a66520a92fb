"""The Python workers are started while the session starts
(qarla_spark.spark.warmup)."""

import pytest

from qarla_spark.spark import warmup


def test_a_worker_warms_every_kernel_family():
    assert warmup.warm_worker() == 1


def test_a_failing_warm_up_is_ignored(monkeypatch):
    def broken():
        raise RuntimeError("no kernels here")
    monkeypatch.setattr(warmup, "warm_worker", broken)
    (frame,) = list(warmup._warm(iter([None])))
    assert list(frame["warm"]) == [0]


@pytest.mark.spark
def test_once_per_application_with_one_task_per_core(spark):
    """The session's warm-up ran (the fixture waited for it) and is not
    started again; its job is named for the event log's profile."""
    from qarla_spark.names import STAGE_PROPERTY, WARM_STAGE
    assert spark.sparkContext.applicationId in warmup._WARMED
    assert warmup.warm_workers(spark) is None
    tracker = spark.sparkContext.statusTracker()
    assert not tracker.getActiveJobsIds()
    # the property the profile reads is the one the warm-up sets
    assert STAGE_PROPERTY == "qarla.stage" and WARM_STAGE == "starting workers"


@pytest.mark.spark
def test_only_commands_that_compute_start_the_workers(spark, monkeypatch):
    """`qarla validate` (and `qarla metrics` with remote plugins) build the
    session with warm=False: no Spark job of theirs starts the workers."""
    from pyspark.sql import SparkSession

    from qarla_spark.spark.session import build_session
    calls = []
    monkeypatch.setattr(warmup, "warm_workers", lambda s: calls.append(s))
    # as a command's first session (an active one is returned as it is)
    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))
    conf = {"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "2g",
            "spark.app.name": "qarla_spark-tests"}
    build_session("local", master="local[2]", conf=conf, warm=False)
    assert calls == []
    build_session("local", master="local[2]", conf=conf)
    assert len(calls) == 1
