"""Issue 39, part 3: the human ceiling — each rater's scores meta-evaluated
like a measure against the exact mean of the other raters, every statistic
of metric_eval/, averaged over the raters (rows of measure ``human``).
References: Fractions and the loop over pairs of pairwise accuracy.
docs/DECISIONS.md, "The human ceiling (issue 39, part 3)"."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import human_reading
from qarla_spark import meta_statistics as ms
from qarla_spark.measures.ceiling import ceiling_rows, rater_cubes
from test_meta_eval import ref_pairwise_accuracy


def _ratings(seed):
    rng = np.random.default_rng(seed)
    recs = []
    for t in range(6):
        for s in range(5):
            for r in ("ann", "bob", "cy"):
                if rng.random() < 0.85:
                    recs.append((f"t{t}", f"s{s}", r, float(rng.integers(1, 6))))
    return recs


def ref_pairwise_accuracy_of(recs, rater):
    """Pairwise accuracy of one rater against the mean of the others, by
    hand: its cells, system means of exact fractions (the humans' side the
    mean of the others' readings), the loop over pairs on their doubles."""
    cells = {}
    for t, s, r, v in recs:
        cells.setdefault((t, s), {})[r] = v
    xs, hs = {}, {}
    for (t, s), found in cells.items():
        if rater in found and len(found) >= 2:
            others = [human_reading(v) for r, v in found.items() if r != rater]
            xs.setdefault(s, []).append(Fraction(found[rater]))
            hs.setdefault(s, []).append(sum(others, Fraction(0)) / len(others))
    systems = sorted(xs)
    x = [float(sum(xs[s]) / len(xs[s])) for s in systems]
    h = [float(sum(hs[s]) / len(hs[s])) for s in systems]
    agree, pairs = ref_pairwise_accuracy(x, h)
    return float(agree / pairs) if pairs else math.nan


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2 ** 31))
def test_the_ceiling_is_the_mean_over_raters_of_each_rater_against_the_others(seed):
    recs = _ratings(seed)
    topics, names, raters, scores = map(list, zip(*recs))
    rows, found = ceiling_rows("task", "q", topics, names, raters, scores, seed=3, n=30)
    assert [(r[3], r[4]) for r in rows] == [s.key for s in ms.STATISTICS]
    assert all(r[2] == "human" and r[9] is None for r in rows)
    per_rater = [ref_pairwise_accuracy_of(recs, r) for r in ("ann", "bob", "cy")]
    present = [Fraction(v) for v in per_rater if not math.isnan(v)]
    want = float(sum(present) / len(present)) if present else math.nan
    got = found[("system", "pairwise_accuracy")].value
    assert got == want or (math.isnan(got) and math.isnan(want))
    pa = found[("system", "pairwise_accuracy")]
    if not math.isnan(pa.value):
        assert pa.interval == "recentred" and pa.low <= pa.value <= pa.high


def test_a_rater_alone_on_its_cells_has_no_ceiling():
    """A summary rated once has no other rater to compare with: no cell;
    a criterion without such a summary has no rows."""
    recs = [("t0", "a", "ann", 1.0), ("t0", "b", "bob", 2.0)]
    assert rater_cubes(*map(list, zip(*recs))) == []
    assert ceiling_rows("task", "q", *map(list, zip(*recs)), seed=1, n=10) == ([], {})


def test_the_others_mean_is_of_their_readings():
    recs = [("t0", "a", "ann", 1.0), ("t0", "a", "bob", 1 / 3), ("t0", "a", "cy", 2 / 3),
            ("t0", "b", "ann", 2.0), ("t0", "b", "bob", 2.0)]
    cubes = dict(rater_cubes(*map(list, zip(*recs))))
    assert set(cubes) == {"ann", "bob", "cy"}
    ann = cubes["ann"]
    assert ann.human[0, 0] == float((Fraction(1, 3) + Fraction(2, 3)) / 2)
    assert ann.scores[0, 0, 0] == 1.0 and ann.human[0, 1] == 2.0
    assert np.isnan(cubes["cy"].human[0, 1])                  # cy did not rate b
