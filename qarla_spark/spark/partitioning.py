"""Per-topic work spread over the cores.

Every measure is computed inside a topic, so per-topic work is the unit of
parallelism. Adaptive query execution merges small shuffle partitions; when
the rows are few but the work per row is heavy (text metrics), that puts all
topics in one task on one core (measured with ``groupBy().applyInPandas``).
Repartitioning with an explicit number of partitions is never coalesced, and
a ``groupBy`` on the same keys reuses that partitioning (no second shuffle).
"""

from __future__ import annotations

import contextlib
import math
from typing import Callable, Iterator, Optional, Sequence

TOPIC_KEYS = ("task", "topic")
#: Spark setting (``--conf spark.qarla.topicPartitions=N``): the number of
#: partitions per-topic work is spread over, instead of the default
PARTITIONS_CONF = "spark.qarla.topicPartitions"
#: set (to "true") by qarla's session when it made the shuffle partitions
#: follow the cores, so that a run may size them with its topics too
SHUFFLE_FOLLOWS_CONF = "spark.qarla.shufflePartitionsFollowTopics"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
#: the most topics a partition of per-topic work holds unless the
#: partitions are given: a Python worker holds its partition's topics and
#: their results at once (measured: about 5 MB per topic of SummEval's
#: shape in the QARLA round; 100 tasks x 100 topics in 4 partitions made a
#: worker of 9.9 GB, killed for lack of memory)
MAX_TOPICS_PER_PARTITION = 250


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


def partitions_for(spark, n_topics: int) -> int:
    """Partitions of per-topic work for a run of ``n_topics`` topics: two
    per core, and more when that would put more than
    :data:`MAX_TOPICS_PER_PARTITION` topics in one."""
    return max(topic_partitions(spark), math.ceil(n_topics / MAX_TOPICS_PER_PARTITION))


@contextlib.contextmanager
def conf_restored(spark, keys: Sequence[str]) -> Iterator[None]:
    """The session's settings ``keys`` as they were before the block, again
    after it (unset where they were unset)."""
    before = {k: spark.conf.get(k, None) for k in keys}
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def run_scope(spark):
    """A run's partition settings (:func:`size_for_topics`) are undone when
    it ends, so that one session can run many evaluations."""
    return conf_restored(spark, (PARTITIONS_CONF, SHUFFLE_PARTITIONS))


def size_for_topics(spark, n_topics: int) -> int:
    """Unless the partitions of per-topic work are given
    (:data:`PARTITIONS_CONF`), size them for ``n_topics`` topics
    (:func:`partitions_for`), and the shuffle partitions with them when
    qarla's session set those; returns the partitions."""
    if spark.conf.get(PARTITIONS_CONF, None) is not None:
        return topic_partitions(spark)
    n = partitions_for(spark, n_topics)
    if n != topic_partitions(spark):
        spark.conf.set(PARTITIONS_CONF, str(n))
        if spark.conf.get(SHUFFLE_FOLLOWS_CONF, "false") == "true":
            spark.conf.set(SHUFFLE_PARTITIONS, str(n))
    return n
