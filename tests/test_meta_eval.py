"""Issue 28 (first increment): the pure statistics of judge-based
meta-evaluation (qarla_spark.measures.meta_eval, SPEC §11) against plain
loops over pairs with exact fractions, written here independently, plus
worked examples by hand and invariances."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import meta_eval as me

# metric values with ties and float quirks (0.3 - 0.2 != 0.1 - 0.0)
GRID = [0.0, 0.1, 0.2, 0.3, 0.7, 1.0, 1.5, -0.4]
LIKERT = [1.0, 2.0, 3.0, 4.0]
SETTINGS = settings(max_examples=100, deadline=None)


def paired(metric=st.sampled_from(GRID), human=st.sampled_from(LIKERT), max_size=8):
    return st.integers(0, max_size).flatmap(
        lambda n: st.tuples(st.lists(metric, min_size=n, max_size=n),
                            st.lists(human, min_size=n, max_size=n)))


def tie_free(max_size=8):
    unique = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
    return st.integers(0, max_size).flatmap(
        lambda n: st.tuples(st.lists(unique, min_size=n, max_size=n, unique=True),
                            st.lists(unique, min_size=n, max_size=n, unique=True)))


# ---------------------------------------------------------------------------
# references: loops over pairs, exact fractions
# ---------------------------------------------------------------------------

def ref_pairwise_accuracy(m, h):
    """(agreement, pairs): pairs with unequal human scores; a metric tie ½."""
    agree, pairs = Fraction(0), 0
    for a, b in itertools.combinations(range(len(m)), 2):
        if h[a] == h[b]:
            continue
        pairs += 1
        if m[a] == m[b]:
            agree += Fraction(1, 2)
        elif (m[a] > m[b]) == (h[a] > h[b]):
            agree += 1
    return agree, pairs


def ref_acc_eq(m, h, eps, pairs=None):
    """(C, D, T_h, T_m, T_hm) over ``pairs`` (default: all)."""
    c = d = th = tm = thm = 0
    for a, b in pairs if pairs is not None else itertools.combinations(range(len(m)), 2):
        metric_tie = abs(m[a] - m[b]) <= eps
        human_tie = h[a] == h[b]
        if metric_tie and human_tie:
            thm += 1
        elif metric_tie:
            tm += 1
        elif human_tie:
            th += 1
        elif (m[a] > m[b]) == (h[a] > h[b]):
            c += 1
        else:
            d += 1
    return c, d, th, tm, thm


def ref_tie_calibration(m, h, groups=None):
    """(epsilon, exact value): every candidate tried, the mean over groups
    with a pair of their acc_eq, the first (smallest) best candidate."""
    groups = groups if groups is not None else ["all"] * len(m)
    members = defaultdict(list)
    for k, g in enumerate(groups):
        members[g].append(k)
    pair_lists = [list(itertools.combinations(ks, 2)) for ks in members.values()]
    pair_lists = [ps for ps in pair_lists if ps]
    if not pair_lists:
        return None
    cands = sorted({0.0} | {abs(m[a] - m[b]) for ps in pair_lists for a, b in ps})
    best = None
    for eps in cands:
        accs = []
        for ps in pair_lists:
            c, _, _, _, thm = ref_acc_eq(m, h, eps, ps)
            accs.append(Fraction(c + thm, len(ps)))
        value = sum(accs, Fraction(0)) / len(accs)
        if best is None or value > best[1]:
            best = (eps, value)
    return best


def ref_p_values(observed, resampled):
    n = len(observed)
    return [[sum(1 for r in resampled if r[a] - r[b] >= observed[a] - observed[b])
             for b in range(n)] for a in range(n)]


def ref_clusters(values, better, names):
    """Clusters as lists, walking down the sorted measures."""
    order = sorted(range(len(values)), key=lambda k: (-values[k], names[k]))
    clusters = []
    for k in order:
        if clusters and not any(better[x][k] for x in clusters[-1]):
            clusters[-1].append(k)
        else:
            clusters.append([k])
    ranks = [0] * len(values)
    for r, members in enumerate(clusters, start=1):
        for k in members:
            ranks[k] = r
    return tuple(ranks)


# ---------------------------------------------------------------------------
# pairwise accuracy
# ---------------------------------------------------------------------------

# Four systems A, B, C, D (used by several worked examples below):
#   human  h = 4, 3, 3, 1
#   metric m = 1.25, 0.5, 0.625, 0.75
# the six pairs, |m_i - m_j| and what each side says:
#   AB 0.75   h A>B   m A>B   concordant
#   AC 0.625  h A>C   m A>C   concordant
#   AD 0.5    h A>D   m A>D   concordant
#   BC 0.125  h B=C   m B<C   the humans tie
#   BD 0.25   h B>D   m B<D   discordant
#   CD 0.125  h C>D   m C<D   discordant
H4 = [4.0, 3.0, 3.0, 1.0]
M4 = [1.25, 0.5, 0.625, 0.75]


def test_pairwise_accuracy_by_hand():
    # BC is left out (equal human scores): 5 pairs, 3 agree, no metric tie
    # -> agree2 = 2*3 = 6, pairs2 = 2*5 = 10, accuracy 0.6
    got = me.pairwise_accuracy(M4, H4)
    assert (got.agree2, got.pairs2, got.value) == (6, 10, 0.6)
    # D's metric score made equal to C's (0.625): CD, discordant, becomes a
    # metric tie counting 1/2; AB, AC, AD agree, BD does not: agree2 = 7
    got = me.pairwise_accuracy([1.25, 0.5, 0.625, 0.625], H4)
    assert (got.agree2, got.pairs2) == (7, 10)
    # D's score equal to B's (0.5) instead: BD is a metric tie (1/2) and CD
    # now agrees (0.625 > 0.5): agree2 = 2*4 + 1 = 9
    assert me.pairwise_accuracy([1.25, 0.5, 0.625, 0.5], H4).agree2 == 9
    # C's score equal to B's: the metric ties BC, which the humans tie too,
    # so it stays out: nothing changes
    assert me.pairwise_accuracy([1.25, 0.5, 0.5, 0.75], H4).agree2 == 6


@SETTINGS
@given(paired())
def test_pairwise_accuracy_equals_the_loop(data):
    m, h = data
    agree, pairs = ref_pairwise_accuracy(m, h)
    got = me.pairwise_accuracy(m, h)
    assert (got.agree2, got.pairs2) == (2 * agree, 2 * pairs)
    assert isinstance(got.agree2, int) and isinstance(got.pairs2, int)
    if pairs:
        assert got.value == float(agree / pairs)
    else:
        assert math.isnan(got.value)


@SETTINGS
@given(paired(), st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=8, max_size=8,
                          unique=True))
def test_pairwise_accuracy_ignores_strictly_increasing_transforms(data, image):
    """Any strictly increasing map of the metric's values (ties kept, order
    kept) leaves the counts as they are."""
    m, h = data
    distinct = sorted(set(m))
    f = dict(zip(distinct, sorted(image)))
    assert me.pairwise_accuracy([f[x] for x in m], h) == me.pairwise_accuracy(m, h)


@SETTINGS
@given(paired())
def test_negating_the_metric_turns_a_into_1_minus_a(data):
    """Agreements become disagreements, metric ties stay ½: a -> 1 - a."""
    m, h = data
    got, neg = me.pairwise_accuracy(m, h), me.pairwise_accuracy([-x for x in m], h)
    assert neg.pairs2 == got.pairs2
    assert neg.agree2 == got.pairs2 - got.agree2


# ---------------------------------------------------------------------------
# acc_eq
# ---------------------------------------------------------------------------

def test_acc_eq_by_hand():
    # epsilon = 0: no metric tie; C = AB, AC, AD; D = BD, CD; T_h = BC
    # -> (3 + 0) / 6 = 1/2
    got = me.acc_eq(M4, H4, 0.0)
    assert got == me.AccEq(3, 2, 1, 0, 0)
    assert got.value == 0.5
    # epsilon = 0.25: BC, CD (0.125) and BD (0.25) become metric ties:
    # BC is then a tie of both (correct), BD and CD metric-only ties;
    # C = AB, AC, AD -> (3 + 1) / 6 = 2/3
    got = me.acc_eq(M4, H4, 0.25)
    assert got == me.AccEq(3, 0, 0, 2, 1)
    assert (got.correct, got.pairs, got.value) == (4, 6, 4 / 6)


@SETTINGS
@given(paired(), st.sampled_from([0.0, 0.1, 0.2, 0.30000000000000004, 0.5, 2.0]))
def test_acc_eq_equals_the_loop(data, eps):
    m, h = data
    got = me.acc_eq(m, h, eps)
    c, d, th, tm, thm = ref_acc_eq(m, h, eps)
    assert got == me.AccEq(c, d, th, tm, thm)
    n = len(m) * (len(m) - 1) // 2
    assert got.pairs == n
    if n:
        assert got.value == float(Fraction(c + thm, n))
    else:
        assert math.isnan(got.value)


@SETTINGS
@given(tie_free())
def test_acc_eq_at_zero_on_tie_free_data_is_pairwise_accuracy(data):
    m, h = data
    eq, pa = me.acc_eq(m, h, 0.0), me.pairwise_accuracy(m, h)
    assert (2 * eq.correct, 2 * eq.pairs) == (pa.agree2, pa.pairs2)
    assert eq.value == pa.value or (math.isnan(eq.value) and math.isnan(pa.value))


@SETTINGS
@given(tie_free())
def test_negating_the_metric_on_tie_free_data_turns_acc_eq_into_1_minus_it(data):
    m, h = data
    got, neg = me.acc_eq(m, h, 0.0), me.acc_eq([-x for x in m], h, 0.0)
    assert (neg.concordant, neg.discordant) == (got.discordant, got.concordant)
    assert neg.correct == got.pairs - got.correct


def test_acc_eq_refuses_a_negative_epsilon_and_missing_scores():
    with pytest.raises(ValueError):
        me.acc_eq(M4, H4, -0.1)
    with pytest.raises(ValueError):
        me.acc_eq([0.1, float("nan")], [1.0, 2.0])


# ---------------------------------------------------------------------------
# tie calibration
# ---------------------------------------------------------------------------

def test_tie_calibration_by_hand():
    # candidates: 0 and the distinct differences 0.125, 0.25, 0.5, 0.625, 0.75
    #   eps 0      C=3 D=2 T_h=1          -> 3/6
    #   eps 0.125  BC -> T_hm, CD -> T_m  -> 4/6
    #   eps 0.25   BD -> T_m (was D)      -> 4/6   (equal: the smaller wins)
    #   eps 0.5    AD -> T_m (was C)      -> 3/6
    #   eps 0.625  AC -> T_m              -> 2/6
    #   eps 0.75   AB -> T_m              -> 1/6
    got = me.tie_calibration(M4, H4)
    assert (got.epsilon, got.num, got.den, got.groups) == (0.125, 2, 3, 1)
    assert got.counts == me.AccEq(3, 1, 0, 1, 1)
    assert got.value == 2 / 3


def test_tie_calibration_averages_groups_with_one_epsilon():
    # group "t1": the four systems above; group "t2": two summaries the
    # humans tie (1, 1) with metric scores 0.5 and 0 (difference 0.5):
    # acc_eq 0 below eps 0.5 (T_h), 1 from 0.5 on (T_hm).
    #   eps     t1    t2   mean over groups   pooled counts (7 pairs)
    #   0       3/6   0    1/4                3/7
    #   0.125   4/6   0    1/3                4/7  <- pooled would pick this
    #   0.25    4/6   0    1/3                4/7
    #   0.5     3/6   1    3/4  <- the best   4/7
    #   0.625   2/6   1    2/3                3/7
    #   0.75    1/6   1    7/12               2/7
    m = M4 + [0.5, 0.0]
    h = H4 + [1.0, 1.0]
    groups = ["t1"] * 4 + ["t2"] * 2
    got = me.tie_calibration(m, h, groups)
    assert (got.epsilon, got.num, got.den, got.groups) == (0.5, 3, 4, 2)
    # pooled at 0.5: t1 has C = AB, AC; T_m = AD, BD, CD; T_hm = BC; t2 T_hm
    assert got.counts == me.AccEq(2, 0, 0, 3, 2)
    # the order of the scores does not matter, nor the labels' type
    perm = [5, 2, 0, 4, 1, 3]
    again = me.tie_calibration([m[k] for k in perm], [h[k] for k in perm],
                               [(1 if groups[k] == "t1" else 2) for k in perm])
    assert again == got


@SETTINGS
@given(paired(max_size=7))
def test_tie_calibration_equals_trying_every_candidate(data):
    m, h = data
    want = ref_tie_calibration(m, h)
    got = me.tie_calibration(m, h)
    if want is None:
        assert got.groups == 0 and math.isnan(got.value)
        return
    assert (got.epsilon, Fraction(got.num, got.den)) == want
    assert got.counts == me.AccEq(*ref_acc_eq(m, h, got.epsilon))
    assert got.value == got.counts.value            # one group: the same ratio


@SETTINGS
@given(st.integers(0, 12).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from(GRID), min_size=n, max_size=n),
    st.lists(st.sampled_from(LIKERT), min_size=n, max_size=n),
    st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=n, max_size=n))))
def test_grouped_tie_calibration_equals_trying_every_candidate(data):
    m, h, groups = data
    want = ref_tie_calibration(m, h, groups)
    got = me.tie_calibration(m, h, groups)
    if want is None:
        assert got.groups == 0
        return
    assert (got.epsilon, Fraction(got.num, got.den)) == want
    assert got.groups == sum(1 for g in set(groups) if groups.count(g) > 1)
    within = [(a, b) for a, b in itertools.combinations(range(len(m)), 2)
              if groups[a] == groups[b]]
    assert got.counts == me.AccEq(*ref_acc_eq(m, h, got.epsilon, within))


def test_tie_calibration_with_many_group_sizes_is_exact():
    """Groups of 2..30 scores (the lcm of their pair counts is far beyond
    int64) and a few thousand pairs: the value is the exact mean of the
    groups' acc_eq at the chosen epsilon, and no candidate does better."""
    rng = np.random.default_rng(3)
    sizes = list(range(2, 31))
    groups = np.repeat(np.arange(len(sizes)), sizes)
    m = np.round(rng.normal(size=groups.size), 1)
    h = rng.integers(1, 4, groups.size).astype(float) + m * rng.uniform(0, 1, groups.size)
    got = me.tie_calibration(m, h, groups)

    def mean_at(eps):
        accs = [Fraction(me.acc_eq(m[groups == g], h[groups == g], eps).correct,
                         me.acc_eq(m[groups == g], h[groups == g], eps).pairs)
                for g in range(len(sizes))]
        return sum(accs, Fraction(0)) / len(accs)

    assert Fraction(got.num, got.den) == mean_at(got.epsilon)
    assert got.groups == len(sizes)
    for eps in (0.0, 0.1, 0.2, 0.3, 0.5, 1.0):
        assert mean_at(eps) <= Fraction(got.num, got.den)
        if eps < got.epsilon:
            assert mean_at(eps) < Fraction(got.num, got.den)


