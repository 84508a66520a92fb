"""The statistics' counts over pairs (measures/pair_counts.py, issue 36):
the numba kernels give the integers of their numpy twins, on doubles with
ties, NaN and both signs, on int32 and int64 keys."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import numpy_backend
from qarla_spark.measures import pair_counts as pc

pytestmark = pytest.mark.skipif("numba" not in pc.BACKENDS, reason="numba not installed")
SETTINGS = settings(max_examples=150, deadline=None)


def _doubles(draw, shape, nan=True):
    grid = draw(st.sampled_from([1, 3, 1000]))
    values = np.asarray(draw(st.lists(st.integers(-grid, grid), min_size=int(np.prod(shape)),
                                      max_size=int(np.prod(shape)))), dtype=np.float64)
    values = values.reshape(shape) / grid
    if nan and values.size and draw(st.booleans()):
        values.flat[draw(st.integers(0, values.size - 1))] = np.nan
    return values


@SETTINGS
@given(st.integers(1, 7), st.sampled_from([1, 2, 3, 8, 11]), st.integers(1, 8), st.data())
def test_concordance_kernel_equals_numpy(n_b, n_c, n, data):
    """(8 rows or more: the kernel that runs over a pair's rows innermost)"""
    x = _doubles(data.draw, (n_b, n_c, n))
    y = _doubles(data.draw, (n_b, n))
    got = pc.concordance_shared(x, y)
    want = pc.concordance_shared_numpy(x, y)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


@SETTINGS
@given(st.integers(2, 7), st.integers(1, 6), st.integers(1, 4), st.integers(0, 3), st.data())
def test_sign_sums_kernel_equals_numpy(n, n_b, n_m, n_c, data):
    ms = _doubles(data.draw, (n, n_b, n_m))
    hs = _doubles(data.draw, (n_c, n, n_b))
    got = pc.sign_sums(ms, hs)
    want = pc.sign_sums_numpy(ms, hs)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


@SETTINGS
@given(st.integers(2, 7), st.integers(1, 6), st.integers(1, 4), st.integers(0, 3), st.data())
def test_sign_sums_rows_equal_the_system_major_form(n, n_b, n_m, n_c, data):
    """The kernel read in the replicates' layout (B × n × M, C × B × n), as
    the meta group calls it, gives the integers of the system-major numpy
    twin (n × B × M, C × n × B) on the same scores."""
    xs = _doubles(data.draw, (n_b, n, n_m))
    hs = _doubles(data.draw, (n_c, n_b, n))
    got = pc.sign_sums_rows(xs, hs)
    want = pc.sign_sums_numpy(xs.transpose(1, 0, 2), hs.transpose(0, 2, 1))
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


@SETTINGS
@given(st.integers(1, 9), st.integers(1, 6), st.data())
def test_not_better_kernel_equals_numpy(n_b, n_m, data):
    r = _doubles(data.draw, (n_b, n_m))
    got, want = pc.not_better(r), pc.not_better_numpy(r)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_the_backend_can_be_chosen(monkeypatch):
    monkeypatch.setenv("QARLA_COUNT_BACKEND", "numpy")
    assert pc._backend() == "numpy"
    monkeypatch.setenv("QARLA_COUNT_BACKEND", "auto")
    assert pc._backend() == "numba"


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 12), st.integers(1, 5), st.integers(1, 3),
       st.booleans(), st.data())
def test_at_least_patterns_count_each_replicate(n_t, n_b, n_s, n_k, two, data):
    """The counts of the distinct sign patterns, each as often as drawn, are
    the counts of the replicates' own sums (at_least_levels), compiled and
    in numpy."""
    chunk = data.draw(st.sampled_from([3, 20, 49]))
    size = n_t * n_s * n_k
    low = np.asarray(data.draw(st.lists(st.integers(-2 ** 40, 2 ** 40), min_size=size,
                                        max_size=size)), dtype=np.int64).reshape(n_t, n_s, n_k)
    if data.draw(st.booleans()):
        low = low % 5                                 # small pieces: many ties
    high = np.asarray(data.draw(st.lists(st.integers(-5, 5), min_size=size, max_size=size)),
                      dtype=np.int64).reshape(low.shape) if two else None
    scale = np.asarray(data.draw(st.lists(st.integers(1, 6), min_size=n_s, max_size=n_s)),
                       dtype=np.int64)
    flips = np.asarray(data.draw(st.lists(st.integers(0, 1), min_size=n_b * n_t,
                                          max_size=n_b * n_t)), dtype=np.int64).reshape(n_b, n_t)
    patterns, mult = np.unique(flips, axis=0, return_counts=True)
    sums_lo = (flips @ low.reshape(n_t, -1)).reshape(n_b, n_s, n_k)
    sums_hi = (flips @ high.reshape(n_t, -1)).reshape(n_b, n_s, n_k) if two else None
    want = pc.at_least_levels_numpy(sums_lo, sums_hi, scale, chunk)
    assert np.array_equal(pc.at_least_patterns(low, high, patterns, mult, scale, chunk), want)
    assert np.array_equal(pc.at_least_patterns_numpy(low, high, patterns, mult, scale, chunk),
                          want)


