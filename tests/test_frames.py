"""qarla_spark.measures.frames.stack: the kernels' frames stacked column by
column give what pd.concat gives (same values, types and a fresh index)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures.frames import stack

COLUMNS = ["kind", "holdout", "num"]


def _frame(n, holdout, start):
    return pd.DataFrame({
        "kind": np.array(["sys"] * n, dtype=object),
        "holdout": np.array([holdout(i) for i in range(n)], dtype=object),
        "num": pd.array(np.arange(start, start + n), dtype="Int64"),
    }, index=np.arange(n) + 7)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=1, max_size=6))
def test_stack_equals_concat_for_frames_of_the_same_types(shapes):
    frames = [_frame(n, (lambda i: None) if null else (lambda i: f"h{i}"), 10 * k)
              for k, (n, null) in enumerate(shapes)]
    got = stack(frames, COLUMNS)
    want = pd.concat(frames, ignore_index=True)[COLUMNS]
    pd.testing.assert_frame_equal(got, want)
    assert list(got.index) == list(range(len(want)))


def test_frames_of_other_types_are_left_to_concat():
    a = _frame(2, lambda i: None, 0)
    b = a.assign(num=[1.5, np.nan])                       # float, not Int64
    got = stack([a, b], COLUMNS)
    pd.testing.assert_frame_equal(got, pd.concat([a, b], ignore_index=True)[COLUMNS])


def test_one_frame_is_selected_and_reindexed_and_none_is_refused():
    a = _frame(3, lambda i: "x", 0)
    assert list(stack([a], ["num", "kind"]).columns) == ["num", "kind"]
    assert list(stack([a], COLUMNS).index) == [0, 1, 2]
    with pytest.raises(ValueError):
        stack([], COLUMNS)
