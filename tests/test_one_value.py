"""Issue 39, part 1: one exact value per (summary, measure).

A summary's score under a similarity metric is the exact mean of its
similarities to the topic's models, rounded once (one function:
``resampling.nan_real_means``, which HBR's topic scores — the statistics'
inputs — and the export both call); a summary's QUEEN or HBR is the double
num / den, correctly rounded; a system's score, wherever a statistic needs
it (correlations/, correlation_ci/, hbr_systems/ and hbr_correlations/,
metric_eval/), is the exact mean of those doubles, rounded once. The
references are Fractions and plain loops. docs/DECISIONS.md, "One exact
value per score (issue 39, part 1)"; the Spark side (the export bit-equal
to what the statistics read, metric_eval/ equal to correlations/) is in
tests/test_export.py.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import agreement
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures.group_statistics import Paired, correlation_groups
from qarla_spark.measures.hbr import topic_scores
from qarla_spark.measures.resampling import grouped_nan_real_means, nan_real_means


def fraction_mean(values):
    """The exact mean of doubles (NaN left out), rounded once; NaN for none."""
    present = [Fraction(float(v)) for v in values if not math.isnan(v)]
    return float(sum(present, Fraction(0)) / len(present)) if present else math.nan


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


# ---------------------------------------------------------------- a summary's score

doubles = st.one_of(st.floats(0, 1, allow_nan=False), st.just(math.nan),
                    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
                    st.sampled_from([0.1, 0.2, 0.3, 1 / 3, 2 / 3, 5e-324, 1e-300]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(doubles, min_size=1, max_size=9), min_size=1, max_size=6))
def test_nan_real_means_is_the_exact_mean_of_the_present_values(rows):
    width = max(len(r) for r in rows)
    values = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        values[i, :len(r)] = r
    got = nan_real_means(values)
    for i, r in enumerate(rows):
        assert same(got[i], fraction_mean(r)), (r, got[i])
    # any order of a row's terms: the same double
    assert all(same(a, b) for a, b in zip(got, nan_real_means(values[:, ::-1])))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), doubles, doubles), max_size=25))
def test_grouped_nan_real_means_is_the_exact_mean_of_each_groups_rows(rows):
    """The export's means (a summary's similarities as rows of a group)
    and the correlations' system means (a system's summaries' QUEEN)."""
    n_groups = 6
    values = np.asarray([[a, b] for _, a, b in rows], dtype=np.float64).reshape(-1, 2)
    groups = [g for g, _, _ in rows]
    got = grouped_nan_real_means(values, groups, n_groups)
    assert got.shape == (n_groups, 2)
    for g in range(n_groups):
        for c in range(2):
            want = fraction_mean([r[1 + c] for r in rows if r[0] == g])
            assert same(got[g, c], want), (g, c)
    flat = grouped_nan_real_means(values[:, 0], groups, n_groups)
    assert all(same(a, b) for a, b in zip(flat, got[:, 0]))


def test_topic_scores_are_the_exact_means_where_numpy_is_not():
    """HBR's topic scores (the statistics' inputs; the export's values):
    each (summary, measure) the exact mean over the topic's models, a
    model's over the others (its own diagonal NaN, left out) — and on these
    similarities numpy's float sum is off in the last bit for some."""
    rng = np.random.default_rng(39)
    n, models, k = 9, 5, 7
    roles = np.asarray(["model"] * models + ["peer"] * (n - models))
    values = rng.random((n, n, k))
    values[rng.random(values.shape) < 0.15] = np.nan
    values[np.arange(n), np.arange(n), :] = np.nan
    who, x = topic_scores(roles, values, range(k), models=True)
    assert list(who) == list(range(n))
    numpy_off = 0
    for a in range(n):
        for m in range(k):
            want = fraction_mean([values[a, r, m] for r in range(models)])
            assert same(x[a, m], want), (a, m)
            with np.errstate(all="ignore"):
                numpy_off += not same(float(np.nanmean(values[a, :models, m])), want)
    assert numpy_off > 0          # the case tells an exact mean from numpy's
    peers, x_peers = topic_scores(roles, values, [2, 0])
    assert list(peers) == list(range(models, n))
    assert np.array_equal(x_peers, x[models:][:, [2, 0]], equal_nan=True)


