"""Issue 39, part 3: intervals that resample the raters as well as the topics
(and systems) — the ``raters`` unit of correlation_ci/ and metric_eval/
(Steen & Markert 2021; qarla_spark/measures/rater_draws.py). References: a
loop over the replicates with the obvious code — the same seeds, each
summary's mean over its drawn raters and each system's weighted mean in
Fractions —, equal to the rows bit for bit; the draw shown to matter
(raters who disagree) and not to matter when every rater agrees (the rows
of ``both`` and ``topics`` themselves). docs/DECISIONS.md, "Intervals that
draw the raters (issue 39, part 3)"."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import human_reading
from qarla_spark import meta_statistics as ms
from qarla_spark.measures import agreement
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures import rater_draws as rdr
from qarla_spark.measures import resampling as rs
from qarla_spark.measures.group_statistics import Paired, correlation_groups
from qarla_spark.measures.human import mean as human_mean
from test_meta_eval import ref_pairwise_accuracy

RATERS = ("ann", "bob", "cy")
TASK, CRITERION = "task", "q"


def _ratings(seed, agree=False, cover=0.8, n_topics=6, n_systems=5):
    """(topic, summarizer, rater, score) of a small design: integer ratings,
    some summaries not rated by every rater; ``agree``: every rater of a
    summary gives it the same rating."""
    rng = np.random.default_rng(seed)
    recs = []
    for t in range(n_topics):
        for s in range(n_systems):
            common = float(rng.integers(1, 6))
            mine = [r for r in RATERS if rng.random() < cover] or ["ann"]
            for r in mine:
                recs.append((f"t{t}", f"s{s}", r, common if agree else float(rng.integers(1, 6))))
    return recs


def _summary_scores(recs):
    """Each summary's human score, the run's: the exact mean over its raters."""
    found = {}
    for t, s, r, v in recs:
        found.setdefault((t, s), []).append(v)
    return {k: human_mean(v) for k, v in sorted(found.items())}


def _counts_by_hand(seed, b, n_raters):
    """Replicate b's multiplicity of each rater (position), by hand: R draws
    with replacement, the uniforms keyed by (seed, "raters", task,
    criterion, b)."""
    u = rs.uniforms(seed, ("raters", TASK, CRITERION, str(b)), n_raters)
    return Counter(min(int(x * n_raters), n_raters - 1) for x in u)


def _drawn_score(found, counts):
    """A summary's score in a replicate, by hand: the Fraction mean of its
    drawn raters' readings, each with its multiplicity; None (missing) when
    none was drawn."""
    num, den = Fraction(0), 0
    for k, rater in enumerate(RATERS):
        if rater in found and counts[k]:
            num += counts[k] * human_reading(found[rater])
            den += counts[k]
    return float(num / den) if den else None


def _by_summary(recs):
    out = {}
    for t, s, r, v in recs:
        out.setdefault((t, s), {})[r] = v
    return out


def _weighted(pairs):
    """The weighted mean of (weight, Fraction) pairs as a double, NaN
    without weight."""
    total = sum(w for w, _ in pairs)
    return float(sum((w * v for w, v in pairs), Fraction(0)) / total) if total else math.nan


# --- the draw and a summary's replicate score --------------------------------

@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 31), st.integers(0, 2 ** 20))
def test_a_summarys_replicate_score_is_the_mean_of_its_drawn_raters(seed, run_seed):
    """replicate_scores of rater_counts, every replicate: the Fraction mean of
    the drawn raters' readings with multiplicity, NaN when none of its
    raters was drawn; design_scores' groups give each replicate those
    scores."""
    recs = _ratings(seed)
    design = rdr.rater_design(*map(list, zip(*recs)))
    assert design.raters == RATERS
    n = 25
    counts = rdr.rater_counts(run_seed, TASK, CRITERION, 3, n)
    got = rdr.replicate_scores(design, counts)
    values, groups = rdr.design_scores(design, run_seed, TASK, CRITERION, n)
    by = _by_summary(recs)
    for b in range(n):
        hand = _counts_by_hand(run_seed, b, 3)
        assert [counts[b, k] for k in range(3)] == [hand[k] for k in range(3)]
        for u, key in enumerate(design.summaries):
            want = _drawn_score(by[key], hand)
            for row in (got[b], values[groups[b]]):
                assert (math.isnan(row[u]) if want is None else row[u] == want)


def test_every_rater_once_gives_the_runs_score_and_thirds_as_thirds():
    recs = [("t0", "a", "ann", 4.0), ("t0", "a", "bob", 5.0), ("t0", "a", "cy", 5.0),
            ("t0", "b", "ann", 0.1), ("t0", "b", "bob", 4.67)]
    design = rdr.rater_design(*map(list, zip(*recs)))
    once = rdr.replicate_scores(design, np.ones((1, 3), dtype=np.int64))[0]
    assert once.tolist() == [human_mean([4.0, 5.0, 5.0]), human_mean([0.1, 4.67])]
    assert once[0] == 14 / 3
    twice_cy = rdr.replicate_scores(design, np.asarray([[1, 0, 2]]))[0]
    assert twice_cy[0] == float(Fraction(4 + 10, 3)) and twice_cy[1] == 0.1
    assert math.isnan(rdr.replicate_scores(design, np.asarray([[0, 0, 3]]))[0][1])


def test_one_named_rater_makes_no_design():
    assert rdr.rater_design(["t0", "t1"], ["a", "a"], ["ann", "ann"], [1.0, 2.0]) is None
    assert rdr.designs_of(["t0"], ["a"], ["q"], ["ann"], [1.0]) == {}


# --- correlation_ci/: the raters with the topics and systems of ``both`` ----

def _paired(recs, x_of):
    scores = _summary_scores(recs)
    keys = sorted(scores)
    nums = np.asarray([x_of[k][0] for k in keys], dtype=np.int64)
    dens = np.asarray([x_of[k][1] for k in keys], dtype=np.int64)
    topics, names = tuple(k[0] for k in keys), tuple(k[1] for k in keys)
    return Paired(topics, names, nums, dens, topics, names,
                  np.asarray([scores[k] for k in keys], dtype=np.float64))


def _x_ratios(recs, seed):
    rng = np.random.default_rng(seed + 1)
    return {k: (int(rng.integers(0, 20)), int(rng.integers(1, 7)))
            for k in _summary_scores(recs)}


def _ref_correlation_raters(recs, x_of, seed, n, anonymous=None):
    """correlation_ci/'s ``raters`` rows by hand: in replicate b the topics'
    Poisson weights and the systems drawn by ``both``'s seeds, the raters by
    (seed, "raters", task, criterion, b); a summary's score the Fraction mean
    of its drawn raters' readings (missing: no row); each system's two
    sides the Fraction weighted means; the correlations of the drawn
    systems in the order drawn; the 95% percentile interval."""
    by = _by_summary(recs)
    anonymous = anonymous or {}
    topics = sorted({t for t, _ in by} | {t for t, _ in anonymous})
    systems = sorted({s for _, s in by} | {s for _, s in anonymous})
    weights = rs.poisson_weights(seed, TASK, topics, n)
    picks = rs.system_picks(seed, TASK, len(systems), n)
    reps = []
    for b in range(n):
        counts = _counts_by_hand(seed, b, len(RATERS))
        xs, hs = [], []
        for s in systems:
            x_pairs, h_pairs = [], []
            for t_pos, t in enumerate(topics):
                if (t, s) not in by and (t, s) not in anonymous:
                    continue
                w = int(weights[b, t_pos])
                num, den = x_of[(t, s)]
                x_pairs.append((w, Fraction(num / den)))
                y = anonymous[(t, s)] if (t, s) in anonymous else \
                    _drawn_score(by[(t, s)], counts)
                if y is not None:
                    h_pairs.append((w, human_reading(y)))
            xs.append(_weighted(x_pairs))
            hs.append(_weighted(h_pairs))
        keys = [f"{k:06d}" for k in range(len(systems))]
        reps.append(agreement.correlation_rows(keys, [[xs[j] for j in picks[b]]],
                                               [[hs[j] for j in picks[b]]])[0])
    reps = np.asarray(reps)
    return {kind: rs.percentile_interval(reps[:, k]) for k, kind in enumerate(agreement.KINDS)}


def _correlation_rows(recs, x_of, seed, n, designs=True):
    p = _paired(recs, x_of)
    designs = {CRITERION: rdr.rater_design(*map(list, zip(*recs)))} if designs else None
    rows = correlation_groups(TASK, 0, [(CRITERION, p)], seed, n, summary_level=False,
                              designs=designs)
    return {(r.unit, r.kind, r.method): r for r in rows}


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2 ** 31))
def test_correlation_raters_rows_equal_the_loop_over_replicates(seed):
    recs = _ratings(seed)
    x_of = _x_ratios(recs, seed)
    n = 40
    rows = _correlation_rows(recs, x_of, seed % 1000, n)
    want = _ref_correlation_raters(recs, x_of, seed % 1000, n)
    for kind in agreement.KINDS:
        r = rows[("raters", kind, "percentile")]
        both = rows[("both", kind, "percentile")]
        assert r.value == both.value                       # the run's value
        low, high = want[kind]
        assert (r.ci_low, r.ci_high) == (low, high) or (
            math.isnan(r.ci_low) and math.isnan(low) and math.isnan(high))
    assert not any(unit == "raters" and method != "percentile" for unit, _, method in rows)


def test_a_judgment_without_a_named_rater_keeps_its_score():
    """A summary judged without a named rater (beside a criterion's named
    raters) keeps its score in every replicate: the loop over replicates
    with that summary's score fixed."""
    recs = _ratings(7, cover=0.9)
    anonymous = {("t2", "s1"): 2.5, ("t4", "s3"): 4.0}
    recs = [r for r in recs if (r[0], r[1]) not in anonymous]
    x_of = _x_ratios(recs, 7)
    x_of.update({key: (3, 4) for key in anonymous})
    p = _paired(recs, x_of)
    keys = sorted(set(zip(p.y_topic, p.y_name)) | set(anonymous))
    scores = {**_summary_scores(recs), **anonymous}
    topics, names = tuple(k[0] for k in keys), tuple(k[1] for k in keys)
    p = Paired(topics, names, np.asarray([x_of[k][0] for k in keys], dtype=np.int64),
               np.asarray([x_of[k][1] for k in keys], dtype=np.int64), topics, names,
               np.asarray([scores[k] for k in keys], dtype=np.float64))
    rows = correlation_groups(TASK, 0, [(CRITERION, p)], 4, 40, summary_level=False,
                              designs={CRITERION: rdr.rater_design(*map(list, zip(*recs)))})
    want = _ref_correlation_raters(recs, x_of, 4, 40, anonymous)
    got = {r.kind: (r.ci_low, r.ci_high) for r in rows if r.unit == "raters"}
    assert got == {k: want[k] for k in agreement.KINDS}


