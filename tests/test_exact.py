"""Issue 10's fixes: exact means (the same double whatever the order of the
terms), exact comparisons of means (the human-summariser test, the models
ranked above every system), metric sets as values, one home for the
thresholds."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.errors import ConfigError
from qarla_spark import thresholds
from qarla_spark.measures import exact
from qarla_spark.measures.agreement import rank_exact, ranked_first
from qarla_spark.measures.metric_sets import MetricSet, best_of

# per-topic QUEEN of a held-out model h and of a peer a, over three topics:
# the same multiset of values k/18, so their means are exactly equal, yet
# summed in topic order as doubles h's mean comes out one ulp higher
H_QUEEN = (1, 4, 17)
A_QUEEN = (17, 4, 1)
DEN = 18


def float_mean_in_order(values):
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def test_the_tie_is_a_trap_for_float_sums():
    """What the old human_test/ did (Spark's avg: a float sum in row order):
    h beats a by float noise although the means are equal."""
    h = float_mean_in_order([k / DEN for k in H_QUEEN])
    a = float_mean_in_order([k / DEN for k in A_QUEEN])
    assert h > a
    assert exact.mean(exact.ratio(k, DEN) for k in H_QUEEN) == \
        exact.mean(exact.ratio(k, DEN) for k in A_QUEEN)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 50)), min_size=1, max_size=8),
       st.randoms())
def test_exact_means_do_not_depend_on_the_order(pairs, rnd):
    reals = [n / d for n, d in pairs]
    shuffled = list(pairs)
    rnd.shuffle(shuffled)
    assert exact.to_float(exact.mean(exact.ratio(n, d) for n, d in pairs)) == \
        exact.to_float(exact.mean(exact.ratio(n, d) for n, d in shuffled))
    assert exact.to_float(exact.mean(map(exact.real, reals))) == \
        exact.to_float(exact.mean(map(exact.real, reversed(reals))))
    # grouped by denominator (what Spark pre-aggregates) = one by one
    by_den = {}
    for n, d in pairs:
        s, c = by_den.get(d, (0, 0))
        by_den[d] = (s + n, c + 1)
    assert exact.grouped_ratio_mean((s, d, c) for d, (s, c) in by_den.items()) == \
        exact.mean(exact.ratio(n, d) for n, d in pairs)


def test_to_float_rounds_correctly():
    assert exact.to_float(Fraction(127, 1100)) == 127 / 1100
    assert exact.to_float(Fraction(1, 3)) == 1 / 3
    # 0.1 + 0.2 as exact rationals of the doubles, rounded once
    assert exact.to_float(exact.real(0.1) + exact.real(0.2)) == 0.30000000000000004
    with pytest.raises(ZeroDivisionError):
        exact.ratio(1, 0)
    with pytest.raises(ValueError):
        exact.mean([])


def test_ranked_first_and_ranking_compare_exactly():
    h = exact.mean(exact.ratio(k, DEN) for k in H_QUEEN)
    a = exact.mean(exact.ratio(k, DEN) for k in A_QUEEN)
    assert not ranked_first(h, [a])                      # a tie is not a win
    assert ranked_first(h + Fraction(1, 10 ** 30), [a])  # far below float resolution
    assert not ranked_first(h, [])                       # nothing to beat
    ranks = rank_exact({("h", "model"): h, ("a", "peer"): a, ("z", "model"): Fraction(1, 9)})
    assert ranks[("a", "peer")] == (1, None) and ranks[("h", "model")] == (2, False)
    assert ranks[("z", "model")] == (3, False)
    # every summary with QUEEN 1: no model is above every system (fix 2)
    ones = {(n, r): Fraction(1) for n, r in [("m0", "model"), ("m1", "model"), ("p0", "peer")]}
    assert [v[1] for k, v in rank_exact(ones).items() if k[1] == "model"] == [False, False]


def crafted_details(models, own, peer_queen, plain=None):
    """The QARLA stage's per-topic ``detail`` records of one set "x" and one
    peer "a" over three topics: ``own[m][i]`` is model m's QUEEN with itself
    held out in topic i, ``peer_queen[i]`` the peer's with any model held
    out (and with all models), all over 18 samples; ``plain``: per topic, a
    baseline's (peer score, model score) per model."""
    out = []
    for i in range(3):
        n_m = len(models)
        from qarla_spark.stages.records import TopicDetail
        detail = TopicDetail(
            topic=f"t{i}", peers=["a"], models=list(models),
            full_num=np.array([[peer_queen[i]]]), full_den=np.array([DEN]),
            jackknifed=True,
            jk_num=np.full((1, n_m, 1), peer_queen[i]), jk_den=np.full((1, n_m), DEN),
            own_num=np.array([[own[m][i]] for m in models]),
            own_den=np.full(n_m, DEN), jack=np.array([0]), n_models=n_m,
            curve=None, n_orders=0, judged=None, king=True,
            plain=None if plain is None else {
                "R-1.a": (np.array([[plain[m][i][0] for m in models]]),
                          np.array([plain[m][i][1] for m in models]))})
        out.append(("detail", detail))
    return out


def detail_tables(items, plain_baselines=()):
    """The detailed-set reduce's tables (rows as tuples) and what it tells
    the driver of the best set (here "x")."""
    from qarla_spark.spark.rounds import arrow_of
    from qarla_spark.stages.qarla import DetailedSets, DetailRound, _detail_reduce
    ctx = DetailRound(DetailedSets.of({"t": [MetricSet(["x"])]}, ["x"]), "standard", "auto", {},
                      ["x"], [], list(plain_baselines), {"t": MetricSet(["x"])}, False)
    out = {}
    for _, kind, value in _detail_reduce("t", items, ctx):
        if kind == "driver":
            out[kind] = value
        else:
            out[kind] = [tuple(r.values()) for r in arrow_of(value).to_pylist()]
    return out


def test_human_test_ties_reached_through_different_orders_are_ties():
    """Fix 1: a held-out model and a peer with exactly equal means (QUEEN,
    and a plain baseline whose per-topic scores are 0.1, 0.2, 0.3 in
    different orders) are a tie, not a win; one above by 1/18 per topic wins."""
    own = {"h": H_QUEEN, "g": (2, 5, 18)}
    plain = {"h": [(0.3, 0.1), (0.2, 0.2), (0.1, 0.3)],
             "g": [(0.3, 0.0), (0.2, 0.0), (0.1, 0.0)]}
    assert float_mean_in_order([0.1, 0.2, 0.3]) > float_mean_in_order([0.3, 0.2, 0.1])
    rows = detail_tables(crafted_details(["g", "h"], own, A_QUEEN, plain),
                         ["R-1.a"])["human_test"]
    got = {(r[1], r[2]): r[3] for r in rows}
    assert got[("QUEEN(x)", "h")] is False and got[("QUEEN(x)", "g")] is True
    assert got[("R-1.a", "h")] is False and got[("R-1.a", "g")] is False


def test_systems_rank_exactly():
    """Fix 2 on the systems/ table (its per-task reduce): equal exact means
    are equal scores; a model tied with a peer is not above every system."""
    found = detail_tables(crafted_details(["h"], {"h": H_QUEEN}, A_QUEEN))
    got = {r[1]: r for r in found["systems"]}
    assert got["h"][4] == got["a"][4] == 22 / 54
    ranked = {r.name: r for r in found["driver"].ranking}
    assert ranked["h"].above_peers is False and ranked["a"].above_peers is None
    assert (ranked["a"].position, ranked["h"].position) == (1, 2)      # tie: name order


# ---------------------------------------------------------------- metric sets

def test_metric_sets_are_values():
    a = MetricSet(["TVM.512", "R-1.a", "R-1.a"])
    assert a.names == ("R-1.a", "TVM.512") and a.size == 2 and a.label == "R-1.a,TVM.512"
    assert a == MetricSet.parse(" TVM.512 , R-1.a") and hash(a) == hash(MetricSet(a))
    assert "R-1.a" in a and list(a) == ["R-1.a", "TVM.512"]
    assert a.indices(["x", "TVM.512", "R-1.a"]) == (1, 2)
    assert MetricSet.from_indices([2, 0], ["a", "b", "c"]) == MetricSet(["a", "c"])
    with pytest.raises(ConfigError, match="not in the similarity table: nope"):
        MetricSet(["nope"]).indices(["a"])
    with pytest.raises(ConfigError, match="an empty metric set"):
        MetricSet.parse(" , ")
    with pytest.raises(ConfigError, match="not in the similarity table: zz"):
        MetricSet.parse("a,zz", known=["a", "b"])
    with pytest.raises(TypeError):
        MetricSet("a,b")
    with pytest.raises(AttributeError):
        a.names = ()
    import pickle
    assert pickle.loads(pickle.dumps(a)) == a


def test_ties_between_sets_fewer_metrics_then_name():
    sets = [MetricSet.parse(t) for t in ("b,c", "a,d", "b", "TVM.128", "TVM.1")]
    scores = dict.fromkeys(sets, 0.5)
    assert best_of(scores) == MetricSet(["TVM.1"])
    del scores[MetricSet(["TVM.1"])], scores[MetricSet(["TVM.128"])], scores[MetricSet(["b"])]
    assert best_of(scores) == MetricSet(["a", "d"])
    assert sorted(sets)[0] == MetricSet(["TVM.1"])


def test_metric_names_may_not_contain_the_separator(tmp_path):
    from qarla_spark import names
    from qarla_spark.metrics import registry
    assert not [n for n in registry.BUILTIN if names.SEPARATOR in n]
    for bad in ("a,b", " a", ""):
        with pytest.raises(ConfigError, match="invalid metric name"):
            registry.register_metric(bad, lambda s, r: 0.0)
    with pytest.raises(ConfigError, match="it separates the metrics of a set"):
        names.check_metric_name("bert,score", "table.csv")


@pytest.mark.spark
def test_user_tables_and_reused_tables_with_a_separator_in_a_name_are_errors(spark, tmp_path):
    from qarla_spark.errors import InputError
    from qarla_spark.stages.similarity_plan import add_user_tables
    from qarla_spark.stages.similarities import reuse
    from testbeds import make_similarities
    sims, _, summaries = make_similarities(n_topics=1, n_models=3, n_peers=1,
                                           metrics=["bert,score"], seed=1)
    path = tmp_path / "user.parquet"
    sims.to_parquet(path)
    m_df = spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]])
    s_df = spark.createDataFrame(sims)
    with pytest.raises(InputError, match=r"user\.parquet, field 'metric'.*'bert,score'"):
        add_user_tables(s_df.limit(0), m_df, [str(path)], [])
    with pytest.raises(InputError, match=r"field 'metric'.*invalid metric name 'bert,score'"):
        reuse(spark, str(path), SimpleNamespace(summaries=m_df))