# ---------------------------------------------------------------- a system's score

# the judged peers' QUEEN (num / 18 over three topics) and human scores: the
# exact mean of the ratios and the exact mean of their doubles round to
# different doubles for some systems, and the Pearsons differ in the last bit
POINTS = [(0, "s0", 8, 4.0), (1, "s0", 9, 4.0), (2, "s0", 16, 4.0),
          (0, "s1", 11, 5.0), (1, "s1", 13, 5.0), (2, "s1", 7, 3.0),
          (0, "s2", 0, 3.0), (1, "s2", 5, 3.0), (2, "s2", 17, 5.0),
          (0, "s3", 3, 2.0), (1, "s3", 8, 3.0), (2, "s3", 3, 1.0)]
DEN = 18
SYSTEMS = ["s0", "s1", "s2", "s3"]


def reference_system_level(of_doubles: bool, flip: bool = False):
    """(x, (Pearson, Spearman, Kendall), y): the systems' exact mean QUEEN
    (of the summaries' doubles, or of the ratios; ``flip``: of (18 − num) /
    18) against their exact mean human score (Fractions, rounded once)."""
    x = {s: [] for s in SYSTEMS}
    y = {s: [] for s in SYSTEMS}
    for _, s, num, h in POINTS:
        num = DEN - num if flip else num
        x[s].append(Fraction(num / DEN) if of_doubles else Fraction(num, DEN))
        y[s].append(Fraction(h))
    xs = [float(sum(x[s]) / len(x[s])) for s in SYSTEMS]
    ys = [float(sum(y[s]) / len(y[s])) for s in SYSTEMS]
    return xs, agreement.correlations(SYSTEMS, xs, ys), ys


def test_the_case_tells_the_two_means_apart():
    xs_d, r_d, _ = reference_system_level(True)
    xs_r, r_r, _ = reference_system_level(False)
    assert xs_d != xs_r and r_d[0] != r_r[0]


def test_correlations_system_level_is_of_the_summaries_doubles():
    """``correlations/`` (the QARLA stage's rows, every detailed set at
    once: here the set and its numerators reversed)."""
    from qarla_spark.stages.qarla import _correlation_rows, _JudgedPoint
    rows = _correlation_rows("t", ["X", "Y"], "c", [
        _JudgedPoint(f"t{t}", s, np.asarray([num, DEN - num]), DEN, h)
        for t, s, num, h in POINTS])
    system = {r.metric_set: (r.pearson, r.spearman, r.kendall) for r in rows
              if r.level == "system"}
    assert system["X"] == tuple(reference_system_level(True)[1])
    assert system["Y"] == tuple(reference_system_level(True, flip=True)[1])


def test_correlation_ci_point_is_of_the_summaries_doubles():
    """``correlation_ci/`` (and HBR's): the statistics stage's groups."""
    topics = tuple(f"t{t}" for t, *_ in POINTS)
    names = tuple(s for _, s, *_ in POINTS)
    paired = Paired(topics, names, np.asarray([num for *_, num, _ in POINTS], dtype=np.int64),
                    np.full(len(POINTS), DEN, dtype=np.int64), topics, names,
                    np.asarray([h for *_, h in POINTS]))
    rows = correlation_groups("t", 0, [("c", paired)], seed=1, n=20, summary_level=False)
    want = dict(zip(agreement.KINDS, reference_system_level(True)[1]))
    got = {r.kind: r.value for r in rows if r.level == "system"}
    assert got == want


