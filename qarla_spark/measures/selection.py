"""The order statistics the statistics stage's intervals read, selected
instead of sorted (issue 36), with their numpy twin: the full sort.

The intervals of :mod:`~qarla_spark.measures.resampling` read a few order
statistics of each column of B replicates: the percentile interval the two
neighbours of (n − 1)·α/2 and of (n − 1)·(1 − α/2) (n the column's finite
values), the recentred interval those and the median's (ranks n//2 and
n//2 − 1), BCa two quantiles whose positions follow from each column's
counts of values below and at its point and from the jackknife. numpy's
sort of a whole column of 1,000 costs ~15-18 ns a value on this machine (a
40-task run's meta group sorts ~2,400 columns a task); :func:`select_rows`
puts at each of those ranks the value a sort puts there, by a multiple
quickselect of the row (:func:`_select`), without ordering the rest, and
counts each row's values below and at its point in the same pass (BCa);
:func:`select_more` then selects BCa's quantiles between the ranks in
place. :func:`select_columns` reads columns where they lie (no sorted copy
of the matrix: its pages alone cost ~8 ms of the meta group's 2,400 × 1,000)
into a scratch row and keeps only the values read
(:class:`SelectedColumns`).

Measured (2,440 columns of 1,000 normal replicates, one core):
``sorted_columns`` 33 ms, :func:`select_columns` 12.5 ms (the percentiles)
to 14.6 ms (half of the columns with the median too); rows in place, copy
and sort 32.5 ms, copy and :func:`select_rows` 13.2 ms. The replay of a
40 × 10 run's statistics groups: meta 142 → 111 ms a task, KING 44 → 32.
Rows of very few distinct values (≤ 4) select about as fast as numpy
sorts them, one value ~7x slower (7 ms for 2,440 rows); the runs' columns
hold ≥ 40 distinct values in 99% of them.

A column of :data:`SAMPLED_FROM` finite values or more is read by one more
pass instead (:func:`_sampled`, session 55): two pivots from a sorted
sample of 32 of its values cut off its lowest and highest eighth (and,
for the median, a band around the middle), each part holding consecutive
ranks, and each rank is selected in its part; a rank in no part (~10% of
the columns: the pivots fell inside a tie, or the sample was off) falls
back to the selection in the whole column. :func:`select_blocks` reads
the blocks of a group's statistics where their kernels left them (row-
major, or strided views of a wider array: 8 columns gathered a row at a
time), not copied into one column-major matrix first. Measured on a 40 ×
10 run's meta group (2,400 columns of 1,000 in 40 blocks): main's copy
and selection 17.5 ms, the blocks read in place 13.8 ms.

Exactness: the values at the selected ranks are the sorted row's — order
statistics are unique values, except for the zeros' signs (−0.0 == +0.0:
which one numpy's sort puts at a rank depends on its algorithm and on the
row's order). A row holding both signs of zero is therefore left as it is
and flagged (:data:`MIXED_ZEROS`), and the caller sorts it with numpy as
before; a row holding an infinity is flagged (:data:`INFINITE`) and left
alone too (the intervals' per-column fallbacks read the replicates
themselves). NaN are moved behind the finite values (numpy sorts them
last) and not counted. Without numba (``backend() == "numpy"``) every
row is sorted by numpy: the same values at every rank.
"""

from __future__ import annotations

import numpy as np

from qarla_spark.measures import pair_counts

try:
    import numba  # noqa: F401

    from qarla_spark.compiled import compiled
except ImportError:  # pragma: no cover - numba is a dependency
    compiled = None

#: a row's flags: it holds an infinity (left alone, counts of its finite
#: values); it holds −0.0 and +0.0 (left alone: the caller sorts it)
INFINITE, MIXED_ZEROS = 1, 2
#: :func:`_select_columns` reads a column of at least SAMPLED_FROM finite
#: values through a sample of SAMPLE of them (:func:`_sampled`): its pivots
#: the SAMPLE_LOW-th from each end (the percentiles' parts, ~an eighth of
#: the column each) and the SAMPLE_MIDDLE-th (the median's part)
SAMPLED_FROM, SAMPLE, SAMPLE_LOW, SAMPLE_MIDDLE = 256, 32, 3, 10
#: the columns :func:`_select_columns` copies at a time (a cache line of doubles)
GATHER = 8


