"""Resampling over topics (issue 11; Deutsch, Dror & Roth 2021): bootstrap
intervals and paired permutation tests, pure numpy.

**Bootstrap (Poisson, over topics).** A replicate b gives every topic t of a
task a weight w_bt drawn from Poisson(1), independently, from a counter-based
generator keyed by (seed, task, topic): any executor regenerates the weights
of the topics it holds, whatever the partitioning, and no weight table
exists anywhere. (The multinomial bootstrap's weights are tied together by
their sum, so they need every topic's name in one place; the Poisson
bootstrap is its standard distributed twin — Hanley & MacGibbon 2006,
Chamandy et al. 2012 — with the same first-order behaviour.) A statistic
that is a mean over topics becomes the weighted mean Σ_t w_bt·x_t / Σ_t w_bt,
computed exactly (:func:`weighted_ratio_means`, :func:`weighted_real_means`)
so that the replicate whose weights are all 1 *is* the point value.

**Intervals**: percentile (2.5%, 97.5% of the replicates) and BCa (bias from
the share of replicates below the point value, acceleration from the
leave-one-topic-out jackknife) — :func:`intervals`.

**Paired tests (sign flips over topics).** When a difference of two
statistics is a mean over topics of per-topic differences d_t (KING of two
sets: the same topics and held-out models; AUC of two measures: the same
pairs), the null hypothesis "the two are exchangeable within each topic"
makes every sign pattern of the d_t equally likely; over P seeded sign
patterns s (and the observed one), the p-value is the mid-p
(½ + #{|Σ s_t d_t| > |Σ d_t|} + ½·#{|Σ s_t d_t| = |Σ d_t|}) / (1 + P)
(:func:`sign_flip_p`), the d_t as exact integers. The statistics are
integer counts, so ties with the observed value are frequent (and a sum's
parity never changes under sign flips): counting them whole makes the test
conservative and its p-values far from uniform under the null (measured: a
KS distance of 0.20 on 300 null testbeds, 19% of p-values exactly 1); the
mid-p (Lancaster 1961) is uniform within sampling error (0.04). Many
comparisons at once: the max-T adjustment (:func:`sign_flip_family`).
"""

from __future__ import annotations

import functools
import hashlib
import math
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

#: Poisson(1) cumulative probabilities P(X ≤ k), k = 0.. until 1 − P < 2^-60
_POISSON1_CDF = np.cumsum([math.exp(-1) / math.factorial(k) for k in range(20)])
ALPHA = 0.05


def _key(seed: int, *parts: str) -> int:
    text = "\x1f".join([str(int(seed)), *map(str, parts)]).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "little")


def _keys(seed: int, prefix: Sequence[str], lasts: Sequence[str]) -> list:
    """``[_key(seed, *prefix, last) for last in lasts]``: the same integers,
    the prefix's text hashed once (BLAKE2b's state copied: the digest of
    the whole text)."""
    head = hashlib.blake2b("\x1f".join([str(int(seed)), *map(str, prefix), ""]).encode("utf-8"),
                           digest_size=16)
    out = []
    for last in lasts:
        h = head.copy()
        h.update(str(last).encode("utf-8"))
        out.append(int.from_bytes(h.digest(), "little"))
    return out


