"""Issue 28, across tasks (qarla_spark.measures.across_tasks, SPEC §11):
the pooled estimates against exact fractions over the tasks' counts (the
Poisson weights are the resampling's, taken as given), the rows' counts of
tasks best or tied, and the shared two-task run's across/ table against its
king/ table."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import across_tasks as xt
from qarla_spark.measures import resampling as rs

SETTINGS = settings(max_examples=40, deadline=None)


def king_counts(draw, task, names, n_topics):
    dens = [draw(st.integers(1, 6)) for _ in range(n_topics)]
    wins = [[draw(st.integers(0, d)) for _ in names] for d in dens]
    return xt.KingCounts(task, tuple(f"t{k}" for k in range(n_topics)), tuple(names),
                         np.array(wins, dtype=np.int64), np.array(dens, dtype=np.int64))


@st.composite
def king_tasks(draw):
    names = ["a", "b", "c"]
    out = []
    for k in range(draw(st.integers(2, 3))):
        mine = names + (["only"] if k == 0 else [])        # a set one task lacks
        order = draw(st.permutations(mine))
        out.append(king_counts(draw, f"task{k}", list(order), draw(st.integers(1, 4))))
    return out


def ref_pooled(parts, names, weights_of):
    """Σ over tasks and topics of w·wins/dens over Σ w, per set, in fractions."""
    out = []
    for name in names:
        num, den = Fraction(0), 0
        for p in parts:
            m = p.names.index(name)
            w = weights_of(p)
            for t in range(len(p.topics)):
                num += w[t] * Fraction(int(p.wins[t, m]), int(p.dens[t]))
                den += int(w[t])
        out.append(float(num / den) if den else float("nan"))
    return out


@given(king_tasks())
@SETTINGS
def test_pooled_king_is_the_mean_over_every_topic_of_every_task(parts):
    pooled, tasks = xt.pooled_king(parts, seed=3, n=5)
    first = min(parts, key=lambda p: p.task)
    names = tuple(n for n in first.names if n != "only")
    assert pooled.names == names                    # the sets every task has, first's order
    assert list(pooled.point) == ref_pooled(parts, names, lambda p: [1] * len(p.topics))
    for b in range(5):
        got = pooled.reps[b]
        want = ref_pooled(parts, names,
                          lambda p: rs.poisson_weights(3, p.task, p.topics, 5)[b])
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert [g for g in got if g == g] == [w for w in want if w == w]
    for p in parts:
        assert list(tasks[p.task].point) == ref_pooled([p], names, lambda q: [1] * len(q.topics))


@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(1, 4)),
                min_size=2, max_size=4), st.integers(0, 3))
@SETTINGS
def test_pooled_pairwise_accuracy_sums_the_tasks_pairs(spec, extra_rows):
    rng = np.random.default_rng(len(spec) + extra_rows)
    parts = []
    for k, (a, b, pairs) in enumerate(spec):
        pairs2 = rng.integers(0, 2 * pairs + 1, size=extra_rows + 1) * 2
        agree2 = np.stack([rng.integers(0, p + 1, size=2) for p in pairs2])
        parts.append(xt.PairCounts(f"t{k}", ("x", "y"), agree2, pairs2))
    pooled, tasks = xt.pooled_counts(parts)
    for row in range(extra_rows + 1):
        den = sum(int(p.pairs2[row]) for p in parts)
        for m in range(2):
            num = sum(int(p.agree2[row, m]) for p in parts)
            got = pooled.point[m] if row == 0 else pooled.reps[row - 1, m]
            if den:
                assert got == float(Fraction(num, den))
            else:
                assert np.isnan(got)


def test_rows_count_the_tasks_where_a_measure_is_in_the_top_cluster():
    """Two tasks: in one, "a" is far above "b" in every replicate (clusters
    1, 2); in the other they are level (1, 1). Pooled: a best, b second."""
    reps_sep = np.column_stack([np.full(200, 0.9), np.full(200, 0.1)])
    reps_tie = np.column_stack([np.linspace(0.4, 0.6, 200), np.linspace(0.6, 0.4, 200)])
    tasks = {"one": xt.Estimates(("a", "b"), np.array([0.9, 0.1]), reps_sep),
             "two": xt.Estimates(("a", "b"), np.array([0.5, 0.5]), reps_tie)}
    pooled = xt.Estimates(("a", "b"), np.array([0.7, 0.3]), (reps_sep + reps_tie) / 2)
    found = xt.across_tasks(pooled, tasks)
    assert found.task_ranks == {"one": (1, 2), "two": (1, 1)}
    assert found.best_or_tied() == [2, 1]
    rows = xt.across_rows("king", None, found)
    pooled_rows = {r[2]: r for r in rows if r[3] == xt.POOLED}
    assert pooled_rows["a"][7:] == ("percentile", 1, 2, 2)
    assert pooled_rows["b"][7:] == ("percentile", 2, 1, 2)
    assert pooled_rows["a"][5:7] == rs.percentile_interval(pooled.reps[:, 0])
    assert {(r[2], r[3]): r[9] for r in rows if r[3] != xt.POOLED} == {
        ("a", "one"): 1, ("b", "one"): 0, ("a", "two"): 1, ("b", "two"): 1}
    # pairwise accuracy's intervals: recentred on the value, within [0, 1]
    found = xt.across_tasks(pooled, tasks, bounds=(0.0, 1.0))
    rows = xt.across_rows("pairwise_accuracy", "c", found)
    for r in rows:
        e = pooled if r[3] == xt.POOLED else tasks[r[3]]
        m = ("a", "b").index(r[2])
        assert r[7] == "recentred"
        assert r[5:7] == rs.recentred_interval(e.point[m], e.reps[:, m], bounds=(0.0, 1.0))
        assert r[5] <= r[4] <= r[6]


@pytest.mark.spark
@pytest.mark.slow
def test_the_runs_across_table_holds_each_tasks_king(two_task_run):
    """The shared two-task run: across/ has KING pooled and per task; a
    task's row is its value in king/, bit for bit; the pooled value lies
    between the tasks' (a mean over their topics)."""
    import pandas as pd
    out = two_task_run.out
    across = pd.read_parquet(f"{out}/across")
    king = pd.read_parquet(f"{out}/king")
    rows = across[across.basis == "king"]
    assert set(rows.scope) == {xt.POOLED, xt.MEAN, *set(king.task.astype(str))}
    kings = {(str(r.task), r.metric_set): r.king for r in king.itertuples()}
    for r in rows[~rows.scope.isin([xt.POOLED, xt.MEAN])].itertuples():
        assert r.value == kings[(r.scope, r.measure)]
    for measure, g in rows.groupby("measure"):
        per_task = g[~g.scope.isin([xt.POOLED, xt.MEAN])].value
        pooled = g[g.scope == xt.POOLED].iloc[0]
        assert per_task.min() <= pooled.value <= per_task.max()
        assert pooled.n_tasks == 2 and 0 <= pooled.best_or_tied <= 2
        # the equal-weight mean: the exact mean of the tasks' KING (issue 39)
        mean = g[g.scope == xt.MEAN].iloc[0]
        assert mean.value == float(sum(map(Fraction, per_task)) / len(per_task))
    assert (across[across.basis == "pairwise_accuracy"]).empty   # one judged task only


