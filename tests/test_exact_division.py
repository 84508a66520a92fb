"""Exact sums divided by counts, compiled (measures/exact_division.py,
issue 36): the doubles of Python's integer true division — correctly
rounded, half to even — on sums of doubles over 16 orders of magnitude and
both signs, ties of the rounding, counts from 1 to 2^31 − 1, zero sums and
zero counts; and the exact means of resampling with and without the
kernel."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import numpy_backend
from qarla_spark.measures import exact_division as ed
from qarla_spark.measures import resampling as rs

pytestmark = pytest.mark.skipif(not ed.available(),
                                reason="the compiled backend is off (no numba, or "
                                       "QARLA_COUNT_BACKEND=numpy)")
SETTINGS = settings(max_examples=200, deadline=None)


def _exact(parts, base, count):
    total = sum(int(p) << level for level, p in parts)
    return float(Fraction(total) * Fraction(2) ** base / count) if count else float("nan")


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-2 ** 60, 2 ** 60)), min_size=0,
                max_size=5, unique_by=lambda t: t[0]),
       st.integers(-1100, 60), st.sampled_from([0, 1, 2, 3, 7, 10, 1000, 2 ** 31 - 1]))
def test_quotients_round_as_python(parts, base, count):
    parts = [(28 * level, np.array([value], dtype=np.int64)) for level, value in parts]
    found = ed.quotients(parts, base, np.array([count]))
    values, done = found
    want = _exact([(lv, p[0]) for lv, p in parts], base, count)
    if done[0]:
        assert np.array_equal(values, np.array([want]), equal_nan=True), (parts, base, count)
    else:       # left to Python: a subnormal result, or beyond
        assert abs(want) < 2.0 ** -1021 or abs(want) > 2.0 ** 1020


def test_halfway_cases_round_to_even():
    """(2^53 + 1)/2 and (2^53 + 3)/2 lie halfway between doubles: the even one."""
    for total in (2 ** 54 + 2, 2 ** 54 + 6, 2 ** 55 + 4, -(2 ** 54 + 2)):
        parts = [(0, np.array([total % 2 ** 28 if total > 0 else -((-total) % 2 ** 28)])),
                 (28, np.array([total // 2 ** 28 if total > 0 else -((-total) // 2 ** 28)]))]
        for count in (4, 8):
            values, done = ed.quotients(parts, 0, np.array([count]))
            assert done[0] and values[0] == total / count


@SETTINGS
@given(st.integers(1, 12), st.integers(1, 6), st.integers(1, 5), st.data())
def test_exact_means_with_and_without_the_kernel(n_t, n_s, n_b, data):
    seed = data.draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((n_t, n_s)) * 10.0 ** rng.integers(-8, 8, (n_t, n_s))
    if data.draw(st.booleans()):
        values = np.round(values * 3) / 3                   # thirds: long mantissas
    weights = rng.poisson(1.0, (n_b, n_t)).astype(np.int64)
    present = (rng.random((n_t, n_s)) < 0.8).astype(np.int64)
    got = [rs.weighted_real_means(values, weights),
           rs.weighted_present_means(values * present, present, weights),
           rs.nan_real_means(np.where(present.T == 1, values.T, np.nan))]
    with numpy_backend():      # the division in Python integers
        want = [rs.weighted_real_means(values, weights),
                rs.weighted_present_means(values * present, present, weights),
                rs.nan_real_means(np.where(present.T == 1, values.T, np.nan))]
    for a, b in zip(got, want):
        assert a.tobytes() == b.tobytes()
    # and the first against Fractions
    for b in range(n_b):
        for s in range(n_s):
            den = int(weights[b].sum())
            num = sum(Fraction(float(values[t, s])) * int(weights[b, t]) for t in range(n_t))
            want_bs = float(num / den) if den else float("nan")
            assert np.array_equal(got[0][b, s], want_bs, equal_nan=True)


@SETTINGS
@given(st.integers(1, 9), st.integers(1, 5), st.data())
def test_unit_parts_are_level_parts(n_t, n_s, data):
    """The compiled column sums of a plain mean (every weight 1) give
    level_parts' base, levels and parts, for doubles of every size: zeros
    of both signs, subnormals, the largest finite, thirds; and the means
    made from them equal Fractions' rounded once."""
    values = np.array(data.draw(st.lists(
        st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                  st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
                                   1.7976931348623157e308, 1 / 3, -2 / 3])),
        min_size=n_t * n_s, max_size=n_t * n_s))).reshape(n_t, n_s)
    ones = np.ones((1, n_t), dtype=np.int64)
    base, parts, _ = rs.level_parts(values, ones)
    got = ed.unit_parts(values)
    assert got is not None
    if not parts:
        assert got[1] == []
    else:
        assert got[0] == base
        assert [level for level, _ in got[1]] == [level for level, _ in parts]
        for (_, a), (_, b) in zip(got[1], parts):
            assert a.dtype == np.int64 and a.tobytes() == b.tobytes()
    means = rs.real_means(values.T)
    for s in range(n_s):
        want = float(sum(Fraction(float(v)) for v in values[:, s]) / n_t)
        assert means[s] == want or (np.isnan(means[s]) and np.isnan(want))


