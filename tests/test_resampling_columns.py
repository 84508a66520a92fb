"""The interval functions of every column at once (resampling.*_columns,
issue 36) give the doubles of the per-column functions, bit for bit: the
same order statistics and numpy's own interpolation, NaN columns through
the per-column path."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import resampling as rs


def _bits(a):
    return np.asarray(a, dtype=np.float64).view(np.int64)


def _matrix(draw, rows, cols, grid):
    values = draw(st.lists(st.integers(0, grid), min_size=rows * cols, max_size=rows * cols))
    out = np.asarray(values, dtype=np.float64).reshape(rows, cols) / grid
    # a few NaN cells and a column of exact repeats (ties at the point)
    holes = draw(st.lists(st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1)),
                          max_size=3))
    for r, c in holes:
        out[r, c] = np.nan
    return out


@st.composite
def cases(draw):
    rows = draw(st.integers(1, 41))
    cols = draw(st.integers(1, 9))
    grid = draw(st.sampled_from([3, 7, 1000, 2 ** 20]))
    reps = _matrix(draw, rows, cols, grid)
    jack_rows = draw(st.integers(0, 12))
    jack = _matrix(draw, jack_rows, cols, grid) if jack_rows else np.zeros((0, cols))
    points = np.asarray(draw(st.lists(st.integers(0, grid), min_size=cols, max_size=cols)),
                        dtype=np.float64) / grid
    if draw(st.booleans()):
        points[0] = reps[0, 0]          # a point equal to a replicate
    if draw(st.booleans()):
        points[-1] = np.nan
    return points, reps, jack


@settings(max_examples=100, deadline=None)
@given(cases())
def test_columns_equal_the_per_column_intervals(case):
    points, reps, jack = case
    low, high = rs.percentile_columns(reps)
    for m in range(reps.shape[1]):
        assert _bits([low[m], high[m]]).tolist() == \
            _bits(rs.percentile_interval(reps[:, m])).tolist()
    for bounds in (None, (0.0, 1.0), (-1.0, 1.0), (0.2, 0.6)):
        low, high = rs.bootstrap_columns(points, reps, bounds)
        for m in range(reps.shape[1]):
            assert _bits([low[m], high[m]]).tolist() == _bits(
                rs.bootstrap_interval(float(points[m]), reps[:, m], bounds)).tolist()
    found = rs.interval_columns(points, reps, jack)
    for m in range(reps.shape[1]):
        want = rs.intervals(float(points[m]), reps[:, m], jack[:, m])
        for method in ("percentile", "bca"):
            got = (found[method][0][m], found[method][1][m])
            assert _bits(got).tolist() == _bits(want[method]).tolist(), (method, m)


def test_columns_on_real_sized_replicates():
    rng = np.random.default_rng(7)
    reps = rng.normal(0.3, 0.05, size=(1000, 300))
    jack = rng.normal(0.3, 0.01, size=(100, 300))
    points = reps.mean(axis=0) + rng.normal(0, 0.01, 300)
    found = rs.interval_columns(points, reps, jack)
    rec = rs.bootstrap_columns(points, reps, (0.0, 1.0))
    for m in range(300):
        want = rs.intervals(float(points[m]), reps[:, m], jack[:, m])
        assert _bits([found["bca"][0][m], found["bca"][1][m]]).tolist() == \
            _bits(want["bca"]).tolist()
        assert _bits([found["percentile"][0][m], found["percentile"][1][m]]).tolist() == \
            _bits(want["percentile"]).tolist()
        assert _bits([rec[0][m], rec[1][m]]).tolist() == _bits(
            rs.recentred_interval(float(points[m]), reps[:, m], bounds=(0.0, 1.0))).tolist()


@settings(max_examples=100, deadline=None)
@given(cases(), st.lists(st.sampled_from([None, (0.0, 1.0), (-1.0, 1.0), (0.2, 0.6)]),
                         min_size=1, max_size=3))
def test_many_columns_equal_each_blocks_bootstrap_columns(case, kinds):
    """bootstrap_columns_many of blocks side by side (each its own bounds, a
    column-major copy) gives each block's bootstrap_columns' doubles."""
    points, reps, _ = case
    n_m = reps.shape[1]
    columns = np.asfortranarray(np.hstack([reps] * len(kinds)))
    lower = np.concatenate([np.full(n_m, np.nan if b is None else b[0]) for b in kinds])
    upper = np.concatenate([np.full(n_m, np.nan if b is None else b[1]) for b in kinds])
    low, high = rs.bootstrap_columns_many(np.tile(points, len(kinds)), columns, lower, upper)
    for k, bounds in enumerate(kinds):
        want = rs.bootstrap_columns(points, reps, bounds)
        part = slice(k * n_m, (k + 1) * n_m)
        assert _bits(low[part]).tolist() == _bits(want[0]).tolist()
        assert _bits(high[part]).tolist() == _bits(want[1]).tolist()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 6), st.integers(0, 12),
       st.lists(st.sampled_from([0.0, 0.5, -1.0, np.nan, np.inf, -np.inf]), max_size=8),
       st.integers(0, 2 ** 32 - 1))
def test_sorted_rows_counts_are_the_passes_over_every_value(n_r, n_b, specials, seed):
    """The finite values and infinities of each sorted row, read from its
    ends: numpy's count of finite values (its dtype too) and any(isinf),
    with NaN, ±inf, whole rows of NaN and empty rows."""
    rng = np.random.default_rng(seed)
    rows = np.round(rng.standard_normal((n_r, n_b)), 1)
    if n_r and n_b:
        at = rng.integers(0, n_r * n_b, size=len(specials))
        rows.ravel()[at] = specials
        if rng.random() < 0.2:
            rows[rng.integers(0, n_r)] = np.nan
    want_n = np.count_nonzero(np.isfinite(rows), axis=1)
    want_inf = np.isinf(rows).any(axis=1)
    rows.sort(axis=1)
    n, inf = rs.sorted_rows_counts(rows)
    assert n.dtype == want_n.dtype and n.tolist() == want_n.tolist()
    assert inf.tolist() == want_inf.tolist()
    ordered, n2, inf2 = rs.sorted_columns(np.asfortranarray(rows.T[::-1]))
    assert np.array_equal(ordered, rows.T, equal_nan=True)     # (±0 in either order)
    assert n2.tolist() == want_n.tolist() and inf2.tolist() == want_inf.tolist()
