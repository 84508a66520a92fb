"""Issue 39, part 4: the WMT conventions as their own statistics.

- ``pairwise_accuracy_wmt`` (system level): mt-metrics-eval's
  ``Agreement``, the pairwise accuracy WMT publishes — every pair of
  systems, human ties counted, a pair agreeing when its two signs are equal;
- ``pdp`` (summary level): Pairwise Difference Pearson (DiIanni & Deutsch
  2025) — Pearson between the metric's and the humans' differences of every
  pair of systems within a topic, pooled over topics;
- in ``across/``, the equal-weight mean over tasks (scope ``mean``) beside
  the pooled value (WMT24/25).

The references are plain loops over pairs and Fractions.
docs/DECISIONS.md, "The WMT conventions (issue 39, part 4)".
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark import meta_statistics as ms
from qarla_spark.measures import across_tasks as xt
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures import meta_eval as me
from qarla_spark.measures import resampling as rs
from test_judge_statistics import N_REPLICATES, Reference, judged

SETTINGS = settings(max_examples=60, deadline=None)


def sign(v) -> int:
    return int(v > 0) - int(v < 0)


def loop_agreement(xs, hs):
    """mt-metrics-eval's Agreement by its definition: (agree, pairs) over
    the pairs with both human scores (None: missing)."""
    agree = pairs = 0
    for a, b in itertools.combinations(range(len(hs)), 2):
        if hs[a] is None or hs[b] is None:
            continue
        pairs += 1
        agree += sign(hs[a] - hs[b]) == sign(xs[a] - xs[b])
    return agree, pairs


# ---------------------------------------------------------------- pairwise accuracy (WMT)

@st.composite
def scored_rows(draw):
    n_b, n, n_m = draw(st.integers(1, 4)), draw(st.integers(0, 7)), draw(st.integers(1, 3))
    grid = [0.0, 0.5, 1.0, 1 / 3, 2 / 3]
    x = np.array(draw(st.lists(st.sampled_from(grid), min_size=n_b * n * n_m,
                               max_size=n_b * n * n_m)), dtype=np.float64).reshape(n_b, n, n_m)
    h = np.array(draw(st.lists(st.sampled_from(grid + [math.nan]), min_size=n_b * n,
                               max_size=n_b * n)), dtype=np.float64).reshape(n_b, n)
    x[np.isnan(h)] = np.nan            # a system without weight: NaN on both sides
    return x, h


@given(scored_rows())
@SETTINGS
def test_wmt_agreement_counts_equal_the_loop(rows):
    """(with the pairs both tie counted by the sign sums, and without)"""
    x, h = rows
    signs = me.sign_sums(x, h)
    agree, pairs = me.wmt_agreement_counts(x, h, signs)
    plain = me.SignSums(signs.concordance, signs.metric_pairs, signs.human_pairs)
    again, pairs_again = me.wmt_agreement_counts(x, h, plain)
    assert np.array_equal(agree, again) and np.array_equal(pairs, pairs_again)
    for b in range(x.shape[0]):
        hs = [None if math.isnan(v) else Fraction(v) for v in h[b]]
        for m in range(x.shape[2]):
            want = loop_agreement([Fraction(v) if v == v else None for v in x[b, :, m]], hs)
            assert (int(agree[b, m]), int(pairs[b])) == want, (b, m)


def test_wmt_agreement_counts_ties_as_wmt_does():
    """Human tie + metric tie: agrees; human tie + metric order: disagrees;
    human order + metric tie: disagrees (the project's pairwise accuracy
    counts ½ there and leaves human ties out)."""
    h = np.array([[1.0, 1.0, 2.0]])
    x = np.array([[[0.5], [0.5], [0.5]]])          # (0,1) both tie; (0,2), (1,2) metric tie
    agree, pairs = me.wmt_agreement_counts(x, h, me.sign_sums(x, h))
    assert (agree[0, 0], pairs[0]) == (1, 3)
    assert me.wmt_agreement(x[0, :, 0], h[0]) == (1, 3)
    pa = me.pairwise_accuracy(x[0, :, 0], h[0])
    assert (pa.agree2, pa.pairs2) == (2, 4)        # ½ + ½ of 2 human-ordered pairs


def test_wmt_agreement_refuses_scores_missing_on_one_side():
    h = np.array([[1.0, 2.0]])
    x = np.array([[[0.5], [np.nan]]])
    with pytest.raises(ValueError, match="finite exactly where"):
        me.wmt_agreement_counts(x, h, me.sign_sums(x, h))


@pytest.fixture(scope="module", params=[0, 1, 2])
def evaluated(request):
    seed = 10 + request.param
    data = judged(request.param)
    e = js.meta_evaluation("task", "crit", data, seed, N_REPLICATES, draws=12)
    return data, e, Reference(data, "task", seed, N_REPLICATES)


def test_metric_eval_pairwise_accuracy_wmt_is_agreement_on_exact_means(evaluated):
    """The point value: the loop on the systems' exact means (Fractions; the
    human side of readings); the replicates: the loop on the kernel's own
    replicate means (the counts of every row at once)."""
    data, e, ref = evaluated
    xs, hs = ref.system_scores()
    got = e.estimates[("system", "pairwise_accuracy_wmt")]
    for m in range(ref.n_m):
        agree, pairs = loop_agreement([row[m] for row in xs], hs)
        assert got[m].value == float(Fraction(agree, pairs))
        assert got[m].interval == "recentred" and got[m].low <= got[m].value <= got[m].high
    used = data.used()
    xb, hb = js.system_scores(used, ref.weights)
    for b in range(N_REPLICATES):
        hrow = [None if math.isnan(v) else v for v in hb[b]]
        for m in range(ref.n_m):
            agree, pairs = loop_agreement(list(xb[b, :, m]), hrow)
            want = agree / pairs if pairs else math.nan
            g = got[m].replicates[b]
            assert g == want or (math.isnan(g) and math.isnan(want)), (b, m)


# ---------------------------------------------------------------- Pairwise Difference Pearson

def fraction_pdp(cells, weights=None):
    """PDP in Fractions: cells (topic, metric, human) of one measure; every
    ordered pair of distinct cells within a topic; a topic's three sums
    weighted by ``weights[topic]``; (cross, hh, mm) → the value (float)."""
    by_topic = {}
    for t, x, h in cells:
        by_topic.setdefault(t, []).append((Fraction(x), Fraction(h)))
    cross = hh = mm = Fraction(0)
    for t, items in by_topic.items():
        w = 1 if weights is None else int(weights[t])
        for (xa, ha), (xb, hb) in itertools.permutations(items, 2):
            cross += w * (xa - xb) * (ha - hb)
            hh += w * (ha - hb) ** 2
            mm += w * (xa - xb) ** 2
    if not hh or not mm:
        return math.nan
    return float(cross) / math.sqrt(float(hh) * float(mm))


def close(a, b, tol=1e-12):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def test_metric_eval_pdp_is_the_fraction_pdp(evaluated):
    data, e, ref = evaluated
    got = e.estimates[("summary", "pdp")]
    topics = ref.topics
    for m in range(ref.n_m):
        cells = [(k, ref.x[t, s, m], ref.h[t, s]) for k, t in enumerate(topics)
                 for s in ref.systems if ref.cell[t][s]]
        assert close(got[m].value, fraction_pdp(cells)), m
        assert got[m].interval == "percentile"
        for b in range(0, N_REPLICATES, 7):
            assert close(got[m].replicates[b], fraction_pdp(cells, ref.weights[b])), (m, b)


@given(st.integers(0, 2 ** 31))
@SETTINGS
def test_pdp_sums_equal_the_pair_loop_whatever_the_order(seed):
    """The pooled sums from each topic's deviations equal the loop over
    pairs (``pairwise_difference_pearson``) and do not depend on the order
    of the systems (both orders of every pair)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    groups = np.sort(rng.integers(0, 4, n))
    metric = rng.choice([0.1, 0.25, 0.5, 0.7, 1.0], (n, 2))
    human = rng.choice([1.0, 4 / 3, 5 / 3, 2.0, 5.0], n)
    cross, hh, mm = me.pdp_sums(metric, human, groups, 4)
    for m in range(2):
        den = math.sqrt(float(hh.sum()) * float(mm[:, m].sum()))
        value = float(cross[:, m].sum()) / den if den > 0 else math.nan
        loop = me.pairwise_difference_pearson(metric[:, m], human, groups)
        assert close(value, loop)
        want = fraction_pdp(list(zip(groups, metric[:, m], human)))
        assert close(value, want)
        flipped = fraction_pdp(list(zip(groups[::-1], metric[::-1, m], human[::-1])))
        assert close(flipped, want)


