"""Power and sample size over topics (measures/planning.py, issue 40): the
trials' keyed draws, a plain loop over trials with the obvious code and the
same seeds (the same counts), the paired t-test's size on null pairs, power
rising with n as theory says on a testbed of known differences, the
smallest-n rule, and invariances."""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from qarla_spark.measures import human as hu
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures import planning as pl
from qarla_spark.measures import resampling as rs


def test_t_quantiles_and_p_values_are_students():
    for df in (1, 2, 3, 4, 7, 10, 29, 99, 149, 1000, 5000):
        assert pl.t_critical(df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-12, abs=0)
        for t in (0.1, 1.0, 2.0, 5.0):
            assert pl.t_two_sided_p(t, df) == pytest.approx(2 * stats.t.sf(t, df), rel=1e-10,
                                                            abs=1e-300)
    assert pl.t_critical(0) == math.inf


def test_the_draws_are_the_keyed_streams_one_trial_at_a_time():
    n_topics, trials = 9, 12
    for n in (1, 4, 5, 9, 13):
        for replace in (pl.BEYOND, pl.ALWAYS):
            d = pl.draw_topics(7, "task", "QUEEN", n_topics, n, trials, replace)
            for r in range(trials):
                u = rs.uniforms(7, ("plan", "task", "QUEEN", str(n), str(r)), n_topics + 2 * n)
                perm = sorted(range(n_topics), key=lambda t: (u[t], t))
                picks = [min(int(x * n_topics), n_topics - 1) for x in u[n_topics:]]
                if replace == pl.ALWAYS or n > n_topics:
                    sample, h1, h2 = picks[:n], picks[:n], picks[n:]
                elif 2 * n > n_topics:
                    sample, h1, h2 = perm[:n], picks[:n], picks[n:]
                else:
                    sample, h1, h2 = perm[:n], perm[:n], perm[n:2 * n]
                assert d.sample[r].tolist() == sample
                assert d.half1[r].tolist() == h1 and d.half2[r].tolist() == h2
            assert d.extrapolated == (replace == pl.ALWAYS or n > n_topics)
    # fewer trials are a prefix: a trial's draw is its own stream's
    assert np.array_equal(pl.draw_topics(7, "task", "m", 9, 4, 5).sample,
                          pl.draw_topics(7, "task", "m", 9, 4, 12).sample[:5])


# ---------------------------------------------------------------------------
# the brute force
# ---------------------------------------------------------------------------

def _testbed(seed=0, n_topics=12, n_systems=5, missing=0.1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_topics, 1)) + 0.3 * rng.normal(size=(1, n_systems)) \
        + rng.normal(size=(n_topics, n_systems))
    x[:, 1] = np.round(x[:, 1] * 3) / 3                      # ratios: exact ties
    x[rng.random(x.shape) < missing] = np.nan
    x[:, 2] = x[:, 0]                                        # a duplicate: ties
    return x


def _trial_topics(seed, task, measure, n_topics, n, r, replace):
    u = rs.uniforms(seed, ("plan", task, measure, str(n), str(r)), n_topics + 2 * n)
    perm = sorted(range(n_topics), key=lambda t: (u[t], t))
    picks = [min(int(x * n_topics), n_topics - 1) for x in u[n_topics:]]
    if replace == pl.ALWAYS or n > n_topics:
        return picks[:n], picks[:n], picks[n:]
    if 2 * n > n_topics:
        return perm[:n], picks[:n], picks[n:]
    return perm[:n], perm[:n], perm[n:2 * n]


def _sign(x):
    return (x > 0) - (x < 0)