def backend() -> str:
    """``numba`` when the kernels run, else ``numpy`` (read when called)."""
    return "numba" if compiled is not None and pair_counts.BACKEND == "numba" else "numpy"


if compiled is not None:
    @compiled
    def _lerp_pair(n, q):  # pragma: no cover - compiled
        """(previous, following) rows ``_lerp_sorted`` reads for the
        quantile q of n ≥ 1 sorted values: numpy's virtual index (n − 1)·q
        in doubles, floor and the next, both clipped to [0, n − 1]."""
        virtual = float(n - 1) * q
        if virtual >= n - 1:
            return n - 1, n - 1
        if virtual < 0:
            return 0, 0
        previous = int(np.floor(virtual))
        return previous, min(previous + 1, n - 1)

    @compiled
    def _insertion(a, lo, hi):  # pragma: no cover - compiled
        for i in range(lo + 1, hi + 1):
            v = a[i]
            j = i - 1
            while j >= lo and v < a[j]:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = v

    @compiled
    def _select(a, lo, hi, ranks, r0, r1, stack):  # pragma: no cover - compiled
        """a[ranks[k]] ← the ranks[k]-th smallest of a[lo..hi] for r0 ≤ k <
        r1 (ranks ascending, distinct, within [lo, hi]; a without NaN),
        a[lo..hi] reordered: each segment holding a wanted rank partitioned
        around the median of three of its values at a quarter, the middle
        and three quarters (a branchless Lomuto partition: the comparisons
        of random replicates mispredict a branch half of the time), the
        values equal to the pivot gathered next to it when the values above
        it are more than three quarters of the segment (ties); a segment
        of < 24 values, or one partitioned too often, sorted (the same
        values: order statistics without both signs of zero are unique)."""
        sample = np.empty(9, dtype=np.int64)
        stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3], stack[0, 4] = lo, hi, r0, r1, 0
        top = 1
        while top:
            top -= 1
            lo, hi, r0, r1, depth = (stack[top, 0], stack[top, 1], stack[top, 2],
                                     stack[top, 3], stack[top, 4])
            if r0 >= r1:
                continue
            if hi - lo < 24:
                _insertion(a, lo, hi)
                continue
            if depth > 64:                                  # (pathological orders)
                a[lo:hi + 1].sort()
                continue
            size = hi - lo + 1
            low_end = (ranks[r1 - 1] - lo + 1) * 8 <= size
            high_end = (hi - ranks[r0] + 1) * 8 <= size
            if size > 128 and (low_end or high_end):
                # every wanted rank in an eighth at an end of the segment:
                # the pivot a spread sample's order statistic just past
                # them (the partition then leaves a short side to go on)
                for t in range(9):
                    sample[t] = lo + ((2 * t + 1) * size) // 18
                for t in range(1, 9):
                    at = sample[t]
                    v = a[at]
                    u = t - 1
                    while u >= 0 and v < a[sample[u]]:
                        sample[u + 1] = sample[u]
                        u -= 1
                    sample[u + 1] = at
                if low_end:
                    t = min(8, (10 * (ranks[r1 - 1] - lo + 1)) // size + 1)
                else:
                    t = max(0, 7 - (10 * (hi - ranks[r0] + 1)) // size)
                at = sample[t]
            else:
                quarter = (hi - lo) >> 2
                i0, i1, i2 = lo + quarter, (lo + hi) >> 1, hi - quarter
                x, y, z = a[i0], a[i1], a[i2]
                if (x <= y) == (y <= z):
                    at = i1
                elif (y <= x) == (x <= z):
                    at = i0
                else:
                    at = i2
            p = a[at]
            a[at] = a[lo]
            a[lo] = p
            j = lo + 1
            for i in range(lo + 1, hi + 1):
                v = a[i]
                a[i] = a[j]
                a[j] = v
                j += v < p
            # a[lo+1..j-1] < p ≤ a[j..hi]: the pivot to j − 1
            a[lo] = a[j - 1]
            a[j - 1] = p
            e0 = j - 1                                      # [lo, e0) < p
            e1 = j                                          # [e0, e1) == p
            k = r0
            while k < r1 and ranks[k] < e0:
                k += 1
            if k < r1 and (hi - e1) * 4 > (hi - lo + 1) * 3:
                for i in range(e1, hi + 1):
                    v = a[i]
                    a[i] = a[e1]
                    a[e1] = v
                    e1 += v == p
            m = k
            while m < r1 and ranks[m] < e1:
                m += 1
            if k > r0:
                stack[top, 0], stack[top, 1], stack[top, 2] = lo, e0 - 1, r0
                stack[top, 3], stack[top, 4] = k, depth + 1
                top += 1
            if m < r1:
                stack[top, 0], stack[top, 1], stack[top, 2] = e1, hi, m
                stack[top, 3], stack[top, 4] = r1, depth + 1
                top += 1

    @compiled
    def _wanted(n, qs, median, extra, ranks):  # pragma: no cover - compiled
        """The distinct ranks (ascending, in ``ranks``; their count
        returned) a row of n ≥ 1 finite values is read at: each quantile of
        ``qs``' neighbours, the median's two when ``median``, and each
        finite quantile of ``extra``'s."""
        c = 0
        for q in qs:
            a, b = _lerp_pair(n, q)
            ranks[c] = a
            ranks[c + 1] = b
            c += 2
        if median:
            h = n // 2
            ranks[c] = h
            ranks[c + 1] = max(h - 1, 0)
            c += 2
        for q in extra:
            if q == q:
                a, b = _lerp_pair(n, q)
                ranks[c] = a
                ranks[c + 1] = b
                c += 2
        _insertion(ranks, 0, c - 1)
        d = 0
        for k in range(c):
            if k == 0 or ranks[k] != ranks[d - 1]:
                ranks[d] = ranks[k]
                d += 1
        return d

    @compiled
    def _select_rows(rows, qs, median, points, n, flags, below, at_most):  # pragma: no cover
        """Each row of ``rows``: its counts (finite values; values below
        and equal to ``points[r]`` when ``points`` is given), its flags,
        and — neither flag — its NaN moved last and the ranks of
        :func:`_wanted` (``qs``, ``median[r]``) selected."""
        n_r, n_b = rows.shape
        count = points.shape[0] > 0
        ranks = np.empty(2 * qs.shape[0] + 2, dtype=np.int64)
        stack = np.empty((ranks.shape[0] + 2, 5), dtype=np.int64)
        none = np.empty(0, dtype=np.float64)
        for r in range(n_r):
            a = rows[r]
            nan = 0
            inf = 0
            neg = 0
            pos = 0
            lt = 0
            eq = 0
            p = points[r] if count else 0.0
            for k in range(n_b):
                v = a[k]
                if v != v:
                    nan += 1
                elif v == 0.0:
                    if np.signbit(v):
                        neg += 1
                    else:
                        pos += 1
                elif v - v != 0.0:
                    inf += 1
                if count:
                    lt += v < p
                    eq += v == p
            n[r] = n_b - nan - inf
            below[r] = lt
            at_most[r] = lt + eq
            flags[r] = (INFINITE if inf else 0) | (MIXED_ZEROS if neg and pos else 0)
            if flags[r] or n[r] == 0:
                continue
            if nan:                                         # NaN last, in place
                j = 0
                for k in range(n_b):
                    v = a[k]
                    if v == v:
                        a[k] = a[j]
                        a[j] = v
                        j += 1
            c = _wanted(n[r], qs, median[r], none, ranks)
            _select(a, 0, n[r] - 1, ranks, 0, c, stack)

    @compiled
    def _select_more(rows, n, flags, qs, median, extra):  # pragma: no cover - compiled
        """Rows already selected by :func:`_select_rows` (``qs``,
        ``median``): the neighbours of the quantiles ``extra[r]`` (NaN:
        none) too, each selected within the segment between the ranks
        already in place (which stay where they are)."""
        n_r = rows.shape[0]
        k_x = extra.shape[1]
        done = np.empty(2 * qs.shape[0] + 2 + 2 * k_x, dtype=np.int64)
        ranks = np.empty(2 * k_x, dtype=np.int64)
        stack = np.empty((done.shape[0] + 2, 5), dtype=np.int64)
        nothing = np.empty(0, dtype=np.float64)
        for r in range(n_r):
            m = n[r]
            if flags[r] or m == 0:
                continue
            a = rows[r]
            c = _wanted(m, qs, median[r], nothing, done)
            x = _wanted(m, nothing, False, extra[r], ranks)
            for t in range(x):
                s = ranks[t]
                # the segment between the ranks in place around s
                lo = 0
                hi = m - 1
                found = False
                for k in range(c):
                    if done[k] == s:
                        found = True
                    elif done[k] < s:
                        lo = max(lo, done[k] + 1)
                    else:
                        hi = min(hi, done[k] - 1)
                if found:
                    continue
                one = ranks[t:t + 1]
                _select(a, lo, hi, one, 0, 1, stack)
                done[c] = s
                c += 1


    @compiled
    def _sampled(a, j, wanted, c, median, sample, low, high, middle, inner, stack,
                 out):  # pragma: no cover - compiled
        """out[t] ← the value at rank ``wanted[t]`` of a[:j] (finite values,
        not changed) for every t < c, by one pass that gathers the values
        below and above two pivots of a sample of the row (the
        :data:`SAMPLE` values at evenly spread positions, sorted: the
        :data:`SAMPLE_LOW`-th from each end) — and, when ``median``, the
        values between two pivots around the middle — each gathered part
        holding consecutive ranks (the values < p are ranks 0.. of the
        row, those > q its last ranks, those within [r, s] the ranks after
        the values < r), each wanted rank then selected in its part (~a
        tenth of the row). False (``out`` partly written) when a wanted
        rank lies in no part: the caller selects in the whole row."""
        for t in range(SAMPLE):
            sample[t] = a[((2 * t + 1) * j) // (2 * SAMPLE)]
        _insertion(sample, 0, SAMPLE - 1)
        p = sample[SAMPLE_LOW]
        q = sample[SAMPLE - 1 - SAMPLE_LOW]
        n_low = 0
        n_high = 0
        n_mid = 0
        n_below = 0
        if median:
            r = sample[SAMPLE_MIDDLE]
            s = sample[SAMPLE - 1 - SAMPLE_MIDDLE]
            for k in range(j):
                v = a[k]
                low[n_low] = v
                n_low += v < p
                high[n_high] = v
                n_high += v > q
                middle[n_mid] = v
                n_mid += (v >= r) & (v <= s)
                n_below += v < r
        else:
            for k in range(j):
                v = a[k]
                low[n_low] = v
                n_low += v < p
                high[n_high] = v
                n_high += v > q
        for t in range(c):
            k = wanted[t]
            if not (k < n_low or k >= j - n_high or n_below <= k < n_below + n_mid):
                return False
        for part in range(3):
            if part == 0:
                rows, size, first = low, n_low, 0
            elif part == 1:
                rows, size, first = high, n_high, j - n_high
            else:
                rows, size, first = middle, n_mid, n_below
            d = 0
            for t in range(c):
                if first <= wanted[t] < first + size:
                    inner[d] = wanted[t] - first
                    d += 1
            if d:
                _select(rows, 0, size - 1, inner, 0, d, stack)
                for t in range(c):
                    if first <= wanted[t] < first + size:
                        out[t] = rows[wanted[t] - first]
        return True

    @compiled
    def _select_columns(columns, qs, median, values, ranks, n, flags):  # pragma: no cover
        """Each column of ``columns`` (B × N, any layout) copied into a row
        of scratch while its counts and flags are taken (:data:`GATHER`
        columns at a time, row by row: a row-major block's cache lines
        read once, a column-major one's columns as contiguous streams;
        every value compared alike, no branch per value), its NaN then
        moved last, its ranks of :func:`_wanted` (``qs``, ``median[m]``)
        in ``ranks[m]`` (ascending, −1 after them) and — no flag — the
        values a sort puts there, into ``values[m]``: by :func:`_sampled`
        from :data:`SAMPLED_FROM` finite values on, else (or when its
        parts miss a rank) selected in the scratch. A column with both
        signs of zero: its ranks, no values (the caller's sort); with an
        infinity: neither."""
        n_b, n_c = columns.shape
        scratch = np.empty((GATHER, n_b), dtype=np.float64)
        low = np.empty(n_b, dtype=np.float64)
        high = np.empty(n_b, dtype=np.float64)
        middle = np.empty(n_b, dtype=np.float64)
        sample = np.empty(SAMPLE, dtype=np.float64)
        wanted = np.empty(ranks.shape[1], dtype=np.int64)
        inner = np.empty(ranks.shape[1], dtype=np.int64)
        stack = np.empty((ranks.shape[1] + 2, 5), dtype=np.int64)
        none = np.empty(0, dtype=np.float64)
        for m0 in range(0, n_c, GATHER):
            width = min(GATHER, n_c - m0)
            for k in range(n_b):
                for g in range(width):
                    scratch[g, k] = columns[k, m0 + g]
            for g in range(width):
                m = m0 + g
                a = scratch[g]
                nan = 0
                inf = 0
                neg = 0
                pos = 0
                for k in range(n_b):
                    v = a[k]
                    nan += v != v
                    zero = v == 0.0
                    sign = np.signbit(v)
                    neg += zero & sign
                    pos += zero & (not sign)
                    inf += (v - v != 0.0) & (v == v)
                j = n_b - nan
                if nan:                                     # NaN last, in order
                    i = 0
                    for k in range(n_b):
                        v = a[k]
                        a[i] = v
                        i += v == v
                n[m] = j - inf
                flags[m] = (INFINITE if inf else 0) | (MIXED_ZEROS if neg and pos else 0)
                for k in range(ranks.shape[1]):
                    ranks[m, k] = -1
                if inf or j == 0:
                    continue
                c = _wanted(j, qs, median[m], none, wanted)
                for k in range(c):
                    ranks[m, k] = wanted[k]
                if flags[m]:
                    continue
                if j >= SAMPLED_FROM and _sampled(a, j, wanted, c, median[m], sample, low, high,
                                                  middle, inner, stack, values[m]):
                    continue
                _select(a, 0, j - 1, wanted, 0, c, stack)
                for k in range(c):
                    values[m, k] = a[wanted[k]]


class SelectedColumns:
    """The order statistics of :func:`select_columns`, read as a sorted B ×
    N matrix is read: ``ordered[rows, cols]`` (arrays of one shape) gives
    each column's value at that row of its sort, for the rows selected
    (any other row raises: never a silently wrong number)."""

    def __init__(self, shape, values, ranks):
        self.shape = shape
        self.ndim = 2
        self._values = values
        self._ranks = ranks

    def __getitem__(self, key):
        rows, cols = key
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.intp)
        rows, cols = np.broadcast_arrays(rows, cols)
        hit = self._ranks[cols] == rows[..., None]
        k = hit.argmax(axis=-1)
        if not hit.any(axis=-1).all():
            raise IndexError("an order statistic that was not selected")
        return self._values[cols, k]


def select_columns(columns: np.ndarray, qs, median=None):
    """(ordered, n, flags) of each column of ``columns`` (B × N doubles, not
    changed): its finite values' count, its flags, and ``ordered`` — a
    :class:`SelectedColumns`, or with the numpy backend the columns sorted
    (:func:`numpy_sorted`) — holding at the ranks
    ``resampling._lerp_sorted`` reads for ``qs`` (and at the median's two
    where ``median[m]``) the values numpy's sort of the column puts there:
    a column with both signs of zero sorted by numpy to read them. A
    column with an infinity: no value (its intervals read the replicates
    themselves)."""
    if backend() == "numba" and columns.shape[1]:
        cols = columns if columns.dtype == np.float64 else columns.astype(np.float64)
        if not (cols.flags.f_contiguous or cols.flags.c_contiguous):
            cols = np.asfortranarray(cols)
        return select_blocks([cols], qs, median)
    return select_blocks([columns], qs, median)


def select_blocks(blocks, qs, median=None):
    """:func:`select_columns` of the blocks' columns side by side (each
    block B × w doubles, the same B, any layout: each column read where it
    lies, the blocks not copied into one matrix — a group's statistics'
    replicates as their kernels give them, issue 36), the same values,
    counts and flags; ``median`` one flag per column of them all."""
    widths = [int(b.shape[1]) for b in blocks]
    starts = np.concatenate(([0], np.cumsum(widths, dtype=np.int64))).astype(np.intp)
    n_b, n_c = (int(blocks[0].shape[0]) if blocks else 0), int(starts[-1])
    if backend() != "numba":
        return numpy_sorted(np.hstack(blocks) if blocks else np.empty((0, 0)))
    qs = np.ascontiguousarray(qs, dtype=np.float64).reshape(-1)
    median = (np.zeros(n_c, dtype=np.bool_) if median is None
              else np.ascontiguousarray(np.broadcast_to(median, (n_c,)), dtype=np.bool_))
    k = 2 * qs.shape[0] + 2
    values = np.full((n_c, k), np.nan)
    ranks = np.empty((n_c, k), dtype=np.int64)
    n = np.zeros(n_c, dtype=np.int64)
    flags = np.zeros(n_c, dtype=np.int8)
    for block, a, b in zip(blocks, starts[:-1], starts[1:]):
        if b > a and n_b:
            cols = block if block.dtype == np.float64 else block.astype(np.float64)
            _select_columns(cols, qs, median[a:b], values[a:b], ranks[a:b], n[a:b], flags[a:b])
        else:
            ranks[a:b] = -1
    mixed = np.flatnonzero(flags == MIXED_ZEROS)
    if mixed.size:
        at_block = np.searchsorted(starts, mixed, side="right") - 1
        rows = np.stack([np.asarray(blocks[g][:, m - starts[g]], dtype=np.float64)
                         for g, m in zip(at_block.tolist(), mixed.tolist())])
        ordered = np.sort(rows, axis=1)
        at = ranks[mixed]
        values[mixed] = np.where(at >= 0, np.take_along_axis(ordered, np.maximum(at, 0),
                                                             axis=1), np.nan)
    return SelectedColumns((n_b, n_c), values, ranks), n, flags


def numpy_sorted(columns: np.ndarray):
    """(each column sorted, as its transposed view; n; flags): the numpy
    twin of :func:`select_columns` (every rank in place)."""
    rows = np.sort(np.ascontiguousarray(np.transpose(columns), dtype=np.float64), axis=1)
    n = np.count_nonzero(np.isfinite(rows), axis=1).astype(np.int64)
    flags = np.where(np.isinf(rows).any(axis=1), INFINITE, 0).astype(np.int8)
    return rows.T, n, flags


def select_rows(rows: np.ndarray, qs, median=None, points=None):
    """(n, flags, below, at_most) of each row of ``rows`` (R × B doubles,
    C-contiguous, reordered in place): its finite values' count, its flags
    (:data:`INFINITE`, :data:`MIXED_ZEROS`), its counts of values < and ≤
    ``points[r]`` (when given, else zeros); and each row without a flag
    holds, at every rank ``resampling._lerp_sorted`` reads for the
    quantiles ``qs`` (and at the median's two ranks where ``median[r]``),
    the value numpy's sort puts there, its NaN behind its finite values. A
    flagged row is left as it was. The numpy backend: every row without an
    infinity sorted by numpy (the same values at every rank; a row with
    both signs of zero is sorted as the caller would)."""
    n_r, n_b = rows.shape
    qs = np.ascontiguousarray(qs, dtype=np.float64).reshape(-1)
    median = (np.zeros(n_r, dtype=np.bool_) if median is None
              else np.ascontiguousarray(np.broadcast_to(median, (n_r,)), dtype=np.bool_))
    given = points is not None
    points = (np.empty(0, dtype=np.float64) if not given
              else np.ascontiguousarray(points, dtype=np.float64))
    n = np.empty(n_r, dtype=np.int64)
    flags = np.zeros(n_r, dtype=np.int8)
    below = np.zeros(n_r, dtype=np.int64)
    at_most = np.zeros(n_r, dtype=np.int64)
    if not n_r:
        return n, flags, below, at_most
    if backend() == "numba" and n_b:
        _select_rows(rows, qs, median, points, n, flags, below, at_most)
        return n, flags, below, at_most
    finite = np.isfinite(rows)
    n[:] = np.count_nonzero(finite, axis=1)
    flags[np.isinf(rows).any(axis=1)] = INFINITE
    if given:
        below[:] = np.count_nonzero(rows < points[:, None], axis=1)
        at_most[:] = below + np.count_nonzero(rows == points[:, None], axis=1)
    rows.sort(axis=1)
    return n, flags, below, at_most


def select_more(rows: np.ndarray, n, flags, qs, median, extra) -> None:
    """Rows of :func:`select_rows` (the same ``qs``, ``median``; its ``n``,
    ``flags``): also the ranks of the quantiles ``extra`` (R × K, NaN:
    none) selected, the ranks already in place kept. Flagged rows are
    left alone (the caller sorted its mixed ones); the numpy backend
    sorted every row already."""
    if backend() != "numba" or not rows.shape[0] or not rows.shape[1]:
        return
    n_r = rows.shape[0]
    qs = np.ascontiguousarray(qs, dtype=np.float64).reshape(-1)
    median = (np.zeros(n_r, dtype=np.bool_) if median is None
              else np.ascontiguousarray(np.broadcast_to(median, (n_r,)), dtype=np.bool_))
    _select_more(rows, np.ascontiguousarray(n, dtype=np.int64),
                 np.ascontiguousarray(flags, dtype=np.int8), qs, median,
                 np.ascontiguousarray(extra, dtype=np.float64))
