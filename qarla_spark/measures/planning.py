"""Planning the next shared task (issue 40, first increment): how many
topics a testbed needs for its system comparisons to hold, as pure numpy
functions of one task's per-topic system scores under one measure (a
(topics × systems) matrix of doubles, NaN where a system has no summary).

**Trials.** For each size n of a grid and each trial r, a sample of n of
the testbed's T topics, drawn from the uniforms of the stream keyed by
(seed, "plan", task, measure, n, r)
(:func:`~qarla_spark.measures.resampling.uniforms_many`, every stream at
once; the topics in code-point order of their names when given, so the
draws depend on no input order and no partitioning): the first T words
rank the topics (a random permutation: ``argsort``); n ≤ T takes the first
n of that permutation (without replacement), n > T takes ⌊u·T⌋ of the next
n words (with replacement: the testbed's topics stand for the population,
the size is *extrapolated*). With ``replace="always"`` every size draws
with replacement (the bootstrap's picture of a new testbed of n topics).

**Per trial.** A system's mean is over its drawn topics (a topic drawn twice
counts twice). Each pair (i, j) is *ordered* by the sign of mean_i − mean_j,
decided exactly (the sums as exact 28-bit pieces of the doubles,
:func:`~qarla_spark.measures.resampling.level_parts`, compared as
n_j·S_i − n_i·S_j with carries: no rounding can split or make a tie); the
full testbed's order is the same function with every topic once. The paired
t-test at 5% (two-sided) over the drawn topics both systems have: reject
when t² > c², written S1²(m − 1 + c²) > c²·m·S2 (S1, S2 the sums of the
differences and of their squares, m the topics, c Student's 97.5% quantile
with m − 1 degrees of freedom): no division, a constant difference with m ≥
2 rejects, a zero one does not.

**Per size** (counts over trials, the probabilities their ratios):

- ``p_same_order[i, j]``: (2·#{trial order = full order} + #{trial tie}) /
  (2·trials) — a tie in a trial counts ½, as a metric tie does in pairwise
  accuracy; NaN for a pair tied on the full testbed (no order to keep);
- ``p_significant[i, j]``: the share of trials whose test rejects in the
  full testbed's direction (power; a rejection the other way is not
  counted); for a tied pair, rejections either way (its false alarms);
- ``stable``: Riley et al. (2024)'s stable ranking probability, read as:
  two disjoint halves of n topics each (the first 2n topics of the trial's
  permutation when 2n ≤ T; else two independent draws with replacement,
  marked ``halves_extrapolated``) order *every* pair of systems the same way
  (equal signs, a tie only with a tie); ``stable_significant``: the halves'
  conclusions (a significantly better, b significantly better, no
  significant difference) are identical for every pair;
- ``ci_width[i, j]``: the mean over trials of the width of the 95%
  t-interval of the pair's mean difference (the exact mean of the widths,
  rounded once: :func:`~qarla_spark.measures.resampling.real_means`).

:func:`smallest_n`: the smallest n from which a curve stays at or above a
target (80%), interpolated linearly between the two grid sizes around its
last crossing and rounded up; ``reached`` False when the grid's largest size
is below it. :func:`plan_best_cases`: how often the testbed's best set by
KING (the QARLA stage's choice among every subset of the representatives)
is still the best on n topics, from the topics' KING cases, exactly.
:func:`plan_pairwise_accuracy`: how wide the 95% interval of a measure's
system-level pairwise accuracy against a human criterion is on n topics —
the central 95% of its values over trials of n topics drawn with
replacement (a simulation of its own: pairwise accuracy is not a mean over
topics).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from qarla_spark.measures import human as hu
from qarla_spark.measures import resampling as rs
from qarla_spark.names import SEPARATOR

ALPHA = 0.05
TARGET = 0.8
#: draws of sizes above the testbed's: with replacement beyond it (default),
#: or at every size
BEYOND, ALWAYS = "beyond", "always"
_CHUNK = 28
_MASK = (1 << _CHUNK) - 1


# ---------------------------------------------------------------------------
# Student's t quantile (no scipy in the package)
# ---------------------------------------------------------------------------

def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function
    (modified Lentz evaluation)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's T with ``df`` degrees of freedom."""
    return incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


