"""Intervals that resample the raters as well as the topics (and systems)
(issue 39, part 3; Steen & Markert 2021, "How to evaluate a summarizer:
study design and statistical analysis for manual linguistic quality
evaluation", EACL: a study's uncertainty comes from its raters as much as
from its items, so they bootstrap both together): the ``raters`` unit of
``correlation_ci/`` and ``metric_eval/``.

**The draw.** A criterion of a task with R ≥ 2 named raters (its ratings'
raters, sorted by name) gets, in replicate b, R raters drawn with
replacement (uniforms keyed by (seed, "raters", task, criterion, b):
:func:`rater_counts`, each rater's multiplicity ``c_br``), beside the
topics' Poisson weights of the ``topics`` unit (metric_eval/) and the
systems drawn as ``both`` does (correlation_ci/) — the same draws, so that
raters who all agree give exactly the rows of that unit.

**A summary's human score in replicate b** (:func:`replicate_scores`): the
exact mean of the readings (:func:`qarla_spark.measures.human.value`) of
the drawn raters' ratings of it, each rating counted with its rater's
multiplicity — Σ_r c_br·v_r / Σ_r c_br over the raters r who rated it —,
rounded once (a draw of every rater once gives the run's score, bit for
bit); **missing** in the replicate when none of its raters was drawn,
as a summary without a judgment is missing from the run: it is no cell
of the replicate (metric_eval/: neither the measures' nor the humans'
system means count it) and no row of the humans' side (correlation_ci/).
A system left without a cell has no score in the replicate, whose
statistic is then undefined and left out of the interval, as for a
system without a weighted topic in the ``topics`` unit. A summary judged
without a named rater keeps its score in every replicate (no rater of it
can be drawn or missed).

The replicates are grouped by the human scores they give (:func:`distinct`:
raters who agree, or draws of the same raters, give the same scores), and
each group's statistics computed at once, by the statistics' own kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.measures import human as hu
from qarla_spark.measures import resampling as rs

#: the fewest named raters of a criterion with rows of the unit
MIN_RATERS = 2


@dataclass(frozen=True)
class RaterDesign:
    """One (task, criterion)'s ratings by named raters: the raters (sorted),
    the summaries they rated (``summaries``: (topic, summarizer), sorted),
    each rating's reading as ``nums[u, r] / den`` (an exact integer
    numerator, 0 where r did not rate u) and ``rated[u, r]`` (0 or 1)."""

    raters: Tuple[str, ...]
    summaries: Tuple[Tuple[str, str], ...]
    nums: np.ndarray
    rated: np.ndarray
    den: int

    def index(self) -> Dict[Tuple[str, str], int]:
        return {u: k for k, u in enumerate(self.summaries)}


def rater_design(topics: Sequence, summarizers: Sequence, raters: Sequence,
                 scores: Sequence[float]) -> Optional[RaterDesign]:
    """The :class:`RaterDesign` of one criterion's named ratings (one per
    (topic, summarizer, rater): the checks refuse a rater's second
    judgment of a summary); None with fewer than :data:`MIN_RATERS`
    raters."""
    names = tuple(sorted({str(r) for r in raters}))
    if len(names) < MIN_RATERS:
        return None
    summaries = tuple(sorted({(str(t), str(s)) for t, s in zip(topics, summarizers)}))
    u_at = {u: k for k, u in enumerate(summaries)}
    r_at = {r: k for k, r in enumerate(names)}
    readings = [hu.value(float(v)) for v in scores]
    den = math.lcm(*(f.denominator for f in readings)) if readings else 1
    nums = np.zeros((len(summaries), len(names)), dtype=object)
    rated = np.zeros((len(summaries), len(names)), dtype=np.int64)
    for t, s, r, f in zip(topics, summarizers, raters, readings):
        u, k = u_at[(str(t), str(s))], r_at[str(r)]
        nums[u, k] = f.numerator * (den // f.denominator)
        rated[u, k] = 1
    if not nums.size or int(np.abs(nums).max()) < 2 ** 40:
        nums = nums.astype(np.int64)
    return RaterDesign(names, summaries, nums, rated, int(den))


def rater_counts(seed: int, task: str, criterion: str, n_raters: int, n: int) -> np.ndarray:
    """(n × n_raters) int64: each rater's multiplicity in replicate b's draw,
    with replacement, of ``n_raters`` raters (positions from uniforms keyed
    by (seed, "raters", task, criterion, b))."""
    u = rs.uniforms_many(seed, [("raters", task, criterion, str(b)) for b in range(n)],
                         n_raters)                                     # n × R
    picks = np.minimum((u * n_raters).astype(np.int64), n_raters - 1)
    return (picks[:, :, None] == np.arange(n_raters)[None, None, :]).sum(axis=1) \
        .astype(np.int64)


def replicate_scores(design: RaterDesign, counts) -> np.ndarray:
    """(K × U) doubles: each summary's exact mean of its drawn raters'
    readings, each counted with its rater's multiplicity (``counts``, K ×
    R), rounded once; NaN where none of its raters was drawn."""
    counts = np.asarray(counts, dtype=np.int64)
    weight = counts @ design.rated.T                                     # K × U
    small = design.nums.dtype == np.int64 and \
        int(np.abs(design.nums).max(initial=0)) * int(counts.sum(axis=1).max(initial=0)) \
        < 2 ** 53 and int(weight.max(initial=0)) * design.den < 2 ** 53
    if small:
        # integers below 2^53: exact doubles, a correctly rounded quotient
        sums = counts.astype(np.float64) @ design.nums.T.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = sums / (weight * design.den).astype(np.float64)
    else:
        sums = counts.astype(object) @ design.nums.T.astype(object)
        out = rs._divide(sums, weight.astype(object) * design.den)
    out[weight == 0] = np.nan
    return out


def distinct(values) -> Tuple[List[np.ndarray], np.ndarray]:
    """The distinct rows of ``values`` (B × U doubles, NaN equal to NaN,
    bit for bit) in order of first appearance, and each row's group."""
    v = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    seen: Dict[bytes, int] = {}
    groups = np.empty(len(v), dtype=np.int64)
    firsts: List[np.ndarray] = []
    for b in range(len(v)):
        key = v[b].tobytes()
        g = seen.get(key)
        if g is None:
            g = seen[key] = len(firsts)
            firsts.append(v[b])
        groups[b] = g
    return firsts, groups


