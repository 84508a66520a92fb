"""Many keyed Philox streams at once (measures/streams.py, issue 36): the
words numpy's own generator gives, and the uniforms, bootstrap weights,
sign patterns, system picks and chance scores made from them unchanged."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import meta_eval as me
from qarla_spark.measures import resampling as rs
from qarla_spark.measures.streams import philox_raw


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2 ** 128 - 1), min_size=1, max_size=5), st.integers(0, 13))
def test_the_streams_are_numpys_philox(keys, n):
    got = philox_raw(keys, n)
    for k, key in enumerate(keys):
        assert got[k].tolist() == np.random.Philox(key=key).random_raw(n).tolist()


def test_counter_carries_like_numpy():
    """A stream long enough to pass many blocks, keys at the edges."""
    for key in (0, 2 ** 64 - 1, 2 ** 64, 2 ** 128 - 1):
        assert philox_raw([key], 1001)[0].tolist() == \
            np.random.Philox(key=key).random_raw(1001).tolist()


def test_what_is_made_of_them_is_unchanged():
    """Each helper against the one-stream-at-a-time definition it had."""
    seed, task, topics, n = 13, "t", ("a", "b", "c"), 37
    u = [rs.uniforms(seed, ("bootstrap", task, t), n) for t in topics]
    want = np.stack([np.searchsorted(rs._POISSON1_CDF, x, side="right") for x in u], axis=1)
    assert np.array_equal(rs.poisson_weights(seed, task, list(topics), n), want)
    flips = np.stack([np.where(rs.uniforms(seed, ("flip", task, t), n) < 0.5, -1, 1)
                      for t in topics], axis=1)
    assert np.array_equal(rs.sign_flips(seed, task, list(topics), n), flips)
    picks = np.stack([np.minimum((rs.uniforms(seed, ("systems", task, str(b)), 5) * 5)
                                 .astype(np.int64), 4) for b in range(n)])
    assert np.array_equal(rs.system_picks(seed, task, 5, n), picks)
    labels = [(task, "coherence", str(d)) for d in range(4)]
    many = me.chance_scores_many(seed, labels, (3, 2))
    for d, label in enumerate(labels):
        assert many[d].view(np.int64).tolist() == \
            me.chance_scores(seed, label, (3, 2)).view(np.int64).tolist()
    assert math.isfinite(float(many.sum()))