@SETTINGS
@given(st.integers(1, 9), st.integers(1, 5), st.integers(1, 3), st.booleans(), st.data())
def test_at_least_levels_kernel_equals_numpy(n_b, n_s, n_k, two, data):
    chunk = data.draw(st.sampled_from([3, 20, 49]))
    size = n_b * n_s * n_k
    low = np.asarray(data.draw(st.lists(st.integers(-2 ** 50, 2 ** 50), min_size=size,
                                        max_size=size)), dtype=np.int64).reshape(n_b, n_s, n_k)
    if data.draw(st.booleans()):
        low = low % 7                                 # small sums: many ties
    high = np.asarray(data.draw(st.lists(st.integers(-5, 5), min_size=size, max_size=size)),
                      dtype=np.int64).reshape(low.shape) if two else None
    scale = np.asarray(data.draw(st.lists(st.integers(1, 6), min_size=n_s, max_size=n_s)),
                       dtype=np.int64)
    got = pc.at_least_levels(low, high, scale, chunk)
    assert np.array_equal(got, pc.at_least_levels_numpy(low, high, scale, chunk))


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 9), st.data())
def test_average_ranks_kernel_equals_the_comparisons(rows, n, data):
    x = _doubles(data.draw, (rows, n))
    got = pc.average_ranks(x)
    less = (x[:, None, :] < x[:, :, None]).sum(axis=2)
    equal = (x[:, None, :] == x[:, :, None]).sum(axis=2)
    want = less + (equal + 1) / 2.0
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


@SETTINGS
@given(st.integers(1, 30), st.integers(1, 4), st.sampled_from([2, 5, 1000]), st.data())
def test_tie_calibrations_of_every_measure_equal_one_by_one(n, n_m, grid, data):
    """meta_eval.tie_calibrations (the compiled exact search, and its numpy
    path) gives each measure's tie_calibration: ε, value and counts."""
    from qarla_spark.measures import meta_eval as me
    values = data.draw(st.lists(st.integers(0, grid), min_size=n * n_m, max_size=n * n_m))
    ms = np.asarray(values, dtype=np.float64).reshape(n, n_m) / grid
    h = np.asarray(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
                   dtype=np.float64) / 3
    groups = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    want = [me.tie_calibration(ms[:, m], h, groups) for m in range(n_m)]
    assert me.tie_calibrations(ms, h, groups) == want
    # the measures' side made once and read for a second human vector too
    side = me.calibration_side(ms, me.group_pairs(groups))
    h2 = h[::-1].copy()
    assert me.tie_calibrations(ms, h2, groups, side) == me.tie_calibrations(ms, h2, groups)
    assert me.tie_calibrations(ms, h, groups, side) == want
    with numpy_backend():
        assert me.tie_calibrations(ms, h, groups) == want
        assert me.tie_calibrations(ms, h, groups, side) == want


@SETTINGS
@given(st.integers(1, 30), st.integers(1, 4), st.sampled_from([2, 5, 1000]), st.data())
def test_tie_calibration_points_equal_the_calibrations(n, n_m, grid, data):
    """meta_eval.tie_calibration_points (the differences and the search
    compiled, the concordances decided in the kernel) gives
    tie_calibrations' ε and value of every measure, the same doubles (its
    compiled and numpy paths); pair_differences its numpy twin's doubles."""
    from qarla_spark.measures import meta_eval as me
    values = data.draw(st.lists(st.integers(-grid, grid), min_size=n * n_m, max_size=n * n_m))
    ms = np.asarray(values, dtype=np.float64).reshape(n, n_m) / grid
    h = np.asarray(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
                   dtype=np.float64) / 3
    groups = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    want = [(c.epsilon, c.value) for c in me.tie_calibrations(ms, h, groups)]

    def bits(found):
        return [(np.float64(e).tobytes(), np.float64(v).tobytes()) for e, v in found]

    got = [(c.epsilon, c.value) for c in me.tie_calibration_points(ms, h, groups)]
    assert bits(got) == bits(want)
    grouping = me.group_pairs(groups)
    diff = pc.pair_differences(ms, grouping.i, grouping.j)
    assert diff.flags.c_contiguous
    assert diff.tobytes() == pc.pair_differences_numpy(ms, grouping.i, grouping.j).tobytes()
    with numpy_backend():
        got = [(c.epsilon, c.value) for c in me.tie_calibration_points(ms, h, grouping)]
        assert bits(got) == bits(want)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 300), st.sampled_from([0, 1, 3, 24, 52]),
       st.integers(-40, 40), st.data())
