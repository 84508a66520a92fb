"""The metric clustering of the QARLA stage on Spark (SPEC §6): the peers'
QUEEN samples as bit slices on the executors, the agglomeration in one
Spark task (:mod:`qarla_spark.measures.clustering` holds the pure parts).
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from qarla_spark.measures.clustering import Cluster, agglomerate, bit_slices, slice_counts
from qarla_spark.measures.masks import n_words, topic_sample_masks
from qarla_spark.spark import cache
from qarla_spark.spark.cube import TopicCube, topic_of


class SampleMasks:
    """The pass bits of the peers' QUEEN samples (full model sets) of every
    topic of one task, cached on the executors as bit slices (one packed row
    per metric; SummEval: 1,936,000 samples × 59 metrics = 14 MB), built in
    parallel per partition of the topic cube.

    :meth:`agglomerate` clusters the metrics in one Spark task that reads
    the task's slices: every merge costs one AND and one popcount per
    candidate, so there is no Spark job per merge (SummEval: 49 merges).
    That task holds n_metrics × samples / 8 bytes (14 MB on SummEval, 140 MB
    for 1,000 such topics); above ``local_limit`` bytes each merge is one
    Spark job over the partitions instead (:meth:`pass_count`), with the
    same result. The driver only receives counts and clusters."""

    #: largest bit slices (bytes) the agglomeration reads in one task
    LOCAL_LIMIT = 512 * 2 ** 20

    def __init__(self, cube: TopicCube, task: str, triples: str = "standard"):
        from pyspark.sql import functions as F

        n_metrics = self.n_metrics = cube.n_metrics
        nw = n_words(n_metrics)

        def to_block(rows):
            found = []
            for row in rows:
                topic = topic_of(row.asDict())
                e, _, _, _, words = topic_sample_masks(topic.roles, topic.values, triples)
                found.append(words[topic.roles[e] == "peer"])
            words = np.concatenate(found) if found else np.zeros((0, nw), dtype=np.int64)
            yield bit_slices(words, n_metrics), len(words)

        self.blocks = cache.persist(
            cube.frame.filter(F.col("task") == task)
            .select("task", "topic", "names", "roles", "n_metrics", "values")
            .rdd.mapPartitions(to_block))
        self.n_samples = int(self.blocks.map(lambda b: b[1]).sum())

    @property
    def slice_bytes(self) -> int:
        """Bytes of the task's bit slices (what :meth:`agglomerate` holds)."""
        return self.n_metrics * 8 * -(-self.n_samples // 64)

    def pass_count(self, sets: Sequence[Cluster]) -> List[int]:
        """For each set of metric indices, the samples passing all of its
        metrics (one Spark job; integer sums)."""
        if not sets or not self.n_samples:
            return [0] * len(sets)
        sets = [frozenset(s) for s in sets]
        total = self.blocks.map(lambda b: slice_counts(b[0], sets)).reduce(lambda a, b: a + b)
        return [int(c) for c in total]

    def agglomerate(self, k: int, names: Optional[Sequence[str]] = None,
                    local_limit: Optional[int] = None) -> List[Cluster]:
        """:func:`~qarla_spark.measures.clustering.agglomerate` over the
        task's samples: in one Spark task when the slices fit
        ``local_limit`` (default :data:`LOCAL_LIMIT`), else with one Spark
        job per merge."""
        limit = self.LOCAL_LIMIT if local_limit is None else local_limit
        n_metrics, n = self.n_metrics, self.n_samples
        if not n or self.slice_bytes > limit:
            return agglomerate(n_metrics, k, self.pass_count, names)
        names = None if names is None else list(names)

        def run(blocks):
            blocks = [b for b, size in blocks if size]
            slices = np.concatenate(blocks, axis=1)

            def count(sets):
                return list(slice_counts(slices, [frozenset(s) for s in sets]))
            yield [sorted(c) for c in agglomerate(n_metrics, k, count, names)]

        (clusters,) = self.blocks.coalesce(1).mapPartitions(run).collect()
        return [frozenset(c) for c in clusters]

    def release(self) -> None:
        self.blocks.unpersist()