def test_correlation_raters_rows_follow_the_draw():
    """Raters who disagree: the raters' intervals are not ``both``'s; every
    rater of every summary agreeing: they are ``both``'s, bit for bit (the
    same topics and systems drawn, each summary's score the same in every
    replicate: no summary can miss its raters);
    without a design (one rater, none named) no ``raters`` row and the
    other rows unchanged."""
    recs = _ratings(11, cover=1.0)
    x_of = _x_ratios(recs, 11)
    rows = _correlation_rows(recs, x_of, 5, 60)
    assert any((rows[("raters", k, "percentile")].ci_low,
                rows[("raters", k, "percentile")].ci_high)
               != (rows[("both", k, "percentile")].ci_low,
                   rows[("both", k, "percentile")].ci_high) for k in agreement.KINDS)
    same = _ratings(11, agree=True, cover=1.0)
    x_same = _x_ratios(same, 11)
    rows = _correlation_rows(same, x_same, 5, 60)
    for k in agreement.KINDS:
        r, b = rows[("raters", k, "percentile")], rows[("both", k, "percentile")]
        assert (r.value, r.ci_low, r.ci_high) == (b.value, b.ci_low, b.ci_high)
    plain = _correlation_rows(same, x_same, 5, 60, designs=False)
    assert {key: r for key, r in rows.items() if key[0] != "raters"} == plain


