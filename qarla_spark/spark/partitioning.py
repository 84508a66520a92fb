"""Per-topic work spread over the cores.

Every measure is computed inside a topic, so per-topic work is the unit of
parallelism. Adaptive query execution merges small shuffle partitions; when
the rows are few but the work per row is heavy (text metrics), that puts all
topics in one task on one core (measured with ``groupBy().applyInPandas``).
Repartitioning with an explicit number of partitions is never coalesced, and
a ``groupBy`` on the same keys reuses that partitioning (no second shuffle).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

TOPIC_KEYS = ("task", "topic")
#: Spark setting (``--conf spark.qarla.topicPartitions=N``): the number of
#: partitions per-topic work is spread over, instead of the default
PARTITIONS_CONF = "spark.qarla.topicPartitions"


def topic_partitions(spark, n_partitions: Optional[int] = None) -> int:
    """``n_partitions`` if given, else the Spark setting
    :data:`PARTITIONS_CONF`, else two partitions per core Spark has
    (balances uneven topics). Results do not depend on it (tested)."""
    if n_partitions is None:
        configured = spark.conf.get(PARTITIONS_CONF, None)
        if configured is None:
            return max(2, 2 * spark.sparkContext.defaultParallelism)
        try:
            n_partitions = int(configured)
        except ValueError:
            n_partitions = 0
        if n_partitions < 1:
            from qarla_spark.errors import ConfigError
            raise ConfigError(f"{PARTITIONS_CONF} must be a positive integer, found "
                              f"{configured!r}")
    if n_partitions < 1:
        raise ValueError("n_partitions must be at least 1")
    return n_partitions


def by_topic(df, n_partitions: Optional[int] = None, keys: Sequence[str] = TOPIC_KEYS):
    """``df`` hash-partitioned by (task, topic) into a fixed number of
    partitions (usable with ``df.transform``)."""
    return df.repartition(topic_partitions(df.sparkSession, n_partitions), *keys)


def apply_per_topic(df, func: Callable, schema, n_partitions: Optional[int] = None,
                    keys: Sequence[str] = TOPIC_KEYS):
    """``func(pandas.DataFrame) -> pandas.DataFrame`` once per topic, topics
    spread over ``n_partitions`` tasks whatever adaptive execution thinks."""
    return by_topic(df, n_partitions, keys).groupBy(*keys).applyInPandas(func, schema)
