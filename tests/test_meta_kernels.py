"""The meta group's compiled kernels (measures/meta_kernels.py, issue 36)
give their numpy twins' numbers bit for bit: Kendall's τ_b of rows of
replicates (ties, NaN, constant rows, both signs of zero) and the
replicates' sums of resampling.replicate_sums."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import agreement
from qarla_spark.measures import meta_kernels as mk
from helpers import numpy_backend
from qarla_spark.measures import pair_counts as pc
from qarla_spark.measures import resampling as rs

pytestmark = pytest.mark.skipif("numba" not in pc.BACKENDS, reason="numba not installed")
SETTINGS = settings(max_examples=150, deadline=None)


def _doubles(draw, shape, nan=True):
    grid = draw(st.sampled_from([1, 3, 1000]))
    values = np.asarray(draw(st.lists(st.integers(-grid, grid), min_size=int(np.prod(shape)),
                                      max_size=int(np.prod(shape)))), dtype=np.float64)
    values = values.reshape(shape) / grid
    if values.size and draw(st.booleans()):
        values.flat[draw(st.integers(0, values.size - 1))] = -0.0
    if nan and values.size and draw(st.booleans()):
        values.flat[draw(st.integers(0, values.size - 1))] = np.nan
    if values.size and draw(st.booleans()):       # a constant row
        values[(0,) * (values.ndim - 2) + (slice(None), 0)] = 0.5
    return values


def _same(a, b) -> bool:
    return a.shape == b.shape and np.array_equal(np.asarray(a).view(np.int64),
                                                 np.asarray(b).view(np.int64))


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 9), st.integers(0, 8), st.data())
def test_kendall_replicates_equals_numpy_and_correlation_rows(n_c, n_b, n, data):
    x = _doubles(data.draw, (n_c, n, n_b))
    y = _doubles(data.draw, (n, n_b))
    got = mk.kendall_replicates(x, y)
    assert got.shape == (n_b, n_c)
    keys = [f"s{i:02d}" for i in range(n)]
    want = agreement.correlation_rows_many(keys, x.transpose(2, 0, 1), y.T[None],
                                           kinds=("kendall",))[0, :, :, 0]
    assert _same(got, want)
    with numpy_backend():
        twin = mk.kendall_replicates(x, y)
    assert _same(got, twin)


@SETTINGS
@given(st.integers(1, 7), st.integers(1, 12), st.integers(1, 30),
       st.sampled_from(["poisson", "signed", "wide"]), st.data())
def test_replicate_sums_kernel_equals_numpy(n_t, n_s, n_b, weights_kind, data):
    seed = data.draw(st.integers(0, 2 ** 31))
    rng = np.random.default_rng(seed)
    scale = data.draw(st.sampled_from([1e-300, 1e-5, 1.0, 3.0, 1e200]))
    values = rng.normal(size=(n_t, n_s)) * scale
    values[rng.random((n_t, n_s)) < 0.2] = 0.0
    values[rng.random((n_t, n_s)) < 0.1] = -0.0
    if data.draw(st.booleans()):
        values = np.round(values * 4) / 4          # few levels
    if weights_kind == "poisson":
        weights = rng.poisson(1.0, size=(n_b, n_t))
    elif weights_kind == "signed":
        weights = rng.integers(-3, 4, size=(n_b, n_t))
    else:
        weights = rng.integers(0, 2 ** 20, size=(n_b, n_t))
    got = rs.replicate_sums(values, weights)
    with numpy_backend():
        want = rs.replicate_sums(values, weights)
    assert _same(got, want)


def test_replicate_sums_kernel_runs_and_can_fail():
    """The kernel is the path taken (not the numpy fallback), and a
    different order of the levels' additions would show."""
    rng = np.random.default_rng(3)
    values = rng.normal(size=(10, 40))
    weights = rng.poisson(1.0, size=(200, 10))
    base, pieces = rs.level_pieces(values)
    got = mk.replicate_sums(weights, pieces, base)
    assert got is not None and len(pieces) >= 2
    assert _same(got, rs.replicate_sums(values, weights))
    # the levels added lowest first: other doubles somewhere
    wrong = np.zeros_like(got)
    for level, piece in pieces:
        wrong += np.ldexp(weights.astype(np.float64) @ piece.astype(np.float64), level + base)
    assert not _same(got, wrong)
