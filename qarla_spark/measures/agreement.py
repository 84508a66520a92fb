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


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    dx, dy = x - x.mean(), y - y.mean()
    r = float((dx * dy).sum() / np.sqrt((dx * dx).sum() * (dy * dy).sum()))
    return max(-1.0, min(1.0, r))


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing the mean of their ranks."""
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    first = np.concatenate([[True], sorted_x[1:] != sorted_x[:-1]])
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    ends = np.append(starts[1:], len(x))
    ranks = np.empty(len(x))
    ranks[order] = ((starts + 1 + ends) / 2.0)[group]
    return ranks


def _kendall_b(x: np.ndarray, y: np.ndarray) -> float:
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones(sx.shape, dtype=bool), 1)
    s = (sx * sy)[upper].sum()
    nx, ny = np.abs(sx)[upper].sum(), np.abs(sy)[upper].sum()
    return float(s / np.sqrt(nx * ny))


_KINDS = {"pearson": _pearson,
          "spearman": lambda x, y: _pearson(average_ranks(x), average_ranks(y)),
          "kendall": _kendall_b}


def correlations(keys: Sequence, x: Sequence[float], y: Sequence[float],
                 min_n: int = MIN_SYSTEMS, kinds: Sequence[str] = ("pearson", "spearman",
                                                                      "kendall")
                 ) -> Tuple[float, ...]:
    """The correlations ``kinds`` of the points (x, y), taken in the order
    of ``keys`` (names): Pearson, Spearman (Pearson of average ranks) and
    Kendall's tau-b (from the signs of all pairs); NaN when fewer than
    ``min_n`` points or a side is constant."""
    unknown = [k for k in kinds if k not in _KINDS]
    if unknown:
        raise ValueError(f"unknown correlation(s) {unknown}")
    order = np.argsort(np.asarray(keys, dtype=object), kind="stable")
    x = np.asarray(x, dtype=np.float64)[order]
    y = np.asarray(y, dtype=np.float64)[order]
    if len(x) < min_n or np.ptp(x) == 0 or np.ptp(y) == 0:
        return tuple(NAN for _ in kinds)
    return tuple(_KINDS[k](x, y) for k in kinds)


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
