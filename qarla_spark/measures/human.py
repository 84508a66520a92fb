"""Human scores read exactly (issue 39, part 2; SPEC §1 and §11).

A human score arrives as a double, but what it stands for is often a
rational that no double holds: SummEval's scores are means of three
experts' integer ratings (14/3 arrives as 4.666666666666667), and a rating
written 4.67 means 467/100. Summed as doubles, two systems whose mean
scores are equal as rationals can come out one ulp apart, and a tie of the
humans is then decided by float noise.

**The reading of a double v** (:func:`fractions`): the simplest rational
p/q (smallest q) with q ≤ :data:`DENOMINATOR` whose correctly rounded double
is v, when |v| < :data:`MAGNITUDE`; otherwise v's own exact value. Every
rational within half an ulp of v with q ≤ DENOMINATOR is a convergent of v
(Legendre: |v − p/q| < 1/(2q²) for |v| < MAGNITUDE), so the convergents of v,
computed exactly in integers, find it. The reading is a function of the
double alone — the same everywhere, whichever other scores a table sees —
and rounds back to v, so a single score keeps its double bit for bit.

- a summary's human score is the exact mean of its raters' readings,
  rounded once (:func:`mean`);
- a system's (or a weighted replicate's) is the exact mean over its cells
  of the summaries' readings — not of their doubles —, rounded once
  (:func:`system_means`, :func:`means_by_key`);
- equal rationals are therefore equal doubles; two distinct rationals
  closer than half an ulp would be one double, as two measures' scores
  are (part 1: every comparison is of the published doubles).

How the means are computed depends on the readings of the values at hand
(:func:`reading`), never what they give: ``doubles`` when every value reads
as its own double (integer or dyadic ratings, real-valued scores: the exact
means of the doubles, as before), ``grid`` when every value reads as k/D
over one small common denominator D (thirds: D = 3; int64 numerators),
``exact`` otherwise (Python integers over the common denominator; slow,
for mixed inputs only).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.measures import exact

#: the largest denominator of a reading: ratings with up to three decimals,
#: means of up to 1,000 raters' integer ratings (of 10 raters' one-decimal
#: ratings). About 0.3·q² fractions of denominator ≤ q lie in a unit
#: interval: a real-valued double v reads as one of them (rounds from it)
#: with probability ≈ 0.3e6 · ulp(v), 7e-9 for |v| ≈ 100
DENOMINATOR = 1_000
#: scores of this magnitude or more read as their doubles (that chance
#: grows with ulp(v); and half an ulp stays far below Legendre's
#: 1/(2·DENOMINATOR²))
MAGNITUDE = 2.0 ** 12
#: the largest common denominator of the ``grid`` path
GRID_LIMIT = 2 ** 20

DOUBLES, GRID, EXACT = "doubles", "grid", "exact"


def fractions(values) -> Tuple[np.ndarray, np.ndarray]:
    """(p, q) int64 of each value's reading p/q (sign in p); q = 0 where
    the value reads as its own double (no p/q with q ≤ DENOMINATOR rounds
    to it, |v| ≥ MAGNITUDE, NaN or an infinity). A dyadic value with a small
    denominator (an integer, 2.5) reads as itself: q a power of two."""
    v = np.asarray(values, dtype=np.float64)
    flat = v.ravel()
    uniq, inv = np.unique(flat, return_inverse=True)
    p, q = _fractions_unique(uniq)
    inv = inv.ravel()
    return p[inv].reshape(v.shape), q[inv].reshape(v.shape)


#: sorted distinct values of at most this many are read through a cache
#: (:func:`_fractions_remembered`)
REMEMBERED_VALUES = 64


def _fractions_unique(u: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(p, q) of each of the sorted distinct values ``u``; a few values
    (a criterion's human scores: thirds of a Likert scale) remembered per
    worker by their bytes (:func:`_fractions_remembered`)."""
    u = np.asarray(u, dtype=np.float64)
    if u.ndim == 1 and u.size <= REMEMBERED_VALUES:
        return _fractions_remembered(u.tobytes())
    return _fractions_of(u)


