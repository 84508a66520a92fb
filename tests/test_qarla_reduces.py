"""The QARLA stage's per-task reduces without a Python object per subset or
per double (issue 36): each fast function against the path it replaced or
a Fractions brute force — the same sets, the same sums, the same rows."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qarla_spark.measures import exact
from qarla_spark.measures.metric_sets import MetricSet, best_index, best_of


# ------------------------------------------------------------ subsets_family

@settings(max_examples=40, deadline=None)
@given(st.data())
def test_subsets_family_is_the_family_of_the_subsets(data):
    """The subsets' words, labels, sizes and names made from combinations
    are :class:`Family` of :func:`clustering.subsets`'s MetricSets (several
    mask words when there are more than 63 metrics)."""
    from qarla_spark.measures.clustering import subsets
    from qarla_spark.stages.qarla import Family, subsets_family
    n_metrics = data.draw(st.integers(1, 140))
    metrics = [f"m{i:03d}" for i in data.draw(st.permutations(range(n_metrics)))]
    reps = data.draw(st.lists(st.sampled_from(metrics), min_size=1, max_size=6))
    got = subsets_family(reps, metrics)
    family = Family.of(subsets(reps), metrics)
    assert got["words"].dtype == family.words.dtype
    assert np.array_equal(got["words"], family.words)
    assert got["labels"] == family.labels and got["sizes"] == family.sizes
    assert got["sets"] == [s.names for s in family.sets]


def test_subsets_family_names_a_metric_not_in_the_table():
    from qarla_spark.errors import ConfigError
    from qarla_spark.stages.qarla import subsets_family
    with pytest.raises(ConfigError, match="not in the similarity table: zz"):
        subsets_family(["a", "zz"], ["a", "b"])


# ----------------------------------------------------------------- best_index

@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from("abcde"), min_size=1, max_size=4),
                          st.sampled_from([0.25, 0.5, 0.5, 0.75])), min_size=1, max_size=12))
def test_best_index_is_best_of(rows):
    """Ties (few distinct scores) broken as :func:`best_of` breaks them."""
    sets, scores = [], {}
    for names, score in rows:
        s = MetricSet(names)
        if s not in scores:
            sets.append(s)
            scores[s] = score
    by_position = {i: scores[s] for i, s in enumerate(sets)}
    at = best_index(by_position, [s.label for s in sets], [s.size for s in sets])
    assert sets[at] == best_of(scores)
    with pytest.raises(ValueError):
        best_index({}, [], [])


# ------------------------------------------------------ PeerSums.add_topics

@settings(max_examples=40, deadline=None)
@given(st.data())
def test_peer_sums_of_topics_at_once_are_the_sums_topic_by_topic(data):
    """:meth:`PeerSums.add_topics` (one fixed_parts call for all the
    topics' rows) gives the pieces :meth:`PeerSums.add` gives a topic at a
    time, with sums already made mixed in."""
    from qarla_spark.measures.qarla_task import PeerSums
    from qarla_spark.stages.records import PeerCounts
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    n_sets = data.draw(st.integers(1, 5))
    rows = []
    for _ in range(data.draw(st.integers(0, 6))):
        peers = sorted(data.draw(st.sets(st.sampled_from("pqrst"), max_size=4)))
        den = rng.integers(1, 40, size=len(peers))
        num = rng.integers(0, 41, size=(len(peers), n_sets)) % (den[:, None] + 1)
        rows.append(PeerCounts(peers, num, [int(d) for d in den], [1] * len(peers)))
    want = PeerSums(n_sets)
    for v in rows:
        want.add(v.peer, v.num, v.den, v.count)
    if data.draw(st.booleans()) and rows:       # a partition's sums among the rows
        summed = PeerSums.of_values(n_sets, rows[:1]).to_value()
        mixed = [PeerCounts(**summed)] + rows[1:]
    else:
        mixed = rows
    got = PeerSums.of_values(n_sets, mixed)
    assert sorted(got.sums) == sorted(want.sums) and got.counts == want.counts
    for name in want.sums:
        assert np.array_equal(exact.fixed_value(got.sums[name]),
                              exact.fixed_value(want.sums[name]))
    for name, value in want.means().items():
        assert np.array_equal(got.means()[name].view(np.int64), value.view(np.int64))
    with pytest.raises(ValueError, match="one topic's"):
        PeerSums(1).add_topics([PeerCounts(["p"], [[1]], [2], [2])])


# ------------------------------------------------------------------ real_sums

_DOUBLES = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                     st.sampled_from([0.0, -0.0, 5e-324, 0.1, 0.2, 0.3, 1.0, -1.0]),
                     st.floats(-1, 1, allow_nan=False))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_DOUBLES, st.integers(0, 4)), max_size=30), st.booleans())
def test_real_sums_are_the_fractions_sums(rows, one_by_one):
    """Exact sums of doubles per group, against Fractions; the value-by-value
    path (exponents too far apart) gives the same."""
    values = [v for v, _ in rows]
    groups = [g for _, g in rows]
    want = [sum((Fraction(v) for v, g in rows if g == k), Fraction(0)) for k in range(5)]
    saved = exact.REAL_SUM_LEVELS
    exact.REAL_SUM_LEVELS = 0 if one_by_one else saved
    try:
        assert exact.real_sums(values, groups, 5) == want
    finally:
        exact.REAL_SUM_LEVELS = saved


def test_real_sums_of_a_mean_are_the_mean():
    """What a :class:`exact.Mean` of the same doubles holds; NaN raises as
    ``add_real`` does."""
    values = [0.1, 0.2, 0.3, 1e-300, -2.5e10]
    mean = exact.Mean()
    for v in values:
        mean.add_real(v)
    assert exact.real_sums(values, [0] * 5, 1)[0] / 5 == mean.value()
    with pytest.raises(ValueError):
        exact.real_sums([0.1, float("nan")], [0, 0], 1)


# ------------------------------------------------------ the plain human test

def _plain_reference(task, details, plain_baselines):
    """The plain baselines' human test a double at a time (exact.Mean per
    (held-out model, summarizer)): the reduce's code before issue 36's
    vectorisation."""
    from qarla_spark.measures import qarla_task as qt
    out = []
    for metric in plain_baselines:
        by_holdout = {}
        for v in details:
            if v.plain is None or metric not in v.plain:
                continue
            peer_s, model_s = v.plain[metric]
            for hh, model in enumerate(v.models):
                scores = by_holdout.setdefault(model, {})
                scores.setdefault((model, "model"), exact.Mean()).add_real(float(model_s[hh]))
                for a, name in enumerate(v.peers):
                    scores.setdefault((name, "peer"), exact.Mean()).add_real(
                        float(peer_s[a, hh]))
        for holdout in sorted(by_holdout):
            row = qt.human_first(task, metric, holdout, by_holdout[holdout])
            if row is not None:
                out.append(row)
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_plain_human_test_rows_match_a_double_at_a_time(data):
    """Topics with different peers and models, scores with ties reached in
    different orders (0.1, 0.2, 0.3), models missing a metric."""
    from qarla_spark.stages.qarla import _plain_human_test_rows
    from qarla_spark.stages.records import TopicDetail
    pool = [0.1, 0.2, 0.3, 0.0, 1.0, 0.7]
    details = []
    for t in range(data.draw(st.integers(0, 4))):
        peers = sorted(data.draw(st.sets(st.sampled_from("abc"), max_size=3)))
        models = sorted(data.draw(st.sets(st.sampled_from("hgka"), max_size=3)))
        plain = {}
        for metric in ("R-1.a", "R-2.a"):
            if data.draw(st.booleans()):
                peer_s = np.array([[data.draw(st.sampled_from(pool)) for _ in models]
                                   for _ in peers]).reshape(len(peers), len(models))
                model_s = np.array([data.draw(st.sampled_from(pool)) for _ in models])
                plain[metric] = (peer_s, model_s)
        details.append(TopicDetail(f"t{t}", peers, models, None, None, False, None, None,
                                   None, None, None, len(models), None, 0, None, True,
                                   plain if data.draw(st.booleans()) else None))
    got = _plain_human_test_rows("T", details, ("R-1.a", "R-2.a"))
    assert [tuple(r) for r in got] == _plain_reference("T", details, ("R-1.a", "R-2.a"))


# ------------------------------------------------- the correlations' means

def _summary_means_reference(labels, points):
    """The summary-level rows a double at a time (exact.Mean per set and
    correlation): the reduce's code before issue 36's vectorisation."""
    from qarla_spark.measures import agreement
    by_topic = {}
    for p in points:
        by_topic.setdefault(p.topic, []).append(p)
    sums = [[exact.Mean() for _ in range(3)] for _ in labels]
    for topic in sorted(by_topic):
        pts = by_topic[topic]
        x = np.stack([np.asarray(p.num, dtype=np.int64) for p in pts], axis=1) \
            / np.asarray([p.den for p in pts], dtype=np.int64)[None, :]
        y = np.broadcast_to(np.asarray([p.score for p in pts], dtype=np.float64), x.shape)
        r = agreement.correlation_rows([p.summarizer for p in pts], x, y,
                                       min_n=agreement.MIN_POINTS)
        for s in np.flatnonzero(np.isfinite(r[:, 0])):
            for i in range(3):
                sums[s][i].add_real(float(r[s, i]))
    return [(labels[s], *(exact.to_float(m.value()) for m in sums[s]))
            for s in range(len(labels)) if sums[s][0].n]


_SEEN: dict = {}


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_correlation_rows_summary_means_match_a_double_at_a_time(data):
    from qarla_spark.stages.qarla import _correlation_rows, _JudgedPoint
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    n_sets = data.draw(st.integers(1, 4))
    labels = [f"s{k}" for k in range(n_sets)]
    points = []
    for t in range(data.draw(st.integers(1, 5))):
        for name in sorted(data.draw(st.sets(st.sampled_from("abcdef"), min_size=1))):
            den = int(rng.integers(1, 9))
            points.append(_JudgedPoint(f"t{t}", name, rng.integers(0, den + 1, size=n_sets),
                                       den, float(rng.integers(1, 6))))
    points = [points[i] for i in rng.permutation(len(points))]   # names out of order
    got = [(r.metric_set, r.pearson, r.spearman, r.kendall)
           for r in _correlation_rows("T", labels, "c", points) if r.level == "summary"]
    want = _summary_means_reference(labels, points)
    _SEEN["summary rows"] = _SEEN.get("summary rows", 0) + len(want)
    assert [(a, *np.asarray(b).view(np.int64).tolist()) for a, *b in got] == \
        [(a, *np.asarray(b).view(np.int64).tolist()) for a, *b in want]


# ------------------------------------------------- systems and the human test

def _systems_reference(task, labels, q):
    """``systems/`` with a Fraction per score, ranked by agreement.rank_exact:
    the reduce's code before issue 36's vectorisation."""
    from qarla_spark.measures import agreement
    from qarla_spark.stages.records import SystemRow
    systems = []
    for s in range(q.n_sets):
        scores = {}
        for i in q.jk_peers:
            scores[(q.peers[i], "peer")] = Fraction(int(q.jk_peer_num[i, s]),
                                                    int(q.jk_peer_den[i]))
        for i, m in enumerate(q.models):
            scores[(m, "model")] = Fraction(int(q.own_num[i, s]), int(q.own_den[i]))
        ranked = agreement.rank_exact(scores)
        for (name, role), value in scores.items():
            full = float(q.full_values[q.p_at[name], s]) if role == "peer" else None
            position, above = ranked[(name, role)]
            systems.append(SystemRow(task, name, role, labels[s], exact.to_float(value), full,
                                     position, above))
        for name in q.peers:
            if (name, "peer") not in scores:
                systems.append(SystemRow(task, name, "peer", labels[s], None,
                                         float(q.full_values[q.p_at[name], s]), None, None))
    return systems


def _human_test_reference(task, labels, q):
    """``human_test/`` (QUEEN) a held-out model at a time: the reduce's code
    before issue 36's vectorisation."""
    from qarla_spark.names import queen_of
    from qarla_spark.stages.qarla import _means, _stack
    from qarla_spark.stages.records import HumanTestRow
    rows_out = []
    for h, model in enumerate(q.models):
        rows, dens, groups = [], [], []
        for v in q.jk:
            if model not in v.models:
                continue
            hh = v.models.index(model)
            rows.append(v.jk_num[:, hh, :])
            dens.append(v.jk_den[:, hh])
            groups += [q.p_at[p] for p in v.peers]
        if not groups:
            continue
        num, den = _means(_stack(rows, q.n_sets), np.concatenate(dens), groups, len(q.peers))
        present = sorted(set(groups))
        own_n, own_d = q.own_num[h], int(q.own_den[h])
        for s in range(q.n_sets):
            first = all(int(own_n[s]) * int(den[i]) > int(num[i, s]) * own_d for i in present)
            rows_out.append(HumanTestRow(task, queen_of(labels[s]), model, bool(first)))
    return rows_out