def _loop_trial(x, topics):
    """(order sign, test conclusion, t-interval width) of every pair i < j
    over the drawn topics, the obvious way: exact means as fractions, the
    t statistic from statistics.stdev, scipy's quantile."""
    n_s = x.shape[1]
    means = []
    for s in range(n_s):
        vals = [Fraction(float(x[t, s])) for t in topics if np.isfinite(x[t, s])]
        means.append(sum(vals) / len(vals) if vals else None)
    out = []
    for i in range(n_s):
        for j in range(i + 1, n_s):
            order = 0 if means[i] is None or means[j] is None else _sign(means[i] - means[j])
            d = [float(x[t, i] - x[t, j]) for t in topics
                 if np.isfinite(x[t, i]) and np.isfinite(x[t, j])]
            m = len(d)
            conclusion, width = 0, math.nan
            if m >= 2:
                mean = math.fsum(d) / m
                sd = statistics.stdev(d)
                c = stats.t.ppf(0.975, m - 1)
                width = 2 * c * sd / math.sqrt(m)
                if sd == 0 or sd < 1e-12 * abs(mean):
                    reject = mean != 0
                else:
                    reject = abs(mean / (sd / math.sqrt(m))) > c
                conclusion = _sign(math.fsum(d)) if reject else 0
            out.append((order, conclusion, width))
    return out


def _loop_plan(x, sizes, trials, seed, task, measure, replace):
    n_t, n_s = x.shape
    full = [o for o, _, _ in _loop_trial(x, range(n_t))]
    rows = []
    for n in sizes:
        same2, sig, rej, stable, stable_sig = [0] * len(full), [0] * len(full), \
            [0] * len(full), 0, 0
        widths = [[] for _ in full]
        for r in range(trials):
            sample, h1, h2 = _trial_topics(seed, task, measure, n_t, n, r, replace)
            res = _loop_trial(x, sample)
            for p, (o, c, w) in enumerate(res):
                same2[p] += 2 * (o == full[p] and o != 0) + (o == 0)
                sig[p] += c != 0 and (c == full[p] or full[p] == 0)
                rej[p] += c != 0
                widths[p].append(w)
            a, b = _loop_trial(x, h1), _loop_trial(x, h2)
            stable += all(p[0] == q[0] for p, q in zip(a, b))
            stable_sig += all(p[1] == q[1] for p, q in zip(a, b))
        rows.append((same2, sig, rej, stable, stable_sig,
                     [_mean(w, trials) for w in widths]))
    return full, rows


def _mean(values, n) -> float:
    """The exact mean of doubles over n, rounded once (Fractions); NaN with
    a NaN among them."""
    if any(math.isnan(v) for v in values):
        return math.nan
    return float(sum(map(Fraction, values), Fraction(0)) / n)


@pytest.mark.parametrize("replace", [pl.BEYOND, pl.ALWAYS])
def test_the_plan_equals_a_loop_over_trials(replace):
    x = _testbed()
    names = [f"t{k:02d}" for k in range(x.shape[0])]
    sizes, trials = (2, 5, 7, 12, 20), 30
    plan = pl.plan_systems(x, sizes, trials, 3, "task", "QUEEN", topics=names, replace=replace)
    full, rows = _loop_plan(x, sizes, trials, 3, "task", "QUEEN", replace)
    assert plan.full_order.tolist() == full
    assert 0 in full                                   # the duplicate's tie
    for k, (same2, sig, rej, stable, stable_sig, width) in enumerate(rows):
        assert plan.same_order2[k].tolist() == same2
        assert plan.significant[k].tolist() == sig
        assert plan.rejected[k].tolist() == rej
        assert plan.stable_count[k] == stable and plan.stable_significant_count[k] == stable_sig
        # the widths' variance from sums (S2 − S1²/m): within 1e-9
        np.testing.assert_allclose(plan.ci_width[k], width, rtol=1e-9)
    assert plan.extrapolated.tolist() == [replace == pl.ALWAYS or n > 12 for n in sizes]
    assert plan.halves_extrapolated.tolist() == [replace == pl.ALWAYS or 2 * n > 12
                                                 for n in sizes]
    assert np.isnan(plan.p_same_order[:, np.asarray(full) == 0]).all()


