"""Agreement with human judgments, rankings with references, the
human-summariser test (SPEC §3, §7; pure: numpy, scipy, fractions).

Everything here works on one group of rows the QARLA or HBR stage hands
over (a task and a metric set, ...) and sorts them itself, so the numbers
do not depend on the order rows arrive in:

- :func:`correlations`: Pearson, Spearman and Kendall's tau-b of paired
  values (numpy; equal to scipy's to rounding, tested, and ~10x faster on
  the thousands of small groups a run has), rows ordered by their key
  first; NaN when there are too few points or a side is constant;
- :func:`rank_exact`: positions of exact scores (ties by name) and which
  models score strictly above every peer;
- :func:`ranked_first`: does a held-out model score strictly above every
  system (exact rationals compared, never float noise).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, Mapping, Sequence, Tuple

import numpy as np

NAN = float("nan")
#: system level needs this many systems (a correlation of 2 points is ±1)
MIN_SYSTEMS = 3
#: within a topic (summary level) and for KING vs Pearson: 2 points
MIN_POINTS = 2


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Pearson of (B × n) arrays."""
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dx * dy).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    return np.clip(r, -1.0, 1.0)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Row-wise ranks 1..n of a (B × n) array, ties sharing the mean of
    their ranks: #{smaller} + (#{equal} + 1) / 2 (exact in doubles)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size and x.shape[1] <= 64:         # short rows: compiled, n² counts (no sort)
        from qarla_spark.measures.pair_counts import average_ranks as compiled_ranks
        found = compiled_ranks(x)
        if found is not None:
            return found
    if np.isnan(x).any():       # NaN equals nothing, is below nothing: by comparisons
        less = (x[:, None, :] < x[:, :, None]).sum(axis=2)
        equal = (x[:, None, :] == x[:, :, None]).sum(axis=2)
        return less + (equal + 1) / 2.0
    # sorted: a value's #smaller is where its run of equal values starts in
    # its row, #equal the run's length (n log n, not n² comparisons)
    rows, n = x.shape
    order = np.argsort(x, axis=1)      # equal values share a rank: any order of them
    ordered = np.take_along_axis(x, order, axis=1)
    pos = np.broadcast_to(np.arange(n), (rows, n))
    new = np.ones((rows, n), dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
    last = np.ones((rows, n), dtype=bool)
    last[:, :-1] = new[:, 1:]
    end = np.minimum.accumulate(np.where(last, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((rows, n))
    np.put_along_axis(ranks, order, start + (end - start + 2) / 2.0, axis=1)
    return ranks


def _kendall_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    from qarla_spark.measures.pair_counts import concordance_shared
    con, nx, ny = concordance_shared(x[:, None, :], y)
    con, nx = con[:, 0], nx[:, 0]
    # the integer sums are the doubles' sums of ±1 (exact), then doubles
    with np.errstate(invalid="ignore", divide="ignore"):
        return con.astype(np.float64) / np.sqrt(nx.astype(np.float64) * ny.astype(np.float64))


_KINDS = {"pearson": _pearson,
          "spearman": lambda x, y: _pearson(average_ranks(x), average_ranks(y)),
          "kendall": _kendall_b}
KINDS = tuple(_KINDS)


def correlation_rows(keys: Sequence, x, y, min_n: int = MIN_SYSTEMS,
                     kinds: Sequence[str] = KINDS) -> np.ndarray:
    """(B × len(kinds)): the correlations of each row pair of ``x`` and
    ``y`` (B × n), the n points taken in the order of ``keys`` (names):
    Pearson, Spearman (Pearson of average ranks) and Kendall's tau-b (from
    the signs of all pairs); NaN when fewer than ``min_n`` points or a side
    of the row is constant."""
    unknown = [k for k in kinds if k not in _KINDS]
    if unknown:
        raise ValueError(f"unknown correlation(s) {unknown}")
    order = np.argsort(np.asarray(keys, dtype=object), kind="stable")
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float64).reshape(-1, len(order))[:, order])
    y = np.ascontiguousarray(np.asarray(y, dtype=np.float64).reshape(-1, len(order))[:, order])
    out = np.full((x.shape[0], len(kinds)), NAN)
    if len(order) < min_n:
        return out
    from qarla_spark.measures import compiled_rows
    if compiled_rows.backend() == "numba" and ("pearson" in kinds or "spearman" in kinds):
        # both in one compiled pass over the row pairs, the same doubles
        both = compiled_rows.pearson_spearman_many(x[:, None, :], y[None], "pearson" in kinds,
                                                   "spearman" in kinds)[0, :, 0]
        for k, kind in enumerate(kinds):
            if kind in ("pearson", "spearman"):
                out[:, k] = both[:, 0 if kind == "pearson" else 1]
        kinds = [kind if kind == "kendall" else None for kind in kinds]
    ok = (np.ptp(x, axis=1) > 0) & (np.ptp(y, axis=1) > 0)
    if ok.any():
        for k, kind in enumerate(kinds):
            if kind is not None:
                out[ok, k] = _KINDS[kind](x[ok], y[ok])
    return out


def correlation_rows_shared(keys: Sequence, x, y, min_n: int = MIN_SYSTEMS,
                            kinds: Sequence[str] = KINDS) -> np.ndarray:
    """(B × M × len(kinds)): :func:`correlation_rows` of every measure's row
    ``x[b, m]`` (B × M × n) against the same row ``y[b]`` (B × n) — the
    numbers of ``correlation_rows(keys, x.reshape(B·M, n), np.repeat(y, M,
    axis=0))`` — with the work of ``y``'s side (its deviations, its ranks)
    done once per row b, not once per measure."""
    y = np.asarray(y, dtype=np.float64)
    return correlation_rows_many(keys, x, y[None], min_n, kinds)[0]


def correlation_rows_many(keys: Sequence, x, ys, min_n: int = MIN_SYSTEMS,
                          kinds: Sequence[str] = KINDS) -> np.ndarray:
    """(C × B × M × len(kinds)): :func:`correlation_rows_shared` of the
    same ``x`` (B × M × n) against each of C ``ys`` (C × B × n: the human
    scores of several criteria), ``x``'s side (its deviations, its ranks)
    worked out once for all of them."""
    unknown = [k for k in kinds if k not in _KINDS]
    if unknown:
        raise ValueError(f"unknown correlation(s) {unknown}")
    order = np.argsort(np.asarray(keys, dtype=object), kind="stable")
    x = np.asarray(x, dtype=np.float64)
    n_b, n_m = x.shape[:2]
    ys = np.asarray(ys, dtype=np.float64)
    n_c = ys.shape[0]
    from qarla_spark.measures import compiled_rows, pair_counts
    if tuple(kinds) == ("kendall",) and pair_counts.BACKEND == "numba":
        # Kendall's counts and np.ptp do not depend on the points' order:
        # no gather into the keys' order, every row counted in place
        out = np.full((n_c, n_b, n_m, 1), NAN)
        if len(order) < min_n:
            return out
        x = x.reshape(n_b, n_m, len(order))
        ys = ys.reshape(n_c, n_b, len(order))
        oks = (np.ptp(x, axis=2) > 0)[None] & (np.ptp(ys, axis=2) > 0)[:, :, None]
        for c in range(n_c):
            if oks[c].any():
                con, nx, ny = pair_counts.concordance_shared(x, ys[c])
                with np.errstate(invalid="ignore", divide="ignore"):
                    tau = con.astype(np.float64) / np.sqrt(nx.astype(np.float64)
                                                          * ny.astype(np.float64)[:, None])
                out[c, :, :, 0] = np.where(oks[c], tau, NAN)
        return out
    if len(order) and (order == np.arange(len(order))).all() and \
            compiled_rows.backend() == "numba" and set(kinds) <= {"pearson", "spearman"}:
        # the keys in order already: the compiled pass reads x as it is
        # (a transposed view of the system scores: no copy)
        x = x.reshape(n_b, n_m, len(order))
        ys = ys.reshape(n_c, n_b, len(order))
    else:
        x = np.ascontiguousarray(x.reshape(n_b, n_m, len(order))[:, :, order])
        ys = np.ascontiguousarray(ys.reshape(n_c, n_b, len(order))[:, :, order])
    out = np.full((n_c, n_b, n_m, len(kinds)), NAN)
    if len(order) < min_n:
        return out
    if compiled_rows.backend() == "numba" and set(kinds) <= {"pearson", "spearman"}:
        # the compiled pass decides itself where both rows vary (np.ptp > 0)
        # and writes only there: no variation checked here first
        both = compiled_rows.pearson_spearman_many(x, ys, "pearson" in kinds,
                                                   "spearman" in kinds)
        for k, kind in enumerate(kinds):
            out[..., k] = both[..., 0 if kind == "pearson" else 1]
        return out
    ok_x = np.ptp(x, axis=2) > 0
    oks = ok_x[None] & (np.ptp(ys, axis=2) > 0)[:, :, None]
    if not oks.any():
        return out
    need = oks.any(axis=0)                                  # B × M: some criterion reads it
    dx = rx = drx = rx8 = None
    if compiled_rows.backend() == "numba" and ("pearson" in kinds or "spearman" in kinds):
        # both in one compiled pass over the rows, the same doubles
        both = compiled_rows.pearson_spearman_many(x, ys, "pearson" in kinds,
                                                   "spearman" in kinds)
        for k, kind in enumerate(kinds):
            if kind in ("pearson", "spearman"):
                out[..., k] = both[..., 0 if kind == "pearson" else 1]
        kinds = [kind if kind == "kendall" else None for kind in kinds]
    for k, kind in enumerate(kinds):
        if kind is None:
            continue
        if kind == "pearson":
            if dx is None:
                dx = _deviations(x)
            for c in range(n_c):
                out[c, :, :, k] = np.where(oks[c], _pearson_of(dx, _deviations(ys[c])), NAN)
        elif kind == "spearman":
            if rx is None:
                rx = np.full(x.shape, NAN)
                rx[need] = average_ranks(x[need])
                drx = _deviations(rx)
            for c in range(n_c):
                rows = np.flatnonzero(oks[c].any(axis=1))
                ry = np.full(ys[c].shape, NAN)
                ry[rows] = average_ranks(ys[c][rows])
                out[c, :, :, k] = np.where(oks[c], _pearson_of(drx, _deviations(ry)), NAN)
        else:
            compiled = pair_counts.BACKEND == "numba"
            if rx8 is None:          # numpy: signs of differences are signs of dense ranks
                rx8 = x if compiled else _dense_ranks(x)
            for c in range(n_c):
                rows = np.flatnonzero(oks[c].any(axis=1))
                con, nx, ny = pair_counts.concordance_shared(
                    rx8[rows], ys[c][rows] if compiled else _dense_ranks(ys[c][rows]))
                with np.errstate(invalid="ignore", divide="ignore"):
                    tau = con.astype(np.float64) / np.sqrt(nx.astype(np.float64)
                                                          * ny.astype(np.float64)[:, None])
                out[c, rows, :, k] = np.where(oks[c][rows], tau, NAN)
    return out


def _dense_ranks(v: np.ndarray) -> np.ndarray:
    """Each row's values (last axis) as dense ranks 0, 1, ... in one or
    two bytes: equal values equal ranks, so sign(v_a − v_b) is the sign of
    their ranks' difference (finite rows; a NaN ranks last)."""
    shape = v.shape
    rows = v.reshape(-1, shape[-1])
    order = np.argsort(rows, axis=1)
    ordered = np.take_along_axis(rows, order, axis=1)
    new = np.zeros(rows.shape, dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    dense = np.cumsum(new, axis=1, dtype=np.int8 if shape[-1] <= 127 else np.int32)
    ranks = np.empty(rows.shape, dtype=dense.dtype)
    np.put_along_axis(ranks, order, dense, axis=1)
    return ranks.reshape(shape)


def _deviations(v: np.ndarray):
    """(v − the row's mean, Σ of its squares) over the last axis: the parts
    of :func:`_pearson`, each row's sums over its own values."""
    d = v - v.mean(axis=-1, keepdims=True)
    return d, (d * d).sum(axis=-1)


def _pearson_of(dx, dy) -> np.ndarray:
    """:func:`_pearson` of rows x[b, m] (B × M × n) against y[b] (B × n)
    from their :func:`_deviations`: the same doubles."""
    (ddx, sx), (ddy, sy) = dx, dy
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (ddx * ddy[:, None, :]).sum(axis=2) / np.sqrt(sx * sy[:, None])
    return np.clip(r, -1.0, 1.0)


def correlations(keys: Sequence, x: Sequence[float], y: Sequence[float],
                 min_n: int = MIN_SYSTEMS, kinds: Sequence[str] = KINDS) -> Tuple[float, ...]:
    """:func:`correlation_rows` of one row of points."""
    return tuple(float(v) for v in correlation_rows(keys, [x], [y], min_n, kinds)[0])


def rank_exact(scores: Mapping[Tuple[str, str], Fraction]) -> Dict[Tuple[str, str], tuple]:
    """For scores keyed by (summarizer, role): (position, above_peers) of
    each — position 1 is the highest score, ties by summarizer name;
    ``above_peers`` (models only, else None): the score is strictly above
    every peer's (False when there is no peer to beat)."""
    order = sorted(scores, key=lambda k: (-scores[k], k[0], k[1]))
    peer_best = max((v for (_, role), v in scores.items() if role == "peer"), default=None)
    out = {}
    for pos, key in enumerate(order, start=1):
        above = None
        if key[1] == "model":
            above = peer_best is not None and scores[key] > peer_best
        out[key] = (pos, above)
    return out


def ranked_first(model_score: Fraction, peer_scores: Sequence[Fraction]) -> bool:
    """The held-out model scores strictly above every system (exact)."""
    return bool(peer_scores) and all(model_score > p for p in peer_scores)
