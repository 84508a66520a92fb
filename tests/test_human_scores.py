"""Issue 39, part 2: human scores read exactly.

A human score's exact value is its *reading* (SPEC §1): the simplest
fraction with a denominator up to 1,000 whose double it is (|v| < 2^12),
else the double's own value — thirds as thirds, 4.67 as 467/100. A
summary's score over raters and a system's over topics (and a replicate's
weighted mean) are exact means of readings, rounded once, so that equal
rationals are equal doubles and a tie of the humans is never decided by
float noise. The references are Fractions and plain loops
(``helpers.human_reading``: ``Fraction.limit_denominator``).
docs/DECISIONS.md, "Exact human scores (issue 39, part 2)".
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import human_reading
from qarla_spark.measures import human as hu
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures import meta_eval as me
from qarla_spark.measures import resampling as rs

# two systems over four topics whose mean human scores are both 37/12: the
# exact means of the doubles of these thirds differ by an ulp
A = [Fraction(13, 3), Fraction(5), Fraction(4, 3), Fraction(5, 3)]
B = [Fraction(5), Fraction(4), Fraction(1), Fraction(7, 3)]


def double_mean(values):
    """The rule before: the exact mean of the doubles, rounded once."""
    return float(sum((Fraction(float(v)) for v in values), Fraction(0)) / len(values))


def reading_mean(values):
    return float(sum((human_reading(float(v)) for v in values), Fraction(0)) / len(values))


thirds = st.integers(0, 30).map(lambda k: k / 3)
decimals = st.integers(-10_000, 10_000).map(lambda k: k / 100)
on_grid = st.builds(lambda k, q: k / q, st.integers(-5_000, 5_000), st.integers(1, 1_000))
off_grid = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
scores = st.one_of(thirds, decimals, on_grid, off_grid)


def test_the_case_tells_the_two_rules_apart():
    assert sum(A) / 4 == sum(B) / 4 == Fraction(37, 12)
    assert double_mean(A) != double_mean(B)          # an ulp apart: float noise
    assert reading_mean(A) == reading_mean(B) == float(Fraction(37, 12))


@settings(max_examples=300, deadline=None)
@given(st.lists(scores, min_size=1, max_size=40))
def test_the_reading_is_the_brute_force_one(values):
    p, q = hu.fractions(values)
    for v, a, b in zip(values, p, q):
        got = Fraction(int(a), int(b)) if b else Fraction(v)
        assert got == human_reading(v), (v, got)
        assert got.numerator / got.denominator == v        # rounds back to its double


def test_readings_of_known_values():
    values = [14 / 3, 4.67, 0.1, 2.5, -1 / 7, 1 / 3000, 0.001, 1e-5, 12345.678, 1e30, 0.0]
    p, q = hu.fractions(values)
    got = [Fraction(int(a), int(b)) if b else None for a, b in zip(p, q)]
    assert got == [Fraction(14, 3), Fraction(467, 100), Fraction(1, 10), Fraction(5, 2),
                   Fraction(-1, 7), None, Fraction(1, 1000), None, None, None, Fraction(0)]


@settings(max_examples=200, deadline=None)
@given(st.lists(scores, min_size=1, max_size=9))
def test_a_summary_over_raters_is_the_exact_mean_of_readings(values):
    got = hu.mean(values)
    assert got == reading_mean(values)
    if len(values) == 1:                      # one rating: itself, bit for bit
        assert math.copysign(1.0, got) == math.copysign(1.0, values[0]) and got == values[0]


def _cells(draw_values, n_t, n_s, rng):
    values = np.asarray(draw_values, dtype=np.float64)
    present = rng.random((n_t, n_s)) < 0.8
    present[0, :] = True
    t_idx, s_idx = np.nonzero(present)
    return values[: t_idx.size], t_idx, s_idx


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["thirds", "decimals", "off", "mixed"]), st.integers(0, 2 ** 31))
def test_system_means_are_exact_means_of_readings_under_any_weights(kind, seed):
    """Every path (``doubles``, ``grid``, ``exact``) against Fractions, for
    the point and for Poisson replicates: Σ w·reading / Σ w, rounded once."""
    rng = np.random.default_rng(seed)
    n_t, n_s = 7, 4
    pool = {"thirds": [k / 3 for k in range(3, 16)],
            "decimals": [k / 100 for k in range(100, 501, 7)],
            "off": list(rng.normal(3, 1, 50)),
            "mixed": [k / 3 for k in range(3, 16)] + list(rng.normal(3, 1, 5))}[kind]
    values, t_idx, s_idx = _cells(rng.choice(pool, n_t * n_s), n_t, n_s, rng)
    weights = np.vstack([np.ones((1, n_t), dtype=np.int64),
                         rng.poisson(1.0, (12, n_t)).astype(np.int64)])
    got = hu.system_means(values, (t_idx, s_idx), n_s, weights, rs.grouped_real_means)
    expected_kind = {"thirds": hu.GRID, "decimals": hu.GRID, "off": hu.DOUBLES}
    if kind in expected_kind:
        assert hu.reading(values).kind == expected_kind[kind]
    for b in range(weights.shape[0]):
        for s in range(n_s):
            rows = [k for k in range(values.size) if s_idx[k] == s]
            den = sum(int(weights[b, t_idx[k]]) for k in rows)
            if not den:
                assert math.isnan(got[b, s])
                continue
            num = sum(int(weights[b, t_idx[k]]) * human_reading(values[k]) for k in rows)
            assert got[b, s] == float(num / den), (kind, b, s)


def test_scores_off_a_grid_are_their_doubles_as_before():
    """Real-valued scores read as themselves: the same doubles as the exact
    means of the doubles (the rule before), point and replicates."""
    rng = np.random.default_rng(5)
    values = rng.normal(0, 1, 30)
    assert hu.reading(values).kind == hu.DOUBLES
    t_idx, s_idx = np.repeat(np.arange(10), 3), np.tile(np.arange(3), 10)
    weights = rng.poisson(1.0, (20, 10)).astype(np.int64)
    got = hu.system_means(values, (t_idx, s_idx), 3, weights, rs.grouped_real_means)
    assert np.array_equal(got, rs.grouped_real_means(values, (t_idx, s_idx), 3, weights),
                          equal_nan=True)


def _two_systems_cube():
    """Three systems over four topics: A and B tie as rationals (37/12),
    C below; one measure that orders A above B."""
    human = np.asarray([[float(a), float(b), 1.0] for a, b in zip(A, B)])
    scores = np.tile([0.9, 0.1, 0.0], (4, 1))[:, :, None]
    return js.JudgedScores(("t0", "t1", "t2", "t3"), ("A", "B", "C"), ("m",), scores, human)


def test_metric_eval_ties_the_humans_in_rationals():
    """metric_eval's system human scores: A and B one double; pairwise
    accuracy leaves their pair out (the humans tie it), Kendall counts a
    human tie; every consumer of a system's human score gives that double."""
    data = _two_systems_cube()
    h = js.human_scores(data, np.ones((1, 4), dtype=np.int64))[0]
    assert h[0] == h[1] == float(Fraction(37, 12))
    e = js.meta_evaluation("task", "c", data, seed=3, n=50, draws=0)
    pa = e.estimates[("system", "pairwise_accuracy")][0].value
    assert e.pa_counts[1][0] == 2 * 2                  # pairs (A, C), (B, C) only
    assert pa == 1.0
    # every other consumer of a system's mean human score: the same double
    from qarla_spark.measures.qarla_task import human_means
    from qarla_spark.report.export import _human_mean
    judged = [{"summarizer": ["A", "B"], "criterion": ["c", "c"], "score": [float(a), float(b)]}
              for a, b in zip(A, B)]
    assert human_means(judged)["c"] == {"A": h[0], "B": h[1]}
    assert _human_mean([float(a) for a in A]) == _human_mean([float(b) for b in B]) == h[0]
    keys = [n for _ in A for n in ("A", "B")]
    flat = [float(v) for pair in zip(A, B) for v in pair]
    assert hu.means_by_key(keys, flat) == {"A": h[0], "B": h[1]}