@functools.lru_cache(maxsize=4096)
def t_critical(df: int, alpha: float = ALPHA) -> float:
    """c with P(|T| ≥ c) = alpha (bisection on :func:`t_two_sided_p` to the
    last bit)."""
    if df < 1:
        return math.inf
    low, high = 0.0, 1.0
    while t_two_sided_p(high, df) > alpha:
        high *= 2.0
    while True:
        middle = 0.5 * (low + high)
        if middle in (low, high):
            return high
        if t_two_sided_p(middle, df) > alpha:
            low = middle
        else:
            high = middle


def _critical_squares(m: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """c² for m − 1 degrees of freedom, element by element (inf for m < 2)."""
    m = np.asarray(m, dtype=np.int64)
    out = np.full(m.shape, math.inf)
    for value in np.unique(m):
        if value >= 2:
            out[m == value] = t_critical(int(value) - 1, alpha) ** 2
    return out


def paired_t_rejects(s1, s2, m, alpha: float = ALPHA) -> np.ndarray:
    """The two-sided paired t-test at ``alpha`` from the sums of the
    differences ``s1``, of their squares ``s2`` and their number ``m``:
    S1²(m − 1 + c²) > c²·m·S2 (t² > c² without a division); never for m < 2."""
    s1 = np.asarray(s1, dtype=np.float64)
    s2 = np.asarray(s2, dtype=np.float64)
    m = np.asarray(m, dtype=np.int64)
    c2 = _critical_squares(m, alpha)
    ok = m >= 2
    mf = m.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        out = s1 * s1 * (mf - 1.0 + c2) > c2 * mf * s2
    return out & ok


def t_interval_width(s1, s2, m, alpha: float = ALPHA) -> np.ndarray:
    """Width of the t-interval of the mean difference, 2c·sd/√m (NaN for
    m < 2; a negative rounding of the variance counts as 0)."""
    s1 = np.asarray(s1, dtype=np.float64)
    s2 = np.asarray(s2, dtype=np.float64)
    m = np.asarray(m, dtype=np.int64)
    mf = m.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum(s2 - s1 * s1 / mf, 0.0) / (mf - 1.0)
        width = 2.0 * np.sqrt(_critical_squares(m, alpha) * var / mf)
    return np.where(m >= 2, width, math.nan)


# ---------------------------------------------------------------------------
# draws
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Draws:
    """The topics of every trial of one size (positions in code-point
    order of the topics' names): ``sample`` (trials × n), ``half1`` and
    ``half2`` (trials × n) for the stable ranking."""

    n: int
    sample: np.ndarray
    half1: np.ndarray
    half2: np.ndarray
    extrapolated: bool
    halves_extrapolated: bool


def stream_labels(task: str, measure: str, n: int, trials: int):
    """The stream labels of size n's trials (after the seed)."""
    return [("plan", str(task), str(measure), str(int(n)), str(r)) for r in range(int(trials))]


def draw_topics(seed: int, task: str, measure: str, n_topics: int, n: int, trials: int,
                replace: str = BEYOND) -> Draws:
    """The trials' topics of size n (module doc), every trial at once."""
    if replace not in (BEYOND, ALWAYS):
        raise ValueError(f"replace must be {BEYOND!r} or {ALWAYS!r}")
    n, n_topics, trials = int(n), int(n_topics), int(trials)
    if n < 1 or n_topics < 1:
        raise ValueError("sizes and topics must be positive")
    u = rs.uniforms_many(seed, stream_labels(task, measure, n, trials), n_topics + 2 * n)
    with_replacement = np.minimum((u[:, n_topics:] * n_topics).astype(np.int64), n_topics - 1)
    extrapolated = replace == ALWAYS or n > n_topics
    halves_extrapolated = replace == ALWAYS or 2 * n > n_topics
    if extrapolated:                  # then the halves are too (2n > n > topics)
        sample = with_replacement[:, :n]
        half1, half2 = sample, with_replacement[:, n:]
        return Draws(n, sample, half1, half2, extrapolated, halves_extrapolated)
    order = np.argsort(u[:, :n_topics], axis=1, kind="stable")
    sample = order[:, :n]
    if halves_extrapolated:
        half1, half2 = with_replacement[:, :n], with_replacement[:, n:]
    else:
        half1, half2 = sample, order[:, n:2 * n]
    return Draws(n, sample, half1, half2, extrapolated, halves_extrapolated)


def topic_counts(positions: np.ndarray, n_topics: int) -> np.ndarray:
    """(trials × topics) int64: how often each topic is drawn."""
    positions = np.asarray(positions, dtype=np.int64)
    rows = positions.shape[0]
    flat = (positions + n_topics * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n_topics).reshape(rows, n_topics)


# ---------------------------------------------------------------------------
# exact orders and the paired test, many trials at once
# ---------------------------------------------------------------------------

def _normalise(digits):
    """Base-2^28 digits (int64 arrays, lowest first) carried: every digit in
    [0, 2^28) and a final carry of 0 or −1 (value Σ d_l·2^(28l) + c·2^(28L))."""
    out = []
    carry = np.zeros_like(digits[0])
    for d in digits:
        v = d + carry
        out.append(v & _MASK)
        carry = v >> _CHUNK
    while not ((carry == 0) | (carry == -1)).all():
        out.append(carry & _MASK)
        carry = carry >> _CHUNK
    return out, carry


def _sign(digits) -> np.ndarray:
    digits, carry = _normalise(digits)
    nonzero = np.zeros(carry.shape, dtype=bool)
    for d in digits:
        nonzero |= d != 0
    return np.where(carry < 0, -1, np.where(nonzero, 1, 0)).astype(np.int8)


def _system_digits(values, present, weights):
    """(digits, counts): each system's weighted sum over its present topics
    as normalised base-2^28 digits (B × S each, lowest first, the last the
    carry of 0 or −1), and its counts (B × S)."""
    values = np.where(present, values, 0.0)
    base, parts, _ = rs.level_parts(values, weights, _CHUNK)
    n_b, n_s = weights.shape[0], values.shape[1]
    by_level = {level // _CHUNK: part for level, part in parts}
    top = max(by_level, default=0)
    digits = [by_level.get(k, np.zeros((n_b, n_s), dtype=np.int64)) for k in range(top + 1)]
    digits, carry = _normalise(digits)
    counts = weights @ present.astype(np.int64)
    return digits + [carry], counts


def pair_signs(values, present, weights, i, j) -> np.ndarray:
    """(B × P) int8: sign(mean_i − mean_j) of the weighted means (weights B
    × T of topic multiplicities) over each system's present topics, exact;
    0 for a tie or when either system has no topic."""
    values = np.asarray(values, dtype=np.float64)
    present = np.asarray(present, dtype=bool)
    weights = np.asarray(weights, dtype=np.int64)
    if int(weights.sum(axis=1).max(initial=0)) >= 1 << 16:
        raise ValueError("too many drawn topics for int64 comparisons")
    digits, counts = _system_digits(values, present, weights)
    ni, nj = counts[:, i], counts[:, j]
    diff = [nj * d[:, i] - ni * d[:, j] for d in digits]
    out = _sign(diff)
    return np.where((ni > 0) & (nj > 0), out, 0).astype(np.int8)


def human_means(values, present, weights) -> np.ndarray:
    """(B × S): each system's human score under each row of ``weights`` (B ×
    T topic multiplicities): the exact mean of its drawn cells' *readings*
    (a topic drawn twice counts twice), rounded once —
    :func:`~qarla_spark.measures.human.system_means`, the function whose
    doubles the run's statistics read (``metric_eval/``'s human system
    scores: thirds as thirds, not their rounded doubles); NaN for a system
    without a drawn cell."""
    values = np.asarray(values, dtype=np.float64)
    present = np.asarray(present, dtype=bool)
    weights = np.asarray(weights, dtype=np.int64)
    t_idx, s_idx = np.nonzero(present)
    return hu.system_means(values[t_idx, s_idx], (t_idx, s_idx), values.shape[1], weights,
                           rs.grouped_real_means)


def human_signs(values, present, weights, i, j) -> np.ndarray:
    """(B × P) int8: sign(h_i − h_j) of the human scores of
    :func:`human_means` — the run's rule for a human criterion: one double
    a system (the readings' exact mean, rounded once), two systems tied
    when their doubles are equal (equal rationals always are, whatever the
    rounding of the summaries' doubles: 0.1 + 0.2 ties 0.15 + 0.15); 0 when
    either system has no drawn cell."""
    means = human_means(values, present, weights)
    with np.errstate(invalid="ignore"):
        d = means[:, np.asarray(i)] - means[:, np.asarray(j)]
    return np.where(np.isfinite(d), np.sign(d), 0).astype(np.int8)


def system_signs(values, present, weights, i, j, human: bool = False) -> np.ndarray:
    """:func:`human_signs` for a human criterion, :func:`pair_signs` for a
    measure."""
    return (human_signs if human else pair_signs)(values, present, weights, i, j)


@dataclass(frozen=True)
class PairSums:
    """(B × P): the paired differences' sums, sums of squares, counts."""

    s1: np.ndarray
    s2: np.ndarray
    m: np.ndarray


def pair_differences(values, present, i, j) -> Tuple[np.ndarray, np.ndarray]:
    """(differences, both): (T × P) x_i − x_j (0 where either is missing)
    and where both are present."""
    values = np.asarray(values, dtype=np.float64)
    present = np.asarray(present, dtype=bool)
    both = present[:, i] & present[:, j]
    with np.errstate(invalid="ignore"):
        d = np.where(both, values[:, i] - values[:, j], 0.0)
    return d, both


def pair_sums(diffs, both, weights) -> PairSums:
    """The sums of the paired test (:func:`~qarla_spark.measures.resampling.
    replicate_sums`: the same bits whatever else is in the batch)."""
    weights = np.asarray(weights, dtype=np.int64)
    return PairSums(rs.replicate_sums(diffs, weights), rs.replicate_sums(diffs * diffs, weights),
                    weights @ both.astype(np.int64))


# ---------------------------------------------------------------------------
# the plan of one (task, measure)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SystemPlan:
    """Counts over ``trials`` trials per size (K sizes) and pair (P pairs
    i < j of ``systems`` in the order given); probabilities as properties."""

    systems: Tuple[str, ...]
    topics: Tuple[str, ...]
    sizes: np.ndarray                 # K
    trials: int
    i: np.ndarray                     # P
    j: np.ndarray                     # P
    full_order: np.ndarray            # P: sign(mean_i − mean_j) on the testbed
    rank: np.ndarray                  # S: 0 = best on the testbed (ties by name)
    extrapolated: np.ndarray          # K: n > topics (or replace="always")
    halves_extrapolated: np.ndarray   # K: 2n > topics (or replace="always")
    same_order2: np.ndarray           # K × P: 2·agreeing + tied trials
    significant: np.ndarray           # K × P: rejections in the full order's direction
    rejected: np.ndarray              # K × P: rejections either way
    stable_count: np.ndarray          # K
    stable_significant_count: np.ndarray  # K
    ci_width: np.ndarray              # K × P

    @property
    def adjacent(self) -> np.ndarray:
        """(P,) bool: the pair is adjacent in the testbed's ranking."""
        return np.abs(self.rank[self.i] - self.rank[self.j]) == 1

    @property
    def p_same_order(self) -> np.ndarray:
        out = self.same_order2 / (2.0 * self.trials)
        return np.where(self.full_order[None, :] == 0, math.nan, out)

    @property
    def p_significant(self) -> np.ndarray:
        return self.significant / float(self.trials)

    @property
    def p_rejected(self) -> np.ndarray:
        return self.rejected / float(self.trials)

    @property
    def stable(self) -> np.ndarray:
        return self.stable_count / float(self.trials)

    @property
    def stable_significant(self) -> np.ndarray:
        return self.stable_significant_count / float(self.trials)


def _canonical(scores, topics):
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError("scores must be (topics × systems)")
    if topics is None:                 # the rows' order
        return scores, tuple(str(t) for t in range(scores.shape[0]))
    topics = tuple(str(t) for t in topics)
    if len(topics) != scores.shape[0] or len(set(topics)) != len(topics):
        raise ValueError("one distinct topic name per row")
    order = sorted(range(len(topics)), key=lambda k: topics[k])
    return scores[order], tuple(topics[k] for k in order)


def plan_systems(scores, sizes: Sequence[int], trials: int, seed: int, task: str,
                 measure: str, systems: Optional[Sequence[str]] = None,
                 topics: Optional[Sequence[str]] = None, replace: str = BEYOND,
                 alpha: float = ALPHA, human: bool = False) -> SystemPlan:
    """The plan of one (task, measure) (module doc): ``scores`` (topics ×
    systems) doubles, NaN missing; ``sizes`` increasing; ``topics`` their
    names (the draws follow their code-point order; default: the rows').
    ``human``: the scores are a human criterion's, whose systems are
    ordered as the run orders them (:func:`human_signs`: the exact means
    of the scores' readings, rounded once, on the testbed and in every
    trial); the paired test is the same either way."""
    scores, topics = _canonical(scores, topics)
    n_t, n_s = scores.shape
    if systems is None:
        systems = tuple(str(s) for s in range(n_s))
    systems = tuple(systems)
    if len(systems) != n_s:
        raise ValueError("one system name per column")
    sizes = np.asarray([int(n) for n in sizes], dtype=np.int64)
    if sizes.size and (np.any(np.diff(sizes) <= 0) or sizes[0] < 1):
        raise ValueError("sizes must be positive and increasing")
    present = np.isfinite(scores)
    i, j = np.triu_indices(n_s, 1)
    full = system_signs(scores, present, np.ones((1, n_t), dtype=np.int64), i, j, human)[0]
    # the testbed's ranking: systems better, then the tied ones earlier by name
    rel = np.zeros((n_s, n_s), dtype=np.int8)
    rel[i, j], rel[j, i] = full, -full
    names = np.asarray(systems, dtype=object)
    rank = np.array([int(np.sum(rel[:, s] > 0))
                     + sum(1 for o in range(n_s) if rel[o, s] == 0 and o != s
                           and (names[o], o) < (names[s], s))
                     for s in range(n_s)], dtype=np.int64)
    diffs, both = pair_differences(scores, present, i, j)
    k, p = sizes.size, i.size
    shape = (k, p)
    same2 = np.zeros(shape, dtype=np.int64)
    significant = np.zeros(shape, dtype=np.int64)
    rejected = np.zeros(shape, dtype=np.int64)
    width = np.full(shape, math.nan)
    stable = np.zeros(k, dtype=np.int64)
    stable_sig = np.zeros(k, dtype=np.int64)
    extrapolated = np.zeros(k, dtype=bool)
    halves_extrapolated = np.zeros(k, dtype=bool)
    for row, n in enumerate(sizes):
        draws = draw_topics(seed, task, measure, n_t, int(n), trials, replace)
        extrapolated[row] = draws.extrapolated
        halves_extrapolated[row] = draws.halves_extrapolated
        conclusions = []
        for which, positions in enumerate((draws.sample, draws.half1, draws.half2)):
            if which == 1 and positions is draws.sample:
                conclusions.append(conclusions[0])
                continue
            w = topic_counts(positions, n_t)
            signs = system_signs(scores, present, w, i, j, human)
            sums = pair_sums(diffs, both, w)
            reject = paired_t_rejects(sums.s1, sums.s2, sums.m, alpha)
            direction = np.sign(sums.s1).astype(np.int8)
            if which == 0:
                same2[row] = (2 * np.sum((signs == full) & (full != 0), axis=0)
                              + np.sum(signs == 0, axis=0))
                significant[row] = np.sum(reject & ((direction == full) | (full == 0)), axis=0)
                rejected[row] = np.sum(reject, axis=0)
                if trials:
                    widths = t_interval_width(sums.s1, sums.s2, sums.m, alpha)
                    width[row] = rs.real_means(widths.T)
            conclusions.append((signs, np.where(reject, direction, 0)))
        (s1, c1), (s2, c2) = conclusions[1], conclusions[2]
        stable[row] = int(np.sum(np.all(s1 == s2, axis=1)))
        stable_sig[row] = int(np.sum(np.all(c1 == c2, axis=1)))
    return SystemPlan(systems, topics, sizes, int(trials), i, j, full, rank, extrapolated,
                      halves_extrapolated, same2, significant, rejected, stable, stable_sig,
                      width)


# ---------------------------------------------------------------------------
# the answers
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SmallestN:
    """``n``: the smallest size reaching the target (NaN when not reached;
    ``at_most``: the grid's first size already does, so n ≤ it);
    ``extrapolated``: n is beyond the testbed's topics."""

    n: float
    reached: bool
    at_most: bool
    extrapolated: bool


def smallest_n(sizes, probability, target: float = TARGET,
               n_topics: Optional[int] = None) -> SmallestN:
    """The smallest n from which the curve stays ≥ ``target``: after the
    last grid size below it (or undefined), linear interpolation between
    that size and the next, rounded up (the next size itself when the one
    below is undefined)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    p = np.asarray(probability, dtype=np.float64)
    ok = np.isfinite(p) & (p >= target)
    if not p.size or not ok[-1]:
        return SmallestN(math.nan, False, False, False)
    below = np.flatnonzero(~ok)
    if not below.size:
        n = float(sizes[0])
        at_most = True
    else:
        lo = int(below[-1])
        at_most = False
        if not np.isfinite(p[lo]):
            n = float(sizes[lo + 1])
        else:
            frac = (target - p[lo]) / (p[lo + 1] - p[lo])
            n = float(math.ceil(sizes[lo] + frac * (sizes[lo + 1] - sizes[lo]) - 1e-9))
            n = min(max(n, float(sizes[lo]) + 1.0), float(sizes[lo + 1]))
    extrapolated = n_topics is not None and n > n_topics
    return SmallestN(n, True, at_most, bool(extrapolated))


# ---------------------------------------------------------------------------
# metrics: does the best measure stay the best?
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class BestPlan:
    """``best``: the position of the testbed's best set (−1: no topic
    enters KING); ``stays_count`` (K,): the trials (of ``trials``) whose
    best is it too."""

    best: int
    sizes: np.ndarray
    trials: int
    extrapolated: np.ndarray
    stays_count: np.ndarray

    @property
    def p_stays_best(self) -> np.ndarray:
        return self.stays_count / float(self.trials)


def king_order_key(label: str) -> Tuple[int, str]:
    """A metric set's tie-break key from its label (``"a,b"``): fewer
    metrics, then the label in code-point order (the QARLA stage's
    :attr:`~qarla_spark.measures.metric_sets.MetricSet.tie_key`)."""
    return (len(label.split(SEPARATOR)), label)


def case_numerators(wins, models) -> Tuple[np.ndarray, np.ndarray, int]:
    """(scaled T × S int64, kept T int64, L): each topic's KING share
    wins/models over the common denominator L (the lcm of the topics'
    models), ``scaled[t, s] = wins[t, s]·L/models[t]``, and ``kept[t]`` 1
    where the topic enters KING (models > 0), else 0 (its row 0)."""
    wins = np.asarray(wins, dtype=np.int64)
    models = np.asarray(models, dtype=np.int64)
    if wins.ndim != 2 or models.shape != (wins.shape[0],):
        raise ValueError("wins (topics × sets) and models (topics,)")
    if np.any(models < 0) or np.any(wins < 0) or np.any(wins > models[:, None]):
        raise ValueError("KING's cases: 0 ≤ wins ≤ models per topic")
    kept = (models > 0).astype(np.int64)
    lcm = 1
    for d in np.unique(models[models > 0]):
        lcm = math.lcm(lcm, int(d))
    factor = np.where(models > 0, lcm // np.maximum(models, 1), 0)
    return wins * factor[:, None], kept, lcm


def king_winners(scaled, kept, lcm: int, weights) -> np.ndarray:
    """(B,) the best set (a column of ``scaled``, the columns in tie-break
    order) under each row of topic multiplicities ``weights`` (B × T): the
    largest KING — Σ_t w_t·wins/models over Σ_t w_t·kept, a denominator the
    sets share, so the largest Σ_t w_t·scaled[t, s] (integers, exact:
    :func:`~qarla_spark.measures.resampling.int_matmul`) — the earliest
    column among equal ones (the stage's ``best_of``: highest KING, then
    fewer metrics, then the name); −1 where no drawn topic enters KING.
    Equal integers are equal KING and, below 2^53 for the common
    denominator, distinct ones are distinct doubles too: the stage's
    comparison of its rounded-once KING decides the same."""
    weights = np.asarray(weights, dtype=np.int64)
    counts = weights @ np.asarray(kept, dtype=np.int64)
    if float(lcm) * float(counts.max(initial=0)) >= 2.0 ** 53:
        raise ValueError("KING's common denominator is too large for an exact comparison")
    if not np.asarray(scaled).shape[1]:
        return np.full(weights.shape[0], -1, dtype=np.int64)
    sums = rs.int_matmul(weights, scaled)
    best = np.argmax(sums, axis=1)              # the first of the largest
    return np.where(counts > 0, best, -1).astype(np.int64)


def plan_best_cases(wins, models, sizes: Sequence[int], trials: int, seed: int, task: str,
                    question: str, topics: Optional[Sequence[str]] = None,
                    replace: str = BEYOND) -> BestPlan:
    """How often the testbed's best set by KING is still the best on n
    topics, among *every* set given — the QARLA stage's choice over all
    2^k − 1 subsets of the representatives, made again on each trial's
    topics: ``wins`` (topics × sets) and ``models`` (topics; 0 for a topic
    where KING is not defined) the topics' KING cases (``king_topics/``),
    the sets in tie-break order (:func:`king_order_key`). KING of a set on
    a trial is the stage's (a topic's share wins/models, the mean over the
    drawn topics, a topic drawn twice counting twice); the best of a trial
    is :func:`king_winners`' (exact). The draws are :func:`draw_topics`'
    under the label ``question`` (in the measure's place of the key)."""
    wins = np.asarray(wins, dtype=np.int64)
    models = np.asarray(models, dtype=np.int64)
    if topics is not None:          # the rows in the topics' code-point order
        topics = tuple(str(t) for t in topics)
        if len(topics) != wins.shape[0] or len(set(topics)) != len(topics):
            raise ValueError("one distinct topic name per row")
        order = sorted(range(len(topics)), key=lambda k: topics[k])
        wins, models = wins[order], models[order]
    n_t = wins.shape[0]
    if wins.shape[1] < 1:
        raise ValueError("no metric set")
    scaled, kept, lcm = case_numerators(wins, models)
    sizes = np.asarray([int(n) for n in sizes], dtype=np.int64)
    full_best = int(king_winners(scaled, kept, lcm, np.ones((1, n_t), dtype=np.int64))[0])
    stays = np.zeros(sizes.size, dtype=np.int64)
    extrapolated = np.zeros(sizes.size, dtype=bool)
    for row, n in enumerate(sizes):
        draws = draw_topics(seed, task, question, n_t, int(n), trials, replace)
        extrapolated[row] = draws.extrapolated
        best = king_winners(scaled, kept, lcm, topic_counts(draws.sample, n_t))
        stays[row] = int(np.sum(best == full_best)) if full_best >= 0 else 0
    return BestPlan(full_best, sizes, int(trials), extrapolated, stays)


# ---------------------------------------------------------------------------
# metrics: how wide is a pairwise-accuracy interval on n topics?
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AccuracyPlan:
    """The pairwise accuracy of M measures against the humans on the
    testbed (``full``, M) and in each trial of each size (``agree2`` and
    ``pairs2``, K × trials × M: the integer counts, PA their
    ratio, :func:`~qarla_spark.measures.meta_eval.pairwise_accuracy`'s),
    and ``ci_width`` (K × M): the width of the central 95% of the trials'
    pairwise accuracies (their 2.5% and 97.5% percentiles, NaN when no
    trial has a pair the humans order)."""

    measures: Tuple[str, ...]
    sizes: np.ndarray
    trials: int
    full: np.ndarray
    agree2: np.ndarray
    pairs2: np.ndarray
    ci_width: np.ndarray

    @property
    def accuracy(self) -> np.ndarray:
        """K × trials × M: each trial's pairwise accuracy (NaN without a
        pair the humans order)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.pairs2 > 0, self.agree2 / self.pairs2.astype(np.float64),
                            math.nan)


def _accuracy_counts(measures, human, present, weights, i, j):
    """(agree2 B × M, pairs2 B × M) of each measure's system means against
    the humans' over their common cells (``present[m]``), the means over
    the cells of each row's topic weights, their orders exact
    (:func:`pair_signs`; the humans' the run's, :func:`human_signs`); the
    humans' signs computed once per distinct set of cells."""
    n_b = weights.shape[0]
    agree2 = np.zeros((n_b, len(measures)), dtype=np.int64)
    pairs2 = np.zeros((n_b, len(measures)), dtype=np.int64)
    signs_of_humans: dict = {}
    for m, values in enumerate(measures):
        cells = present[m]
        key = cells.tobytes()
        if key not in signs_of_humans:
            signs_of_humans[key] = human_signs(human, cells, weights, i, j)
        sh = signs_of_humans[key]
        sm = pair_signs(values, cells, weights, i, j)
        judged = sh != 0
        agree2[:, m] = (2 * np.sum(judged & (sm == sh), axis=1)
                        + np.sum(judged & (sm == 0), axis=1))
        pairs2[:, m] = 2 * np.sum(judged, axis=1)
    return agree2, pairs2


def plan_pairwise_accuracy(measures, human, sizes: Sequence[int], trials: int, seed: int,
                           task: str, label: str, names: Optional[Sequence[str]] = None,
                           topics: Optional[Sequence[str]] = None) -> AccuracyPlan:
    """How wide the 95% interval of a measure's system-level pairwise
    accuracy against a human criterion is on n topics, a simulation of its
    own (pairwise accuracy is not a mean over topics): ``measures`` a
    sequence of M (topics × systems) score matrices and ``human`` the
    criterion's (topics × systems), NaN missing; a measure's cells are the
    (topic, system) both have. Trial r of size n draws n topics *with
    replacement* at every size (:func:`draw_topics` with ``replace="always"``
    under ``label`` in the measure's place of the key: the bootstrap's
    picture of a new testbed of n topics, as the run's interval resamples
    its topics); each system's measure and human means over its drawn
    cells; the pairs the humans order, a metric tie counting ½ (Kocmi et
    al. 2021, the run's ``pairwise_accuracy``), orders decided exactly (the
    humans' as the run decides them: :func:`human_signs`). Every measure
    is scored on the same draws."""
    human = np.asarray(human, dtype=np.float64)
    if human.ndim != 2:
        raise ValueError("human scores must be (topics × systems)")
    n_s = human.shape[1]
    measures = [np.asarray(m, dtype=np.float64) for m in measures]
    if any(m.shape != human.shape for m in measures):
        raise ValueError("every measure's scores have the humans' shape (topics × systems)")
    names = tuple(str(m) for m in range(len(measures))) if names is None else tuple(names)
    if len(names) != len(measures):
        raise ValueError("one name per measure")
    # every matrix's rows in the topics' code-point order (one permutation)
    stacked, topics = _canonical(np.concatenate([human] + measures, axis=1), topics)
    human = stacked[:, :n_s]
    measures = [stacked[:, n_s * (m + 1):n_s * (m + 2)] for m in range(len(measures))]
    n_t = human.shape[0]
    sizes = np.asarray([int(n) for n in sizes], dtype=np.int64)
    if sizes.size and (np.any(np.diff(sizes) <= 0) or sizes[0] < 1):
        raise ValueError("sizes must be positive and increasing")
    h_present = np.isfinite(human)
    present = [h_present & np.isfinite(m) for m in measures]
    i, j = np.triu_indices(n_s, 1)
    agree, pairs = _accuracy_counts(measures, human, present, np.ones((1, n_t), dtype=np.int64),
                                    i, j)
    with np.errstate(invalid="ignore", divide="ignore"):
        full = np.where(pairs[0] > 0, agree[0] / pairs[0].astype(np.float64), math.nan)
    k, m_count = sizes.size, len(measures)
    agree2 = np.zeros((k, int(trials), m_count), dtype=np.int64)
    pairs2 = np.zeros((k, int(trials), m_count), dtype=np.int64)
    width = np.full((k, m_count), math.nan)
    for row, n in enumerate(sizes):
        draws = draw_topics(seed, task, label, n_t, int(n), trials, ALWAYS)
        a2, p2 = _accuracy_counts(measures, human, present, topic_counts(draws.sample, n_t), i, j)
        agree2[row], pairs2[row] = a2, p2
        if m_count and trials:
            with np.errstate(invalid="ignore", divide="ignore"):
                pa = np.where(p2 > 0, a2 / p2.astype(np.float64), math.nan)
            low, high = rs.percentile_columns(pa)
            width[row] = high - low
    return AccuracyPlan(names, sizes, int(trials), full, agree2, pairs2, width)