def test_metric_eval_system_scores_are_the_same_means():
    """``metric_eval/``'s system scores of the same cells (the summaries'
    doubles): the same x as correlations/ and correlation_ci/."""
    cube = np.full((3, len(SYSTEMS), 1), np.nan)
    human = np.full((3, len(SYSTEMS)), np.nan)
    for t, s, num, h in POINTS:
        cube[t, SYSTEMS.index(s), 0] = num / DEN
        human[t, SYSTEMS.index(s)] = h
    data = js.JudgedScores(("t0", "t1", "t2"), tuple(SYSTEMS), ("QUEEN(X)",), cube, human)
    x, _ = js.system_scores(data, np.ones((1, 3), dtype=np.int64))
    assert list(x[0, :, 0]) == reference_system_level(True)[0]


def test_hbr_systems_are_exact_means_of_the_summaries_doubles():
    from qarla_spark.stages.hbr import _hbr_systems
    from qarla_spark.stages.records import HbrTopic
    items = [("hbr_x", HbrTopic(f"t{t}", [(s, "peer", num, DEN)], None))
             for t, s, num, _ in POINTS]
    rows = _hbr_systems("t", items, "X")
    want = reference_system_level(True)[0]
    assert [r.summarizer for r in rows] == SYSTEMS
    assert [r.hbr for r in rows] == want
    assert want != reference_system_level(False)[0]


@pytest.mark.parametrize("values", [[0.1, 0.2, 0.3], [1 / 3] * 7, [5e-324, 1.0]])
def test_export_system_score_is_the_exact_mean(values):
    """mt-metrics-eval's ``.sys.score``: the exact mean of the segment
    scores the file holds (None left out), rounded once."""
    from qarla_spark.report.export import _mean
    assert _mean(values + [None]) == fraction_mean(values)
    assert _mean([None]) is None


def test_peer_sums_are_exact_means_of_the_summaries_doubles():
    """``king_pearson/``'s system scores of every set (the QARLA stage's
    PeerSums, combined per partition then per task): the exact mean of
    each peer's QUEEN doubles, whatever the split of its topics."""
    from types import SimpleNamespace

    from qarla_spark.measures.qarla_task import PeerSums
    rng = np.random.default_rng(7)
    n_sets, peers = 5, ["a", "b", "c"]
    topics = [(peers[:2 + t % 2], rng.integers(0, 1211, (2 + t % 2, n_sets)),
               [1210, 990, 18][:2 + t % 2]) for t in range(9)]
    parts = [PeerSums(n_sets), PeerSums(n_sets)]
    for t, (who, num, den) in enumerate(topics):
        parts[t % 2].add(who, num, den, [1] * len(who))
    records = [SimpleNamespace(**p.to_value()) for p in parts]
    got = PeerSums.of_values(n_sets, records).means()
    assert sorted(got) == peers
    for k, name in enumerate(peers):
        for s in range(n_sets):
            mine = [num[k, s] / den[k] for who, num, den in topics if len(who) > k]
            assert got[name][s] == fraction_mean(mine), (name, s)
    # the QUEEN of POINTS: the double mean, not the ratio mean
    one = PeerSums(1)
    for _, s, num, _ in POINTS:
        one.add([s], [[num]], [DEN], [1])
    assert [one.means()[s][0] for s in SYSTEMS] == reference_system_level(True)[0]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2 ** 52), st.integers(1, 2 ** 52)), max_size=12))
def test_fixed_parts_sum_doubles_exactly(ratios):
    from qarla_spark.measures import exact
    values = np.asarray([min(a, b) / b for a, b in ratios], dtype=np.float64)
    parts = exact.fixed_parts(values)
    total = exact.fixed_value(parts.sum(axis=1)[:, None])[0]
    assert Fraction(int(total), 2 ** exact.FIXED_BITS) == sum(map(Fraction, values.tolist()),
                                                              Fraction(0))
