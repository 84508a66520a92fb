"""Per-topic work spreads over the cores, whatever adaptive execution does."""

from __future__ import annotations

import pandas as pd
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from qarla_spark.spark.partitioning import (apply_per_topic, by_topic, conf_restored,
                                            topic_partitions)

pytestmark = pytest.mark.spark

OUT = StructType([StructField("task", StringType()), StructField("topic", StringType()),
                  StructField("partition", LongType()), StructField("rows", LongType())])


def where_it_ran(pdf: pd.DataFrame) -> pd.DataFrame:
    from pyspark import TaskContext
    return pd.DataFrame({"task": [pdf["task"].iloc[0]], "topic": [pdf["topic"].iloc[0]],
                         "partition": [TaskContext.get().partitionId()], "rows": [len(pdf)]})


@pytest.fixture
def coalescing(spark):
    """Adaptive execution set to merge small partitions as eagerly as it can."""
    keys = {"spark.sql.adaptive.enabled": "true",
            "spark.sql.adaptive.coalescePartitions.enabled": "true",
            "spark.sql.adaptive.advisoryPartitionSizeInBytes": "64MB",
            "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
            "spark.sql.shuffle.partitions": "8"}
    with conf_restored(spark, list(keys)):
        for k, v in keys.items():
            spark.conf.set(k, v)
        yield


def topics_frame(spark, n_topics=8):
    rows = [("t", f"topic{i}", f"s{j}") for i in range(n_topics) for j in range(3)]
    return spark.createDataFrame(rows, "task string, topic string, summarizer string")


def test_plain_group_apply_is_coalesced_into_one_task(spark, coalescing):
    """The failure this module exists for (it shows the check below can fail)."""
    df = topics_frame(spark)
    ran = df.groupBy("task", "topic").applyInPandas(where_it_ran, OUT).collect()
    assert len({r.partition for r in ran}) == 1


def test_apply_per_topic_spreads_over_partitions(spark, coalescing):
    df = topics_frame(spark)
    ran = apply_per_topic(df, where_it_ran, OUT, n_partitions=4).collect()
    assert sorted(r.topic for r in ran) == [f"topic{i}" for i in range(8)]
    assert all(r.rows == 3 for r in ran)
    assert len({r.partition for r in ran}) >= 3


def test_by_topic_keeps_each_topic_in_one_partition(spark):
    from pyspark.sql import functions as F
    df = by_topic(topics_frame(spark), n_partitions=3)
    assert df.rdd.getNumPartitions() == 3
    per_topic = (df.withColumn("pid", F.spark_partition_id())
                 .groupBy("topic").agg(F.countDistinct("pid").alias("n")))
    assert {r.n for r in per_topic.collect()} == {1}


def test_default_partitions_is_two_per_core(spark):
    assert topic_partitions(spark) == 2 * spark.sparkContext.defaultParallelism
    assert topic_partitions(spark, 5) == 5
    with pytest.raises(ValueError):
        topic_partitions(spark, 0)


def test_a_run_of_many_topics_gets_more_partitions_and_gives_them_back(spark):
    """Issue 26: a partition holds at most MAX_TOPICS_PER_PARTITION topics
    unless the partitions are given (100 tasks x 100 topics in 4 partitions
    made a Python worker of 9.9 GB); the run's settings end with the run."""
    from qarla_spark.spark.partitioning import (MAX_TOPICS_PER_PARTITION, PARTITIONS_CONF,
                                                SHUFFLE_FOLLOWS_CONF, partitions_for,
                                                run_scope, size_for_topics)
    cores = topic_partitions(spark)
    assert partitions_for(spark, 10) == cores
    assert partitions_for(spark, cores * MAX_TOPICS_PER_PARTITION) == cores
    assert partitions_for(spark, 40 * MAX_TOPICS_PER_PARTITION + 1) == 41
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")
    with conf_restored(spark, [SHUFFLE_FOLLOWS_CONF]):
        spark.conf.set(SHUFFLE_FOLLOWS_CONF, "true")
        with run_scope(spark):
            assert size_for_topics(spark, 10_000) == 40
            assert topic_partitions(spark) == 40
            assert spark.conf.get("spark.sql.shuffle.partitions") == "40"
        assert spark.conf.get(PARTITIONS_CONF, None) is None
        assert spark.conf.get("spark.sql.shuffle.partitions") == shuffle
        with run_scope(spark):                   # given by the user: kept
            spark.conf.set(PARTITIONS_CONF, "3")
            assert size_for_topics(spark, 10_000) == 3
        assert spark.conf.get(PARTITIONS_CONF, None) is None
