"""The counts over pairs the statistics stage makes by the million (issue
36): integer counts of comparisons, compiled with numba when it can be
imported, numpy otherwise — the same integers either way (a comparison of
doubles or integers is exact; only counts are summed), so the backend never
changes a number.

- :func:`at_least_levels`: for every measure and pair of systems i ≠ j,
  the replicates where system i's key is at most j's (keys carried to (hi,
  lo) pairs, compared in lexicographic order): the counts of
  :func:`~qarla_spark.measures.resampling.signed_mean_at_least`;
- :func:`concordance_shared`: Kendall's concordance of rows x[b, c] against
  y[b], and how many pairs each side orders (τ_b's parts);
- :func:`sign_sums`: the same over the pairs of systems of every replicate
  and measure, against several criteria's human scores at once (a NaN human
  score orders nothing);
- :func:`not_better`: per pair of measures, the replicates where both are
  finite and the first is not above the second (the paired bootstrap's
  p-values).

Each function has its numpy twin (``*_numpy``); ``BACKEND`` says which one
runs (environment variable ``QARLA_COUNT_BACKEND``: ``auto``, the default,
``numba`` or ``numpy``). Tests compare the two.
"""

from __future__ import annotations

import math
import os
from typing import Optional, Tuple

import numpy as np

try:  # the accelerator: the same counts compiled with numba
    import numba  # noqa: F401

    from qarla_spark.compiled import compiled, compiled_inline
except ImportError:  # pragma: no cover - numba is a dependency
    compiled = compiled_inline = None

BACKENDS = ("numpy", "numba") if compiled is not None else ("numpy",)


def _backend() -> str:
    wanted = os.environ.get("QARLA_COUNT_BACKEND", "auto")
    if wanted == "numpy" or compiled is None:
        return "numpy"
    return "numba"


BACKEND = _backend()


# ---------------------------------------------------------------------------
# at least: keys of S systems × K measures × B replicates
# ---------------------------------------------------------------------------

def at_least_numpy(hi: np.ndarray, lo: Optional[np.ndarray]) -> np.ndarray:
    """(K × S × S) int64: out[k, i, j] = #{b : (hi, lo)[i, k, b] ≤ (hi,
    lo)[j, k, b]} (lexicographic; ``lo`` None: ``hi`` alone), the diagonal
    B, of keys ``hi``, ``lo`` (S × K × B integers), in numpy: each system
    against the systems after it, measures × replicates at a time."""
    n_s, n_k, n_b = hi.shape
    out = np.full((n_k, n_s, n_s), n_b, dtype=np.int64)
    for i in range(n_s - 1):
        a, rest = hi[i][None], hi[i + 1:]                     # 1 × K × B, R × K × B
        if lo is None:
            le = np.count_nonzero(a <= rest, axis=2)
            ge = np.count_nonzero(a >= rest, axis=2)
        else:
            same = a == rest
            la, lr = lo[i][None], lo[i + 1:]
            le = np.count_nonzero((a < rest) | (same & (la <= lr)), axis=2)
            ge = np.count_nonzero((a > rest) | (same & (la >= lr)), axis=2)
        out[:, i, i + 1:] = le.T
        out[:, i + 1:, i] = ge.T
    return out


def at_least_levels(low: np.ndarray, high: Optional[np.ndarray], scale: np.ndarray,
                    chunk: int) -> np.ndarray:
    """:func:`at_least_numpy`'s counts of the keys (A·m) of replicate-major level sums:
    ``low``, ``high`` (B × S × K int64; ``high`` None: zero), A = high·2^c
    + low, m = ``scale[s]`` (S,), each key carried to (hi, lo) with lo in
    [0, 2^c) (the caller checked nothing overflows int64). The kernel
    carries and compares a replicate at a time, its counts (K × S × S)
    kept at hand."""
    if BACKEND == "numba" and low.size:
        n_b, n_s, n_k = low.shape
        out = np.zeros((n_k, n_s, n_s), dtype=np.int64)
        zero = np.zeros((1, 1, 1), dtype=np.int64)
        _at_least_levels(np.ascontiguousarray(low, dtype=np.int64),
                         zero if high is None else np.ascontiguousarray(high, dtype=np.int64),
                         high is not None, np.ascontiguousarray(scale, dtype=np.int64),
                         int(chunk), out)
        return out
    return at_least_levels_numpy(low, high, scale, chunk)


def at_least_levels_numpy(low, high, scale, chunk: int) -> np.ndarray:
    """:func:`at_least_levels` in numpy: the keys carried as whole arrays,
    system-major, then :func:`at_least_numpy`."""
    n_b, n_s, n_k = low.shape
    m = np.asarray(scale, dtype=np.int64)[None, :, None]
    lo = low * m
    hi = high * m if high is not None else np.zeros(lo.shape, dtype=np.int64)
    carry = lo >> chunk                              # floor: lo − carry·2^c in [0, 2^c)
    hi, lo = hi + carry, lo - (carry << chunk)

    def system_major(v):        # S × K × B: a system's block contiguous
        return np.ascontiguousarray(v.transpose(1, 2, 0))

    if not lo.any():
        return at_least_numpy(system_major(hi), None)
    if not hi.any():
        return at_least_numpy(system_major(lo), None)
    return at_least_numpy(system_major(hi), system_major(lo))


if compiled is not None:
    @compiled
    def _at_least_levels(low, high, two, scale, chunk, out):  # pragma: no cover - compiled
        n_b, n_s, n_k = low.shape
        hi = np.empty((n_s, n_k), dtype=np.int64)
        lo = np.empty((n_s, n_k), dtype=np.int64)
        acc = np.zeros((n_s, n_s, n_k), dtype=np.int64)      # k contiguous
        for b in range(n_b):
            for s in range(n_s):
                m = scale[s]
                for k in range(n_k):
                    v = low[b, s, k] * m
                    carry = v >> chunk
                    lo[s, k] = v - (carry << chunk)
                    hi[s, k] = (high[b, s, k] * m if two else 0) + carry
            for i in range(n_s):
                for j in range(i + 1, n_s):
                    for k in range(n_k):
                        a = hi[i, k]
                        c = hi[j, k]
                        x = lo[i, k]
                        y = lo[j, k]
                        acc[i, j, k] += (a < c) or (a == c and x <= y)
                        acc[j, i, k] += (a > c) or (a == c and x >= y)
        for k in range(n_k):
            for i in range(n_s):
                for j in range(n_s):
                    out[k, i, j] = n_b if i == j else acc[i, j, k]