def test_the_thresholds_live_in_one_place():
    """No literal 3 or 4 model threshold is left beside them in the code
    that decides which topics a measure uses."""
    import re
    from importlib import resources
    assert (thresholds.MIN_MODELS_QUEEN, thresholds.MIN_MODELS_JACKKNIFE) == (3, 4)
    assert thresholds.king_defined(4, 1) and not thresholds.king_defined(4, 0)
    assert not thresholds.king_defined(3, 5) and thresholds.queen_defined(3)
    base = resources.files("qarla_spark")
    pattern = re.compile(r"(n_models|len\(models\))[^\n]{0,8}(<|>=|==)\s*[34]\b")
    for sub in ("measures", "stages", "spark", "io"):
        for f in (base / sub).iterdir():
            if f.name.endswith(".py"):
                assert not pattern.search(f.read_text()), f.name


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.1, 0.2, 0.25, 0.7, 1.0])),
                min_size=2, max_size=15))
def test_correlations_equal_scipy_and_ignore_the_order_of_rows(points):
    """The one correlation function of the run (numpy) against scipy, ties
    included; the points are taken in the order of their keys."""
    from scipy import stats

    from qarla_spark.measures.agreement import correlations
    x = [float(a) for a, _ in points]
    y = [b for _, b in points]
    keys = [f"s{i:02d}" for i in range(len(points))]
    got = correlations(keys, x, y, min_n=2)
    assert np.array_equal(got, correlations(keys[::-1], x[::-1], y[::-1], min_n=2), equal_nan=True)
    if len(set(x)) < 2 or len(set(y)) < 2:
        assert all(v != v for v in got)         # NaN: a constant side
        return
    expected = (stats.pearsonr(x, y)[0], stats.spearmanr(x, y)[0], stats.kendalltau(x, y)[0])
    assert got == pytest.approx(expected, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just("ratio"), st.integers(0, 10 ** 6), st.integers(1, 5000), st.integers(1, 9)),
    st.tuples(st.just("real"), st.floats(allow_nan=False, allow_infinity=False,
                                         min_value=-1e300, max_value=1e300)),
    st.tuples(st.just("fraction"), st.fractions(max_denominator=10 ** 9))), min_size=1))
