"""``king_pearson/``'s rows from the sets' system scores as matrices
(:func:`qarla_spark.measures.qarla_task.king_pearson_rows`, issue 36): the
same rows, in the same order, as a set-by-set reference — one Pearson per
set and criterion over the systems with a human score, from dictionaries
as the stage built them before."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from qarla_spark.measures import agreement
from qarla_spark.measures.qarla_task import king_pearson_rows


def _reference(task, kings, blocks, human):
    """Set by set: each set's system scores as a dictionary (peer -> mean),
    its systems with a human score, one Pearson each; the sets grouped by
    their systems in label order (the stage's order before)."""
    scores = {}
    for labels, peers, values in blocks:
        for label, row in zip(labels, np.asarray(values, dtype=np.float64)):
            scores[label] = {p: float(v) for p, v in zip(peers, row)}
    out = []
    for criterion in sorted(human):
        y_of = human[criterion]
        groups = {}
        for label in sorted(scores):
            systems = tuple(sorted(n for n in scores[label] if n in y_of))
            if systems:
                groups.setdefault(systems, []).append(label)
        for systems, labels in groups.items():
            for label in labels:
                x = [scores[label][n] for n in systems]
                y = [y_of[n] for n in systems]
                r = agreement.correlation_rows(list(systems), [x], [y],
                                               min_n=agreement.MIN_POINTS,
                                               kinds=("pearson",))[0, 0]
                if label in kings:
                    size, king = kings[label]
                    out.append((task, label, int(size), king, criterion,
                                float(r) if math.isfinite(r) else None))
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_king_pearson_rows_match_set_by_set(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    names = [f"s{i}" for i in range(6)]
    blocks, used = [], set()
    for b in range(data.draw(st.integers(1, 2))):
        peers = tuple(sorted(data.draw(st.sets(st.sampled_from(names), max_size=6))))
        n_sets = data.draw(st.integers(0, 5))
        labels = [f"m{b}{k}" if data.draw(st.booleans()) else f"z{k}{b}" for k in range(n_sets)]
        labels = [label for label in dict.fromkeys(labels) if label not in used]
        used.update(labels)
        # few distinct values: constant rows and ties happen
        values = rng.integers(0, 3, size=(len(labels), len(peers))) / 4.0
        blocks.append((labels, peers, values))
    human = {}
    for c in range(data.draw(st.integers(1, 3))):
        rated = data.draw(st.sets(st.sampled_from(names), max_size=6))
        human[f"c{c}"] = {n: float(rng.integers(0, 4)) for n in sorted(rated)}
    kings = {label: (1 + k % 3, k / 7.0) for k, label in enumerate(sorted(used))
             if data.draw(st.booleans())}
    got = king_pearson_rows("t", kings, blocks, human)
    assert got == _reference("t", kings, blocks, human)


def test_king_pearson_rows_group_sets_of_two_blocks():
    """Two blocks whose peers give the same systems make one group, their
    sets in label order; a set of a block without rated systems has no row."""
    blocks = [(["b", "d"], ("p", "q", "r"), np.array([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]])),
              (["a", "c"], ("p", "q", "r", "x"),
               np.array([[2.0, 2.0, 5.0, 9.0], [1.0, 0.0, 1.0, 9.0]]))]
    human = {"k": {"p": 1.0, "q": 2.0, "r": 3.0}}
    kings = {label: (1, 0.5) for label in "abcd"}
    got = king_pearson_rows("t", kings, blocks, human)
    assert [row[1] for row in got] == ["a", "b", "c", "d"]
    assert got == _reference("t", kings, blocks, human)
    assert king_pearson_rows("t", kings, blocks, {"k": {"y": 1.0}}) == []


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_peer_means_are_exact_means_rounded_once(data):
    """:meth:`PeerSums.means` (the compiled long division of the pieces)
    gives each peer's exact mean of its topics' doubles num / den, rounded
    once: Fractions' correctly rounded float."""
    from fractions import Fraction

    from qarla_spark.measures.qarla_task import PeerSums
    n_sets = data.draw(st.integers(1, 6))
    sums = PeerSums(n_sets)
    exact = {}
    for _ in range(data.draw(st.integers(1, 12))):
        peers = sorted(data.draw(st.sets(st.sampled_from("abcd"), min_size=1, max_size=4)))
        big = data.draw(st.booleans())
        dens = [data.draw(st.integers(1, 2 ** 53 - 1 if big else 40)) for _ in peers]
        nums = [[data.draw(st.integers(0, d)) for _ in range(n_sets)] for d in dens]
        sums.add(peers, np.asarray(nums, dtype=np.int64), dens, [1] * len(peers))
        for p, d, row in zip(peers, dens, nums):
            total, count = exact.get(p, ([Fraction(0)] * n_sets, 0))
            exact[p] = ([t + Fraction(float(n / d)) for t, n in zip(total, row)], count + 1)
    got = sums.means()
    assert sorted(got) == sorted(exact)
    for p, (total, count) in exact.items():
        want = [float(t / count) for t in total]
        assert got[p].tolist() == want


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_king_columns_are_king_set_by_set(data):
    """KING of every set at once (:func:`king_columns`): the value, cases
    and Wilson interval :func:`~qarla_spark.measures.king.king` gives set by
    set, bit for bit, whatever the topics' numbers of models."""
    from qarla_spark.measures.king import king
    from qarla_spark.measures.qarla_task import king_columns
    n_sets = data.draw(st.integers(1, 8))
    by_den = []
    for d in sorted(data.draw(st.sets(st.integers(1, 12), min_size=1, max_size=4))):
        t = data.draw(st.integers(1, 50))
        w = np.asarray([data.draw(st.integers(0, d * t)) for _ in range(n_sets)], dtype=np.int64)
        by_den.append((d, w, t))
    got = king_columns(by_den, n_sets)
    want = [king((int(w[s]), d, t) for d, w, t in by_den) for s in range(n_sets)]
    assert repr(got) == repr(want)      # -0.0 apart from 0.0, bit for bit