# --- metric_eval/: the raters with the topics ---------------------------------

def _cube(recs, seed, n_measures=3):
    """A JudgedScores of the design: measure scores multiples of 1/8 (their
    weighted means exact: the replicates' sums need no rounding), the
    humans' the run's means over raters."""
    rng = np.random.default_rng(seed + 2)
    scores = _summary_scores(recs)
    topics = sorted({t for t, _ in scores})
    systems = sorted({s for _, s in scores})
    x = np.full((len(topics), len(systems), n_measures), np.nan)
    h = np.full((len(topics), len(systems)), np.nan)
    for (t, s), v in scores.items():
        i, j = topics.index(t), systems.index(s)
        x[i, j] = rng.integers(0, 40, n_measures) / 8
        h[i, j] = v
    return js.JudgedScores(tuple(topics), tuple(systems),
                           tuple(f"m{k}" for k in range(n_measures)), x, h)


def _meta(recs, data, seed, n, designs=True):
    d = {CRITERION: rdr.rater_design(*map(list, zip(*recs)))} if designs else None
    return js.meta_evaluations(TASK, {CRITERION: data}, seed, n, designs=d)[CRITERION]


def _ref_meta_replicates(recs, data, seed, n, run):
    """Each statistic's replicates with the raters drawn, by a loop over the
    replicates: the cells' drawn scores and the systems' weighted means in
    Fractions, the statistic of those system scores by its kernel on the
    one replicate (acc_eq at the run's ε); and pairwise accuracy by the
    loop over pairs (where every system has a score)."""
    by = _by_summary(recs)
    weights = rs.poisson_weights(seed, TASK, data.topics, n)
    replicated = [s for s in ms.STATISTICS if s.replicates]
    reps = {s.key: np.full((n, len(data.measures)), np.nan) for s in replicated}
    pa_by_hand = {}
    run_scores = js.SystemScores(data, None, None, None, None, None, None)
    cals = run_scores.calibrations()
    for b in range(n):
        counts = _counts_by_hand(seed, b, len(RATERS))
        human = np.full(data.human.shape, np.nan)
        for (t, s), found in by.items():
            y = _drawn_score(found, counts)
            if y is not None:
                human[data.topics.index(t), data.systems.index(s)] = y
        cube = js.JudgedScores(data.topics, data.systems, data.measures, data.scores, human)
        cells = cube.cells
        x_sys = np.full((len(data.systems), len(data.measures)), np.nan)
        h_sys = np.full(len(data.systems), np.nan)
        for j in range(len(data.systems)):
            ts = [t for t in range(len(data.topics)) if cells[t, j]]
            h_sys[j] = _weighted([(int(weights[b, t]), human_reading(human[t, j])) for t in ts])
            for m in range(len(data.measures)):
                x_sys[j, m] = _weighted([(int(weights[b, t]), Fraction(data.scores[t, j, m]))
                                         for t in ts])
        x = np.stack([x_sys, x_sys])                     # a point row, the replicate
        h = np.stack([h_sys, h_sys])
        from qarla_spark.measures import meta_eval as me
        scores = js.SystemScores(
            cube, x, h, agreement.correlation_rows_many(data.systems, x.transpose(0, 2, 1),
                                                        h[None],
                                                        kinds=("pearson", "spearman"))[0],
            me.sign_sums_many(x, [h])[0], weights[b:b + 1], None, {})
        scores.memo["calibrations"] = cals
        for s in replicated:
            reps[s.key][b] = js.KERNELS[s.key](scores)[1]
        if np.isfinite(h_sys).all():
            pa_by_hand[b] = []
            for m in range(len(data.measures)):
                agree, pairs = ref_pairwise_accuracy(list(x_sys[:, m]), list(h_sys))
                pa_by_hand[b].append(float(agree / pairs) if pairs else math.nan)
    return reps, pa_by_hand


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2 ** 31))
def test_metric_eval_raters_rows_equal_the_loop_over_replicates(seed):
    recs = _ratings(seed, cover=0.75)
    data = _cube(recs, seed)
    n = 30
    e = _meta(recs, data, seed % 997, n)
    reps, pa_by_hand = _ref_meta_replicates(recs, data.used(), seed % 997, n, e)
    assert set(e.raters) == {s.key for s in ms.STATISTICS if s.replicates}
    for s in ms.STATISTICS:
        if not s.replicates:
            continue
        for m, est in enumerate(e.raters[s.key]):
            assert est.value == e.estimates[s.key][m].value or (
                math.isnan(est.value) and math.isnan(e.estimates[s.key][m].value))
            np.testing.assert_array_equal(est.replicates, reps[s.key][:, m])
            low, high = rs.bootstrap_interval(est.value, reps[s.key][:, m],
                                              s.recentred_within)
            assert (est.low, est.high) == (low, high) or (
                math.isnan(est.low) and math.isnan(low))
    pa = e.raters[("system", "pairwise_accuracy")]
    for b, values in pa_by_hand.items():
        for m, v in enumerate(values):
            got = pa[m].replicates[b]
            assert got == v or (math.isnan(got) and math.isnan(v))