def test_an_exact_tie_is_a_tie_whatever_the_rounding():
    """0.1 + 0.2 + 0.3 ≠ 0.3 + 0.2 + 0.1 in doubles; the means are equal."""
    x = np.array([[0.1, 0.3, 0.3], [0.2, 0.2, 0.2], [0.3, 0.1, 0.1000000000000001]])
    assert 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1
    signs = pl.pair_signs(x, np.isfinite(x), np.ones((1, 3), dtype=np.int64),
                          np.array([0, 0, 1]), np.array([1, 2, 2]))
    assert signs.tolist() == [[0, -1, -1]]


def _readings_testbed():
    """Human scores (a summary's score one double) whose systems' sums of
    doubles differ where their readings' do not: A's 0.1 + 0.2 and B's 0.15
    + 0.15 are both 3/10 read, not in doubles (C's thirds are a third
    system, D a clear winner)."""
    human = np.array([[0.1, 0.15, 1 / 3, 0.9],
                      [0.2, 0.15, 2 / 3, 0.8],
                      [0.3, 0.3, 0.5, 0.7],
                      [0.4, 0.4, 0.5, 0.9]])
    assert 0.1 + 0.2 != 0.15 + 0.15
    return human


def test_a_human_tie_of_the_readings_is_the_run_s_tie_whatever_the_doubles():
    """The plan orders a human criterion's systems as the run does
    (judge_statistics.human_scores: the readings' exact means, rounded once):
    A and B tie on the testbed and in every trial drawing both topics as
    often, where the exact sums of their doubles would order them."""
    human = _readings_testbed()
    n_t, n_s = human.shape
    i, j = np.triu_indices(n_s, 1)
    ones = np.ones((1, n_t), dtype=np.int64)
    present = np.isfinite(human)
    # the doubles' exact sums order A and B; the readings tie them
    assert pl.pair_signs(human, present, ones, i, j)[0, 0] != 0
    run = js.human_scores(js.JudgedScores(tuple(f"t{t}" for t in range(n_t)),
                                          tuple("ABCD"), ("m",), human[:, :, None], human),
                          ones)
    assert np.array_equal(pl.human_means(human, present, ones), run)
    assert pl.human_signs(human, present, ones, i, j)[0].tolist() == \
        [int(np.sign(run[0, a] - run[0, b])) for a, b in zip(i, j)]
    assert pl.human_signs(human, present, ones, i, j)[0, 0] == 0
    # the plan of the criterion: A-B tied on the testbed (no order to keep)
    # and in every trial whose draws give the first two topics equal weight
    plan = pl.plan_systems(human, (2, 4, 8), 60, 3, "task", "coherence", tuple("ABCD"),
                           human=True)
    assert plan.full_order[0] == 0 and np.isnan(plan.p_same_order[:, 0]).all()
    for k, n in enumerate((2, 4, 8)):
        draws = pl.draw_topics(3, "task", "coherence", n_t, n, 60)
        w = pl.topic_counts(draws.sample, n_t)
        # the brute force: each system's exact mean of its readings
        ties = 0
        for r in range(60):
            means = [sum((hu.value(human[t, s]) * int(w[r, t]) for t in range(n_t)),
                         Fraction(0)) / int(w[r].sum()) for s in range(2)]
            ties += means[0] == means[1]
        assert plan.same_order2[k, 0] == ties          # a tied trial counts ½ of 2
    # measured as doubles (human=False), the pair has an order to keep
    assert pl.plan_systems(human, (2,), 10, 3, "task", "coherence").full_order[0] != 0
    # pairwise accuracy: the humans' tie is no pair the measure is judged on
    # (4 of 5 pairs agree; ordered by the doubles, A > B would make it 5 of 6)
    metric = np.array([[1.0, 0.0, 0.5, 2.0]] * n_t)
    acc = pl.plan_pairwise_accuracy([metric], human, (4,), 5, 1, "task", "pa")
    assert acc.full[0] == 4 / 5


def test_plan_of_several_sizes_is_each_size_alone():
    x = _testbed(1)
    both = pl.plan_systems(x, (4, 9), 25, 5, "t", "m")
    for k, n in enumerate((4, 9)):
        alone = pl.plan_systems(x, (n,), 25, 5, "t", "m")
        for name in ("same_order2", "significant", "rejected", "ci_width"):
            assert np.array_equal(getattr(both, name)[k], getattr(alone, name)[0],
                                  equal_nan=True), name
        assert both.stable_count[k] == alone.stable_count[0]


