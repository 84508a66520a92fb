"""Fewer human judgments, valid intervals (issue 40, first increment):
prediction-powered inference for a system's mean human score, as pure
numpy functions, vectorised over systems and trials.

**The estimate** (Angelopoulos et al. 2023, "Prediction-powered inference";
PPI++, Angelopoulos, Duchi & Zrnic 2023; for evaluation, Boyeau et al.
2024, "AutoEval Done Right"). A system's summaries: k *judged* (a human
score y and the automatic measure f) and N_u *unjudged* (f only), the two
sets disjoint — the papers' labelled and unlabelled samples. With λ ∈ [0, 1]

    θ̂_λ = λ·mean_u(f) + mean_k(y − λ·f),
    se²  = λ²·var_u(f)/N_u + var_k(y − λ·f)/k         (sample variances, n − 1)

and the 95% interval θ̂ ± z·se, z = Φ⁻¹(0.975) (the papers' CLT interval).
λ = 0 is the *classical* interval of the k judgments alone (the same
doubles: :func:`classical_interval`), λ = 1 plain PPI, and PPI++ tunes λ
from the data (the variance-minimising λ of the mean,
Cov_k(y, f) / ((1 + k/N_u)·Var(f)), Var(f) over all k + N_u summaries,
clipped to [0, 1], so PPI++ is never further from the classical interval
than plain PPI: λ = 0 when f is constant or anti-correlated).

**The simulation** (:func:`simulate`): on a task's judged cells (topics ×
systems, a cell judged and scored), trial r hides all but k judgments of
each system: the topics ranked by the uniforms of the stream keyed by
(seed, "ppi", task, criterion, r) (one word per topic, topics in code-point
order of their names when given), each system keeps its first k cells in
that order.
The measure and k are not in the key: every measure and every k of a trial
judge the same topics (k's sets nested), so their differences are the
measure's and k's, not the draws'. Reported per (k, method, system): the
share of trials whose interval covers the system's full-data mean (the
mean human score over all its cells: the run's, the exact mean of their
readings rounded once, :func:`~qarla_spark.measures.human.system_means`),
the mean width, and the judgments saved at equal width: a classical
interval needs k_eq = k·E[w_classical²] / E[w²] judgments for the width
(variance) the method has with k; saved = 1 − k/k_eq. The papers'
interval is for the population mean (the unjudged summaries a sample, not
fixed): for the full-data mean it is conservative by σ²_y/N in se² (as is
the classical one), a slack that vanishes for k ≪ N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Optional, Sequence, Tuple

import numpy as np

from qarla_spark.measures import human as hu
from qarla_spark.measures import resampling as rs

ALPHA = 0.05
#: the methods of a simulation, in its arrays' order
CLASSICAL, PPI, PPI_PLUS = "classical", "ppi", "ppi++"
METHODS = (CLASSICAL, PPI, PPI_PLUS)
#: trials computed together (memory: trials × systems × topics doubles)
_BLOCK = 256


def z_value(alpha: float = ALPHA) -> float:
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


@dataclass(frozen=True)
class MeanInterval:
    """Arrays of one shape: the estimate, its interval, the λ used."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lam: np.ndarray

    @property
    def width(self) -> np.ndarray:
        return self.high - self.low


def _moments(x, mask):
    """(count, mean, Σ (x − mean)²) over the last axis where ``mask``."""
    n = mask.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(mask, x, 0.0).sum(axis=-1) / n
        centred = np.where(mask, x - mean[..., None], 0.0)
    return n, mean, centred


def _variance(centred, n):
    with np.errstate(invalid="ignore", divide="ignore"):
        return (centred * centred).sum(axis=-1) / (n - 1)


def tuned_lambda(y, f, labeled, unlabeled) -> np.ndarray:
    """PPI++'s λ for a mean (module doc), clipped to [0, 1]; 0 when f has
    no variance or a side has fewer than 2 summaries."""
    y, f = np.asarray(y, dtype=np.float64), np.asarray(f, dtype=np.float64)
    labeled, unlabeled = np.asarray(labeled, dtype=bool), np.asarray(unlabeled, dtype=bool)
    k, _, cy = _moments(y, labeled)
    _, _, cf = _moments(f, labeled)
    n_u = unlabeled.sum(axis=-1)
    n_all, _, c_all = _moments(f, labeled | unlabeled)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = (cy * cf).sum(axis=-1) / (k - 1)
        var_all = _variance(c_all, n_all)
        lam = cov / ((1.0 + k / n_u) * var_all)
    ok = (k >= 2) & (n_u >= 2) & (var_all > 0) & np.isfinite(lam)
    return np.where(ok, np.clip(lam, 0.0, 1.0), 0.0)