@functools.lru_cache(maxsize=256)
def _fractions_remembered(key: bytes) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`_fractions_of` of the doubles whose bytes are ``key``, kept
    (read-only): a pure function of those doubles, ~0.1 ms a call that the
    chance and meta groups of every task made again on the same dozen
    values (issue 36)."""
    p, q = _fractions_of(np.frombuffer(key, dtype=np.float64))
    p.setflags(write=False)
    q.setflags(write=False)
    return p, q


def _fractions_of(u: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    n = u.size
    p_out = np.zeros(n, dtype=np.int64)
    q_out = np.zeros(n, dtype=np.int64)
    a = np.abs(u)
    ok = np.isfinite(a) & (a < MAGNITUDE)
    zero = ok & (a == 0)
    q_out[zero] = 1
    mant, ex = np.frexp(np.where(ok, a, 0.0))
    m = (mant * 2.0 ** 53).astype(np.int64)
    e = ex.astype(np.int64) - 53                      # a = m · 2^e
    # strip m's trailing zeros: m odd
    low = m & -m
    tz = np.where(m > 0, np.frexp(low.astype(np.float64))[1] - 1, 0)
    m = m >> tz
    e = e + tz
    integer = ok & ~zero & (e >= 0)
    p_out[integer] = m[integer] << e[integer]         # < 2^24
    q_out[integer] = 1
    frac = ok & ~zero & (e < 0)
    tiny = frac & (-e > 62)
    # below 1/(2·DENOMINATOR) no p/q with q ≤ DENOMINATOR is within an ulp:
    # the value is its double; between that and 2^-9, Python's integers
    for k in np.flatnonzero(tiny & (a >= 0.5 / DENOMINATOR)):
        f = _simplest_python(float(a[k]))
        if f is not None:
            p_out[k], q_out[k] = f.numerator, f.denominator
    run = np.flatnonzero(frac & ~tiny)
    if run.size:
        num = m[run].copy()
        den = np.left_shift(np.ones(run.size, dtype=np.int64), -e[run])
        target = a[run]
        p2 = np.zeros(run.size, dtype=np.int64)
        p1 = np.ones(run.size, dtype=np.int64)
        q2 = np.ones(run.size, dtype=np.int64)
        q1 = np.zeros(run.size, dtype=np.int64)
        fp = np.zeros(run.size, dtype=np.int64)
        fq = np.zeros(run.size, dtype=np.int64)
        active = np.ones(run.size, dtype=bool)
        while active.any():
            step = np.where(active, num // np.where(active, den, 1), 0)
            big = (q1 > 0) & (step > DENOMINATOR)
            s = np.where(big, 0, step)
            q_new = np.where(big, DENOMINATOR + 1, s * q1 + q2)
            p_new = s * p1 + p2
            within = active & (q_new <= DENOMINATOR)
            with np.errstate(invalid="ignore", divide="ignore"):
                hit = within & (p_new.astype(np.float64) / np.maximum(q_new, 1) == target)
            fp[hit], fq[hit] = p_new[hit], q_new[hit]
            rest = num - s * den
            active = within & ~hit & (rest != 0)
            num, den = den, np.where(active, rest, 1)
            p2, p1, q2, q1 = p1, p_new, q1, q_new
        p_out[run], q_out[run] = fp, fq
    return np.where(u < 0, -p_out, p_out), q_out


def _simplest_python(a: float) -> Optional[Fraction]:
    """The reading of one positive double by Python's fractions (the values
    whose binary denominator int64 cannot hold)."""
    f = Fraction(a).limit_denominator(DENOMINATOR)
    if f.numerator / f.denominator != a:
        return None
    # the best approximation within the bound may not be the simplest that
    # rounds to a: every such rational is a convergent (see the module)
    for g in _convergents(Fraction(a)):
        if g.denominator > DENOMINATOR:
            break
        if g.numerator / g.denominator == a:
            return g
    return f


def _convergents(x: Fraction):
    p2, p1, q2, q1 = 0, 1, 1, 0
    num, den = x.numerator, x.denominator
    while den:
        s = num // den
        p2, p1 = p1, s * p1 + p2
        q2, q1 = q1, s * q1 + q2
        yield Fraction(p1, q1)
        num, den = den, num - s * den


@functools.lru_cache(maxsize=1 << 16)
def _value_cached(v: float) -> Fraction:
    p, q = _fractions_unique(np.asarray([v], dtype=np.float64))
    return Fraction(int(p[0]), int(q[0])) if q[0] else Fraction(v)


def value(v: float) -> Fraction:
    """The reading of one finite double, a Fraction (its own exact value
    when it reads as itself)."""
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"a human score must be finite, not {v}")
    return _value_cached(v)


def mean(values: Sequence[float]) -> float:
    """A summary's human score over its raters: the exact mean of the
    readings of ``values``, rounded once; one value is itself, bit for bit
    (−0.0 included: its reading rounds back to it)."""
    if len(values) == 1:
        return values[0]
    total = exact.Mean()
    for v in values:
        total.add_fraction(value(v))
    return exact.to_float(total.value())


# ---------------------------------------------------------------------------
# many at once
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Reading:
    """The exact values of an array of scores (finite): ``kind`` DOUBLES —
    every value reads as its own double (``nums`` None); GRID — each is
    ``nums / den`` with int64 ``nums``, ``den`` ≤ GRID_LIMIT; EXACT — each
    is ``nums / den`` with Python integers (dtype object)."""

    kind: str
    nums: Optional[np.ndarray]
    den: int


def reading(values) -> Reading:
    """How ``values`` (finite doubles) are read (module doc)."""
    v = np.asarray(values, dtype=np.float64)
    if not v.size:
        return Reading(DOUBLES, None, 1)
    return reading_of(v, *fractions(v))


def fractions_many(values_list: Sequence) -> List[Tuple[np.ndarray, np.ndarray]]:
    """:func:`fractions` of each array of ``values_list``, every value's
    reading found once for them all (a value's reading is its own:
    the same (p, q)) — a task's criteria's human scores in one call
    instead of one each (issue 36)."""
    vs = [np.asarray(v, dtype=np.float64) for v in values_list]
    if not vs:
        return []
    p, q = fractions(np.concatenate([v.ravel() for v in vs]))
    ends = np.cumsum([v.size for v in vs])
    return [(p[e - v.size:e].reshape(v.shape), q[e - v.size:e].reshape(v.shape))
            for v, e in zip(vs, ends)]


def reading_of(v: np.ndarray, p: np.ndarray, q: np.ndarray) -> Reading:
    """:func:`reading` of ``v`` (finite doubles, not empty) whose
    :func:`fractions` are (``p``, ``q``)."""
    plain = (q == 0) | ((q & (q - 1)) == 0)       # a power of two: the double itself
    if plain.all():
        return Reading(DOUBLES, None, 1)
    if (q > 0).all():
        den = math.lcm(*(int(d) for d in np.unique(q)))
        if den <= GRID_LIMIT:
            nums = p * (den // q)                  # |p|/q < 2^24: below 2^44
            return Reading(GRID, nums, den)
    # mixed: every value over one common denominator, in Python integers
    parts = [value(float(x)) for x in v.ravel()]
    den = math.lcm(*(f.denominator for f in parts))
    nums = np.asarray([f.numerator * (den // f.denominator) for f in parts],
                      dtype=object).reshape(v.shape)
    return Reading(EXACT, nums, den)


def comparable(values, read: Optional[Reading] = None) -> np.ndarray:
    """Doubles whose sums and comparisons decide what the readings' would
    (for :func:`~qarla_spark.measures.resampling.signed_mean_at_least`,
    which decides exactly on the doubles it is given): the numerators k of
    the ``grid`` (each an integer below 2^44, its double exact: a positive
    scale changes no comparison of means), else the values themselves
    (``exact``: their doubles — a documented approximation for mixed
    inputs). ``read``: the :func:`reading` of the finite values (in
    row-major order) when the caller has it."""
    v = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(v)
    r = reading(v[finite]) if read is None else read
    if r.kind != GRID:
        return v
    out = np.full(v.shape, np.nan)
    out[finite] = r.nums.astype(np.float64)
    return out


def system_means(values, columns, n_columns: int, weights,
                 doubles: Callable) -> np.ndarray:
    """(B × n_columns): each column's weighted mean of the readings of its
    rows (``values`` finite, one per row; rows given as (topic position,
    column), distinct), exact and rounded once; ``doubles(values, columns,
    n_columns, weights)`` when every value reads as its double (the
    caller's exact means of doubles:
    :func:`~qarla_spark.measures.resampling.grouped_real_means` or its
    replicates' twin)."""
    return system_means_many(values, columns, n_columns, [weights], doubles)[0]


def system_means_many(values, columns, n_columns: int, weights_list: Sequence,
                      doubles: Callable, read: Optional[Reading] = None) -> list:
    """:func:`system_means` under each weight matrix of ``weights_list``
    (the same rows: their readings found once), in order; ``read``: the
    values' :func:`reading` when the caller has it."""
    v = np.asarray(values, dtype=np.float64)
    r = reading(v) if read is None else read
    return [_system_means_read(v, r, columns, n_columns, w, doubles) for w in weights_list]


def _system_means_read(v, r: "Reading", columns, n_columns: int, weights,
                       doubles: Callable) -> np.ndarray:
    from qarla_spark.measures import resampling as rs
    if r.kind == DOUBLES:
        return doubles(v, columns, n_columns, weights)
    if r.kind == GRID:
        return rs.grouped_ratio_means(r.nums, np.full(v.size, r.den, dtype=np.int64), columns,
                                      n_columns, weights)
    weights = np.asarray(weights, dtype=np.int64)
    topics, cols = (np.asarray(a, dtype=np.int64) for a in columns)
    matrix = np.zeros((weights.shape[1], n_columns), dtype=object)
    count = np.zeros((weights.shape[1], n_columns), dtype=np.int64)
    matrix[topics, cols] = r.nums
    count[topics, cols] = 1
    sums = weights.astype(object) @ matrix
    counts = (weights @ count).astype(object) * r.den
    return rs._divide(sums, counts)


def weighted_mean(values, weights) -> np.ndarray:
    """(B × 1): the weighted mean of the readings of ``values`` (T,) under
    each row of ``weights`` (B × T), exact and rounded once (one system's
    rows: :func:`system_means` of a single column)."""
    from qarla_spark.measures import resampling as rs
    v = np.asarray(values, dtype=np.float64).ravel()
    return system_means(
        v, (np.arange(v.size), np.zeros(v.size, dtype=np.int64)), 1, weights,
        lambda x, where, n, w: rs.weighted_real_means(x[:, None], w))


def means_by_key(keys: Sequence[Hashable], values) -> Dict[Hashable, float]:
    """key → the exact mean of the readings of its values, rounded once
    (a system's mean human score from its summaries' scores)."""
    v = np.asarray(values, dtype=np.float64)
    r = reading(v)
    found: Dict[Hashable, list] = {}
    for k, key in enumerate(keys):
        found.setdefault(key, []).append(k)
    out = {}
    for key, rows in found.items():
        if r.kind == DOUBLES:
            total = exact.Mean()
            for k in rows:
                total.add_real(float(v[k]))
            out[key] = exact.to_float(total.value())
        else:
            out[key] = int(sum(int(r.nums[k]) for k in rows)) / (len(rows) * int(r.den))
    return out
