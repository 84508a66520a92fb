"""Exact means: the same number whatever the order of the terms.

A float sum depends on the order of its terms, and Spark's order depends on
how the work is partitioned: summed that way, KING of TVM.256 and TVM.512
(both exactly 127/1100 on SummEval) came out one ulp apart, differently
from run to run, and the cluster representative flipped. So every mean the
measures report is computed exactly, as a rational number, and rounded once:

- a ratio of counts (QUEEN = passing samples / samples, KING's wins / cases,
  JACK's covered models / models, H = split pairs / pairs) enters as the
  integers themselves;
- a real value (a similarity, a human score) enters as the exact rational
  its double stands for.

:func:`to_float` rounds correctly (Python's integer true division), so equal
rationals give equal doubles and a strict ``>`` between two reported means
never holds when the exact values are equal.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Sequence, Tuple


def ratio(num: int, den: int) -> Fraction:
    if den == 0:
        raise ZeroDivisionError("a ratio of counts with a zero denominator")
    return Fraction(int(num), int(den))


def real(value: float) -> Fraction:
    """The exact value of a double (finite)."""
    return Fraction(float(value))


def mean(values: Iterable[Fraction]) -> Fraction:
    total = Mean()
    for v in values:
        total.add_fraction(v)
    return total.value()


def grouped_ratio_mean(rows: Iterable[Tuple[int, int, int]]) -> Fraction:
    """Mean of n ratios given grouped by denominator: rows of (sum of the
    numerators, their common denominator, how many ratios)."""
    total = Mean()
    for num, den, count in rows:
        total.add_ratio(num, den, count)
    return total.value()


def real_mean(values: Sequence[float]) -> float:
    """The mean of doubles, exact and rounded once; one value is itself
    (bit for bit, −0.0 included). A summary's human score over its raters
    (the checks' rows every stage reads, and the export)."""
    if len(values) == 1:
        return values[0]
    total = Mean()
    for v in values:
        total.add_real(v)
    return to_float(total.value())


def to_float(value: Fraction) -> float:
    """The double nearest to ``value`` (ties to even): correctly rounded."""
    return value.numerator / value.denominator


class Mean:
    """An exact mean built term by term: ratios of counts (grouped by their
    denominator, so that a million terms over a few denominators cost a few
    fractions), exact values of doubles, or fractions.

    The terms are kept as integers (numerators per denominator; the doubles'
    values as one integer over a power of two, since every finite double is
    m / 2^k) and become one fraction in :meth:`value`: a ``Fraction`` sum
    reduces by a gcd at every term (seconds per SummEval run)."""

    __slots__ = ("_by_den", "_bits", "_shift", "n")

    def __init__(self):
        self._by_den: dict = {}
        self._bits = 0          # the doubles' sum is _bits / 2^_shift
        self._shift = 0
        self.n = 0

    def add_ratio(self, num: int, den: int, count: int = 1) -> "Mean":
        """``count`` ratios over ``den`` whose numerators sum to ``num``."""
        if den == 0:
            raise ZeroDivisionError("a ratio of counts with a zero denominator")
        den = int(den)
        self._by_den[den] = self._by_den.get(den, 0) + int(num)
        self.n += int(count)
        return self

    def add_real(self, value: float) -> "Mean":
        num, den = float(value).as_integer_ratio()     # den = 2^k; inf/NaN raise
        self._add_dyadic(num, den)
        self.n += 1
        return self

    def add_fraction(self, value: Fraction) -> "Mean":
        if not isinstance(value, Fraction):
            value = Fraction(value)
        den = value.denominator
        if den & (den - 1) == 0:        # a power of two (every double's value)
            self._add_dyadic(value.numerator, den)
        else:
            self._by_den[den] = self._by_den.get(den, 0) + value.numerator
        self.n += 1
        return self

    def _add_dyadic(self, num: int, den: int) -> None:
        """Add num / den, den a power of two, to ``_bits / 2^_shift``."""
        k = den.bit_length() - 1
        if k > self._shift:
            self._bits <<= k - self._shift
            self._shift = k
        self._bits += num << (self._shift - k)

    def value(self) -> Fraction:
        if not self.n:
            raise ValueError("the mean of no value")
        common = math.lcm(1 << self._shift, *self._by_den)
        num = self._bits * (common >> self._shift)
        for den, s in self._by_den.items():
            num += s * (common // den)
        return Fraction(num, common * self.n)


# ---------------------------------------------------------------------------
# many exact means at once (numpy): sums of ratios per group
# ---------------------------------------------------------------------------

def ratio_sums(num, den, groups, n_groups: int):
    """Σ of num[r] / den[r] over the rows r of each group, exactly, as
    unreduced (numerators, denominators): ``num`` (N × S) or (N,) integers,
    ``den`` (N,) positive integers, ``groups`` (N,) in [0, n_groups). The
    numerators are (n_groups × S) — int64 when they fit, else Python
    integers (dtype object) —, the denominators (n_groups,) Python integers
    (the lcm of the group's denominators; 1 for a group without rows)."""
    import numpy as np
    num = np.asarray(num, dtype=np.int64)
    flat = num.ndim == 1
    num = num.reshape(-1, 1) if flat else num
    den = np.asarray(den, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    n_cols = num.shape[1]
    out_den = [1] * n_groups
    if not len(num):
        out = np.zeros((n_groups, n_cols), dtype=np.int64)
        return (out[:, 0] if flat else out), np.asarray(out_den, dtype=object)
    udens, dcode = np.unique(den, return_inverse=True)
    cell = groups * len(udens) + dcode.ravel()
    ucell, inv = np.unique(cell, return_inverse=True)
    order = np.argsort(inv.ravel(), kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inv.ravel()[order]) != 0])
    sums = np.add.reduceat(num[order], starts, axis=0)               # cells × S
    g_of = ucell // len(udens)
    d_of = udens[ucell % len(udens)]
    big = False
    parts = []
    for g in np.unique(g_of):
        at = np.flatnonzero(g_of == g)
        dens = [int(d) for d in d_of[at]]
        lcm = 1
        for d in dens:
            lcm = lcm * d // math.gcd(lcm, d)
        out_den[int(g)] = lcm
        factors = [lcm // d for d in dens]
        top = max(factors) * int(np.abs(sums[at]).max(initial=0)) * len(at)
        if top < 2 ** 62:
            value = sum(sums[i] * f for i, f in zip(at, factors))
        else:
            big = True
            value = sum(sums[i].astype(object) * f for i, f in zip(at, factors))
        parts.append((int(g), value))
    out = np.zeros((n_groups, n_cols), dtype=object if big else np.int64)
    for g, value in parts:
        out[g] = value
    return (out[:, 0] if flat else out), np.asarray(out_den, dtype=object)


def divide(nums, dens):
    """nums / dens, correctly rounded (``dens`` per row of ``nums``, or per
    element): float64 division when both sides are integers below 2^53
    (exact, so the quotient is correctly rounded), else Python's integer
    true division."""
    import numpy as np
    nums = np.asarray(nums)
    dens = np.asarray(dens, dtype=object)
    if nums.ndim == 2 and dens.ndim == 1:
        dens = dens[:, None]
    nums, dens = np.broadcast_arrays(nums, dens)
    if nums.size == 0:
        return np.zeros(nums.shape, dtype=np.float64)
    top_n = max(abs(int(x)) for x in (nums.max(), nums.min()))
    top_d = int(dens.max())
    if top_n < 2 ** 53 and top_d < 2 ** 53:
        return nums.astype(np.float64) / dens.astype(np.float64)
    flat = [int(a) / int(b) for a, b in zip(nums.ravel(), dens.ravel())]
    return np.asarray(flat, dtype=np.float64).reshape(nums.shape)


# ---------------------------------------------------------------------------
# sums of many ratios' doubles (numpy): fixed-point pieces
# ---------------------------------------------------------------------------

#: a double num / den (0 ≤ num ≤ den < 2^53, so 0 or ≥ 2^-53: its last bit
#: is worth ≥ 2^-106) times 2^FIXED_BITS is an integer
FIXED_BITS = 160
#: … cut in FIXED_LEVELS pieces of FIXED_CHUNK bits (int64 sums of up to
#: 2^35 of them are exact)
FIXED_CHUNK = 28
FIXED_LEVELS = 6


def fixed_parts(values):
    """(FIXED_LEVELS, *shape) int64: each double of ``values`` (0, or in
    [2^-107, 2^8)) times 2^FIXED_BITS, an integer, cut in FIXED_CHUNK-bit
    pieces, lowest first: sums of them over many values are exact sums of
    the doubles (:func:`fixed_value`)."""
    import numpy as np
    v = np.asarray(values, dtype=np.float64)
    mant, expo = np.frexp(v)
    m = (mant * 2.0 ** 53).astype(np.int64)                  # v = m · 2^(expo − 53)
    shift = expo.astype(np.int64) - 53 + FIXED_BITS          # v · 2^FIXED_BITS = m << shift
    nonzero = m != 0
    if (m < 0).any() or (nonzero & (shift < 0)).any() or \
            (nonzero & (shift + 53 > FIXED_CHUNK * FIXED_LEVELS)).any():
        raise ValueError("fixed_parts needs doubles 0 or in [2^-107, 2^8)")
    # piece l = F_l − F_(l+1)·2^FIXED_CHUNK, F_l = floor(v · 2^(FIXED_BITS −
    # FIXED_CHUNK·l)) (F_FIXED_LEVELS = 0: v < 2^8), in doubles, each step
    # exact — a power-of-two scaling (no overflow or underflow in the range
    # above), floor, and a difference that is a double itself (a piece below
    # 2^FIXED_CHUNK) — the bits of m << shift that integer shifts gave, in
    # fewer passes
    out = np.empty((FIXED_LEVELS,) + v.shape, dtype=np.int64)
    above = np.zeros_like(v)                                 # F_(l+1) · 2^FIXED_CHUNK
    floor = np.empty_like(v)
    for level in range(FIXED_LEVELS - 1, -1, -1):
        np.multiply(v, 2.0 ** (FIXED_BITS - FIXED_CHUNK * level), out=floor)
        np.floor(floor, out=floor)
        out[level] = floor - above
        np.multiply(floor, float(1 << FIXED_CHUNK), out=above)
    return out


def fixed_value(parts):
    """The integers (Python's, dtype object) that :func:`fixed_parts` (or
    sums of them, over the first axis's pieces) stand for, times
    2^FIXED_BITS."""
    import numpy as np
    parts = np.asarray(parts, dtype=np.int64)
    total = np.zeros(parts.shape[1:], dtype=object)
    for level in range(parts.shape[0]):
        total = total + parts[level].astype(object) * (1 << (FIXED_CHUNK * level))
    return total


# ---------------------------------------------------------------------------
# exact sums of many doubles per group (numpy): integer pieces
# ---------------------------------------------------------------------------

#: at most this many pieces a double for :func:`real_sums` (doubles whose
#: exponents span more: added one by one)
REAL_SUM_LEVELS = 80


def real_sums(values, groups, n_groups: int):
    """Σ of the doubles ``values[r]`` over the rows r of each group,
    exactly: a list of n_groups Fractions (0 for a group without rows), what
    a :class:`Mean` fed each double (``add_real``) holds times its count —
    without a Python integer per double: the doubles as integers on one
    common power of two, cut in pieces (:func:`~qarla_spark.measures.
    resampling.level_pieces`, what the statistics' exact sums use), each
    piece summed per group in int64 (exact: < 2^35 rows) and joined as
    Python integers once per group. A value not finite, or more than
    :data:`REAL_SUM_LEVELS` pieces: value by value in Python (what
    ``add_real`` raises, it raises)."""
    import numpy as np

    from qarla_spark.measures.resampling import level_pieces
    v = np.asarray(values, dtype=np.float64).ravel()
    groups = np.asarray(groups, dtype=np.int64).ravel()
    out = [Fraction(0)] * n_groups
    if not np.isfinite(v).all() or len(v) >= 2 ** 35:
        return _real_sums_one_by_one(v, groups, out)
    if not len(v):
        return out
    order = np.argsort(groups, kind="stable")
    g_sorted = groups[order]
    starts = np.flatnonzero(np.r_[True, np.diff(g_sorted) != 0])
    base, pieces = level_pieces(v[order])
    if len(pieces) > REAL_SUM_LEVELS:
        return _real_sums_one_by_one(v, groups, out)
    totals = [0] * len(starts)
    for level, piece in pieces:
        for k, s in enumerate(np.add.reduceat(piece, starts).tolist()):
            if s:
                totals[k] += s << level
    for total, g in zip(totals, g_sorted[starts].tolist()):
        out[g] = Fraction(total << base, 1) if base >= 0 else Fraction(total, 1 << -base)
    return out


def _real_sums_one_by_one(v, groups, out):
    """:func:`real_sums` a double at a time (Python's integers)."""
    for x, g in zip(v.tolist(), groups.tolist()):
        num, den = float(x).as_integer_ratio()     # inf/NaN raise, as add_real
        out[g] = out[g] + Fraction(num, den)
    return out
