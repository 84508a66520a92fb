"""The order statistics selected instead of sorted (measures/selection.py,
issue 36): at every rank the intervals read, the double numpy's sort puts
there (ties, both signs of zero, NaN, infinities, rows of 0, 1, 2 values,
rows of one value); and the interval functions built on them give the
doubles of their sort-based versions (kept here as the reference)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import numpy_backend
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import resampling as rs
from qarla_spark.measures import selection as sl

SETTINGS = settings(max_examples=60, deadline=None)
QS = np.asarray([rs.ALPHA / 2, 1 - rs.ALPHA / 2])


def _bits(a):
    return np.asarray(a, dtype=np.float64).view(np.int64).tolist()


def _rows(rng, n_r, n_b):
    """Rows of replicates: normal, rounded to a few values (heavy ties),
    all one value, with −0.0 / +0.0, NaN, now and then an infinity."""
    out = rng.standard_normal((n_r, n_b))
    for r in range(n_r):
        kind = rng.integers(0, 6)
        if kind == 1:
            out[r] = np.round(out[r] * rng.integers(1, 4))
        elif kind == 2:
            out[r] = float(rng.integers(-1, 2))
        elif kind == 3:
            out[r] = np.round(out[r])                  # zeros of both signs
        elif kind == 4:
            out[r] = np.abs(np.round(out[r] / 2))      # zeros of one sign
        elif kind == 5:
            out[r] = -np.abs(np.round(out[r] / 2)) * 0.0 - np.abs(np.round(out[r] / 2))
        if rng.random() < 0.3 and n_b:
            out[r, rng.random(n_b) < rng.random()] = np.nan
        if rng.random() < 0.08 and n_b:
            out[r, rng.integers(n_b)] = rng.choice([np.inf, -np.inf])
    return out


def _ranks(n, qs, median, extra=()):
    """The rows resampling._lerp_sorted (and the median) reads."""
    out = set()
    if n == 0:
        return out
    for q in list(qs) + [q for q in extra if not math.isnan(q)]:
        virtual = (n - 1) * q
        if virtual >= n - 1:
            prev = foll = n - 1
        elif virtual < 0:
            prev = foll = 0
        else:
            prev = int(np.floor(virtual))
            foll = prev + 1
        out |= {prev, foll}
    if median:
        out |= {n // 2, max(n // 2 - 1, 0)}
    return out


@SETTINGS
@given(st.integers(0, 12), st.sampled_from([0, 1, 2, 3, 5, 24, 25, 40, 101, 1000, 2500]),
       st.integers(0, 2 ** 32 - 1))
def test_selected_ranks_are_the_sorted_values(n_r, n_b, seed):
    rng = np.random.default_rng(seed)
    rows = _rows(rng, n_r, n_b)
    median = rng.random(n_r) < 0.5
    points = np.where(rng.random(n_r) < 0.5, np.round(rng.standard_normal(n_r)),
                      rows[:, 0] if n_b else 0.0)
    extra = np.where(rng.random((n_r, 2)) < 0.7, rng.random((n_r, 2)), np.nan)
    work = rows.copy()
    n, flags, below, at_most = sl.select_rows(work, QS, median, points)
    sl.select_more(work, n, flags, QS, median, extra)
    for r in range(n_r):
        row = rows[r]
        fin = row[np.isfinite(row)]
        assert n[r] == fin.size
        assert below[r] == np.count_nonzero(row < points[r])
        assert at_most[r] == np.count_nonzero(row <= points[r])
        has_inf = bool(np.isinf(row).any())
        mixed = bool((fin == 0).any() and np.signbit(fin[fin == 0]).any()
                     and (~np.signbit(fin[fin == 0])).any())
        assert bool(flags[r] & sl.INFINITE) == has_inf or sl.backend() == "numpy"
        if sl.backend() == "numpy":
            assert _bits(work[r]) == _bits(np.sort(row))
            continue
        assert bool(flags[r] & sl.MIXED_ZEROS) == mixed
        if flags[r]:
            assert _bits(work[r]) == _bits(row)         # left as it was
            continue
        ordered = np.sort(row)
        # the same values, NaN last
        assert _bits(np.sort(work[r])) == _bits(ordered)
        assert np.isnan(work[r, n[r]:]).all()
        for k in _ranks(int(n[r]), QS, median[r], extra[r]):
            assert _bits([work[r, k]]) == _bits([ordered[k]]), (r, k)


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([30, 200, 1000]))
def test_orders_that_strain_the_pivot(seed, n_b):
    """Sorted, reversed, organ-pipe and two-valued rows: the same values."""
    rng = np.random.default_rng(seed)
    base = np.sort(rng.standard_normal(n_b))
    rows = np.stack([base, base[::-1], np.concatenate([base[::2], base[1::2][::-1]]),
                     (rng.random(n_b) < 0.02).astype(np.float64),
                     np.repeat(np.arange(4.0), -(-n_b // 4))[:n_b]])
    work = rows.copy()
    median = np.ones(len(rows), dtype=bool)
    n, flags, _, _ = sl.select_rows(work, QS, median)
    for r in range(len(rows)):
        ordered = np.sort(rows[r])
        for k in _ranks(int(n[r]), QS, True):
            assert _bits([work[r, k]]) == _bits([ordered[k]])


def test_mixed_zero_rows_are_sorted_by_numpy():
    row = np.asarray([0.0, -0.0, 1.0, -0.0, 0.0, -1.0, 0.0] * 5)
    work = np.stack([row, np.abs(row)])
    n, flags, _, _ = rs._selected_rows(work, QS)
    assert flags.tolist() == [sl.MIXED_ZEROS, 0]
    assert _bits(work[0]) == _bits(np.sort(row))


# ---------------------------------------------------------------------------
# the interval functions against their sort-based versions
# ---------------------------------------------------------------------------

def _interval_columns_sorted(points, reps, jack, alpha=rs.ALPHA):
    """interval_columns as it was: every column sorted (the reference)."""
    n_b, m_all = reps.shape
    if not n_b or not m_all or np.isinf(reps).any():
        percentile = rs.percentile_columns(reps, alpha)
    else:
        percentile = None
    out = {"percentile": percentile, "bca": (np.full(m_all, math.nan), np.full(m_all, math.nan))}
    low, high = out["bca"]
    if not n_b or not m_all:
        return out
    ordered, n = rs._finite_sorted(reps)
    if percentile is None:
        out["percentile"] = rs._percentiles_sorted(ordered, n, alpha)
    clean = ~np.isinf(reps).any(axis=0) & (np.isfinite(jack).all(axis=0) if jack.shape[0]
                                             else np.ones(m_all, dtype=bool))
    rs._bca_sorted(ordered, n, points, jack,
                   np.flatnonzero(clean & (n > 0) & np.isfinite(points)), alpha, low, high)
    for m in np.flatnonzero(~clean):
        low[m], high[m] = rs.bca_interval(float(points[m]), reps[:, m], jack[:, m], alpha)
    return out


def _bootstrap_many_sorted(points, columns, lower, upper):
    ordered, n, _ = rs.sorted_columns(columns)
    return rs.bootstrap_sorted_many(points, ordered, n, lower, upper)


@SETTINGS
@given(st.sampled_from([0, 1, 2, 3, 30, 200, 1000]), st.integers(0, 14), st.integers(0, 4),
       st.integers(0, 2 ** 32 - 1), st.booleans())
def test_intervals_equal_the_sorted_ones(n_b, n_m, n_j, seed, numpy):
    rng = np.random.default_rng(seed)
    reps = _rows(rng, n_m, n_b).T.copy()
    points = np.round(rng.standard_normal(n_m), 1)
    if n_b and n_m:
        points[0] = reps[0, 0]
    jack = rng.standard_normal((n_j, n_m))
    if n_j and n_m and rng.random() < 0.2:
        jack[0, 0] = np.nan
    lower = np.where(rng.random(n_m) < 0.5, -1.0, np.nan)
    upper = np.where(np.isnan(lower), np.nan, 1.0)

    def check():
        want = _interval_columns_sorted(points, reps, jack)
        for got in (rs.interval_columns(points, reps, jack),
                    rs.interval_rows(points, np.ascontiguousarray(reps.T), jack)):
            assert list(got) == list(want)
            for method in want:
                assert [_bits(v) for v in got[method]] == [_bits(v) for v in want[method]]
        got = rs.percentile_rows(np.ascontiguousarray(reps.T))
        assert [_bits(v) for v in got] == [_bits(v) for v in want["percentile"]]
        if not np.isinf(reps).any():
            got = rs.bootstrap_columns_many(points, np.asfortranarray(reps), lower, upper)
            ref = _bootstrap_many_sorted(points, np.asfortranarray(reps), lower, upper)
            assert [_bits(v) for v in got] == [_bits(v) for v in ref]
        ordered, n, inf = rs.selected_columns(reps, ~np.isnan(lower))
        s_ordered, s_n, s_inf = rs.sorted_columns(reps)
        assert n.tolist() == s_n.tolist() and inf.tolist() == s_inf.tolist()

    if numpy:
        with numpy_backend():
            check()
    else:
        check()


@SETTINGS
@given(st.integers(0, 12), st.sampled_from([0, 1, 2, 3, 5, 24, 25, 40, 101, 1000]),
       st.integers(0, 2 ** 32 - 1), st.booleans())
def test_selected_columns_read_as_the_sorted_ones(n_c, n_b, seed, numpy):
    """select_columns (the columns not changed, compact values): at every
    rank read, the sorted column's double, both signs of zero included;
    another rank raises."""
    rng = np.random.default_rng(seed)
    columns = np.asfortranarray(_rows(rng, n_c, n_b).T)
    before = columns.copy()
    median = rng.random(n_c) < 0.5
    if numpy:
        with numpy_backend():
            ordered, n, flags = sl.select_columns(columns, QS, median)
    else:
        ordered, n, flags = sl.select_columns(columns, QS, median)
    assert _bits(columns) == _bits(before)
    assert np.shape(ordered) == (n_b, n_c)
    for m in range(n_c):
        col = columns[:, m]
        assert n[m] == np.count_nonzero(np.isfinite(col))
        assert bool(flags[m] & sl.INFINITE) == bool(np.isinf(col).any())
        if flags[m] & sl.INFINITE:
            continue
        srt = np.sort(col)
        for k in sorted(_ranks(int(n[m]), QS, median[m])):
            assert _bits([ordered[k, m]]) == _bits([srt[k]]), (m, k)
            got = ordered[np.asarray([k, k]), np.asarray([m, m])]
            assert _bits(got) == _bits([srt[k], srt[k]])
        if not numpy and n[m] > 10 and not median[m]:
            with pytest.raises(IndexError):
                ordered[n[m] // 2, m]


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2 ** 32 - 1), st.booleans())
def test_interval_columns_of_a_block_equal_each_slice_alone(parts, width, seed, infinite):
    """interval_columns works column by column: the columns of several
    criteria together give each criterion's doubles of its columns alone,
    an infinity in one of them or not (group_statistics._summary_levels
    takes the criteria with the same topics in one call)."""
    rng = np.random.default_rng(seed)
    n_b, n_j = 200, 6
    reps = np.round(rng.standard_normal((n_b, parts * width)), 2)
    jack = rng.standard_normal((n_j, parts * width))
    points = np.round(rng.standard_normal(parts * width), 2)
    if infinite:
        reps[rng.integers(0, n_b), rng.integers(0, parts * width)] = math.inf
    together = rs.interval_columns(points, reps, jack)
    for c in range(parts):
        span = slice(c * width, (c + 1) * width)
        alone = rs.interval_columns(points[span], reps[:, span], jack[:, span])
        for method in alone:
            for got, want in zip(together[method], alone[method]):
                assert [_bits(v) for v in got[span]] == [_bits(v) for v in want]


def _sorted_reference(column, median):
    """{rank: the double numpy's sort of ``column`` puts there} at every
    rank the intervals read (the reference of the selections)."""
    fin = column[np.isfinite(column)]
    srt = np.sort(column)
    return {k: srt[k] for k in _ranks(fin.size, QS, median)}


def _columns_hard(rng, n_b):
    """Columns that strain the sampled pivots: sorted, reversed, organ
    pipe, a few values (the pivots equal to many), mostly one value with
    outliers at one end, NaN at the sample's positions, heavy ties around
    the median, and normal ones."""
    base = np.sort(rng.standard_normal(n_b))
    nan_at = base.copy()
    nan_at[((2 * np.arange(sl.SAMPLE) + 1) * n_b) // (2 * sl.SAMPLE)] = np.nan
    one_end = np.zeros(n_b)
    one_end[rng.random(n_b) < 0.04] = rng.standard_normal()
    cols = [base, base[::-1], np.concatenate([base[::2], base[1::2][::-1]]),
            np.abs(np.round(rng.standard_normal(n_b) * 2)), np.abs(one_end), nan_at,
            np.where(rng.random(n_b) < 0.6, 0.5, rng.standard_normal(n_b)),
            rng.standard_normal(n_b), rng.permutation(base)]
    return np.stack(cols, axis=1)


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([255, 256, 300, 1000, 2500]))
def test_sampled_parts_give_the_sorted_values(seed, n_b):
    """From SAMPLED_FROM finite values on, _select_columns reads a column
    through the parts its sample's pivots cut (_sampled), falling back to
    the whole column when a rank lies in none: at every rank read, the
    double numpy's sort puts there, whatever the column's order, ties and
    NaN, with the median or without."""
    rng = np.random.default_rng(seed)
    columns = np.asfortranarray(_columns_hard(rng, n_b))
    for median in (np.zeros(columns.shape[1], dtype=bool),
                   np.ones(columns.shape[1], dtype=bool)):
        ordered, n, flags = sl.select_columns(columns, QS, median)
        for m in range(columns.shape[1]):
            assert not flags[m] & sl.INFINITE
            for k, want in _sorted_reference(columns[:, m], median[m]).items():
                assert _bits([ordered[k, m]]) == _bits([want]), (m, k)


@SETTINGS
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([0, 3, 40, 300, 1000]),
       st.lists(st.integers(0, 4), min_size=0, max_size=4), st.booleans())
def test_select_blocks_equals_the_columns_side_by_side(seed, n_b, widths, numpy):
    """select_blocks reads each block where it lies (row-major, a strided
    view of a wider array, column-major): the values, counts and flags of
    select_columns of the blocks copied into one column-major matrix."""
    rng = np.random.default_rng(seed)
    blocks = []
    for w in widths:
        data = _rows(rng, w, n_b).T
        kind = rng.integers(0, 3)
        if kind == 0:
            blocks.append(np.ascontiguousarray(data))
        elif kind == 1:
            wide = np.full((n_b + 1, w, 3), 7.0)
            wide[1:, :, 1] = data
            blocks.append(wide[:, :, 1][1:])
        else:
            blocks.append(np.asfortranarray(data))
    n_c = sum(widths)
    together = np.asfortranarray(np.hstack(blocks)) if blocks else np.empty((n_b, 0))
    median = rng.random(n_c) < 0.5

    def both():
        got = sl.select_blocks(blocks, QS, median)
        want = sl.select_columns(together, QS, median)
        return got, want

    if numpy:
        with numpy_backend():
            (g_ord, g_n, g_f), (w_ord, w_n, w_f) = both()
    else:
        (g_ord, g_n, g_f), (w_ord, w_n, w_f) = both()
    assert g_n.tolist() == w_n.tolist() and g_f.tolist() == w_f.tolist()
    assert np.shape(w_ord) == (n_b, n_c)
    assert np.shape(g_ord) == ((n_b, n_c) if blocks else (0, 0))
    for m in range(n_c):
        if g_f[m] & sl.INFINITE:
            continue
        for k in sorted(_ranks(int(g_n[m]), QS, median[m])):
            assert _bits([g_ord[k, m]]) == _bits([w_ord[k, m]]), (m, k)
