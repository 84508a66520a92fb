"""Issue 36: a few distinct human scores' readings are remembered per
worker (human._fractions_remembered, keyed by the doubles' bytes): the
same (p, q) as worked out each time (human._fractions_of), whatever was
read before, and the arrays handed out are the caller's own."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import human as hu

# thirds, halves, doubles that read as themselves, signed zeros, tiny values
VALUES = st.one_of(st.sampled_from([1.0, 4 / 3, 5 / 3, 2.5, 11 / 3, 0.0, -0.0, 0.1, 1e-300,
                                    -7 / 3, 2.0 ** 13, 1 / 7]),
                   st.floats(-1e4, 1e4, allow_nan=False))


@settings(max_examples=150, deadline=None)
@given(values=st.lists(VALUES, min_size=0, max_size=80))
def test_remembered_fractions_equal_the_worked_out_ones(values):
    u = np.unique(np.asarray(values, dtype=np.float64))
    want_p, want_q = hu._fractions_of(u)
    for _ in range(2):                       # worked out, then remembered
        p, q = hu._fractions_unique(u)
        assert p.dtype == want_p.dtype and q.dtype == want_q.dtype
        assert np.array_equal(p, want_p) and np.array_equal(q, want_q)
    v = np.asarray(values, dtype=np.float64)
    p, q = hu.fractions(v)
    assert np.array_equal(p, want_p[np.searchsorted(u, v)] if v.size else p)


def test_the_callers_arrays_are_their_own():
    v = np.asarray([1.0, 4 / 3, 4 / 3, 2.5])
    p, q = hu.fractions(v)
    assert (p, q) and q[1] == 3
    p[:] = 0
    q[:] = 0
    p2, q2 = hu.fractions(v)
    assert p2.tolist() == [1, 4, 4, 5] and q2.tolist() == [1, 3, 3, 2]
    kept_p, _ = hu._fractions_unique(np.unique(v))
    assert not kept_p.flags.writeable