# ---------------------------------------------------------------------------
# pairwise p-values and soft pairwise accuracy
# ---------------------------------------------------------------------------

def test_pairwise_p_values_by_hand():
    # systems A, B on three items: A = 3, 1, 2; B = 1, 1, 0; differences
    # d = 2, 0, 2, observed sum 4. All 8 sign patterns s: sum s*d is 4 for
    # 2 patterns (s1 = s3 = +1), 0 for 4, -4 for 2. p(A better than B) =
    # #{>= 4} / 8 = 2/8; p(B better than A): B - A observed -4, and every
    # null value (-4, 0, 4) reaches it: 8/8.
    scores = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, 0.0]])
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=3)))
    got = me.pairwise_p_values(scores.sum(axis=1), signs @ scores.T)
    assert got.replicates == 8
    assert got.at_least[0, 1] == 2 and got.at_least[1, 0] == 8
    assert got.p[0, 1] == 0.25


@SETTINGS
@given(st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 1.0, 2.0, 0.5]), min_size=n, max_size=n),
    st.lists(st.lists(st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0]), min_size=n, max_size=n),
             min_size=1, max_size=6))))
def test_pairwise_p_values_equal_the_loop(data):
    observed, resampled = data
    got = me.pairwise_p_values(observed, resampled)
    assert got.at_least.tolist() == ref_p_values(observed, resampled)
    assert got.replicates == len(resampled)