def mean_interval(y, f, labeled, unlabeled, lam=None, alpha: float = ALPHA) -> MeanInterval:
    """θ̂_λ and its interval over the last axis (module doc): ``y`` human
    scores (read where ``labeled``), ``f`` the measure (read where
    ``labeled`` or ``unlabeled``); ``lam`` a number or array (broadcast
    over the leading axes), None for PPI++'s tuned λ. NaN with fewer than 2
    judged or 2 unjudged summaries."""
    y, f = np.asarray(y, dtype=np.float64), np.asarray(f, dtype=np.float64)
    labeled, unlabeled = np.asarray(labeled, dtype=bool), np.asarray(unlabeled, dtype=bool)
    if np.any(labeled & unlabeled):
        raise ValueError("a summary is judged or not, not both")
    if lam is None:
        lam = tuned_lambda(y, f, labeled, unlabeled)
    lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), labeled.shape[:-1])
    with np.errstate(invalid="ignore"):
        residual = np.where(labeled, y - lam[..., None] * f, 0.0)
    k, mean_r, c_r = _moments(residual, labeled)
    n_u, mean_u, c_u = _moments(np.where(unlabeled, f, 0.0), unlabeled)
    z = z_value(alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = lam * mean_u + mean_r
        se = np.sqrt(lam * lam * _variance(c_u, n_u) / n_u + _variance(c_r, k) / k)
    ok = (k >= 2) & (n_u >= 2)
    estimate = np.where(ok, estimate, math.nan)
    half = np.where(ok, z * se, math.nan)
    return MeanInterval(estimate, estimate - half, estimate + half, np.array(lam))


def classical_interval(y, labeled, alpha: float = ALPHA) -> MeanInterval:
    """The mean of the judged summaries ± z·sd/√k (NaN below 2): λ = 0's
    doubles, computed on its own."""
    y = np.asarray(y, dtype=np.float64)
    labeled = np.asarray(labeled, dtype=bool)
    k, mean, c = _moments(np.where(labeled, y, 0.0), labeled)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(_variance(c, k) / k)
    ok = k >= 2
    estimate = np.where(ok, mean, math.nan)
    half = np.where(ok, z_value(alpha) * se, math.nan)
    return MeanInterval(estimate, estimate - half, estimate + half, np.zeros(estimate.shape))


# ---------------------------------------------------------------------------
# the simulation on a task's judgments
# ---------------------------------------------------------------------------

def stream_labels(task: str, criterion: str, trials: int):
    return [("ppi", str(task), str(criterion), str(r)) for r in range(int(trials))]


def judged_cells(seed: int, task: str, criterion: str, cells, k: int, trials: int,
                 first: int = 0) -> np.ndarray:
    """(trials × topics × systems) bool: trial r's judged cells — each
    system's first k ``cells`` (topics × systems, topics in code-point
    order) in the order of the trial's uniforms (trials first..first +
    trials − 1)."""
    cells = np.asarray(cells, dtype=bool)
    n_t = cells.shape[0]
    labels = [("ppi", str(task), str(criterion), str(r))
              for r in range(int(first), int(first) + int(trials))]
    u = rs.uniforms_many(seed, labels, n_t)
    order = np.argsort(u, axis=1, kind="stable")                  # B × T
    ranked = cells[order]                                         # B × T × S
    keep = ranked & (np.cumsum(ranked, axis=1) <= int(k))
    inverse = np.argsort(order, axis=1, kind="stable")
    return np.take_along_axis(keep, inverse[:, :, None], axis=1)


@dataclass(frozen=True)
class Simulation:
    """Per k (K) and system (S): ``covered`` (K × 3 × S) trials whose
    interval covers the full-data mean, ``width`` and ``width2`` (K × 3 ×
    S) the mean width and mean squared width over trials (methods in
    :data:`METHODS` order), ``lam`` (K × S) PPI++'s mean λ; ``valid`` (K ×
    S) k ≥ 2 and at least 2 cells left unjudged."""

    systems: Tuple[str, ...]
    ks: np.ndarray
    trials: int
    n_cells: np.ndarray
    full_mean: np.ndarray
    covered: np.ndarray
    width: np.ndarray
    width2: np.ndarray
    lam: np.ndarray
    valid: np.ndarray

    @property
    def coverage(self) -> np.ndarray:
        return np.where(self.valid[:, None, :], self.covered / float(self.trials), math.nan)

    @property
    def k_equivalent(self) -> np.ndarray:
        """(K × 3 × S): the classical judgments giving each method's
        variance at k."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.ks[:, None, None] * self.width2[:, :1, :] / self.width2

    @property
    def saved(self) -> np.ndarray:
        """(K × 3 × S): 1 − k / k_eq, the share of judgments saved."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.0 - self.ks[:, None, None] / self.k_equivalent


def simulate(human, auto, ks: Sequence[int], trials: int, seed: int, task: str,
             criterion: str, systems: Optional[Sequence[str]] = None,
             topics: Optional[Sequence[str]] = None, alpha: float = ALPHA) -> Simulation:
    """The simulation of the module doc: ``human`` and ``auto`` (topics ×
    systems, NaN missing; a cell counts where both are finite)."""
    human = np.asarray(human, dtype=np.float64)
    auto = np.asarray(auto, dtype=np.float64)
    if human.shape != auto.shape or human.ndim != 2:
        raise ValueError("human and auto must be (topics × systems) alike")
    n_t, n_s = human.shape
    if topics is None:                 # the rows' order
        order = list(range(n_t))
    else:
        topics = tuple(str(t) for t in topics)
        if len(topics) != n_t or len(set(topics)) != n_t:
            raise ValueError("one distinct topic name per row")
        order = sorted(range(n_t), key=lambda t: topics[t])
    human, auto = human[order], auto[order]
    systems = tuple(str(s) for s in range(n_s)) if systems is None else tuple(systems)
    cells = np.isfinite(human) & np.isfinite(auto)
    n_cells = cells.sum(axis=0)
    # the run's human system score (the exact mean of the cells' readings,
    # rounded once: one double a system, as metric_eval/'s)
    t_idx, s_idx = np.nonzero(cells)
    full = hu.system_means(human[t_idx, s_idx], (t_idx, s_idx), n_s,
                           np.ones((1, n_t), dtype=np.int64), rs.grouped_real_means)[0]
    ks = np.asarray([int(k) for k in ks], dtype=np.int64)
    y = np.ascontiguousarray(np.where(cells, human, 0.0).T)          # S × T
    f = np.ascontiguousarray(np.where(cells, auto, 0.0).T)
    cells_st = np.ascontiguousarray(cells.T)
    shape = (ks.size, len(METHODS), n_s)
    covered = np.zeros(shape, dtype=np.int64)
    widths = np.zeros((ks.size, len(METHODS), n_s, int(trials)))
    lams = np.zeros((ks.size, n_s, int(trials)))
    for row, k in enumerate(ks):
        for first in range(0, int(trials), _BLOCK):
            count = min(_BLOCK, int(trials) - first)
            judged = judged_cells(seed, task, criterion, cells, int(k), count, first)
            labeled = np.ascontiguousarray(judged.transpose(0, 2, 1))   # B × S × T
            unlabeled = cells_st[None] & ~labeled
            yb = np.broadcast_to(y, labeled.shape)
            fb = np.broadcast_to(f, labeled.shape)
            results = (classical_interval(yb, labeled, alpha),
                       mean_interval(yb, fb, labeled, unlabeled, 1.0, alpha),
                       mean_interval(yb, fb, labeled, unlabeled, None, alpha))
            for m, res in enumerate(results):
                covered[row, m] += np.sum((res.low <= full) & (full <= res.high), axis=0)
                widths[row, m, :, first:first + count] = res.width.T
            lams[row, :, first:first + count] = results[2].lam.T
    valid = (ks[:, None] >= 2) & (n_cells[None, :] - ks[:, None] >= 2)
    width = np.where(valid[:, None, :], rs.real_means(widths), math.nan)
    width2 = np.where(valid[:, None, :], rs.real_means(widths * widths), math.nan)
    lam = np.where(valid, rs.real_means(lams), math.nan)
    return Simulation(systems, ks, int(trials), n_cells, full, covered, width, width2, lam,
                      valid)
