"""Issue 39, part 5: summary-level Pearson, Spearman and Kendall of every
measure in ``metric_eval/``, as SummEval and SacreROUGE report them
(SacreROUGE's ``stats.summary_level_corr``): within each topic, the
correlation over its judged systems; the mean over the topics where both
sides vary (a NaN correlation skipped, not counted); intervals from the
run's Poisson replicates over topics. The references are plain loops (the
correlations) and Fractions (the means). docs/DECISIONS.md, "Summary-level
correlations in metric_eval (issue 39, part 5)".
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from qarla_spark import meta_statistics as ms
from qarla_spark.measures import agreement
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures import resampling as rs

KINDS = ("pearson", "spearman", "kendall")


def loop_pearson(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def loop_ranks(x):
    return [sum(b < a for b in x) + (sum(b == a for b in x) + 1) / 2 for a in x]


def loop_kendall_b(x, y):
    con = tx = ty = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            sx = (x[i] > x[j]) - (x[i] < x[j])
            sy = (y[i] > y[j]) - (y[i] < y[j])
            con += sx * sy
            tx += sx != 0
            ty += sy != 0
    return con / math.sqrt(tx * ty)


def loop_topic(x, y):
    """The three correlations of one topic by loops, None unless both sides
    vary (SacreROUGE skips a NaN correlation)."""
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    return (loop_pearson(x, y), loop_pearson(loop_ranks(x), loop_ranks(y)),
            loop_kendall_b(x, y))


def cube(seed):
    """A score cube with what summary level must handle: missing cells, a
    topic with one judged system, a topic where the humans agree, a measure
    constant in one topic and one constant everywhere, Likert-like ties."""
    rng = np.random.default_rng(seed)
    n_t, n_s, n_m = 7, 6, 4
    scores = np.round(rng.random((n_t, n_s, n_m)) * 8) / 8
    human = np.round(rng.random((n_t, n_s)) * 12) / 3 + 1
    scores[rng.random((n_t, n_s)) < 0.15, 0] = np.nan      # unscored cells
    human[0, 1:] = np.nan                                   # one judged system
    human[1] = 2.0                                          # the humans agree
    scores[2, :, 1] = 0.5                                   # constant in a topic
    scores[:, :, 3] = 0.25                                  # constant everywhere
    return js.JudgedScores(tuple(f"t{t}" for t in range(n_t)),
                           tuple(f"s{s}" for s in range(n_s)),
                           tuple(f"m{m}" for m in range(n_m)), scores, human)


def reference(data: js.JudgedScores, weights=None):
    """(M × 3) per measure and kind: the (weighted) mean over the topics
    where both sides vary of the topic's correlation over its cells, in
    Fractions of ``agreement.correlations``' values (and the loops' values
    beside, for the check of the correlations themselves)."""
    cells = data.cells
    n_t, n_m = cells.shape[0], len(data.measures)
    w = np.ones(n_t, dtype=np.int64) if weights is None else weights
    exact = np.full((n_m, 3), np.nan)
    loops = np.full((n_m, 3), np.nan)
    for m in range(n_m):
        sums, loop_sums, total = [Fraction(0)] * 3, [0.0] * 3, 0
        for t in range(n_t):
            sel = [s for s in range(len(data.systems)) if cells[t, s]]
            x = [float(data.scores[t, s, m]) for s in sel]
            y = [float(data.human[t, s]) for s in sel]
            found = loop_topic(x, y)
            if found is None:
                continue
            got = agreement.correlations([data.systems[s] for s in sel], x, y,
                                         min_n=agreement.MIN_POINTS)
            for k in range(3):
                assert got[k] == pytest.approx(found[k], abs=1e-12)
                sums[k] += int(w[t]) * Fraction(float(got[k]))
                loop_sums[k] += int(w[t]) * found[k]
            total += int(w[t])
        if total:
            exact[m] = [float(v / total) for v in sums]
            loops[m] = [v / total for v in loop_sums]
    return exact, loops


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_summary_level_correlations_are_the_mean_over_topics_where_both_vary(seed):
    data = cube(seed)
    e = js.meta_evaluation("task", "crit", data, seed=3, n=30, draws=0)
    exact, loops = reference(data.used())
    for k, kind in enumerate(KINDS):
        got = e.estimates[("summary", kind)]
        assert len(got) == len(data.measures)
        for m, est in enumerate(got):
            want = exact[m, k]
            assert (math.isnan(want) and math.isnan(est.value)) or est.value == want, \
                (kind, m, est.value, want)
            if not math.isnan(want):
                assert est.value == pytest.approx(loops[m, k], abs=1e-12)
                assert est.interval == ms.PERCENTILE and est.low <= est.high
    # the measure constant everywhere never varies: no value, no interval
    for kind in KINDS:
        last = e.estimates[("summary", kind)][3]
        assert math.isnan(last.value) and math.isnan(last.low) and math.isnan(last.high)


def test_replicates_are_the_weighted_means_over_the_same_topics():
    data = cube(5).used()
    n = 25
    e = js.meta_evaluation("task", "crit", data, seed=11, n=n, draws=0)
    weights = rs.poisson_weights(11, "task", data.topics, n)
    for b in (0, 7, n - 1):
        want, _ = reference(data, weights[b])
        for k, kind in enumerate(KINDS):
            for m, est in enumerate(e.estimates[("summary", kind)]):
                got = est.replicates[b]
                if math.isnan(want[m, k]):
                    assert math.isnan(got)
                else:
                    assert got == pytest.approx(want[m, k], rel=1e-13, abs=1e-15)


def test_summary_level_is_declared_beside_acc_eq_and_kept_from_king():
    """Declared once (meta_statistics), at summary level, with a percentile
    interval over topics; not set against KING (king_vs_judges/ keeps its
    rows); the chance baseline has a band of each."""
    for kind in KINDS:
        st = ms.statistic(kind, "summary")
        assert st.key == ("summary", kind) and st.interval == ms.PERCENTILE
        assert st.unit == ms.TOPICS and not st.against_king
        assert ms.statistic(kind).level == "system"          # the name alone: system level
        assert ("summary", kind) in js.KERNELS
    assert ms.statistic_note().count("`pearson`") == 1
    data = cube(4)
    chance = js.chance_baseline("task", "crit", data.used(), 2,
                                rs.sign_flips(2, "task", data.used().topics, 10), 20)
    for kind in KINDS:
        band = chance[("summary", kind)]
        assert band.interval == js.BAND and -1 <= band.low <= band.value <= band.high <= 1
    conf = js.configuration()
    assert "pearson (summary)" in conf and "pearson" not in conf
