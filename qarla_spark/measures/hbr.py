"""Heterogeneity-Based Ranking (SPEC §8, paper 001).

Measures are evaluation scores of a summary against its topic's models:
x(s) = mean (option: max) over the models m ≠ s of x(s, m) — a model is
thus scored against the other models (jackknifed). Peers only, unless
models are asked for.

Heterogeneity of a measure set S, over ordered pairs (u, u') of summaries of
the same topic: with G = {x: x(u) > x(u')} and L = {x: x(u) < x(u')},

    H(S) = P( S ∩ G ≠ ∅  and  S ∩ L ≠ ∅ ),

estimated on a seeded sample of pairs (default 10,000, paper 001 §5.1), or
exactly on all of them; the standard error of a sampled estimate is
sqrt(H(1 − H)/n) (0 when exact). Then

    HBR_X(s) = mean over s' ≠ s of the same topic of H({x ∈ X: x(s) ≥ x(s')}),

and {x: x(s) ≥ x(s')} = X ∖ L(s, s'): the sets HBR needs are the complements
of the pairs' L masks. Masks are arrays of 63-bit words, as in QUEEN.

The pure kernels are here; :mod:`qarla_spark.stages.hbr` runs them over the
topic cube (each summary's scores and each ordered pair's G and L masks per
topic, the seeded sample, H of every needed set, HBR as an exact mean).
"""

from __future__ import annotations

import struct
from typing import Sequence

import numpy as np

from qarla_spark.measures.masks import pack, set_words
from qarla_spark.measures.resampling import nan_real_means

AGGREGATES = ("mean", "max")
DEFAULT_PAIRS = 10_000


# ---------------------------------------------------------------------------
# pure kernels
# ---------------------------------------------------------------------------

def topic_scores(roles, values, measures: Sequence[int], aggregate: str = "mean",
                 models: bool = False):
    """(summary indices, scores): scores[k, j] = x_j(s_k), the aggregate over
    the topic's models m ≠ s_k of values[s_k, m, measures[j]], NaN values
    left out (the mean: exact and rounded once,
    :func:`~qarla_spark.measures.resampling.nan_real_means`); summaries are
    the peers (and the models if ``models``), in index order."""
    roles = np.asarray(roles)
    model_idx = np.flatnonzero(roles == "model")
    who = np.flatnonzero((roles == "peer") | ((roles == "model") & models))
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    v = values[np.ix_(who, model_idx, np.asarray(measures, dtype=np.int64))]  # S × M × X
    # the diagonal (a model against itself) is NaN in the cube: excluded; a
    # topic's only model is scored against no one: NaN
    if aggregate == "mean":
        # the exact mean, rounded once: the one value of each (summary,
        # measure) that the export writes too (issue 39)
        return who, nan_real_means(np.swapaxes(v, 1, 2))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return who, np.nanmax(v, axis=1)


def pair_masks(scores):
    """For every ordered pair (i, j), i ≠ j, of rows of ``scores``: indices
    and the packed masks G = {x: x_i > x_j}, L = {x: x_i < x_j}."""
    n = len(scores)
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return i, j, pack(scores[i] > scores[j]), pack(scores[i] < scores[j])


def complement(words, n_measures: int) -> np.ndarray:
    """X ∖ S for mask words over ``n_measures`` measures."""
    full = np.asarray(set_words(range(n_measures), n_measures), dtype=np.int64)
    return np.asarray(words, dtype=np.int64) ^ full[None, :]


def split_counts(sets, g, l, weights) -> np.ndarray:
    """Σ weights (integers: how many pairs share a (G, L)) over the pairs
    (rows of g, l) that S splits (S ∩ G ≠ ∅ and S ∩ L ≠ ∅), for each row S
    of ``sets`` (all mask words); an int64 count. (A float64 product, exact
    below 2^53 pairs, is much faster than an integer one.)"""
    sets = np.asarray(sets, dtype=np.int64)
    g, l = np.asarray(g, dtype=np.int64), np.asarray(l, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64).astype(np.float64)
    out = np.zeros(len(sets), dtype=np.int64)
    for lo in range(0, len(sets), 512):
        block = sets[lo:lo + 512]
        hit_g = np.zeros((len(block), len(g)), dtype=bool)
        hit_l = np.zeros((len(block), len(g)), dtype=bool)
        for w in range(sets.shape[1]):
            hit_g |= (block[:, w][:, None] & g[:, w][None, :]) != 0
            hit_l |= (block[:, w][:, None] & l[:, w][None, :]) != 0
        out[lo:lo + 512] = np.rint((hit_g & hit_l) @ weights).astype(np.int64)
    return out