# ---------------------------------------------------------------------------
# the test's size, the power curve
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("m", [5, 10, 30])
def test_the_paired_t_test_rejects_five_percent_of_null_pairs(m):
    """Simulated null pairs (the two systems' scores exchangeable within a
    topic), 20,000 each: with normal noise the test rejects 5% (within
    ±0.7 points); with skewed (exponential) noise — heavy-tailed, Laplace
    differences — it is conservative at few topics (3.4% at 5, 4.2% at 10,
    4.8% at 30), never above 5%."""
    rng = np.random.default_rng(m)
    for noise, low in ((rng.normal, 0.043), (rng.exponential, 0.03)):
        topic = rng.normal(size=(20000, m))
        d = (topic + noise(size=(20000, m))) - (topic + noise(size=(20000, m)))
        rate = pl.paired_t_rejects(d.sum(axis=1), (d * d).sum(axis=1),
                                   np.full(20000, m)).mean()
        assert low <= rate <= 0.057, (noise, rate)


def test_the_plan_s_test_rejects_five_percent_of_a_null_pair():
    """A testbed whose two systems are mirror images (each topic also with
    the systems' scores swapped: the difference's distribution symmetric,
    mean 0), drawn with replacement: the trials' tests reject ~5%."""
    rng = np.random.default_rng(11)
    half = rng.normal(size=(100, 2)) + rng.normal(size=(100, 1))
    x = np.vstack([half, half[:, ::-1]])
    plan = pl.plan_systems(x, (10, 40), 3000, 2, "t", "null", replace=pl.ALWAYS)
    assert plan.full_order.tolist() == [0]
    assert 0.035 <= plan.p_rejected[0, 0] <= 0.065
    assert 0.035 <= plan.p_rejected[1, 0] <= 0.065


def test_power_rises_with_n_as_theory_says():
    """Four systems of known mean differences (0, 0.15, 0.3, 0.6; per-topic
    noise sd 1 on a shared topic effect), drawn with replacement: each
    pair's power follows the t-test's (the noncentral t's tails) at the
    testbed's own effect size; power, agreement and stability rise with
    n."""
    rng = np.random.default_rng(5)
    n_t = 120
    x = rng.normal(size=(n_t, 1)) + np.array([0.0, 0.15, 0.3, 0.6]) \
        + rng.normal(size=(n_t, 4))
    sizes = (10, 20, 40, 80, 160, 320)
    plan = pl.plan_systems(x, sizes, 600, 9, "t", "m", replace=pl.ALWAYS)
    for p in range(plan.i.size):
        d = x[:, plan.i[p]] - x[:, plan.j[p]]
        effect = abs(d.mean()) / d.std()             # the empirical population's
        for k, n in enumerate(sizes):
            c = stats.t.ppf(0.975, n - 1)
            nc = effect * math.sqrt(n)
            theory = stats.nct.sf(c, n - 1, nc)      # in the testbed's direction
            assert abs(plan.p_significant[k, p] - theory) < 0.07, (p, n)
        assert np.all(np.diff(plan.p_significant[:, p]) > -0.04)
        assert np.all(np.diff(plan.p_same_order[:, p]) > -0.04)
    assert (plan.p_significant[-1] > plan.p_significant[0]).all()
    assert plan.stable[-1] > plan.stable[0]
    assert plan.adjacent.sum() == 3


# ---------------------------------------------------------------------------
# the answers
# ---------------------------------------------------------------------------