def test_soft_pairwise_accuracy_by_hand():
    # three systems, pairs (0,1), (0,2), (1,2):
    #   metric p = 0.25, 0.5, 1.0; human p = 0.5, 0.5, 0.75
    #   |differences| = 0.25, 0, 0.25 -> mean 1/6 -> SPA = 5/6
    pm = [[0, 0.25, 0.5], [0, 0, 1.0], [0, 0, 0]]
    ph = [[0, 0.5, 0.5], [0, 0, 0.75], [0, 0, 0]]
    assert me.soft_pairwise_accuracy(pm, ph) == 5 / 6
    # only the upper triangle is read
    assert me.soft_pairwise_accuracy(np.array(pm) + np.tril(np.ones((3, 3)), -1), ph) == 5 / 6
    assert me.soft_pairwise_accuracy(pm, pm) == 1.0
    assert math.isnan(me.soft_pairwise_accuracy([[1.0]], [[1.0]]))


@SETTINGS
@given(st.integers(2, 6).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 7), min_size=n * n, max_size=n * n),
    st.lists(st.integers(0, 5), min_size=n * n, max_size=n * n))))
def test_soft_pairwise_accuracy_equals_the_loop(data):
    """From count matrices (exact k/B, B = 7 and 5: not binary fractions)."""
    km, kh = data
    n = math.isqrt(len(km))
    pm = me.PairwisePValues(np.array(km).reshape(n, n), 7)
    ph = me.PairwisePValues(np.array(kh).reshape(n, n), 5)
    pairs = list(itertools.combinations(range(n), 2))
    distance = sum((abs(Fraction(km[a * n + b], 7) - Fraction(kh[a * n + b], 5))
                    for a, b in pairs), Fraction(0))
    want = 1 - distance / len(pairs)
    assert me.soft_pairwise_accuracy(pm, ph) == float(want)


