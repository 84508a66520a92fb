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
    less = (x[:, None, :] < x[:, :, None]).sum(axis=2)
    equal = (x[:, None, :] == x[:, :, None]).sum(axis=2)
    return less + (equal + 1) / 2.0


def _kendall_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(x.shape[1], 1)      # the pairs a < b, row by row
    sx = np.sign(x[:, i] - x[:, j])
    sy = np.sign(y[:, i] - y[:, j])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx * sy).sum(axis=1) / np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1))


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
    ok = (np.ptp(x, axis=1) > 0) & (np.ptp(y, axis=1) > 0)
    if ok.any():
        for k, kind in enumerate(kinds):
            out[ok, k] = _KINDS[kind](x[ok], y[ok])
    return out


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
