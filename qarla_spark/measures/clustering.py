"""Metric clustering and the best metric set (SPEC §6, paper 000 §3.2-3.3).

H_X(e, m, m', m'') ≡ ∀x∈X: x(e, m) ≥ x(m', m''), over the QUEEN samples of
the peers with the full model set. sim(X, X') = P[H_X ↔ H_X'].

Since H_C ∧ H_C' = H_{C∪C'}, sim(C, C') = 1 − P(C) − P(C') + 2·P(C ∪ C'),
where P(S) is the share of samples whose mask contains S. The clustering
therefore needs only pass rates of metric sets: popcounts of ANDs of the
samples' bit slices (one packed row of pass bits per metric); the QARLA
stage builds them on the executors and runs the whole agglomeration in one
Spark task (:mod:`qarla_spark.stages.clustering`). Pure numpy here.

Agglomerative rule: start with singletons; repeatedly merge the two clusters
with the highest sim (ties: the pair that comes first when each cluster is
named by its sorted metric names, so the result does not depend on the order
of the metric list); stop at k clusters. Each cluster's
representative is its metric with the highest KING (ties: name order). The
best set is the non-empty subset of representatives with the highest KING
(ties: fewer metrics, then name order of the metric-set name:
:func:`~qarla_spark.measures.metric_sets.best_of`). KING values are exact
(:mod:`~qarla_spark.measures.exact`), so equal KINGs are ties, whatever the
partitioning.
"""

from __future__ import annotations

from itertools import combinations
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.measures.metric_sets import MetricSet, best_of
from qarla_spark.names import SEPARATOR

Cluster = FrozenSet[int]


def agglomerate(n_metrics: int, k: int,
                pass_count: Callable[[Sequence[Cluster]], Sequence[int]],
                names: Optional[Sequence[str]] = None) -> List[Cluster]:
    """Clusters of metric indices (pure: ``pass_count`` is the oracle: for a
    batch of sets S, the number of samples passing every metric of S).
    sim(C, C')·N = N − c(C) − c(C') + 2·c(C ∪ C') is compared as an integer,
    so equal similarities are ties; ties are broken by ``names`` (the metric
    names, so that the clusters do not depend on the order of the metric
    list; default: the indices). One batch of ``pass_count`` per merge
    (speculating on the next merge does not pay: on SummEval's 59 metrics
    every merge but one involves the cluster just merged)."""
    if n_metrics < 1:
        return []
    k = max(1, min(k, n_metrics))
    clusters: List[Cluster] = [frozenset([i]) for i in range(n_metrics)]
    count: Dict[Cluster, int] = {}

    def ask(sets):
        todo = [s for s in dict.fromkeys(sets) if s not in count]
        if todo:
            for s, c in zip(todo, pass_count(todo)):
                count[s] = int(c)

    ask(clusters + [a | b for a, b in combinations(clusters, 2)])

    def sim(a: Cluster, b: Cluster) -> int:
        """sim(a, b)·N − N: the samples where H_a ↔ H_b, less N."""
        return 2 * count[a | b] - count[a] - count[b]

    label = list(names) if names is not None else list(range(n_metrics))

    def key(a: Cluster) -> tuple:
        return tuple(sorted(label[i] for i in a))

    # the clusters in slots (a merge keeps the lower slot, retires the
    # other), their keys, and the similarities of every pair of live slots:
    # each merge computes only the new cluster's row (issue 36: the whole
    # ranking re-sorted at every merge was most of a task's reduce)
    slots: List[Optional[Cluster]] = list(clusters)
    keys = [key(c) for c in slots]
    n = len(slots)
    low = np.iinfo(np.int64).min
    sims = np.full((n, n), low, dtype=np.int64)
    for i, j in combinations(range(n), 2):
        sims[i, j] = sim(slots[i], slots[j])
    live = n
    while live > k:
        top = sims.max()
        # ties: the pair whose keys, the smaller first, come first
        tied = zip(*np.nonzero(sims == top))
        i, j = min(tied, key=lambda ij: tuple(sorted((keys[ij[0]], keys[ij[1]]))))
        merged = slots[i] | slots[j]
        slots[i], slots[j], keys[i] = merged, None, key(merged)
        sims[j, :] = low
        sims[:, j] = low
        live -= 1
        others = [t for t, c in enumerate(slots) if c is not None and t != i]
        ask([merged | slots[t] for t in others])
        for t in others:
            sims[min(i, t), max(i, t)] = sim(merged, slots[t])
    clusters = [c for c in slots if c is not None]
    return sorted(clusters, key=key)


def representatives(clusters: Sequence[Cluster], metrics: Sequence[str],
                    king: Mapping[MetricSet, float]) -> List[str]:
    """Per cluster, the metric with the highest KING (exact values, see
    :mod:`~qarla_spark.measures.exact`); ties: the first name in code-point
    order (:attr:`MetricSet.tie_key`). A metric without KING counts as the
    lowest."""
    reps = []
    for cluster in clusters:
        singles = {MetricSet([metrics[i]]): king.get(MetricSet([metrics[i]]), float("-inf"))
                   for i in cluster}
        reps.append(best_of(singles).names[0])
    return reps


def subsets(names: Sequence[str]) -> List[MetricSet]:
    """Every non-empty subset of the metrics ``names`` (2^k − 1 of them),
    by size, then in name order."""
    names = sorted(set(names))
    return [MetricSet(c) for r in range(1, len(names) + 1) for c in combinations(names, r)]


def subset_labels(names: Sequence[str]) -> List[Tuple[str, int]]:
    """(label, size) of each set of :func:`subsets`, in its order, without
    making the sets (a task's statistics groups name its 1,023 subsets of
    ten representatives: 0.1 s of MetricSet objects a task): a combination
    of the sorted, distinct names is sorted and distinct, so its label is
    the names joined by the separator (:attr:`MetricSet.label`)."""
    names = sorted(set(names))
    return [(SEPARATOR.join(c), r) for r in range(1, len(names) + 1)
            for c in combinations(names, r)]


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


def bit_slices(passes: np.ndarray) -> np.ndarray:
    """Pass bits (samples × metrics, boolean) → bit slices: row i packs the
    bit of metric i of every sample (samples / 64 uint64 words, little
    endian, zero-padded; a padding bit is 0 in every row, so no set ever
    counts it)."""
    from qarla_spark.measures.masks import packed_u64
    # packed from a contiguous copy of the transpose: a third of the time
    # of packing the strided view
    return packed_u64(np.ascontiguousarray(np.asarray(passes, dtype=bool).T))


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
        rest = [sorted(frozenset(sets[j]) - core) for j in range(lo, hi)]
        # the core and one more metric (every pair, every merge with a
        # single metric): one AND and one popcount for the whole run
        one = [k for k, r in enumerate(rest) if len(r) == 1 and base is not None]
        if one:
            acc = slices[[rest[k][0] for k in one]] & base
            out[[lo + k for k in one]] = _row_popcounts(acc)
        for k in sorted(set(range(hi - lo)) - set(one)):
            acc = base
            for i in rest[k]:
                acc = slices[i] if acc is None else acc & slices[i]
            out[lo + k] = 0 if acc is None else popcount(acc)     # the empty set: 0
    return out


def _row_popcounts(rows: np.ndarray) -> np.ndarray:
    """The set bits of each row of an integer matrix."""
    rows = np.ascontiguousarray(rows)
    if hasattr(np, "bitwise_count"):          # numpy >= 2.0
        return np.bitwise_count(rows).sum(axis=1, dtype=np.int64)
    return _POP8[rows.view(np.uint8)].reshape(len(rows), -1).sum(axis=1)


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
