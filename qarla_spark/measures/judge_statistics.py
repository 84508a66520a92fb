"""Judge-based meta-evaluation of one (task, criterion) (issue 28; SPEC
§11): every measure's agreement with the human scores, with bootstrap
intervals over topics, the chance baseline and the significance clusters
of pairwise accuracy. A pure function of the group's score cube (numpy):
the statistics stage (:mod:`qarla_spark.stages.statistics`) runs one per
(task, criterion) on an executor. The statistics themselves are
:mod:`~qarla_spark.measures.meta_eval`'s; the resampling (Poisson weights
and sign patterns keyed by (seed, task, topic), exact means)
:mod:`~qarla_spark.measures.resampling`'s.

The data: a summary's score under a measure (a metric: its mean similarity
to the topic's references; ``QUEEN(<set>)`` with all references; ``HBR``)
and its human score (the mean of its judgments) for every (topic, system)
*cell* where the system's summary is judged and scored by every measure.
A system's score is the mean over its cells of its summary scores, its
human score the mean of its judgments' means — exact means, rounded once.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

import numpy as np

from qarla_spark.measures import agreement
from qarla_spark.measures import meta_eval as me
from qarla_spark.measures import resampling as rs
from qarla_spark.names import CHANCE  # noqa: F401  (the chance rows' measure name)

#: how many random measures the chance baseline draws
CHANCE_DRAWS = 100
#: a random measure's scores are multiples of 1 / CHANCE_GRID in [0, 1)
CHANCE_GRID = 2 ** 24
#: the statistics at system level, with bootstrap replicates
SYSTEM_STATISTICS = agreement.KINDS + ("pairwise_accuracy",)
#: every statistic of ``metric_eval/``, (level, statistic)
STATISTICS = tuple(("system", s) for s in SYSTEM_STATISTICS) + (
    ("system", "soft_pairwise_accuracy"), ("summary", "acc_eq"))
#: the unit of the intervals, of the chance band
UNIT, CHANCE_UNIT = "topics", "draws"
#: the interval of each system-level statistic with replicates: recentred
#: within the statistic's range (resampling.recentred_interval); acc_eq's
#: (a ratio of per-topic counts): percentile; the chance rows': their band
RANGES = {"pearson": (-1.0, 1.0), "spearman": (-1.0, 1.0), "kendall": (-1.0, 1.0),
          "pairwise_accuracy": (0.0, 1.0)}
BAND = "band"


@dataclass(frozen=True)
class JudgedScores:
    """The score cube of one (task, criterion): ``scores[t, s, m]`` of the
    summary of system s in topic t under measure m, ``human[t, s]`` its
    human score; NaN where missing. Topics and systems sorted."""

    topics: Tuple[str, ...]
    systems: Tuple[str, ...]
    measures: Tuple[str, ...]
    scores: np.ndarray
    human: np.ndarray

    @property
    def cells(self) -> np.ndarray:
        """(T × S) bool: judged and scored by every measure."""
        return np.isfinite(self.human) & np.isfinite(self.scores).all(axis=2)

    def used(self) -> "JudgedScores":
        """The topics and systems with a cell, cells only (NaN elsewhere)."""
        c = self.cells
        t, s = c.any(axis=1), c.any(axis=0)
        scores = np.where(c[:, :, None], self.scores, np.nan)[np.ix_(t, s)]
        human = np.where(c, self.human, np.nan)[np.ix_(t, s)]
        return JudgedScores(tuple(np.asarray(self.topics, dtype=object)[t]),
                            tuple(np.asarray(self.systems, dtype=object)[s]), self.measures,
                            scores, human)


@dataclass(frozen=True)
class Estimate:
    """A statistic's value, its 95% interval (or band) and, with bootstrap
    replicates, the replicates."""

    value: float
    low: float
    high: float
    replicates: np.ndarray = field(default=None, repr=False, compare=False)
    #: how low and high were made (INTERVALS), "" without an interval
    interval: str = ""


@dataclass
class MetaEvaluation:
    """What one (task, criterion) gives: per (level, statistic), each
    measure's :class:`Estimate`; the chance baseline per (level,
    statistic); acc_eq's tie threshold per measure; the significance
    clusters of pairwise accuracy."""

    measures: Tuple[str, ...]
    n_topics: int
    n_systems: int
    n_resamples: int
    estimates: Dict[Tuple[str, str], List[Estimate]]
    chance: Dict[Tuple[str, str], Estimate]
    epsilon: List[float]
    ranks: Tuple[int, ...] = ()
    #: pairwise accuracy's counts, row 0 the point, rows 1..n the
    #: replicates: agree2 ((n+1) × M), pairs2 (n+1)
    pa_counts: Tuple[np.ndarray, np.ndarray] = None


# ---------------------------------------------------------------------------
# system scores
# ---------------------------------------------------------------------------

def _positions(data: JudgedScores):
    t_idx, s_idx = np.nonzero(data.cells)
    return t_idx, s_idx


def system_scores(data: JudgedScores, weights) -> Tuple[np.ndarray, np.ndarray]:
    """(B × S × M) measure scores and (B × S) human scores of the systems:
    each the weighted mean over the system's cells with the topics'
    ``weights`` (B × T; NaN where a system's weights are all 0): exact and
    rounded once for one row of weights (a point value), by
    :func:`~qarla_spark.measures.resampling.grouped_replicate_means` for
    replicates (deterministic, within a few ulp)."""
    return measure_scores(data, weights), human_scores(data, weights)


def _means(weights):
    return rs.grouped_real_means if len(weights) == 1 else rs.grouped_replicate_means


def measure_scores(data: JudgedScores, weights) -> np.ndarray:
    """The measures' side of :func:`system_scores` (B × S × M)."""
    t_idx, s_idx = _positions(data)
    n_s, n_m = len(data.systems), len(data.measures)
    cols = (s_idx[:, None] * n_m + np.arange(n_m)[None, :]).ravel()
    x = _means(weights)(data.scores[t_idx, s_idx, :].ravel(), (np.repeat(t_idx, n_m), cols),
                        n_s * n_m, weights)
    return x.reshape(len(x), n_s, n_m)


def human_scores(data: JudgedScores, weights) -> np.ndarray:
    """The humans' side of :func:`system_scores` (B × S)."""
    t_idx, s_idx = _positions(data)
    return _means(weights)(data.human[t_idx, s_idx], (t_idx, s_idx), len(data.systems), weights)


# ---------------------------------------------------------------------------
# the statistics of given system scores
# ---------------------------------------------------------------------------

def system_statistics(systems: Sequence[str], x, h, signs=None) -> Dict[str, np.ndarray]:
    """Each system-level statistic (B × M) of measure scores ``x`` (B × S ×
    M) against human scores ``h`` (B × S): Pearson and Spearman
    (:func:`~qarla_spark.measures.agreement.correlation_rows`), Kendall's
    τ_b and pairwise accuracy from the signs of the pairs
    (:func:`~qarla_spark.measures.meta_eval.sign_sums`, or ``signs`` when
    the caller has them; the same values as ``correlation_rows``' Kendall
    and :func:`~qarla_spark.measures.meta_eval.pairwise_accuracy`). The
    correlations are NaN below 3 systems or when a row holds a NaN (a
    system without topic in a replicate); pairwise accuracy is NaN without
    a pair the humans order."""
    x, h = np.asarray(x, dtype=np.float64), np.asarray(h, dtype=np.float64)
    # every (replicate, measure) a row, the humans' side once per replicate
    r = agreement.correlation_rows_shared(systems, x.transpose(0, 2, 1), h,
                                          kinds=("pearson", "spearman"))
    signs = signs if signs is not None else me.sign_sums(x, h)
    return _system_statistics(x, h, r, signs)


def _system_statistics(x, h, r, signs) -> Dict[str, np.ndarray]:
    """:func:`system_statistics` from the Pearson and Spearman rows ``r``
    (B × M × 2) and the :class:`~qarla_spark.measures.meta_eval.SignSums`
    of x against h."""
    n_s = x.shape[1]
    out = {kind: r[:, :, k] for k, kind in enumerate(("pearson", "spearman"))}
    complete = np.isfinite(x).all(axis=1) & np.isfinite(h).all(axis=1)[:, None]
    out["kendall"] = np.where(complete & (n_s >= agreement.MIN_SYSTEMS), signs.kendall_b(),
                              np.nan)
    agree2, pairs2 = signs.pairwise_accuracy_counts()
    with np.errstate(invalid="ignore", divide="ignore"):
        out["pairwise_accuracy"] = np.where(pairs2[:, None] > 0,
                                            agree2 / np.maximum(pairs2, 1)[:, None], np.nan)
    return {k: out[k] for k in SYSTEM_STATISTICS}


def flipped_p_values(data: JudgedScores, signs):
    """(human, [measure m]): the one-sided p-values of "system i is better
    than system j" of the paired permutation test of Thompson et al. (2024),
    each topic's scores of every system flipped by one sign pattern
    (``signs``: B × T of ±1), the counts decided exactly
    (:func:`~qarla_spark.measures.resampling.signed_mean_at_least`): a null
    difference of means equal to the observed one counts whole, whatever
    the rounding of the means."""
    cells, n = data.cells, len(signs)
    human = me.PairwisePValues(rs.signed_mean_at_least(data.human, cells, signs), n)
    metric = rs.signed_mean_at_least(data.scores, cells, signs)
    return human, [me.PairwisePValues(a, n) for a in metric]


def soft_pairwise_accuracies(data: JudgedScores, signs) -> np.ndarray:
    """(M,): soft pairwise accuracy of each measure (Thompson et al. 2024)
    from the p-values of :func:`flipped_p_values` under the sign patterns
    ``signs`` (B × T)."""
    human, metric = flipped_p_values(data, signs)
    return np.array([me.soft_pairwise_accuracy(p, human) for p in metric])


def _acc_eqs(data: JudgedScores):
    """Tie calibration of every measure at summary level, grouped by topic
    (:func:`~qarla_spark.measures.meta_eval.tie_calibrations`, all at
    once), and each topic's counts at the chosen ε: (calibrations, topics
    with a pair (positions), correct (G × M), pairs (G,))."""
    t_idx, s_idx = _positions(data)
    metric = data.scores[t_idx, s_idx, :]
    human = data.human[t_idx, s_idx]
    grouping = me.group_pairs(t_idx)
    cals = me.tie_calibrations(metric, human, grouping)
    topics, correct, n_pairs = me.acc_eq_by_groups(metric, human, grouping,
                                                   [c.epsilon for c in cals])
    return cals, topics, correct, n_pairs


# ---------------------------------------------------------------------------
# the group
# ---------------------------------------------------------------------------

def _estimates(points, reps, bounds=None) -> List[Estimate]:
    """An :class:`Estimate` of each column (``points`` (M,), ``reps`` B ×
    M): recentred within ``bounds`` when given (a statistic of system
    scores), else percentile; the intervals of every column at once
    (:func:`~qarla_spark.measures.resampling.bootstrap_columns`)."""
    low, high = rs.bootstrap_columns(points, reps, bounds)
    method = rs.interval_method(bounds)
    return [Estimate(float(points[m]), float(low[m]), float(high[m]),
                     np.array(reps[:, m], dtype=np.float64), method)
            for m in range(len(points))]


def _band(draws) -> Estimate:
    d = np.asarray(draws, dtype=np.float64)
    d = d[np.isfinite(d)]
    if not d.size:
        return Estimate(math.nan, math.nan, math.nan)
    low, high = rs.percentile_interval(d)
    return Estimate(math.fsum(d) / d.size, low, high, interval=BAND)


def meta_evaluation(task: str, criterion: str, data: JudgedScores, seed: int, n: int,
                    draws: int = CHANCE_DRAWS) -> MetaEvaluation:
    """Every statistic of every measure of one (task, criterion), with
    intervals from ``n`` Poisson replicates over topics (seeded
    by (seed, task, topic), as every interval of the run), soft pairwise
    accuracy from ``n`` sign patterns (no interval: its p-values are
    themselves resampled), acc_eq with its tie threshold calibrated once
    on all topics, the chance baseline over ``draws`` random measures, and
    the significance clusters of pairwise accuracy."""
    return meta_evaluations(task, {criterion: data}, seed, n, draws)[criterion]


def _same_cells(a: JudgedScores, b: JudgedScores) -> bool:
    """Two criteria's used cubes hold the same measures' cells (the work on
    the measures' side is the same)."""
    return (a.topics == b.topics and a.systems == b.systems and a.measures == b.measures
            and np.array_equal(a.cells, b.cells)
            and np.array_equal(a.scores, b.scores, equal_nan=True))


def meta_evaluations(task: str, datas: Dict[str, JudgedScores], seed: int, n: int,
                     draws: int = 0) -> Dict[str, MetaEvaluation]:
    """:func:`meta_evaluation` of each criterion of one task (``datas``:
    criterion → its score cube), the same numbers, the measures' side —
    their system scores and replicates, their signs of every pair of
    systems, their ranks, their sign-flip counts — computed once for the
    criteria whose cells are the same (every criterion judges the same
    summaries in most testbeds: issue 36)."""
    used = {c: d.used() for c, d in sorted(datas.items())}
    groups: List[List[str]] = []
    for c, d in used.items():
        for g in groups:
            if _same_cells(used[g[0]], d):
                g.append(c)
                break
        else:
            groups.append([c])
    out: Dict[str, MetaEvaluation] = {}
    for criteria in groups:
        out.update(_evaluate_shared(task, {c: used[c] for c in criteria}, seed, n, draws))
    return out


def _evaluate_shared(task: str, used: Dict[str, JudgedScores], seed: int, n: int,
                     draws: int) -> Dict[str, MetaEvaluation]:
    """The criteria of :func:`meta_evaluations` with the same cells."""
    data = next(iter(used.values()))
    topics, systems = data.topics, data.systems
    n_m = len(data.measures)
    ones = np.ones((1, len(topics)), dtype=np.int64)
    weights = rs.poisson_weights(seed, task, topics, n)
    flips = rs.sign_flips(seed, task, topics, n)
    x = np.concatenate([measure_scores(data, ones), measure_scores(data, weights)])
    hs = {c: np.concatenate([human_scores(d, ones), human_scores(d, weights)])
          for c, d in used.items()}
    names = list(used)
    signs_all = me.sign_sums_many(x, [hs[c] for c in names])
    # Pearson and Spearman of the point row and every replicate, each
    # criterion against the same measures' rows
    corr = agreement.correlation_rows_many(systems, x.transpose(0, 2, 1),
                                           np.stack([hs[c] for c in names]),
                                           kinds=("pearson", "spearman"))
    cells = data.cells
    metric_p = [me.PairwisePValues(a, len(flips))
                for a in rs.signed_mean_at_least(data.scores, cells, flips)]
    cals_all = _acc_eqs_many(used)
    out = {}
    for k, c in enumerate(names):
        d, signs = used[c], signs_all[k]
        stats = _system_statistics(x, hs[c], corr[k], signs)
        estimates: Dict[Tuple[str, str], List[Estimate]] = {
            ("system", s): _estimates(stats[s][0], stats[s][1:], RANGES[s])
            for s in SYSTEM_STATISTICS}
        human_p = me.PairwisePValues(rs.signed_mean_at_least(d.human, cells, flips), len(flips))
        estimates[("system", "soft_pairwise_accuracy")] = [
            Estimate(float(me.soft_pairwise_accuracy(p, human_p)), math.nan, math.nan)
            for p in metric_p]
        cals, at, correct, pairs = cals_all[c]
        replicates = rs.weighted_ratio_means(correct, pairs, weights[:, at]) if len(at) \
            else np.full((n, n_m), np.nan)
        estimates[("summary", "acc_eq")] = _estimates(
            np.asarray([cal.value for cal in cals], dtype=np.float64), replicates)
        pa = estimates[("system", "pairwise_accuracy")]
        ranked = [m for m in range(n_m) if np.isfinite(pa[m].value)]
        ranks = [0] * n_m
        if ranked:
            found = me.rank_clusters([pa[m].value for m in ranked],
                                     np.column_stack([pa[m].replicates for m in ranked]),
                                     [d.measures[m] for m in ranked])
            for m, r in zip(ranked, found.ranks):
                ranks[m] = r
        out[c] = MetaEvaluation(d.measures, len(topics), len(systems), n, estimates,
                                chance_baseline(task, c, d, seed, flips, draws) if draws else {},
                                [cal.epsilon for cal in cals], tuple(ranks),
                                signs.pairwise_accuracy_counts())
    return out


def _acc_eqs_many(used: Dict[str, JudgedScores]):
    """:func:`_acc_eqs` of each criterion (the same cells)."""
    return {c: _acc_eqs(d) for c, d in used.items()}


def chance_baseline(task: str, criterion: str, data: JudgedScores, seed: int, flips,
                    draws: int) -> Dict[Tuple[str, str], Estimate]:
    """Each statistic of ``draws`` random measures (uniform scores per
    cell, keyed by (seed, task, criterion, draw):
    :func:`~qarla_spark.measures.meta_eval.chance_scores`): the mean over
    the draws and the 2.5-97.5% band."""
    t_idx, s_idx = _positions(data)
    if not draws or not t_idx.size:
        return {}
    shape = (len(data.topics), len(data.systems))
    # on a grid of 2^24 values (ties all but impossible, exact sums short)
    drawn = me.chance_scores_many(seed, [(task, criterion, str(d)) for d in range(draws)],
                                  shape)                             # draws × T × S
    cube = np.floor(np.moveaxis(drawn, 0, 2) * CHANCE_GRID) / CHANCE_GRID
    cube = np.where(data.cells[:, :, None], cube, np.nan)
    random = JudgedScores(data.topics, data.systems, tuple(map(str, range(draws))), cube,
                          data.human)
    ones = np.ones((1, len(data.topics)), dtype=np.int64)
    x0, h0 = (a[0] for a in system_scores(random, ones))
    stats = system_statistics(data.systems, x0[None], h0[None])
    out = {("system", k): _band(stats[k][0]) for k in SYSTEM_STATISTICS}
    out[("system", "soft_pairwise_accuracy")] = _band(soft_pairwise_accuracies(random, flips))
    out[("summary", "acc_eq")] = _band([c.value for c in me.tie_calibrations(
        random.scores[t_idx, s_idx, :], random.human[t_idx, s_idx], me.group_pairs(t_idx))])
    return out


def configuration(draws: int = CHANCE_DRAWS) -> dict:
    """How metric_eval/, metric_ranks/ and king_vs_judges/ are computed
    (``run.json``, the report)."""
    return {
        "scores": "a summary's score: its mean similarity to the topic's references (a "
                  "metric), its QUEEN with all references (QUEEN(<set>)), its HBR; its human "
                  "score: the mean of its judgments; cells: (topic, system) judged and scored "
                  "by every measure",
        "system_score": "the mean over the system's cells (exact, rounded once)",
        "correlations": "Pearson, Spearman, Kendall tau-b of the system scores",
        "pairwise_accuracy": "Kocmi et al. 2021: pairs of systems with unequal human scores "
                             "ordered alike; a metric tie counts 1/2",
        "soft_pairwise_accuracy": "Thompson et al. 2024: 1 - mean |p_metric - p_human| over "
                                  "system pairs, one-sided p-values from the sign patterns "
                                  "of the paired tests (no interval)",
        "acc_eq": "Deutsch et al. 2023: summary level, pairs within a topic, tie threshold "
                  "epsilon calibrated once on all topics (the smallest of equal maxima), "
                  "mean over topics",
        "interval": "95%, Poisson bootstrap over topics (the run's replicates): system "
                    "level recentred (the percentile interval moved by the value minus "
                    "the replicates' median, within the statistic's range), acc_eq "
                    "percentile",
        "chance": f"{draws} measures of uniform random scores per cell, seeded by (seed, "
                  "task, criterion, draw): mean and 2.5-97.5% band",
        "clusters": "mt-metrics-eval's greedy rank assignment; paired bootstrap p-values "
                    "(1 + #{r: a <= b}) / (1 + B) of every pair in sorted order, "
                    "Benjamini-Hochberg adjusted, significant at <= 0.05",
        "king_vs_judges": "Kendall tau-b between the sets' KING and each statistic of their "
                          "QUEEN (a single metric is its own set), interval from the same "
                          "replicates",
    }



# ---------------------------------------------------------------------------
# KING's chance baseline
# ---------------------------------------------------------------------------

#: random topics simulated per (models, peers) configuration
KING_CHANCE_TOPICS = 100


@functools.lru_cache(maxsize=16)
def king_chance_pool(seed: int, n_models: int, n_peers: int, triples: str = "standard",
                     method: str = "auto", size: int = KING_CHANCE_TOPICS) -> np.ndarray:
    """(size,) int64: KING's wins (held-out references that beat every
    system, of ``n_models``) in each of ``size`` random topics of that
    shape: one metric whose similarities are random scores on the chance
    grid (keyed by (seed, "king", models, peers, topic)), through the run's
    own QUEEN and KING kernels. Remembered per worker (a run's topics share
    a few shapes)."""
    from qarla_spark.measures.masks import set_words
    from qarla_spark.measures.queen import king_cases, queen_counts
    n = n_models + n_peers
    roles = np.array(["model"] * n_models + ["peer"] * n_peers)
    words = np.asarray([set_words([0], 1)], dtype=np.int64)
    out = np.zeros(size, dtype=np.int64)
    for r in range(size):
        values = np.floor(me.chance_scores(seed, ("king", str(n_models), str(n_peers), str(r)),
                                           (n, n, 1)) * CHANCE_GRID) / CHANCE_GRID
        values[np.arange(n), np.arange(n), 0] = np.nan
        cases = king_cases(queen_counts(roles, values, words, triples, method))
        out[r] = int(cases[0][0]) if cases is not None else 0
    out.setflags(write=False)
    return out


def king_chance(seed: int, task: str, topics: Sequence[Tuple[str, int, int]],
                draws: int = CHANCE_DRAWS, triples: str = "standard",
                method: str = "auto") -> Estimate:
    """KING of a random metric over a task's ``topics`` ((topic, models,
    peers) of each topic KING uses): in each of ``draws`` draws, every topic
    takes the outcome of one random topic of its shape
    (:func:`king_chance_pool`, picked by uniforms keyed by (seed, task,
    topic)), KING the exact mean over topics of wins / models; the mean
    over draws and the 2.5-97.5% band."""
    if not topics or not draws:
        return Estimate(math.nan, math.nan, math.nan)
    wins = np.empty((len(topics), draws), dtype=np.int64)
    dens = np.empty(len(topics), dtype=np.int64)
    picks = rs.uniforms_many(seed, [("king chance", task, topic) for topic, _, _ in topics],
                             draws)                                  # every topic's stream
    for t, (topic, n_models, n_peers) in enumerate(topics):
        pool = king_chance_pool(int(seed), int(n_models), int(n_peers), triples, method)
        pick = np.minimum((picks[t] * pool.size).astype(np.int64), pool.size - 1)
        wins[t] = pool[pick]
        dens[t] = n_models
    ones = np.ones((1, len(topics)), dtype=np.int64)
    return _band(rs.weighted_ratio_means(wins, dens, ones)[0])