def test_sorted_pair_keys_equal_numpy_and_sort_the_differences(n_m, n_p, bits, power, data):
    """pair_counts.sorted_pair_keys (compiled) gives its numpy twin's keys,
    or None both, on differences of few or full bits at many scales (ties,
    zeros); its positions sort each row as argsort does (equal differences
    by position)."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    diff = np.floor(rng.random((n_m, n_p)) * 2.0 ** bits) * 2.0 ** power if bits else \
        np.zeros((n_m, n_p))
    if data.draw(st.booleans()):
        diff = rng.random((n_m, n_p)) * 2.0 ** power                # full precision
    if data.draw(st.booleans()):
        diff[data.draw(st.integers(0, n_m - 1)), data.draw(st.integers(0, n_p - 1))] = \
            data.draw(st.sampled_from([np.inf, np.nan, 2.0 ** 70]))
    got = pc.sorted_pair_keys(diff)
    want = pc.sorted_pair_keys_numpy(diff)
    assert (got is None) == (want is None)
    if got is None:
        return
    assert got[1] == want[1] and np.array_equal(got[0], want[0])
    order = got[0] & ((1 << got[1]) - 1)
    assert np.array_equal(order, np.argsort(diff, axis=1, kind="stable"))


@SETTINGS
@given(st.integers(1, 30), st.integers(2, 6), st.integers(1, 3), st.booleans(), st.data())
def test_signed_mean_at_least_compiled_equals_numpy_paths(n_t, n_s, n_k, unequal, data):
    """The sign-flip counts through the compiled kernels (two levels, the
    distinct patterns, the carried levels) equal the numpy path's, on
    doubles over many powers of two (several levels), both signs, ties, and
    columns with unequal counts of cells."""
    from qarla_spark.measures import resampling as rs
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    values = rng.random((n_t, n_s, n_k)) * 2.0 ** rng.integers(-30, 30, (n_t, n_s, n_k)) \
        * rng.choice([-1.0, 1.0], (n_t, n_s, n_k))
    if data.draw(st.booleans()):
        values = np.floor(values * 8) / 8                 # short doubles: one level, ties
    if n_t > 1:
        values[1] = values[0]
    cells = np.ones((n_t, n_s), dtype=bool)
    if unequal:
        cells &= rng.random((n_t, n_s)) < 0.8
        cells[0] = True
    signs = np.where(rng.random((data.draw(st.integers(1, 40)), n_t)) < 0.5, -1, 1)
    got = rs.signed_mean_at_least(values, cells, signs)
    with numpy_backend():
        want = rs.signed_mean_at_least(values, cells, signs)
    assert np.array_equal(got, want)


@SETTINGS
@given(st.integers(1, 7), st.integers(1, 12), st.integers(1, 6), st.integers(1, 5), st.data())
def test_at_least_upper_counts_each_replicate(n_t, n_b, n_s, n_k, data):
    """The upper triangle's counts over the distinct sign patterns (in
    blocks of measures), compiled and in numpy, are the replicates' own
    counts (at_least_levels) of the pairs i < j."""
    size = n_t * n_s * n_k
    low = np.asarray(data.draw(st.lists(st.integers(-2 ** 40, 2 ** 40), min_size=size,
                                        max_size=size)), dtype=np.int64).reshape(n_t, n_s, n_k)
    if data.draw(st.booleans()):
        low = low % 5                                 # small pieces: many ties
    scale = np.asarray(data.draw(st.lists(st.integers(1, 6), min_size=n_s, max_size=n_s)),
                       dtype=np.int64)
    flips = np.asarray(data.draw(st.lists(st.integers(0, 1), min_size=n_b * n_t,
                                          max_size=n_b * n_t)), dtype=np.int64).reshape(n_b, n_t)
    patterns, mult = np.unique(flips, axis=0, return_counts=True)
    if data.draw(st.booleans()):                      # any order of the patterns
        order = np.asarray(data.draw(st.permutations(range(len(mult)))), dtype=np.int64)
        patterns, mult = patterns[order], mult[order]
    sums = (flips @ low.reshape(n_t, -1)).reshape(n_b, n_s, n_k)
    i, j = np.triu_indices(n_s, 1)
    want = pc.at_least_levels_numpy(sums, None, scale, 62)[:, i, j]
    saved = pc._UPPER_BLOCK
    pc._UPPER_BLOCK = data.draw(st.sampled_from([1, 2, 8]))
    try:
        assert np.array_equal(pc.at_least_upper(low, patterns, mult, scale), want)
    finally:
        pc._UPPER_BLOCK = saved
    assert np.array_equal(pc.at_least_upper_numpy(low, patterns, mult, scale), want)


@SETTINGS
@given(st.integers(1, 12), st.integers(1, 6), st.integers(1, 3), st.booleans(), st.data())
def test_signed_mean_at_least_upper_is_the_upper_triangle(n_t, n_s, n_k, unequal, data):
    """signed_mean_at_least_upper gives signed_mean_at_least's counts of
    the pairs i < j, compiled and in numpy: on grid values (one level, its
    own path; ties, both signs, columns with unequal counts of cells) and
    on doubles over many powers of two (the general path)."""
    from qarla_spark.measures import resampling as rs
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    kind = data.draw(st.sampled_from(["grid", "likert", "huge", "wide"]))
    if kind == "grid":
        values = np.floor(rng.random((n_t, n_s, n_k)) * 2 ** 24) / 2 ** 24
    elif kind == "likert":
        values = rng.integers(-5, 6, (n_t, n_s, n_k)).astype(np.float64)
    elif kind == "huge":                # scaled down to integers; a tiny value too, or not
        values = rng.integers(-5, 6, (n_t, n_s, n_k)) * 2.0 ** 1000
        if data.draw(st.booleans()):
            values[0, 0, 0] = 2.0 ** -1000
    else:
        values = rng.random((n_t, n_s, n_k)) * 2.0 ** rng.integers(-30, 30, (n_t, n_s, n_k))
    cells = np.ones((n_t, n_s), dtype=bool)
    if unequal:
        cells &= rng.random((n_t, n_s)) < 0.7
        cells[0] = True
    signs = np.where(rng.random((data.draw(st.integers(1, 60)), n_t)) < 0.5, -1, 1)
    i, j = np.triu_indices(n_s, 1)
    want = rs.signed_mean_at_least(values, cells, signs)[:, i, j]
    assert np.array_equal(rs.signed_mean_at_least_upper(values, cells, signs), want)
    assert np.array_equal(rs.signed_mean_at_least_upper(values[:, :, 0], cells, signs),
                          want[0])
    with numpy_backend():
        assert np.array_equal(rs.signed_mean_at_least_upper(values, cells, signs), want)


@SETTINGS
@given(st.integers(1, 7), st.integers(1, 12), st.integers(1, 6), st.integers(1, 5), st.data())
def test_at_least_upper_cross_counts_each_replicate(n_t, n_b, n_s, n_k, data):
    """The upper triangle's counts with each side's product n_j·A_bi ≤
    n_i·A_bj (in blocks of measures), compiled and in numpy, are the
    replicates' own comparisons, in Python integers."""
    size = n_t * n_s * n_k
    low = np.asarray(data.draw(st.lists(st.integers(-2 ** 40, 2 ** 40), min_size=size,
                                        max_size=size)), dtype=np.int64).reshape(n_t, n_s, n_k)
    if data.draw(st.booleans()):
        low = low % 5                                 # small pieces: many ties
    counts = np.asarray(data.draw(st.lists(st.integers(1, 60), min_size=n_s, max_size=n_s)),
                        dtype=np.int64)
    flips = np.asarray(data.draw(st.lists(st.integers(0, 1), min_size=n_b * n_t,
                                          max_size=n_b * n_t)), dtype=np.int64).reshape(n_b, n_t)
    patterns, mult = np.unique(flips, axis=0, return_counts=True)
    sums = (flips @ low.reshape(n_t, -1)).reshape(n_b, n_s, n_k)
    i, j = np.triu_indices(n_s, 1)
    want = np.asarray([[sum(int(counts[b_]) * int(sums[r, a_, k]) <= int(counts[a_])
                            * int(sums[r, b_, k]) for r in range(n_b))
                        for a_, b_ in zip(i, j)] for k in range(n_k)],
                      dtype=np.int64).reshape(n_k, len(i))
    saved = pc._UPPER_BLOCK
    pc._UPPER_BLOCK = data.draw(st.sampled_from([1, 2, 8]))
    try:
        assert np.array_equal(pc.at_least_upper_cross(low, patterns, mult, counts), want)
    finally:
        pc._UPPER_BLOCK = saved
    assert np.array_equal(pc.at_least_upper_cross_numpy(low, patterns, mult, counts), want)