def test_correlation_groups_read_the_same_human_means():
    """correlation_ci/'s system side (the statistics' correlation groups):
    Kendall with the human tie of A and B."""
    from qarla_spark.measures.group_statistics import Paired, correlation_groups
    from scipy import stats as sps
    topics = tuple(f"t{t}" for t in range(4) for _ in range(3))
    names = tuple(n for _ in range(4) for n in ("A", "B", "C"))
    xs = {"A": [10, 12, 3, 4], "B": [9, 9, 9, 9], "C": [1, 2, 0, 1]}
    num = np.asarray([xs[n][int(t[1:])] for t, n in zip(topics, names)], dtype=np.int64)
    ys = {"A": A, "B": B, "C": [Fraction(1)] * 4}
    y = np.asarray([float(ys[n][int(t[1:])]) for t, n in zip(topics, names)])
    paired = Paired(topics, names, num, np.full(num.size, 18, dtype=np.int64), topics, names, y)
    rows = correlation_groups("t", 0, [("c", paired)], seed=1, n=20, summary_level=False)
    got = {r.kind: r.value for r in rows if r.level == "system" and r.unit == "topics"}
    x_sys = [double_mean([v / 18 for v in xs[n]]) for n in ("A", "B", "C")]
    h_sys = [float(sum(ys[n]) / 4) for n in ("A", "B", "C")]
    assert h_sys[0] == h_sys[1]
    assert got["kendall"] == pytest.approx(sps.kendalltau(x_sys, h_sys, variant="b")[0],
                                           abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 31), st.sampled_from(["thirds", "off"]))