def test_pdp_of_a_metric_equal_to_the_humans_is_one_and_of_a_constant_nan():
    groups = np.array([0, 0, 0, 1, 1])
    human = np.array([1.0, 2.0, 4.0, 3.0, 5.0])
    metric = np.column_stack([2 * human + 1, np.full(5, 0.5), -human])
    cross, hh, mm = me.pdp_sums(metric, human, groups, 2)
    with np.errstate(invalid="ignore"):
        value = cross.sum(axis=0) / np.sqrt(hh.sum() * mm.sum(axis=0))
    assert value[0] == pytest.approx(1.0, abs=1e-15) and math.isnan(value[1])
    assert value[2] == pytest.approx(-1.0, abs=1e-15)


# ---------------------------------------------------------------- declarations

def test_the_wmt_statistics_are_declared_and_kept_from_king():
    wmt = ms.statistic("pairwise_accuracy_wmt")
    pdp = ms.statistic("pdp")
    assert (wmt.level, wmt.interval, wmt.bounds) == ("system", ms.RECENTRED, (0.0, 1.0))
    assert (pdp.level, pdp.interval, pdp.bounds) == ("summary", ms.PERCENTILE, (-1.0, 1.0))
    assert not wmt.against_king and not pdp.against_king
    assert {wmt.key, pdp.key} <= set(js.KERNELS)
    assert "pairwise_accuracy_wmt" in js.configuration() and "pdp" in js.configuration()