def test_smallest_n_by_hand():
    sizes = [10, 20, 30, 40]
    assert pl.smallest_n(sizes, [0.5, 0.7, 0.9, 0.95]) == pl.SmallestN(25.0, True, False, False)
    # it must stay above: the last crossing counts
    assert pl.smallest_n(sizes, [0.85, 0.7, 0.9, 0.9]).n == 25.0
    assert pl.smallest_n(sizes, [0.8, 0.9, 0.9, 0.9]) == pl.SmallestN(10.0, True, True, False)
    missed = pl.smallest_n(sizes, [0.5, 0.9, 0.9, 0.79])
    assert not missed.reached and math.isnan(missed.n)
    assert pl.smallest_n(sizes, [math.nan, 0.9, 0.9, 0.9]).n == 20.0
    # rounded up, never the lower size itself
    assert pl.smallest_n(sizes, [0.5, 0.79999, 0.9, 0.9]).n == 21.0
    assert pl.smallest_n(sizes, [0.5, 0.6, 0.9, 0.9], n_topics=20).extrapolated


# ---------------------------------------------------------------------------
# invariances
# ---------------------------------------------------------------------------

def _by_names(plan):
    out = {}
    names = plan.systems
    for p in range(plan.i.size):
        a, b = names[plan.i[p]], names[plan.j[p]]
        flip = a > b
        key = (b, a) if flip else (a, b)
        out[key] = (-plan.full_order[p] if flip else plan.full_order[p],
                    plan.same_order2[:, p].tolist(), plan.significant[:, p].tolist(),
                    plan.rejected[:, p].tolist(), plan.ci_width[:, p].tobytes())
    return out


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10 ** 6), st.randoms(use_true_random=False))
def test_permuting_topics_keeps_and_systems_permutes_the_plan(seed, random):
    x = _testbed(seed, n_topics=8, n_systems=4)
    topics = [f"topic{k}" for k in range(8)]
    systems = ["A", "B", "C", "D"]
    plan = pl.plan_systems(x, (3, 6, 10), 20, seed, "t", "m", systems=systems, topics=topics)
    rows = list(range(8))
    cols = list(range(4))
    random.shuffle(rows)
    random.shuffle(cols)
    moved = pl.plan_systems(x[rows][:, cols], (3, 6, 10), 20, seed, "t", "m",
                            systems=[systems[c] for c in cols], topics=[topics[r] for r in rows])
    assert _by_names(moved) == _by_names(plan)
    assert np.array_equal(moved.stable_count, plan.stable_count)
    assert np.array_equal(moved.stable_significant_count, plan.stable_significant_count)
    # exact scaling by 2 and an exact shift change no order and no test
    scaled = pl.plan_systems(2 * x, (3, 6, 10), 20, seed, "t", "m", systems=systems,
                             topics=topics)
    assert np.array_equal(scaled.same_order2, plan.same_order2)
    assert np.array_equal(scaled.significant, plan.significant)


# ---------------------------------------------------------------------------
# metrics: the best measure
# ---------------------------------------------------------------------------

def _king_cases(seed=8, n_t=14, n_sets=12):
    """Every subset's KING cases on n_t topics: 4 to 6 models a topic (KING's
    shares over different denominators), two topics without KING, two sets
    tied on every topic (the earlier in tie-break order wins), one close to
    the best."""
    rng = np.random.default_rng(seed)
    models = rng.integers(4, 7, n_t)
    models[[3, 9]] = 0
    wins = np.minimum(rng.integers(0, 7, (n_t, n_sets)), models[:, None])
    wins[:, 4] = wins[:, 2]
    wins[:, 7] = np.minimum(wins[:, 0] + (rng.random(n_t) < 0.6), models)
    labels = tuple(sorted((",".join(f"m{k}" for k in range(1 + s % 3)) + f"x{s:02d}"
                           for s in range(n_sets)), key=pl.king_order_key))
    return wins, models, labels


def _loop_best(wins, models, labels, topics):
    """The QARLA stage's best set on the drawn topics (a topic twice counts
    twice), the obvious way: each set's KING the mean over the drawn topics
    where KING is defined of wins/models, as Fractions; the highest, then
    fewer metrics, then the label (best_of's tie_key); None without a topic."""
    drawn = [t for t in topics if models[t] > 0]
    if not drawn:
        return None
    king = {labels[s]: sum((Fraction(int(wins[t, s]), int(models[t])) for t in drawn),
                           Fraction(0)) / len(drawn) for s in range(len(labels))}
    return min(king, key=lambda x: (-king[x], pl.king_order_key(x)))