@SETTINGS
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.integers(1, 9),
    st.lists(st.integers(0, 9), min_size=n * n, max_size=n * n),
    st.lists(st.integers(0, 9), min_size=n * n, max_size=n * n))))
def test_soft_pairwise_accuracy_of_counts_with_one_denominator_equals_the_loop(data):
    """Both sides counts over the same B (the integer fast path): the same
    exact 1 − mean |k_m/B − k_h/B| as the loop with fractions, rounded
    once; NaN for one system."""
    b, km, kh = data
    km = [min(k, b) for k in km]
    kh = [min(k, b) for k in kh]
    n = math.isqrt(len(km))
    got = me.soft_pairwise_accuracy(me.PairwisePValues(np.array(km).reshape(n, n), b),
                                    me.PairwisePValues(np.array(kh).reshape(n, n), b))
    pairs = list(itertools.combinations(range(n), 2))
    if not pairs:
        assert math.isnan(got)
        return
    distance = sum((abs(Fraction(km[x * n + y], b) - Fraction(kh[x * n + y], b))
                    for x, y in pairs), Fraction(0))
    assert got == float(1 - distance / len(pairs))


@SETTINGS
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.integers(1, 9), st.integers(1, 4),
    st.lists(st.integers(0, 9), min_size=4 * n * n, max_size=4 * n * n),
    st.lists(st.integers(0, 9), min_size=n * n, max_size=n * n))), st.booleans())
