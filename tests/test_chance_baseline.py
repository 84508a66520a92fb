"""Issue 36: the chance baseline's own paths
(qarla_spark.measures.judge_statistics.chance_baseline) give the doubles of
the general ones — the random measures' system scores as plain sums over
the topics divided by the counts (:func:`chance_system_scores`, against
the exact means of :func:`measure_scores`), the human scores' reading made
once for their system means and the sign flips' counts. The reference is
the baseline as it was before (every score through :func:`system_scores`,
each kernel reading the human scores itself), compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark import meta_statistics as ms
from qarla_spark.measures import agreement
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures import meta_eval as me
from qarla_spark.measures import resampling as rs

SETTINGS = settings(max_examples=40, deadline=None)
# human scores as means of judgments (thirds: a grid reading), or doubles
THIRDS = [1.0, 4 / 3, 5 / 3, 2.0, 7 / 3, 3.0, 3.5, 11 / 3, 5.0]
DOUBLES = [0.1, 0.25, 0.3, 0.7000000000000001, 0.9, 1.0]


def bits(a) -> bytes:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes()


def reference_chance_baseline(task, criterion, data, seed, flips, draws):
    """:func:`js.chance_baseline` as it was (main 4d53468): the random
    cube's system scores by :func:`js.system_scores`, no reading shared."""
    t_idx, _ = js._positions(data)
    if not draws or not t_idx.size:
        return {}
    shape = (len(data.topics), len(data.systems))
    drawn = me.chance_scores_many(seed, [(task, criterion, str(d)) for d in range(draws)],
                                  shape)
    cube = np.floor(np.moveaxis(drawn, 0, 2) * js.CHANCE_GRID) / js.CHANCE_GRID
    cube = np.where(data.cells[:, :, None], cube, np.nan)
    random = js.JudgedScores(data.topics, data.systems, tuple(map(str, range(draws))), cube,
                             data.human)
    ones = np.ones((1, len(data.topics)), dtype=np.int64)
    x0, h0 = (a[0] for a in js.system_scores(random, ones))
    x, h = np.asarray(x0[None], dtype=np.float64), np.asarray(h0[None], dtype=np.float64)
    r = agreement.correlation_rows_shared(data.systems, x.transpose(0, 2, 1), h,
                                          kinds=("pearson", "spearman"))
    scores = js.SystemScores(random, x, h, r, me.sign_sums(x, h),
                             np.zeros((0, len(data.topics))), flips, points_only=True)
    values = np.stack([np.asarray(js.KERNELS[s.key](scores)[0], dtype=np.float64)
                       for s in ms.STATISTICS], axis=1)
    return dict(zip((s.key for s in ms.STATISTICS), js._bands(values)))


def judged(seed: int, n_t: int, n_s: int, missing: float, values, n_m: int = 2,
           stray: bool = False) -> js.JudgedScores:
    """A cube of ``n_t`` topics and ``n_s`` systems, about ``missing`` of
    its cells without a human score; ``stray``: human scores outside the
    cells too (a measure missing there) — the cube not ``used()``."""
    rng = np.random.default_rng(seed)
    human = rng.choice(values, size=(n_t, n_s))
    human[rng.random((n_t, n_s)) < missing] = np.nan
    scores = rng.random((n_t, n_s, n_m))
    if stray:
        scores[rng.random((n_t, n_s)) < 0.2, 0] = np.nan
        # every system with a cell in the first topic (as used() keeps them)
        scores[0] = rng.random((n_s, n_m))
        human[0] = rng.choice(values, size=n_s)
    data = js.JudgedScores(tuple(f"t{t:02d}" for t in range(n_t)),
                           tuple(f"s{s:02d}" for s in range(n_s)),
                           tuple(f"m{m}" for m in range(n_m)), scores, human)
    return data if stray else data.used()


