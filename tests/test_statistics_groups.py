"""The statistics' groups without their per-group fixed costs (issue 36):
each faster path against the plain computation it replaces, bit for bit
(sign flips' counts by search, ranks by bisection, the AUC's and JACK's
counts without a frame, a criterion's human readings found once)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import group_statistics as gs
from qarla_spark.measures import human as hu
from qarla_spark.measures import resampling as rs

SETTINGS = settings(max_examples=60, deadline=None)


def _bits(a):
    return np.asarray(a, dtype=np.float64).view(np.int64).tolist()


@SETTINGS
@given(st.integers(1, 9), st.integers(1, 6), st.integers(0, 40), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([1, 3, 1000, 2 ** 40]))
def test_sign_flip_family_against_brute_force(n_t, n_s, n_p, seed, big):
    """p and the max-T adjusted p of every comparison, from Python's
    integers: each pattern's |Σ s·d| against the observed |Σ d|."""
    rng = np.random.default_rng(seed)
    diffs = rng.integers(-big, big + 1, (n_t, n_s)).astype(np.int64)
    if rng.random() < 0.3:
        diffs[:, 0] = 0                                  # every pattern tied
    flips = np.where(rng.random((n_p, n_t)) < 0.5, -1, 1).astype(np.int64)
    p, adjusted = rs.sign_flip_family(diffs, flips)
    n = n_p + 1
    d = [[int(v) for v in row] for row in diffs.tolist()]
    sums = [[abs(sum(f[t] * d[t][s] for t in range(n_t))) for s in range(n_s)]
            for f in flips.tolist()]
    tops = [max(row, default=0) for row in sums]
    for s in range(n_s):
        observed = abs(sum(d[t][s] for t in range(n_t)))
        above = sum(1 for row in sums if row[s] > observed)
        tied = sum(1 for row in sums if row[s] == observed)
        want_p = (0.5 + np.int64(above) + 0.5 * np.int64(tied)) / n
        t_above = sum(1 for v in tops if v > observed)
        t_tied = sum(1 for v in tops if v == observed)
        want_a = max((0.5 + np.int64(t_above) + 0.5 * np.int64(t_tied)) / n, want_p)
        assert _bits([p[s], adjusted[s]]) == _bits([want_p, want_a])


@SETTINGS
@given(st.integers(1, 30), st.integers(1, 7), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([2, 5, 1000]))
def test_ranks_by_bisection(rows, cols, seed, grid):
    """#{v < point} and #{v ≤ point} of each column's finite values (the
    sorted ones first), ties and NaN included."""
    rng = np.random.default_rng(seed)
    reps = rng.integers(0, grid, (rows, cols)) / grid
    reps[rng.random((rows, cols)) < 0.1] = np.nan
    points = rng.integers(0, grid, cols) / grid
    ordered, n = rs._finite_sorted(reps)
    cols_at = np.arange(cols)
    below, at_most = rs._ranks_sorted(ordered, n, points, cols_at)
    for m in range(cols):
        v = reps[:, m][np.isfinite(reps[:, m])]
        assert below[m] == np.count_nonzero(v < points[m])
        assert at_most[m] == np.count_nonzero(v <= points[m])


class _Auc:
    def __init__(self, topic, wins2, n_pairs):
        self.topic, self.wins2, self.n_pairs = topic, wins2, n_pairs


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 2 ** 32 - 1))
def test_auc_counts_equal_the_frame(n_topics, n_measures, seed):
    """auc_counts gives the frame's topics, measures and matrices (a later
    case of a topic replacing an earlier one), and auc_group of either the
    same rows."""
    rng = np.random.default_rng(seed)
    names = [f"m{k}" for k in rng.permutation(n_measures)]
    cases = [_Auc(f"t{rng.integers(n_topics)}", rng.integers(0, 20, n_measures).tolist(),
                  int(rng.integers(1, 12))) for _ in range(n_topics + 2)]
    rows = [(c.topic, m, int(w), int(c.n_pairs)) for c in cases
            for m, w in zip(names, c.wins2)]
    frame = pd.DataFrame.from_records(rows, columns=["topic", "measure", "wins2", "n_pairs"])
    topics, measures, wins, pairs = gs.auc_counts(cases, names)
    assert topics == sorted(set(frame["topic"])) and measures == sorted(set(frame["measure"]))
    assert np.array_equal(wins, gs._matrix(zip(frame["topic"], frame["measure"],
                                               frame["wins2"]), topics, measures))
    assert np.array_equal(pairs, gs._matrix(zip(frame["topic"], frame["measure"],
                                                frame["n_pairs"]), topics, measures))
    want = gs.auc_group(("task", "c"), frame, {}, seed % 97, 30)
    got = gs.auc_group_of(("task", "c"), topics, measures, wins, pairs, {}, seed % 97, 30)
    assert [tuple(map(repr, r)) for r in got] == [tuple(map(repr, r)) for r in want]
    assert gs.auc_counts([], names) is None


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([[1.0, 2.0, 3.5], [1 / 3, 2 / 3, 1.0], [0.1, 0.7, 1 / 7]]))
def test_system_means_many_equal_one_at_a_time(n_t, n_s, seed, grid):
    """A criterion's readings found once serve every weight matrix: each
    system's exact weighted mean of its readings (Fractions), rounded once."""
    rng = np.random.default_rng(seed)
    cells = [(t, s) for t in range(n_t) for s in range(n_s)]
    t_idx = np.array([c[0] for c in cells])
    s_idx = np.array([c[1] for c in cells])
    values = rng.choice(grid, len(cells)) + rng.integers(0, 3, len(cells))
    weights = [np.ones((1, n_t), dtype=np.int64), rng.poisson(1.0, (5, n_t)).astype(np.int64),
               rs.jackknife_weights(n_t)]
    got = hu.system_means_many(values, (t_idx, s_idx), n_s, weights, rs.grouped_real_means)
    readings = [hu.value(float(v)) for v in values]
    for w, g in zip(weights, got):
        assert g.shape == (w.shape[0], n_s)
        for b in range(w.shape[0]):
            for s in range(n_s):
                rows = np.flatnonzero(s_idx == s)
                den = sum(int(w[b, t_idx[r]]) for r in rows)
                num = sum(readings[r] * int(w[b, t_idx[r]]) for r in rows)
                want = float(num / den) if den else float("nan")
                assert np.array_equal(g[b, s], want, equal_nan=True)
