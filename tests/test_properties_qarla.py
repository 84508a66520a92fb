"""SPEC §4-5's required properties as hypothesis property tests on the
per-topic counts the Spark stage's kernels take (:func:`qarla_spark.measures.queen.queen_counts`
and :func:`~qarla_spark.measures.queen.king_cases`) and the JACK condition they apply,
:func:`qarla_spark.measures.jack.covering_pairs`:
random topics (4-6 models, 1-8 peers, 1-3 metrics, values on a coarse grid
so that ties are frequent). ``tests/test_invariances.py`` shows the same
properties end to end on Spark with fixed generated testbeds; the random
metric's KING ≈ 0 (a probability statement) is tested there only.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fractions import Fraction

from qarla_spark.measures.jack import covering_pairs
from qarla_spark.measures.masks import set_words
from qarla_spark.measures.queen import king_cases, queen_counts

GRID = [0.0, 0.25, 0.5, 0.75, 1.0]


@st.composite
def topics(draw, min_peers=1):
    n_models = draw(st.integers(4, 6))
    n_peers = draw(st.integers(min_peers, 8))
    k = draw(st.integers(1, 3))
    n = n_models + n_peers
    values = draw(hnp.arrays(np.float64, (n, n, k), elements=st.sampled_from(GRID)))
    values[np.arange(n), np.arange(n)] = np.nan      # as in the topic cube
    roles = np.array(["model"] * n_models + ["peer"] * n_peers, dtype=object)
    return roles, values


def names_of(roles):
    return np.array([f"{r[0]}{i}" for i, r in enumerate(roles)], dtype=object)


def results(roles, values, sets, names=None):
    """{set index: (win, n_cases)} of the KING cases, the QUEEN rows
    {(summarizer, holdout, set): queen} and the JACK-covered models
    {(set, model)} of one topic for the metric sets ``sets`` (all detailed)."""
    names = names_of(roles) if names is None else names
    words = np.asarray([set_words(s, values.shape[2]) for s in sets], dtype=np.int64)
    q = queen_counts(roles, values, words)
    peers, models = q.peers, q.models
    cases = king_cases(q)
    king = {} if cases is None else {s: (int(cases[0][s]), len(models))
                                     for s in range(len(sets))}
    queen = {}
    for s in range(len(sets)):
        for k, a in enumerate(peers):
            queen[(names[a], None, s)] = Fraction(int(q.full_num[k, s]), int(q.full_den[k]))
            if q.jackknifed:
                for j, h in enumerate(models):
                    queen[(names[a], names[h], s)] = Fraction(int(q.jk_num[k, j, s]),
                                                              int(q.jk_den[k, j]))
        if q.jackknifed:
            for j, h in enumerate(models):
                queen[(names[h], names[h], s)] = Fraction(int(q.own_num[j, s]),
                                                          int(q.own_den[j]))
    covered = set()
    for s_id, chosen in enumerate(sets):
        positive = np.array([queen[(names[a], None, s_id)] > 0 for a in peers], dtype=bool)
        good = covering_pairs(values, peers, models, positive, list(chosen))
        covered |= {(s_id, names[models[m]]) for m in np.flatnonzero(good.any(axis=(0, 1)))}
    return king, queen, covered


@settings(max_examples=60, deadline=None)
@given(topics())
def test_a_constant_metric_has_king_zero(topic):
    roles, values = topic
    n = len(roles)
    const = np.concatenate([values, np.full((n, n, 1), 0.3)], axis=2)
    const[np.arange(n), np.arange(n)] = np.nan
    king, queen, _ = results(roles, const, [[const.shape[2] - 1]])
    win, n_cases = king[0]
    assert win == 0 and n_cases == (roles == "model").sum()
    assert set(queen.values()) == {1.0}       # every summary passes every sample


@settings(max_examples=60, deadline=None)
@given(topics(), st.integers(0, 2))
def test_a_duplicate_metric_changes_nothing(topic, which):
    roles, values = topic
    i = which % values.shape[2]
    doubled = np.concatenate([values, values[:, :, i:i + 1]], axis=2)
    one = results(roles, values, [[i]])
    two = results(roles, doubled, [[i, values.shape[2]]])
    assert one == two


@settings(max_examples=60, deadline=None)
@given(topics(), st.integers(0, 2))
def test_a_strictly_increasing_transform_changes_nothing(topic, which):
    roles, values = topic
    i = which % values.shape[2]
    moved = values.copy()
    moved[:, :, i] = moved[:, :, i] ** 3 + 2 * moved[:, :, i] - 7     # strictly increasing
    every = [list(range(values.shape[2]))]
    assert results(roles, values, every) == results(roles, moved, every)


@settings(max_examples=60, deadline=None)
@given(topics(), st.integers(0, 7), st.sampled_from(GRID))
def test_a_duplicate_peer_does_not_change_king_or_the_others_queen(topic, which, between):
    roles, values = topic
    peers = np.flatnonzero(roles == "peer")
    a = int(peers[which % len(peers)])
    n = len(roles)
    grown = np.full((n + 1, n + 1, values.shape[2]), np.nan)
    grown[:n, :n] = values
    grown[n, :n] = values[a]          # the copy compares to everyone as a does
    grown[:n, n] = values[:, a]       # and everyone compares to it as to a
    grown[n, a] = grown[a, n] = between
    roles2 = np.append(roles, "peer")
    names2 = np.append(names_of(roles), "copy")
    every = [list(range(values.shape[2]))]
    king1, queen1, _ = results(roles, values, every)
    king2, queen2, _ = results(roles2, grown, every, names2)
    assert king1 == king2
    assert {k: v for k, v in queen2.items() if k[0] != "copy"} == queen1
    assert {k[1:]: v for k, v in queen2.items() if k[0] == "copy"} == \
        {k[1:]: v for k, v in queen1.items() if k[0] == names_of(roles)[a]}


@settings(max_examples=60, deadline=None)
@given(topics(min_peers=2))
def test_jack_never_decreases_when_a_peer_is_added(topic):
    roles, values = topic
    every = [list(range(values.shape[2]))]
    _, _, with_all = results(roles, values, every)
    _, _, without_last = results(roles[:-1], values[:-1, :-1], every)
    assert without_last <= with_all