# ---------------------------------------------------------------- across tasks: the mean

@given(st.integers(0, 2 ** 31))
@SETTINGS
def test_mean_over_tasks_is_the_exact_mean_of_the_tasks_values(seed):
    rng = np.random.default_rng(seed)
    n_rows = 6
    parts = []
    for k in range(int(rng.integers(2, 5))):
        pairs2 = rng.integers(0, 4, size=n_rows) * 2
        agree2 = np.stack([rng.integers(0, p + 1, size=2) for p in pairs2])
        names = tuple(rng.permutation(["x", "y"]))
        parts.append(xt.PairCounts(f"t{k}", names, agree2, pairs2))
    mean = xt.mean_counts(parts)
    assert mean.names == tuple(min(parts, key=lambda p: p.task).names)
    for row in range(n_rows):
        for m, name in enumerate(mean.names):
            values = [Fraction(int(p.agree2[row, p.names.index(name)]), int(p.pairs2[row]))
                      for p in parts if p.pairs2[row]]
            # each task's double (correctly rounded), then their exact mean
            values = [Fraction(float(v)) for v in values]
            got = mean.point[m] if row == 0 else mean.reps[row - 1, m]
            if values:
                assert got == float(sum(values) / len(values))
            else:
                assert math.isnan(got)


def test_king_mean_over_tasks_and_its_rows():
    """KING's mean: the exact mean of the tasks' KING (each its exact mean
    over its topics, replicates from its own topics' weights); across/ has
    a ``mean`` row per measure with its own interval and rank, beside the
    pooled one."""
    parts = [xt.KingCounts("a", ("t0", "t1"), ("m", "n"), np.array([[1, 0], [2, 2]]),
                           np.array([3, 4])),
             xt.KingCounts("b", ("u0", "u1", "u2"), ("n", "m"), np.array([[0, 1], [1, 1], [3, 0]]),
                           np.array([3, 3, 5]))]
    mean = xt.mean_king(parts, seed=3, n=20)
    king_a = [Fraction(1, 3) / 2 + Fraction(2, 4) / 2, Fraction(0, 3) / 2 + Fraction(2, 4) / 2]
    king_b = [(Fraction(1, 3) + Fraction(1, 3) + Fraction(0, 5)) / 3,
              (Fraction(0, 3) + Fraction(1, 3) + Fraction(3, 5)) / 3]
    for m in range(2):
        ks = [Fraction(float(king_a[m])), Fraction(float(king_b[m]))]
        assert mean.point[m] == float(sum(ks) / 2)
    for b in range(20):
        ks = []
        for p in parts:
            w = rs.poisson_weights(3, p.task, p.topics, 20)[b]
            col = p.names.index("m")
            if w.sum():
                ks.append(Fraction(float(sum(int(w[t]) * Fraction(int(p.wins[t, col]),
                                                                  int(p.dens[t]))
                                             for t in range(len(p.topics))) / int(w.sum()))))
        want = float(sum(ks) / len(ks)) if ks else math.nan
        assert mean.reps[b, 0] == want or (math.isnan(want) and math.isnan(mean.reps[b, 0]))
    found = xt.with_mean(xt.across_tasks(*xt.pooled_king(parts, 3, 20)), mean)
    rows = xt.across_rows("king", None, found)
    by_scope = {}
    for r in rows:
        by_scope.setdefault(r[3], []).append(r)
    assert len(by_scope[xt.MEAN]) == len(by_scope[xt.POOLED]) == 2
    for r in by_scope[xt.MEAN]:
        m = mean.names.index(r[2])
        assert r[4] == mean.point[m] and r[7] == "percentile"
        assert (r[5], r[6]) == rs.percentile_interval(mean.reps[:, m])
        assert r[8] in (1, 2) and r[10] == 2


