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


def test_preload_loads_the_cached_overloads_without_compiling():
    """A fresh interpreter loads a kernel's cached overload (the one this
    process compiled or loaded by calling it) before any call, compiling
    nothing; a second preload finds nothing left to load."""
    import subprocess
    import sys

    from qarla_spark.measures import resampling as rs
    rs.poisson_weights(1, "warm-test", ("a", "b"), 3)     # streams' kernel, cached
    code = ("from qarla_spark import compiled\n"
            "from qarla_spark.measures import streams\n"
            "n = compiled.preload(['qarla_spark.measures.streams'])\n"
            "k = streams._philox\n"
            "print(n, len(k.overloads), sum(k._cache_misses.values()),"
            " compiled.preload(['qarla_spark.measures.streams']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    n, overloads, misses, again = map(int, done.stdout.split())
    assert n >= 1 and overloads >= 1
    assert misses == 0 and again == 0
