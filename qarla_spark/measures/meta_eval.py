"""Judge-based meta-evaluation statistics (issue 28; SPEC §11): how well a
metric's scores agree with human scores, as small pure functions (numpy).

In the manner of google-research/mt-metrics-eval's ``stats.py``: each
function computes one statistic from score vectors (or from resampled
scores it is handed); drawing the replicates is the caller's business
(:mod:`~qarla_spark.measures.resampling`), so that the statistic and the
resampling can be checked apart.

- :func:`pairwise_accuracy`: system-level pairwise accuracy (Kocmi et al.
  2021), a metric tie counting ½;
- :func:`acc_eq`: pairwise accuracy with ties, a metric tie being a
  difference ≤ ε (Deutsch, Foster & Freitag 2023);
- :func:`tie_calibration`: the ε that maximises :func:`acc_eq`, over one
  vector or averaged over groups (items) with one ε (Deutsch et al. 2023);
- :func:`pairwise_p_values` and :func:`soft_pairwise_accuracy` (Thompson
  et al. 2024);
- :func:`wmt_agreement`: pairwise accuracy with human ties counted
  (mt-metrics-eval's ``Agreement``, the figure WMT publishes);
- :func:`pairwise_difference_pearson`: Pearson over the within-item
  differences of every pair (DiIanni & Deutsch 2025);
- :func:`significance_clusters`: mt-metrics-eval's greedy rank clusters;
- :func:`chance_scores`: reproducible random metric scores for a chance
  baseline.

Determinism (docs/DECISIONS.md, "Determinism"): every value is a ratio of
integer counts, or an exact rational, rounded once; ties are exact equality
of the doubles given, so callers pass the exact values they compare (an
exact mean rounded once, never a float sum in arrival order).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from qarla_spark.measures.resampling import ALPHA, uniforms

NAN = float("nan")


def _ratio(num: int, den: int) -> float:
    """num / den correctly rounded (Python's integer true division); NaN
    when den is 0."""
    return int(num) / int(den) if den else NAN


def _vectors(metric, human) -> Tuple[np.ndarray, np.ndarray]:
    m = np.asarray(metric, dtype=np.float64).ravel()
    h = np.asarray(human, dtype=np.float64).ravel()
    if m.shape != h.shape:
        raise ValueError(f"metric and human scores differ in length ({m.size} vs {h.size})")
    if not (np.isfinite(m).all() and np.isfinite(h).all()):
        raise ValueError("scores must be finite (drop missing judgments before)")
    return m, h


@functools.lru_cache(maxsize=64)
def _pairs(n: int) -> Tuple[np.ndarray, np.ndarray]:
    """The pairs i < j of n items (read-only: made once per n)."""
    i, j = np.triu_indices(n, 1)
    i.setflags(write=False)
    j.setflags(write=False)
    return i, j


def _order(x: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """sign(x_i − x_j) per pair, by comparison (no subtraction)."""
    return (x[i] > x[j]).astype(np.int8) - (x[i] < x[j]).astype(np.int8)


# ---------------------------------------------------------------------------
# pairwise accuracy (Kocmi et al. 2021)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PairwiseAccuracy:
    """``agree2`` = 2·(pairs the metric orders as the humans do) + (pairs
    the metric ties); ``pairs2`` = 2·(pairs with unequal human scores)."""

    agree2: int
    pairs2: int

    @property
    def value(self) -> float:
        """agree2 / pairs2, NaN without a pair of unequal human scores."""
        return _ratio(self.agree2, self.pairs2)


def pairwise_accuracy(metric, human) -> PairwiseAccuracy:
    """System-level pairwise accuracy (Kocmi et al. 2021, "To Ship or Not
    to Ship", §3): over the pairs of systems i < j whose human scores
    differ, the share the metric orders the same way; a metric tie counts
    ½ (Kocmi's sign agreement counts it 0). Ties are exact equality of the
    given doubles."""
    m, h = _vectors(metric, human)
    i, j = _pairs(m.size)
    sh, sm = _order(h, i, j), _order(m, i, j)
    judged = sh != 0
    agree = int(np.count_nonzero(judged & (sm == sh)))
    ties = int(np.count_nonzero(judged & (sm == 0)))
    return PairwiseAccuracy(2 * agree + ties, 2 * int(np.count_nonzero(judged)))


@dataclass(frozen=True, eq=False)
class SignSums:
    """Sums over the pairs of systems i < j of each row (a replicate):
    ``concordance`` = Σ sign(m_i − m_j)·sign(h_i − h_j) (B × M measures),
    ``metric_pairs`` = #{m_i ≠ m_j} (B × M), ``human_pairs`` = #{h_i ≠
    h_j} (B,), all int64; a system whose human score is NaN in a row drops
    out of that row's human pairs."""

    concordance: np.ndarray
    metric_pairs: np.ndarray
    human_pairs: np.ndarray
    #: #{h_i = h_j and m_i = m_j} (B × M; the pairs both tie, NaN tying
    #: nothing), or None when not counted
    both_tied: Optional[np.ndarray] = None

    def pairwise_accuracy_counts(self) -> Tuple[np.ndarray, np.ndarray]:
        """(agree2, pairs2) of :class:`PairwiseAccuracy` per row and measure:
        over the pairs the humans order, 2·agree + metric ties = human_pairs
        + concordance (a pair the humans order adds +1 when the metric
        agrees, −1 when it disagrees, 0 when it ties)."""
        return self.human_pairs[:, None] + self.concordance, 2 * self.human_pairs

    def kendall_b(self) -> np.ndarray:
        """Kendall's τ_b = concordance / sqrt(metric_pairs · human_pairs)
        (B × M; NaN when a side is constant)."""
        den = self.metric_pairs * self.human_pairs[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, self.concordance / np.sqrt(den.astype(np.float64)),
                            np.nan)


def sign_sums(metric, human) -> SignSums:
    """:class:`SignSums` of ``metric`` (B × n × M: M measures' scores of n
    systems in each of B rows) against ``human`` (B × n), from the signs of
    every pair once (int8)."""
    return sign_sums_many(metric, [human])[0]


def sign_sums_many(metric, humans) -> List[SignSums]:
    """:func:`sign_sums` of ``metric`` (B × n × M) against each of several
    ``humans`` (each B × n: the criteria of a task), the measures' signs of
    each pair made once for all of them."""
    m = np.asarray(metric, dtype=np.float64)
    hs = [np.asarray(h, dtype=np.float64) for h in humans]
    if m.ndim != 3 or any(h.shape != m.shape[:2] for h in hs):
        raise ValueError("metric must be (B × n × M) and human (B × n)")
    from qarla_spark.measures.pair_counts import sign_sums_rows as counts
    # read in their own layout (B × n × M and C × B × n): no copy first
    con, metric_pairs, human_pairs, tied = counts(
        m, np.stack(hs) if hs else np.zeros((0,) + m.shape[:2]))
    return [SignSums(con[c], metric_pairs.copy(), human_pairs[c], tied[c])
            for c in range(len(hs))]


# ---------------------------------------------------------------------------
# pairwise accuracy as WMT publishes it: human ties counted (mt-metrics-eval)
# ---------------------------------------------------------------------------

def wmt_agreement(metric, human) -> Tuple[int, int]:
    """(agree, pairs): mt-metrics-eval's ``Agreement``, the system-level
    pairwise accuracy WMT publishes (Kocmi et al. 2021's, human ties
    counted): over every pair of systems i < j with both human scores, the
    pair agrees when sign(m_i − m_j) = sign(h_i − h_j) — a pair both tie
    agrees, a tie on one side only disagrees (no ½). The loop of its
    definition (the reference of :func:`wmt_agreement_counts`)."""
    m, h = _vectors(metric, human)
    i, j = _pairs(m.size)
    return int(np.count_nonzero(_order(m, i, j) == _order(h, i, j))), int(i.size)


def wmt_agreement_counts(metric, human, signs: "SignSums",
                         finite: Optional[Tuple[np.ndarray, np.ndarray]] = None
                         ) -> Tuple[np.ndarray, np.ndarray]:
    """(agree (B × M), pairs (B,)) int64 of :func:`wmt_agreement` for every
    row (a replicate) and measure of ``metric`` (B × n × M) against ``human``
    (B × n; a NaN human score — a system without weight in a replicate —
    leaves its pairs out), from their :class:`SignSums` and the pairs the
    humans tie: over a row's P pairs with H ordered by the humans, M by the
    measure, concordance K = C − D and T pairs tied by both,
    O = M − (P − H − T) pairs are ordered by both, C = (K + O) / 2 and
    agree = C + T. Only the pairs the humans tie are visited (few: the
    measure's side is the sign sums'); no loop over measures or rows."""
    x = np.asarray(metric, dtype=np.float64)
    h = np.asarray(human, dtype=np.float64)
    n_b, n, n_m = x.shape
    valid = np.isfinite(h)
    # ``finite``: (every measure finite, some measure finite) per row and
    # system, when the caller has them (the criteria of a task share x)
    every, some = finite if finite is not None else \
        (np.isfinite(x).all(axis=2), np.isfinite(x).any(axis=2))
    if not ((every == valid).all() and (some == valid).all()):
        raise ValueError("a system's measure scores must be finite exactly where its human "
                         "score is")
    count = valid.sum(axis=1).astype(np.int64)
    pairs = count * (count - 1) // 2
    if signs.both_tied is not None:
        # the pairs both tie, counted with the signs (the same integers)
        both = signs.both_tied
        ordered_both = signs.metric_pairs - (pairs - signs.human_pairs)[:, None] + both
        return (signs.concordance + ordered_both) // 2 + both, pairs
    i, j = _pairs(n)
    tied = valid[:, i] & valid[:, j] & (h[:, i] == h[:, j])             # B × P
    rows, at = np.nonzero(tied)
    both = np.zeros((n_b, n_m), dtype=np.int64)
    if rows.size:
        # rows come sorted (np.nonzero): each row's tied pairs summed in one
        # reduceat (np.add.at, unbuffered, cost 10x)
        same = (x[rows, i[at], :] == x[rows, j[at], :]).astype(np.int64)
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        both[rows[starts]] = np.add.reduceat(same, starts, axis=0)
    # a measure's pairs among the valid ones: a NaN orders nothing (the
    # sign sums' metric pairs), and x is NaN exactly where h is
    ordered_both = signs.metric_pairs - (pairs - signs.human_pairs)[:, None] + both
    agree = (signs.concordance + ordered_both) // 2 + both
    return agree, pairs


# ---------------------------------------------------------------------------
# Pairwise Difference Pearson (DiIanni & Deutsch 2025)
# ---------------------------------------------------------------------------

def pairwise_difference_pearson(metric, human, groups) -> float:
    """Pairwise Difference Pearson (DiIanni & Deutsch 2025, mt-metrics-eval's
    ``pdp``), the loop of its definition: over every pair of items i ≠ j of
    the same group (a topic's systems; both orders, so that the statistic
    does not depend on the items' order), the Pearson correlation of the
    metric's differences m_i − m_j with the humans' h_i − h_j, pooled over
    the groups — whose means are 0 by symmetry: Σ d_m·d_h / √(Σ d_m² Σ d_h²).
    NaN when either side has no nonzero difference. The reference of
    :func:`pdp_sums`."""
    m, h = _vectors(metric, human)
    codes = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
    i, j = _group_pairs(codes)
    dm, dh = m[i] - m[j], h[i] - h[j]
    den = math.sqrt(float(np.dot(dm, dm)) * float(np.dot(dh, dh)))
    return float(np.dot(dm, dh)) / den if den > 0 else NAN


def pdp_sums(metric, human, groups, n_groups: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each group's sums of :func:`pairwise_difference_pearson` for every
    measure at once: (Σ d_m·d_h (G × M), Σ d_h² (G,), Σ d_m² (G × M)) over
    the group's unordered pairs i < j, each difference a subtraction of two
    doubles (a measure equal on both sides differs by exactly 0), the
    pairs' terms added in their order within a group (deterministic).
    ``metric`` (N × M), ``human`` (N,), ``groups`` (N,) in [0, n_groups).
    PDP = Σ_g cross_g / √(Σ_g hh_g · Σ_g mm_g) (both orders of a pair
    double each sum alike). :func:`pdp_side` and :func:`pdp_human_sums`:
    the measures' side once for many human scores, the same doubles."""
    side = pdp_side(metric, groups, n_groups)
    cross, hh = pdp_human_sums(side, human)
    return cross, hh, side.mm


@dataclass(frozen=True, eq=False)
class PdpSide:
    """The measures' side of :func:`pdp_sums` (whatever the human scores):
    the pairs i < j within a group in their order, where each group's
    pairs start, the groups they belong to, the measures' differences
    (pairs × M) and their Σ d_m² (G × M)."""

    n_groups: int
    n_m: int
    i: np.ndarray
    j: np.ndarray
    starts: np.ndarray
    at: np.ndarray
    #: None where the sums are compiled (:func:`~qarla_spark.measures.
    #: compiled_rows.pdp_reduceat`: the differences made as summed)
    dm: Optional[np.ndarray]
    mm: np.ndarray
    #: the measures' scores N × M (the compiled sums' input)
    m: Optional[np.ndarray] = None


def pdp_side(metric, groups, n_groups: int) -> PdpSide:
    """:class:`PdpSide` of ``metric`` (N × M) grouped by ``groups`` (N,).
    With numba, Σ d_m² compiled from the scores themselves and the
    differences never made (:func:`~qarla_spark.measures.compiled_rows.
    pdp_reduceat`: np.add.reduceat's doubles; :func:`pdp_human_sums` then
    compiled too), else numpy's differences and reduceat."""
    from qarla_spark.measures import compiled_rows
    m = np.asarray(metric, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    n_m = m.shape[1]
    mm = np.zeros((n_groups, n_m))
    i, j = _group_pairs(g)
    if not i.size:
        return PdpSide(n_groups, n_m, i, j, np.zeros(0, dtype=np.intp),
                       np.zeros(0, dtype=np.int64), np.zeros((0, n_m)), mm)
    order = np.lexsort((j, i, g[i]))                   # by group, then the pair
    i, j = i[order], j[order]
    pg = g[i]
    starts = np.flatnonzero(np.r_[True, pg[1:] != pg[:-1]])
    at = pg[starts]
    m = np.ascontiguousarray(m)
    if compiled_rows.pdp_reduceat(m, np.zeros(len(m)), i, j, starts, at, mm, False):
        return PdpSide(n_groups, n_m, i, j, starts, at, None, mm, m)
    dm = m[i] - m[j]
    mm[at] = np.add.reduceat(dm * dm, starts, axis=0)
    return PdpSide(n_groups, n_m, i, j, starts, at, dm, mm)


def pdp_human_sums(side: PdpSide, human) -> Tuple[np.ndarray, np.ndarray]:
    """(Σ d_m·d_h (G × M), Σ d_h² (G,)) of :func:`pdp_sums` for the human
    scores ``human`` (N,), the measures' side ``side``."""
    h = np.asarray(human, dtype=np.float64)
    cross = np.zeros((side.n_groups, side.n_m))
    hh = np.zeros(side.n_groups)
    if not side.i.size:
        return cross, hh
    if side.dm is None:                 # (compiled: the same doubles)
        from qarla_spark.measures import compiled_rows
        if compiled_rows.pdp_reduceat(side.m, h, side.i, side.j, side.starts, side.at,
                                      cross, True) and \
                compiled_rows.pdp_reduceat(h[:, None], h, side.i, side.j, side.starts,
                                           side.at, hh[:, None], False):
            return cross, hh
    dm = side.dm if side.dm is not None else side.m[side.i] - side.m[side.j]
    dh = h[side.i] - h[side.j]
    cross[side.at] = np.add.reduceat(dm * dh[:, None], side.starts, axis=0)
    hh[side.at] = np.add.reduceat(dh * dh, side.starts)
    return cross, hh


# ---------------------------------------------------------------------------
# pairwise accuracy with ties, tie calibration (Deutsch et al. 2023)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AccEq:
    """The sufficient statistics of acc_eq over pairs: both order the pair
    the same way (``concordant``) or oppositely (``discordant``); only the
    humans tie (``ties_human``), only the metric (``ties_metric``), both
    (``ties_both``)."""

    concordant: int
    discordant: int
    ties_human: int
    ties_metric: int
    ties_both: int

    @property
    def pairs(self) -> int:
        return (self.concordant + self.discordant + self.ties_human + self.ties_metric
                + self.ties_both)

    @property
    def correct(self) -> int:
        return self.concordant + self.ties_both

    @property
    def value(self) -> float:
        """(C + T_hm) / (C + D + T_h + T_m + T_hm); NaN without a pair."""
        return _ratio(self.correct, self.pairs)


def _acc_eq_counts(m, h, i, j, epsilon: float) -> AccEq:
    mtie = np.abs(m[i] - m[j]) <= epsilon
    htie = h[i] == h[j]
    same = _order(m, i, j) == _order(h, i, j)
    n_both = int(np.count_nonzero(mtie & htie))
    n_m = int(np.count_nonzero(mtie)) - n_both
    n_h = int(np.count_nonzero(htie)) - n_both
    ordered = ~mtie & ~htie
    con = int(np.count_nonzero(ordered & same))
    return AccEq(con, int(np.count_nonzero(ordered)) - con, n_h, n_m, n_both)


def acc_eq(metric, human, epsilon: float = 0.0) -> AccEq:
    """Pairwise accuracy with ties, acc_eq (Deutsch, Foster & Freitag 2023,
    "Ties Matter", §4; mt-metrics-eval's ``KendallVariants(variant='acc23')``):
    over all pairs i < j, the metric ties a pair when |m_i − m_j| ≤ ε (the
    difference of the doubles), the humans when h_i = h_j exactly; a pair
    is correct when both tie or both order it the same way:
    (C + T_hm) / (C + D + T_h + T_m + T_hm)."""
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be a non-negative number, not {epsilon}")
    m, h = _vectors(metric, human)
    i, j = _pairs(m.size)
    return _acc_eq_counts(m, h, i, j, float(epsilon))


@dataclass(frozen=True)
class TieCalibration:
    """The chosen ``epsilon``; acc_eq there, exactly ``num / den`` (the
    mean over the ``groups`` that have a pair of their acc_eq); ``counts``:
    the sufficient statistics at ``epsilon`` summed over those groups."""

    epsilon: float
    num: int
    den: int
    groups: int
    counts: AccEq

    @property
    def value(self) -> float:
        return _ratio(self.num, self.den)


def _group_pairs(codes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Every pair i < j of positions with the same group code."""
    order = np.argsort(codes, kind="stable")
    _, starts, sizes = np.unique(codes[order], return_index=True, return_counts=True)
    firsts, seconds = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for size in np.unique(sizes[sizes > 1]):
        a, b = np.triu_indices(int(size), 1)
        at = starts[sizes == size][:, None]
        firsts.append((at + a).ravel())
        seconds.append((at + b).ravel())
    return order[np.concatenate(firsts)], order[np.concatenate(seconds)]


@dataclass(frozen=True, eq=False)
class GroupPairs:
    """Scores' groups and every pair i < j within a group, made once for
    many calls on the same groups (:func:`group_pairs`): ``names`` the
    sorted labels, ``codes`` each score's position in them."""

    names: np.ndarray
    codes: np.ndarray
    i: np.ndarray
    j: np.ndarray

    @functools.cached_property
    def pair_groups(self) -> Tuple[np.ndarray, int, np.ndarray]:
        """(g, G, P): each pair's group among the G groups with a pair, and
        each such group's pairs."""
        _, g = np.unique(self.codes[self.i], return_inverse=True)
        g = g.ravel()
        n_groups = int(g.max()) + 1 if g.size else 0
        return g, n_groups, np.bincount(g, minlength=n_groups)


def group_pairs(groups) -> GroupPairs:
    """:class:`GroupPairs` of a label per score."""
    names, codes = np.unique(np.asarray(groups), return_inverse=True)
    codes = codes.ravel()
    i, j = _group_pairs(codes)
    return GroupPairs(names, codes, i, j)


def _grouping(groups, size: int) -> GroupPairs:
    if isinstance(groups, GroupPairs):
        found = groups
    else:
        labels = np.zeros(size, dtype=np.int64) if groups is None else np.asarray(groups)
        if labels.shape != (size,):
            raise ValueError("groups must give one label per score")
        found = group_pairs(labels)
    if found.codes.shape != (size,):
        raise ValueError("groups must give one label per score")
    return found


def tie_calibration(metric, human, groups: Optional[Sequence] = None) -> TieCalibration:
    """Tie calibration (Deutsch, Foster & Freitag 2023, §5; as
    mt-metrics-eval's ``tau_optimization.tau_optimization`` with
    ``acc_23``): the ε maximising acc_eq, among 0 and every distinct
    |m_i − m_j| of a pair; equal values go to the smallest ε (the first
    maximum of thresholds in ascending order, as its ``np.nanargmax``).

    With ``groups`` (a label per score, e.g. the topic of each summary:
    "group by item"; or their :func:`group_pairs`), pairs are formed within a group only, and the value
    is the mean over the groups that have a pair of their acc_eq, one ε for
    all: mt-metrics-eval averages its rows' taus the same way (an unweighted
    mean, not pooled counts).

    O(P log P) for P pairs: the pairs sorted by |m_i − m_j| once, every
    candidate's value from running sums (a pair that becomes a metric tie
    gains 1 if the humans tie it, loses 1 if it was concordant); the
    maximum found in doubles, then decided exactly among the candidates
    within rounding of it."""
    m, h = _vectors(metric, human)
    grouping = _grouping(groups, m.size)
    i, j = grouping.i, grouping.j
    if not i.size:
        return TieCalibration(0.0, 0, 0, 0, AccEq(0, 0, 0, 0, 0))
    g, n_groups, per_group = grouping.pair_groups               # groups with a pair, P_g
    diff = np.abs(m[i] - m[j])
    htie = h[i] == h[j]
    con = ~htie & (diff > 0) & (_order(m, i, j) == _order(h, i, j))
    delta = htie.astype(np.int64) - con

    order = np.argsort(diff)        # the order within equal differences never shows
    diff_s, delta_s, g_s = diff[order], delta[order], g[order]
    ends = np.flatnonzero(np.r_[diff_s[1:] != diff_s[:-1], True])  # last pair ≤ each candidate
    cands = diff_s[ends]
    if cands[0] != 0.0:                                        # ε = 0 ties no pair
        ends, cands = np.r_[-1, ends], np.r_[0.0, cands]

    # doubles: Σ_g num_g(ε)/P_g for every candidate, to find the near-best
    base = np.bincount(g, weights=con, minlength=n_groups).astype(np.int64)
    running = np.r_[0.0, np.cumsum(delta_s / per_group[g_s])]
    approx = float((base / per_group).sum()) + running[ends + 1]
    slack = (diff.size + n_groups + 2) * n_groups * 2.0 ** -50   # > the rounding
    near = np.flatnonzero(approx >= approx.max() - slack)

    # exactly, for those: numerators summed per distinct P_g, over a common denominator
    dens, cls = np.unique(per_group, return_inverse=True)
    cls = cls.ravel()
    cls_s = cls[g_s]
    lcm = math.lcm(*(int(d) for d in dens))
    exact = np.zeros(near.size, dtype=object)
    for c, d in enumerate(dens):
        start = int(base[cls == c].sum())
        csum = np.r_[0, np.cumsum(np.where(cls_s == c, delta_s, 0))]
        exact = exact + (start + csum[ends[near] + 1]).astype(object) * (lcm // int(d))
    top = max(exact)
    best = next(k for k, v in enumerate(exact) if v == top)   # the first: smallest ε
    epsilon = float(cands[near[best]])
    value = Fraction(int(exact[best]), lcm * n_groups)
    return TieCalibration(epsilon, value.numerator, value.denominator, n_groups,
                          _acc_eq_counts(m, h, i, j, epsilon))


@dataclass(frozen=True, eq=False)
class CalibrationSide:
    """The measures' side of :func:`tie_calibrations` (it does not depend
    on the human scores): the pairs' grouping, |m_i − m_j| (M × P), the
    signs of m_i − m_j and each row's order of the differences (numpy's
    argsort, made when first read) — made once for the criteria that judge
    the same cells."""

    grouping: GroupPairs
    diff: np.ndarray
    sm: np.ndarray
    memo: dict = field(default_factory=dict, repr=False)

    @property
    def order(self) -> np.ndarray:
        if "order" not in self.memo:
            # the order within equal differences never shows
            self.memo["order"] = np.argsort(self.diff, axis=1)
        return self.memo["order"]


def calibration_side(metrics, groups: Optional[Sequence] = None) -> CalibrationSide:
    """:class:`CalibrationSide` of ``metrics`` (N × M finite) grouped by
    ``groups``."""
    ms = np.asarray(metrics, dtype=np.float64)
    grouping = _grouping(groups, ms.shape[0])
    i, j = grouping.i, grouping.j
    mi, mj = ms[i].T, ms[j].T                                     # M × P
    return CalibrationSide(grouping, np.abs(mi - mj),
                           (mi > mj).astype(np.int8) - (mi < mj).astype(np.int8))


def tie_calibrations(metrics, human, groups: Optional[Sequence] = None,
                     side: Optional[CalibrationSide] = None) -> List[TieCalibration]:
    """:func:`tie_calibration` of each column of ``metrics`` (N × M: M
    measures' scores of the same N items, ``human`` (N,), one grouping):
    the same results, every measure's pairs sorted, summed and searched at
    once (issue 36: one call per measure cost more than its arithmetic);
    only the near-best candidates of each are decided exactly, as there.
    ``side``: the :func:`calibration_side` of ``metrics`` and ``groups``
    when the caller has it (several criteria's human scores against the
    same measures)."""
    ms, h = _checked_scores(metrics, human)
    n_m = ms.shape[1]
    if not n_m:
        return []
    if side is None:
        side = calibration_side(ms, groups)
    grouping = side.grouping
    i, j = grouping.i, grouping.j
    if not i.size:
        return [TieCalibration(0.0, 0, 0, 0, AccEq(0, 0, 0, 0, 0)) for _ in range(n_m)]
    g, n_groups, per_group = grouping.pair_groups
    diff, sm = side.diff, side.sm
    htie = h[i] == h[j]
    sh = _order(h, i, j)
    con = ~htie[None, :] & (diff > 0) & (sm == sh[None, :])
    delta = htie.astype(np.int64)[None, :] - con

    lcm = math.lcm(*(int(d) for d in np.unique(per_group)))
    if lcm * n_groups < 2 ** 62:
        # compiled: every candidate's objective an exact integer
        from qarla_spark.measures.pair_counts import calibrate
        found = calibrate(diff, con, htie, (lcm // per_group)[g].astype(np.int64),
                          lambda: side.order)
        if found is not None:
            best, eps_at = found
            chosen = [(float(e), Fraction(int(v), lcm * n_groups)) for v, e in zip(best, eps_at)]
            return _with_counts(chosen, diff, sm, sh, htie, n_groups)
    order = side.order                   # the order within equal differences never shows
    diff_s = np.take_along_axis(diff, order, axis=1)
    delta_s = np.take_along_axis(delta, order, axis=1)
    g_s = g[order]
    n_p = diff.shape[1]
    # candidate k of the running sums: ε = diff_s[k − 1] where pair k − 1 is
    # the last of its difference; k = 0: ε = 0 when no pair differs by 0
    valid = np.zeros((n_m, n_p + 1), dtype=bool)
    valid[:, 1:] = np.c_[diff_s[:, 1:] != diff_s[:, :-1], np.ones(n_m, dtype=bool)]
    valid[:, 0] = diff_s[:, 0] != 0.0
    base = np.stack([np.bincount(g, weights=con[m], minlength=n_groups)
                     for m in range(n_m)]).astype(np.int64)                 # M × G
    running = np.zeros((n_m, n_p + 1))
    running[:, 1:] = np.cumsum(delta_s / per_group[g_s], axis=1)
    approx = (base / per_group).sum(axis=1)[:, None] + running
    slack = (n_p + n_groups + 2) * n_groups * 2.0 ** -50
    top = np.where(valid, approx, -np.inf).max(axis=1)
    near = valid & (approx >= (top - slack)[:, None])

    dens, cls = np.unique(per_group, return_inverse=True)
    cls = cls.ravel()
    cls_s = cls[g_s]
    lcm = math.lcm(*(int(d) for d in dens))
    starts = [base[:, cls == c].sum(axis=1) for c in range(len(dens))]
    csums = []
    for c in range(len(dens)):
        cs = np.zeros((n_m, n_p + 1), dtype=np.int64)
        cs[:, 1:] = np.cumsum(np.where(cls_s == c, delta_s, 0), axis=1)
        csums.append(cs)
    chosen = []
    for m in range(n_m):
        at = np.flatnonzero(near[m])                   # ascending ε
        exact = np.zeros(at.size, dtype=object)
        for c, d in enumerate(dens):
            exact = exact + (int(starts[c][m]) + csums[c][m, at]).astype(object) * (lcm // int(d))
        best_value = max(exact)
        k = int(at[next(q for q, v in enumerate(exact) if v == best_value)])
        epsilon = float(diff_s[m, k - 1]) if k > 0 else 0.0
        chosen.append((epsilon, Fraction(int(best_value), lcm * n_groups)))
    return _with_counts(chosen, diff, sm, sh, htie, n_groups)


@dataclass(frozen=True)
class PointCalibration:
    """A :class:`TieCalibration`'s ``epsilon`` and ``value`` (the same
    doubles) without its counts: what a statistic's point value reads (the
    chance baseline's random measures)."""

    epsilon: float
    value: float


def _checked_scores(metrics, human) -> Tuple[np.ndarray, np.ndarray]:
    """(metrics as N × M doubles, human as N doubles) of the tie
    calibrations, checked: two dimensions, the same N, finite."""
    ms = np.asarray(metrics, dtype=np.float64)
    if ms.ndim != 2:
        raise ValueError("metrics must be (items × measures)")
    h = np.asarray(human, dtype=np.float64).ravel()
    if h.size != ms.shape[0]:
        raise ValueError(f"metric and human scores differ in length ({ms.shape[0]} vs {h.size})")
    if not (np.isfinite(ms).all() and np.isfinite(h).all()):
        raise ValueError("scores must be finite (drop missing judgments before)")
    return ms, h


def tie_calibration_points(metrics, human, groups: Optional[Sequence] = None
                           ) -> List[PointCalibration]:
    """:func:`tie_calibrations`' ε and value of each column of ``metrics``
    (N × M), the same doubles, without the counts at ε: with numba, the
    pairs' differences and each measure's search in two compiled passes
    (:func:`~qarla_spark.measures.pair_counts.pair_differences`,
    :func:`~qarla_spark.measures.pair_counts.calibrate_pairs`: the signs
    and concordances decided in the kernel, not kept as M × P arrays) and
    numpy's sort of the differences between; else (or when the exact
    objective would not fit int64) :func:`tie_calibrations`' own."""
    from qarla_spark.measures import pair_counts
    ms, h = _checked_scores(metrics, human)
    n_m = ms.shape[1]
    grouping = _grouping(groups, ms.shape[0])
    i, j = grouping.i, grouping.j
    if n_m and i.size and pair_counts.BACKEND == "numba":
        g, n_groups, per_group = grouping.pair_groups
        lcm = math.lcm(*(int(d) for d in np.unique(per_group)))
        if lcm * n_groups < 2 ** 62:
            diff = pair_counts.pair_differences(ms, i, j)
            # numpy's sort of every row at once, of integer keys when the
            # differences are integers at one scale (the order within
            # equal differences never shows)
            keys = pair_counts.sorted_pair_keys(diff)
            order, bits = (np.argsort(diff, axis=1), 0) if keys is None else keys
            found = pair_counts.calibrate_pairs(
                ms, i, j, _order(h, i, j), h[i] == h[j], (lcm // per_group)[g],
                diff, order, bits)
            if found is not None:
                den = lcm * n_groups
                # int / int: the correctly rounded quotient, as _ratio's of
                # the reduced fraction
                return [PointCalibration(e, _ratio(v, den))
                        for v, e in zip(found[0].tolist(), found[1].tolist())]
    return [PointCalibration(c.epsilon, c.value) for c in tie_calibrations(ms, h, grouping)]


def _with_counts(chosen, diff, sm, sh, htie, n_groups) -> List[TieCalibration]:
    """The calibrations (ε, value) of every measure with acc_eq's counts at
    each chosen ε (:func:`_acc_eq_counts` of every measure at once)."""
    eps = np.asarray([e for e, _ in chosen], dtype=np.float64)[:, None]
    mtie = diff <= eps
    same = sm == sh[None, :]
    n_both = np.count_nonzero(mtie & htie[None, :], axis=1)
    n_mt = np.count_nonzero(mtie, axis=1) - n_both
    n_ht = int(np.count_nonzero(htie)) - n_both
    ordered = ~mtie & ~htie[None, :]
    con_n = np.count_nonzero(ordered & same, axis=1)
    dis_n = np.count_nonzero(ordered, axis=1) - con_n
    return [TieCalibration(epsilon, value.numerator, value.denominator, n_groups,
                           AccEq(int(con_n[m]), int(dis_n[m]), int(n_ht[m]), int(n_mt[m]),
                                 int(n_both[m])))
            for m, (epsilon, value) in enumerate(chosen)]


def acc_eq_by_groups(metrics, human, groups, epsilons,
                     side: Optional[CalibrationSide] = None) -> Tuple[np.ndarray, np.ndarray,
                                                                      np.ndarray]:
    """:func:`acc_eq_by_group` of each column of ``metrics`` (N × M) at its
    ``epsilons[m]``: (group labels, correct (G × M), pairs (G,)) — the
    groups with a pair, the same for every measure. ``side``: the
    :func:`calibration_side` of ``metrics`` and ``groups`` when the caller
    has it (its |m_i − m_j| and signs: the same differences, not made
    again)."""
    ms = np.asarray(metrics, dtype=np.float64)
    h = np.asarray(human, dtype=np.float64).ravel()
    grouping = side.grouping if side is not None else _grouping(groups, h.size)
    names, codes, i, j = grouping.names, grouping.codes, grouping.i, grouping.j
    g = codes[i]
    sh = _order(h, i, j)
    eps = np.asarray(epsilons, dtype=np.float64)
    if side is not None:
        # |m_i − m_j| and sign(m_i − m_j) of the same subtraction (M × P)
        mtie = side.diff.T <= eps[None, :]
        sm = np.where(mtie, 0, side.sm.T)
    else:
        diff = ms[i] - ms[j]                                       # P × M
        mtie = np.abs(diff) <= eps[None, :]
        sm = np.where(mtie, 0, np.sign(diff).astype(np.int8))
    right = (sm == sh[:, None]).astype(np.int64)
    correct = np.zeros((names.size, ms.shape[1]), dtype=np.int64)
    if g.size:
        # each group's integer sums by reduceat over the pairs in group
        # order (np.add.at, unbuffered, costs ~10x: the same integers)
        order = np.argsort(g, kind="stable")
        sg = g[order]
        starts = np.flatnonzero(np.r_[True, sg[1:] != sg[:-1]])
        correct[sg[starts]] = np.add.reduceat(right[order], starts, axis=0)
    pairs = np.bincount(g, minlength=names.size)
    has = pairs > 0
    return names[has], correct[has], pairs[has].astype(np.int64)


def acc_eq_by_group(metric, human, groups, epsilon: float) -> Tuple[np.ndarray, np.ndarray,
                                                                        np.ndarray]:
    """(group labels, correct (G,), pairs (G,)): acc_eq's sufficient
    statistics at ``epsilon`` within each group that has a pair (pairs
    formed within a group only, as :func:`tie_calibration`), groups in
    sorted order; correct = concordant + both tie. The per-group values
    correct/pairs are the terms :func:`tie_calibration` averages."""
    m, h = _vectors(metric, human)
    grouping = _grouping(groups, m.size)
    names, codes, i, j = grouping.names, grouping.codes, grouping.i, grouping.j
    g = codes[i]
    sh, diff = _order(h, i, j), m[i] - m[j]
    mtie = np.abs(diff) <= float(epsilon)
    sm = np.where(mtie, 0, np.sign(diff).astype(np.int8))
    correct = np.bincount(g, weights=(sm == sh), minlength=names.size).astype(np.int64)
    pairs = np.bincount(g, minlength=names.size)
    has = pairs > 0
    return names[has], correct[has], pairs[has].astype(np.int64)


# ---------------------------------------------------------------------------
# soft pairwise accuracy (Thompson et al. 2024)
# ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class PairwisePValues:
    """``at_least[i, j]`` = how many of the ``replicates`` null differences
    of systems i and j reach the observed one; p[i, j] = at_least[i, j] /
    replicates, the p-value of "i is better than j" (the diagonal means
    nothing)."""

    at_least: np.ndarray
    replicates: int

    @property
    def p(self) -> np.ndarray:
        return self.at_least / self.replicates


def pairwise_p_values(observed, resampled) -> PairwisePValues:
    """One-sided p-values of "system i is better than system j" for every
    pair (Thompson et al. 2024, "Improving Statistical Significance in
    Human Evaluation of Automatic Metrics via Soft Pairwise Accuracy", §3;
    mt-metrics-eval's ``pce.compute_pairwise_p_values``):

        p_ij = #{b : r_bi − r_bj ≥ o_i − o_j} / B

    ``observed`` (n,): the systems' scores o; ``resampled`` (B × n): their
    scores r under the null — for the paper's paired permutation test, one
    sign pattern s_b per replicate flipping every system's per-item scores
    at once (r_bi = Σ_t s_bt·x_it, o_i = Σ_t x_it; e.g. the patterns of
    :func:`~qarla_spark.measures.resampling.sign_flips`). As in the paper,
    the B replicates are the random ones only: the observed pattern is not
    added, and a null difference equal to the observed one counts whole.
    Computed as the caller computed them: equal doubles compare equal."""
    o = np.asarray(observed, dtype=np.float64).ravel()
    r = np.asarray(resampled, dtype=np.float64)
    if r.ndim != 2 or r.shape[1] != o.size or not r.shape[0]:
        raise ValueError("resampled must be (replicates × systems) with at least one replicate")
    if not (np.isfinite(o).all() and np.isfinite(r).all()):
        raise ValueError("scores must be finite")
    counts = np.count_nonzero(r[:, :, None] - r[:, None, :] >= o[:, None] - o[None, :],
                              axis=0).astype(np.int64)
    return PairwisePValues(counts, int(r.shape[0]))


PValues = Union[PairwisePValues, np.ndarray, Sequence[Sequence[float]]]


def _upper_fractions(p: PValues) -> list:
    """The exact p-values of the pairs i < j, row by row."""
    if isinstance(p, PairwisePValues):
        i, j = _pairs(p.at_least.shape[0])
        return [Fraction(int(k), p.replicates) for k in p.at_least[i, j]]
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError("p-values must be a square (systems × systems) matrix")
    i, j = _pairs(arr.shape[0])
    upper = arr[i, j]
    if not ((upper >= 0) & (upper <= 1)).all():
        raise ValueError("p-values must lie in [0, 1]")
    return [Fraction(float(x)) for x in upper]


def soft_pairwise_accuracy(p_metric: PValues, p_human: PValues) -> float:
    """Soft pairwise accuracy (Thompson et al. 2024, §3):

        SPA = 1 − mean over system pairs i < j of |p^metric_ij − p^human_ij|

    from the one-sided p-values of "i is better than j" under each side's
    scores (:func:`pairwise_p_values`, or square matrices whose upper
    triangles hold them), the systems in the same order on both sides.
    Exact (count ratios, or the doubles' values) and rounded once; NaN for
    fewer than two systems."""
    if isinstance(p_metric, PairwisePValues) and isinstance(p_human, PairwisePValues) \
            and p_metric.replicates == p_human.replicates \
            and p_metric.at_least.shape == p_human.at_least.shape:
        # one denominator: 1 − Σ|a_m − a_h| / (B·P) in integers, the same value
        i, j = _pairs(p_metric.at_least.shape[0])
        if not i.size:
            return NAN
        scale = p_metric.replicates * i.size
        distance = int(np.abs(p_metric.at_least[i, j] - p_human.at_least[i, j]).sum())
        return (scale - distance) / scale
    pm, ph = _upper_fractions(p_metric), _upper_fractions(p_human)
    if len(pm) != len(ph):
        raise ValueError("the two p-value matrices have different numbers of systems")
    if not pm:
        return NAN
    distance = sum((abs(a - b) for a, b in zip(pm, ph)), Fraction(0)) / len(pm)
    spa = 1 - distance
    return spa.numerator / spa.denominator


def soft_pairwise_accuracy_many(at_least, replicates: int, p_human: PairwisePValues
                                ) -> List[float]:
    """:func:`soft_pairwise_accuracy` of each measure's counts ``at_least``
    (K × S × S, of ``replicates`` sign patterns) against ``p_human``: the
    same doubles, every measure's distance summed at once (integers)."""
    at_least = np.asarray(at_least)
    if not (isinstance(p_human, PairwisePValues) and p_human.replicates == replicates
            and at_least.shape[1:] == p_human.at_least.shape):
        return [soft_pairwise_accuracy(PairwisePValues(a, replicates), p_human)
                for a in at_least]
    i, j = _pairs(p_human.at_least.shape[0])
    return soft_pairwise_accuracy_upper(at_least[:, i, j], replicates, p_human.at_least[i, j])


def soft_pairwise_accuracy_upper(at_least, replicates: int, human) -> List[float]:
    """:func:`soft_pairwise_accuracy_many` of the counts of the pairs i < j
    only (``np.triu_indices`` order): each measure's ``at_least`` (K × P)
    against the humans' (P,), of ``replicates`` sign patterns — the same
    doubles (the same integer distances)."""
    at_least = np.asarray(at_least)
    human = np.asarray(human)
    if not human.size:
        return [NAN] * len(at_least)
    scale = replicates * human.size
    distance = np.abs(at_least - human[None, :]).sum(axis=1)
    return [(scale - d) / scale for d in distance.tolist()]


# ---------------------------------------------------------------------------
# significance clusters (mt-metrics-eval)
# ---------------------------------------------------------------------------

def significantly_better(p, alpha: float = ALPHA) -> np.ndarray:
    """better[i, j] = p[i, j] ≤ alpha, from p-values of "i is better than
    j" (mt-metrics-eval's ``data.AssignRanks``: a p-value equal to alpha is
    significant)."""
    return np.asarray(p, dtype=np.float64) <= alpha


def significance_clusters(values: Sequence[float], better,
                          names: Optional[Sequence[str]] = None) -> Tuple[int, ...]:
    """Ranks of significance clusters, 1 the top (mt-metrics-eval,
    ``data.AssignRanks`` after ``data.CompareMetrics``; WMT metrics tasks):
    the measures sorted by decreasing value, equal values by name (by
    position without ``names``); walking down, a measure opens the next
    rank when some member of the current cluster — any member, not only
    its top — is significantly better than it (``better[k][i]``, e.g.
    :func:`significantly_better`); else it joins the cluster. Only pairs
    in sorted order are read: ``better[k][i]`` with k above i. Returns the
    rank of each measure in the order given."""
    vals = [float(v) for v in values]
    if any(math.isnan(v) for v in vals):
        raise ValueError("values must not be NaN")
    keys = list(names) if names is not None else list(range(len(vals)))
    if len(keys) != len(vals):
        raise ValueError("one name per value")
    sig = np.asarray(better, dtype=bool)
    if sig.shape != (len(vals), len(vals)):
        raise ValueError("better must be a square (measures × measures) matrix")
    order = sorted(range(len(vals)), key=lambda k: (-vals[k], keys[k]))
    # for each measure in sorted order, the last one above it that is
    # significantly better than it (-1: none): "some member of the current
    # cluster is better" is "that one is in the cluster"
    n = len(vals)
    at = np.asarray(order, dtype=np.intp)
    row = np.arange(n)[:, None]
    last = np.where(sig[np.ix_(at, at)] & (row < np.arange(n)[None, :]), row, -1
                    ).max(axis=0, initial=-1).tolist()
    ranks = [0] * n
    rank, start = 1, 0
    for pos, k in enumerate(order):
        if last[pos] >= start:
            rank, start = rank + 1, pos
        ranks[k] = rank
    return tuple(ranks)


def paired_bootstrap_p(replicates) -> np.ndarray:
    """p[a, b]: the paired bootstrap p-value of "measure a is better than
    measure b" (Koehn 2004; Efron & Tibshirani 1993, §16.4), from the
    replicates (B × M) of the measures' statistic under the same resamples
    of the topics: (1 + #{b : r_ba ≤ r_bb}) / (1 + B'), over the B'
    replicates where both are finite (a tie counts against "better"; 1 when
    no replicate has both). The diagonal means nothing."""
    from qarla_spark.measures.pair_counts import not_better
    r = np.asarray(replicates, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError("replicates must be (B × measures)")
    counts, both = not_better(r)
    return (1 + counts) / (1 + both)


def benjamini_hochberg(p) -> np.ndarray:
    """Benjamini & Hochberg (1995) adjusted p-values of a family (any
    shape, NaN left out): p_(k)·m/k made monotone from the largest down,
    at most 1."""
    p = np.asarray(p, dtype=np.float64)
    flat = p.ravel()
    out = np.full(flat.shape, NAN)
    at = np.flatnonzero(np.isfinite(flat))
    if at.size:
        order = at[np.argsort(flat[at], kind="stable")]
        scaled = flat[order] * at.size / np.arange(1, at.size + 1)
        out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out.reshape(p.shape)


@dataclass(frozen=True)
class Clusters:
    """Significance clusters of measures: ``ranks`` (1 the top cluster) and
    the adjusted p-values of "row better than column" that decided them
    (pairs in sorted order only; NaN elsewhere)."""

    ranks: Tuple[int, ...]
    p_adjusted: np.ndarray


def rank_clusters(values: Sequence[float], replicates, names: Sequence[str],
                  alpha: float = ALPHA) -> Clusters:
    """:func:`significance_clusters` of measures with point ``values`` and
    bootstrap ``replicates`` (B × M, the same resamples for all): the
    paired bootstrap p-value of every pair in sorted order (higher value
    first, ties by name; :func:`paired_bootstrap_p`), adjusted together by
    :func:`benjamini_hochberg` (M(M−1)/2 tests), significant at ≤ alpha."""
    vals = np.asarray(values, dtype=np.float64)
    order = sorted(range(vals.size), key=lambda k: (-vals[k], names[k]))
    p = paired_bootstrap_p(replicates)
    position = np.empty(vals.size, dtype=np.intp)
    position[np.asarray(order, dtype=np.intp)] = np.arange(vals.size)
    above = position[:, None] < position[None, :]               # k before i in sorted order
    adjusted = np.where(above, benjamini_hochberg(np.where(above, p, NAN)), NAN)
    better = np.where(above, adjusted <= alpha, False)
    return Clusters(significance_clusters(vals, better, names), adjusted)


# ---------------------------------------------------------------------------
# chance baseline
# ---------------------------------------------------------------------------

def chance_scores(seed: int, label: Union[str, Sequence[str]], shape) -> np.ndarray:
    """Random metric scores, uniform in [0, 1), for a chance baseline: the
    same for the same (seed, label) in any process or numpy version (the
    raw output of the Philox generator keyed by a BLAKE2b hash of the seed
    and the label's parts, e.g. (task, criterion), :func:`~qarla_spark.
    measures.resampling.uniforms`; never Python's salted ``hash``). The
    chance band is the caller's: the statistic over many draws (label
    parts such as the draw's number)."""
    parts = (label,) if isinstance(label, str) else tuple(str(x) for x in label)
    shape = tuple(int(s) for s in np.atleast_1d(shape))
    return uniforms(int(seed), ("chance",) + parts, math.prod(shape)).reshape(shape)


def chance_scores_many(seed: int, labels: Sequence[Sequence[str]], shape) -> np.ndarray:
    """(len(labels), *shape): :func:`chance_scores` of each label, every
    stream at once (the same doubles)."""
    from qarla_spark.measures.resampling import uniforms_many
    shape = tuple(int(s) for s in np.atleast_1d(shape))
    parts = [("chance",) + tuple(str(x) for x in label) for label in labels]
    return uniforms_many(int(seed), parts, math.prod(shape)).reshape((len(labels),) + shape)
