"""Exact sums of doubles divided by counts, correctly rounded, compiled
(issue 36).

The exact means of :mod:`~qarla_spark.measures.resampling` (a system's
score: the exact mean of its summaries' doubles, in every replicate) sum
the doubles exactly as int64 pieces of 28 bits (``level_parts``), then
divide by the count of terms, rounding once. Done with Python integers,
the division costs a Python object per value — most of the time of a
small task's correlation groups. :func:`quotients` makes the same
doubles in a compiled loop: the pieces carried into 28-bit limbs (base
2^28, sign apart), the limbs divided by the count by schoolbook long
division (every step below 2^59), the quotient's top 54 bits and a sticky
bit for the rest (the remainder included), rounded half to even — IEEE's
rounding, as Python's integer true division rounds. A result that would
be subnormal (where that rounding differs) or a count of 2^31 or more is
left to the caller's Python integers (``done`` False).
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.measures import pair_counts

try:
    import numba  # noqa: F401

    from qarla_spark.compiled import compiled_ieee, compiled_inline
except ImportError:  # pragma: no cover - numba is a dependency
    compiled_ieee = compiled_inline = None

#: the pieces' width (resampling's chunk) and the limbs'
LIMB = 28


def available() -> bool:
    """The kernel runs (numba, and the counts' backend switch not numpy)."""
    return compiled_ieee is not None and pair_counts.BACKEND == "numba"


def quotients(parts: Sequence[Tuple[int, np.ndarray]], base: int,
              counts: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(values, done): (Σ_level part·2^level)·2^base / count of each entry,
    correctly rounded (NaN where the count is 0), for ``parts`` (levels,
    multiples of :data:`LIMB`, each an int64 array of one shape, |part| <
    2^61) and ``counts`` (that shape, non-negative integers); ``done``
    False where the caller must divide itself. None when the kernel does
    not run or the parts do not fit."""
    if not available():
        return None
    counts = np.asarray(counts)
    if not parts:
        shape = counts.shape
        values = np.where(counts == 0, np.nan, 0.0) * np.ones(shape)
        return values, np.ones(shape, dtype=bool)
    levels = np.asarray([level for level, _ in parts], dtype=np.int64)
    if (levels % LIMB).any() or len(set(levels.tolist())) != len(levels):
        return None
    stack = np.stack([np.asarray(p, dtype=np.int64) for _, p in parts])
    shape = stack.shape[1:]
    if int(np.abs(stack).max(initial=0)) >= 2 ** 61:
        return None
    counts = np.broadcast_to(counts, shape)
    if counts.dtype == object:
        big = int(counts.max(initial=0)) if counts.size else 0
        if big >= 2 ** 62 or (counts.size and int(counts.min()) < 0):
            return None
    flat_counts = np.ascontiguousarray(counts, dtype=np.int64).reshape(-1)
    n = flat_counts.size
    values = np.empty(n)
    done = np.empty(n, dtype=np.bool_)
    _quotients(np.ascontiguousarray(stack.reshape(len(levels), n)), levels // LIMB, int(base),
               flat_counts, values, done)
    return values.reshape(shape), done.reshape(shape)


def unit_parts(values: np.ndarray) -> Optional[Tuple[int, List[Tuple[int, np.ndarray]]]]:
    """(base, [(level, part)]): the exact column sums Σ_t values[t, s] of
    finite doubles (T × S) as :func:`~qarla_spark.measures.resampling.level_parts`
    gives them with every weight 1 — the same base (the smallest exponent
    of a nonzero value's odd mantissa), 28-bit pieces of each value's
    magnitude at the levels above it, summed per column (each part (1 × S)
    int64) — in two compiled passes over the values instead of numpy's
    array per level (the equal-weight means over tasks of ``across/``
    hold a task's every replicate and measure: millions of doubles, issue
    36). Levels where no value has a nonzero piece are left out, as there.
    None when the kernel does not run, or for 2^31 rows or more."""
    if not available():
        return None
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] >= 2 ** 31:
        return None
    n_t, n_s = values.shape
    if values.size == 0:
        return 0, []
    bits = values.view(np.int64)
    span = np.zeros(2, dtype=np.int64)
    if not _unit_span(bits, span):
        return 0, []
    base, top = int(span[0]), int(span[1])
    n_levels = (top + LIMB - 1) // LIMB
    used = np.zeros(n_levels, dtype=np.bool_)
    parts = np.zeros((n_levels, n_s), dtype=np.int64)
    _unit_sums(bits, base, parts, used)
    return base, [(LIMB * level, parts[level][None, :]) for level in range(n_levels)
                  if used[level]]



def present_means(values: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(means, done): the exact mean of each column's finite doubles (T ×
    S; NaN and infinities left out), correctly rounded (NaN for a column
    without one; +0.0 for a zero sum) — the doubles of
    :func:`~qarla_spark.measures.resampling.weighted_present_means` with
    every weight 1 — compiled, each column at its own base (issue 36: the
    equal-weight means over tasks of ``across/``, 40 tasks × 1,001 rows ×
    ~50 measures a group, cost ~40 ms a group there: the presence mask,
    its int64 product with the weights, and one base for all columns, so
    every column in 4 or 5 limbs). A column whose nonzero doubles lie
    within 2^9 of each other (every column of a 40 × 10 run's: pairwise
    accuracies, KING ratios) sums in two int64 words and is divided by
    its count in long division (54 bits and a sticky bit, rounded half
    to even, as :func:`quotients` rounds); a wider one in 28-bit limbs,
    divided by :func:`quotients`' own division. ``done`` False where the
    result would be subnormal (the caller divides itself, as there).
    None when the kernel does not run, or for 2^31 rows or more.
    """
    if not available():
        return None
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] >= 2 ** 31:
        return None
    n_s = values.shape[1]
    means = np.empty(n_s)
    done = np.empty(n_s, dtype=np.bool_)
    if n_s:
        _present_means(np.ascontiguousarray(values).view(np.int64), means, done)
    return means, done


if compiled_ieee is not None:
    @compiled_ieee
    def _bit_length64(v):  # pragma: no cover - compiled
        """The bit length of 0 ≤ v < 2^63, by frexp of exact doubles."""
        if v < 9007199254740992:
            return np.int64(math.frexp(np.float64(v))[1])
        return np.int64(53) + np.int64(math.frexp(np.float64(v >> 53))[1])

    @compiled_inline
    def _widened(a, found, base, end):  # pragma: no cover - compiled
        """(base, end) of the values seen so far (``found``: any nonzero
        one yet) and the nonzero finite double of IEEE bits ``a`` (its sign
        bit cleared): base the smallest exponent of an odd mantissa, end the
        highest bit of a magnitude. A value's top bit is read from its
        exponent field; its lowest set bit is looked for only when its
        exponent is below the base so far (else it cannot lower it)."""
        field = a >> 52
        mantissa = a & 0xFFFFFFFFFFFFF
        if field == 0:                                   # subnormal
            expo = np.int64(-1074)
            top = expo + _bit_length64(mantissa)
        else:
            mantissa |= 0x10000000000000
            expo = field - 1075
            top = expo + 53
        if not found or expo < base:
            low = expo + np.int64(math.frexp(np.float64(mantissa & -mantissa))[1]) - 1
            if not found or low < base:
                base = low
        if not found or top > end:
            end = top
        return base, end


    @compiled_ieee
    def _unit_span(bits, span):  # pragma: no cover - compiled
        """span ← (base, top) of the doubles whose IEEE bits are ``bits``:
        the smallest exponent of a nonzero value's odd mantissa, and the
        highest bit (above base) of a magnitude; False when every value is 0.
        A value's top bit is read from its exponent field; its lowest set
        bit is looked for only when its exponent is below the base so far
        (else it cannot lower the base)."""
        n = bits.size
        flat = bits.reshape(n)
        found = False
        base = np.int64(0)
        end = np.int64(0)
        for i in range(n):
            a = flat[i] & 0x7FFFFFFFFFFFFFFF
            if not a:
                continue
            base, end = _widened(a, found, base, end)
            found = True
        span[0] = base
        span[1] = end - base
        return found

    @compiled_ieee
    def _unit_sums(bits, base, parts, used):  # pragma: no cover - compiled
        """parts[l, s] += the bits [28l, 28l + 28) of |value|·2^(expo − base),
        signed, for every nonzero value of column s (``bits``: the doubles'
        IEEE bits, T × S); used[l]: some piece at level l is nonzero. The
        magnitude is taken as stored (53 bits, not made odd): where its
        exponent is below ``base``, the bits shifted out are zeros."""
        n_t, n_s = bits.shape
        mask = np.int64((1 << 28) - 1)
        for t in range(n_t):
            for s in range(n_s):
                a = bits[t, s] & 0x7FFFFFFFFFFFFFFF
                if not a:
                    continue
                field = a >> 52
                magnitude = a & 0xFFFFFFFFFFFFF
                if field == 0:                           # subnormal
                    shift = np.int64(-1074) - base
                else:
                    magnitude |= 0x10000000000000
                    shift = field - 1075 - base
                if shift < 0:
                    magnitude >>= -shift
                    shift = np.int64(0)
                level = shift // 28
                r = shift - 28 * level
                sign = np.int64(-1) if bits[t, s] < 0 else np.int64(1)
                # magnitude·2^r (< 2^81) in three 28-bit pieces
                piece = (magnitude << r) & mask
                if piece:
                    used[level] = True
                    parts[level, s] += sign * piece
                piece = (magnitude >> (28 - r)) & mask
                if piece:
                    used[level + 1] = True
                    parts[level + 1, s] += sign * piece
                piece = magnitude >> (56 - r)
                if piece:
                    used[level + 2] = True
                    parts[level + 2, s] += sign * piece

    @compiled_ieee
    def _bit_length(v):  # pragma: no cover - compiled
        n = 0
        while v:
            v >>= 1
            n += 1
        return n

    @compiled_ieee
    def _carry(limbs, n):  # pragma: no cover - compiled
        """Every limb but the last in [0, 2^28), the carries moved up."""
        for i in range(n - 1):
            c = limbs[i] >> 28
            limbs[i] -= c << 28
            limbs[i + 1] += c

    @compiled_inline
    def _divided(limbs, n_limbs, base, c, digits):  # pragma: no cover - compiled
        """(value, done): (Σ_i limbs[i]·2^(28i))·2^base / c correctly
        rounded, for signed limbs (carried here, in place; the top ones
        with room for the carries) and 0 < c < 2^31; done False where the
        result would be subnormal or beyond the doubles."""
        _carry(limbs, n_limbs)
        negative = limbs[n_limbs - 1] < 0
        if negative:
            for i in range(n_limbs):
                limbs[i] = -limbs[i]
            _carry(limbs, n_limbs)
        hi = n_limbs - 1
        while hi >= 0 and limbs[hi] == 0:
            hi -= 1
        if hi < 0:
            return 0.0, True
        bits_n = 28 * hi + _bit_length(limbs[hi])
        # N·2^(28k) / c of at least 56 bits (c < 2^31)
        k = 0
        while bits_n + 28 * k < 87:
            k += 1
        n_digits = hi + 1 + k
        rem = 0
        for d in range(n_digits):
            limb = limbs[hi - d] if d <= hi else 0
            cur = (rem << 28) | limb                 # < c·2^28 < 2^59
            q = cur // c
            digits[d] = q                           # most significant first, < 2^28
            rem = cur - q * c
        j = 0
        while digits[j] == 0:
            j += 1
        first = _bit_length(digits[j])
        bits_q = 28 * (n_digits - 1 - j) + first
        m = digits[j]
        have = first
        sticky = rem != 0
        d = j + 1
        while have < 54:
            need = 54 - have
            digit = digits[d] if d < n_digits else 0
            if need >= 28:
                m = (m << 28) | digit
                have += 28
            else:
                m = (m << need) | (digit >> (28 - need))
                if digit & ((1 << (28 - need)) - 1):
                    sticky = True
                have = 54
            d += 1
        while d < n_digits:
            if digits[d] != 0:
                sticky = True
            d += 1
        guard = m & 1
        mant = m >> 1
        if guard and (sticky or (mant & 1)):
            mant += 1
        e = bits_q - 53 + base - 28 * k
        # the result is mant·2^e, mant ≤ 2^53: normal unless e + 53 is
        # below the smallest normal exponent (then the caller rounds)
        if e + 53 <= -1021 or e + 53 > 1024:
            return 0.0, False
        v = np.ldexp(np.float64(mant), e)
        return (-v if negative else v), True

    @compiled_ieee
    def _quotients(parts, limb_at, base, counts, values, done):  # pragma: no cover - compiled
        n_l, n = parts.shape
        top = 0
        for l in range(n_l):
            if limb_at[l] > top:
                top = limb_at[l]
        n_limbs = top + 4                   # room for a part of 61 bits and its carries
        limbs = np.zeros(n_limbs, dtype=np.int64)
        digits = np.zeros(n_limbs + 8, dtype=np.int64)
        for r in range(n):
            c = counts[r]
            if c == 0:
                values[r] = np.nan
                done[r] = True
                continue
            if c >= 2147483648:
                done[r] = False
                continue
            for i in range(n_limbs):
                limbs[i] = 0
            for l in range(n_l):
                limbs[limb_at[l]] += parts[l, r]
            values[r], done[r] = _divided(limbs, n_limbs, base, c, digits)

    @compiled_inline
    def _rounded(m, sticky, e, negative):  # pragma: no cover - compiled
        """(value, done): ±(m // 2)·2^e for the 54 bits ``m`` of a
        quotient (its last the guard bit) and a sticky bit for the rest,
        rounded half to even — as :func:`_divided` rounds (done False where
        the result would be subnormal or beyond the doubles)."""
        mant = m >> 1
        if (m & 1) and (sticky or (mant & 1)):
            mant += 1
        if e + 53 <= -1021 or e + 53 > 1024:
            return 0.0, False
        v = np.ldexp(np.float64(mant), e)
        return (-v if negative else v), True

    @compiled_inline
    def _one_word(q, r, c, base, negative):  # pragma: no cover - compiled
        """(value, done): (q + r/c)·2^base rounded once (q < 2^63, 0 ≤ r <
        c < 2^31): q's top 54 bits, or q extended by long division in steps
        of at most 28 bits (each below 2^59) to 54 bits."""
        b = _bit_length64(q)
        if b >= 54:
            drop = b - 54
            return _rounded(q >> drop, r != 0 or (q & ((np.int64(1) << drop) - 1)) != 0,
                            base + drop + 1, negative)
        k = np.int64(0)
        while b < 54:
            step = np.int64(28) if b == 0 else min(np.int64(28), 54 - b)
            cur = r << step
            d = cur // c
            r = cur - d * c
            q = (q << step) | d
            k += step
            b = _bit_length64(q)
        return _rounded(q, r != 0, base - k + 1, negative)

    @compiled_ieee
    def _limb_mean(bits, s, limbs, digits):  # pragma: no cover - compiled
        """(value, done) of column s of :func:`_present_means`' ``bits`` in
        28-bit limbs at the column's own base (the smallest exponent of
        its values' odd mantissas; subnormals too), divided by
        :func:`_divided` — the columns whose doubles span more than 2^9
        (``limbs``, ``digits``: scratch, large enough for any column)."""
        n_t = bits.shape[0]
        count = np.int64(0)
        found = False
        base = np.int64(0)
        end = np.int64(0)
        for t in range(n_t):
            a = bits[t, s] & 0x7FFFFFFFFFFFFFFF
            field = a >> 52
            if field == 0x7FF:                           # NaN or infinity: absent
                continue
            count += 1
            if not a:
                continue
            base, end = _widened(a, found, base, end)
            found = True
        if count == 0:
            return np.nan, True
        if not found:
            return 0.0, True
        # |piece sum| < count·2^28 < 2^59
        n_limbs = (end - base + 27) // 28 + 4
        for i in range(n_limbs):
            limbs[i] = 0
        mask = np.int64((1 << 28) - 1)
        for t in range(n_t):
            a = bits[t, s] & 0x7FFFFFFFFFFFFFFF
            field = a >> 52
            if field == 0x7FF or not a:
                continue
            magnitude = a & 0xFFFFFFFFFFFFF
            if field == 0:
                shift = np.int64(-1074) - base
            else:
                magnitude |= 0x10000000000000
                shift = field - 1075 - base
            if shift < 0:
                magnitude >>= -shift                     # zeros shifted out
                shift = np.int64(0)
            level = shift // 28
            r28 = shift - 28 * level
            sign = np.int64(-1) if bits[t, s] < 0 else np.int64(1)
            limbs[level] += sign * ((magnitude << r28) & mask)
            limbs[level + 1] += sign * ((magnitude >> (28 - r28)) & mask)
            limbs[level + 2] += sign * (magnitude >> (56 - r28))
        return _divided(limbs, n_limbs, base, count, digits)

    #: the columns of one block of :func:`_present_means` (its rows of a
    #: block, 40 × 256 doubles, stay in the core's cache between passes)
    _BLOCK = 2048

    @compiled_ieee
    def _present_means(bits, means, done):  # pragma: no cover - compiled
        """means[s] ← the exact mean of the finite doubles of column s of
        ``bits`` (their IEEE bits, T × S), correctly rounded; done[s] False
        where the result would be subnormal. Block by block of columns,
        the rows read in memory order: pass 1 counts each column's
        finite values and its smallest and largest exponent field of a
        nonzero normal value; a column within 2^9 (every term below 2^62
        at the column's base, the smallest field's unit) is summed in pass
        2 as two int64 sums of each term's bits above and below 2^31
        (each |sum| < 2^31·count < 2^62) and divided by long division in
        words below 2^62; any other column (wider, or with a subnormal) by
        :func:`_limb_mean`."""
        n_t, n_s = bits.shape
        limbs = np.zeros(96, dtype=np.int64)         # 2,130 bits: any column
        digits = np.zeros(104, dtype=np.int64)
        size = _BLOCK
        # pass 1's counts and exponent fields as int32, each row's block
        # read as a slice: the loop vectorises (6.0 ms → 1.0 ms for 40 ×
        # 49,049 doubles, int64 state read element by element)
        state = np.zeros((4, size), dtype=np.int32)
        count, low, high, special = state[0], state[1], state[2], state[3]
        way = np.zeros(size, dtype=np.int32)
        upper = np.zeros(size, dtype=np.int64)
        lower = np.zeros(size, dtype=np.int64)
        m31 = np.int64((1 << 31) - 1)
        for s0 in range(0, n_s, size):
            n_b = min(size, n_s - s0)
            for j in range(n_b):
                count[j] = 0
                low[j] = 0x7FF
                high[j] = 0
                special[j] = 0
                upper[j] = 0
                lower[j] = 0
            for t in range(n_t):
                row = bits[t, s0:s0 + n_b]
                for j in range(n_b):
                    x = row[j]
                    field = np.int32((x >> 52) & 0x7FF)
                    finite = field != 0x7FF
                    count[j] += np.int32(finite)
                    low[j] = min(low[j], field if (finite and field != 0) else np.int32(0x7FF))
                    high[j] = max(high[j], field if finite else np.int32(0))
                    special[j] |= np.int32(field == 0 and (x & 0x7FFFFFFFFFFFFFFF) != 0)
            for j in range(n_b):
                if count[j] == 0:
                    way[j] = 0
                    means[s0 + j] = np.nan
                    done[s0 + j] = True
                elif special[j] == 0 and high[j] == 0:
                    way[j] = 0                         # zeros only
                    means[s0 + j] = 0.0
                    done[s0 + j] = True
                elif special[j] == 0 and high[j] - low[j] <= 9:
                    way[j] = 1
                else:
                    way[j] = 2
            for t in range(n_t):
                row = bits[t, s0:s0 + n_b]
                for j in range(n_b):
                    # branch-free: a term where the value is a nonzero
                    # normal of a column summed here, else 0; its sign
                    # applied as x ↦ (x ^ s) − s, s = 0 or −1
                    x = row[j]
                    a = x & 0x7FFFFFFFFFFFFFFF
                    field = a >> 52
                    term = ((a & 0xFFFFFFFFFFFFF) | 0x10000000000000) << \
                        ((field - np.int64(low[j])) & 63)
                    if field == 0x7FF or field == 0 or way[j] != 1:
                        term = 0
                    sign = x >> 63
                    upper[j] += ((term >> 31) ^ sign) - sign
                    lower[j] += ((term & m31) ^ sign) - sign
            for j in range(n_b):
                s = s0 + j
                if way[j] == 2:
                    means[s], done[s] = _limb_mean(bits, s, limbs, digits)
                    continue
                if way[j] != 1:
                    continue
                # the sum = hi·2^31 + lo, 0 ≤ lo < 2^31, at base low − 1075
                hi = upper[j] + (lower[j] >> 31)
                lo = lower[j] & m31
                if hi == 0 and lo == 0:
                    means[s] = 0.0
                    done[s] = True
                    continue
                negative = hi < 0
                if negative:
                    if lo:
                        hi, lo = -hi - 1, (m31 + 1) - lo
                    else:
                        hi = -hi
                base = np.int64(low[j]) - 1075
                c = np.int64(count[j])
                if hi <= m31:
                    n = (hi << 31) | lo                  # < 2^62
                    q = n // c
                    means[s], done[s] = _one_word(q, n - q * c, c, base, negative)
                    continue
                # two words: hi < count·2^31, so hi // count < 2^31
                q1 = hi // c
                cur = ((hi - q1 * c) << 31) | lo         # < count·2^31 < 2^62
                q0 = cur // c                            # < 2^31
                means[s], done[s] = _one_word((q1 << 31) | q0, cur - q0 * c, c, base, negative)