def test_mean_is_the_exact_rational_mean_of_its_terms(terms):
    """exact.Mean keeps integers and builds one fraction at the end (issue
    13: a Fraction sum reduces at every term); it equals the mean of the
    terms summed as fractions one by one, and so does exact.mean."""
    m, total, n = exact.Mean(), Fraction(0), 0
    for term in terms:
        if term[0] == "ratio":
            _, num, den, count = term
            m.add_ratio(num, den, count)
            total, n = total + Fraction(num, den), n + count
        elif term[0] == "real":
            m.add_real(term[1])
            total, n = total + Fraction(term[1]), n + 1
        else:
            m.add_fraction(term[1])
            total, n = total + term[1], n + 1
    assert m.value() == total / n and m.n == n
    assert exact.to_float(m.value()) == exact.to_float(total / n)
    reals = [Fraction(t[1]) for t in terms if t[0] == "real"] or [Fraction(1, 3)]
    assert exact.mean(reals) == sum(reals, Fraction(0)) / len(reals)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.lists(st.integers(-10 ** 6, 10 ** 6),
                                                      min_size=3, max_size=3),
                          st.sampled_from([1, 6, 11, 990, 2 ** 40 + 1, 10 ** 15 + 7])),
                max_size=40))
def test_ratio_sums_and_divide_are_exact_sums_rounded_once(rows):
    """exact.ratio_sums: per group, Σ num/den exactly (as numerator and
    denominator); exact.divide rounds correctly, big integers included —
    the means the QARLA stage's per-task reduce takes many at a time."""
    groups = [g for g, _, _ in rows]
    num = np.asarray([n for _, n, _ in rows], dtype=np.int64).reshape(len(rows), 3)
    den = [d for _, _, d in rows]
    got_num, got_den = exact.ratio_sums(num, den, groups, 5)
    for g in range(5):
        mine = [(n, d) for (gg, n, d) in rows if gg == g]
        for s in range(3):
            want = sum((Fraction(n[s], d) for n, d in mine), Fraction(0))
            assert Fraction(int(got_num[g, s]), int(got_den[g])) == want
            if mine:
                mean = want / len(mine)
                got = exact.divide(np.asarray([got_num[g, s]], dtype=object),
                                   np.asarray([int(got_den[g]) * len(mine)], dtype=object))[0]
                assert got == exact.to_float(mean)
    flat_num, flat_den = exact.ratio_sums(num[:, 0], den, groups, 5)
    assert [Fraction(int(a), int(b)) for a, b in zip(flat_num, flat_den)] == \
        [Fraction(int(a), int(b)) for a, b in zip(got_num[:, 0], got_den)]
