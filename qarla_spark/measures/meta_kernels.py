"""Compiled kernels of the statistics stage's meta group (issue 36), each
with its numpy twin, the same numbers bit for bit.

- :func:`kendall_replicates`: Kendall's τ_b of many rows of replicates
  against one shared row per replicate (KING of the sets against each
  judge-based statistic of their QUEEN, :func:`~qarla_spark.stages.judges.
  _king_vs_judges`), read in the replicates' own layout (rows × sets × B:
  a statistic's replicates of a set are contiguous), the replicates
  innermost — no gather into B × rows × sets first. The counts are
  integers (exact whatever their order); τ is made from them as
  :func:`~qarla_spark.measures.agreement.correlation_rows_many` makes it.
- :func:`replicate_sums`: :func:`~qarla_spark.measures.resampling.
  replicate_sums`' doubles (its exact integer parts, each scaled by its
  power of two and added from the highest level down, in that order), 32
  replicates at a time (one BLAS product of every level, then one pass
  over each row), not three passes over B × S arrays per level.

``BACKEND`` follows :mod:`~qarla_spark.measures.pair_counts`' switch
(``QARLA_COUNT_BACKEND``); the tests compare every kernel with its twin.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from qarla_spark.measures import pair_counts

try:
    import numba  # noqa: F401

    from qarla_spark.compiled import compiled
except ImportError:  # pragma: no cover - numba is a dependency
    compiled = None

NAN = float("nan")


def backend() -> str:
    """``numba`` when the kernels run, else ``numpy`` (read when called)."""
    return "numba" if compiled is not None and pair_counts.BACKEND == "numba" else "numpy"


# ---------------------------------------------------------------------------
# Kendall's τ_b of rows of replicates against a shared row
# ---------------------------------------------------------------------------

def kendall_replicates(x: np.ndarray, y: np.ndarray, min_n: int = 3) -> np.ndarray:
    """(B × C) Kendall's τ_b of each row ``x[c, :, b]`` (x: C × n × B)
    against ``y[:, b]`` (n × B): the numbers of
    ``correlation_rows_many(keys, x.transpose(2, 0, 1), y.T[None],
    kinds=("kendall",))[0, :, :, 0]`` — NaN when fewer than ``min_n``
    points, or where a side of the pair of rows does not vary or holds a
    NaN (``np.ptp`` not above 0)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n_c, n, n_b = x.shape
    if n < min_n:
        return np.full((n_b, n_c), NAN)
    if backend() == "numba" and n * (n - 1) // 2 < 2 ** 31:
        x = np.ascontiguousarray(x)
        y = np.ascontiguousarray(y)
        con = np.empty((n_b, n_c), dtype=np.int64)
        nx = np.empty((n_b, n_c), dtype=np.int64)
        ny = np.empty(n_b, dtype=np.int64)
        ok_x = np.empty((n_b, n_c), dtype=np.bool_)
        ok_y = np.empty(n_b, dtype=np.bool_)
        _concordance_replicates(x, y, con, nx, ny, ok_x, ok_y)
        oks = ok_x & ok_y[:, None]
    else:
        con, nx, ny = pair_counts.concordance_shared_numpy(x.transpose(2, 0, 1), y.T)
        oks = (np.ptp(x, axis=1) > 0).T & (np.ptp(y, axis=0) > 0)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = con.astype(np.float64) / np.sqrt(nx.astype(np.float64)
                                               * ny.astype(np.float64)[:, None])
    return np.where(oks, tau, NAN)


