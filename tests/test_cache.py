"""Cached frames are released when a scope (and so a run) ends."""

from __future__ import annotations

import pytest

from qarla_spark.spark import cache

pytestmark = pytest.mark.spark


def cached_in_session(spark) -> int:
    """DataFrames registered in the session's cache manager plus RDDs
    persisted in its context (cached DataFrames, once computed, are both)."""
    manager = spark._jsparkSession.sharedState().cacheManager()
    return (0 if manager.isEmpty() else 1) + spark.sparkContext._jsc.getPersistentRDDs().size()


def test_scope_releases_dataframes_and_rdds(spark):
    spark.catalog.clearCache()
    with cache.scope() as kept:
        df = cache.persist(spark.range(10))
        rdd = cache.persist(spark.sparkContext.parallelize(range(5)))
        assert df.count() == 10 and rdd.count() == 5
        assert df.is_cached and rdd.is_cached
        assert len(kept) == 2
    assert not df.is_cached and not rdd.is_cached
    assert cached_in_session(spark) == 0


def test_nested_scopes_release_their_own_frames(spark):
    with cache.scope():
        outer = cache.persist(spark.range(3))
        with cache.scope():
            inner = cache.persist(spark.range(4))
        assert not inner.is_cached and outer.is_cached
    assert not outer.is_cached


def test_scope_releases_on_error(spark):
    with pytest.raises(RuntimeError):
        with cache.scope():
            df = cache.persist(spark.range(3))
            raise RuntimeError("a stage failed")
    assert not df.is_cached


def test_persist_outside_a_scope_is_left_to_the_caller(spark):
    df = cache.persist(spark.range(3))
    with cache.scope():
        pass
    assert df.is_cached
    df.unpersist()