def at_least_patterns(low: np.ndarray, high: Optional[np.ndarray], patterns: np.ndarray,
                      mult: np.ndarray, scale: np.ndarray, chunk: int) -> np.ndarray:
    """:func:`at_least_levels` of the level sums of sign patterns, made here:
    ``low``, ``high`` (T × S × K int64; ``high`` None: zero) the pieces of
    each topic's values at the two levels, ``patterns`` (P × T, 1 where a
    topic's sign is flipped) the distinct patterns and ``mult`` (P,) how
    many replicates drew each. The counts of replicate b are those of its
    pattern, so each pattern's comparisons count ``mult`` times: the
    integers of :func:`at_least_levels` on the B replicates' sums (a task
    of T topics has at most 2^T patterns, so few topics cost few), without
    the B × S × K sums in memory."""
    if BACKEND == "numba" and low.size and patterns.size:
        n_t, n_s, n_k = low.shape
        out = np.zeros((n_k, n_s, n_s), dtype=np.int64)
        if high is None:
            # one level: (carry, rest) in lexicographic order is the order of
            # the key low·m itself (= carry·2^c + rest exactly), compared
            # whole, each pattern's sums made in int64 (the same exact integers)
            _at_least_weighted_one(np.ascontiguousarray(low, dtype=np.int64),
                                   np.ascontiguousarray(np.transpose(patterns), dtype=np.int64),
                                   np.ascontiguousarray(mult, dtype=np.int64),
                                   np.ascontiguousarray(scale, dtype=np.int64), out)
            return out
        # each pattern's sums by one BLAS product (the caller's pieces: every
        # sum an integer below 2^53, exact in doubles), then the counts —
        # the kernel reads the doubles as the int64 they hold (no astype
        # copy of P × S × K a call: 2 ms of a task's 4 on 1,000 replicates)
        flips = np.asarray(patterns, dtype=np.float64)
        lo = flips @ np.asarray(low, dtype=np.float64).reshape(n_t, -1)
        hi = flips @ np.asarray(high, dtype=np.float64).reshape(n_t, -1)
        _at_least_weighted(lo.reshape(-1, n_s, n_k), hi.reshape(-1, n_s, n_k), True,
                           np.ascontiguousarray(mult, dtype=np.int64),
                           np.ascontiguousarray(scale, dtype=np.int64), int(chunk), out)
        return out
    return at_least_patterns_numpy(low, high, patterns, mult, scale, chunk)


def at_least_patterns_numpy(low, high, patterns, mult, scale, chunk: int) -> np.ndarray:
    """:func:`at_least_patterns` in numpy: every replicate's sums (each
    pattern repeated ``mult`` times), then :func:`at_least_levels_numpy`."""
    n_t, n_s, n_k = low.shape
    flips = np.repeat(np.asarray(patterns, dtype=np.int64), np.asarray(mult, dtype=np.int64),
                      axis=0)
    lo = (flips @ low.reshape(n_t, -1)).reshape(-1, n_s, n_k)
    hi = (flips @ high.reshape(n_t, -1)).reshape(-1, n_s, n_k) if high is not None else None
    return at_least_levels_numpy(lo, hi, scale, chunk)


if compiled is not None:
    @compiled
    def _at_least_weighted(low, high, two, mult, scale, chunk,
                           out):  # pragma: no cover - compiled
        """_at_least_levels of pattern sums (P × S × K: int64, or doubles
        holding the integers exactly), pattern p counted mult[p] times."""
        n_p, n_s, n_k = low.shape
        hi = np.empty((n_s, n_k), dtype=np.int64)
        lo = np.empty((n_s, n_k), dtype=np.int64)
        acc = np.zeros((n_s, n_s, n_k), dtype=np.int64)      # k contiguous
        n_b = 0
        for p in range(n_p):
            w = mult[p]
            n_b += w
            for s in range(n_s):
                m = scale[s]
                for k in range(n_k):
                    # (the sums as int64, read from doubles holding them exactly)
                    v = np.int64(low[p, s, k]) * m
                    carry = v >> chunk
                    lo[s, k] = v - (carry << chunk)
                    hi[s, k] = (np.int64(high[p, s, k]) * m if two else 0) + carry
            for i in range(n_s):
                for j in range(i + 1, n_s):
                    for k in range(n_k):
                        a = hi[i, k]
                        c = hi[j, k]
                        x = lo[i, k]
                        y = lo[j, k]
                        acc[i, j, k] += w * ((a < c) or (a == c and x <= y))
                        acc[j, i, k] += w * ((a > c) or (a == c and x >= y))
        for k in range(n_k):
            for i in range(n_s):
                for j in range(n_s):
                    out[k, i, j] = n_b if i == j else acc[i, j, k]


if compiled is not None:
    @compiled
    def _at_least_weighted_one(low, pat, mult, scale, out):  # pragma: no cover - compiled
        """_at_least_patterns without a high level: the keys m_s·Σ_t
        low[t, s, k]·pat[t, p] (pat: T × P of 0/1) compared whole, pattern p
        counted mult[p] times. A measure at a time: its keys, systems ×
        patterns (in L1), then each pair of systems a branch-free sum over
        the patterns (vectorised; a mask, not a product: 2.5x). The sums
        are int64's, exact as the caller's (below 2^53), and so is
        m·Σ = Σ m·(...)."""
        n_t, n_s, n_k = low.shape
        n_p = pat.shape[1]
        key = np.empty((n_s, n_p), dtype=np.int64)
        n_b = 0
        for p in range(n_p):
            n_b += mult[p]
        for k in range(n_k):
            for s in range(n_s):
                row = key[s]
                for p in range(n_p):
                    row[p] = 0
                m = scale[s]
                for t in range(n_t):
                    v = low[t, s, k] * m
                    flip = pat[t]
                    for p in range(n_p):
                        row[p] += v & -flip[p]
            for i in range(n_s):
                a = key[i]
                out[k, i, i] = n_b
                for j in range(i + 1, n_s):
                    c = key[j]
                    le = 0
                    ge = 0
                    for p in range(n_p):
                        le += mult[p] & -np.int64(a[p] <= c[p])
                        ge += mult[p] & -np.int64(a[p] >= c[p])
                    out[k, i, j] = le
                    out[k, j, i] = ge


