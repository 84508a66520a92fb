"""numpy's row arithmetic, compiled, the same doubles (issue 36).

The statistics stage computes Pearson's and Spearman's correlations of
thousands of short rows (a replicate's system scores of every measure
against each criterion's) per task; in numpy each is a dozen passes over
temporary arrays, and a task of few topics costs what a task of many does.
The kernels here make the same numbers in one pass per row: the same
operations in the same order as :mod:`~qarla_spark.measures.agreement`'s
numpy code, so every double is bit for bit numpy's.

What "the same order" takes: numpy sums a contiguous row of n doubles
(``np.add.reduce`` over the last axis: ``sum``, ``mean``) by *pairwise
summation* — fewer than 8 values left to right; up to 128 in eight
interleaved partial sums ``r[k] = a[k] + a[k+8] + …``, combined as
``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))``, then the remaining n mod 8 values
added in turn; more than 128 split at a multiple of 8 near the half and
each half summed so. :func:`pairwise_sum` is that rule (numpy's
``pairwise_sum`` in its ``loops_utils``; checked against numpy on random
rows of every length in ``tests/test_compiled_rows.py``), a mean is that sum
divided by n, a square root and a division are IEEE's correctly rounded
operations on both sides. Nothing is compiled with fast-math.

``BACKEND`` follows :mod:`~qarla_spark.measures.pair_counts`' switch
(``QARLA_COUNT_BACKEND``): with ``numpy`` (or without numba) the callers
keep their numpy code, which the tests compare with these kernels.
"""

from __future__ import annotations

import numpy as np

from qarla_spark.measures import pair_counts

try:
    from qarla_spark.compiled import compiled_ieee, compiled_inline
    import numba  # noqa: F401
except ImportError:  # pragma: no cover - numba is a dependency
    compiled_ieee = compiled_inline = None


def backend() -> str:
    """``numba`` when the kernels run, else ``numpy`` (the switch of
    :data:`~qarla_spark.measures.pair_counts.BACKEND`, read when called)."""
    return "numba" if compiled_ieee is not None and pair_counts.BACKEND == "numba" else "numpy"