def test_the_best_set_stays_best_as_a_loop_over_trials_says():
    """plan_best_cases against a brute-force loop (Fractions, the same
    draws): the testbed's best and every trial's, over sizes below, at and
    beyond the testbed's topics; the topics' order does not matter."""
    wins, models, labels = _king_cases()
    n_t = wins.shape[0]
    names = [f"t{k:02d}" for k in range(n_t)]
    sizes, trials = (1, 3, 8, 14, 30), 60
    plan = pl.plan_best_cases(wins, models, sizes, trials, 4, "task", "KING", names)
    full = _loop_best(wins, models, labels, range(n_t))
    assert labels[plan.best] == full
    for k, n in enumerate(sizes):
        want = sum(_loop_best(wins, models, labels,
                              _trial_topics(4, "task", "KING", n_t, n, r, pl.BEYOND)[0]) == full
                   for r in range(trials))
        assert plan.stays_count[k] == want
    assert plan.extrapolated.tolist() == [n > n_t for n in sizes]
    assert 0 < plan.stays_count[0] < trials and plan.stays_count[3] == trials
    shuffled = np.random.default_rng(1).permutation(n_t)
    again = pl.plan_best_cases(wins[shuffled], models[shuffled], sizes, trials, 4, "task",
                               "KING", [names[k] for k in shuffled])
    assert again.best == plan.best and np.array_equal(again.stays_count, plan.stays_count)


def test_the_best_of_an_exact_tie_is_the_earlier_set():
    """Two sets with the same cases on every topic: the earlier in tie-break
    order wins on the testbed and in every trial, whichever column it is."""
    wins = np.array([[1, 1, 3], [2, 2, 0], [3, 3, 1]])
    models = np.array([3, 4, 5])
    plan = pl.plan_best_cases(wins, models, (3,), 20, 2, "t", "KING")
    assert plan.best == 0 and plan.stays_count.tolist() == [20]
    # shares over different denominators: 1/3 + 2/4 + 3/5 against their
    # equal sum 5/6 + 0 + 3/5 is a tie kept exactly
    wins = np.array([[1, 2], [2, 0], [3, 3]])
    models = np.array([3, 4, 5])
    winners = pl.king_winners(*pl.case_numerators(wins, models), np.ones((1, 3), dtype=np.int64))
    assert winners.tolist() == [0]


def test_the_exact_probability_is_below_the_upper_bound_among_kept_sets():
    """"Stays best" among every subset against the former upper bound (the
    best set and the representatives only, the same draws): a subset the
    upper bound never sees beats the best set in some trials, so the exact
    share is lower; it can never be higher."""
    wins, models, labels = _king_cases(n_sets=12)
    n_t = wins.shape[0]
    # a rival outside the kept sets: the best set's cases, one fewer on a few topics
    plan0 = pl.plan_best_cases(wins, models, (14,), 1, 4, "task", "KING")
    best = plan0.best
    rival = wins[:, best].copy()
    rng = np.random.default_rng(3)
    down = (rng.random(n_t) < 0.3) & (rival > 0)
    up = ~down & (rng.random(n_t) < 0.3) & (rival < models)
    rival[down] -= 1
    rival[up] += 1
    rival[np.argmax(down)] -= int(rival[np.argmax(down)] > 0)   # behind on the testbed
    wins = np.concatenate([wins, rival[:, None]], axis=1)
    sizes, trials = (3, 6, 10), 200
    exact = pl.plan_best_cases(wins, models, sizes, trials, 4, "task", "KING")
    assert exact.best == best
    kept = [s for s in range(wins.shape[1] - 1)]            # every set but the rival
    bound = pl.plan_best_cases(wins[:, kept], models, sizes, trials, 4, "task", "KING")
    assert bound.best == best
    assert (exact.stays_count <= bound.stays_count).all()
    assert (exact.stays_count < bound.stays_count).any()