def _pdp_sums_reference(metric, human, groups, n_groups):
    """pdp_sums as it was written before the measures' side was shared
    (one call per human scores): the reference of the shared side."""
    m = np.asarray(metric, dtype=np.float64)
    h = np.asarray(human, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    cross = np.zeros((n_groups, m.shape[1]))
    hh = np.zeros(n_groups)
    mm = np.zeros((n_groups, m.shape[1]))
    i, j = me._group_pairs(g)
    if not i.size:
        return cross, hh, mm
    order = np.lexsort((j, i, g[i]))
    i, j = i[order], j[order]
    pg = g[i]
    starts = np.flatnonzero(np.r_[True, pg[1:] != pg[:-1]])
    at = pg[starts]
    dh = h[i] - h[j]
    dm = m[i] - m[j]
    cross[at] = np.add.reduceat(dm * dh[:, None], starts, axis=0)
    hh[at] = np.add.reduceat(dh * dh, starts)
    mm[at] = np.add.reduceat(dm * dm, starts, axis=0)
    return cross, hh, mm


@given(st.integers(0, 2 ** 31))
@SETTINGS
def test_pdp_side_shared_by_many_human_scores_gives_each_ones_sums(seed):
    """The measures' side of PDP made once (pdp_side) and each criterion's
    human scores against it (pdp_human_sums): the doubles of the sums made
    for each criterion alone, bit for bit (groups of one, none, unsorted
    groups)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 30))
    n_groups = int(rng.integers(1, 6))
    groups = rng.integers(0, n_groups, n)
    if rng.random() < 0.5:
        groups = np.sort(groups)
    metric = rng.standard_normal((n, 3)) * 10.0 ** rng.integers(-3, 3)
    side = me.pdp_side(metric, groups, n_groups)
    for _ in range(3):
        human = rng.choice([1.0, 4 / 3, 5 / 3, 2.0, 5.0], n)
        want = _pdp_sums_reference(metric, human, groups, n_groups)
        got = (*me.pdp_human_sums(side, human), side.mm)
        for a, b in zip(got, want):
            assert a.shape == b.shape and a.view(np.int64).tolist() == b.view(np.int64).tolist()
