"""Metric clustering and the best metric set (SPEC §6, paper 000 §3.2-3.3).

H_X(e, m, m', m'') ≡ ∀x∈X: x(e, m) ≥ x(m', m''), over the QUEEN samples of
the peers with the full model set. sim(X, X') = P[H_X ↔ H_X'].

Since H_C ∧ H_C' = H_{C∪C'}, sim(C, C') = 1 − P(C) − P(C') + 2·P(C ∪ C'),
where P(S) is the share of samples whose mask contains S. The clustering
therefore needs only pass rates of metric sets, which the executors count on
the cached sample masks (:class:`SampleMasks`): one Spark job for all pairs
of metrics, then one per merge for the new cluster against the others.

Agglomerative rule: start with singletons; repeatedly merge the two clusters
with the highest sim (ties: the pair that comes first when each cluster is
named by its sorted metric indices); stop at k clusters. Each cluster's
representative is its metric with the highest KING (ties: name order). The
best set is the non-empty subset of representatives with the highest KING
(ties: fewer metrics, then name order of the metric-set name).
"""

from __future__ import annotations

from itertools import combinations
from typing import Callable, Dict, FrozenSet, List, Mapping, Sequence, Tuple

import numpy as np

Cluster = FrozenSet[int]


def agglomerate(n_metrics: int, k: int,
                pass_rate: Callable[[Sequence[Cluster]], Sequence[float]]) -> List[Cluster]:
    """Clusters of metric indices (pure: ``pass_rate`` is the oracle P(S)
    for a batch of sets)."""
    if n_metrics < 1:
        return []
    k = max(1, min(k, n_metrics))
    clusters: List[Cluster] = [frozenset([i]) for i in range(n_metrics)]
    rate: Dict[Cluster, float] = {}

    def ask(sets):
        todo = [s for s in dict.fromkeys(sets) if s not in rate]
        if todo:
            for s, r in zip(todo, pass_rate(todo)):
                rate[s] = float(r)

    ask(clusters + [a | b for a, b in combinations(clusters, 2)])

    def sim(a: Cluster, b: Cluster) -> float:
        return 1.0 - rate[a] - rate[b] + 2.0 * rate[a | b]

    def key(a: Cluster) -> Tuple[int, ...]:
        return tuple(sorted(a))

    while len(clusters) > k:
        best = None
        for a, b in combinations(clusters, 2):
            pair = (a, b) if key(a) < key(b) else (b, a)
            candidate = (-sim(a, b), key(pair[0]), key(pair[1]))
            if best is None or candidate < best[0]:
                best = (candidate, pair)
        a, b = best[1]
        merged = a | b
        clusters = [c for c in clusters if c not in (a, b)] + [merged]
        ask([merged | c for c in clusters if c is not merged])
    return sorted(clusters, key=key)


def representatives(clusters: Sequence[Cluster], metrics: Sequence[str],
                    king: Mapping[str, float]) -> List[str]:
    """Per cluster, the metric with the highest KING (ties: name order)."""
    reps = []
    for cluster in clusters:
        names = sorted(metrics[i] for i in cluster)
        reps.append(max(names, key=lambda n: (king.get(n, float("-inf")), [-ord(c) for c in n])))
    return reps


def best_set(king: Mapping[str, float]) -> str:
    """The metric set (name) with the highest KING; ties: fewer metrics,
    then name order."""
    return min(king, key=lambda name: (-king[name], name.count(",") + 1, name))


def subsets(names: Sequence[str]) -> List[List[str]]:
    """Every non-empty subset (2^k − 1 of them)."""
    return [list(c) for r in range(1, len(names) + 1) for c in combinations(sorted(names), r)]


# ---------------------------------------------------------------------------
# Spark: pass rates counted on the executors
# ---------------------------------------------------------------------------

class SampleMasks:
    """The pass-masks of the peers' QUEEN samples (full model sets) of every
    topic of one task, cached on the executors as numpy blocks; the driver
    only receives counts."""

    def __init__(self, vecs, summaries, task: str, n_metrics: int, triples: str = "standard",
                 n_partitions=None):
        import pandas as pd
        from pyspark.sql import functions as F

        from qarla_spark.measures.masks import (n_words, topic_models, topic_sample_masks,
                                                topic_values)
        from qarla_spark.spark.partitioning import apply_per_topic

        self.n_metrics = n_metrics
        nw = n_words(n_metrics)
        summaries = summaries.filter(F.col("task") == task)
        roles = summaries.select("task", "topic", F.col("summarizer").alias("s"), "role")
        topics = topic_models(summaries).select("task", "topic")
        rows = (vecs.filter(F.col("task") == task).join(topics, ["task", "topic"])
                .join(roles, ["task", "topic", "s"]))
        schema = ", ".join(f"w{w} long" for w in range(nw))

        def kernel(pdf):
            _, roles_arr, values = topic_values(pdf, n_metrics)
            e, _, _, _, words = topic_sample_masks(roles_arr, values, triples)
            peer = roles_arr[e] == "peer"
            return pd.DataFrame({f"w{w}": words[peer, w] for w in range(nw)})

        masks = apply_per_topic(rows.select("task", "topic", "s", "r", "v", "role"), kernel,
                                schema, n_partitions)

        def to_block(rows_iter):
            arr = np.array([tuple(r) for r in rows_iter], dtype=np.int64).reshape(-1, nw)
            yield arr

        self.blocks = masks.rdd.mapPartitions(to_block).cache()
        self.n_samples = int(self.blocks.map(len).sum())

    def pass_rate(self, sets: Sequence[Cluster]) -> List[float]:
        """P(S) for each set of metric indices (one Spark job)."""
        from qarla_spark.measures.masks import set_words
        if not sets or not self.n_samples:
            return [0.0] * len(sets)
        words = np.array([set_words(s, self.n_metrics) for s in sets], dtype=np.int64)

        def count(block):
            out = np.zeros(len(words), dtype=np.int64)
            for lo in range(0, len(words), 256):
                chunk = words[lo:lo + 256]
                ok = np.ones((len(block), len(chunk)), dtype=bool)
                for w in range(chunk.shape[1]):
                    x = chunk[:, w][None, :]
                    ok &= (block[:, w][:, None] & x) == x
                out[lo:lo + 256] = ok.sum(axis=0)
            return out

        total = self.blocks.map(count).reduce(lambda a, b: a + b)
        return list(total / self.n_samples)

    def release(self) -> None:
        self.blocks.unpersist()
