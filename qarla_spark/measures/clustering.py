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
named by its sorted metric names, so the result does not depend on the order
of the metric list); stop at k clusters. Each cluster's
representative is its metric with the highest KING (ties: name order). The
best set is the non-empty subset of representatives with the highest KING
(ties: fewer metrics, then name order of the metric-set name).
"""

from __future__ import annotations

from itertools import combinations
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.spark import cache

Cluster = FrozenSet[int]


def agglomerate(n_metrics: int, k: int,
                pass_rate: Callable[[Sequence[Cluster]], Sequence[float]],
                names: Optional[Sequence[str]] = None) -> List[Cluster]:
    """Clusters of metric indices (pure: ``pass_rate`` is the oracle P(S)
    for a batch of sets). Ties are broken by ``names`` (the metric names,
    so that the clusters do not depend on the order of the metric list;
    default: the indices). One batch of ``pass_rate`` per merge (speculating
    on the next merge does not pay: on SummEval's 59 metrics every merge
    but one involves the cluster just merged)."""
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

    label = list(names) if names is not None else list(range(n_metrics))

    def key(a: Cluster) -> tuple:
        return tuple(sorted(label[i] for i in a))

    def ranked(pairs):
        out = []
        for a, b in pairs:
            pair = (a, b) if key(a) < key(b) else (b, a)
            out.append(((-sim(a, b), key(pair[0]), key(pair[1])), pair))
        return sorted(out, key=lambda t: t[0])

    while len(clusters) > k:
        a, b = ranked(combinations(clusters, 2))[0][1]
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
    topic of one task, cached on the executors as numpy blocks of distinct
    masks with their counts (SummEval: 1,936,000 samples, 721,097 distinct
    masks over 59 metrics); the driver only receives counts."""

    def __init__(self, cube, task: str, n_metrics: int, triples: str = "standard"):
        from pyspark.sql import functions as F

        from qarla_spark.measures.masks import cube_arrays, n_words, topic_sample_masks

        self.n_metrics = n_metrics
        nw = n_words(n_metrics)

        def to_block(rows):
            found = []
            for row in rows:
                _, roles, values = cube_arrays(row.asDict())
                e, _, _, _, words = topic_sample_masks(roles, values, triples)
                found.append(words[roles[e] == "peer"])
            words = np.concatenate(found) if found else np.zeros((0, nw), dtype=np.int64)
            uniq, counts = np.unique(words, axis=0, return_counts=True)
            yield uniq, counts.astype(np.int64)

        self.blocks = cache.persist(
            cube.filter(F.col("task") == task).select("names", "roles", "n_metrics", "values")
            .rdd.mapPartitions(to_block))
        self.n_samples = int(self.blocks.map(lambda b: int(b[1].sum())).sum())

    def pass_rate(self, sets: Sequence[Cluster]) -> List[float]:
        """P(S) for each set of metric indices (one Spark job)."""
        from qarla_spark.measures.masks import WORD_BITS, set_words
        if not sets or not self.n_samples:
            return [0.0] * len(sets)
        words = np.array([set_words(s, self.n_metrics) for s in sets], dtype=np.int64)
        pairs_only = all(len(s) <= 2 for s in sets)
        chunks = _chunks(sets)
        n_metrics = self.n_metrics
        members = [sorted(s) for s in sets]

        def count(block):
            masks, weights = block
            if pairs_only and len(masks):
                # singles and pairs at once: a weighted Gram matrix of the bits
                bits = np.stack([(masks[:, i // WORD_BITS] >> (i % WORD_BITS)) & 1
                                 for i in range(n_metrics)], axis=1).astype(np.float64)
                gram = bits.T @ (bits * weights[:, None])
                return np.array([gram[m[0], m[-1]] for m in members], dtype=np.float64)
            # the sets of a chunk share a core (their intersection: the merged
            # cluster during the agglomeration): only rows passing it count
            out = np.zeros(len(words), dtype=np.float64)
            for lo, hi in chunks:
                chunk = words[lo:hi]
                core = np.bitwise_and.reduce(chunk, axis=0)
                keep = np.all((masks & core[None, :]) == core[None, :], axis=1)
                sub, w_sub = masks[keep], weights[keep].astype(np.float64)
                ok = np.ones((len(sub), len(chunk)), dtype=bool)
                for w in range(chunk.shape[1]):
                    x = chunk[:, w][None, :]
                    ok &= (sub[:, w][:, None] & x) == x
                out[lo:hi] = w_sub @ ok
            return out

        total = self.blocks.map(count).reduce(lambda a, b: a + b)
        return list(total / self.n_samples)

    def release(self) -> None:
        self.blocks.unpersist()


def _chunks(sets: Sequence[Cluster], size: int = 256) -> List[Tuple[int, int]]:
    """Consecutive runs of ``sets`` (at most ``size``) whose common core
    keeps at least half of the first set's metrics."""
    out = []
    lo = 0
    while lo < len(sets):
        core = set(sets[lo])
        hi = lo + 1
        while hi < len(sets) and hi - lo < size:
            shared = core & sets[hi]
            if 2 * len(shared) < len(sets[lo]):
                break
            core = shared
            hi += 1
        out.append((lo, hi))
        lo = hi
    return out
