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
from qarla_spark.measures import exact, thresholds
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


def crafted_evaluation(spark, rows):
    """A stand-in for the stage's Evaluation: its kernel rows are given."""
    from qarla_spark.measures.qarla_topic import COLUMNS, RESULT_SCHEMA
    frame = spark.createDataFrame([tuple(r.get(c) for c in COLUMNS) for r in rows],
                                  RESULT_SCHEMA)
    return SimpleNamespace(rows=lambda kind: frame.filter(frame.kind == kind),
                           cube=SimpleNamespace(spark=spark), sets=(MetricSet(["x"]),),
                           labelled=lambda df: df.join(spark.createDataFrame(
                               [(0, "x", 1)], "set_id int, metric_set string, n_metrics int"),
                               "set_id"))


def queen_rows(name, role, values, holdout="h"):
    return [dict(kind="queen", task="t", topic=f"t{i}", summarizer=name, role=role, set_id=0,
                 holdout=holdout, num=k, den=DEN) for i, k in enumerate(values)]


@pytest.mark.spark
def test_human_test_ties_reached_through_different_orders_are_ties(spark):
    """Fix 1: a held-out model and a peer with exactly equal means (QUEEN,
    and a plain baseline whose per-topic scores are 0.1, 0.2, 0.3 in
    different orders) are a tie, not a win; one above by 1/18 per topic wins."""
    from qarla_spark.stages.qarla_tables import PLAIN_SCHEMA, human_test
    rows = queen_rows("h", "model", H_QUEEN) + queen_rows("a", "peer", A_QUEEN)
    rows += queen_rows("g", "model", (2, 5, 18), holdout="g") + \
        queen_rows("a", "peer", A_QUEEN, holdout="g")
    plain = spark.createDataFrame(
        [("score", "t", f"t{i}", "R-1.a", "h", who, role, v, None, None)
         for who, role, values in (("h", "model", (0.1, 0.2, 0.3)),
                                   ("a", "peer", (0.3, 0.2, 0.1)))
         for i, v in enumerate(values)], PLAIN_SCHEMA)
    assert float_mean_in_order([0.1, 0.2, 0.3]) > float_mean_in_order([0.3, 0.2, 0.1])
    got = {(r.measure, r.held_out_model): r.ranked_first
           for r in human_test(crafted_evaluation(spark, rows), plain).collect()}
    assert got == {("QUEEN(x)", "h"): False, ("QUEEN(x)", "g"): True, ("R-1.a", "h"): False}


def test_systems_rank_exactly():
    """Fix 2 on the systems/ table (its per-task reduce, ``task_tables``):
    equal exact means are equal scores; a model tied with a peer is not
    above every system."""
    import pandas as pd

    from qarla_spark.stages.qarla_tables import SUMMARY_SCHEMA, task_tables
    rows = queen_rows("h", "model", H_QUEEN) + queen_rows("a", "peer", A_QUEEN)
    frame = pd.DataFrame([dict(r, part="jk", count=1, n_peers=None, n_le=None, n_pairs=None)
                          for r in rows]).drop(columns=["task", "holdout"])
    columns = [c.split()[0] for c in SUMMARY_SCHEMA.split(", ")]
    got = {r["summarizer"]: r for r in (dict(zip(columns, t)) for t in task_tables(("t",), frame))
           if r["table"] == "system"}
    assert got["h"]["value"] == got["a"]["value"] == 22 / 54
    assert got["h"]["above"] is False and got["a"]["above"] is None
    assert (got["a"]["position"], got["h"]["position"]) == (1, 2)      # tie: name order


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
    from qarla_spark.metrics import registry
    assert not [n for n in registry.BUILTIN if registry.SEPARATOR in n]
    for bad in ("a,b", " a", ""):
        with pytest.raises(ConfigError, match="invalid metric name"):
            registry.register_metric(bad, lambda s, r: 0.0)
    with pytest.raises(ConfigError, match="it separates the metrics of a set"):
        registry.check_metric_name("bert,score", "table.csv")


@pytest.mark.spark
def test_user_tables_and_reused_tables_with_a_separator_in_a_name_are_errors(spark, tmp_path):
    from qarla_spark.errors import InputError
    from qarla_spark.spark.similarities import add_user_tables
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


@settings(max_examples=300, deadline=None)
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