def test_metric_eval_raters_rows_follow_the_draw():
    """Raters who disagree: intervals unlike the ``topics`` unit's; every
    rater of every summary agreeing: the ``topics`` unit's estimates bit for
    bit (the same replicates); the other estimates do not depend on the
    design."""
    recs = _ratings(21, cover=1.0)
    data = _cube(recs, 21)
    e = _meta(recs, data, 8, 50)
    differ = [(a.low, a.high) != (b.low, b.high)
              for key in e.raters for a, b in zip(e.raters[key], e.estimates[key])]
    assert any(differ)
    same = _ratings(21, agree=True, cover=1.0)
    data = _cube(same, 21)
    e = _meta(same, data, 8, 50)
    for key, found in e.raters.items():
        for a, b in zip(found, e.estimates[key]):
            assert (a.value, a.low, a.high, a.interval) == (b.value, b.low, b.high, b.interval) \
                or all(math.isnan(v) for v in (a.value, b.value))
            np.testing.assert_array_equal(a.replicates, b.replicates)
    plain = _meta(same, data, 8, 50, designs=False)
    assert plain.raters == {}
    for key, found in plain.estimates.items():
        for a, b in zip(found, e.estimates[key]):
            assert (a.value, a.low, a.high) == (b.value, b.low, b.high) or (
                math.isnan(a.value) and math.isnan(b.value))


def test_metric_eval_rows_of_the_raters_unit():
    """metric_eval/'s rows: the statistics with replicates again, unit
    ``raters``, after the criterion's other rows; none without raters."""
    from qarla_spark.stages.judges import metric_eval_rows
    recs = _ratings(3)
    data = _cube(recs, 3)
    e = _meta(recs, data, 2, 20)
    rows = metric_eval_rows(TASK, CRITERION, e, 20)
    units = [r[13] for r in rows]
    k = units.index("raters")
    assert all(u == "raters" for u in units[k:]) and "raters" not in units[:k]
    assert {(r[3], r[4]) for r in rows[k:]} == {s.key for s in ms.STATISTICS if s.replicates}
    assert len(rows) - k == len(data.measures) * sum(s.replicates for s in ms.STATISTICS)
    plain = metric_eval_rows(TASK, CRITERION, _meta(recs, data, 2, 20, designs=False), 20)
    assert plain == rows[:k]
