"""Issue 36: PDP's per-group sums compiled without the pairs × measures
arrays (compiled_rows.pdp_reduceat) are numpy's np.add.reduceat of the
terms, bit for bit: a segment's first term plus numpy's pairwise sum of
the others (one by one from −0.0 below 8, eight accumulators above);
pdp_side and pdp_human_sums give the doubles of the numpy path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import compiled_rows
from qarla_spark.measures import meta_eval as me

pytestmark = pytest.mark.skipif(compiled_rows.backend() != "numba",
                                reason="the compiled sums need numba")


def bits(a) -> bytes:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes()


def values(rng, shape, spread: bool, zeros: bool):
    """Doubles of every magnitude (an order-sensitive sum), signed zeros."""
    v = rng.standard_normal(shape)
    if spread:
        v = v * 10.0 ** rng.integers(-8, 17, shape)
    if zeros:
        v[rng.random(shape) < 0.3] = 0.0
        v[rng.random(shape) < 0.2] = -0.0
    return v


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2 ** 31), n_m=st.integers(1, 5),
       lengths=st.lists(st.sampled_from([1, 2, 7, 8, 9, 15, 16, 17, 64, 120, 128, 129, 130]),
                        min_size=1, max_size=5),
       spread=st.booleans(), zeros=st.booleans(), cross=st.booleans())
def test_pdp_reduceat_is_numpy_reduceat(seed, n_m, lengths, spread, zeros, cross):
    rng = np.random.default_rng(seed)
    n = 30
    m = values(rng, (n, n_m), spread, zeros)
    h = values(rng, n, spread, zeros)
    total = sum(lengths)
    i = rng.integers(0, n, total)
    j = rng.integers(0, n, total)
    starts = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
    at = np.sort(rng.choice(len(lengths) + 3, len(lengths), replace=False))
    dm = m[i] - m[j]
    terms = dm * (h[i] - h[j])[:, None] if cross else dm * dm
    want = np.zeros((len(lengths) + 3, n_m))
    want[at] = np.add.reduceat(terms, starts, axis=0)
    got = np.zeros((len(lengths) + 3, n_m))
    done = compiled_rows.pdp_reduceat(m, h, i, j, starts, at, got, cross)
    assert done == (max(lengths) <= compiled_rows.PDP_SEGMENT)
    if done:
        assert bits(got) == bits(want)
    else:
        assert not got.any()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31), n_g=st.integers(1, 6), n_m=st.integers(1, 4),
       size=st.integers(1, 20), spread=st.booleans(), zeros=st.booleans())
def test_pdp_side_and_human_sums_equal_the_numpy_path(seed, n_g, n_m, size, spread, zeros):
    """(groups of up to 20 items: 190 pairs, past one compiled segment)"""
    rng = np.random.default_rng(seed)
    groups = np.sort(rng.integers(0, n_g, n_g * size))
    metric = values(rng, (groups.size, n_m), spread, zeros)
    human = values(rng, groups.size, spread, zeros)
    side = me.pdp_side(metric, groups, n_g)
    cross, hh = me.pdp_human_sums(side, human)
    original = compiled_rows.pdp_reduceat
    compiled_rows.pdp_reduceat = lambda *a: False          # numpy's path
    try:
        side2 = me.pdp_side(metric, groups, n_g)
        cross2, hh2 = me.pdp_human_sums(side2, human)
    finally:
        compiled_rows.pdp_reduceat = original
    assert side2.dm is not None
    assert bits(side.mm) == bits(side2.mm)
    assert bits(cross) == bits(cross2) and bits(hh) == bits(hh2)