def test_soft_pairwise_accuracy_human_p_values_are_decided_on_readings(seed, kind):
    """SPA's human p-values: #{flips: Σ s·h_i/n_i − Σ s·h_j/n_j ≥ o_i − o_j}
    counted in Fractions of the readings (a null difference equal to the
    observed one counts whole)."""
    rng = np.random.default_rng(seed)
    n_t, n_s = 6, 4
    pool = [k / 3 for k in range(3, 16)] if kind == "thirds" else list(rng.normal(3, 1, 40))
    human = rng.choice(pool, (n_t, n_s))
    human[rng.random((n_t, n_s)) < 0.15] = np.nan
    human[0] = rng.choice(pool, n_s)
    scores = rng.random((n_t, n_s, 1))
    data = js.JudgedScores(tuple(f"t{t}" for t in range(n_t)),
                           tuple(f"s{s}" for s in range(n_s)), ("m",), scores, human).used()
    flips = rs.sign_flips(seed, "task", data.topics, 30)
    scores_obj = js.SystemScores(data, None, None, None, None, None, flips)
    got = scores_obj.human_upper()             # the pairs i < j, np.triu_indices' order
    cells = data.cells
    r = [[human_reading(data.human[t, s]) if cells[t, s] else None
          for s in range(len(data.systems))] for t in range(len(data.topics))]

    def mean(s, signs=None):
        terms = [(1 if signs is None else int(signs[t])) * r[t][s]
                 for t in range(len(data.topics)) if r[t][s] is not None]
        return sum(terms, Fraction(0)) / len(terms)

    for p, (i, j) in enumerate(itertools.combinations(range(len(data.systems)), 2)):
        observed = mean(i) - mean(j)
        want = sum(1 for f in flips if mean(i, f) - mean(j, f) >= observed)
        assert got[p] == want, (i, j)


def test_measure_scores_within_half_an_ulp_are_one_double_and_tie():
    """The decision for the measures' side (the part-1 note's 104 pairs of
    SummEval): a summary's score is its published double; two summaries
    whose exact mean similarities differ by less than half an ulp are one
    double — the export's, mt-metrics-eval's — and tie (acc_eq at ε = 0
    counts a metric tie), as a metric printing that double would."""
    sims = np.asarray([[1.0, 2.0 ** -60], [1.0, 0.0]])       # means 0.5 + 2^-61 and 0.5
    assert Fraction(1) + Fraction(2) ** -60 != Fraction(1)
    x = rs.nan_real_means(sims)
    assert x[0] == x[1] == 0.5
    counts = me.acc_eq(x, [2.0, 1.0], epsilon=0.0)
    assert (counts.ties_metric, counts.concordant) == (1, 0)
