"""The statistics' groups without their per-group fixed costs (issue 36):
each faster path against the plain computation it replaces, bit for bit
(sign flips' counts by search, ranks by bisection, the AUC's and JACK's
counts without a frame, a criterion's human readings found once)."""

from __future__ import annotations

import struct

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import group_statistics as gs
from qarla_spark.measures import human as hu
from qarla_spark.measures import resampling as rs

SETTINGS = settings(max_examples=60, deadline=None)


def _bits(a):
    return np.asarray(a, dtype=np.float64).view(np.int64).tolist()


def _row_bits(rows):
    """Rows with each float as its bytes (NaN's sign and payload too)."""
    return [tuple(struct.pack("<d", v) if isinstance(v, float) else v for v in r)
            for r in rows]


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
@given(st.integers(1, 12), st.integers(1, 40), st.integers(0, 300), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([1, 3, 1000, 2 ** 40, 2 ** 49]))
def test_sign_flip_family_by_classes_as_per_pattern(n_t, n_s, n_p, seed, big):
    """The family's p and adjusted p from the patterns' classes (a pattern
    and its negation, counted with their weights: _flip_classes) are the
    doubles of every pattern's own (the per-pattern counts, kept). A family
    whose differences sum, in absolute value, to 2^52 or more is refused by
    sign_flip_family (its exact domain; 12 topics of 2^49 reach it)."""
    rng = np.random.default_rng(seed)
    diffs = rng.integers(-big, big + 1, (n_t, n_s)).astype(np.int64)
    if rng.random() < 0.3:
        diffs[:, 0] = 0
    flips = np.where(rng.random((n_p, n_t)) < 0.5, -1, 1).astype(np.int64)
    classes = rs._flip_classes(flips)
    if n_p > 2 ** (n_t - 1):
        assert classes is not None                        # fewer classes than patterns
    if classes is not None:
        assert int(classes[1].sum()) == n_p and len(classes[0]) < n_p
    want = rs._sign_flip_counts(diffs, flips, None)
    family = []
    if np.abs(diffs).sum(axis=0).max() >= 2 ** 52:
        with pytest.raises(ValueError, match="too large"):
            rs.sign_flip_family(diffs, flips)
    else:
        family.append(rs.sign_flip_family(diffs, flips))
    for got in family + [rs._sign_flip_counts(diffs, *classes) if classes is not None
                         else want]:
        assert _bits(list(got[0]) + list(got[1])) == _bits(list(want[0]) + list(want[1]))


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
    assert _row_bits(got) == _row_bits(want)
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


@SETTINGS
@given(st.integers(2, 7), st.integers(1, 4), st.integers(0, 2 ** 32 - 1))
def test_summary_levels_equal_each_criterion_alone(n_topics, n_criteria, seed):
    """The summary-level rows of every criterion at once (topics batched,
    means of all criteria in one call) are each criterion's own rows, bit
    for bit: criteria judging different topics and systems, constant
    sides (no correlation) and topics with too few systems included."""
    rng = np.random.default_rng(seed)
    topics = [f"t{k}" for k in range(n_topics)]
    systems = [f"s{k}" for k in range(6)]
    x_rows = [(t, s, int(rng.integers(0, 9)), int(rng.integers(1, 4)))
              for t in topics for s in systems if rng.random() < 0.9]
    x = tuple(zip(*x_rows)) if x_rows else ((), (), (), ())
    parts = []
    for c in range(n_criteria):
        y_rows = [(t, s, float(rng.integers(1, 6)) / rng.choice([1, 3]))
                  for t in topics for s in systems if rng.random() < 0.8]
        if rng.random() < 0.3 and y_rows:
            y_rows = [(t, s, 2.0) if t == topics[0] else (t, s, v) for t, s, v in y_rows]
        y = tuple(zip(*y_rows)) if y_rows else ((), (), ())
        parts.append((f"c{c}", gs.Paired(tuple(x[0]), tuple(x[1]),
                                         np.asarray(x[2], dtype=np.int64),
                                         np.asarray(x[3], dtype=np.int64), tuple(y[0]),
                                         tuple(y[1]), np.asarray(y[2], dtype=np.float64))))
    t_at = {t: i for i, t in enumerate(topics)}
    weights = rs.poisson_weights(seed % 101, "task", topics, 50)
    got = gs._summary_levels("task", 0, parts, topics, t_at, weights)
    for c, (criterion, p) in enumerate(parts):
        want = _summary_level_reference("task", 0, criterion, p, topics, t_at, weights)
        assert _row_bits(got.get(c, [])) == _row_bits(want)