#: the seed Spark's ``xxhash64`` starts from
SPARK_HASH_SEED = 42


def spark_xxhash64(*parts, seed: int = SPARK_HASH_SEED) -> int:
    """Spark SQL's ``xxhash64(parts...)``, as a signed 64-bit integer: each
    part hashed with the previous hash as seed (xxHash64); an integer as
    Spark hashes an int literal (4 bytes) or, beyond 32 bits, a long (8
    bytes), a string as its UTF-8 bytes. (Tested equal to Spark's.)"""
    import xxhash
    h = seed & 0xFFFFFFFFFFFFFFFF
    for p in parts:
        if isinstance(p, str):
            data = p.encode("utf-8")
        elif -2 ** 31 <= int(p) < 2 ** 31:
            data = struct.pack("<i", int(p))
        else:
            data = struct.pack("<q", int(p))
        h = xxhash.xxh64_intdigest(data, seed=h)
    return h - (1 << 64) if h >= 1 << 63 else h


def pair_keys(seed: int, task: str, topic: str, first: Sequence[str],
              second: Sequence[str]) -> np.ndarray:
    """The sampling key of each ordered pair (first[i], second[i]) of a
    topic: ``xxhash64(seed, task, topic, s, s2)`` (int64), the key HBR's
    sample is drawn by (the pairs of a task with the smallest keys)."""
    import xxhash
    base = spark_xxhash64(seed, task, topic) & 0xFFFFFFFFFFFFFFFF
    out = np.empty(len(first), dtype=np.int64)
    memo = {}
    for i, (a, b) in enumerate(zip(first, second)):
        h = memo.get(a)
        if h is None:
            h = memo[a] = xxhash.xxh64_intdigest(a.encode("utf-8"), seed=base)
        h = xxhash.xxh64_intdigest(b.encode("utf-8"), seed=h)
        out[i] = h - (1 << 64) if h >= 1 << 63 else h
    return out


def smallest_pairs(keys, topics, first, second, n: int) -> np.ndarray:
    """The positions of the ``n`` pairs with the smallest (key, topic,
    first, second) — the order HBR's sample is drawn in (the same as Spark's
    ``orderBy`` of those columns: signed keys, strings by code point) — in
    that order."""
    return np.lexsort((np.asarray(second, dtype=object), np.asarray(first, dtype=object),
                       np.asarray(topics, dtype=object),
                       np.asarray(keys, dtype=np.int64)))[:int(n)]


def spark_greater(a, b) -> np.ndarray:
    """``a > b`` as Spark SQL compares doubles: NaN is greater than every
    other value (and equal to NaN)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = np.isnan(a), np.isnan(b)
    return np.where(na | nb, na & ~nb, a > b)


def spark_equal(a, b) -> np.ndarray:
    """``a = b`` as Spark SQL compares doubles (NaN equals NaN)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = np.isnan(a), np.isnan(b)
    return np.where(na | nb, na & nb, a == b)


def ntile(n: int, buckets: int) -> np.ndarray:
    """Spark's ``ntile(buckets)`` over ``n`` ordered rows: the 1-based bucket
    of each row — the first ``n % buckets`` buckets hold one row more than
    the others (fewer rows than buckets: one row per bucket)."""
    q, r = divmod(int(n), int(buckets))
    sizes = [q + 1] * r + [q] * (buckets - r)
    return np.repeat(np.arange(1, buckets + 1), sizes)[:n].astype(np.int32)


def auc_counts(values, judged) -> tuple:
    """(wins2 per measure, pairs) of one topic and criterion (SPEC §9): over
    the ordered pairs (s, s') of scored summaries, each human score q of s
    and q' of s' with q > q' (a summary judged twice counts twice),
    wins2 = 2·#[x(s) > x(s')] + #[x(s) = x(s')], compared as Spark compares
    doubles. ``values`` (summaries × measures), ``judged[i]``: summary i's
    human scores (empty: not judged)."""
    first, second = [], []
    for a, qa in enumerate(judged):
        for b, qb in enumerate(judged):
            if a == b:
                continue
            for q1 in qa:
                for q2 in qb:
                    if q1 > q2:
                        first.append(a)
                        second.append(b)
    values = np.asarray(values, dtype=np.float64)
    if not first:
        return np.zeros(values.shape[1], dtype=np.int64), 0
    x1, x2 = values[first], values[second]
    wins2 = (2 * spark_greater(x1, x2) + spark_equal(x1, x2)).sum(axis=0)
    return wins2.astype(np.int64), len(first)