@SETTINGS
@given(st.integers(1, 8), st.integers(1, 5), st.integers(1, 4), st.data())
def test_grouped_ratio_means_against_fractions(n_t, n_s, n_b, data):
    """Each column's weighted mean of ratios (rows of distinct (topic,
    column), their own denominators) against Fractions, rounded once."""
    seed = data.draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    cells = [(t, s) for t in range(n_t) for s in range(n_s) if rng.random() < 0.7]
    if not cells:
        return
    t_idx = np.array([c[0] for c in cells])
    s_idx = np.array([c[1] for c in cells])
    big = data.draw(st.sampled_from([10, 10 ** 6, 2 ** 40]))
    nums = rng.integers(-big, big, len(cells))
    dens = rng.choice(data.draw(st.sampled_from([[3], [3, 7], [1, 2, 5, 1000], [997, 991]])),
                      len(cells))
    weights = rng.poisson(1.0, (n_b, n_t)).astype(np.int64)
    got = rs.grouped_ratio_means(nums, dens, (t_idx, s_idx), n_s, weights)
    for b in range(n_b):
        for s in range(n_s):
            rows = [r for r in range(len(cells)) if s_idx[r] == s]
            den = sum(int(weights[b, t_idx[r]]) for r in rows)
            num = sum(Fraction(int(nums[r]), int(dens[r])) * int(weights[b, t_idx[r]])
                      for r in rows)
            want = float(num / den) if den else float("nan")
            assert np.array_equal(got[b, s], want, equal_nan=True)