def _random_details(data, rng, n_sets):
    """Topics of one task: peers and models vary, some topics without a
    jackknife, few distinct counts (ties), now and then a denominator
    beyond 2^53 (Python integers)."""
    from qarla_spark.stages.records import TopicDetail
    details = []
    for t in range(data.draw(st.integers(1, 4))):
        peers = sorted(data.draw(st.sets(st.sampled_from("abcd"), max_size=4)))
        models = sorted(data.draw(st.sets(st.sampled_from("hgk"), min_size=1, max_size=3)))
        n_a, n_m = len(peers), len(models)
        big = data.draw(st.booleans()) and data.draw(st.booleans())
        den = (1 << 60) + 3 if big else int(rng.integers(2, 7))

        def counts(*shape):
            return rng.integers(0, 3, size=shape) * (den // 3 if big else 1)
        jackknifed = data.draw(st.booleans()) or t == 0
        details.append(TopicDetail(
            f"t{t}", peers, models, counts(n_a, n_sets), np.full(n_a, den, dtype=object
                                                                  if big else np.int64),
            jackknifed, counts(n_a, n_m, n_sets) if jackknifed else None,
            np.full((n_a, n_m), den, dtype=object if big else np.int64) if jackknifed else None,
            counts(n_m, n_sets) if jackknifed else None,
            np.full(n_m, den, dtype=object if big else np.int64) if jackknifed else None,
            np.zeros(n_sets, dtype=np.int64), n_m, None, 0, None, True, None))
    return details


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_systems_and_human_test_rows_match_the_fraction_path(data):
    from qarla_spark.stages.qarla import _human_test_rows, _systems_rows, _TaskQueen
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    n_sets = data.draw(st.integers(1, 3))
    labels = [f"s{k}" for k in range(n_sets)]
    details = _random_details(data, rng, n_sets)
    try:
        q = _TaskQueen.of(details, n_sets)
    except OverflowError:       # a case the stage itself does not take
        return
    got = _systems_rows("T", labels, q)
    want = _systems_reference("T", labels, q)
    assert [tuple(r) for r in got] == [tuple(r) for r in want]
    for a, b in zip(got, want):     # the doubles by their bits
        assert repr(a.queen) == repr(b.queen) and repr(a.queen_full) == repr(b.queen_full)
    assert _human_test_rows("T", labels, q) == _human_test_reference("T", labels, q)


def test_the_correlations_examples_had_summary_rows():
    """The hypothesis test above compared rows, not only empty lists."""
    test_correlation_rows_summary_means_match_a_double_at_a_time()
    assert _SEEN.get("summary rows", 0) > 0


# ---------------------------------------------------------------- fixed_parts

def _fixed_parts_shifts(values):
    """:func:`exact.fixed_parts` by integer shifts of the mantissas (its code
    before issue 36's: the reference)."""
    v = np.asarray(values, dtype=np.float64)
    mant, expo = np.frexp(v)
    m = (mant * 2.0 ** 53).astype(np.int64)
    shift = expo.astype(np.int64) - 53 + exact.FIXED_BITS
    mask = (1 << exact.FIXED_CHUNK) - 1
    out = np.empty((exact.FIXED_LEVELS,) + v.shape, dtype=np.int64)
    for level in range(exact.FIXED_LEVELS):
        lo = exact.FIXED_CHUNK * level - shift               # m's bit at this level
        piece = np.where(lo >= 0, m >> np.clip(lo, 0, 63), m << np.clip(-lo, 0, 63)) & mask
        out[level] = np.where(lo <= 53, piece, 0)
    return out


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.floats(2.0 ** -107, 255.99999, exclude_max=False),
                          st.sampled_from([0.0, 2.0 ** -107, float(np.nextafter(256.0, 0.0)),
                                           1.0, 2.0 ** -53, 1 / (2 ** 53 - 1)]),
                          st.tuples(st.integers(0, 2 ** 53 - 1), st.integers(1, 2 ** 53 - 1))
                          .filter(lambda t: t[0] <= t[1]).map(lambda t: t[0] / t[1])),
                max_size=40))
def test_fixed_parts_in_doubles_are_the_shifted_bits(values):
    """:func:`exact.fixed_parts` (floors of power-of-two scalings) gives the
    pieces the integer shifts of the mantissas gave; out of range raises."""
    got = exact.fixed_parts(np.asarray(values, dtype=np.float64))
    want = _fixed_parts_shifts(np.asarray(values, dtype=np.float64))
    assert got.dtype == want.dtype == np.int64 and np.array_equal(got, want)
    assert (exact.fixed_value(got).sum() if len(values) else 0) == \
        sum(Fraction(v) * 2 ** exact.FIXED_BITS for v in values)
    for bad in (-0.5, 256.0, 2.0 ** -120):
        with pytest.raises(ValueError):
            exact.fixed_parts([bad])