if compiled_ieee is not None:
    @compiled_inline
    def _block_sum(a, lo, n):  # pragma: no cover - compiled
        """numpy's pairwise sum of a[lo:lo + n] for n ≤ 128."""
        if n < 8:
            res = 0.0
            for i in range(n):
                res += a[lo + i]
            return res
        r0 = a[lo]
        r1 = a[lo + 1]
        r2 = a[lo + 2]
        r3 = a[lo + 3]
        r4 = a[lo + 4]
        r5 = a[lo + 5]
        r6 = a[lo + 6]
        r7 = a[lo + 7]
        i = 8
        stop = n - (n % 8)
        while i < stop:
            r0 += a[lo + i]
            r1 += a[lo + i + 1]
            r2 += a[lo + i + 2]
            r3 += a[lo + i + 3]
            r4 += a[lo + i + 4]
            r5 += a[lo + i + 5]
            r6 += a[lo + i + 6]
            r7 += a[lo + i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[lo + i]
            i += 1
        return res

    @compiled_ieee
    def pairwise_sum(a, lo, n):  # pragma: no cover - compiled
        """numpy's pairwise sum of a[lo:lo + n] (see the module's
        docstring). Above 128 values numpy recurses on two halves; here the
        same tree is walked with a stack of its own (a recursive function
        loaded from numba's cache crashes the process)."""
        if n <= 128:
            return _block_sum(a, lo, n)
        starts = np.empty(128, dtype=np.int64)     # depth ≤ log2(n) < 64, two a level
        sizes = np.empty(128, dtype=np.int64)
        seen = np.zeros(128, dtype=np.bool_)
        values = np.empty(128)
        n_values = 0
        top = 0
        starts[0] = lo
        sizes[0] = n
        while top >= 0:
            size = sizes[top]
            if size <= 128:
                values[n_values] = _block_sum(a, starts[top], size)
                n_values += 1
                top -= 1
            elif seen[top]:
                # both halves done: left then right on the value stack
                n_values -= 1
                values[n_values - 1] = values[n_values - 1] + values[n_values]
                top -= 1
            else:
                seen[top] = True
                half = size // 2
                half -= half % 8
                start = starts[top]
                # the right half pushed first, so the left is summed first
                starts[top + 1] = start + half
                sizes[top + 1] = size - half
                seen[top + 1] = False
                starts[top + 2] = start
                sizes[top + 2] = half
                seen[top + 2] = False
                top += 2
        return values[0]

    @compiled_inline
    def _varies(row):  # pragma: no cover - compiled
        """np.ptp(row) > 0: max − min > 0 (False with a NaN)."""
        lo = row[0]
        hi = row[0]
        for v in row:
            if v != v:
                return False
            if v < lo:
                lo = v
            if v > hi:
                hi = v
        return hi - lo > 0

    @compiled_inline
    def _ranks(row, out):  # pragma: no cover - compiled
        """agreement.average_ranks of one finite row: #{smaller} +
        (#{equal} + 1) / 2."""
        n = row.size
        for a in range(n):
            v = row[a]
            less = 0
            equal = 0
            for d in range(n):
                w = row[d]
                if w < v:
                    less += 1
                elif w == v:
                    equal += 1
            out[a] = less + (equal + 1) / 2.0

    @compiled_inline
    def _deviate(row, dev, square):  # pragma: no cover - compiled
        """agreement._deviations of one row: dev = row − mean(row), and
        Σ dev² (the squares summed from a row of them, as numpy)."""
        n = row.size
        mean = pairwise_sum(row, 0, n) / n
        for i in range(n):
            d = row[i] - mean
            dev[i] = d
            square[i] = d * d
        return pairwise_sum(square, 0, n)

    @compiled_inline
    def _pearson_of(dx, sx, dy, sy, prod):  # pragma: no cover - compiled
        """agreement._pearson_of of one pair of rows' deviations: Σ dx·dy /
        sqrt(sx·sy), clipped to [−1, 1] (NaN kept)."""
        n = dx.size
        for i in range(n):
            prod[i] = dx[i] * dy[i]
        r = pairwise_sum(prod, 0, n) / np.sqrt(sx * sy)
        if r > 1.0:
            return 1.0
        if r < -1.0:
            return -1.0
        return r

    @compiled_ieee
    def _pearson_spearman_many(x, ys, want_p, want_s, out):  # pragma: no cover - compiled
        """out[c, b, m, 0] Pearson and [.., 1] Spearman of x[b, m] against
        ys[c, b] where both rows vary (out left as given elsewhere)."""
        n_b, n_m, n = x.shape
        n_c = ys.shape[0]
        dy = np.empty((n_c, n))
        sy = np.empty(n_c)
        dry = np.empty((n_c, n))
        sry = np.empty(n_c)
        ok_y = np.zeros(n_c, dtype=np.bool_)
        dx = np.empty(n)
        drx = np.empty(n)
        ranks = np.empty(n)
        square = np.empty(n)
        prod = np.empty(n)
        for b in range(n_b):
            some = False
            for c in range(n_c):
                row = ys[c, b]
                ok_y[c] = _varies(row)
                if ok_y[c]:
                    some = True
                    if want_p:
                        sy[c] = _deviate(row, dy[c], square)
                    if want_s:
                        _ranks(row, ranks)
                        sry[c] = _deviate(ranks, dry[c], square)
            if not some:
                continue
            for m in range(n_m):
                row = x[b, m]
                if not _varies(row):
                    continue
                sx = srx = 0.0
                if want_p:
                    sx = _deviate(row, dx, square)
                if want_s:
                    _ranks(row, ranks)
                    srx = _deviate(ranks, drx, square)
                for c in range(n_c):
                    if ok_y[c]:
                        if want_p:
                            out[c, b, m, 0] = _pearson_of(dx, sx, dy[c], sy[c], prod)
                        if want_s:
                            out[c, b, m, 1] = _pearson_of(drx, srx, dry[c], sry[c], prod)



if compiled_ieee is not None:
    @compiled_inline
    def _signs_ranks(row, signs, ranks):  # pragma: no cover - compiled
        """signs[p, q] = sign(row[p] − row[q]) of every (p, q) (a dense
        matrix: loops the compiler vectorises) and each item's average rank
        ½ + n/2 + ½·Σ_q signs[p, q] (exact half-integers: :func:`_ranks`'s
        doubles); returns Σ signs² (twice the pairs the row orders)."""
        n = row.size
        ordered = 0
        for p in range(n):
            v = row[p]
            acc = 0
            sq = 0
            for q in range(n):
                sg = np.int32(v > row[q]) - np.int32(v < row[q])
                signs[p, q] = sg
                acc += sg
                sq += sg * sg
            ranks[p] = 0.5 + n / 2.0 + acc / 2.0
            ordered += sq
        return ordered

    @compiled_ieee
    def _three_correlations(x, ys, out):  # pragma: no cover - compiled
        """out[c, b, 0..2]: Pearson, Spearman and Kendall's tau-b of x[b]
        (B × n) against ys[c, b] (C × B × n) where both rows vary (out left
        as given elsewhere): each row's signs of all its pairs found once,
        giving both its average ranks and Kendall's counts (integers: the
        full matrices' sums are twice the pairs')."""
        n_b, n = x.shape
        n_c = ys.shape[0]
        dy = np.empty((n_c, n))
        sy = np.empty(n_c)
        dry = np.empty((n_c, n))
        sry = np.empty(n_c)
        ny = np.zeros(n_c, dtype=np.int64)
        signs_y = np.zeros((n_c, n, n), dtype=np.int32)
        ok_y = np.zeros(n_c, dtype=np.bool_)
        dx = np.empty(n)
        drx = np.empty(n)
        ranks = np.empty(n)
        square = np.empty(n)
        prod = np.empty(n)
        signs_x = np.zeros((n, n), dtype=np.int32)
        for b in range(n_b):
            row = x[b]
            if not _varies(row):
                continue
            some = False
            for c in range(n_c):
                yrow = ys[c, b]
                ok_y[c] = _varies(yrow)
                if ok_y[c]:
                    some = True
                    sy[c] = _deviate(yrow, dy[c], square)
                    ny[c] = _signs_ranks(yrow, signs_y[c], ranks) // 2
                    sry[c] = _deviate(ranks, dry[c], square)
            if not some:
                continue
            sx = _deviate(row, dx, square)
            nx = _signs_ranks(row, signs_x, ranks) // 2
            srx = _deviate(ranks, drx, square)
            for c in range(n_c):
                if not ok_y[c]:
                    continue
                out[c, b, 0] = _pearson_of(dx, sx, dy[c], sy[c], prod)
                out[c, b, 1] = _pearson_of(drx, srx, dry[c], sry[c], prod)
                con = 0
                sc = signs_y[c]
                for p in range(n):
                    acc = 0
                    for q in range(n):
                        acc += signs_x[p, q] * sc[p, q]
                    con += acc
                out[c, b, 2] = np.float64(con // 2) / np.sqrt(np.float64(nx) * np.float64(ny[c]))


def three_correlations(x: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """(C × B × 3): Pearson, Spearman and Kendall's tau-b (``agreement.
    KINDS``' order) of every row x[b] (B × n, the points in their final
    order) against ys[c, b] (C × B × n), NaN where a side does not vary (or
    holds a NaN): ``agreement.correlation_rows_many(keys, x[:, None], ys)
    [:, :, 0]``'s doubles (n ≥ its ``min_n``), the three in one compiled
    pass (callers check :func:`backend` first; the test compares them)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    ys = np.ascontiguousarray(ys, dtype=np.float64)
    out = np.full((ys.shape[0], x.shape[0], 3), np.nan)
    if x.size and ys.size:
        _three_correlations(x, ys, out)
    return out


if compiled_ieee is not None:
    @compiled_inline
    def _column_sums(a, n, r, out):  # pragma: no cover - compiled
        """numpy's pairwise sum of each column of a[:n] (n × M): the rule of
        :func:`pairwise_sum`, the columns side by side (each column's
        additions in its own order, the columns in the vector lanes)."""
        n_m = a.shape[1]
        if n > 128:
            for m in range(n_m):
                out[m] = pairwise_sum(a[:, m], 0, n)
            return
        if n < 8:
            for m in range(n_m):
                out[m] = 0.0
            for i in range(n):
                for m in range(n_m):
                    out[m] += a[i, m]
            return
        for k in range(8):
            for m in range(n_m):
                r[k, m] = a[k, m]
        i = 8
        stop = n - (n % 8)
        while i < stop:
            for k in range(8):
                for m in range(n_m):
                    r[k, m] += a[i + k, m]
            i += 8
        for m in range(n_m):
            out[m] = ((r[0, m] + r[1, m]) + (r[2, m] + r[3, m])) + \
                ((r[4, m] + r[5, m]) + (r[6, m] + r[7, m]))
        while i < n:
            for m in range(n_m):
                out[m] += a[i, m]
            i += 1

    @compiled_inline
    def _column_deviations(a, n, dev, square, r, sums, total):  # pragma: no cover - compiled
        """_deviate of each column of a (n × M) at once: dev, and Σ dev²
        into ``total``."""
        n_m = a.shape[1]
        _column_sums(a, n, r, sums)
        for m in range(n_m):
            sums[m] = sums[m] / n
        for i in range(n):
            for m in range(n_m):
                d = a[i, m] - sums[m]
                dev[i, m] = d
                square[i, m] = d * d
        _column_sums(square, n, r, total)

    @compiled_ieee
    def _pearson_spearman_wide(x, ys, want_p, want_s, out,
                               system_major=False):  # pragma: no cover - compiled
        """:func:`_pearson_spearman_many` with a replicate's measures side by
        side: every step of a row made for all its measures at once (the
        same operations per measure, in the same order). ``system_major``:
        ``x`` is B × n × M (the systems' scores as the statistics make
        them), not B × M × n — the same numbers, read in place."""
        if system_major:
            n_b, n, n_m = x.shape
        else:
            n_b, n_m, n = x.shape
        n_c = ys.shape[0]
        dy = np.empty((n_c, n))
        sy = np.empty(n_c)
        dry = np.empty((n_c, n))
        sry = np.empty(n_c)
        ok_y = np.zeros(n_c, dtype=np.bool_)
        ranks_y = np.empty(n)
        square_y = np.empty(n)
        xt = np.empty((n, n_m))
        dx = np.empty((n, n_m))
        rx = np.empty((n, n_m))
        drx = np.empty((n, n_m))
        work = np.empty((n, n_m))
        r = np.empty((8, n_m))
        sums = np.empty(n_m)
        sx = np.empty(n_m)
        srx = np.empty(n_m)
        num = np.empty(n_m)
        lo = np.empty(n_m)
        hi = np.empty(n_m)
        ok_x = np.empty(n_m, dtype=np.bool_)
        for b in range(n_b):
            some = False
            for c in range(n_c):
                row = ys[c, b]
                ok_y[c] = _varies(row)
                if ok_y[c]:
                    some = True
                    if want_p:
                        sy[c] = _deviate(row, dy[c], square_y)
                    if want_s:
                        _ranks(row, ranks_y)
                        sry[c] = _deviate(ranks_y, dry[c], square_y)
            if not some:
                continue
            if system_major:
                for i in range(n):
                    for m in range(n_m):
                        xt[i, m] = x[b, i, m]
            else:
                for i in range(n):
                    for m in range(n_m):
                        xt[i, m] = x[b, m, i]
            # np.ptp > 0 of each measure's row (False with a NaN)
            for m in range(n_m):
                lo[m] = xt[0, m]
                hi[m] = xt[0, m]
                ok_x[m] = True
            for i in range(n):
                for m in range(n_m):
                    v = xt[i, m]
                    if v != v:
                        ok_x[m] = False
                    if v < lo[m]:
                        lo[m] = v
                    if v > hi[m]:
                        hi[m] = v
            for m in range(n_m):
                ok_x[m] = ok_x[m] and hi[m] - lo[m] > 0
            if want_p:
                _column_deviations(xt, n, dx, work, r, sums, sx)
            if want_s:
                # average ranks, #{smaller} + (#{equal} + 1) / 2 = ½ + n/2 +
                # ½·Σ_d sign(x_i − x_d) (half-integers: exact), each pair
                # compared once (a row with a NaN is not read)
                for i in range(n):
                    for m in range(n_m):
                        rx[i, m] = 0.0
                for i in range(n - 1):
                    for d in range(i + 1, n):
                        for m in range(n_m):
                            v = xt[i, m]
                            w = xt[d, m]
                            sg = np.float64(v > w) - np.float64(v < w)
                            rx[i, m] += sg
                            rx[d, m] -= sg
                for i in range(n):
                    for m in range(n_m):
                        rx[i, m] = 0.5 + n / 2.0 + rx[i, m] / 2.0
                _column_deviations(rx, n, drx, work, r, sums, srx)
            for c in range(n_c):
                if not ok_y[c]:
                    continue
                if want_p:
                    for i in range(n):
                        for m in range(n_m):
                            work[i, m] = dx[i, m] * dy[c, i]
                    _column_sums(work, n, r, num)
                    for m in range(n_m):
                        if ok_x[m]:
                            v = num[m] / np.sqrt(sx[m] * sy[c])
                            out[c, b, m, 0] = 1.0 if v > 1.0 else (-1.0 if v < -1.0 else v)
                if want_s:
                    for i in range(n):
                        for m in range(n_m):
                            work[i, m] = drx[i, m] * dry[c, i]
                    _column_sums(work, n, r, num)
                    for m in range(n_m):
                        if ok_x[m]:
                            v = num[m] / np.sqrt(srx[m] * sry[c])
                            out[c, b, m, 1] = 1.0 if v > 1.0 else (-1.0 if v < -1.0 else v)


def pearson_spearman_many(x: np.ndarray, ys: np.ndarray, pearson: bool = True,
                          spearman: bool = True) -> np.ndarray:
    """(C × B × M × 2): Pearson ([..., 0]) and Spearman ([..., 1]) of every
    row x[b, m] (B × M × n, the points in their final order) against ys[c, b]
    (C × B × n), NaN where a side does not vary (or holds a NaN) or the
    correlation is not wanted: :func:`~qarla_spark.measures.agreement.
    correlation_rows_many`'s doubles, compiled (callers check
    :func:`backend` first)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 3 and x.shape[1] >= 8 and x.size and not x.flags.c_contiguous \
            and np.transpose(x, (0, 2, 1)).flags.c_contiguous:
        # a transposed view of B × n × M scores: read in place (no copy)
        ys = np.ascontiguousarray(ys, dtype=np.float64)
        out = np.full((ys.shape[0], x.shape[0], x.shape[1], 2), np.nan)
        if ys.size:
            _pearson_spearman_wide(np.transpose(x, (0, 2, 1)), ys, bool(pearson),
                                   bool(spearman), out, True)
        return out
    x = np.ascontiguousarray(x, dtype=np.float64)
    ys = np.ascontiguousarray(ys, dtype=np.float64)
    out = np.full((ys.shape[0], x.shape[0], x.shape[1], 2), np.nan)
    if x.size and ys.size:
        # many measures of a replicate: side by side (measured 3x on 60
        # measures of 16 systems), else row by row
        kernel = _pearson_spearman_wide if x.shape[1] >= 8 else _pearson_spearman_many
        kernel(x, ys, bool(pearson), bool(spearman), out)
    return out



if compiled_ieee is not None:
    @compiled_inline
    def _pdp_set(m, h, a, b, cross, dst):  # pragma: no cover - compiled
        """dst[k] ← a pair's term of PDP's sums of every measure k: d·d, or
        d·(h_a − h_b) when ``cross``, d = m[a, k] − m[b, k] (numpy's
        operations, one rounding each)."""
        if cross:
            dh = h[a] - h[b]
            for k in range(m.shape[1]):
                dst[k] = (m[a, k] - m[b, k]) * dh
        else:
            for k in range(m.shape[1]):
                d = m[a, k] - m[b, k]
                dst[k] = d * d

    @compiled_inline
    def _pdp_add(m, h, a, b, cross, acc):  # pragma: no cover - compiled
        """acc[k] += the pair's term of :func:`_pdp_set`."""
        if cross:
            dh = h[a] - h[b]
            for k in range(m.shape[1]):
                acc[k] += (m[a, k] - m[b, k]) * dh
        else:
            for k in range(m.shape[1]):
                d = m[a, k] - m[b, k]
                acc[k] += d * d

    @compiled_ieee
    def _pdp_reduceat(m, h, i, j, starts, ends, at, out, cross):  # pragma: no cover
        """out[at[g], k] = np.add.reduceat(terms[:, k], starts)[g]: each
        segment's first term plus numpy's pairwise sum of the others
        (below 8 terms one by one from −0.0, else eight accumulators, then
        the rest one by one: the callers send segments of at most 129
        terms, where numpy's sum is one such block) — every measure's
        column at once (a pair's row of ``m`` N × M read contiguous)."""
        n_m = m.shape[1]
        r = np.empty((8, n_m))
        res = np.empty(n_m)
        for g in range(starts.size):
            lo = starts[g]
            n = ends[g] - lo - 1
            base = lo + 1
            dst = out[at[g]]
            _pdp_set(m, h, i[lo], j[lo], cross, dst)
            if n == 0:
                continue
            if n < 8:
                res[:] = -0.0
                for q in range(n):
                    _pdp_add(m, h, i[base + q], j[base + q], cross, res)
            else:
                for s in range(8):
                    _pdp_set(m, h, i[base + s], j[base + s], cross, r[s])
                q = 8
                stop = n - (n % 8)
                while q < stop:
                    for s in range(8):
                        _pdp_add(m, h, i[base + q + s], j[base + q + s], cross, r[s])
                    q += 8
                for k in range(n_m):
                    res[k] = ((r[0, k] + r[1, k]) + (r[2, k] + r[3, k])) + \
                        ((r[4, k] + r[5, k]) + (r[6, k] + r[7, k]))
                while q < n:
                    _pdp_add(m, h, i[base + q], j[base + q], cross, res)
                    q += 1
            for k in range(n_m):
                dst[k] = dst[k] + res[k]


#: the most terms of a segment :func:`pdp_reduceat` sums compiled (numpy's
#: pairwise sum of the 128 after the first is one block)
PDP_SEGMENT = 129


def pdp_reduceat(m: np.ndarray, h, i: np.ndarray, j: np.ndarray, starts: np.ndarray,
                 at: np.ndarray, out: np.ndarray, cross: bool) -> bool:
    """out[at] = np.add.reduceat(terms, starts, axis=0), the same doubles,
    of the pairs' terms (d_m·d_m, or d_m·d_h when ``cross``; d_m = m[i] −
    m[j] of ``m`` N × M, d_h = h[i] − h[j]) without the pairs ×
    M arrays (issue 36: a 1 × 400 chance group's 42,000 pairs × 100
    measures, 34 MB each); False, ``out`` untouched, when numba does not
    run or a segment is longer than :data:`PDP_SEGMENT` (the caller's
    numpy)."""
    if backend() != "numba" or not len(starts):
        return False
    ends = np.r_[starts[1:], len(i)].astype(np.int64)
    if int((ends - starts).max()) > PDP_SEGMENT:
        return False
    _pdp_reduceat(np.ascontiguousarray(m, dtype=np.float64),
                  np.ascontiguousarray(h, dtype=np.float64),
                  np.ascontiguousarray(i, dtype=np.int64), np.ascontiguousarray(j, dtype=np.int64),
                  np.ascontiguousarray(starts, dtype=np.int64), ends,
                  np.ascontiguousarray(at, dtype=np.int64), out, bool(cross))
    return True