def _with_own(p, kind):
    """``p`` with the TaskFound its group would make, from all its columns
    (in its own order)."""
    import dataclasses
    if kind == "king":
        w = rs.poisson_weights(3, p.task, p.topics, 5)
        e = xt.Estimates(p.names, *xt.king_estimates(p.wins, p.dens, w))
        return dataclasses.replace(p, found=xt.task_found(e))
    e = xt.pair_estimates(p.names, p.agree2, np.asarray(p.pairs2)[:, None])
    return dataclasses.replace(p, found=xt.task_found(e, (0.0, 1.0)))


@given(king_tasks(), st.integers(0, 2 ** 16))
@SETTINGS
def test_a_tasks_own_rows_made_by_its_group_equal_the_across_groups(parts, seed):
    """Each task's rows of across/ made by its own group (its found over its
    own sets, in its order) equal those the across group makes from its
    counts, bit for bit; a task whose sets are not exactly the common ones
    (the task with a set of its own) falls back to its counts."""
    plain = xt.across_rows("king", None, xt.across_tasks(*xt.pooled_king(parts, 3, 5)))
    owned = [_with_own(p, "king") for p in parts]
    pooled, tasks = xt.pooled_king(owned, 3, 5)
    assert isinstance(tasks["task0"], xt.Estimates)           # it has "only"
    assert all(isinstance(tasks[p.task], xt.TaskFound) for p in parts[1:])
    got = xt.across_rows("king", None, xt.across_tasks(pooled, tasks))
    assert repr(got) == repr(plain)
    # pairwise accuracy: the same with its recentred intervals
    rng = np.random.default_rng(seed)
    pa = []
    for k in range(3):
        pairs2 = rng.integers(0, 5, size=6) * 2
        agree2 = np.stack([rng.integers(0, p + 1, size=3) for p in pairs2])
        names = tuple(rng.permutation(["x", "y", "z"]))
        pa.append(xt.PairCounts(f"t{k}", names, agree2, pairs2))
    plain = xt.across_rows("pairwise_accuracy", "c",
                           xt.across_tasks(*xt.pooled_counts(pa), bounds=(0.0, 1.0)))
    found = xt.across_tasks(*xt.pooled_counts([_with_own(p, "pa") for p in pa]),
                            bounds=(0.0, 1.0))
    assert repr(xt.across_rows("pairwise_accuracy", "c", found)) == repr(plain)