@settings(max_examples=25, deadline=None)
@given(st.integers(100, 400), st.integers(3, 6), st.integers(1, 3), st.data())
def test_signed_mean_at_least_upper_of_many_unequal_counts(n_t, n_s, n_k, data):
    """Grid values over many topics, columns of unequal counts whose lcm
    leaves no common scale in 53 bits: signed_mean_at_least_upper (each
    side's product, pair_counts.at_least_upper_cross) gives
    signed_mean_at_least's counts of the pairs i < j, compiled and in
    numpy."""
    from qarla_spark.measures import resampling as rs
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    values = np.floor(rng.random((n_t, n_s, n_k)) * 2 ** 24) / 2 ** 24
    cells = rng.random((n_t, n_s)) < 0.85
    cells[0] = True
    signs = np.where(rng.random((data.draw(st.integers(1, 60)), n_t)) < 0.5, -1, 1)
    i, j = np.triu_indices(n_s, 1)
    want = rs.signed_mean_at_least(values, cells, signs)[:, i, j]
    assert np.array_equal(rs.signed_mean_at_least_upper(values, cells, signs), want)
    with numpy_backend():
        assert np.array_equal(rs.signed_mean_at_least_upper(values, cells, signs), want)


def test_unequal_counts_without_a_common_scale_take_the_cross_products(monkeypatch):
    """(the path the test above means to reach is the one it reaches)"""
    from qarla_spark.measures import resampling as rs
    rng = np.random.default_rng(3)
    values = np.floor(rng.random((400, 4, 2)) * 2 ** 24) / 2 ** 24
    cells = np.ones((400, 4), dtype=bool)
    cells[:3, 1] = cells[:11, 2] = cells[:17, 3] = False      # counts 400, 397, 389, 383
    signs = np.where(rng.random((50, 400)) < 0.5, -1, 1)
    calls = []
    real = pc.at_least_upper_cross
    monkeypatch.setattr(pc, "at_least_upper_cross", lambda *a: calls.append(1) or real(*a))
    i, j = np.triu_indices(4, 1)
    assert np.array_equal(rs.signed_mean_at_least_upper(values, cells, signs),
                          rs.signed_mean_at_least(values, cells, signs)[:, i, j])
    assert calls


