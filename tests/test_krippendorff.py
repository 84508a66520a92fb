"""Krippendorff's α, interval metric (qarla_spark.measures.krippendorff;
issue 39, part 3): against its definition computed in fractions by brute
force over the pairs of values (the coincidence matrix), the published
values, and the replicates' weights as copies of units. No Spark."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures.krippendorff import (interval_alpha, interval_alpha_replicates,
                                               unit_labels)


def reference_alpha(units):
    """α by Krippendorff's definition, exactly: the coincidences of every
    ordered pair of values of a unit (weight 1 / (m_u − 1)), the observed
    and the expected disagreement under δ²(a, b) = (a − b)². ``units``:
    lists of values. None when undefined."""
    pairable = [[Fraction(v) for v in u] for u in units if len(u) >= 2]
    coincidences = {}
    for u in pairable:
        m = len(u)
        for i, a in enumerate(u):
            for j, b in enumerate(u):
                if i != j:
                    coincidences[(a, b)] = coincidences.get((a, b), Fraction(0)) \
                        + Fraction(1, m - 1)
    n_c = {}
    for (a, _), o in coincidences.items():
        n_c[a] = n_c.get(a, Fraction(0)) + o
    n = sum(n_c.values(), Fraction(0))
    if n < 2:
        return None
    d_o = sum((o * (a - b) ** 2 for (a, b), o in coincidences.items()), Fraction(0)) / n
    d_e = sum((n_c[a] * n_c[b] * (a - b) ** 2 for a in n_c for b in n_c),
              Fraction(0)) / (n * (n - 1))
    if d_e == 0:
        return None
    return 1 - d_o / d_e


def long_form(units):
    values = [v for u in units for v in u]
    labels = [k for k, u in enumerate(units) for _ in u]
    return values, labels


def same(got, want):
    return math.isnan(got) if want is None else got == float(want)


# --- the published values ----------------------------------------------------

def _matrix(rows):
    """Coders × units with None for "not coded" -> one list per unit."""
    return [[r[j] for r in rows if r[j] is not None] for j in range(len(rows[0]))]


N = None
#: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", §C:
#: 4 observers, 12 units; interval α = 0.849
TEXTBOOK = _matrix([[1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
                    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
                    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
                    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]])
#: Wikipedia's computational example (3 coders, 15 units), as the
#: `krippendorff` package tests it: interval α = 0.810845
WIKIPEDIA = _matrix([[N, N, N, N, N, 3, 4, 1, 2, 1, 1, 3, 3, N, 3],
                     [1, N, 2, 1, 3, 3, 4, 3, N, N, N, N, N, N, N],
                     [N, N, 2, 1, 3, 4, 4, N, 2, 1, 1, 3, 3, N, 4]])


@pytest.mark.parametrize("units, published, digits", [(TEXTBOOK, 0.849, 3),
                                                      (WIKIPEDIA, 0.810845, 6)])
def test_the_published_values(units, published, digits):
    got = interval_alpha(*long_form(units))
    assert round(got, digits) == published
    assert got == float(reference_alpha(units))
    values, labels = long_form(units)
    ones = np.ones(len(unit_labels(labels)))     # the units with a value
    assert interval_alpha_replicates(values, labels, ones) == pytest.approx(got, rel=1e-13)


# --- exact: the definition in fractions --------------------------------------

values = st.one_of(st.integers(1, 5).map(float),
                   st.sampled_from([1 / 3, 2 / 3, 4.67, 0.1, 0.2, 0.3, -0.0]),
                   st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
unit_lists = st.lists(st.lists(values, min_size=0, max_size=5), min_size=0, max_size=8)
# the replicates are doubles (squares of deviations): values whose squared
# differences underflow (|v| < ~1e-154; hypothesis found 3.5e-238 against
# -0.0) make their sums of squares 0 and α NaN there, where the exact α
# is defined — no rating scale is that fine, so those draws are left out
# of the replicates' test only
double_values = values.filter(lambda v: v == 0 or abs(v) > 1e-100)
double_unit_lists = st.lists(st.lists(double_values, min_size=0, max_size=5), min_size=0,
                             max_size=8)


@settings(max_examples=300, deadline=None)
@given(unit_lists)
def test_alpha_is_the_definition_in_fractions_rounded_once(units):
    assert same(interval_alpha(*long_form(units)), reference_alpha(units))


@settings(max_examples=100, deadline=None)
@given(unit_lists, st.randoms(use_true_random=False))
def test_alpha_does_not_depend_on_the_order_of_the_ratings(units, rnd):
    values, labels = long_form(units)
    order = list(range(len(values)))
    rnd.shuffle(order)
    a = interval_alpha(values, labels)
    b = interval_alpha([values[i] for i in order], [f"u{labels[i]}" for i in order])
    assert a == b or (math.isnan(a) and math.isnan(b))


def test_undefined_and_perfect_cases():
    assert math.isnan(interval_alpha([], []))
    assert math.isnan(interval_alpha([3.0, 4.0], ["a", "b"]))          # nothing pairable
    assert math.isnan(interval_alpha([0.1] * 6, [0, 0, 0, 1, 1, 1]))   # no variation
    assert interval_alpha([1.0, 1.0, 2.0, 2.0, 5.0], [0, 0, 1, 1, 2]) == 1.0
    with pytest.raises(ValueError, match="finite"):
        interval_alpha([1.0, float("nan")], [0, 0])


def test_affine_changes_of_the_scale_leave_alpha_as_it_is():
    rng = random.Random(3)
    units = [[rng.randint(1, 5) for _ in range(rng.randint(1, 4))] for _ in range(12)]
    base = interval_alpha(*long_form([[float(v) for v in u] for u in units]))
    for a, b in ((2, 0), (-1, 7), (4, -3)):
        moved = [[float(a * v + b) for v in u] for u in units]
        assert interval_alpha(*long_form(moved)) == base


# --- replicates: weights as copies of units ----------------------------------

@settings(max_examples=150, deadline=None)
@given(double_unit_lists, st.data())
def test_a_weight_is_that_many_copies_of_its_unit(units, data):
    values, labels = long_form(units)
    keys = unit_labels(labels)
    weights = data.draw(st.lists(st.integers(0, 3), min_size=len(keys), max_size=len(keys)))
    got = interval_alpha_replicates(values, labels, np.asarray(weights, dtype=float))
    copies = [units[k] for k, w in zip(keys, weights) for _ in range(w)]
    want = reference_alpha(copies)
    if want is None:
        assert math.isnan(got)
    else:
        assert got == pytest.approx(float(want), rel=1e-9, abs=1e-9)


def test_replicates_are_vectorised_rows():
    values, labels = long_form(TEXTBOOK)
    rng = np.random.default_rng(0)
    w = rng.poisson(1.0, size=(50, len(unit_labels(labels)))).astype(float)
    many = interval_alpha_replicates(values, labels, w)
    assert many.shape == (50,)
    one_by_one = [interval_alpha_replicates(values, labels, row) for row in w]
    np.testing.assert_allclose(many, one_by_one, rtol=1e-13)
    with pytest.raises(ValueError, match="units"):
        interval_alpha_replicates(values, labels, np.ones(3))


def test_criterion_alphas_of_a_judgments_table():
    """Per criterion, the judged summaries (topic, summarizer) as units; a
    criterion rated once per summary: no pairable unit, α undefined."""
    from qarla_spark.measures.krippendorff import criterion_alphas
    rows = [("d1", f"s{j}", "coherence", float(v)) for j, unit in enumerate(TEXTBOOK)
            for v in unit]
    rows += [("d2", "s0", "fluency", 3.0), ("d2", "s1", "fluency", 4.0)]
    rows += [("d3", "s0", "coherence", 1.0)]    # s0 of another topic: another unit, of one
    got = criterion_alphas(*zip(*rows))
    assert list(got) == ["coherence", "fluency"]
    alpha, units, ratings = got["coherence"]
    assert alpha == interval_alpha(*long_form(TEXTBOOK))     # d3/s0 is a unit of one
    assert (units, ratings) == (11, 40)
    assert math.isnan(got["fluency"][0]) and got["fluency"][1:] == (0, 0)
