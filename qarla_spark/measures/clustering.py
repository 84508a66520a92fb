"""Metric clustering and the best metric set (SPEC §6, paper 000 §3.2-3.3).

H_X(e, m, m', m'') ≡ ∀x∈X: x(e, m) ≥ x(m', m''), over the QUEEN samples of
the peers with the full model set. sim(X, X') = P[H_X ↔ H_X'].

Since H_C ∧ H_C' = H_{C∪C'}, sim(C, C') = 1 − P(C) − P(C') + 2·P(C ∪ C'),
where P(S) is the share of samples whose mask contains S. The clustering
therefore needs only pass rates of metric sets: popcounts of ANDs of the
samples' bit slices (one packed row of pass bits per metric), built on the
executors and read by one Spark task that runs the whole agglomeration
(:class:`SampleMasks`).

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
# pass rates from bit slices (pure numpy)
# ---------------------------------------------------------------------------

_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def popcount(words: np.ndarray) -> int:
    """Number of set bits of an integer array."""
    words = np.ascontiguousarray(words)
    if hasattr(np, "bitwise_count"):          # numpy >= 2.0
        return int(np.bitwise_count(words).sum())
    return int(_POP8[words.view(np.uint8)].sum())


def bit_slices(words: np.ndarray, n_metrics: int) -> np.ndarray:
    """Mask words (samples × mask words, 63 bits a word) → bit slices:
    row i packs bit i of every sample (samples / 64 uint64 words, little
    endian, zero-padded; a padding bit is 0 in every row, so no set ever
    counts it)."""
    from qarla_spark.measures.masks import packed_u64, unpack
    return packed_u64(unpack(words, n_metrics).T)


def slice_counts(slices: np.ndarray, sets: Sequence[Cluster]) -> np.ndarray:
    """For each set S of metric indices, the number of samples passing every
    metric of S: popcount of the AND of S's bit slices. Sets are taken in
    runs that share a core (:func:`_chunks`; during the agglomeration, the
    cluster just merged): the core's AND is computed once per run."""
    out = np.zeros(len(sets), dtype=np.int64)
    if not len(slices) or not slices.shape[1]:
        return out
    for lo, hi in _chunks(sets):
        core = frozenset.intersection(*[frozenset(s) for s in sets[lo:hi]])
        base = np.bitwise_and.reduce(slices[sorted(core)], axis=0) if core else None
        for j in range(lo, hi):
            acc = base
            for i in sorted(frozenset(sets[j]) - core):
                acc = slices[i] if acc is None else acc & slices[i]
            out[j] = 0 if acc is None else popcount(acc)     # the empty set: 0
    return out


# ---------------------------------------------------------------------------
# Spark: the peers' samples as bit slices on the executors
# ---------------------------------------------------------------------------

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
    Spark job over the partitions instead (:meth:`pass_rate`), with the same
    result. The driver only receives counts and clusters."""

    #: largest bit slices (bytes) the agglomeration reads in one task
    LOCAL_LIMIT = 512 * 2 ** 20

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
            yield bit_slices(words, n_metrics), len(words)

        self.blocks = cache.persist(
            cube.filter(F.col("task") == task).select("names", "roles", "n_metrics", "values")
            .rdd.mapPartitions(to_block))
        self.n_samples = int(self.blocks.map(lambda b: b[1]).sum())

    @property
    def slice_bytes(self) -> int:
        """Bytes of the task's bit slices (what :meth:`agglomerate` holds)."""
        return self.n_metrics * 8 * -(-self.n_samples // 64)

    def pass_rate(self, sets: Sequence[Cluster]) -> List[float]:
        """P(S) for each set of metric indices (one Spark job)."""
        if not sets or not self.n_samples:
            return [0.0] * len(sets)
        sets = [frozenset(s) for s in sets]
        total = self.blocks.map(lambda b: slice_counts(b[0], sets)).reduce(lambda a, b: a + b)
        return list(total / self.n_samples)

    def agglomerate(self, k: int, names: Optional[Sequence[str]] = None,
                    local_limit: Optional[int] = None) -> List[Cluster]:
        """:func:`agglomerate` over the task's samples: in one Spark task
        when the slices fit ``local_limit`` (default :data:`LOCAL_LIMIT`),
        else with one Spark job per merge."""
        limit = self.LOCAL_LIMIT if local_limit is None else local_limit
        n_metrics, n = self.n_metrics, self.n_samples
        if not n or self.slice_bytes > limit:
            return agglomerate(n_metrics, k, self.pass_rate, names)
        names = None if names is None else list(names)

        def run(blocks):
            blocks = [b for b, size in blocks if size]
            slices = np.concatenate(blocks, axis=1)

            def rate(sets):
                return list(slice_counts(slices, [frozenset(s) for s in sets]) / n)
            yield [sorted(c) for c in agglomerate(n_metrics, k, rate, names)]

        (clusters,) = self.blocks.coalesce(1).mapPartitions(run).collect()
        return [frozenset(c) for c in clusters]

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
