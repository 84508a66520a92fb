"""The metric clustering of the QARLA stage on Spark (SPEC §6): the peers'
QUEEN samples as bit slices on the executors, the agglomeration in one
Spark task (:mod:`qarla_spark.measures.clustering` holds the pure parts).
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from qarla_spark.measures.clustering import Cluster, agglomerate, bit_slices, slice_counts
from qarla_spark.measures.masks import peer_sample_bits
from qarla_spark.spark import cache
from qarla_spark.spark.cube import TopicCube, topic_of


class SampleMasks:
    """The pass bits of the peers' QUEEN samples (full model sets) of every
    topic of one task, cached on the executors as bit slices (one packed row
    per metric; SummEval: 1,936,000 samples × 59 metrics = 14 MB), built in
    parallel per partition of the topic cube: a persisted DataFrame of one
    row per partition (the slices' bytes and the number of samples).

    :meth:`agglomerate` clusters the metrics in one Spark task that reads
    the task's slices: every merge costs one AND and one popcount per
    candidate, so there is no Spark job per merge (SummEval: 49 merges).
    That task holds n_metrics × samples / 8 bytes (14 MB on SummEval, 140 MB
    for 1,000 such topics); above ``local_limit`` bytes each merge is one
    Spark job over the partitions instead (:meth:`pass_count`), with the
    same result. The driver only receives counts and clusters.

    DataFrames, not RDDs: Spark's Python workers are reused between the
    jobs of a session, except for jobs over a cached RDD (each forks a new
    worker, which imports numpy and the kernels again)."""

    #: largest bit slices (bytes) the agglomeration reads in one task
    LOCAL_LIMIT = 512 * 2 ** 20
    SCHEMA = "slices binary, n_samples long"

    def __init__(self, cube: TopicCube, task: str, triples: str = "standard"):
        import pandas as pd
        from pyspark.sql import functions as F

        n_metrics = self.n_metrics = cube.n_metrics

        def to_block(batches):
            found = []
            for pdf in batches:
                for row in pdf.to_dict("records"):
                    topic = topic_of(row)
                    found.append(peer_sample_bits(topic.roles, topic.values, triples))
            bits = (np.concatenate(found) if found
                    else np.zeros((0, n_metrics), dtype=bool))
            slices = bit_slices(bits)
            yield pd.DataFrame({"slices": [slices.tobytes()], "n_samples": [len(bits)]})

        self.blocks = cache.persist(
            cube.frame.filter(F.col("task") == task)
            .select("task", "topic", "names", "roles", "n_metrics", "values")
            .mapInPandas(to_block, self.SCHEMA))
        self.n_samples = int(self.blocks.agg(F.sum("n_samples")).collect()[0][0] or 0)

    @property
    def slice_bytes(self) -> int:
        """Bytes of the task's bit slices (what :meth:`agglomerate` holds)."""
        return self.n_metrics * 8 * -(-self.n_samples // 64)


    def pass_count(self, sets: Sequence[Cluster]) -> List[int]:
        """For each set of metric indices, the samples passing all of its
        metrics (one Spark job; integer sums of one row per partition)."""
        import pandas as pd
        if not sets or not self.n_samples:
            return [0] * len(sets)
        sets = [frozenset(s) for s in sets]
        n_metrics = self.n_metrics

        def slices_of(pdf):
            return _slices(pdf, n_metrics)

        def count(batches):
            total = np.zeros(len(sets), dtype=np.int64)
            for pdf in batches:
                for slices in slices_of(pdf):
                    total += slice_counts(slices, sets)
            yield pd.DataFrame({"counts": [total.tobytes()]})

        total = np.zeros(len(sets), dtype=np.int64)
        for row in self.blocks.mapInPandas(count, "counts binary").collect():
            total += np.frombuffer(row["counts"], dtype=np.int64)
        return [int(c) for c in total]

    def agglomerate(self, k: int, names: Optional[Sequence[str]] = None,
                    local_limit: Optional[int] = None) -> List[Cluster]:
        """:func:`~qarla_spark.measures.clustering.agglomerate` over the
        task's samples: in one Spark task when the slices fit
        ``local_limit`` (default :data:`LOCAL_LIMIT`), else with one Spark
        job per merge."""
        import pandas as pd
        limit = self.LOCAL_LIMIT if local_limit is None else local_limit
        n_metrics, n = self.n_metrics, self.n_samples
        if not n or self.slice_bytes > limit:
            return agglomerate(n_metrics, k, self.pass_count, names)
        names = None if names is None else list(names)

        def slices_of(pdf):
            return _slices(pdf, n_metrics)

        def run(batches):
            slices = np.concatenate([s for pdf in batches for s in slices_of(pdf)], axis=1)

            def count(sets):
                return list(slice_counts(slices, [frozenset(s) for s in sets]))
            clusters = agglomerate(n_metrics, k, count, names)
            yield pd.DataFrame({"cluster": [sorted(int(i) for i in c) for c in clusters]})

        rows = self.blocks.coalesce(1).mapInPandas(run, "cluster array<int>").collect()
        return [frozenset(r["cluster"]) for r in rows]

    def release(self) -> None:
        self.blocks.unpersist()


def _slices(pdf, n_metrics: int) -> List[np.ndarray]:
    """The (metrics × words) bit slices of the blocks of a batch."""
    return [np.frombuffer(b, dtype="<u8").reshape(n_metrics, -1)
            for b, size in zip(pdf["slices"], pdf["n_samples"]) if size]