def _present_columns(data, n_t, n_s):
    """T × S doubles drawn to reach every way of present_means: columns in
    a narrow band (two int64 words; of either sign, with neighbours of one
    value, so ties of the rounding), wide ones (limbs: 2^-1074 to 2^1023),
    zeros of both signs, subnormals, NaN and infinities (absent), columns
    with nothing present."""
    kind = data.draw(st.sampled_from(["band", "neighbours", "any", "mixed"]))
    if kind == "band":
        top = data.draw(st.integers(-1020, 1010))
        values = data.draw(st.lists(st.floats(2.0 ** (top - 9), 2.0 ** top), min_size=n_t * n_s,
                                    max_size=n_t * n_s))
        signs = data.draw(st.lists(st.sampled_from([1.0, -1.0]), min_size=n_t * n_s,
                                   max_size=n_t * n_s))
        values = [v * s for v, s in zip(values, signs)]
    elif kind == "neighbours":
        x = data.draw(st.floats(1e-300, 1e300))
        near = [x, np.nextafter(x, np.inf), np.nextafter(np.nextafter(x, np.inf), np.inf),
                np.nextafter(x, 0.0)]
        values = data.draw(st.lists(st.sampled_from(near), min_size=n_t * n_s,
                                    max_size=n_t * n_s))
    elif kind == "any":
        values = data.draw(st.lists(st.floats(allow_nan=False, allow_infinity=False),
                                    min_size=n_t * n_s, max_size=n_t * n_s))
    else:
        values = data.draw(st.lists(
            st.one_of(st.floats(0.001, 1.0), st.floats(-1.0, 1.0),
                      st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
                                       1.7976931348623157e308, 1 / 3, -2 / 3, np.nan, np.inf,
                                       -np.inf])),
            min_size=n_t * n_s, max_size=n_t * n_s))
    values = np.array(values, dtype=np.float64).reshape(n_t, n_s)
    gone = np.array(data.draw(st.lists(st.booleans(), min_size=n_t * n_s,
                                       max_size=n_t * n_s))).reshape(n_t, n_s)
    if data.draw(st.booleans()):
        values[gone] = np.nan                           # absent: left out
    return values


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 45), st.integers(1, 7), st.data())
def test_present_means_are_the_reference(n_t, n_s, data):
    """The compiled means of each column's finite doubles (each column at
    its own base, in two words or in limbs) equal the reference —
    weighted_present_means with every weight 1 — bit for bit, and
    Fractions' mean rounded once where the kernel says done (the rest,
    subnormal results, are the reference's)."""
    values = _present_columns(data, n_t, n_s)
    got = rs.column_present_means(values)
    want = rs._column_present_means_reference(values)
    assert got.tobytes() == want.tobytes(), (values, got, want)
    means, done = ed.present_means(values)
    for s in range(n_s):
        kept = [Fraction(float(v)) for v in values[:, s] if np.isfinite(v)]
        mean = sum(kept) / len(kept) if kept else None
        exact = float(mean) if kept else float("nan")
        if done[s]:
            assert np.array_equal(means[s], exact, equal_nan=True), (values[:, s], means[s])
            assert np.signbit(means[s]) == np.signbit(exact) or np.isnan(exact)
        else:
            # (the exact mean, before rounding: a subnormal one may round to 0)
            assert mean is not None and 0 < abs(mean) < Fraction(2) ** -1020
        assert np.array_equal(got[s], exact, equal_nan=True)


def test_present_means_ties_and_ways():
    """Halfway cases round to even, in each way of the kernel: two words
    (a narrow column, of one or two words' sums), limbs (a column wider
    than 2^9), and the zero sum as +0.0."""
    one = np.nextafter(1.0, 2.0)                     # 1 + 2^-52
    cases = [
        ([1.0, one], 1.0),                           # 1 + 2^-53: between 1 and 1 + 2^-52
        ([one, np.nextafter(one, 2.0)], np.nextafter(one, 2.0)),   # 1 + 3·2^-53: up, even
        ([-1.0, -one], -1.0),
        ([1.0, one, 2.0 ** -12, -(2.0 ** -12)], 1.0 / 2),          # limbs, 4 terms
        ([0.75] * 44 + [0.75 + 2.0 ** -53], 0.75),
        ([0.5, -0.5, np.nan, -0.0], 0.0),
    ]
    for column, want in cases:
        values = np.array(column, dtype=np.float64)[:, None]
        means, done = ed.present_means(values)
        exact = float(sum(Fraction(v) for v in column if np.isfinite(v))
                      / sum(1 for v in column if np.isfinite(v)))
        assert done[0] and means[0] == exact
        assert means[0] == want and np.signbit(means[0]) == np.signbit(want), (column, means[0])
        assert means.tobytes() == rs._column_present_means_reference(values).tobytes()
    # a column of nothing present: NaN; of zeros only: +0.0
    means, done = ed.present_means(np.array([[np.nan, -0.0], [np.inf, -0.0]]))
    assert np.isnan(means[0]) and means[1] == 0.0 and not np.signbit(means[1]) and done.all()
