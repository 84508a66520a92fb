"""JACK (SPEC §5) and its growth curve (paper 000, Fig. 3) of one topic
(pure numpy; the QARLA stage runs it on every topic of the cube).

JACK(X) = mean over topics t of mean over m ∈ M_t of
1[∃ a ≠ a' ∈ A_t: QUEEN(a) > 0 ∧ QUEEN(a') > 0 ∧
  ∀x∈X: x(a, a') ≤ x(a, m) ∧ x(a', a) ≤ x(a', m)]
with QUEEN over the full M_t (topics with ≥ 3 models; a topic with fewer
than 2 peers counts 0 for each of its models).

Growth curve: for R seeded random orders of the task's peer systems, JACK
using only the first k systems, k = 2..|A|, averaged over the orders. A
pair (a, a') that satisfies the condition for (t, m) becomes available once
both systems are in, i.e. at k = max(rank a, rank a'); so per order and
(t, m) the first such k decides, and JACK(k) counts the (t, m) whose first
k is ≤ k. JACK never decreases with k by construction.
"""

from __future__ import annotations

import random
from typing import List, Sequence

import numpy as np


def peer_orders(systems: Sequence[str], n_orders: int, seed: int) -> List[List[str]]:
    """``n_orders`` random orders of the peer systems (seeded, reproducible:
    the systems are sorted by name first)."""
    rng = random.Random(seed)
    base = sorted(systems)
    orders = []
    for _ in range(n_orders):
        order = list(base)
        rng.shuffle(order)
        orders.append(order)
    return orders


def covering_pairs(values, peers, models, positive, metrics: Sequence[int]) -> np.ndarray:
    """good[a, a', m] (|A| × |A| × |M|, a < a' only): the peer pair satisfies
    JACK's condition for model m under the metrics ``metrics`` (indices of
    the last axis of ``values``); ``positive[a]``: QUEEN_M(a) > 0."""
    v_pp = values[np.ix_(peers, peers, metrics)]                # A × A × k
    v_pm = values[np.ix_(peers, models, metrics)]               # A × M × k
    # one[a, a2, m, i] = x_i(a, a2) <= x_i(a, m)
    one = v_pp[:, :, None, :] <= v_pm[:, None, :, :]
    ok = (one & one.transpose(1, 0, 2, 3)).all(axis=3)
    upper = np.triu(np.ones((len(peers), len(peers)), dtype=bool), 1)
    return ok & (upper & np.outer(positive, positive))[:, :, None]


def first_cover(good: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """(orders × |M|): for each order (``ranks[o, a]``, 1-based rank of the
    topic's peer a among the task's systems) the smallest k such that a
    covering pair lies among the first k systems; a large number when no
    pair covers m."""
    big = np.iinfo(np.int64).max
    out = np.full((len(ranks), good.shape[2]), big, dtype=np.int64)
    if not len(ranks) or not good.shape[0]:
        return out
    # the pairs that cover some model only (the others give ``big``)
    a, a2 = np.nonzero(good.any(axis=2))
    if not len(a):
        return out
    pair_k = np.maximum(ranks[:, a], ranks[:, a2])                  # O × pairs
    return np.where(good[a, a2][None, :, :], pair_k[:, :, None], big).min(axis=1)


def curve_counts(first: np.ndarray, n_systems: int) -> np.ndarray:
    """For k = 2..n_systems: Σ over the orders of the models covered by the
    first k systems (``first`` from :func:`first_cover`)."""
    ks = np.arange(2, n_systems + 1)
    return (first[None, :, :] <= ks[:, None, None]).sum(axis=(1, 2)).astype(np.int64)