def at_least_upper(low: np.ndarray, patterns: np.ndarray, mult: np.ndarray,
                   scale: np.ndarray) -> np.ndarray:
    """(K × S(S−1)/2) int64: for every measure and pair i < j of systems
    (``np.triu_indices`` order), Σ_p mult[p]·[m_i·A_pi ≤ m_j·A_pj] with
    A_ps = Σ_t patterns[p, t]·low[t, s, k] — the upper triangle of
    :func:`at_least_patterns`' one-level counts (what soft pairwise
    accuracy reads), keys compared whole. ``low`` (T × S × K int64),
    ``patterns`` (P × T of 0/1), ``mult`` (P,) how many replicates drew
    each, ``scale`` m (S,); the caller checked that every m_s·Σ_t |low[t,
    s, k]| is below 2^53. Compiled: every key by one BLAS product (integers
    below 2^53 at every step: exact doubles, compared exactly), then each
    pair a branch-free sum over the patterns."""
    n_t, n_s, n_k = low.shape
    if BACKEND == "numba" and low.size and n_s > 1 and len(mult):
        out = np.zeros((n_k, n_s * (n_s - 1) // 2), dtype=np.int64)
        scaled = np.ascontiguousarray(np.transpose(
            np.asarray(low, dtype=np.int64) * np.asarray(scale, dtype=np.int64)[None, :, None],
            (2, 1, 0)), dtype=np.float64)                                   # K × S × T
        flips = np.ascontiguousarray(np.asarray(patterns, dtype=np.float64).T)   # T × P
        weights = np.ascontiguousarray(mult, dtype=np.int64)
        # a block of measures at a time: its keys ((K' · S) × P, each
        # (measure, system)'s a contiguous row) stay in cache for the counts
        for k0 in range(0, n_k, _UPPER_BLOCK):
            block = scaled[k0:k0 + _UPPER_BLOCK]
            keys = block.reshape(-1, n_t) @ flips
            _at_least_upper(keys.reshape(len(block), n_s, -1), weights, out[k0:k0 + len(block)])
        return out
    return at_least_upper_numpy(low, patterns, mult, scale)


#: measures per block of :func:`at_least_upper` (keys of 16 systems and
#: ~650 patterns: ~0.7 MB a block, in L2)
_UPPER_BLOCK = 8


def at_least_upper_numpy(low, patterns, mult, scale) -> np.ndarray:
    """:func:`at_least_upper` in numpy: every pattern's keys by one integer
    product, every pair's comparisons at once."""
    n_t, n_s, n_k = low.shape
    i, j = np.triu_indices(n_s, 1)
    pat = np.asarray(patterns, dtype=np.int64)
    keys = (pat @ np.asarray(low, dtype=np.int64).reshape(n_t, -1)).reshape(-1, n_s, n_k)
    keys = keys * np.asarray(scale, dtype=np.int64)[None, :, None]          # P × S × K
    le = keys[:, i, :] <= keys[:, j, :]                                     # P × pairs × K
    return np.einsum("p,pqk->kq", np.asarray(mult, dtype=np.int64), le.astype(np.int64))


if compiled is not None:
    @compiled
    def _at_least_upper(keys, mult, out):  # pragma: no cover - compiled
        """at_least_upper of ``keys`` (K × S × P doubles, exact integers):
        per measure and system i, two systems j at a time (each key and
        weight read once for both)."""
        n_k, n_s, n_p = keys.shape
        for k in range(n_k):
            q = 0
            for i in range(n_s):
                a = keys[k, i]
                j = i + 1
                while j < n_s:
                    c = keys[k, j]
                    if j + 1 < n_s:
                        d = keys[k, j + 1]
                        le = 0
                        le2 = 0
                        for p in range(n_p):
                            w = mult[p]
                            x = a[p]
                            le += w & -np.int64(x <= c[p])
                            le2 += w & -np.int64(x <= d[p])
                        out[k, q] = le
                        out[k, q + 1] = le2
                        q += 2
                        j += 2
                    else:
                        le = 0
                        for p in range(n_p):
                            le += mult[p] & -np.int64(a[p] <= c[p])
                        out[k, q] = le
                        q += 1
                        j += 1


def at_least_upper_cross(low: np.ndarray, patterns: np.ndarray, mult: np.ndarray,
                         counts: np.ndarray) -> np.ndarray:
    """:func:`at_least_upper`'s counts (K × S(S−1)/2, ``np.triu_indices``
    order) with the condition n_j·A_pi ≤ n_i·A_pj decided on each side's
    product itself (``counts`` n (S,) ≥ 1), not on keys of one common
    scale m_s = lcm(n)/n_s (the same integers: both sides times
    n_i·n_j/lcm) — for columns whose counts' lcm is too large for that
    scale. The caller checked that every n_s·Σ_t |low[t, s, k]| is below
    2^53 (each key and product an exact double). Compiled: the keys by one
    BLAS product a block of measures at a time, each pair a branch-free sum
    over the patterns; numpy's twin :func:`at_least_upper_cross_numpy`."""
    n_t, n_s, n_k = low.shape
    if BACKEND == "numba" and low.size and n_s > 1 and len(mult):
        out = np.zeros((n_k, n_s * (n_s - 1) // 2), dtype=np.int64)
        keys_of = np.ascontiguousarray(np.transpose(np.asarray(low, dtype=np.int64), (2, 1, 0)),
                                       dtype=np.float64)                       # K × S × T
        flips = np.ascontiguousarray(np.asarray(patterns, dtype=np.float64).T)   # T × P
        weights = np.ascontiguousarray(mult, dtype=np.int64)
        n = np.asarray(counts, dtype=np.float64)
        for k0 in range(0, n_k, _UPPER_BLOCK):
            block = keys_of[k0:k0 + _UPPER_BLOCK]
            keys = block.reshape(-1, n_t) @ flips
            _at_least_upper_cross(keys.reshape(len(block), n_s, -1), n, weights,
                                  out[k0:k0 + len(block)])
        return out
    return at_least_upper_cross_numpy(low, patterns, mult, counts)


def at_least_upper_cross_numpy(low, patterns, mult, counts) -> np.ndarray:
    """:func:`at_least_upper_cross` in numpy: every pattern's keys by one
    integer product, each pair's products compared as int64."""
    n_t, n_s, n_k = low.shape
    i, j = np.triu_indices(n_s, 1)
    pat = np.asarray(patterns, dtype=np.int64)
    keys = (pat @ np.asarray(low, dtype=np.int64).reshape(n_t, -1)).reshape(-1, n_s, n_k)
    n = np.asarray(counts, dtype=np.int64)
    le = keys[:, i, :] * n[j][None, :, None] <= keys[:, j, :] * n[i][None, :, None]
    return np.einsum("p,pqk->kq", np.asarray(mult, dtype=np.int64), le.astype(np.int64))


if compiled is not None:
    @compiled
    def _at_least_upper_cross(keys, n, mult, out):  # pragma: no cover - compiled
        """at_least_upper_cross of ``keys`` (K × S × P doubles, exact
        integers) and the counts ``n`` (S doubles)."""
        n_k, n_s, n_p = keys.shape
        for k in range(n_k):
            q = 0
            for i in range(n_s):
                a = keys[k, i]
                for j in range(i + 1, n_s):
                    c = keys[k, j]
                    ni = n[i]
                    nj = n[j]
                    le = 0
                    for p in range(n_p):
                        le += mult[p] & -np.int64(nj * a[p] <= ni * c[p])
                    out[k, q] = le
                    q += 1


def at_least_carried(levels: np.ndarray, counts: np.ndarray, equal: bool,
                     chunk: int) -> np.ndarray:
    """(K × S × S) int64: out[k, i, j] = #{b : n_j·A_bi ≤ n_i·A_bj}, the
    diagonal B, for A = Σ_l levels[l]·2^(chunk·l) (``levels``: L × B × S ×
    K int64 level sums, every level present, zeros where empty), decided
    exactly as :func:`~qarla_spark.measures.resampling.signed_mean_at_least`'s
    numpy path decides it: the weighted differences carried from the lowest
    level up (the bits kept below the carry: whether any is set), ``equal``:
    every count the same (the plain difference). Compiled; without numba,
    None is never returned — the caller runs its numpy path instead."""
    n_l, n_b, n_s, n_k = levels.shape
    out = np.zeros((n_k, n_s, n_s), dtype=np.int64)
    _at_least_carried(np.ascontiguousarray(levels, dtype=np.int64),
                      np.ascontiguousarray(counts, dtype=np.int64), bool(equal), int(chunk),
                      out)
    return out


if compiled is not None:
    @compiled
    def _at_least_carried(levels, counts, equal, chunk, out):  # pragma: no cover - compiled
        n_l, n_b, n_s, n_k = levels.shape
        mask = (np.int64(1) << chunk) - 1
        acc = np.zeros((n_s, n_s, n_k), dtype=np.int64)
        carry = np.zeros(n_k, dtype=np.int64)
        rest = np.zeros(n_k, dtype=np.int64)
        for b in range(n_b):
            for i in range(n_s):
                for j in range(i + 1, n_s):
                    ci = counts[i]
                    cj = counts[j]
                    carry[:] = 0
                    rest[:] = 0
                    # the measures side by side (the innermost loop)
                    for lv in range(n_l):
                        for k in range(n_k):
                            a = levels[lv, b, i, k]
                            c = levels[lv, b, j, k]
                            v = carry[k] + ((a - c) if equal else (a * cj - c * ci))
                            rest[k] |= v & mask
                            carry[k] = v >> chunk
                    for k in range(n_k):
                        v = carry[k]
                        acc[i, j, k] += (v < 0) or (v == 0 and rest[k] == 0)
                        acc[j, i, k] += v >= 0
        for k in range(n_k):
            for i in range(n_s):
                for j in range(n_s):
                    out[k, i, j] = n_b if i == j else acc[i, j, k]


# ---------------------------------------------------------------------------
# Kendall's concordance of rows against one shared row
# ---------------------------------------------------------------------------

def concordance_shared(x: np.ndarray, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray,
                                                              np.ndarray]:
    """(con (B × C), nx (B × C), ny (B,)) int64 of rows x[b, c] (B × C × n)
    against y[b] (B × n): Σ_{a<d} sign(x_a − x_d)·sign(y_a − y_d) and the
    pairs each side orders (a NaN orders nothing)."""
    if BACKEND == "numba":
        n_b, n_c, _ = x.shape
        con = np.empty((n_b, n_c), dtype=np.int64)
        nx = np.empty((n_b, n_c), dtype=np.int64)
        ny = np.empty(n_b, dtype=np.int64)
        x = np.ascontiguousarray(x, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        # many rows against one: a pair's rows side by side, so the
        # innermost loop runs over the rows (measured 2.3x on 20 rows of 59)
        kernel = _concordance_wide if n_c >= 8 else _concordance
        kernel(x, y, con, nx, ny)
        return con, nx, ny
    return concordance_shared_numpy(x, y)


def concordance_shared_numpy(x: np.ndarray, y: np.ndarray):
    """:func:`concordance_shared` in numpy: each item against the items
    after it."""
    n_b, n_m, n = x.shape
    con = np.zeros((n_b, n_m), dtype=np.int64)
    nx = np.zeros((n_b, n_m), dtype=np.int64)
    ny = np.zeros(n_b, dtype=np.int64)
    for a in range(n - 1):
        xa, xr = x[:, :, a:a + 1], x[:, :, a + 1:]
        ya, yr = y[:, a:a + 1], y[:, a + 1:]
        sx = (xa > xr).astype(np.int8) - (xa < xr).astype(np.int8)
        sy = (ya > yr).astype(np.int8) - (ya < yr).astype(np.int8)
        con += np.einsum("bmr,br->bm", sx, sy, dtype=np.int64)
        nx += np.count_nonzero(sx, axis=2)
        ny += np.count_nonzero(sy, axis=1)
    return con, nx, ny


if compiled is not None:
    @compiled
    def _concordance(x, y, con, nx, ny):  # pragma: no cover - compiled
        n_b, n_c, n = x.shape
        signs = np.zeros((n, n), dtype=np.int32)        # y's, once per row b
        for b in range(n_b):
            count = 0
            for p in range(n - 1):
                yp = y[b, p]
                for q in range(p + 1, n):
                    s = np.int32(yp > y[b, q]) - np.int32(yp < y[b, q])
                    signs[p, q] = s
                    count += s != 0
            ny[b] = count
            for c in range(n_c):
                row = x[b, c]
                total = 0
                ordered = 0
                for p in range(n - 1):
                    xp = row[p]
                    # branch-free over a row of the signs, so that the
                    # compiler vectorises it
                    for q in range(p + 1, n):
                        sx = np.int32(xp > row[q]) - np.int32(xp < row[q])
                        total += sx * signs[p, q]
                        ordered += sx * sx
                con[b, c] = total
                nx[b, c] = ordered


if compiled is not None:
    @compiled
    def _concordance_wide(x, y, con, nx, ny):  # pragma: no cover - compiled
        n_b, n_c, n = x.shape
        xt = np.empty((n, n_c))                         # a row b's items × rows
        total = np.zeros(n_c, dtype=np.int64)
        ordered = np.zeros(n_c, dtype=np.int64)
        for b in range(n_b):
            for p in range(n):
                for c in range(n_c):
                    xt[p, c] = x[b, c, p]
            total[:] = 0
            ordered[:] = 0
            count = 0
            for p in range(n - 1):
                yp = y[b, p]
                xp = xt[p]
                for q in range(p + 1, n):
                    s = np.int64(yp > y[b, q]) - np.int64(yp < y[b, q])
                    count += s != 0
                    xq = xt[q]
                    for c in range(n_c):
                        sx = np.int64(xp[c] > xq[c]) - np.int64(xp[c] < xq[c])
                        total[c] += sx * s
                        ordered[c] += sx * sx
            ny[b] = count
            for c in range(n_c):
                con[b, c] = total[c]
                nx[b, c] = ordered[c]


# ---------------------------------------------------------------------------
# sign sums over the pairs of systems, several criteria at once
# ---------------------------------------------------------------------------

def sign_sums(ms: np.ndarray, hs: np.ndarray):
    """(concordance (C × B × M), metric pairs (B × M), human pairs (C × B),
    both tied (C × B × M)) int64 of measure scores ``ms`` (n × B × M,
    system-major) against each criterion's human scores ``hs`` (C × n × B):
    over the pairs of systems a < d, Σ sign(m_a − m_d)·sign(h_a − h_d),
    #{m_a ≠ m_d}, #{h_a ≠ h_d}, #{h_a = h_d and m_a = m_d} (the pairs both
    tie: :func:`~qarla_spark.measures.meta_eval.wmt_agreement_counts`'); a
    NaN human score orders nothing and ties nothing."""
    if BACKEND == "numba" and ms.shape[0] * (ms.shape[0] - 1) // 2 < 2 ** 31:
        return sign_sums_rows(np.asarray(ms).transpose(1, 0, 2), np.asarray(hs).transpose(0, 2, 1))
    return sign_sums_numpy(ms, hs)


def sign_sums_rows(xs: np.ndarray, hs: np.ndarray):
    """:func:`sign_sums` of the scores in the replicates' layout: ``xs``
    (B × n × M, row-major: the meta group's system scores as made) and
    ``hs`` (C × B × n), the same integers — the kernel reads a replicate's
    systems where they are, not a system-major copy of B × n × M made
    first (3 ms of a task's meta group on 1,000 replicates)."""
    n_b, n, n_m = xs.shape
    if not (BACKEND == "numba" and n * (n - 1) // 2 < 2 ** 31):
        return sign_sums_numpy(np.asarray(xs).transpose(1, 0, 2), np.asarray(hs).transpose(0, 2, 1))
    n_c = hs.shape[0]
    con = np.zeros((n_c, n_b, n_m), dtype=np.int64)
    mp = np.zeros((n_b, n_m), dtype=np.int64)
    hp = np.zeros((n_c, n_b), dtype=np.int64)
    tb = np.zeros((n_c, n_b, n_m), dtype=np.int64)
    _sign_sums(np.ascontiguousarray(xs, dtype=np.float64),
               np.ascontiguousarray(hs, dtype=np.float64), con, mp, hp, tb)
    return con, mp, hp, tb


def sign_sums_numpy(ms: np.ndarray, hs: np.ndarray):
    """:func:`sign_sums` in numpy, pair of systems by pair."""
    n, n_b, n_m = ms.shape
    n_c = hs.shape[0]
    con = np.zeros((n_c, n_b, n_m), dtype=np.int64)
    hp = np.zeros((n_c, n_b), dtype=np.int64)
    mp = np.zeros((n_b, n_m), dtype=np.int64)
    tb = np.zeros((n_c, n_b, n_m), dtype=np.int64)
    i, j = np.triu_indices(n, 1)
    for a, d in zip(i, j):
        ma, md = ms[a], ms[d]
        sm = (ma > md).astype(np.int8) - (ma < md).astype(np.int8)
        mp += sm != 0
        for c in range(n_c):
            ha, hd = hs[c, a], hs[c, d]
            finite = np.isfinite(ha) & np.isfinite(hd)
            sh = np.where(finite, (ha > hd).astype(np.int8) - (ha < hd).astype(np.int8), 0
                          ).astype(np.int8)
            con[c] += sm * sh[:, None]
            hp[c] += sh != 0
            tb[c] += (finite & (ha == hd))[:, None] & (ma == md)
    return con, mp, hp, tb


if compiled is not None:
    @compiled
    def _sign_sums(ms, hs, con, mp, hp, tb):  # pragma: no cover - compiled
        """A replicate's signs and each criterion's sums over the pairs in
        int32 (|sums| ≤ the pairs, below 2^31 — the caller checks; twice the
        lanes of int64 in the vectorised sums), added to the int64 counts;
        ``ms`` B × n × M and ``hs`` C × B × n (a replicate's systems
        contiguous)."""
        n_b, n, n_m = ms.shape
        n_c = hs.shape[0]
        n_p = n * (n - 1) // 2
        sm = np.empty((n_p, n_m), dtype=np.int32)
        sh = np.empty((n_c, n_p), dtype=np.int32)
        tie = np.zeros((n_c, n_p), dtype=np.bool_)
        acc = np.empty(n_m, dtype=np.int32)
        macc = np.empty(n_m, dtype=np.int32)
        first = np.empty(n_p, dtype=np.int64)
        second = np.empty(n_p, dtype=np.int64)
        p = 0
        for a in range(n - 1):
            for d in range(a + 1, n):
                first[p] = a
                second[p] = d
                p += 1
        for b in range(n_b):
            for m in range(n_m):
                macc[m] = 0
            p = 0
            for a in range(n - 1):
                for d in range(a + 1, n):
                    for m in range(n_m):
                        x = ms[b, a, m]
                        y = ms[b, d, m]
                        s = np.int32(x > y) - np.int32(x < y)
                        sm[p, m] = s
                        macc[m] += s * s
                    for c in range(n_c):
                        ha = hs[c, b, a]
                        hd = hs[c, b, d]
                        if np.isfinite(ha) and np.isfinite(hd):
                            sh[c, p] = np.int32(ha > hd) - np.int32(ha < hd)
                            tie[c, p] = ha == hd
                        else:
                            sh[c, p] = 0
                            tie[c, p] = False
                        hp[c, b] += sh[c, p] != 0
                    p += 1
            for m in range(n_m):
                mp[b, m] += macc[m]
            for c in range(n_c):
                for m in range(n_m):
                    acc[m] = 0
                for q in range(n_p):
                    h = sh[c, q]
                    if h != 0:
                        row = sm[q]
                        for m in range(n_m):
                            acc[m] += h * row[m]
                    elif tie[c, q]:
                        a = first[q]
                        d = second[q]
                        for m in range(n_m):
                            tb[c, b, m] += ms[b, a, m] == ms[b, d, m]
                for m in range(n_m):
                    con[c, b, m] += acc[m]


# ---------------------------------------------------------------------------
# the paired bootstrap's counts
# ---------------------------------------------------------------------------

def not_better(r: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(not_better (M × M), both (M × M)) int64 of replicates ``r`` (B × M):
    #{b : r_ba ≤ r_bd, both finite} and #{b : both finite}."""
    if BACKEND == "numba":
        n_m = r.shape[1]
        nb = np.empty((n_m, n_m), dtype=np.int64)
        both = np.empty((n_m, n_m), dtype=np.int64)
        _not_better(np.ascontiguousarray(r.T, dtype=np.float64), nb, both)
        return nb, both
    return not_better_numpy(r)


def not_better_numpy(r: np.ndarray):
    """:func:`not_better` in numpy, a measure against every other at once."""
    fin = np.isfinite(r)
    n_m = r.shape[1]
    nb = np.empty((n_m, n_m), dtype=np.int64)
    both_n = np.empty((n_m, n_m), dtype=np.int64)
    for a in range(n_m):
        both = fin[:, [a]] & fin
        nb[a] = np.count_nonzero(both & (r[:, [a]] <= r), axis=0)
        both_n[a] = np.count_nonzero(both, axis=0)
    return nb, both_n


if compiled is not None:
    @compiled
    def _not_better(rt, nb, both):  # pragma: no cover - compiled
        """Each pair a < d once, both orders counted in one branch-free pass
        over the replicates (vectorised): r_a ≤ r_d, r_d ≤ r_a, both finite
        (a NaN compares false, so the finite test is part of the mask)."""
        n_m, n_b = rt.shape
        whole = np.empty(n_m, dtype=np.bool_)             # every replicate finite
        for a in range(n_m):
            x = rt[a]
            finite = 0
            for b in range(n_b):
                v = x[b]
                finite += np.int64(v - v == 0.0)          # finite: not NaN, not ±inf
            nb[a, a] = finite
            both[a, a] = finite
            whole[a] = finite == n_b
        for a in range(n_m):
            x = rt[a]
            for d in range(a + 1, n_m):
                y = rt[d]
                le = 0
                ge = 0
                fin = 0
                if whole[a] and whole[d]:
                    fin = n_b
                    for b in range(n_b):
                        le += np.int64(x[b] <= y[b])
                        ge += np.int64(y[b] <= x[b])
                else:
                    for b in range(n_b):
                        u = x[b]
                        v = y[b]
                        ok = np.int64(u - u == 0.0) & np.int64(v - v == 0.0)
                        fin += ok
                        le += ok & np.int64(u <= v)
                        ge += ok & np.int64(v <= u)
                nb[a, d] = le
                nb[d, a] = ge
                both[a, d] = fin
                both[d, a] = fin


# ---------------------------------------------------------------------------
# average ranks: counts of smaller and equal values of a row
# ---------------------------------------------------------------------------

def average_ranks(x: np.ndarray) -> Optional[np.ndarray]:
    """Row-wise #{smaller} + (#{equal} + 1) / 2 of a (R × n) array of finite
    values (:func:`~qarla_spark.measures.agreement.average_ranks`), compiled
    (the same doubles: integers and a halving); None without numba."""
    if BACKEND != "numba":
        return None
    out = np.empty(x.shape, dtype=np.float64)
    _average_ranks(np.ascontiguousarray(x, dtype=np.float64), out)
    return out


if compiled is not None:
    @compiled
    def _average_ranks(x, out):  # pragma: no cover - compiled
        rows, n = x.shape
        for r in range(rows):
            for a in range(n):
                v = x[r, a]
                less = 0
                equal = 0
                for d in range(n):
                    w = x[r, d]
                    if w < v:
                        less += 1
                    elif w == v:
                        equal += 1
                out[r, a] = less + (equal + 1) / 2.0


# ---------------------------------------------------------------------------
# tie calibration: the best ε of each measure, its objective exact
# ---------------------------------------------------------------------------

def calibrate(diff: np.ndarray, con: np.ndarray, htie: np.ndarray,
              weight: np.ndarray, orders=None) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Per measure (rows of ``diff``, M × P: |m_i − m_j| of each pair),
    the ε among 0 and every difference maximising N(ε) = Σ_pairs w·con +
    Σ_{diff ≤ ε} w·(htie − con) — tie calibration's objective times
    lcm(P_g)·G, an exact integer (``weight`` w = lcm/P_g of each pair's
    group; the caller checked G·lcm < 2^62) — the smallest ε among equal
    maxima: (N (M,) int64, ε (M,) float64). None without numba (the
    caller's numpy path, the same numbers). ``orders``: a function giving
    ``np.argsort(diff, axis=1)`` when the caller keeps it (made here
    otherwise)."""
    if BACKEND != "numba":
        return None
    n_m = diff.shape[0]
    best = np.empty(n_m, dtype=np.int64)
    eps = np.empty(n_m, dtype=np.float64)
    # numpy's sort of every row at once (vectorised; several times numba's
    # argsort row by row): the order within equal differences never shows
    order = np.argsort(diff, axis=1) if orders is None else orders()
    _calibrate(np.ascontiguousarray(diff), np.ascontiguousarray(con),
               np.ascontiguousarray(htie), np.ascontiguousarray(weight), order, best, eps)
    return best, eps


if compiled is not None:
    @compiled_inline
    def _sweep(row, order, mask, weight, htie, con, total):  # pragma: no cover - compiled
        """One measure's search of :func:`calibrate`: ``row`` its pairs'
        differences, ``order`` their argsort (each entry ``& mask``: a
        position, or a key of :func:`sorted_pair_keys` whose low bits are
        one), ``con`` its concordances, ``total`` the objective at ε below
        every difference; ε grows through the differences, each pair moving
        from concordant to tied. (The objective's maximum, its ε.)"""
        n_p = row.shape[0]
        have = False
        top = 0
        at = 0.0
        if row[order[0] & mask] != 0.0:         # ε = 0 ties no pair
            have = True
            top = total
        for k in range(n_p):
            p = order[k] & mask
            total += weight[p] * (np.int64(htie[p]) - np.int64(con[p]))
            # the last of its difference
            if k == n_p - 1 or row[order[k + 1] & mask] != row[p]:
                if not have or total > top:
                    have = True
                    top = total
                    at = row[p]
        return top, at

    @compiled
    def _calibrate(diff, con, htie, weight, orders, best, eps):  # pragma: no cover - compiled
        n_m, n_p = diff.shape
        for m in range(n_m):
            total = 0
            for p in range(n_p):
                if con[m, p]:
                    total += weight[p]
            best[m], eps[m] = _sweep(diff[m], orders[m], -1, weight, htie, con[m], total)


# ---------------------------------------------------------------------------
# tie calibration of the point values only: the measures' side in the kernel
# ---------------------------------------------------------------------------

def pair_differences(ms: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """(M × P) C-contiguous |ms[i[p], m] − ms[j[p], m]| of the items' scores
    ``ms`` (N × M) for the pairs (i, j): the doubles of
    :func:`pair_differences_numpy` (one subtraction and its absolute value
    each), compiled when numba runs (one pass, no gathered copies)."""
    ms = np.asarray(ms, dtype=np.float64)
    if BACKEND != "numba" or not ms.size or not len(i):
        return pair_differences_numpy(ms, i, j)
    out = np.empty((ms.shape[1], len(i)), dtype=np.float64)
    # a measure's scores a contiguous row: each row of ``out`` written in
    # order from one row's gathers
    _pair_differences(np.ascontiguousarray(ms.T), np.ascontiguousarray(i, dtype=np.int64),
                      np.ascontiguousarray(j, dtype=np.int64), out)
    return out


def pair_differences_numpy(ms: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """:func:`pair_differences` in numpy (meta_eval.calibration_side's)."""
    ms = np.asarray(ms, dtype=np.float64)
    return np.ascontiguousarray(np.abs(ms[i].T - ms[j].T))


def calibrate_pairs(ms: np.ndarray, i: np.ndarray, j: np.ndarray, sh: np.ndarray,
                    htie: np.ndarray, weight: np.ndarray, diff: np.ndarray,
                    order: np.ndarray, bits: int = 0) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """:func:`calibrate` with each pair's concordance decided in the kernel
    (not an M × P array made before): con[m, p] = the humans do not tie the
    pair (``htie``), |m_i − m_j| (``diff``, M × P, of
    :func:`pair_differences`) > 0 and sign(m_i − m_j) (by comparison, of
    ``ms`` N × M) is the humans' ``sh[p]``. ``order``: each row of
    ``diff``'s argsort, or with ``bits`` > 0 each row's sorted keys of
    :func:`sorted_pair_keys` (a pair's position their low ``bits``).
    (N (M,) int64, ε (M,)), or None without numba."""
    if BACKEND != "numba":
        return None
    n_m = diff.shape[0]
    best = np.empty(n_m, dtype=np.int64)
    eps = np.empty(n_m, dtype=np.float64)
    _calibrate_pairs(np.ascontiguousarray(np.asarray(ms, dtype=np.float64).T),
                     np.ascontiguousarray(i, dtype=np.int64),
                     np.ascontiguousarray(j, dtype=np.int64),
                     np.ascontiguousarray(sh, dtype=np.int8),
                     np.ascontiguousarray(htie, dtype=np.bool_),
                     np.ascontiguousarray(weight, dtype=np.int64),
                     np.ascontiguousarray(diff, dtype=np.float64),
                     np.ascontiguousarray(order, dtype=np.int64),
                     np.int64((1 << bits) - 1 if bits else -1), best, eps)
    return best, eps


def sorted_pair_keys(diff: np.ndarray) -> Optional[Tuple[np.ndarray, int]]:
    """Each row of ``diff`` (M × P of differences ≥ 0) sorted as integer
    keys q·2^bits + p (bits: those of the positions p < P; q: the
    difference times one power of two 2^s, exact, below 2^(62 − bits)):
    (keys M × P sorted by row, bits) — the positions in the order of an
    argsort of each row (equal differences by position; the order within
    equal differences never shows to :func:`calibrate_pairs`), by numpy's
    sort of int64 (~2x faster than its argsort of doubles); None when some
    difference is not an integer at that scale (doubles of full
    precision) or not finite. Compiled when numba runs (numpy's twin:
    :func:`sorted_pair_keys_numpy`, the same keys)."""
    keys = _pair_keys(diff)
    if keys is None:
        return None
    if BACKEND != "numba" or not _radix_rows(keys[0], np.int64(keys[1]),
                                             np.empty(keys[0].shape[1], dtype=np.int64),
                                             np.int64(_RADIX_PASSES)):
        keys[0].sort(axis=1)
    return keys


#: the most 8-bit passes of :func:`_radix_rows` (the differences' bits
#: that vary: 32; more, numpy's sort)
_RADIX_PASSES = 4


def _key_scale(diff: np.ndarray) -> Optional[Tuple[int, int]]:
    """(s, bits) of :func:`sorted_pair_keys`, or None."""
    n_m, n_p = diff.shape
    if not diff.size:
        return None
    bits = max(1, int(n_p - 1).bit_length())
    top = float(diff.max())
    if not (0.0 <= top < math.inf):
        return None
    shift = 62 - bits - int(np.frexp(top)[1])     # top·2^shift < 2^(62 − bits)
    if shift < 0 or shift > 1000:
        return None
    return shift, bits


def _pair_keys(diff: np.ndarray) -> Optional[Tuple[np.ndarray, int]]:
    """The unsorted keys of :func:`sorted_pair_keys`, or None."""
    found = _key_scale(diff)
    if found is None:
        return None
    shift, bits = found
    if BACKEND != "numba":
        return _pair_keys_numpy(diff, shift, bits)
    out = np.empty(diff.shape, dtype=np.int64)
    if not _pack_keys(np.ascontiguousarray(diff, dtype=np.float64), float(2.0 ** shift),
                      np.int64(bits), out):
        return None
    return out, bits


def _pair_keys_numpy(diff, shift: int, bits: int) -> Optional[Tuple[np.ndarray, int]]:
    scaled = np.ldexp(np.asarray(diff, dtype=np.float64), shift)
    q = scaled.astype(np.int64)
    if not (q == scaled).all():
        return None
    q <<= bits
    q |= np.arange(diff.shape[1], dtype=np.int64)
    return q, bits


def sorted_pair_keys_numpy(diff: np.ndarray) -> Optional[Tuple[np.ndarray, int]]:
    """:func:`sorted_pair_keys` in numpy."""
    found = _key_scale(diff)
    keys = _pair_keys_numpy(diff, *found) if found is not None else None
    if keys is None:
        return None
    keys[0].sort(axis=1)
    return keys


if compiled is not None:
    @compiled
    def _pair_differences(mt, i, j, out):  # pragma: no cover - compiled
        """out[m, p] = |mt[m, i[p]] − mt[m, j[p]]| (``mt``: M × N)."""
        for m in range(mt.shape[0]):
            row = mt[m]
            dst = out[m]
            for p in range(i.size):
                dst[p] = abs(row[i[p]] - row[j[p]])

    @compiled
    def _radix_rows(keys, bits, tmp, max_passes):  # pragma: no cover - compiled
        """Each row of ``keys`` (M × P, unique keys q·2^bits + p, in order of
        p as :func:`_pack_keys` makes them) sorted in place: a stable LSD
        radix sort of q alone, 8 bits a pass over the bits where a row's q
        vary (the row in order of p to start with: the order of (q, p),
        numpy's sort of the keys) — ~10 µs a row of 1,200 keys where numpy's
        sort takes ~16 (the chance baseline's differences: 24 bits on the
        2^-24 grid, issue 36). False, the keys untouched, when some row's q
        vary over more than ``max_passes`` bytes (the caller sorts)."""
        n_m, n = keys.shape
        if n < 2:
            return True
        spans = np.zeros((n_m, 2), dtype=np.int64)
        for m in range(n_m):
            row = keys[m]
            first = row[0] >> bits
            vary = np.int64(0)
            for p in range(1, n):
                vary |= (row[p] >> bits) ^ first
            if vary == 0:
                spans[m, 0] = -1
                continue
            lo = 0
            while not (vary >> lo) & 1:
                lo += 1
            hi = 63
            while not (vary >> hi) & 1:
                hi -= 1
            if (hi - lo) // 8 + 1 > max_passes:
                return False
            spans[m, 0] = lo
            spans[m, 1] = hi
        count = np.empty(257, dtype=np.int64)
        for m in range(n_m):
            if spans[m, 0] < 0:
                continue                    # (one q: in order of p already)
            src = keys[m]
            dst = tmp
            swaps = 0
            shift = bits + spans[m, 0]
            while shift <= bits + spans[m, 1]:
                count[:] = 0
                for p in range(n):
                    count[((src[p] >> shift) & 255) + 1] += 1
                for d in range(256):
                    count[d + 1] += count[d]
                for p in range(n):
                    d = (src[p] >> shift) & 255
                    dst[count[d]] = src[p]
                    count[d] += 1
                src, dst = dst, src
                swaps += 1
                shift += 8
            if swaps % 2:
                keys[m, :] = tmp
        return True

    @compiled
    def _pack_keys(diff, scale, bits, out):  # pragma: no cover - compiled
        """out[m, p] = (diff[m, p]·scale) << bits | p, or False when a
        scaled difference is not an integer."""
        n_m, n_p = diff.shape
        for m in range(n_m):
            for p in range(n_p):
                v = diff[m, p] * scale
                q = np.int64(v)
                if np.float64(q) != v:
                    return False
                out[m, p] = (q << bits) | p
        return True

    @compiled
    def _calibrate_pairs(mt, i, j, sh, htie, weight, diff, orders, mask, best,
                         eps):  # pragma: no cover - compiled
        """(``mt``: the items' scores M × N, a measure's a row.)"""
        n_m, n_p = diff.shape
        con = np.empty(n_p, dtype=np.int64)
        for m in range(n_m):
            row = diff[m]
            order = orders[m]
            scores = mt[m]
            total = 0
            for p in range(n_p):
                a = scores[i[p]]
                b = scores[j[p]]
                sm = np.int8(a > b) - np.int8(a < b)
                c = np.int64((not htie[p]) and row[p] > 0.0 and sm == sh[p])
                con[p] = c
                total += weight[p] * c
            best[m], eps[m] = _sweep(row, order, mask, weight, htie, con, total)