def uniforms(seed: int, parts: Sequence[str], n: int) -> np.ndarray:
    """``n`` uniforms in [0, 1) from the stream keyed by (seed, parts): the
    raw 64-bit output of the Philox counter-based generator (stable across
    numpy versions, unlike its distributions), top 53 bits."""
    raw = np.random.Philox(key=_key(seed, *parts)).random_raw(n)
    return (np.asarray(raw, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def uniforms_many(seed: int, parts: Sequence[Sequence[str]], n: int) -> np.ndarray:
    """(len(parts) × n): row k = ``uniforms(seed, parts[k], n)``, the same
    doubles, every stream at once (:func:`~qarla_spark.measures.streams.
    philox_raw`: no numpy generator per stream)."""
    from qarla_spark.measures.streams import philox_raw
    parts = [tuple(p) for p in parts]
    if parts and all(len(p) >= 2 and p[:-1] == parts[0][:-1] for p in parts):
        # (one prefix, as every caller here: hashed once)
        keys = _keys(seed, parts[0][:-1], [p[-1] for p in parts])
    else:
        keys = [_key(seed, *p) for p in parts]
    raw = philox_raw(keys, n)
    return (raw >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def poisson_weights(seed: int, task: str, topics: Sequence[str], n: int) -> np.ndarray:
    """(n × |topics|) int64: Poisson(1) weights of each topic in replicates
    1..n (inverse CDF of :func:`uniforms`). Read-only: the same array
    serves every group of a task a worker computes (:func:`_cached`)."""
    return _poisson_weights(int(seed), str(task), tuple(topics), int(n))


def sign_flips(seed: int, task: str, topics: Sequence[str], n: int) -> np.ndarray:
    """(n × |topics|) int64 of ±1: the sign patterns of :func:`sign_flip_p`
    (read-only, as :func:`poisson_weights`)."""
    return _sign_flips(int(seed), str(task), tuple(topics), int(n))


def system_picks(seed: int, task: str, n_systems: int, n: int) -> np.ndarray:
    """(n × n_systems) int64: replicate b's draw, with replacement, of the
    positions of a task's ``n_systems`` systems (uniforms keyed by (seed,
    "systems", task, b)); read-only, as :func:`poisson_weights`."""
    return _system_picks(int(seed), str(task), int(n_systems), int(n))


def _cached(func):
    """A pure array function of hashable arguments, remembered for the
    last few arguments (the statistics stage asks for a task's weights once
    per set and criterion: 48,400 generator seedings for SummEval's
    correlations otherwise); its arrays are made read-only."""
    @functools.lru_cache(maxsize=8)
    def remembered(*args):
        out = func(*args)
        out.setflags(write=False)
        return out
    return remembered


@_cached
def _poisson_weights(seed: int, task: str, topics: Tuple[str, ...], n: int) -> np.ndarray:
    u = uniforms_many(seed, [("bootstrap", task, topic) for topic in topics], n)   # T × n
    return np.ascontiguousarray(np.searchsorted(_POISSON1_CDF, u, side="right").T
                                .astype(np.int64))


@_cached
def _sign_flips(seed: int, task: str, topics: Tuple[str, ...], n: int) -> np.ndarray:
    u = uniforms_many(seed, [("flip", task, topic) for topic in topics], n)        # T × n
    return np.ascontiguousarray(np.where(u < 0.5, -1, 1).T.astype(np.int64))


@_cached
def _system_picks(seed: int, task: str, n_systems: int, n: int) -> np.ndarray:
    if not n_systems:
        return np.zeros((n, 0), dtype=np.int64)
    u = uniforms_many(seed, [("systems", task, str(b)) for b in range(n)], n_systems)
    return np.minimum((u * n_systems).astype(np.int64), n_systems - 1)


def jackknife_weights(n_topics: int) -> np.ndarray:
    """(T × T): replicate i leaves topic i out."""
    return 1 - np.eye(n_topics, dtype=np.int64)


# ---------------------------------------------------------------------------
# exact weighted means
# ---------------------------------------------------------------------------

def _divide(num, den) -> np.ndarray:
    """Correctly rounded num / den for integer arrays (Python's integer true
    division, element by element in numpy's loop over objects), NaN where
    den is 0."""
    num = np.asarray(num, dtype=object)
    den = np.asarray(den, dtype=object)
    num, den = np.broadcast_arrays(num, den)
    zero = (den == 0).astype(bool)
    out = np.true_divide(num, np.where(zero, 1, den)).astype(np.float64)
    out[zero] = math.nan
    return out


def int_matmul(a, b) -> np.ndarray:
    """a @ b of int64 matrices, exactly (int64): by BLAS in doubles when
    every partial sum is an integer below 2^53 (bounded by the largest row
    sum of |a| times the largest |b|: each product and sum then exact, in
    any order), else numpy's integer product — the same integers, one
    BLAS call instead of numpy's unvectorised integer loop (issue 36: a
    task's 1,000 replicates of 1,023 sets)."""
    found = _exact_float_matmul(a, b)
    if found is not None:
        return found.astype(np.int64)
    return np.asarray(a, dtype=np.int64) @ np.asarray(b, dtype=np.int64)


def _exact_float_matmul(a, b) -> Optional[np.ndarray]:
    """:func:`int_matmul`'s product as the doubles it holds (each an integer
    below 2^53, exact) when its bound allows the BLAS product, else None:
    the callers that divide the sums in doubles skip the round trip
    through int64 (the same doubles)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if a.size and b.size:
        bound = int(np.abs(a).sum(axis=-1).max()) * int(np.abs(b).max())
        if bound < 2 ** 53:
            return a.astype(np.float64) @ b.astype(np.float64)
    return None


def weighted_ratio_means(nums, dens, weights) -> np.ndarray:
    """(B × S): for each replicate b and column s, Σ_t w_bt·nums[t, s]/dens[t]
    / Σ_t w_bt, exact and rounded once (NaN when every weight is 0).
    ``nums`` (T × S) integers, ``dens`` (T,) or (T × S) positive integers,
    ``weights`` (B × T) non-negative integers."""
    nums = np.asarray(nums, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    dens = np.broadcast_to(np.asarray(dens, dtype=np.int64).reshape(nums.shape[0], -1),
                           nums.shape)
    lcm = 1
    for d in np.unique(dens):
        lcm = lcm * int(d) // math.gcd(lcm, int(d))
    if lcm < 2 ** 62 and int(np.abs(nums).max(initial=0)) * lcm < 2 ** 62:
        scaled = nums * (lcm // dens)               # (int64: the same integers)
    else:
        scaled = nums.astype(object) * (lcm // dens.astype(object)).astype(object)
    bound = int(np.abs(nums).max(initial=0)) * lcm * int(weights.max(initial=0)) * nums.shape[0]
    counts = weights.sum(axis=1)[:, None] * lcm
    if bound < 2 ** 53 and lcm * int(counts.max(initial=0)) < 2 ** 53:
        # the sums as exact doubles (int_matmul's, without its round trip
        # through int64): the same quotients
        sums_f = _exact_float_matmul(weights, scaled.astype(np.int64))
        if sums_f is None:
            sums_f = int_matmul(weights, scaled.astype(np.int64)).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return sums_f / counts.astype(np.float64)
    if bound < 2 ** 62:
        sums = int_matmul(weights, scaled.astype(np.int64))
    else:
        sums = weights.astype(object) @ scaled
    return _divide(sums, counts)



def weighted_ratio_rows(nums, dens, weights) -> np.ndarray:
    """:func:`weighted_ratio_means` transposed (S × B, C-contiguous: a
    column's replicates in one row), the same doubles: with the sums exact
    in doubles, the product taken transposed (every sum an exact integer,
    in any order), else the means' own transposed."""
    nums = np.asarray(nums, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    dens_t = np.broadcast_to(np.asarray(dens, dtype=np.int64).reshape(nums.shape[0], -1),
                             nums.shape)
    lcm = 1
    for d in np.unique(dens_t):
        lcm = lcm * int(d) // math.gcd(lcm, int(d))
    top = int(np.abs(nums).max(initial=0))
    if nums.size and weights.size and lcm < 2 ** 62 and top * lcm < 2 ** 62:
        bound = top * lcm * int(weights.max(initial=0)) * nums.shape[0]
        counts = weights.sum(axis=1) * lcm
        scaled = nums * (lcm // dens_t)
        if bound < 2 ** 53 and lcm * int(counts.max(initial=0)) < 2 ** 53 and \
                int(np.abs(weights).sum(axis=-1).max()) * int(np.abs(scaled).max()) < 2 ** 53:
            sums = scaled.T.astype(np.float64) @ weights.T.astype(np.float64)     # S × B
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.divide(sums, counts.astype(np.float64)[None, :], out=sums)
    return np.ascontiguousarray(weighted_ratio_means(nums, dens, weights).T)


_CHUNK = 28


def weighted_real_means(values, weights) -> np.ndarray:
    """(B × S): Σ_t w_bt·values[t, s] / Σ_t w_bt for finite doubles, exact
    (the doubles' exact values) and rounded once (:func:`_real_sums`)."""
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.int64)
    if not np.isfinite(values).all():
        raise ValueError("weighted_real_means needs finite values")
    return _exact_means(values, weights, weights.sum(axis=1)[:, None])


def weighted_present_means(values, present, weights) -> np.ndarray:
    """(B × S): Σ_t w_bt·values[t, s] / Σ_t w_bt·present[t, s] of finite
    doubles, exact and rounded once; ``present`` (T × S, 0 or 1) says which
    rows a column has (``values`` 0 elsewhere); NaN for a column without a
    weighted row."""
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.int64)
    if not np.isfinite(values).all():
        raise ValueError("weighted_present_means needs finite values")
    return _exact_means(values, weights, weights @ np.asarray(present, dtype=np.int64))


def column_present_means(values) -> np.ndarray:
    """(S,): the exact mean of each column's finite doubles (T × S; NaN and
    infinities left out), rounded once; NaN for a column without one —
    :func:`weighted_present_means` of the finite values with every weight
    1 (the reference, kept: :func:`_column_present_means_reference`), the
    same doubles, compiled column by column
    (:func:`~qarla_spark.measures.exact_division.present_means`, issue
    36); the columns it leaves (subnormal results), and every column
    without numba, by the reference."""
    from qarla_spark.measures import exact_division
    values = np.asarray(values, dtype=np.float64)
    found = exact_division.present_means(values)
    if found is None:
        return _column_present_means_reference(values)
    means, done = found
    if not done.all():
        left = np.flatnonzero(~done)
        means[left] = _column_present_means_reference(values[:, left])
    return means


def _column_present_means_reference(values) -> np.ndarray:
    """:func:`column_present_means` by :func:`weighted_present_means` (a
    column's mean does not depend on the other columns)."""
    values = np.asarray(values, dtype=np.float64)
    present = np.isfinite(values)
    return weighted_present_means(np.where(present, values, 0.0), present.astype(np.int64),
                                  np.ones((1, values.shape[0]), dtype=np.int64))[0]


def real_means(values) -> np.ndarray:
    """The mean of each row of doubles (the last axis), exact and rounded
    once (:func:`weighted_real_means` with every weight 1); NaN for a row
    holding a NaN or an infinity, or no value."""
    values = np.asarray(values, dtype=np.float64)
    flat = values.reshape(math.prod(values.shape[:-1]), values.shape[-1])
    out = np.full(flat.shape[0], np.nan)
    ok = np.isfinite(flat).all(axis=1)
    if flat.shape[1] and ok.any():
        out[ok] = weighted_real_means(flat[ok].T, np.ones((1, flat.shape[1]), dtype=np.int64))[0]
    return out.reshape(values.shape[:-1])


def nan_real_means(values) -> np.ndarray:
    """The mean of each row's values (the last axis) with the NaN values
    left out, as numpy's ``nanmean``, but exact (the doubles' exact values
    summed as integers: :func:`level_parts`) and rounded once; NaN for a
    row without a value; infinities refused. A summary's score under a
    similarity metric — its mean similarity to the topic's models — is
    this function's, wherever it is computed (HBR's topic scores, hence
    the statistics' inputs, and the export): one double per (summary,
    measure) (issue 39)."""
    values = np.asarray(values, dtype=np.float64)
    shape = values.shape[:-1]
    flat = values.reshape(math.prod(shape), values.shape[-1])
    present = ~np.isnan(flat)
    if np.isinf(flat).any():
        raise ValueError("nan_real_means needs finite values or NaN")
    counts = present.sum(axis=1)
    out = np.full(flat.shape[0], np.nan)
    ok = counts > 0
    if ok.any():
        terms = np.where(present, flat, 0.0)[ok].T                  # row terms × rows
        out[ok] = _exact_means(terms, np.ones((1, terms.shape[0]), dtype=np.int64),
                               counts[ok][None, :])[0]
    return out.reshape(shape)


def grouped_nan_real_means(values, groups, n_groups: int) -> np.ndarray:
    """(n_groups × C), or (n_groups,) for ``values`` (N,): the exact mean of
    each group's rows of ``values`` (N × C), column by column, NaN values
    left out, rounded once (:func:`nan_real_means` of the groups' rows
    side by side); NaN for a group without a value."""
    values = np.asarray(values, dtype=np.float64)
    flat = values.ndim == 1
    v = values[:, None] if flat else values
    groups = np.asarray(groups, dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    g = groups[order]
    counts = np.bincount(groups, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    padded = np.full((n_groups, v.shape[1], max(int(counts.max(initial=0)), 1)), np.nan)
    padded[g, :, np.arange(len(g)) - starts[g]] = v[order]
    out = nan_real_means(padded)
    return out[:, 0] if flat else out


def _divide_scaled(sums, base: int, counts) -> np.ndarray:
    """(sums · 2^base) / counts, exact and rounded once."""
    if base >= 0:
        return _divide(sums * (1 << base), counts)
    return _divide(sums, counts * (1 << -base))


def level_pieces(values, chunk: int = None):
    """(base, [(level, piece)]): finite doubles (T × S) as exact integers
    times 2^base, cut in ``chunk``-bit pieces (default 28): ``piece`` (T ×
    S int64, signed) holds the bits [level, level + chunk) of each value's
    magnitude (levels without a nonzero piece left out). What
    :func:`level_parts` sums over topics, and the compiled counts of
    :func:`signed_mean_at_least` sum themselves."""
    chunk = _CHUNK if chunk is None else int(chunk)
    values = np.asarray(values, dtype=np.float64)
    mant, expo = np.frexp(values)
    ints = (mant * 2.0 ** 53).astype(np.int64)
    expo = expo.astype(np.int64) - 53
    nonzero = ints != 0
    negative = ints < 0
    magnitude = np.abs(ints)
    # each value as odd × 2^e: short doubles (k / 2^24, Likert means of few
    # judgments) then need few 28-bit levels
    low_bit = magnitude & -magnitude
    zeros = np.where(nonzero, np.frexp(low_bit.astype(np.float64))[1] - 1, 0)
    magnitude = magnitude >> zeros
    expo = expo + zeros
    base = int(expo[nonzero].min()) if nonzero.any() else 0
    shift = np.where(nonzero, expo - base, 0)
    length = np.where(nonzero, np.frexp(magnitude.astype(np.float64))[1], 0)
    top = int((shift + length).max(initial=0))
    mask = (1 << chunk) - 1
    pieces = []
    for level in range(0, top, chunk):
        # piece of |ints| << shift at bits [level, level + chunk)
        lo = level - shift                                  # bit of |ints| at this level
        piece = np.where(lo >= 0, magnitude >> np.clip(lo, 0, 63),
                         magnitude << np.clip(-lo, 0, 63)) & mask
        piece = np.where(lo <= 53, piece, 0)
        if not piece.any():
            continue
        pieces.append((level, np.where(negative, -piece, piece)))
    return base, pieces


def level_parts(values, weights, chunk: int = None):
    """(base, [(level, part)], small): Σ_t w_bt·values[t, s] of finite doubles
    as exact int64 partial sums — each value is an integer times 2^e (a
    common e = ``base``), cut in ``chunk``-bit pieces (default 28,
    :func:`level_pieces`); ``part`` (B × S) sums the pieces at bits [level,
    level + chunk) (exact: int64 products, or double products of integers
    below 2^53 when the weights allow); ``small``: whether those doubles
    were used (every weight sum below 2^(53 − chunk)). Public: the planning
    measures build their exact comparisons on it
    (:mod:`qarla_spark.measures.planning`)."""
    chunk = _CHUNK if chunk is None else int(chunk)
    weights = np.asarray(weights, dtype=np.int64)
    base, pieces = level_pieces(values, chunk)
    small = weights.size == 0 or int(np.abs(weights).sum(axis=1).max()) < 2 ** (53 - chunk)
    weights_f = weights.astype(np.float64)
    parts = []
    for level, signed in pieces:
        # integers below 2^53 at every step: a double matrix product is exact
        parts.append((level, (weights_f @ signed.astype(np.float64)).astype(np.int64) if small
                      else weights @ signed))
    return base, parts, small


def _real_sums(values, weights):
    """(sums, base): the exact Σ_t w_bt·values[t, s] of finite doubles as
    Python integers, sums · 2^base (:func:`level_parts` put back together
    as Python integers)."""
    base, parts, _ = level_parts(values, weights)
    return _joined(parts, (np.shape(weights)[0], np.shape(values)[1])), base


def _joined(parts, shape) -> np.ndarray:
    """:func:`level_parts`' parts as one Python integer per entry."""
    sums = np.zeros(shape, dtype=object)
    for level, part in parts:
        sums = sums + part.astype(object) * (1 << level)
    return sums


def _exact_means(values, weights, counts) -> np.ndarray:
    """(B × S): Σ_t w_bt·values[t, s] / counts[b, s] of finite doubles,
    exact and rounded once (NaN where the count is 0): compiled
    (:func:`~qarla_spark.measures.exact_division.quotients`, issue 36),
    the entries it leaves — and every entry without numba — by Python's
    integers (:func:`_divide_scaled`), the same doubles."""
    from qarla_spark.measures import exact_division
    weights = np.asarray(weights)
    unit = None
    if weights.shape[0] == 1 and weights.size and (weights == 1).all():
        # every weight 1 (a plain mean over the rows): the same parts compiled
        unit = exact_division.unit_parts(values)
    base, parts = unit if unit is not None else level_parts(values, weights)[:2]
    shape = (np.shape(weights)[0], np.shape(values)[1])
    counts = np.broadcast_to(np.asarray(counts), shape)
    found = exact_division.quotients(parts, base, counts)
    if found is not None and found[1].all():
        return found[0]
    out = _divide_scaled(_joined(parts, shape), base, counts.astype(object))
    if found is not None:       # (the same doubles where both divided)
        out = np.where(found[1], found[0], out)
    return out


def replicate_sums(values, weights) -> np.ndarray:
    """(B × S) doubles: Σ_t w_bt·values[t, s] of finite doubles, for many
    replicates, deterministically: the exact integer partial sums of
    :func:`level_parts` (each below 2^53, so exact as doubles) added in
    doubles from the highest level down, in that fixed order — the same
    bits on any machine, within a few ulp of the exact sum, without the
    Python integers of :func:`_real_sums` (10x faster on 1,000 replicates
    of a thousand columns). For the replicates of a statistic; its point
    value keeps the exact, once-rounded means."""
    weights = np.asarray(weights, dtype=np.int64)
    small = weights.size == 0 or int(np.abs(weights).sum(axis=1).max()) < 2 ** (53 - _CHUNK)
    if not small:
        sums, base = _real_sums(values, weights)
        return _divide_scaled(sums, base, np.ones(sums.shape, dtype=object))
    base, pieces = level_pieces(values)
    from qarla_spark.measures import meta_kernels
    found = meta_kernels.replicate_sums(weights, pieces, base)
    if found is not None:       # the same doubles, compiled (one pass a row)
        return found
    weights_f = weights.astype(np.float64)
    out = np.zeros((weights.shape[0], np.shape(values)[1]))
    part = np.empty_like(out)
    for level, piece in reversed(pieces):
        # level_parts' part as the double it is (an integer below 2^53:
        # exact), without its round trip through int64; in place (the same
        # doubles: a B × S array of 8 MB is not allocated three times a level)
        np.matmul(weights_f, piece.astype(np.float64), out=part)
        np.ldexp(part, level + base, out=part)
        out += part
    return out


def signed_mean_at_least(values, cells, signs) -> np.ndarray:
    """(S × S) int64, or (K × S × S) for ``values`` T × S × K:
    at_least[i, j] = #{b : r_bi − r_bj ≥ o_i − o_j}, decided exactly, for
    the means o_s = Σ_t v_ts / n_s over the n_s cells of column s
    (``cells``: T × S bool; ``values`` read at cells only) and their
    flipped r_bs = Σ_t s_bt·v_ts / n_s (``signs``: B × T of ±1) — the
    counts of :func:`~qarla_spark.measures.meta_eval.pairwise_p_values`
    without comparing rounded means (a null difference equal to the
    observed one, frequent with Likert scores, counts whole). With A_bs =
    Σ_{t: s_bt = −1} v_ts, the condition is n_j·A_bi ≤ n_i·A_bj: the exact
    int64 level sums of :func:`level_parts`, their carries propagated from
    the lowest level up."""
    single, cube, cells, signs = _signed_inputs(values, cells, signs)
    n_t, n_s, n_k = cube.shape
    n_b = signs.shape[0]
    counts = cells.sum(axis=0).astype(np.int64)
    if n_s:
        found = _at_least_two_levels(cube, signs, counts)
        if found is not None:
            return found[0] if single else found
    base, parts, _ = level_parts(cube.reshape(n_t, n_s * n_k), (signs < 0).astype(np.int64))
    # each level's sums as K × S × B (the replicates contiguous), in blocks
    # of measures of ~256K pair comparisons (measured 3-4x faster than
    # B × pairs × K arrays of ~100 MB)
    equal = bool((counts == counts[0]).all()) if n_s else True
    from qarla_spark.measures import pair_counts
    if pair_counts.BACKEND == "numba" and n_s and parts:
        # the same carries, compiled: every level of a replicate at hand
        top = max(level for level, _ in parts)
        dense = np.zeros((top // _CHUNK + 1, n_b, n_s, n_k), dtype=np.int64)
        for level, part in parts:
            dense[level // _CHUNK] = part.reshape(n_b, n_s, n_k)
        found = pair_counts.at_least_carried(dense, counts, equal, _CHUNK)
        return found[0] if single else found
    by_level = {level: np.ascontiguousarray(part.reshape(n_b, n_s, n_k).transpose(2, 1, 0))
                for level, part in parts}
    levels = sorted(by_level) or [0]
    i, j = np.triu_indices(n_s, 1)
    out = np.full((n_k, n_s, n_s), n_b, dtype=np.int64)
    step = max(1, (1 << 18) // max(1, n_b * i.size))
    mask = (1 << _CHUNK) - 1
    for k0 in range(0, n_k, step):
        ks = slice(k0, k0 + step)
        n_ks = len(range(n_k)[ks])
        if len(levels) == 1:
            # one level (short doubles, e.g. scores on a grid): the sums are
            # int64 (|A| < 2^44, n < 2^16), compared directly
            a = by_level.get(levels[0], np.zeros((n_k, n_s, n_b), dtype=np.int64))[ks]
            d = a[:, i] - a[:, j] if equal else (a[:, i] * counts[j, None]
                                                 - a[:, j] * counts[i, None])
            out[ks, i, j] = np.count_nonzero(d <= 0, axis=2)
            out[ks, j, i] = np.count_nonzero(d >= 0, axis=2)
            continue
        carry = np.zeros((n_ks, i.size, n_b), dtype=np.int64)
        rest = np.zeros(carry.shape, dtype=bool)        # a nonzero bit below the carry
        for level in range(0, levels[-1] + 1, _CHUNK):
            part = by_level.get(level)
            if part is not None:
                a = part[ks]
                carry = carry + (a[:, i] - a[:, j] if equal else
                                 a[:, i] * counts[j, None] - a[:, j] * counts[i, None])
            rest |= (carry & mask) != 0
            carry = carry >> _CHUNK                     # floor: the bits kept are ≥ 0
        # Σ_level (n_j·A_bi − n_i·A_bj)·2^level = carry·2^top' + (bits kept: ≥ 0, < 2^top')
        out[ks, i, j] = np.count_nonzero((carry < 0) | ((carry == 0) & ~rest), axis=2)
        out[ks, j, i] = np.count_nonzero(carry >= 0, axis=2)
    return out[0] if single else out


def _signed_inputs(values, cells, signs):
    """(single, cube T × S × K with 0 outside the cells, cells, signs) of
    :func:`signed_mean_at_least`'s arguments, checked."""
    cells = np.asarray(cells, dtype=bool)
    values = np.asarray(values, dtype=np.float64)
    single = values.ndim == 2
    cube = values[:, :, None] if single else values
    n_t, n_s, n_k = cube.shape
    signs = np.asarray(signs, dtype=np.int64)
    if signs.ndim != 2 or signs.shape[1] != n_t or not (np.abs(signs) == 1).all():
        raise ValueError("signs must be (replicates × topics) of ±1")
    if cells.shape != (n_t, n_s):
        raise ValueError("cells must be (topics × columns)")
    cube = np.where(cells[:, :, None], cube, 0.0)
    if not np.isfinite(cube).all():
        raise ValueError("signed_mean_at_least needs finite values")
    if n_t >= 2 ** 16:
        raise ValueError("too many topics for int64 comparisons")
    return single, cube, cells, signs


def signed_mean_at_least_upper(values, cells, signs) -> np.ndarray:
    """The counts of :func:`signed_mean_at_least` of the pairs i < j only
    (``np.triu_indices`` order): (K × S(S−1)/2), or (S(S−1)/2,) for
    ``values`` T × S — what soft pairwise accuracy reads. The same
    integers: when every column's values are one level of integers (53
    bits, as :func:`level_pieces` would cut them) whose keys m_s·A_bs (m = lcm(n)/n_s) stay
    below 2^53, counted over the distinct sign patterns
    (:func:`~qarla_spark.measures.pair_counts.at_least_upper`: the
    condition n_j·A_bi ≤ n_i·A_bj itself, decided on exact integers); else
    :func:`signed_mean_at_least`'s upper triangle."""
    single, cube, cells, signs = _signed_inputs(values, cells, signs)
    n_t, n_s, n_k = cube.shape
    counts = cells.sum(axis=0).astype(np.int64)
    found = None
    if n_s > 1 and signs.shape[0] and counts.all():
        found = _upper_one_level(cube, signs, counts)
    if found is None:
        i, j = np.triu_indices(n_s, 1)
        found = signed_mean_at_least(cube, cells, signs)[:, i, j]
    return found[0] if single else found


def _upper_one_level(cube, signs, counts) -> Optional[np.ndarray]:
    """:func:`signed_mean_at_least_upper` of one level of integers, or None
    (the caller's general path)."""
    n_t, n_s, n_k = cube.shape
    flat = cube.reshape(n_t, n_s * n_k)
    top = float(np.abs(flat).max(initial=0.0))
    low = np.zeros(flat.shape, dtype=np.int64)
    if top > 0.0:
        # one level of 53 bits holds every value iff each is a multiple of
        # 2^(e − 53), e the exponent of the largest: then each is that
        # integer (scaled by a power of two: exact), less the trailing zeros
        # they all share (one positive scale of every value: the same
        # comparisons)
        shift = 53 - int(np.frexp(top)[1])
        first = np.ldexp(flat[:1], shift)
        if not (np.floor(first) == first).all():
            return None                     # (doubles of full precision: at once)
        scaled = np.ldexp(flat, shift)
        low = scaled.astype(np.int64)
        if not (low == scaled).all() or \
                (shift < 0 and not (np.ldexp(scaled, -shift) == flat).all()):
            return None                     # (scaled down: no value lost below)
        shared = int(np.bitwise_or.reduce(low, axis=None))
        low >>= (shared & -shared).bit_length() - 1
    from qarla_spark.measures import pair_counts
    lcm = math.lcm(*(int(c) for c in counts))
    reach = np.abs(low).astype(np.float64).sum(axis=0).reshape(n_s, n_k)
    if lcm < 2 ** 52:
        scale = np.asarray([lcm // int(c) for c in counts], dtype=np.int64)
        # every key and partial sum below 2^53 (a bound in doubles, with room)
        if float((reach * scale[:, None].astype(np.float64)).max(initial=0.0)) < 2.0 ** 52:
            patterns, mult = _distinct_patterns((signs < 0).astype(np.int64))
            return pair_counts.at_least_upper(low.reshape(n_t, n_s, n_k), patterns, mult,
                                              scale)
    # no common scale within 53 bits (columns of many unequal counts: their
    # lcm): the condition n_j·A_bi ≤ n_i·A_bj with each side's product
    # itself, when every n_s·A_bs is below 2^53
    if float((reach * counts[:, None].astype(np.float64)).max(initial=0.0)) >= 2.0 ** 52:
        return None
    patterns, mult = _distinct_patterns((signs < 0).astype(np.int64))
    return pair_counts.at_least_upper_cross(low.reshape(n_t, n_s, n_k), patterns, mult,
                                            counts)


def _distinct_patterns(flips) -> Tuple[np.ndarray, np.ndarray]:
    """(patterns P × T, how many rows drew each P) of rows of 0/1: each row
    read as a T-bit number when T < 63 (one sort of B integers; numpy's
    unique of rows sorts B × T), else numpy's unique of rows. The order of
    the patterns is never read (their counts are summed)."""
    n_t = flips.shape[1]
    if n_t >= 63:
        return np.unique(flips, axis=0, return_counts=True)
    codes, mult = np.unique(flips @ (np.int64(1) << np.arange(n_t, dtype=np.int64)),
                            return_counts=True)
    patterns = (codes[:, None] >> np.arange(n_t, dtype=np.int64)[None, :]) & 1
    return patterns, mult


def _at_least_two_levels(cube, signs, counts) -> Optional[np.ndarray]:
    """:func:`signed_mean_at_least` (K × S × S) when the sums A fit two
    levels of as many bits as the flips allow (53 less the bits of the
    topics' count), c bits each: n_j·A_bi ≤ n_i·A_bj is A_bi·m_i ≤ A_bj·m_j
    with m_s = lcm(n)/n_s, and each system's A·m = hi·2^c + lo exactly, with
    ``lo`` in [0, 2^c) once its carry moves to ``hi`` (int64, checked not to
    overflow), so the comparison is (hi, lo) in lexicographic order. None
    when it does not apply (the caller's exact path). The counts:
    :func:`~qarla_spark.measures.pair_counts.at_least_levels` (issue 36)."""
    n_t, n_s, n_k = cube.shape
    n_b = signs.shape[0]
    flips = (signs < 0).astype(np.int64)
    chunk = 53 - max(1, int(flips.sum(axis=1).max(initial=0))).bit_length() - 1
    # (the sums below stay under 2^53: "small", as level_parts says)
    base, pieces = level_pieces(cube.reshape(n_t, n_s * n_k), chunk)
    by_piece = dict(pieces)
    if not set(by_piece) <= {0, chunk}:                  # (an empty level is left out)
        return None
    lcm = math.lcm(*(int(c) for c in counts))
    scale = np.asarray([lcm // int(c) for c in counts], dtype=np.int64)
    top = int(scale.max(initial=1))
    # |lo|·m < 2^(53 + bits(m))
    if 53 + top.bit_length() >= 62:
        return None
    from qarla_spark.measures import pair_counts
    high_p = by_piece.get(chunk)
    # a bound of |hi| (every topic's piece counted): its carries within int64
    bound = int(np.abs(high_p).sum(axis=0).max(initial=0)) if high_p is not None else 0
    if pair_counts.BACKEND == "numba" and (bound + 2) * top < 2 ** 60:
        # the counts of the distinct sign patterns, each as many times as it
        # was drawn: the same integers as the replicates' (issue 36)
        patterns, mult = _distinct_patterns(flips)
        zero = np.zeros((n_t, n_s * n_k), dtype=np.int64)
        return pair_counts.at_least_patterns(
            by_piece.get(0, zero).reshape(n_t, n_s, n_k),
            high_p.reshape(n_t, n_s, n_k) if high_p is not None else None,
            patterns, mult, scale, chunk)
    parts = [(level, (flips.astype(np.float64) @ piece.astype(np.float64)).astype(np.int64))
             for level, piece in pieces]
    by_level = dict(parts)
    zero = np.zeros((n_b, n_s * n_k), dtype=np.int64)
    high = by_level.get(chunk, zero).reshape(n_b, n_s, n_k)
    low = by_level.get(0, zero).reshape(n_b, n_s, n_k)
    # |hi|·m plus the carries within int64
    if (int(np.abs(high).max(initial=0)) + 2) * top >= 2 ** 60:
        return None
    from qarla_spark.measures.pair_counts import at_least_levels
    # out[k, i, j] = #{b : n_j·A_bi ≤ n_i·A_bj}
    return at_least_levels(low, high if chunk in by_level else None, scale, chunk)


def grouped_ratio_means(nums, dens, columns, n_columns: int, weights):
    """(B × n_columns): for each replicate b and column s, the exact weighted
    mean Σ w_b,t(r)·num_r/den_r / Σ w_b,t(r) over the rows r of column s
    (``columns[r]``), each row at a topic ``topics`` position — rows given
    as (topic position, column): :func:`weighted_ratio_means` of every
    column at once, the same numbers (exact, rounded once). ``nums``,
    ``dens`` per row; ``weights`` (B × T). Rows (topic, column) must be
    distinct."""
    topics, cols = (np.asarray(a, dtype=np.int64) for a in columns)
    nums = np.asarray(nums, dtype=np.int64)
    dens = np.asarray(dens, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    n_topics = weights.shape[1]
    # each column's common denominator (the lcm of its rows'), at once
    lcms = np.ones(n_columns, dtype=np.int64)
    if cols.size:
        order = np.argsort(cols, kind="stable")
        starts = np.flatnonzero(np.r_[True, cols[order][1:] != cols[order][:-1]])
        lcms[cols[order][starts]] = np.lcm.reduceat(dens[order], starts)
    factor = lcms[cols] // dens
    wide = float(np.abs(nums).max(initial=0)) * float(factor.max(initial=1))
    count = np.zeros((n_topics, n_columns), dtype=np.int64)
    count[topics, cols] = 1
    if wide * max(1, n_topics) * float(weights.max(initial=0)) < 2.0 ** 60 and \
            float(lcms.max(initial=1)) * float(weights.sum(axis=1).max(initial=0)) < 2.0 ** 60:
        # int64 throughout: every quotient correctly rounded at once
        # (exact_division, or Python's integers without it) — the doubles
        # of the exact path, and of the double path where its integers are
        # below 2^53 (a correctly rounded quotient either way)
        matrix = np.zeros((n_topics, n_columns), dtype=np.int64)
        matrix[topics, cols] = nums * factor
        sums_f = _exact_float_matmul(weights, matrix)
        counts_f = _exact_float_matmul(weights, count)
        if sums_f is not None and counts_f is not None and \
                float(lcms.max(initial=1)) * float(counts_f.max(initial=0)) < 2.0 ** 53:
            # every sum and count an integer below 2^53, exact as a double:
            # their IEEE quotient is the correctly rounded one (never
            # subnormal: |sum| ≥ 1 or 0), the doubles of the exact division
            counts = counts_f * lcms[None, :].astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                out = sums_f / counts
        else:
            sums = int_matmul(weights, matrix)
            counts = int_matmul(weights, count) * lcms[None, :]
            from qarla_spark.measures import exact_division
            found = exact_division.quotients([(0, sums)], 0, counts)
            if found is not None and found[1].all():
                out = found[0]
            else:
                out = _divide(sums.astype(object), counts.astype(object))
    else:
        scaled = nums.astype(object) * factor.astype(object)
        matrix = np.zeros((n_topics, n_columns), dtype=object)
        matrix[topics, cols] = scaled
        sums = weights.astype(object) @ matrix
        counts = (weights @ count).astype(object) * lcms.astype(object)[None, :]
        out = _divide(sums, counts)
    empty = np.asarray(counts == 0, dtype=bool)
    if empty.any():
        # a column without weight is NaN: the double quotient's NaN in the
        # columns whose integers are small enough for it (weighted_ratio_means'
        # bound), math.nan in the others — kept, so that every bit stays
        small = np.zeros(n_columns, dtype=bool)
        w_sums = int_matmul(weights, count).max(axis=0, initial=0)
        for s in np.flatnonzero(empty.any(axis=0)):         # (Python integers: exact)
            mine = cols == s
            lcm = int(lcms[s])
            bound = int(np.abs(nums[mine]).max(initial=0)) * lcm * \
                int(weights[:, topics[mine]].max(initial=0)) * int(mine.sum())
            small[s] = bound < 2 ** 53 and lcm * int(w_sums[s]) * lcm < 2 ** 53
        with np.errstate(invalid="ignore", divide="ignore"):
            quiet = np.zeros(1) / np.zeros(1)
        out = np.where(empty, np.where(small[None, :], quiet[0], math.nan),
                       out.astype(np.float64))
    return out


def _grouped_matrix(values, columns, n_columns: int, n_topics: int, caller: str):
    """(T × n_columns doubles, T × n_columns int64 counts) of rows given as
    (topic position, column), distinct: each row's value and a 1 at its
    place, zeros elsewhere; finite values only."""
    topics, cols = (np.asarray(a, dtype=np.int64) for a in columns)
    matrix = np.zeros((n_topics, n_columns), dtype=np.float64)
    count = np.zeros((n_topics, n_columns), dtype=np.int64)
    matrix[topics, cols] = np.asarray(values, dtype=np.float64)
    count[topics, cols] = 1
    if not np.isfinite(matrix).all():
        raise ValueError(f"{caller} needs finite values")
    return matrix, count


def grouped_real_means(values, columns, n_columns: int, weights):
    """(B × n_columns): :func:`weighted_real_means` of each column's rows at
    once (the exact weighted mean of doubles, rounded once), rows given as
    (topic position, column), distinct."""
    weights = np.asarray(weights, dtype=np.int64)
    matrix, count = _grouped_matrix(values, columns, n_columns, weights.shape[1],
                                    "grouped_real_means")
    return _exact_means(matrix, weights, weights @ count)


def grouped_replicate_means(values, columns, n_columns: int, weights):
    """:func:`grouped_real_means` for many replicates, the sums by
    :func:`replicate_sums` (deterministic, within a few ulp of the exact
    means; NaN where a column's weights are all 0)."""
    weights = np.asarray(weights, dtype=np.int64)
    matrix, count = _grouped_matrix(values, columns, n_columns, weights.shape[1],
                                    "grouped_replicate_means")
    sums = replicate_sums(matrix, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.divide(sums, weights.astype(np.float64) @ count.astype(np.float64), out=sums)


# ---------------------------------------------------------------------------
# intervals and tests
# ---------------------------------------------------------------------------

def percentile_interval(replicates, alpha: float = ALPHA) -> Tuple[float, float]:
    r = np.asarray(replicates, dtype=np.float64)
    r = r[np.isfinite(r)]
    if not len(r):
        return (math.nan, math.nan)
    low, high = np.quantile(r, [alpha / 2, 1 - alpha / 2], method="linear")
    return (float(low), float(high))


def recentred_interval(point: float, replicates, alpha: float = ALPHA,
                       bounds: Tuple[float, float] = (-math.inf, math.inf)
                       ) -> Tuple[float, float]:
    """The percentile interval moved by (point − the replicates' median),
    within ``bounds`` (the statistic's range): the replicates' spread placed
    on the point value. For statistics of means over topics whose replicates
    are biased toward chance by the resample's added noise (pairwise
    accuracy, rank and linear correlations of system scores): on simulated
    testbeds (tests/test_resampling.py) it covers the statistic's expected
    value at the testbed's size 91-95% of the time where the plain
    percentile interval covers 90-97% for one task but 10-37% for ten tasks
    pooled, and BC 6-81% (DECISIONS "metric_eval's interval")."""
    r = np.asarray(replicates, dtype=np.float64)
    r = r[np.isfinite(r)]
    if not len(r) or not math.isfinite(point):
        return (math.nan, math.nan)
    shift = point - float(np.median(r))
    low, high = np.quantile(r, [alpha / 2, 1 - alpha / 2], method="linear") + shift
    return (float(min(max(low, bounds[0]), point)), float(max(min(high, bounds[1]), point)))


#: the ``interval`` a table row names: :func:`percentile_interval`,
#: :func:`recentred_interval`
PERCENTILE, RECENTRED = "percentile", "recentred"


def interval_method(bounds: Optional[Tuple[float, float]]) -> str:
    """:data:`RECENTRED` for a statistic with a range (``bounds``: a
    statistic of system scores), :data:`PERCENTILE` without (``None``)."""
    return PERCENTILE if bounds is None else RECENTRED


def bootstrap_interval(point: float, replicates,
                       bounds: Optional[Tuple[float, float]] = None) -> Tuple[float, float]:
    """The 95% interval :func:`interval_method` names: recentred within
    ``bounds`` when given, else percentile."""
    if bounds is None:
        return percentile_interval(replicates)
    return recentred_interval(point, replicates, bounds=bounds)


def bca_interval(point: float, replicates, jackknife, alpha: float = ALPHA
                 ) -> Tuple[float, float]:
    """Efron's bias-corrected and accelerated interval; NaN when undefined
    (every replicate on one side of the point value, or no spread)."""
    from statistics import NormalDist
    norm = NormalDist()
    r = np.asarray(replicates, dtype=np.float64)
    r = r[np.isfinite(r)]
    jack = np.asarray(jackknife, dtype=np.float64)
    jack = jack[np.isfinite(jack)]
    if not len(r) or not math.isfinite(point):
        return (math.nan, math.nan)
    share = (np.sum(r < point) + 0.5 * np.sum(r == point)) / len(r)
    if share <= 0 or share >= 1:
        return (math.nan, math.nan)
    z0 = norm.inv_cdf(share)
    d = jack.mean() - jack if len(jack) else np.zeros(1)
    spread = (d ** 2).sum()
    a = (d ** 3).sum() / (6 * spread ** 1.5) if spread > 0 else 0.0
    out = []
    for q in (alpha / 2, 1 - alpha / 2):
        z = norm.inv_cdf(q)
        adjusted = norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
        out.append(float(np.quantile(r, adjusted, method="linear")))
    return (out[0], out[1])


def intervals(point: float, replicates, jackknife, alpha: float = ALPHA
              ) -> Dict[str, Tuple[float, float]]:
    """{"percentile": (low, high), "bca": (low, high)}."""
    return {"percentile": percentile_interval(replicates, alpha),
            "bca": bca_interval(point, replicates, jackknife, alpha)}


# ---------------------------------------------------------------------------
# the same intervals, every column of a replicate matrix at once
# ---------------------------------------------------------------------------
# A group's statistics have hundreds of columns (KING of 1,023 subsets, 40
# measures × 5 statistics): one numpy call per column cost more than the
# arithmetic (issue 36). These give the doubles the per-column functions
# give — the same order statistics, numpy's linear interpolation written out
# — for columns whose replicates are all finite; other columns go through
# the per-column functions (tests/test_resampling_columns.py checks both).
# The order statistics are selected, not sorted (measures/selection.py: a
# numba multiple quickselect at the rows read, 2-3x faster than numpy's
# sort of 1,000 replicates; tests/test_selection.py checks them against the
# sort and the intervals against their sort-based versions).

def _lerp_sorted(ordered, n, q, cols=None):
    """np.quantile(column[:n], q, method="linear") of each column of
    ``ordered`` (each column's n finite values sorted first; ``n`` and
    ``q`` a number or one per column), or of the columns ``cols`` of it
    (``n`` and ``q`` then theirs; two values a column read in place, not
    the columns copied first): numpy's virtual index (n − 1)·q, its
    neighbours and its interpolation a + (b − a)·γ, or b − (b − a)·(1 − γ)
    for γ ≥ ½."""
    cols = np.arange(ordered.shape[1]) if cols is None else np.asarray(cols, dtype=np.intp)
    shape = cols.shape
    q = np.broadcast_to(np.asarray(q, dtype=np.float64), shape)
    n = np.broadcast_to(np.asarray(n, dtype=np.int64), shape)
    if cols.size <= _LERP_SCALAR:
        return _lerp_scalar(ordered, n, q, cols)
    return _lerp_arrays(ordered, n, q, cols)


def _lerp_arrays(ordered, n, q, cols) -> np.ndarray:
    """:func:`_lerp_sorted` of every column at once (``n``, ``q`` one per
    column of ``cols``)."""
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    below = virtual < 0
    previous = np.where(above, n - 1, np.where(below, 0, previous)).astype(np.intp)
    following = np.where(above, n - 1, np.where(below, 0, following)).astype(np.intp)
    # numpy's γ is taken against its previous index, -1 above the bounds
    gamma = virtual - np.where(above, -1, previous)
    a = ordered[np.maximum(previous, 0), cols]
    b = ordered[np.maximum(following, 0), cols]
    diff = b - a
    out = a + diff * gamma
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), out)


#: columns up to this many interpolate in Python floats (:func:`_lerp_scalar`)
_LERP_SCALAR = 2


def _lerp_scalar(ordered, n, q, cols) -> np.ndarray:
    """:func:`_lerp_sorted` of a column or two, each step in Python floats:
    the same IEEE operations on the same doubles as the array path (an
    AUC group's comparisons, a column each: ~25 numpy calls on arrays of
    one value cost 50 µs, this 5 µs, issue 36)."""
    out = np.empty(cols.shape, dtype=np.float64)
    flat = out.reshape(-1)
    for k, (col, n_k, q_k) in enumerate(zip(cols.ravel().tolist(), n.ravel().tolist(),
                                            q.ravel().tolist())):
        virtual = float(n_k - 1) * q_k
        if virtual >= n_k - 1:              # (numpy's γ against index −1 above the bounds)
            previous = following = n_k - 1
            gamma = virtual - -1
        elif virtual < 0:
            previous = following = 0
            gamma = virtual - 0
        else:
            previous = int(math.floor(virtual))
            following = previous + 1
            gamma = virtual - previous
        a = float(ordered[max(previous, 0), col])
        b = float(ordered[max(following, 0), col])
        diff = b - a
        flat[k] = b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma
    return out


def _finite_sorted(reps, quantiles=None):
    """(each column sorted, its finite values first; their count).
    ``quantiles``: the order statistics the caller reads (unused: numpy's
    sort of the whole column puts the same values at those rows as a
    partition at them, and is several times faster than a partition at
    six rows, measured — issue 36). Each column sorted as a contiguous
    row of the transposed copy (numpy's sort along the last axis, ~1.7x
    faster than along axis 0 on 1,000 × 61), handed back as its transposed
    view: the same values at the same rows. (The intervals now select
    those rows instead, :func:`_selected_intervals`, 2-3x faster; this
    sort is the tests' reference.)"""
    n = np.count_nonzero(np.isfinite(reps), axis=0)
    return np.sort(np.ascontiguousarray(np.transpose(reps)), axis=1).T, n


def _ranks_sorted(ordered, n, points, cols) -> Tuple[np.ndarray, np.ndarray]:
    """(#{values < point}, #{values ≤ point}) of each column ``cols[k]`` of
    ``ordered`` among its first ``n[k]`` rows (sorted finite values), the
    point ``points[k]``: a bisection of every column at once (the counts
    of comparing the point with each value). (The intervals now count in
    the selection's pass, :func:`_selected_intervals`.)"""
    cols = np.asarray(cols, dtype=np.intp)
    n = np.asarray(n, dtype=np.intp)
    out = []
    for strict in (True, False):
        lo = np.zeros(cols.size, dtype=np.intp)
        hi = n.copy()
        while True:
            live = lo < hi
            if not live.any():
                break
            mid = (lo + hi) // 2
            value = ordered[np.minimum(mid, ordered.shape[0] - 1), cols]
            go_right = (value < points) if strict else (value <= points)
            lo = np.where(live & go_right, mid + 1, lo)
            hi = np.where(live & ~go_right, mid, hi)
        out.append(lo.astype(np.int64))
    return out[0], out[1]


def percentile_columns(replicates, alpha: float = ALPHA) -> Tuple[np.ndarray, np.ndarray]:
    """(low, high) of :func:`percentile_interval` of each column of
    ``replicates`` (B × M), the same doubles: each column's finite
    replicates (np.sort puts NaN last)."""
    reps = np.asarray(replicates, dtype=np.float64)
    low = np.full(reps.shape[1], math.nan)
    high = np.full(reps.shape[1], math.nan)
    if not reps.shape[0] or not reps.shape[1]:
        return low, high
    ordered, n, inf = selected_columns(reps)
    if inf.any():                               # ±inf sort among the values: per column
        for m in range(reps.shape[1]):
            low[m], high[m] = percentile_interval(reps[:, m], alpha)
        return low, high
    return _percentiles_sorted(ordered, n, alpha)


def _percentiles_sorted(ordered, n, alpha: float = ALPHA) -> Tuple[np.ndarray, np.ndarray]:
    """(low, high) of :func:`percentile_columns` from each column's finite
    replicates put in order (:func:`_finite_sorted`, fully sorted or only
    at the rows those quantiles read), ``n`` of them; NaN for a column
    without one."""
    low = np.full(ordered.shape[1], math.nan)
    high = np.full(ordered.shape[1], math.nan)
    ok = np.flatnonzero(n > 0)
    if ok.size:
        low[ok] = _lerp_sorted(ordered, n[ok], alpha / 2, ok)
        high[ok] = _lerp_sorted(ordered, n[ok], 1 - alpha / 2, ok)
    return low, high


def bootstrap_columns(points, replicates, bounds: Optional[Tuple[float, float]] = None
                      ) -> Tuple[np.ndarray, np.ndarray]:
    """(low, high) of :func:`bootstrap_interval` of each column (point
    ``points[m]``, replicates ``replicates[:, m]``), the same doubles."""
    if bounds is None:
        return percentile_columns(replicates)
    points = np.asarray(points, dtype=np.float64)
    reps = np.asarray(replicates, dtype=np.float64)
    n_b, m_all = reps.shape
    low = np.full(m_all, math.nan)
    high = np.full(m_all, math.nan)
    if not n_b or not m_all:
        return low, high
    ordered, n, inf = selected_columns(reps, True)
    if inf.any():
        for m in range(m_all):
            low[m], high[m] = bootstrap_interval(float(points[m]), reps[:, m], bounds)
        return low, high
    cols = np.flatnonzero((n > 0) & np.isfinite(points))
    if cols.size:
        low[cols], high[cols] = _recentred_sorted(ordered, n, points, cols, bounds[0], bounds[1])
    return low, high


def _recentred_sorted(ordered, n, points, cols, lower, upper) -> Tuple[np.ndarray, np.ndarray]:
    """(low, high) of the recentred interval of :func:`bootstrap_interval`
    for the columns ``cols`` of ``ordered`` (each column sorted, its ``n``
    finite values first; finite points): the percentiles shifted by point
    − median, clipped to [``lower``, ``upper``] (scalars, or one bound per
    column of ``cols``) and made to hold the point."""
    k, pts = n[cols], points[cols]
    h = k // 2
    # np.median: the middle value, or the mean of the two middle ones
    middle = ordered[h, cols]
    median = np.where(k % 2 == 1, middle, (ordered[np.maximum(h - 1, 0), cols] + middle) / 2.0)
    shift = pts - median
    lo = _lerp_sorted(ordered, k, ALPHA / 2, cols) + shift
    hi = _lerp_sorted(ordered, k, 1 - ALPHA / 2, cols) + shift
    return np.minimum(np.maximum(lo, lower), pts), np.maximum(np.minimum(hi, upper), pts)


def sorted_rows_counts(rows) -> Tuple[np.ndarray, np.ndarray]:
    """(finite values, holds an infinity) of each row of ``rows`` (R × B,
    each row sorted by numpy: −inf first, NaN last, +inf just before the
    NaN), read from the sorted rows rather than by a pass over every value:
    a row without NaN has B values that are not NaN, the others' NaN
    counted; a row holds an infinity when its first value is −inf or its
    last value that is not NaN is +inf; the finite values of such a row
    counted. The counts ``np.count_nonzero(np.isfinite(rows), axis=1)``
    gives (intp), and ``np.isinf(rows).any(axis=1)``."""
    rows = np.asarray(rows, dtype=np.float64)
    n_r, n_b = rows.shape
    n = np.full(n_r, n_b, dtype=np.intp)
    if not n_b:
        return n, np.zeros(n_r, dtype=bool)
    nan = np.flatnonzero(np.isnan(rows[:, -1]))
    if nan.size:
        n[nan] -= np.count_nonzero(np.isnan(rows[nan]), axis=1)
    top = rows[np.arange(n_r), np.maximum(n - 1, 0)]
    inf = (rows[:, 0] == -math.inf) | ((n > 0) & (top == math.inf))
    bad = np.flatnonzero(inf)
    if bad.size:
        n[bad] = np.count_nonzero(np.isfinite(rows[bad]), axis=1)
    return n, inf


def sorted_columns(columns) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ordered, finite values, holds an infinity) of each column of
    ``columns`` (B × N): each column sorted as a contiguous row of the
    transposed copy (no copy before the sort when column-major; numpy's
    sort along the last axis, as :func:`_finite_sorted`'s), handed back as
    its transposed view, and :func:`sorted_rows_counts` of the sorted
    rows. (The intervals read :func:`selected_columns` instead: the same
    values at the rows they read.)"""
    rows = np.sort(np.ascontiguousarray(np.transpose(columns), dtype=np.float64), axis=1)
    n, inf = sorted_rows_counts(rows)
    return rows.T, n, inf


def _selected_rows(rows, qs, median=None, points=None):
    """:func:`~qarla_spark.measures.selection.select_rows` of ``rows`` (R ×
    B, C-contiguous, reordered in place), its rows holding both signs of
    zero then sorted by numpy (left as they were by the selection: which
    zero a sort puts at a rank depends on the order it is given): (n,
    flags, below, at_most) — each row without an infinity holds, at the
    ranks :func:`_lerp_sorted` reads for ``qs`` (and the median's where
    ``median``), what numpy's sort of it puts there."""
    from qarla_spark.measures import selection
    n, flags, below, at_most = selection.select_rows(rows, qs, median, points)
    mixed = np.flatnonzero(flags == selection.MIXED_ZEROS)
    if mixed.size:
        rows[mixed] = np.sort(rows[mixed], axis=1)
    return n, flags, below, at_most


def selected_columns(columns, median=None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`sorted_columns` at the rows the intervals read: (ordered,
    finite values, holds an infinity) of each column of ``columns`` (B ×
    N; column-major, so that each column is read contiguous), ``ordered``
    giving ``ordered[rows, cols]`` at the neighbours of the percentiles
    α/2 and 1 − α/2 (and at the median's two rows, for the columns where
    ``median``) the values a sort puts there, the same doubles
    (:func:`~qarla_spark.measures.selection.select_columns`: 2-3x faster
    than numpy's sort of 1,000 replicates, without the sorted copy,
    measured; a column with an infinity has no value there — its intervals
    read the replicates themselves)."""
    from qarla_spark.measures import selection
    ordered, n, flags = selection.select_columns(np.asarray(columns), (ALPHA / 2, 1 - ALPHA / 2),
                                                 median)
    return ordered, n.astype(np.intp), (flags & selection.INFINITE) > 0


def selected_blocks(blocks, median=None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`selected_columns` of the columns of ``blocks`` side by side
    (each B × w, the same B, any layout: read where they lie, not copied
    into one column-major matrix first —
    :func:`~qarla_spark.measures.selection.select_blocks`), the same
    values, counts and infinities."""
    from qarla_spark.measures import selection
    ordered, n, flags = selection.select_blocks(blocks, (ALPHA / 2, 1 - ALPHA / 2), median)
    return ordered, n.astype(np.intp), (flags & selection.INFINITE) > 0


def bootstrap_columns_many(points, columns, lower, upper) -> Tuple[np.ndarray, np.ndarray]:
    """(low, high) of :func:`bootstrap_columns` of each column of
    ``columns`` (B × N, finite or NaN: the caller checked no infinity;
    column-major, so that each column's sort reads a contiguous row), each
    column with its own bounds — ``lower``, ``upper`` (N,), NaN for a
    percentile interval — the same doubles: blocks of several statistics
    at once (one sort, one pass of the interpolation; issue 36: a task's
    ~40 statistics × criteria, not one numpy pass each)."""
    n_b, m_all = np.shape(columns)
    if not n_b or not m_all:
        return np.full(m_all, math.nan), np.full(m_all, math.nan)
    ordered, n, _ = selected_columns(columns, ~np.isnan(np.asarray(lower, dtype=np.float64)))
    return bootstrap_sorted_many(points, ordered, n, lower, upper)


def bootstrap_sorted_many(points, ordered, n, lower, upper) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`bootstrap_columns_many` of columns already sorted
    (:func:`sorted_columns`: ``ordered`` B × N, each column's ``n`` finite
    values first; no infinity), or sorted only at the rows read here
    (:func:`selected_columns`, the median's for the columns with bounds),
    the same doubles."""
    points = np.asarray(points, dtype=np.float64)
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    n_b, m_all = np.shape(ordered)
    low = np.full(m_all, math.nan)
    high = np.full(m_all, math.nan)
    if not n_b or not m_all:
        return low, high
    recentred = ~np.isnan(lower)
    # percentile: _percentiles_sorted's
    ok = np.flatnonzero(~recentred & (n > 0))
    if ok.size:
        low[ok] = _lerp_sorted(ordered, n[ok], ALPHA / 2, ok)
        high[ok] = _lerp_sorted(ordered, n[ok], 1 - ALPHA / 2, ok)
    # recentred: bootstrap_columns'
    cols = np.flatnonzero(recentred & (n > 0) & np.isfinite(points))
    if cols.size:
        low[cols], high[cols] = _recentred_sorted(ordered, n, points, cols, lower[cols],
                                                  upper[cols])
    return low, high


def _standard_normal(norm):
    """(inv_cdf, cdf, written) of the standard normal ``norm`` (a
    ``statistics.NormalDist()``) as plain functions of a float: the
    module's own ``_normal_dist_inv_cdf(p, 0.0, 1.0)`` and ``0.5·(1 +
    erf((x − 0.0)/(1.0·√2)))`` — what its methods compute after their
    checks — or the methods themselves where the module lacks the former
    (``written`` False: the cdf is not that expression)."""
    import statistics
    raw = getattr(statistics, "_normal_dist_inv_cdf", None)
    if raw is None or (norm.mean, norm.stdev) != (0.0, 1.0):    # pragma: no cover
        return norm.inv_cdf, norm.cdf, False
    root2 = math.sqrt(2.0)

    def cdf(x):
        return 0.5 * (1.0 + math.erf((x - 0.0) / (1.0 * root2)))

    return (lambda p: raw(p, 0.0, 1.0)), cdf, True


def _bca_sorted(ordered, n, points, jack, cols, alpha: float, low, high, counts=None,
                select=None) -> None:
    """low[cols], high[cols] ← the BCa bounds of the columns ``cols`` of
    ``ordered`` (each column sorted, its ``n`` finite values first; the
    points finite, the replicates and the jackknife without an infinity or
    a NaN there): each column's share of replicates below and at its point
    (by bisection of its sorted values, or one comparison of each value
    when there are few: the same integers), the jackknife's moments summed
    as numpy sums a contiguous vector (pairwise), as bca_interval does, and
    the bounds read from the sorted values; NaN where BCa is undefined.
    ``counts``: (below, at_most) of every column, already counted (the
    selection's pass: the same integers); ``select``: called with (the
    columns, their two quantiles) before they are read, when ``ordered``
    is sorted only at the rows asked for (:func:`_selected_rows`)."""
    from statistics import NormalDist
    norm = NormalDist()
    if not cols.size:
        return
    n_b = ordered.shape[0]
    pts = points[cols]
    if counts is not None:
        below, at_most = counts[0][cols], counts[1][cols]
    elif cols.size * n_b >= 2 ** 17:
        below, at_most = _ranks_sorted(ordered, n[cols], pts, cols)
    else:                  # (the counts of a column's values: in any order)
        mine = ordered if cols.size == ordered.shape[1] else ordered[:, cols]
        below = np.count_nonzero(mine < pts, axis=0).astype(np.int64)
        at_most = below + np.count_nonzero(mine == pts, axis=0)
    share = (below + 0.5 * (at_most - below)) / n[cols]
    if jack.shape[0]:
        rows = np.ascontiguousarray(jack[:, cols].T)
        d = (rows.sum(axis=1) / jack.shape[0])[:, None] - rows
        d2, d3 = (d ** 2).sum(axis=1), (d ** 3).sum(axis=1)
    else:
        d2 = d3 = np.zeros(cols.size)
    qs = np.full((2, cols.size), math.nan)
    zs = [norm.inv_cdf(q) for q in (alpha / 2, 1 - alpha / 2)]
    inv_cdf, cdf, inline = _standard_normal(norm)
    # NormalDist's own functions without its methods' checks (done here),
    # in Python floats: the doubles of norm.inv_cdf, norm.cdf — once per
    # distinct (share, moments) (columns of a task's sets often share
    # them: KING's 1,023 subsets)
    done: Dict[tuple, tuple] = {}
    nan2 = (math.nan, math.nan)
    z_low, z_high = zs
    # (``inline``: the cdf's expression written out below — the same
    # operations as _standard_normal's cdf, without a call per bound)
    erf, root2 = math.erf, 1.0 * math.sqrt(2.0)
    found = []
    for key in zip(share.tolist(), d2.tolist(), d3.tolist()):
        got = done.get(key)
        if got is None:
            p, s2, s3 = key
            if p <= 0 or p >= 1:
                got = nan2
            else:
                z0 = inv_cdf(p)
                a = s3 / (6 * s2 ** 1.5) if s2 > 0 else 0.0
                if inline:
                    got = (0.5 * (1.0 + erf((z0 + (z0 + z_low) / (1 - a * (z0 + z_low)) - 0.0)
                                            / root2)),
                           0.5 * (1.0 + erf((z0 + (z0 + z_high) / (1 - a * (z0 + z_high))
                                             - 0.0) / root2)))
                else:                                                   # pragma: no cover
                    got = (cdf(z0 + (z0 + z_low) / (1 - a * (z0 + z_low))),
                           cdf(z0 + (z0 + z_high) / (1 - a * (z0 + z_high))))
            done[key] = got
        found.append(got)
    if found:
        qs[:] = np.asarray(found, dtype=np.float64).T
    good = np.isfinite(qs).all(axis=0)
    if good.any():
        sel = cols[good]
        if select is not None:
            select(sel, qs[0, good], qs[1, good])
        low[sel] = _lerp_sorted(ordered, n[sel], qs[0, good], sel)
        high[sel] = _lerp_sorted(ordered, n[sel], qs[1, good], sel)


def _own_rows(rows):
    """``rows`` as the selection reorders them in place: itself when
    C-contiguous, writeable doubles, else such a copy."""
    if rows.dtype != np.float64 or not rows.flags.c_contiguous or not rows.flags.writeable:
        return np.array(rows, dtype=np.float64, order="C")
    return rows


def _selected_intervals(rows, points, alpha: float):
    """(n, (below, at_most), select) of :func:`_selected_rows` of ``rows``
    (R × B, C-contiguous, reordered in place) at the percentiles α/2, 1 −
    α/2, counted against ``points`` (None: not counted); ``select(cols,
    q_low, q_high)`` selects BCa's quantiles of those rows too (for
    :func:`_bca_sorted`), the percentiles' rows kept."""
    from qarla_spark.measures import selection
    qs = np.asarray([alpha / 2, 1 - alpha / 2], dtype=np.float64)
    n, flags, below, at_most = _selected_rows(rows, qs, None, points)

    def select(cols, q_low, q_high):
        extra = np.full((rows.shape[0], 2), math.nan)
        extra[cols, 0] = q_low
        extra[cols, 1] = q_high
        selection.select_more(rows, n, flags, qs, None, extra)

    return n.astype(np.intp), (below, at_most), select


def interval_columns(points, replicates, jackknife, alpha: float = ALPHA
                     ) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    """{"percentile": (low, high), "bca": (low, high)} of each column: the
    doubles of :func:`intervals` column by column."""
    points = np.asarray(points, dtype=np.float64)
    reps = np.asarray(replicates, dtype=np.float64)
    jack = np.asarray(jackknife, dtype=np.float64)
    n_b, m_all = reps.shape
    if not n_b or not m_all or np.isinf(reps).any():
        percentile = percentile_columns(reps, alpha)
    else:
        percentile = None
    out = {"percentile": percentile,
           "bca": (np.full(m_all, math.nan), np.full(m_all, math.nan))}
    low, high = out["bca"]
    if not n_b or not m_all:
        return out
    # each column's order statistics at the rows read (_selected_rows:
    # the values a sort puts there) and its counts below and at its point
    rows = np.array(np.transpose(reps), dtype=np.float64, order="C")      # (a copy)
    n, counts, select = _selected_intervals(rows, points, alpha)
    ordered = rows.T
    if percentile is None:
        out["percentile"] = _percentiles_sorted(ordered, n, alpha)
    # columns whose jackknife holds a NaN, or whose replicates an infinity,
    # go through bca_interval itself
    clean = ~np.isinf(reps).any(axis=0) & (np.isfinite(jack).all(axis=0) if jack.shape[0]
                                             else np.ones(m_all, dtype=bool))
    _bca_sorted(ordered, n, points, jack, np.flatnonzero(clean & (n > 0) & np.isfinite(points)),
                alpha, low, high, counts, select)
    for m in np.flatnonzero(~clean):
        low[m], high[m] = bca_interval(float(points[m]), reps[:, m], jack[:, m], alpha)
    return out


def percentile_rows(rows, alpha: float = ALPHA) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`percentile_columns` of ``rows.T`` (``rows``: M × B doubles, a
    column's replicates in a row, C-contiguous; reordered in place): the
    same doubles, without the transposed copy (each row selected at the
    rows read, :func:`_selected_rows`)."""
    if not rows.shape[0] or not rows.shape[1] or np.isinf(rows).any():
        # (before the selection: which of +0 and -0 an order statistic is
        # depends on the values' order)
        return percentile_columns(rows.T, alpha)
    rows = _own_rows(rows)
    n = _selected_intervals(rows, None, alpha)[0]
    return _percentiles_sorted(rows.T, n, alpha)


def interval_rows(points, rows, jackknife, alpha: float = ALPHA
                  ) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    """:func:`interval_columns` of ``rows.T`` (``rows``: M × B doubles, a
    column's replicates in a row, C-contiguous; reordered in place): the
    same doubles — each row selected where it lies (no transposed copy;
    :func:`_selected_intervals`), then the same order statistics, ranks
    and BCa corrections; an infinity or a jackknife NaN anywhere:
    interval_columns itself."""
    points = np.asarray(points, dtype=np.float64)
    jack = np.asarray(jackknife, dtype=np.float64)
    m_all, n_b = rows.shape
    if not n_b or not m_all or np.isinf(rows).any() or (jack.shape[0]
                                                        and not np.isfinite(jack).all()):
        return interval_columns(points, rows.T, jack, alpha)
    rows = _own_rows(rows)
    n, counts, select = _selected_intervals(rows, points, alpha)
    ordered = rows.T
    out = {"percentile": _percentiles_sorted(ordered, n, alpha),
           "bca": (np.full(m_all, math.nan), np.full(m_all, math.nan))}
    low, high = out["bca"]
    _bca_sorted(ordered, n, points, jack, np.flatnonzero((n > 0) & np.isfinite(points)),
                alpha, low, high, counts, select)
    return out


def sign_flip_p(diffs, flips) -> float:
    """Two-sided mid-p-value of the paired sign-flip test: ``diffs`` (T,)
    exact integers (per-topic differences on a common scale), ``flips``
    (P × T) of ±1 (module doc)."""
    diffs = np.asarray(diffs, dtype=object)
    observed = abs(int(diffs.sum()))
    if np.abs(diffs.astype(np.float64)).max(initial=0) * len(diffs) < 2 ** 52:
        flipped = np.abs(int_matmul(flips, diffs.astype(np.int64)))
        above = int(np.sum(flipped > observed))
        tied = int(np.sum(flipped == observed))
    else:
        values = [abs(int(v)) for v in np.asarray(flips, dtype=object) @ diffs]
        above = sum(1 for v in values if v > observed)
        tied = sum(1 for v in values if v == observed)
    return (0.5 + above + 0.5 * tied) / (1 + len(flips))


def sign_flip_family(diffs, flips) -> Tuple[np.ndarray, np.ndarray]:
    """(p, p_adjusted) for a family of paired comparisons on the same topics:
    ``diffs`` (T × S) exact integers on one common scale, ``flips`` (P × T).
    ``p``: each comparison's :func:`sign_flip_p`; ``p_adjusted``: the
    single-step max-T adjustment (Westfall & Young 1993) — the mid-p of the
    observed |Σ d| among the permutations' largest |Σ s·d| over the family,
    the same sign pattern flipping every comparison at once, so the
    correlation between comparisons is kept (Holm's bound, with 1,000 sign
    patterns and 1,022 comparisons, could never reject)."""
    diffs = np.asarray(diffs, dtype=np.int64)
    flips = np.asarray(flips, dtype=np.int64)
    if np.abs(diffs).sum(axis=0).max(initial=0) >= 2 ** 52:
        raise ValueError("differences too large for an exact family test")
    classes = _flip_classes(flips) if diffs.shape[1] >= FLIP_CLASS_COMPARISONS else None
    if classes is None:
        return _sign_flip_counts(diffs, flips, None)
    return _sign_flip_counts(diffs, *classes)


#: patterns of at most this many topics are grouped (:func:`_flip_classes`)
FLIP_CLASS_TOPICS = 24
#: ... in families of at least this many comparisons (below, grouping the
#: patterns costs more than it saves: an AUC group's single comparisons)
FLIP_CLASS_COMPARISONS = 16


def _flip_classes(flips) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(one pattern of each class, its count) of sign patterns ``flips`` (P
    × T of ±1) whose classes are fewer than P, else None. A class: a
    pattern and its negation (|Σ s·d| the same: −s gives −Σ s·d, exactly,
    in integers and in the BLAS doubles of exact integers). With few topics
    patterns repeat (KING's 10 topics: 512 classes, ~440 of them in 1,000
    seeded patterns), so the family's P × S products, comparisons and
    maxima are worked out once a class and counted with its weight: the
    same integers."""
    n_p, n_t = flips.shape
    if not n_p or not n_t or n_t > FLIP_CLASS_TOPICS:
        return None
    if not ((flips == 1) | (flips == -1)).all():
        return None
    canon = flips * flips[:, :1]                              # first sign +1
    codes = (canon[:, 1:] > 0).astype(np.int64) @ (
        np.int64(1) << np.arange(n_t - 1, dtype=np.int64))
    _, first, weights = np.unique(codes, return_index=True, return_counts=True)
    if first.size >= n_p:
        return None
    return canon[first], weights.astype(np.int64)


def _sign_flip_counts(diffs, flips, weights) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`sign_flip_family` of the patterns ``flips``, each counted
    ``weights`` times (None: once each; the p-values' denominators from
    the patterns counted)."""
    observed = np.abs(diffs.sum(axis=0))                       # S
    # |Σ s·d| of every pattern and comparison: exact integers (as the
    # doubles of the BLAS product when they are below 2^53, compared with
    # the observed sums as doubles: the same counts)
    flipped = _exact_float_matmul(flips, diffs)                # P × S
    if flipped is None:
        flipped = int_matmul(flips, diffs)
        seen = observed
    else:
        seen = observed.astype(np.float64)
    np.abs(flipped, out=flipped)
    n_patterns = len(flips) if weights is None else int(weights.sum())
    n = n_patterns + 1
    if weights is None:
        above = np.count_nonzero(flipped > seen, axis=0).astype(np.int64)
        tied = np.count_nonzero(flipped == seen, axis=0).astype(np.int64)
    else:
        # each class's comparisons counted with its weight: sums of at
        # most P integers (exact in the doubles of the BLAS product)
        w = weights.astype(np.float64)
        above = (w @ (flipped > seen).astype(np.float64)).astype(np.int64)
        tied = (w @ (flipped == seen).astype(np.float64)).astype(np.int64)
    p = (0.5 + above + 0.5 * tied) / n
    # the family's largest |Σ s·d| of each pattern, sorted: how many lie
    # above and at each observed sum, by search
    top = flipped.max(axis=1, initial=0)
    top = np.sort(top if weights is None else np.repeat(top, weights))   # P
    at_most = np.searchsorted(top, seen, side="right")
    below = np.searchsorted(top, seen, side="left")
    adjusted = (0.5 + (len(top) - at_most).astype(np.int64)
                + 0.5 * (at_most - below).astype(np.int64)) / n
    return p, np.maximum(adjusted, p)


def common_scale(nums_a, nums_b, dens) -> Tuple[np.ndarray, int]:
    """Per-topic differences (nums_a − nums_b)/dens as integers on a common
    scale (their least common denominator): (ints, lcm)."""
    dens = [int(d) for d in dens]
    lcm = 1
    for d in set(dens):
        lcm = lcm * d // math.gcd(lcm, d)
    diffs = np.array([(int(a) - int(b)) * (lcm // d) for a, b, d in zip(nums_a, nums_b, dens)],
                     dtype=object)
    return diffs, lcm
