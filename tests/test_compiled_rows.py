"""numpy's row arithmetic compiled (measures/compiled_rows.py, issue 36):
numpy's pairwise summation reproduced for every length, and the compiled
correlations bit for bit the numpy code's, on rows with ties, constant
rows, NaN, wide magnitudes and both signs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import numpy_backend
from qarla_spark.measures import agreement
from qarla_spark.measures import compiled_rows as cr
from qarla_spark.measures import pair_counts as pc

pytestmark = pytest.mark.skipif(cr.backend() != "numba",
                                reason="the compiled backend is off (no numba, or "
                                       "QARLA_COUNT_BACKEND=numpy)")
SETTINGS = settings(max_examples=150, deadline=None)


def _wide(rng, shape):
    """Doubles of every sign over 16 orders of magnitude: any change of
    the summation order shows in the last bits."""
    return rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 8, shape)


@pytest.mark.parametrize("n", [*range(0, 140), 255, 256, 257, 300, 1000, 1031, 4099])
def test_pairwise_sum_is_numpys(n):
    rng = np.random.default_rng(n)
    rows = _wide(rng, (40, n))
    want = rows.sum(axis=1)
    got = np.array([cr.pairwise_sum(row, 0, n) for row in rows])
    assert got.tobytes() == want.tobytes()
    # and a mean is that sum over n, as numpy's
    if n:
        assert (got / n).tobytes() == rows.mean(axis=1).tobytes()


def test_a_changed_order_would_show():
    """The test above can fail: summed left to right, the same rows differ."""
    rng = np.random.default_rng(7)
    rows = _wide(rng, (40, 16))
    plain = np.array([sum(row.tolist(), 0.0) for row in rows])
    assert plain.tobytes() != rows.sum(axis=1).tobytes()


def _rows(draw, shape):
    kind = draw(st.sampled_from(["grid", "wide", "ranks"]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "grid":          # Likert-like: many ties
        values = rng.integers(0, 5, shape) / 3.0
    elif kind == "ranks":
        values = rng.integers(0, 3, shape).astype(np.float64)
    else:
        values = _wide(rng, shape)
    flat = values.reshape(-1, shape[-1])
    for _ in range(draw(st.integers(0, 3))):        # constant rows
        flat[draw(st.integers(0, len(flat) - 1))] = draw(st.sampled_from([0.0, 1.5, -2.0]))
    if draw(st.booleans()):                        # a NaN
        values.flat[draw(st.integers(0, values.size - 1))] = np.nan
    return values


@SETTINGS
@given(st.integers(1, 6), st.sampled_from([1, 2, 5, 8, 13]), st.integers(1, 3), st.integers(1, 20),
       st.sampled_from([("pearson", "spearman"), ("pearson",), ("spearman",),
                        ("pearson", "spearman", "kendall"), ("kendall", "spearman"),
                        ("kendall",)]),
       st.data())
def test_correlations_compiled_equal_numpys(n_b, n_m, n_c, n, kinds, data):
    """(8 measures or more: the kernel with a replicate's measures side by
    side)"""
    x = _rows(data.draw, (n_b, n_m, n))
    ys = _rows(data.draw, (n_c, n_b, n))
    keys = [f"s{k:02d}" for k in data.draw(st.permutations(range(n)))]
    got = agreement.correlation_rows_many(keys, x, ys, kinds=kinds)
    with numpy_backend():
        want = agreement.correlation_rows_many(keys, x, ys, kinds=kinds)
    assert got.tobytes() == want.tobytes()
    # the row-by-row entry point too
    got1 = agreement.correlation_rows(keys, x[:, 0], ys[0], kinds=kinds)
    with numpy_backend():
        want1 = agreement.correlation_rows(keys, x[:, 0], ys[0], kinds=kinds)
    assert got1.tobytes() == want1.tobytes()


def test_more_than_a_block_of_systems():
    """Rows longer than 128 (numpy's recursive halves) give numpy's doubles."""
    rng = np.random.default_rng(3)
    x, ys = _wide(rng, (3, 2, 300)), _wide(rng, (2, 3, 300))
    keys = [f"s{k:03d}" for k in range(300)]
    got = agreement.correlation_rows_many(keys, x, ys, kinds=("pearson", "spearman"))
    with numpy_backend():
        want = agreement.correlation_rows_many(keys, x, ys, kinds=("pearson", "spearman"))
    assert got.tobytes() == want.tobytes()


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 4), st.integers(2, 20), st.data())
def test_three_correlations_equal_numpys(n_b, n_c, n, data):
    """The fused pass of Pearson, Spearman and Kendall (one row a
    replicate, as the correlation groups have them) gives the numpy
    backend's doubles, constant rows and NaN included."""
    x = _rows(data.draw, (n_b, n))
    ys = _rows(data.draw, (n_c, n_b, n))
    keys = [f"s{k:02d}" for k in range(n)]
    got = cr.three_correlations(x, ys)
    with numpy_backend():
        want = agreement.correlation_rows_many(keys, x[:, None, :], ys, min_n=2)[:, :, 0, :]
    assert agreement.KINDS == ("pearson", "spearman", "kendall")
    assert got.tobytes() == want.tobytes()
    # row by row (two points or more: the summary level's), as correlation_rows
    got1 = cr.three_correlations(x, ys[:1])[0]
    with numpy_backend():
        want1 = agreement.correlation_rows(keys, x, ys[0], min_n=2)
    assert got1.tobytes() == want1.tobytes()


def test_three_correlations_can_fail():
    """A Kendall count off by one pair shows in the comparison above."""
    rng = np.random.default_rng(5)
    x, ys = rng.integers(0, 4, (5, 9)).astype(float), rng.integers(0, 4, (2, 5, 9)) / 3.0
    got = cr.three_correlations(x, ys)
    with numpy_backend():
        want = agreement.correlation_rows_many([f"{k}" for k in range(9)], x[:, None, :],
                                               ys)[:, :, 0, :]
    assert got.tobytes() == want.tobytes()
    x[0, 0] += 0.5
    assert cr.three_correlations(x, ys).tobytes() != want.tobytes()


@SETTINGS
@given(st.integers(1, 6), st.sampled_from([1, 8, 13]), st.integers(1, 3), st.integers(1, 20),
       st.sampled_from([("pearson", "spearman"), ("pearson",), ("spearman",), ("kendall",)]),
       st.booleans(), st.data())
def test_correlations_of_system_major_scores_read_in_place(n_b, n_m, n_c, n, kinds, ordered,
                                                           data):
    """x given as the transposed view of B × n × M scores (the statistics'
    layout, keys in order or not: the compiled pass reads it in place, or
    Kendall without the gather) gives numpy's doubles of a contiguous copy."""
    scores = _rows(data.draw, (n_b, n, n_m))
    x = scores.transpose(0, 2, 1)
    ys = _rows(data.draw, (n_c, n_b, n))
    keys = [f"s{k:02d}" for k in (range(n) if ordered else data.draw(st.permutations(range(n))))]
    got = agreement.correlation_rows_many(keys, x, ys, kinds=kinds)
    with numpy_backend():
        want = agreement.correlation_rows_many(keys, np.ascontiguousarray(x), ys, kinds=kinds)
    assert got.tobytes() == want.tobytes()


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 4), st.integers(2, 18), st.booleans(), st.data())
def test_correlation_stack_keys_in_order_or_not(n_b, n_c, n, in_order, data):
    """group_statistics._correlation_stack skips the gathered copies when
    the keys are in order already (issue 36): the same doubles as the
    numpy backend's correlation_rows_many in both cases — keys in order,
    and keys shuffled (the points gathered into the keys' order)."""
    from qarla_spark.measures.group_statistics import _correlation_stack
    x = _rows(data.draw, (n_b, n))
    ys = _rows(data.draw, (n_c, n_b, n))
    perm = list(range(n)) if in_order else data.draw(st.permutations(range(n)))
    keys = [f"s{k:02d}" for k in perm]
    got = _correlation_stack(keys, x, ys)
    with numpy_backend():
        want = agreement.correlation_rows_many(keys, x[:, None, :], ys)[:, :, 0, :]
    assert got.tobytes() == want.tobytes()
    # the arguments left as they were (no reordering in place)
    assert got.shape == (n_c, n_b, len(agreement.KINDS))