if compiled is not None:
    @compiled
    def _concordance_replicates(x, y, con, nx, ny, ok_x, ok_y):  # pragma: no cover
        """Counts of every replicate b (innermost: a set's replicates are
        contiguous) of every row c: Σ_{p<q} sign(x_p − x_q)·sign(y_p − y_q),
        #{x_p ≠ x_q}, #{y_p ≠ y_q} (a NaN orders nothing), and whether
        each row varies without a NaN (``np.ptp`` > 0: some pair differs
        and no value is NaN)."""
        n_c, n, n_b = x.shape
        tot = np.zeros((n_c, n_b), dtype=np.int32)
        ordered = np.zeros((n_c, n_b), dtype=np.int32)
        sy = np.zeros(n_b, dtype=np.int32)
        count = np.zeros(n_b, dtype=np.int32)
        nan_x = np.zeros((n_c, n_b), dtype=np.bool_)
        nan_y = np.zeros(n_b, dtype=np.bool_)
        for p in range(n):
            yp = y[p]
            for k in range(n_b):
                nan_y[k] |= yp[k] != yp[k]
            for c in range(n_c):
                xp = x[c, p]
                nc = nan_x[c]
                for k in range(n_b):
                    nc[k] |= xp[k] != xp[k]
        for p in range(n - 1):
            yp = y[p]
            for q in range(p + 1, n):
                yq = y[q]
                for k in range(n_b):
                    sy[k] = np.int32(yp[k] > yq[k]) - np.int32(yp[k] < yq[k])
                    count[k] += sy[k] * sy[k]
                for c in range(n_c):
                    xp = x[c, p]
                    xq = x[c, q]
                    t = tot[c]
                    o = ordered[c]
                    for k in range(n_b):
                        s = np.int32(xp[k] > xq[k]) - np.int32(xp[k] < xq[k])
                        t[k] += s * sy[k]
                        o[k] += s * s
        for k in range(n_b):
            ny[k] = count[k]
            ok_y[k] = count[k] > 0 and not nan_y[k]
            for c in range(n_c):
                con[k, c] = tot[c, k]
                nx[k, c] = ordered[c, k]
                ok_x[k, c] = ordered[c, k] > 0 and not nan_x[c, k]


# ---------------------------------------------------------------------------
# replicate sums: resampling.replicate_sums' doubles in one pass
# ---------------------------------------------------------------------------

def replicate_sums(weights: np.ndarray, pieces: list, base: int) -> Optional[np.ndarray]:
    """(B × S) :func:`~qarla_spark.measures.resampling.replicate_sums` of
    the pieces ``pieces`` ([(level, piece T × S int64)], lowest level
    first, :func:`~qarla_spark.measures.resampling.level_pieces`) of
    values times 2^``base`` with integer ``weights`` (B × T, small enough
    that every partial sum is an integer below 2^53): Σ over the levels
    from the highest down of (Σ_t w_bt·piece[t, s]) · 2^(level + base),
    added in doubles in that order, from +0.0 — the same operations on the
    same doubles (the inner sums are exact integers whatever their order;
    a product by a power of two that is a normal double rounds as
    ``np.ldexp`` does). None where the kernel does not run (the numpy
    backend, or a scale outside the normal doubles): the caller's numpy."""
    if backend() != "numba" or not pieces:
        return None
    exponents = [level + base for level, _ in reversed(pieces)]
    if min(exponents) < -1022 or max(exponents) > 1023:
        return None
    scales = np.asarray([2.0 ** e for e in exponents], dtype=np.float64)
    # T × (levels · S): a topic's pieces of every level side by side, the
    # highest level first
    n_s = pieces[0][1].shape[1]
    stacked = np.empty((pieces[0][1].shape[0], len(pieces) * n_s), dtype=np.float64)
    for k, (_, piece) in enumerate(reversed(pieces)):
        stacked[:, k * n_s:(k + 1) * n_s] = piece
    weights_f = np.ascontiguousarray(weights, dtype=np.float64)
    out = np.empty((weights_f.shape[0], n_s), dtype=np.float64)
    _replicate_sums(weights_f, stacked, scales, out)
    return out


if compiled is not None:
    @compiled
    def _replicate_sums(weights, pieces, scales, out):  # pragma: no cover - compiled
        """Blocks of 32 replicates: their levels' integer sums by one BLAS
        product (exact: integers below 2^53; a zero's sign does not reach
        the result, which starts at +0.0), then each row's levels scaled
        and added from the highest down."""
        n_b = weights.shape[0]
        n_l = scales.shape[0]
        n_s = out.shape[1]
        for b0 in range(0, n_b, 32):
            b1 = min(n_b, b0 + 32)
            part = np.dot(weights[b0:b1], pieces)
            for b in range(b0, b1):
                row = out[b]
                found = part[b - b0]
                for s in range(n_s):
                    row[s] = 0.0
                for level in range(n_l):
                    scale = scales[level]
                    at = level * n_s
                    for s in range(n_s):
                        row[s] += found[at + s] * scale