def test_soft_pairwise_accuracy_many_equals_one_at_a_time(data, other_b):
    """Every measure's counts at once: the doubles of
    soft_pairwise_accuracy measure by measure (the human side over another
    B too: the per-measure path)."""
    b, k, km, kh = data
    n = math.isqrt(len(kh))
    at_least = np.minimum(np.array(km[:k * n * n]).reshape(k, n, n), b)
    human = me.PairwisePValues(np.minimum(np.array(kh).reshape(n, n), b), b + other_b)
    got = me.soft_pairwise_accuracy_many(at_least, b, human)
    want = [me.soft_pairwise_accuracy(me.PairwisePValues(a, b), human) for a in at_least]
    assert np.array(got).tobytes() == np.array(want).tobytes()


# ---------------------------------------------------------------------------
# significance clusters
# ---------------------------------------------------------------------------

def test_significance_clusters_by_hand():
    # measures a .9, b .8, c .8, d .7, e .5; significantly better: a > c
    # and d > e only. Sorted: a, b, c (b before c: equal values, by name),
    # d, e. a: rank 1. b: a is not better -> 1. c: a (in the cluster) is
    # better -> a new cluster, rank 2, from c. d: c is not better -> 2.
    # e: d, a member of the cluster though not its top, is better -> 3.
    names = ["a", "b", "c", "d", "e"]
    values = [0.9, 0.8, 0.8, 0.7, 0.5]
    better = np.zeros((5, 5), dtype=bool)
    better[0, 2] = better[3, 4] = True
    assert me.significance_clusters(values, better, names) == (1, 1, 2, 2, 3)
    # the tie between b and c read by name: named the other way round, c
    # comes first, opens rank 2 (a is better than it) and b joins it
    assert me.significance_clusters(values, better, ["a", "z", "c", "d", "e"]) == \
        (1, 2, 2, 2, 3)
    # given in another order, the same ranks for the same measures
    perm = [4, 2, 0, 3, 1]
    got = me.significance_clusters([values[k] for k in perm], better[np.ix_(perm, perm)],
                                   [names[k] for k in perm])
    assert got == tuple((1, 1, 2, 2, 3)[k] for k in perm)


