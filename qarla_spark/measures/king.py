"""KING and ORANGE (SPEC §4): what the QARLA stage reports of each metric set.

KING(X) = mean over topics t of mean over h ∈ M_t of
1[∀a ∈ A_t: QUEEN_{X,M_t∖{h}}(h) > QUEEN_{X,M_t∖{h}}(a)] (strict: a tie
with any peer fails). Topics need ≥ 4 models and at least one peer (a topic
without peers is skipped: "beats every peer" would be vacuous there). The
per-topic cases are counted exactly by
:func:`~qarla_spark.measures.queen.king_cases`; :func:`king` averages them
exactly.

The 95% interval is Wilson's score interval for a proportion, with KING as
the proportion and the number of (topic, held-out model) cases as n
(exact when every topic has the same number of models, as in SummEval and
DUC; otherwise an approximation).

ORANGE (Lin & Och 2004, as in Asiya): P(QUEEN_{M∖{h}}(a) ≤ QUEEN_{M∖{h}}(h))
over every (topic, held-out model h, peer a), pooled: a ratio of two
integer sums.
"""

from __future__ import annotations

import math
from typing import Iterable, Tuple

from qarla_spark.measures import exact

Z95 = 1.959963984540054


def wilson(p: float, n: int, z: float = Z95) -> Tuple[float, float]:
    """Wilson score interval (low, high) of a proportion ``p`` over ``n``."""
    if n <= 0:
        return (float("nan"), float("nan"))
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def wilson_many(p, n: int, z: float = Z95):
    """:func:`wilson` of many proportions ``p`` (an array) over the same
    ``n``: the same operations in the same order, elementwise (numpy's
    IEEE +, −, ×, ÷ and √), so the same doubles."""
    import numpy as np
    p = np.asarray(p, dtype=np.float64)
    if n <= 0:
        return np.full(p.shape, np.nan), np.full(p.shape, np.nan)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def king(cases: Iterable[Tuple[int, int, int]]) -> Tuple[float, int, float, float]:
    """(KING, cases, ci_low, ci_high) from the topics' cases grouped by
    their number of models: rows of (Σ wins, models per topic, topics)."""
    rows = [(int(w), int(m), int(t)) for w, m, t in cases]
    value = exact.to_float(exact.grouped_ratio_mean(rows))
    n = sum(m * t for _, m, t in rows)
    return (value, n) + wilson(value, n)
