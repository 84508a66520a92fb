"""A brute-force reference for HBR and AUC (SPEC §8-9), written with plain
loops over the definitions, independent of qarla_spark's code.

Input: a similarity lookup ``sim[(task, topic, s, r, metric)]`` and roles
``{(task, topic, summarizer): role}`` (as in reference_qarla), and
judgments ``{(task, topic, summarizer, criterion): score}``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Dict, List, Sequence, Tuple


def scores(sim, roles, measures: Sequence[str], models: bool = False, agg: str = "mean"):
    """x(s) per scored summary: {(task, topic, s): [x_1(s), ...]} — the mean
    (exact, in Fractions, rounded once) or max over the topic's models m ≠ s
    of x(s, m)."""
    topics: Dict[tuple, Dict[str, str]] = {}
    for (task, topic, who), role in roles.items():
        topics.setdefault((task, topic), {})[who] = role
    out = {}
    for (task, topic), people in topics.items():
        model_list = sorted(w for w, r in people.items() if r == "model")
        for s, role in sorted(people.items()):
            if role == "peer" or (models and role == "model"):
                row = []
                for x in measures:
                    vals = [sim[(task, topic, s, m, x)] for m in model_list if m != s]
                    row.append(float(sum(map(Fraction, vals), Fraction(0)) / len(vals))
                               if agg == "mean" else max(vals))
                out[(task, topic, s)] = row
    return out


def ordered_pairs(x) -> List[tuple]:
    """Every ordered pair (task, topic, u, u2), u ≠ u2, of scored summaries."""
    by_topic: Dict[tuple, List[str]] = {}
    for (task, topic, s) in x:
        by_topic.setdefault((task, topic), []).append(s)
    return [(task, topic, u, v) for (task, topic), names in sorted(by_topic.items())
            for u in sorted(names) for v in sorted(names) if u != v]


def heterogeneity(x, S: Sequence[int], pairs) -> float:
    """H(S) = share of ``pairs`` (u, u2) for which some x ∈ S has
    x(u) > x(u2) and some x' ∈ S has x'(u) < x'(u2)."""
    return split_count(x, S, pairs) / len(pairs)


def split_count(x, S: Sequence[int], pairs) -> int:
    """How many of ``pairs`` S splits (H(S) = this / len(pairs))."""
    hits = 0
    for (task, topic, u, v) in pairs:
        xu, xv = x[(task, topic, u)], x[(task, topic, v)]
        up = any(xu[i] > xv[i] for i in S)
        down = any(xu[i] < xv[i] for i in S)
        if up and down:
            hits += 1
    return hits


def hbr(x, pairs) -> Dict[tuple, float]:
    """HBR(s) = mean over s' ≠ s of H({x: x(s) ≥ x(s')}), H over ``pairs``
    — a mean of ratios of counts, taken exactly (fractions) and rounded once,
    so that summaries with equal HBR tie (AUC counts ties ½)."""
    from fractions import Fraction
    k = len(next(iter(x.values())))
    out = {}
    cache: Dict[tuple, Fraction] = {}
    for (task, topic, s) in x:
        values = []
        for (t2, p2, u, v) in ordered_pairs(x):
            if (t2, p2, u) != (task, topic, s):
                continue
            S = tuple(i for i in range(k) if x[(task, topic, s)][i] >= x[(task, topic, v)][i])
            if S not in cache:
                cache[S] = Fraction(split_count(x, S, pairs) if S else 0, len(pairs))
            values.append(cache[S])
        out[(task, topic, s)] = float(sum(values) / len(values))
    return out


def auc(x_of, judgments, criterion) -> Tuple[float, int, Dict[str, Tuple[float, int]]]:
    """AUC = P(x(s) > x(s') | Q(s) > Q(s')), ties ½, over ordered pairs of
    judged summaries of the same topic: (pooled auc, n, {topic: (auc, n)}).
    ``x_of``: {(task, topic, s): value}."""
    num: Dict[str, float] = {}
    n: Dict[str, int] = {}
    by_topic: Dict[tuple, List[tuple]] = {}
    for (task, topic, s), xs in x_of.items():
        by_topic.setdefault((task, topic), []).append((s, xs))
    for (task, topic), members in by_topic.items():
        for s, xs in members:
            for s2, xs2 in members:
                if s2 == s:
                    continue
                q1 = judgments.get((task, topic, s, criterion))
                q2 = judgments.get((task, topic, s2, criterion))
                if q1 is None or q2 is None or not q1 > q2:
                    continue
                n[topic] = n.get(topic, 0) + 1
                num[topic] = num.get(topic, 0.0) + (1.0 if xs > xs2 else
                                                    0.5 if xs == xs2 else 0.0)
    total = sum(n.values())
    pooled = sum(num.values()) / total if total else math.nan
    return pooled, total, {t: (num[t] / n[t], n[t]) for t in n}


# ------------------------------------------------ vectorised (large testbeds)

def hbr_matrix(x: Dict[tuple, List[float]], chunk: int = 500) -> Dict[tuple, float]:
    """Exact HBR by boolean matrix products (numpy), for testbeds too large
    for :func:`hbr`'s loops — independent of qarla_spark's bit masks: H(S) =
    mean over all ordered pairs of [G·S > 0 and L·S > 0] with G, L, S 0/1
    vectors over the measures. HBR is taken exactly: integer counts of split
    pairs summed, one division (so that equal HBRs tie)."""
    import numpy as np
    keys = sorted(x)
    by_topic: Dict[tuple, List[int]] = {}
    for n, (task, topic, _) in enumerate(keys):
        by_topic.setdefault((task, topic), []).append(n)
    X = np.array([x[k] for k in keys], dtype=float)
    i_all, j_all = [], []
    for rows in by_topic.values():
        for a in rows:
            for b in rows:
                if a != b:
                    i_all.append(a)
                    j_all.append(b)
    i_all, j_all = np.array(i_all), np.array(j_all)
    G = (X[i_all] > X[j_all]).astype(np.float32)
    L = (X[i_all] < X[j_all]).astype(np.float32)
    S = (X[i_all] >= X[j_all])
    uniq, inverse = np.unique(S, axis=0, return_inverse=True)
    splits = np.empty(len(uniq), dtype=np.int64)
    for lo in range(0, len(uniq), chunk):
        block = uniq[lo:lo + chunk].astype(np.float32).T
        splits[lo:lo + chunk] = (((G @ block) > 0) & ((L @ block) > 0)).sum(axis=0)
    per_pair = splits[np.ravel(inverse)]
    sums = np.zeros(len(keys), dtype=np.int64)
    np.add.at(sums, i_all, per_pair)
    counts = np.bincount(i_all, minlength=len(keys))
    n_pairs = len(i_all)
    return {k: int(sums[n]) / (int(counts[n]) * n_pairs)
            for n, k in enumerate(keys) if counts[n]}