def design_scores(design: RaterDesign, seed: int, task: str, criterion: str,
                  n: int) -> Tuple[List[np.ndarray], np.ndarray]:
    """The distinct replicate scores of the design's summaries (U each,
    :func:`replicate_scores` of :func:`rater_counts`) and each replicate's
    group: the draws of the same multiplicities computed once, their
    distinct scores found among those draws (not among the B replicates)."""
    counts = rater_counts(seed, task, criterion, len(design.raters), n)
    unique, inverse = np.unique(counts, axis=0, return_inverse=True)
    values, group_of_draw = distinct(replicate_scores(design, unique))
    return values, group_of_draw[np.asarray(inverse).ravel()]


def summary_positions(design: RaterDesign, topics: Sequence, names: Sequence) -> np.ndarray:
    """Each (topic, summarizer) row's position among the design's summaries,
    -1 for a row none of whose ratings is by a named rater."""
    u_at = design.index()
    return np.asarray([u_at.get((str(t), str(s)), -1) for t, s in zip(topics, names)],
                      dtype=np.int64)


def with_drawn(found: np.ndarray, positions: np.ndarray, scores) -> np.ndarray:
    """The rows' human scores in one draw: a rated row's mean over its drawn
    raters (``found`` at its position: NaN when none was drawn), a row
    without a named rater its own score (``scores``)."""
    return np.where(positions >= 0, found[np.maximum(positions, 0)], scores)


def designs_of(topics: Sequence, summarizers: Sequence, criteria: Sequence,
               raters: Sequence, scores: Sequence[float]) -> Dict[str, RaterDesign]:
    """Each criterion's :class:`RaterDesign` of a task's named ratings (the
    criteria with :data:`MIN_RATERS` raters or more)."""
    by: Dict[str, list] = {}
    for t, s, c, r, v in zip(topics, summarizers, criteria, raters, scores):
        by.setdefault(str(c), []).append((t, s, r, v))
    out = {}
    for c, rows in sorted(by.items()):
        d = rater_design(*map(list, zip(*rows)))
        if d is not None:
            out[c] = d
    return out