# ---------------------------------------------------------------------------
# metrics: the pairwise-accuracy interval's width
# ---------------------------------------------------------------------------

def _loop_accuracy(metric, human, topics):
    """(agree2, pairs2) of a measure against the humans over the drawn
    topics (a topic twice counts twice), the obvious way: each system's
    exact means over its cells as fractions (the humans' of their
    readings), every pair compared."""
    n_s = human.shape[1]
    cells = np.isfinite(metric) & np.isfinite(human)

    def means(x, read=Fraction):
        out = []
        for s in range(n_s):
            vals = [read(float(x[t, s])) for t in topics if cells[t, s]]
            out.append(sum(vals) / len(vals) if vals else None)
        return out
    # the humans' scores as the run reads them (thirds as thirds)
    m, h = means(metric), means(human, hu.value)
    agree2 = pairs2 = 0
    for i in range(n_s):
        for j in range(i + 1, n_s):
            if h[i] is None or h[j] is None or h[i] == h[j]:
                continue
            pairs2 += 2
            agree2 += 2 * (_sign(m[i] - m[j]) == _sign(h[i] - h[j])) + (m[i] == m[j])
    return agree2, pairs2


def test_the_pairwise_accuracy_width_equals_a_loop_over_trials():
    """Every trial's counts and each size's width (the trials' 2.5-97.5%
    percentile range, numpy's linear quantile) as a loop over trials with
    the same draws says, exactly; the testbed's own pairwise accuracy is
    meta_eval's of the systems' means."""
    from qarla_spark.measures.meta_eval import pairwise_accuracy
    rng = np.random.default_rng(5)
    human = np.round(_testbed(2, n_topics=11, n_systems=6, missing=0.05) * 2) / 2  # human ties
    first = human + rng.normal(0.0, 0.8, human.shape)
    second = np.round(first, 0)                  # metric ties
    second[rng.random(human.shape) < 0.15] = np.nan   # other cells than the first's
    names = [f"t{k:02d}" for k in range(human.shape[0])]
    sizes, trials = (3, 8, 11, 20), 40
    plan = pl.plan_pairwise_accuracy([first, second], human, sizes, trials, 9, "task",
                                     "PA(q)", ("first", "second"), names)
    assert plan.measures == ("first", "second")
    for m, metric in enumerate((first, second)):
        a2, p2 = _loop_accuracy(metric, human, range(human.shape[0]))
        assert plan.full[m] == a2 / p2
        cells = np.isfinite(metric) & np.isfinite(human)
        ms = [_mean(metric[cells[:, s], s], cells[:, s].sum()) for s in range(6)]
        hs = [_mean(human[cells[:, s], s], cells[:, s].sum()) for s in range(6)]
        assert plan.full[m] == pairwise_accuracy(ms, hs).value
        for k, n in enumerate(sizes):
            values = []
            for r in range(trials):
                sample, _, _ = _trial_topics(9, "task", "PA(q)", 11, n, r, pl.ALWAYS)
                a2, p2 = _loop_accuracy(metric, human, sample)
                assert (plan.agree2[k, r, m], plan.pairs2[k, r, m]) == (a2, p2)
                if p2:
                    values.append(a2 / p2)
            low, high = np.quantile(values, [0.025, 0.975], method="linear")
            assert plan.ci_width[k, m] == high - low
    # narrower with more topics (the bootstrap's picture of a new testbed)
    assert (plan.ci_width[-1] < plan.ci_width[0]).all()
    # the topics' order does not matter (their names do)
    shuffled = rng.permutation(human.shape[0])
    again = pl.plan_pairwise_accuracy([first[shuffled], second[shuffled]], human[shuffled],
                                      sizes, trials, 9, "task", "PA(q)", ("first", "second"),
                                      [names[k] for k in shuffled])
    assert np.array_equal(again.agree2, plan.agree2) and np.array_equal(
        again.ci_width, plan.ci_width, equal_nan=True)