def test_the_across_groups_are_placed_one_a_partition():
    """The across-task reduce's groups — KING, and each criterion any task
    judges — are placed by cost: with a partition each, each alone (Spark's
    hash put several in one partition: the stage's one long task)."""
    from types import SimpleNamespace

    from qarla_spark.spark import rounds as rd
    from qarla_spark.stages.judges import ACROSS
    from qarla_spark.stages.statistics import across_costs
    tasks = [SimpleNamespace(judgments={"coherence": 5, "fluency": 5}),
             SimpleNamespace(judgments={"fluency": 3, "relevance": 2}),
             SimpleNamespace(judgments={})]
    costs = across_costs(tasks)
    assert set(costs) == {rd.key_of(ACROSS, "king")} | {
        rd.key_of(ACROSS, "pairwise_accuracy", c) for c in ("coherence", "fluency", "relevance")}
    placed = rd.placement_by_cost(costs, 4)
    assert sorted(placed.values()) == [0, 1, 2, 3]
    placed = rd.placement_by_cost(costs, 2)
    loads = [sum(c for k, c in costs.items() if placed[k] == b) for b in (0, 1)]
    assert sorted(loads) == [2.0, 3.0]                       # as even as the costs allow
    assert across_costs(None) == {rd.key_of(ACROSS, "king"): 2.0}


@SETTINGS
@given(st.data())
def test_ratio_is_the_correctly_rounded_quotient_of_the_counts(data):
    """_ratio's quotient of doubles (counts below 2^53) and of Python's
    integers (above) are each num / den correctly rounded, NaN where den ≤ 0."""
    n_rows, n_m = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    top = data.draw(st.sampled_from([10, 2 ** 52, 2 ** 62]))
    num = np.array([[data.draw(st.integers(0, top)) for _ in range(n_m)] for _ in range(n_rows)],
                   dtype=np.int64)
    den = np.array([[data.draw(st.integers(-1, top))] for _ in range(n_rows)], dtype=np.int64)
    got = xt._ratio(num, den)
    for r in range(n_rows):
        for m in range(n_m):
            if den[r, 0] <= 0:
                assert np.isnan(got[r, m])
            else:
                assert got[r, m] == float(Fraction(int(num[r, m]), int(den[r, 0])))


@given(st.lists(st.integers(-2 ** 40, 2 ** 40), min_size=0, max_size=12),
       st.sampled_from([2 ** 7, 2 ** 15, 2 ** 31, 2 ** 40]))
