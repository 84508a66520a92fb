"""Heterogeneity-Based Ranking (SPEC §8, paper 001).

Measures are evaluation scores of a summary against its topic's models:
x(s) = mean (option: max) over the models m ≠ s of x(s, m) — a model is
thus scored against the other models (jackknifed). Peers only, unless
models are asked for.

Heterogeneity of a measure set S, over ordered pairs (u, u') of summaries of
the same topic: with G = {x: x(u) > x(u')} and L = {x: x(u) < x(u')},

    H(S) = P( S ∩ G ≠ ∅  and  S ∩ L ≠ ∅ ),

estimated on a seeded sample of pairs (default 10,000, paper 001 §5.1), or
exactly on all of them; the standard error of a sampled estimate is
sqrt(H(1 − H)/n) (0 when exact). Then

    HBR_X(s) = mean over s' ≠ s of the same topic of H({x ∈ X: x(s) ≥ x(s')}),

and {x: x(s) ≥ x(s')} = X ∖ L(s, s'): the sets HBR needs are the complements
of the pairs' L masks. Masks are arrays of 63-bit words, as in QUEEN.

The pure kernels are here; :mod:`qarla_spark.stages.hbr` runs them over the
topic cube (each summary's scores and each ordered pair's G and L masks per
topic, the seeded sample, H of every needed set, HBR as an exact mean).
"""

from __future__ import annotations

from typing import List, Sequence

import numpy as np

from qarla_spark.errors import ConfigError
from qarla_spark.measures.masks import pack, set_words

AGGREGATES = ("mean", "max")
DEFAULT_PAIRS = 10_000


# ---------------------------------------------------------------------------
# pure kernels
# ---------------------------------------------------------------------------

def topic_scores(roles, values, measures: Sequence[int], aggregate: str = "mean",
                 models: bool = False):
    """(summary indices, scores): scores[k, j] = x_j(s_k), the aggregate over
    the topic's models m ≠ s_k of values[s_k, m, measures[j]]; summaries are
    the peers (and the models if ``models``), in index order."""
    roles = np.asarray(roles)
    model_idx = np.flatnonzero(roles == "model")
    who = np.flatnonzero((roles == "peer") | ((roles == "model") & models))
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    v = values[np.ix_(who, model_idx, np.asarray(measures, dtype=np.int64))]  # S × M × X
    # the diagonal (a model against itself) is NaN in the cube: excluded
    import warnings
    with warnings.catch_warnings():   # a topic's only model scored against no one: NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.nanmean(v, axis=1) if aggregate == "mean" else np.nanmax(v, axis=1)
    return who, out


def pair_masks(scores):
    """For every ordered pair (i, j), i ≠ j, of rows of ``scores``: indices
    and the packed masks G = {x: x_i > x_j}, L = {x: x_i < x_j}."""
    n = len(scores)
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return i, j, pack(scores[i] > scores[j]), pack(scores[i] < scores[j])


def complement(words, n_measures: int) -> np.ndarray:
    """X ∖ S for mask words over ``n_measures`` measures."""
    full = np.asarray(set_words(range(n_measures), n_measures), dtype=np.int64)
    return np.asarray(words, dtype=np.int64) ^ full[None, :]


def split_counts(sets, g, l, weights) -> np.ndarray:
    """Σ weights (integers: how many pairs share a (G, L)) over the pairs
    (rows of g, l) that S splits (S ∩ G ≠ ∅ and S ∩ L ≠ ∅), for each row S
    of ``sets`` (all mask words); an int64 count. (A float64 product, exact
    below 2^53 pairs, is much faster than an integer one.)"""
    sets = np.asarray(sets, dtype=np.int64)
    g, l = np.asarray(g, dtype=np.int64), np.asarray(l, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64).astype(np.float64)
    out = np.zeros(len(sets), dtype=np.int64)
    for lo in range(0, len(sets), 512):
        block = sets[lo:lo + 512]
        hit_g = np.zeros((len(block), len(g)), dtype=bool)
        hit_l = np.zeros((len(block), len(g)), dtype=bool)
        for w in range(sets.shape[1]):
            hit_g |= (block[:, w][:, None] & g[:, w][None, :]) != 0
            hit_l |= (block[:, w][:, None] & l[:, w][None, :]) != 0
        out[lo:lo + 512] = np.rint((hit_g & hit_l) @ weights).astype(np.int64)
    return out


def hbr_measures(metrics: Sequence[str], chosen=None) -> List[str]:
    """The measure set: ``chosen`` (names or patterns, resolved against the
    similarity table's metrics) or, by default, the R, Rpre and F variants
    present plus every metric that is not built in (bring-your-own)."""
    from fnmatch import fnmatch

    from qarla_spark.metrics import registry
    metrics = list(metrics)
    if chosen:
        out: List[str] = []
        for item in registry.split_names(chosen):
            found = [m for m in metrics if fnmatch(m, item)]
            if not found:
                raise ConfigError(f"--hbr-measures: {item!r} matches no metric of the "
                                  "similarity table")
            out += [m for m in found if m not in out]
        return out
    keep = [m for m in metrics
            if m not in registry.BUILTIN or registry.BUILTIN[m].family in ("rouge", "f")]
    if not keep:
        raise ConfigError("no HBR measure: the similarity table has no R, Rpre or F metric "
                          "(choose some with --hbr-measures)")
    return keep