def test_significantly_better_counts_alpha_itself():
    assert me.significantly_better([[1.0, 0.05], [0.051, 1.0]]).tolist() == \
        [[False, True], [False, False]]


@SETTINGS
@given(st.integers(0, 7).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.1, 0.2, 0.5, 0.9]), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n * n, max_size=n * n),
    st.permutations([f"m{k}" for k in range(n)]))))
def test_significance_clusters_equal_the_walk(data):
    values, flat, names = data
    n = len(values)
    better = np.array(flat, dtype=bool).reshape(n, n)
    got = me.significance_clusters(values, better, names)
    assert got == ref_clusters(values, better, names)
    if n:
        assert min(got) == 1 and sorted(set(got)) == list(range(1, max(got) + 1))


# ---------------------------------------------------------------------------
# chance baseline
# ---------------------------------------------------------------------------

PINNED = [0.855895569725884, 0.481648590631784]


def test_chance_scores_are_reproducible_and_keyed_by_label():
    a = me.chance_scores(7, ("summeval", "coherence"), (3, 4))
    assert a.shape == (3, 4) and ((a >= 0) & (a < 1)).all()
    assert np.array_equal(a, me.chance_scores(7, ("summeval", "coherence"), (3, 4)))
    assert not np.array_equal(a, me.chance_scores(7, ("summeval", "fluency"), (3, 4)))
    assert not np.array_equal(a, me.chance_scores(8, ("summeval", "coherence"), (3, 4)))
    assert np.array_equal(me.chance_scores(7, "x", 5), me.chance_scores(7, ("x",), (5,)))
    # pinned: the same numbers in any process (no salted hash) and numpy version
    assert me.chance_scores(0, "pin", 2).tolist() == PINNED
    # many draws look uniform
    big = me.chance_scores(1, "uniform", 20000)
    assert abs(big.mean() - 0.5) < 0.01 and len(np.unique(big)) == big.size



@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 4), st.sampled_from([2, 5, 1000]), st.data())
def test_acc_eq_by_groups_from_the_calibration_side_equals_its_own(n, n_m, grid, data):
    """acc_eq_by_groups reading the measures' calibration side (their
    |m_i − m_j| and signs, made once for the criteria) gives its own
    counts, at ε chosen among the differences and off them."""
    values = data.draw(st.lists(st.integers(0, grid), min_size=n * n_m, max_size=n * n_m))
    ms = np.asarray(values, dtype=np.float64).reshape(n, n_m) / grid
    h = np.asarray(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
                   dtype=np.float64) / 3
    groups = me.group_pairs(np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=n,
                                                          max_size=n))))
    eps = [data.draw(st.sampled_from([0.0, 1.0 / grid, 0.3, 2.0])) for _ in range(n_m)]
    side = me.calibration_side(ms, groups)
    want = me.acc_eq_by_groups(ms, h, groups, eps)
    got = me.acc_eq_by_groups(ms, h, groups, eps, side)
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and np.array_equal(a, b)
