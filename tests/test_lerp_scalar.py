"""Issue 36: the interpolation of a column or two in Python floats
(resampling._lerp_scalar) gives the doubles of the array path
(resampling._lerp_arrays) and of numpy's quantile, every branch of numpy's
virtual index (inside, at the top, one value)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import resampling as rs

QS = [0.0, 0.025, 0.5, 0.975, 1.0, 1 / 3, 0.1]


def bits(a) -> bytes:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes()


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40),
       extra=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40),
       q=st.sampled_from(QS) | st.floats(0, 1), q2=st.sampled_from(QS),
       pad=st.integers(0, 3))
def test_lerp_scalar_equals_the_array_path_and_numpy(values, extra, q, q2, pad):
    n = np.asarray([len(values), len(extra)], dtype=np.int64)
    rows = max(len(values), len(extra)) + pad
    ordered = np.full((rows, 3), np.nan)
    ordered[:len(values), 0] = np.sort(values)
    ordered[:len(extra), 2] = np.sort(extra)
    cols = np.asarray([0, 2], dtype=np.intp)
    qs = np.asarray([q, q2], dtype=np.float64)
    got = rs._lerp_scalar(ordered, n, qs, cols)
    assert bits(got) == bits(rs._lerp_arrays(ordered, n, qs, cols))
    assert bits(got) == bits([np.quantile(np.asarray(values, dtype=np.float64), q),
                              np.quantile(np.asarray(extra, dtype=np.float64), q2)])
    # one column, through the dispatcher (q and n broadcast)
    one = rs._lerp_sorted(ordered, len(values), q, [0])
    assert bits(one) == bits(rs._lerp_arrays(ordered, n[:1], qs[:1], cols[:1]))


def test_lerp_sorted_takes_the_scalar_path_for_few_columns(monkeypatch):
    """(so that the test above tests what runs: two columns or fewer)"""
    seen = []
    monkeypatch.setattr(rs, "_lerp_scalar",
                        lambda *a: seen.append(len(a[3])) or rs._lerp_arrays(*a))
    ordered = np.sort(np.random.default_rng(0).random((9, 4)), axis=0)
    rs._lerp_sorted(ordered, 9, 0.5, [1, 3])
    rs._lerp_sorted(ordered, 9, 0.5, [0, 1, 3])
    assert seen == [2]