@SETTINGS
def test_narrowed_counts_are_the_same_integers_in_a_type_that_holds_them(values, scale):
    """:func:`narrow_counts` (the across-task records' counts): the same
    integers, in int16 / int32 / int64 as their range needs — never a
    wrapped value — and the pooled pairwise accuracy of narrowed counts is
    the same doubles as of the int64 ones."""
    a = np.array([v % scale - scale // 2 for v in values], dtype=np.int64)
    got = xt.narrow_counts(a)
    assert got.tolist() == a.tolist()
    fits16 = not a.size or (a.min() >= -2 ** 15 and a.max() < 2 ** 15)
    fits32 = not a.size or (a.min() >= -2 ** 31 and a.max() < 2 ** 31)
    assert got.dtype == (np.int16 if fits16 else np.int32 if fits32 else np.int64)
    with pytest.raises(TypeError):
        xt.narrow_counts(np.array([0.5]))
    rng = np.random.default_rng(len(values))
    wide, narrow = [], []
    for k in range(3):
        pairs2 = rng.integers(0, 121, size=8) * 2
        agree2 = np.stack([rng.integers(0, p + 1, size=4) for p in pairs2])
        wide.append(xt.PairCounts(f"t{k}", ("w", "x", "y", "z"), agree2, pairs2))
        narrow.append(xt.PairCounts(f"t{k}", ("w", "x", "y", "z"), xt.narrow_counts(agree2),
                                    xt.narrow_counts(pairs2)))
    assert narrow[0].agree2.dtype == np.int16
    for f in (xt.pooled_counts, lambda p: (xt.mean_counts(p), {})):
        (pw, _), (pn, _) = f(wide), f(narrow)
        assert pw.point.tobytes() == pn.point.tobytes()
        assert pw.reps.tobytes() == pn.reps.tobytes()


def _mean_counts_reference(parts):
    """mean_counts as it was (each task's quotients by np.where, their
    stack, the mean by weighted_present_means): the reference."""
    parts = sorted(parts, key=lambda p: p.task)
    names = xt.common_names(parts)
    values = []
    for p in parts:
        a = np.asarray(p.agree2, dtype=np.int64)[:, xt._columns(p, names)]
        d = np.asarray(p.pairs2, dtype=np.int64)[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            values.append(np.where(d > 0, a / np.maximum(d, 1), np.nan))
    return xt._task_mean_reference(names, values)


def _mean_king_reference(parts, seed, n):
    """mean_king as it was (each task's weights drawn again, its
    estimates stacked, the mean by weighted_present_means)."""
    parts = sorted(parts, key=lambda p: p.task)
    names = xt.common_names(parts)
    values = []
    for p in parts:
        w = rs.poisson_weights(seed, p.task, p.topics, n)
        point, reps = xt.king_estimates(np.asarray(p.wins, dtype=np.int64)[:, xt._columns(p, names)],
                                        np.asarray(p.dens, dtype=np.int64), w)
        values.append(np.vstack([point[None, :], reps]))
    return xt._task_mean_reference(names, values)


@st.composite
def pair_tasks(draw):
    """2 to 6 tasks' pairwise-accuracy counts: measures in each task's own
    order (one task with a measure the others lack), rows without a pair
    (NaN), counts of the narrow integer types, of large pair counts too."""
    n_rows = draw(st.integers(1, 6))
    big = draw(st.sampled_from([4, 90, 70000]))
    out = []
    for k in range(draw(st.integers(2, 6))):
        names = ["x", "y", "z"] + (["only"] if k == 1 else [])
        order = draw(st.permutations(names))
        pairs2 = np.array([draw(st.integers(0, big)) * 2 for _ in range(n_rows)])
        agree2 = np.array([[draw(st.integers(0, int(p))) for _ in order] for p in pairs2])
        out.append(xt.PairCounts(f"task{k}", tuple(order), xt.narrow_counts(agree2),
                                 xt.narrow_counts(pairs2)))
    return out


@given(pair_tasks())
@settings(max_examples=150, deadline=None)
def test_mean_counts_is_the_reference(parts):
    """The equal-weight mean over tasks of the pairwise accuracy (each
    task's quotients in one stack, divided at once; the compiled mean)
    equals the reference bit for bit — NaN rows, measures in any order."""
    got, want = xt.mean_counts(parts), _mean_counts_reference(parts)
    assert got.names == want.names
    assert got.point.tobytes() == want.point.tobytes()
    assert got.reps.tobytes() == want.reps.tobytes()


@given(king_tasks(), st.integers(1, 30))
@settings(max_examples=60, deadline=None)
def test_mean_king_is_the_reference(parts, n):
    """KING's mean over tasks, its weights drawn once (king_weights) for
    the pooled estimate and the mean, equals the reference bit for bit;
    the pooled estimate with those weights equals its own draws."""
    weights = xt.king_weights(parts, 3, n)
    want = _mean_king_reference(parts, 3, n)
    for got in (xt.mean_king(parts, 3, n), xt.mean_king(parts, 3, n, weights)):
        assert got.names == want.names
        assert got.point.tobytes() == want.point.tobytes()
        assert got.reps.tobytes() == want.reps.tobytes()
    (a, tasks_a), (b, tasks_b) = xt.pooled_king(parts, 3, n), xt.pooled_king(parts, 3, n, weights)
    assert a.point.tobytes() == b.point.tobytes() and a.reps.tobytes() == b.reps.tobytes()
    assert set(tasks_a) == set(tasks_b)
    for task in tasks_a:
        assert tasks_a[task].point.tobytes() == tasks_b[task].point.tobytes()


@given(st.integers(0, 5), st.integers(1, 4), st.data())
@settings(max_examples=60, deadline=None)
def test_best_or_tied_and_own_found(n_tasks, n_m, data):
    """best_or_tied counts, per measure, the tasks whose rank is 1 (as the
    sum over tasks it was); a task's found of its own names in its own
    order is itself, in another order its columns moved."""
    names = tuple(f"m{i}" for i in range(n_m))
    tasks = {}
    for k in range(n_tasks):
        ranks = tuple(data.draw(st.lists(st.integers(0, 3), min_size=n_m, max_size=n_m)))
        point = np.arange(n_m, dtype=np.float64) + k
        tasks[f"t{k}"] = xt.TaskFound(names, point, point - 1, point + 1, ranks)
    found = xt.AcrossTasks(xt.Estimates(names, np.zeros(n_m), np.zeros((2, n_m))), tasks,
                           (1,) * n_m)
    assert found.best_or_tied() == [sum(int(f.ranks[m] == 1) for f in tasks.values())
                                    for m in range(n_m)]
    for f in tasks.values():
        assert f.of(list(names)) is f
        back = tuple(reversed(names))
        moved = f.of(back)
        assert moved.names == back and moved.ranks == tuple(reversed(f.ranks))
        assert moved.point.tolist() == f.point[::-1].tolist()


def _pooled_counts_reference(parts):
    """pooled_counts as it was (each task's int64 counts gathered and
    added task by task): the reference."""
    parts = sorted(parts, key=lambda p: p.task)
    names = xt.common_names(parts)
    tasks = {}
    agree = pairs = 0
    for p in parts:
        a = np.asarray(p.agree2, dtype=np.int64)[:, xt._columns(p, names)]
        d = np.asarray(p.pairs2, dtype=np.int64)[:, None]
        tasks[p.task] = xt.pair_estimates(names, a, d)
        agree, pairs = agree + a, pairs + d
    ratio = xt._ratio(agree, pairs)
    return xt.Estimates(names, ratio[0], ratio[1:]), tasks


@given(pair_tasks())
@settings(max_examples=100, deadline=None)
def test_pooled_counts_is_the_reference(parts):
    """The pooled pairwise accuracy summed over the tasks' stack, and each
    task's own estimates, equal the reference bit for bit (C-contiguous
    replicates, as they were)."""
    (got, got_tasks), (want, want_tasks) = xt.pooled_counts(parts), _pooled_counts_reference(parts)
    assert got.names == want.names
    assert got.point.tobytes() == want.point.tobytes()
    assert got.reps.tobytes() == want.reps.tobytes() and got.reps.flags["C_CONTIGUOUS"]
    assert set(got_tasks) == set(want_tasks)
    for task, e in want_tasks.items():
        assert got_tasks[task].point.tobytes() == e.point.tobytes()
        assert got_tasks[task].reps.tobytes() == e.reps.tobytes()
        assert got_tasks[task].reps.flags["C_CONTIGUOUS"]