def same(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(
        bits([a[k].value, a[k].low, a[k].high]) == bits([b[k].value, b[k].low, b[k].high])
        and a[k].interval == b[k].interval for k in a)


@SETTINGS
@given(seed=st.integers(0, 2 ** 31), n_t=st.integers(1, 9), n_s=st.integers(2, 9),
       missing=st.sampled_from([0.0, 0.2, 0.5]), thirds=st.booleans(),
       stray=st.booleans(), draws=st.sampled_from([1, 7, 20]))
def test_chance_baseline_equals_the_general_path(seed, n_t, n_s, missing, thirds, stray,
                                                  draws):
    data = judged(seed, n_t, n_s, missing, THIRDS if thirds else DOUBLES, stray=stray)
    if not data.cells.any():
        return
    flips = rs.sign_flips(seed, "task", data.topics, 50)
    got = js.chance_baseline("task", "crit", data, seed, flips, draws)
    want = reference_chance_baseline("task", "crit", data, seed, flips, draws)
    assert same(got, want)


def test_chance_baseline_equals_the_general_path_at_a_run_s_size():
    """Ten topics of sixteen systems, a few cells missing, 100 draws and
    1,000 sign patterns (a 40 x 10 run's chance group)."""
    for seed, values in ((3, THIRDS), (4, DOUBLES)):
        data = judged(seed, 10, 16, 0.05, values)
        flips = rs.sign_flips(seed, "task", data.topics, 1000)
        got = js.chance_baseline("task", "coherence", data, 13, flips, js.CHANCE_DRAWS)
        want = reference_chance_baseline("task", "coherence", data, 13, flips,
                                         js.CHANCE_DRAWS)
        assert same(got, want) and got


@SETTINGS
@given(seed=st.integers(0, 2 ** 31), n_t=st.integers(1, 12), n_s=st.integers(1, 9),
       n_k=st.integers(1, 6), missing=st.sampled_from([0.0, 0.3, 0.9]))
def test_chance_system_scores_are_the_exact_means(seed, n_t, n_s, n_k, missing):
    """The plain sums over topics divided by the counts are the exact
    means rounded once (measure_scores'), zeros and the grid's largest
    value included; NaN for a system without a cell."""
    rng = np.random.default_rng(seed)
    ints = rng.integers(0, js.CHANCE_GRID, size=(n_t, n_s, n_k))
    ints[rng.random((n_t, n_s, n_k)) < 0.1] = 0
    ints[rng.random((n_t, n_s, n_k)) < 0.1] = js.CHANCE_GRID - 1
    cube = ints / js.CHANCE_GRID
    cells = rng.random((n_t, n_s)) >= missing
    human = np.where(cells, 1.0, np.nan)
    data = js.JudgedScores(tuple(map(str, range(n_t))), tuple(map(str, range(n_s))),
                           tuple(map(str, range(n_k))), np.where(cells[:, :, None], cube, np.nan),
                           human)
    got = js.chance_system_scores(cube, cells)
    if not cells.any():
        assert np.isnan(got).all()
        return
    want = js.measure_scores(data, np.ones((1, n_t), dtype=np.int64))[0]
    assert bits(got) == bits(want)


def test_chance_system_scores_refuse_values_off_the_grid():
    cells = np.ones((2, 2), dtype=bool)
    for bad in (0.1, 1.0, -2.0 ** -24, np.nan):
        cube = np.full((2, 2, 1), 0.5)
        cube[1, 1, 0] = bad
        with pytest.raises(ValueError):
            js.chance_system_scores(cube, cells)
    # outside the cells, anything (not read)
    cube = np.full((2, 2, 1), 0.5)
    cube[0, 0, 0] = np.nan
    cells[0, 0] = False
    assert js.chance_system_scores(cube, cells)[0, 0] == 0.5


def reference_topic_correlations(data, humans):
    """Each topic alone, through correlation_rows_many with its own
    systems as the keys (what the batches of the same cells gave)."""
    n_t, n_m = data.cells.shape[0], len(data.measures)
    out = [np.full((n_t, n_m, len(agreement.KINDS)), np.nan) for _ in humans]
    systems = np.asarray(data.systems, dtype=object)
    for t in range(n_t):
        sel = np.flatnonzero(data.cells[t])
        if not sel.size:
            continue
        at = np.ix_([t], sel)
        found = agreement.correlation_rows_many(
            systems[sel], data.scores[at].transpose(0, 2, 1),
            np.stack([h[at] for h in humans]), min_n=agreement.MIN_POINTS)
        for r, f in zip(out, found):
            r[[t]] = f
    return [(r, np.isfinite(r[:, :, 0])) for r in out]


@SETTINGS
@given(seed=st.integers(0, 2 ** 31), n_t=st.integers(1, 8), n_s=st.integers(2, 9),
       n_m=st.sampled_from([1, 3, 9]), missing=st.sampled_from([0.0, 0.2, 0.5]),
       shuffled=st.booleans(), ties=st.booleans())
def test_topic_correlations_by_count_of_cells_equal_each_topic_alone(
        seed, n_t, n_s, n_m, missing, shuffled, ties):
    """Topics with as many cells (not the same systems) in one call give
    each topic's own numbers, the systems' names in any order, every
    criterion against the same measures."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, (n_t, n_s, n_m)) / 4 if ties else rng.random((n_t, n_s, n_m))
    humans = [rng.choice(THIRDS, size=(n_t, n_s)) for _ in range(2)]
    cells = rng.random((n_t, n_s)) >= missing
    for h in humans:
        h[~cells] = np.nan
    names = [f"s{s:02d}" for s in range(n_s)]
    if shuffled:
        names = list(rng.permutation(names))
    data = js.JudgedScores(tuple(map(str, range(n_t))), tuple(names),
                           tuple(map(str, range(n_m))), scores, humans[0])
    got = js._topic_correlations(data, humans)
    want = reference_topic_correlations(data, humans)
    for (r, d), (r2, d2) in zip(got, want):
        assert bits(r) == bits(r2) and np.array_equal(d, d2)