@SETTINGS
@given(st.integers(0, 2 ** 40), st.lists(st.text(max_size=6), min_size=1, max_size=3),
       st.lists(st.text(max_size=6), max_size=8))
def test_keys_sharing_a_prefix(seed, prefix, lasts):
    """The prefix hashed once gives every stream's key (and so its
    uniforms) as hashed whole."""
    assert rs._keys(seed, prefix, lasts) == [rs._key(seed, *prefix, last) for last in lasts]
    if lasts:
        parts = [(*prefix, last) for last in lasts]
        want = np.stack([rs.uniforms(seed, p, 5) for p in parts])
        assert _bits(rs.uniforms_many(seed, parts, 5)) == _bits(want)


@SETTINGS
@given(st.integers(2, 8), st.integers(2, 9), st.integers(0, 2 ** 32 - 1))
def test_comparisons_of_sets_with_the_same_counts_once(n_topics, n_sets, seed):
    """A family's pairs whose sets have the same counts, worked out once,
    give the rows of every pair worked out on its own (max-T included); the
    intervals of such sets likewise."""
    rng = np.random.default_rng(seed)
    distinct = rng.integers(0, 6, (n_topics, max(1, n_sets // 2)))
    wins = distinct[:, rng.integers(0, distinct.shape[1], n_sets)]
    dens = np.full(n_topics, 6)
    topics = [f"t{k}" for k in range(n_topics)]
    names = [f"set{k}" for k in range(n_sets)]
    e = gs.ratio_estimates_of("task", topics, list(range(n_sets)), names, wins, dens, seed % 89,
                              40)
    flips = rs.sign_flips(seed % 89, "task", topics, 40)
    same = np.unique(wins, axis=1, return_inverse=True)[1].reshape(-1)

    def diffs_of(ia, ib):
        return (wins[:, ia] - wins[:, ib]).astype(object), 6 * n_topics

    best = int(rng.integers(n_sets))
    pairs = [(best, o) for o in range(n_sets) if o != best]
    pairs += [(int(a), int(b)) for a, b in rng.integers(0, n_sets, (3, 2))]
    got = gs._comparison_rows("task", None, "f", pairs, names, e.point, e.reps, diffs_of, flips,
                              same)
    want = gs._comparison_rows("task", None, "f", pairs, names, e.point, e.reps, diffs_of,
                               flips)
    assert _row_bits(got) == _row_bits(want)
    got = gs._ci_rows("king", "task", None, names, e.point, e.reps, e.jack, same)
    want = gs._ci_rows("king", "task", None, names, e.point, e.reps, e.jack)
    assert _row_bits(got) == _row_bits(want)



@SETTINGS
@given(st.integers(1, 8), st.integers(0, 9), st.integers(0, 30), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([3, 1000, 2 ** 40]))
def test_weighted_ratio_rows_are_the_means_transposed(n_t, n_s, n_b, seed, big):
    """The replicates a column's in a row: the doubles of
    weighted_ratio_means, transposed (zero weights: NaN; huge counts: the
    exact fallbacks)."""
    rng = np.random.default_rng(seed)
    nums = rng.integers(0, big, (n_t, n_s))
    dens = rng.integers(1, 7, n_t) * (1 if big < 2 ** 40 else 10 ** 6)
    weights = rng.poisson(1.0, (n_b, n_t))
    want = rs.weighted_ratio_means(nums, dens, weights)
    got = rs.weighted_ratio_rows(nums, dens, weights)
    assert got.shape == want.T.shape and got.flags.c_contiguous
    assert _bits(got.T) == _bits(want)


def _replicates(rng, n_b, n_m):
    reps = np.round(rng.standard_normal((n_b, n_m)), int(rng.integers(0, 3)))
    if rng.random() < 0.3:
        reps[rng.random(reps.shape) < 0.1] = np.nan
    if n_b and n_m and rng.random() < 0.1:
        reps[rng.integers(n_b), rng.integers(n_m)] = np.inf
    return reps


@SETTINGS
@given(st.integers(0, 60), st.integers(0, 30), st.integers(0, 5), st.integers(0, 2 ** 32 - 1))
def test_interval_rows_are_interval_columns(n_b, n_m, n_j, seed):
    """Intervals of replicates a column's in a row, sorted in place: the
    doubles of interval_columns and percentile_columns (ties, NaN,
    infinities, jackknife NaN)."""
    rng = np.random.default_rng(seed)
    reps = _replicates(rng, n_b, n_m)
    points = np.round(rng.standard_normal(n_m), 1)
    jack = rng.standard_normal((n_j, n_m))
    if n_j and n_m and rng.random() < 0.1:
        jack[0, 0] = np.nan
    want = rs.interval_columns(points, reps, jack)
    got = rs.interval_rows(points, np.ascontiguousarray(reps.T), jack)
    assert list(got) == list(want)
    for method in want:
        assert [_bits(v) for v in got[method]] == [_bits(v) for v in want[method]]
    got = rs.percentile_rows(np.ascontiguousarray(reps.T))
    assert [_bits(v) for v in got] == [_bits(v) for v in rs.percentile_columns(reps)]


@SETTINGS
@given(st.integers(2, 8), st.integers(1, 12), st.integers(0, 2 ** 32 - 1))
def test_king_of_distinct_columns_is_king_group(n_topics, n_sets, seed):
    """KING's rows from each distinct column of counts worked out once
    (intervals and every family's comparisons): king_group's rows; the
    replicates of any sets, the full estimates' columns."""
    rng = np.random.default_rng(seed)
    distinct = rng.integers(0, 6, (n_topics, max(1, n_sets // 2)))
    wins = distinct[:, rng.integers(0, distinct.shape[1], n_sets)]
    dens = rng.integers(5, 8, n_topics)
    topics = [f"t{k}" for k in range(n_topics)]
    names = [f"set{k}" for k in range(n_sets)]
    gids = list(range(10, 10 + n_sets))
    best = int(rng.integers(n_sets))
    plan = {"best": gids[best], "best_single": gids[int(rng.integers(n_sets))],
            "reps": [gids[k] for k in rng.integers(0, n_sets, 3)],
            "subsets": [gids[k] for k in range(n_sets)]}
    n = 40
    e = gs.ratio_estimates_of("task", topics, gids, names, wins, dens, seed % 89, n)
    want = gs.king_group(("task",), None, names, {"task": plan}, seed % 89, n, estimates=e)
    d = gs.distinct_ratio_estimates("task", topics, gids, names, wins, dens, seed % 89, n)
    got = gs.king_distinct_group("task", d, plan, seed % 89, n)
    block, rest = got[0], got[1:]
    # each family's comparisons a CompBlock, its columns its rows' fields
    assert all(isinstance(b, gs.CompBlock) for b in rest)
    assert _row_bits(block.rows() + [r for b in rest for r in b.rows()]) == _row_bits(want)
    for b in rest:
        rows = b.rows()
        assert len({r.family for r in rows}) == 1
        for name, column in b.columns().items():
            assert _row_bits([(v,) for v in column]) == \
                _row_bits([(getattr(r, name),) for r in rows])
    (alone,) = gs.king_distinct_group("task", d, None, seed % 89, n)
    assert _row_bits(alone.rows()) == _row_bits([r for r in want if r.kind == "king"])
    # the block's columns: its rows' fields, in order
    columns = block.columns()
    rows = block.rows()
    for name, column in columns.items():
        assert _row_bits([(v,) for v in column]) == _row_bits([(getattr(r, name),) for r in rows])
    pct = block.interval("percentile")
    assert {r.a: (r.value, r.ci_low, r.ci_high) for r in rows if r.method == "percentile"} == pct
    cols = list(rng.integers(0, n_sets, 4))
    assert _bits(d.reps_of(cols)) == _bits(e.reps[:, cols])
    assert _bits(d.point) == _bits(e.point)


def _summary_level_reference(task, set_id, criterion, p, topics, t_at, weights):
    """The summary-level rows of one criterion, one criterion at a time
    (the per-criterion code :func:`_summary_levels` replaced): each topic's
    correlations over its systems with both sides, their exact means over
    topics and the intervals (resampling topics)."""
    kinds = gs.agreement.KINDS
    x_by_topic: dict = {}
    y_by_topic: dict = {}
    for topic, name, num, den in zip(p.x_topic, p.x_name, p.x_num, p.x_den):
        x_by_topic.setdefault(topic, {})[name] = int(num) / int(den)
    for topic, name, score in zip(p.y_topic, p.y_name, p.y_score):
        y_by_topic.setdefault(topic, {})[name] = float(score)
    # the topics with the same summarizers correlated in one call (row by
    # row, the numbers of one call per topic)
    batches: dict = {}
    for topic in topics:
        x_of, y_t = x_by_topic.get(topic, {}), y_by_topic.get(topic, {})
        names = tuple(sorted(s for s in x_of if s in y_t))
        if names:
            batches.setdefault(names, []).append(topic)
    found: dict = {}
    for names, mine in batches.items():
        rows_x = [[x_by_topic[t][s] for s in names] for t in mine]
        rows_y = [[y_by_topic[t][s] for s in names] for t in mine]
        r = gs.agreement.correlation_rows(names, rows_x, rows_y, min_n=gs.agreement.MIN_POINTS)
        found.update(zip(mine, r))
    per_topic, cols = [], []
    for topic in topics:
        r = found.get(topic)
        if r is not None and np.isfinite(r[0]):
            per_topic.append(tuple(float(v) for v in r))
            cols.append(t_at[topic])
    if not per_topic:
        return []
    values = np.asarray(per_topic, dtype=np.float64)
    point_s = rs.weighted_real_means(values, np.ones((1, len(cols)), dtype=np.int64))[0]
    reps_s = rs.weighted_real_means(values, weights[:, cols])
    jack_s = rs.weighted_real_means(values, rs.jackknife_weights(len(cols)))
    # rs.intervals of each kind, every kind at once (the same doubles)
    found = [(method, low.tolist(), high.tolist())
             for method, (low, high) in rs.interval_columns(point_s, reps_s, jack_s).items()]
    values = point_s.tolist()
    return [gs.CorrelationRow(task, set_id, criterion, "summary", kind, values[k], method, low[k],
                              high[k], "topics")
            for k, kind in enumerate(kinds) for method, low, high in found]


@SETTINGS
@given(st.lists(st.lists(st.sampled_from([1.0, 2.5, 1 / 3, 2 / 3, 0.1, 1 / 7, -4 / 9, 0.0,
                                          5000.25, 1e-300, 0.123456789]),
                         min_size=0, max_size=12), min_size=1, max_size=5),
       st.integers(0, 2 ** 32 - 1))
def test_fractions_many_and_reading_of_equal_one_at_a_time(values_list, seed):
    """The correlation groups find every criterion's readings in one call
    (human.fractions_many) and a criterion's rows' reading from them
    (human.reading_of, group_statistics._reading_rows): the (p, q) of
    fractions and the Reading of reading, array by array (issue 36)."""
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(v, dtype=np.float64) for v in values_list]
    got = hu.fractions_many(arrays)
    assert len(got) == len(arrays)
    for v, (p, q) in zip(arrays, got):
        want_p, want_q = hu.fractions(v)
        assert np.array_equal(p, want_p) and np.array_equal(q, want_q)
        rows = np.flatnonzero(rng.random(v.size) < 0.7)
        r, want = gs._reading_rows(v, (p, q), rows), hu.reading(v[rows])
        assert (r.kind, r.den) == (want.kind, want.den)
        assert (r.nums is None) == (want.nums is None)
        if r.nums is not None:
            assert r.nums.dtype == want.nums.dtype and np.array_equal(r.nums, want.nums)


def _meta_data_old(task, items, ctx):
    """judges.meta_data as it was (np.ix_ of each record's systems made
    record by record): the reference of the cached positions."""
    from qarla_spark.stages import judges
    from qarla_spark.stages.statistics_inputs import S_META_H, S_META_Q
    singles, queens, hbr = judges.meta_measures(ctx, task)
    measures = singles + queens + hbr
    by_topic = {}
    for kind, v in items:
        if kind in (S_META_H, S_META_Q):
            by_topic.setdefault(v.topic, {})[kind] = v
    topics = sorted(by_topic)
    systems = sorted({name for parts in by_topic.values() for v in parts.values()
                      for name in v.names})
    s_at = {name: i for i, name in enumerate(systems)}
    scores = np.full((len(topics), len(systems), len(measures)), np.nan)
    human = np.full((len(topics), len(systems)), np.nan)
    where = {S_META_H: [*range(len(singles)), *range(len(singles) + len(queens),
                                                     len(measures))],
             S_META_Q: list(range(len(singles), len(singles) + len(queens)))}
    for t, topic in enumerate(topics):
        for kind, v in by_topic[topic].items():
            cols = [s_at[name] for name in v.names]
            mine = scores[t]
            mine[np.ix_(cols, where[kind])] = v.scores
            human[t, cols] = v.human
    return topics, systems, measures, scores, human


@SETTINGS
@given(st.integers(1, 4), st.integers(0, 3), st.integers(0, 3), st.integers(1, 3),
       st.integers(0, 2 ** 32 - 1))
def test_meta_data_with_cached_positions_equals_the_record_by_record_cube(
        n_t, n_single, n_queen, n_c, seed):
    """meta_data with the positions of each (kind, systems) kept for the
    criteria (one index for all) builds the cube of the record-by-record
    form: records of several criteria, systems missing from some topics,
    in any order."""
    from types import SimpleNamespace as NS

    from qarla_spark.stages import judges
    from qarla_spark.stages.statistics_inputs import S_META_H, S_META_Q
    rng = np.random.default_rng(seed)
    ctx = NS(hbr=NS(names=[f"m{k}" for k in range(n_single)] + ["HBR"]),
             qarla=NS(detailed={"task": [f"S{k}" for k in range(n_queen)]}))
    systems = [f"sys{k}" for k in range(5)]
    items = {c: [] for c in range(n_c)}
    for t in range(n_t):
        names = [s for s in systems if rng.random() < 0.8]
        rng.shuffle(names)
        for c in range(n_c):
            h = rng.choice([1.0, 2.0, np.nan, 4 / 3], len(names))
            items[c].append((S_META_H, NS(topic=f"t{t}", criterion=c, names=list(names),
                                          scores=rng.random((len(names), n_single + 1)),
                                          human=h)))
            items[c].append((S_META_Q, NS(topic=f"t{t}", criterion=c, names=list(names),
                                          scores=rng.random((len(names), n_queen)),
                                          human=h)))
    index: dict = {}
    for c, found in items.items():
        got = judges.meta_data("task", found, ctx, index)
        topics, systems_, measures, scores, human = _meta_data_old("task", found, ctx)
        assert got.topics == tuple(topics) and got.systems == tuple(systems_)
        assert got.measures == tuple(measures)
        assert np.array_equal(got.scores, scores, equal_nan=True)
        assert np.array_equal(got.human, human, equal_nan=True)


def test_king_vs_judges_reads_row_and_column_major_replicates_alike():
    """_king_vs_judges gathers each statistic's replicates of the sets
    both sides have from a column-major matrix (its columns) or a
    row-major view (the kernels' own rows, as meta_evaluations now keeps
    them): the same rows and intervals, bit for bit."""
    import numpy as np

    from qarla_spark.stages import judges

    rng = np.random.default_rng(5)
    n_b, sets = 200, ["a", "b", "c", "d", "e", "f"]
    king = (sets[::-1], rng.standard_normal(len(sets)), rng.standard_normal((n_b, len(sets))))
    names = ["f", "x", "a", "c", "b", "d", "e"]
    wide = np.round(rng.standard_normal((n_b + 1, len(names), 2)), 2)

    def entries(layout):
        stats = {}
        for k, stat in enumerate(("pearson", "pairwise_accuracy")):
            reps = wide[1:, :, k]
            reps = np.asfortranarray(reps) if layout == "F" else reps
            stats[stat] = (wide[0, :, k], reps, np.arange(len(names), dtype=np.intp))
        return [("coherence", names, stats)]

    a = judges._king_vs_judges("t", king, entries("F"), n_b)
    b = judges._king_vs_judges("t", king, entries("view"), n_b)
    assert not wide[1:, :, 0].T.flags.c_contiguous
    assert repr(a) == repr(b) and a[0]
    for ra, rb in zip(a[0], b[0]):
        assert [np.float64(v).tobytes() if isinstance(v, float) else v for v in ra] == \
            [np.float64(v).tobytes() if isinstance(v, float) else v for v in rb]
