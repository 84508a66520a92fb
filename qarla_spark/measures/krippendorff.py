"""Agreement among raters: Krippendorff's α with the interval metric (issue
39, part 3; pure: numpy, integers).

The *units* are what the raters judge (for one criterion: the judged
summaries, each a (topic, summarizer)); a unit's *pairable values* are its
ratings, and a unit with fewer than two is left out (Krippendorff 2011,
"Computing Krippendorff's Alpha-Reliability"). With m_u values in unit u,
n = Σ_u m_u and the interval metric δ²(a, b) = (a − b)²:

    D_o = 1/n · Σ_u 1/(m_u − 1) · Σ_{i ≠ j in u} (v_i − v_j)²
    D_e = 1/(n(n − 1)) · Σ_{i ≠ j over all} (v_i − v_j)²
    α = 1 − D_o / D_e

Since Σ_{i ≠ j} (v_i − v_j)² over m values is 2m times their sum of squared
deviations, α = 1 − (n − 1) · Σ_u T_u / (n·Q − A²), with T_u = (m_u·Q_u −
A_u²) / (m_u − 1), A and Q the sums of the values and of their squares (of
the unit, or of all). :func:`interval_alpha` computes it exactly — every
double is an integer over a power of two, so A, Q and T_u are integers over
a common scale, the sum over units a rational — and rounds once: the same
double whatever the order of the ratings, equal to the definition computed
in fractions. α is undefined (NaN) with fewer than two pairable values or
without any variation among them (D_e = 0).

:func:`interval_alpha_replicates` gives α under unit weights (B × U), a unit
of weight w counting as w copies of it — the bootstrap's replicate counts,
over units or over the topics that hold them — in doubles (vectorised over
the replicates; each unit's deviations are taken from its own mean, so
nothing cancels catastrophically).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, Sequence, Tuple

import numpy as np

NAN = float("nan")


def _units(values, units) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values as doubles, each value's unit index in the sorted labels,
    the sorted labels); every value finite."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    labels = np.empty(len(units), dtype=object)     # tuples stay labels, not rows
    labels[:] = list(units)
    if len(values) != len(labels):
        raise ValueError(f"{len(values)} values but {len(labels)} unit labels")
    if not np.isfinite(values).all():
        raise ValueError("ratings must be finite (leave a missing rating out)")
    if not len(values):
        return values, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    keys = sorted(set(labels.tolist()), key=repr)
    at = {k: i for i, k in enumerate(keys)}
    index = np.fromiter((at[k] for k in labels.tolist()), dtype=np.int64, count=len(labels))
    out = np.empty(len(keys), dtype=object)
    out[:] = keys
    return values, index, out


def interval_alpha(values: Sequence[float], units: Sequence) -> float:
    """Krippendorff's α (interval metric) of ratings ``values``, each of the
    unit ``units[i]`` (any hashable label): exact, rounded once; NaN when
    undefined (fewer than two pairable values, or no variation)."""
    values, index, labels = _units(values, units)
    if not len(values):
        return NAN
    # every double is num / 2^k: one common scale 2^K makes them integers
    pairs = [float(v).as_integer_ratio() for v in values.tolist()]
    shift = max(den.bit_length() - 1 for _, den in pairs)
    ints = [num << (shift - (den.bit_length() - 1)) for num, den in pairs]
    per_unit: Dict[int, list] = {}
    for u, a in zip(index.tolist(), ints):
        per_unit.setdefault(u, []).append(a)
    n, total_a, total_q = 0, 0, 0
    by_m: Dict[int, int] = {}          # Σ (m·Q_u − A_u²) of the units with m values
    for found in per_unit.values():
        m = len(found)
        if m < 2:
            continue
        a_u = sum(found)
        q_u = sum(a * a for a in found)
        by_m[m] = by_m.get(m, 0) + m * q_u - a_u * a_u
        n += m
        total_a += a_u
        total_q += q_u
    spread = n * total_q - total_a * total_a       # n² · (the values' variance) · 2^2K
    if n < 2 or spread == 0:
        return NAN
    within = sum((Fraction(s, m - 1) for m, s in by_m.items()), Fraction(0))
    alpha = 1 - (n - 1) * within / spread
    return alpha.numerator / alpha.denominator     # correctly rounded


def interval_alpha_replicates(values: Sequence[float], units: Sequence,
                              weights) -> np.ndarray:
    """α (interval metric) under unit weights: ``weights`` (B × U) or (U,),
    non-negative, for the units in the order of their sorted labels (as
    :func:`unit_labels` gives them; a unit of weight w counts as w copies of
    itself, 0 leaves it out). Returns (B,) doubles (a float for 1-D
    weights); NaN where α is undefined."""
    values, index, labels = _units(values, units)
    w = np.asarray(weights, dtype=np.float64)
    flat = w.ndim == 1
    w = np.atleast_2d(w)
    if w.shape[1] != len(labels):
        raise ValueError(f"weights for {w.shape[1]} units, but the ratings have {len(labels)}")
    if (w < 0).any() or not np.isfinite(w).all():
        raise ValueError("unit weights must be finite and non-negative")
    m = np.bincount(index, minlength=len(labels)).astype(np.float64)
    sums = np.bincount(index, weights=values, minlength=len(labels))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(m > 0, sums / np.maximum(m, 1), 0.0)
    dev = values - mean[index]
    ss = np.bincount(index, weights=dev * dev, minlength=len(labels))
    pairable = m >= 2
    w = w * pairable
    n = w @ m
    c = np.where(pairable, m * ss / np.maximum(m - 1, 1), 0.0)
    within = w @ c
    with np.errstate(invalid="ignore", divide="ignore"):
        grand = (w @ (m * mean)) / n
        # Σ over copies of Σ_i (v − grand)² = Σ_u w_u (SS_u + m_u (mean_u − grand)²)
        total = w @ ss + (w * (m * (mean[None, :] - grand[:, None]) ** 2)).sum(axis=1)
        alpha = 1.0 - (n - 1.0) / n * within / total
    # no variation among the counted values (decided on the values
    # themselves, not on a rounded sum of squares): undefined
    lo_u = np.full(len(labels), np.inf)
    hi_u = np.full(len(labels), -np.inf)
    np.minimum.at(lo_u, index, values)
    np.maximum.at(hi_u, index, values)
    counted = w > 0
    lo = np.where(counted, lo_u[None, :], np.inf).min(axis=1, initial=np.inf)
    hi = np.where(counted, hi_u[None, :], -np.inf).max(axis=1, initial=-np.inf)
    alpha = np.where((n >= 2) & (hi > lo), alpha, NAN)
    return float(alpha[0]) if flat else alpha


def unit_labels(units: Sequence) -> list:
    """The units' labels in the order :func:`interval_alpha_replicates`'s
    weights take them."""
    return list(_units(np.zeros(len(units)), units)[2])


def alpha_rows(task: str, topics: Sequence, summarizers: Sequence, criteria: Sequence,
               raters: Sequence, scores: Sequence[float], seed: int, n: int) -> list:
    """``rater_agreement/`` rows of one task's ratings (issue 39): per
    criterion with a pairable unit (a judged summary rated twice or more),
    (task, criterion, α, ci_low, ci_high, "percentile", pairable units,
    their ratings, raters, n, "topics"): α exact (:func:`interval_alpha`),
    its 95% percentile interval from the run's Poisson replicates over
    topics — each unit weighted by its topic's weight, keyed by (seed,
    task, topic) as every interval of the run
    (:func:`interval_alpha_replicates`)."""
    from qarla_spark.measures import resampling as rs
    by: Dict[str, Tuple[list, list, set]] = {}
    for topic, name, criterion, rater, score in zip(topics, summarizers, criteria, raters,
                                                    scores):
        values, units, who = by.setdefault(str(criterion), ([], [], set()))
        values.append(float(score))
        units.append((str(topic), str(name)))
        who.add(rater)
    rows = []
    for criterion in sorted(by):
        values, units, who = by[criterion]
        sizes: Dict[tuple, int] = {}
        for u in units:
            sizes[u] = sizes.get(u, 0) + 1
        pairable = [u for u, m in sizes.items() if m >= 2]
        if not pairable:
            continue
        keep = [k for k, u in enumerate(units) if sizes[u] >= 2]
        values = [values[k] for k in keep]
        units = [units[k] for k in keep]
        alpha = interval_alpha(values, units)
        labels = unit_labels(units)
        topic_names = sorted({t for t, _ in labels})
        at = {t: i for i, t in enumerate(topic_names)}
        low = high = NAN
        if n:
            weights = rs.poisson_weights(seed, task, topic_names, n)       # B × T
            reps = interval_alpha_replicates(values, units,
                                             weights[:, [at[t] for t, _ in labels]])
            finite = reps[np.isfinite(reps)]
            if finite.size:
                low, high = rs.percentile_interval(finite)
        rows.append((task, criterion, alpha, float(low), float(high), "percentile",
                     len(pairable), len(values), len(who), int(n), "topics"))
    return rows


def criterion_alphas(topics: Sequence, summarizers: Sequence, criteria: Sequence,
                     scores: Sequence[float]) -> Dict[str, Tuple[float, int, int]]:
    """Per criterion of one task's ratings (the ``judgments/`` table's
    columns): (α, the pairable units, their ratings), the units being the
    judged summaries (topic, summarizer). A criterion rated once per
    summary has no pairable unit: α NaN, 0 and 0."""
    by: Dict[str, Tuple[list, list]] = {}
    for topic, name, criterion, score in zip(topics, summarizers, criteria, scores):
        values, units = by.setdefault(str(criterion), ([], []))
        values.append(float(score))
        units.append((str(topic), str(name)))
    out: Dict[str, Tuple[float, int, int]] = {}
    for criterion in sorted(by):
        values, units = by[criterion]
        sizes: Dict[tuple, int] = {}
        for u in units:
            sizes[u] = sizes.get(u, 0) + 1
        pairable = [m for m in sizes.values() if m >= 2]
        out[criterion] = (interval_alpha(values, units), len(pairable), sum(pairable))
    return out