@pytest.mark.skipif(pc.BACKEND != "numba", reason="the compiled backend is off")
@SETTINGS
@given(st.integers(1, 6), st.integers(1, 2500), st.sampled_from([1, 8, 9, 24, 31, 32, 33, 40]),
       st.integers(-30, 10), st.data())
def test_radix_rows_sort_as_numpy(n_m, n_p, span, power, data):
    """pair_counts._radix_rows (sorted_pair_keys' sort of the chance
    baseline's keys, issue 36) puts each row in numpy's order when the
    rows' differences vary over at most _RADIX_PASSES bytes, and answers
    False, the keys untouched, beyond — ties, a row of equal differences,
    differences on a grid of 2^span values at many scales."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    diff = np.floor(rng.random((n_m, n_p)) * 2.0 ** span) * 2.0 ** power
    if data.draw(st.booleans()):
        diff[data.draw(st.integers(0, n_m - 1))] = 2.0 ** power       # one q in a row
    keys = pc._pair_keys(diff)
    if keys is None:
        return
    want = np.sort(keys[0], axis=1)
    before = keys[0].copy()
    done = pc._radix_rows(keys[0], np.int64(keys[1]), np.empty(n_p, dtype=np.int64),
                          np.int64(pc._RADIX_PASSES))
    if done:
        assert np.array_equal(keys[0], want)
    else:
        assert span > 8 * pc._RADIX_PASSES
        assert np.array_equal(keys[0], before)
    if span <= 8 * pc._RADIX_PASSES:
        assert done
    got = pc.sorted_pair_keys(diff)
    assert np.array_equal(got[0], want) and got[1] == keys[1]
