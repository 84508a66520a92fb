"""QUEEN (SPEC §3) of one topic for many metric sets at once, as integer
counts (pure numpy; the QARLA stage runs it on every topic of the cube).

QUEEN_{X,M}(e) is the share of e's samples (e, m, m', m'') whose pass-mask
contains X (:mod:`~qarla_spark.measures.masks`). :func:`topic_counts` counts,
for every set, the passing samples of each summary, and of each (peer,
held-out model h) the passing samples whose triple contains h; so

- QUEEN_{X,M}(a) = pass_e[a] / n_e[a] (every peer, all models);
- QUEEN_{X,M∖{h}}(a) = (pass_e[a] − pass_eh[a, h]) / (n_e[a] − n_eh[a, h]);
- QUEEN_{X,M∖{h}}(h) = pass_e[h] / n_e[h] (a model's own samples never
  contain it).

:class:`QueenCounts` holds these numerators and denominators; every later
quantity (KING's cases, system scores, the human-summariser test) compares
or averages them exactly (:mod:`~qarla_spark.measures.exact`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from qarla_spark import thresholds
from qarla_spark.measures.masks import n_words, pack, set_indices, topic_samples
from qarla_spark.measures.masks import set_words as set_words_of


def _set_indices(words: np.ndarray):
    """:func:`~qarla_spark.measures.masks.set_indices`, remembered for the
    last families (every topic of a round asks for the same sets)."""
    return _plan(words, None, False).indices


class _Plan(NamedTuple):
    """What :func:`topic_counts` derives from a family's mask words alone:
    the sets' metric ``indices`` (increasing), the metrics they ``use``
    (sorted, in the cube's order), and — when the counts read only those
    metrics (``restricted``) — the sets' indices and mask words over them;
    ``codes``: each set's bit code over ``used`` (the zeta method's; None
    beyond :data:`ZETA_MAX_BITS` metrics)."""

    indices: list
    used: list
    restricted: bool
    set_words: np.ndarray
    codes: Optional[np.ndarray]


def _plan(set_words: np.ndarray, n_metrics: Optional[int], restrict: bool) -> _Plan:
    """The :class:`_Plan` of a family (``restrict``: the counts may read the
    sets' metrics only, of ``n_metrics``), remembered per Python worker for
    the last :data:`_PLANS_KEPT` families: every topic of a round asks for
    its task's family, and a partition holds every task's topics (made
    once, not once per topic: 1,023 subsets cost ~10 ms)."""
    key = (set_words.shape, set_words.tobytes(), n_metrics, restrict)
    found = _PLANS.get(key)
    if found is not None:
        return found
    indices = set_indices(set_words)
    used = sorted({i for idx in indices for i in idx})
    restricted = bool(restrict and used and len(used) < n_metrics)
    if restricted:
        pos = {i: j for j, i in enumerate(used)}
        indices = [[pos[i] for i in idx] for idx in indices]
        set_words = np.asarray([set_words_of(idx, len(used)) for idx in indices],
                               dtype=np.int64).reshape(len(indices), -1)
        bits = list(range(len(used)))
    else:
        bits = used
    codes = None
    if len(bits) <= ZETA_MAX_BITS:
        pos = {i: j for j, i in enumerate(bits)}
        codes = np.array([sum(1 << pos[i] for i in idx) for idx in indices], dtype=np.int64)
    found = _Plan(indices, used, restricted, set_words, codes)
    if len(_PLANS) >= _PLANS_KEPT:
        _PLANS.pop(next(iter(_PLANS)))          # the oldest
    _PLANS[key] = found
    return found


_PLANS: dict = {}
#: families remembered by :func:`_plan` (a run's tasks' subsets: ~100 KB each)
_PLANS_KEPT = 256

#: the one-pass ("zeta") method handles families of sets whose metrics number
#: at most this (2^12 mask counts per summary and held-out model).
ZETA_MAX_BITS = 12
METHODS = ("auto", "direct", "zeta")


def superset_sums(hist):
    """F[..., S] = Σ_{T ⊇ S} hist[..., T] over the last axis (length 2^u),
    the zeta transform: u passes of additions (a new array)."""
    out = np.array(hist, copy=True)
    size = out.shape[-1]
    u = size.bit_length() - 1
    lead = out.shape[:-1]
    for j in range(u):
        view = out.reshape(*lead, size >> (j + 1), 2, 1 << j)
        view[..., 0, :] += view[..., 1, :]
    return out


def _contains(n: int, models: np.ndarray, m, m1, m2) -> np.ndarray:
    """(|M| × samples) boolean: row h marks the samples (e, m, m', m'')
    whose triple holds model ``models[h]`` (one scatter of m, m', m'')."""
    at = np.full(n, len(models), dtype=np.int64)
    at[models] = np.arange(len(models))
    out = np.zeros((len(models) + 1, len(m)), dtype=bool)
    cols = np.arange(len(m))
    for x in (m, m1, m2):
        out[at[x], cols] = True
    return out[:len(models)]


def _model_sample_counts(e, contains, n: int) -> np.ndarray:
    """(n × |M|) int64: the samples of each summary whose triple holds each
    model (``contains``: :func:`_contains`) — a bincount of ``e`` per
    model, or, the samples by summary (as topic_samples gives them), one
    sum of each summary's segment of every model's row (np.add.reduceat:
    the same integers, ~2x faster: KING's chance pool counts 100 random
    topics of 42,900 samples per shape, issue 36)."""
    if len(e) < 2 or not bool((e[1:] >= e[:-1]).all()) or e[0] < 0 or e[-1] >= n:
        return np.stack([np.bincount(e[c], minlength=n) for c in contains], axis=1)
    bounds = np.searchsorted(e, np.arange(n + 1))
    starts = bounds[:-1]
    # (the last summaries without samples start at len(e): left out, their
    # counts 0; a segment ends where the next one starts, or at the end)
    inside = starts < len(e)
    sums = np.zeros((contains.shape[0], n), dtype=np.int64)
    sums[:, inside] = np.add.reduceat(contains, starts[inside], axis=1, dtype=np.int64)
    sums[:, starts == bounds[1:]] = 0                   # summaries without samples
    return np.ascontiguousarray(sums.T)


def topic_counts(roles, values, set_words, triples: str = "standard", method: str = "auto",
                 samples=None):
    """Integer counts behind QUEEN for one topic and every metric set.

    Returns ``peers``, ``models`` (summary indices) and

    - ``n_e`` (n_summaries): samples of each summary e (full model set);
    - ``pass_e`` (n_summaries × n_sets): those whose mask contains the set;
    - ``n_eh`` (|A| × |M|), ``pass_eh`` (|A| × |M| × n_sets): the same
      restricted to the peer's samples whose triple contains model h.

    ``method``: ``direct`` tests every sample against every set;
    ``zeta`` (SPEC §6's one pass) counts each summary's samples per distinct
    mask restricted to the metrics the sets use, then sums over supersets
    (needs at most :data:`ZETA_MAX_BITS` such metrics); ``auto`` picks zeta
    when it applies and the sets are many. Both give identical counts.
    """
    roles = np.asarray(roles)
    peers = np.flatnonzero(roles == "peer")
    models = np.flatnonzero(roles == "model")
    n = len(roles)
    words = None
    n_sets = len(set_words)
    set_words = np.asarray(set_words, dtype=np.int64).reshape(n_sets, -1) if n_sets \
        else np.zeros((0, n_words(values.shape[2])), dtype=np.int64)
    plan = _plan(set_words, values.shape[2], samples is None)
    indices, used = plan.indices, plan.used
    if plan.restricted:
        # the sets' metrics only: the samples' tests of the other metrics
        # would count for nothing (the first round's singles use them all)
        set_words = plan.set_words
        values = values[:, :, used]
        used = list(range(len(used)))
    if samples is None:
        samples = topic_samples(roles, values, triples)
    e, m, m1, m2, passes = samples
    if method == "auto":
        method = "zeta" if len(used) <= ZETA_MAX_BITS and n_sets > 2 * len(used) else "direct"
    if method not in ("direct", "zeta"):
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    contains = _contains(n, models, m, m1, m2)
    n_e = np.bincount(e, minlength=n).astype(np.int64)
    n_eh = _model_sample_counts(e, contains, n)[peers] \
        if len(models) else np.zeros((len(peers), 0), dtype=np.int64)
    if method == "zeta":
        if len(used) > ZETA_MAX_BITS:
            raise ValueError(f"the zeta method handles at most {ZETA_MAX_BITS} metrics, "
                             f"these sets use {len(used)}")
        u = len(used)
        code = np.zeros(len(e), dtype=np.int64)
        for j, i in enumerate(used):          # bit j: metric used[j] passes
            code |= passes[:, i].astype(np.int64) << j
        size = 1 << u
        full = superset_sums(np.bincount(e * size + code, minlength=n * size).reshape(n, size))
        key = e * size + code
        with_h = np.stack([np.bincount(key[c], minlength=n * size)
                           .reshape(n, size)[peers] for c in contains], axis=1) \
            if len(models) else np.zeros((len(peers), 0, size), dtype=np.int64)
        with_h = superset_sums(with_h)
        codes = plan.codes
        return {"peers": peers, "models": models, "n_e": n_e, "pass_e": full[:, codes],
                "n_eh": n_eh, "pass_eh": with_h[:, :, codes]}
    pass_e = np.zeros((n, n_sets), dtype=np.int64)
    pass_eh = np.zeros((len(peers), len(models), n_sets), dtype=np.int64)
    # the samples by summary (topic_samples gives them so: no reordering)
    order = None if len(e) < 2 or bool((e[1:] >= e[:-1]).all()) \
        else np.argsort(e, kind="stable")
    bounds = np.searchsorted(e if order is None else e[order], np.arange(n + 1))
    peer_pos = {int(a): k for k, a in enumerate(peers)}
    singles = all(len(idx) == 1 for idx in indices)
    for lo_set in range(0, n_sets, 256):   # memory ~ samples × 256 whatever n_sets
        block = set_words[lo_set:lo_set + 256]
        if singles:       # a set of one metric: its samples' pass bits themselves
            ok = passes[:, [idx[0] for idx in indices[lo_set:lo_set + 256]]]
        else:
            if words is None:
                words = pack(passes)
            ok = np.ones((len(e), len(block)), dtype=bool)
            for w in range(block.shape[1]):
                x = block[:, w][None, :]
                ok &= (words[:, w][:, None] & x) == x
        if order is not None:
            ok = ok[order]
        if len(e) and bounds[-2] >= len(e):    # the last summaries have no sample
            ok = np.vstack([ok, np.zeros((1, ok.shape[1]), dtype=bool)])
        sums = np.add.reduceat(ok, bounds[:-1], axis=0, dtype=np.int64) if len(e) \
            else np.zeros((n, len(block)), dtype=np.int64)
        sums[bounds[:-1] == bounds[1:]] = 0          # summaries without samples
        pass_e[:, lo_set:lo_set + 256] = sums
        for a, k in peer_pos.items():
            rows = slice(bounds[a], bounds[a + 1]) if order is None \
                else order[bounds[a]:bounds[a + 1]]
            pass_eh[k, :, lo_set:lo_set + 256] = (contains[:, rows].astype(np.float64)
                                                  @ ok[bounds[a]:bounds[a + 1]]
                                                  .astype(np.float64)).astype(np.int64)
    return {"peers": peers, "models": models, "n_e": n_e, "pass_e": pass_e,
            "n_eh": n_eh, "pass_eh": pass_eh}


@dataclass(frozen=True)
class QueenCounts:
    """QUEEN of one topic for every set, as numerators and denominators.

    ``full_num`` (|A| × n_sets) / ``full_den`` (|A|): QUEEN_{X,M}(a) of every
    peer. With |M| ≥ :data:`~thresholds.MIN_MODELS_JACKKNIFE` (else None):
    ``jk_num`` (|A| × |M| × n_sets) / ``jk_den`` (|A| × |M|):
    QUEEN_{X,M∖{h}}(a); ``own_num`` (|M| × n_sets) / ``own_den`` (|M|):
    QUEEN_{X,M∖{h}}(h)."""

    peers: np.ndarray
    models: np.ndarray
    full_num: np.ndarray
    full_den: np.ndarray
    jk_num: Optional[np.ndarray] = None
    jk_den: Optional[np.ndarray] = None
    own_num: Optional[np.ndarray] = None
    own_den: Optional[np.ndarray] = None

    @property
    def jackknifed(self) -> bool:
        return self.jk_num is not None


def queen_counts(roles, values, set_words, triples: str = "standard",
                 method: str = "auto", samples=None) -> Optional[QueenCounts]:
    """:class:`QueenCounts` of one topic (None when it has fewer than
    :data:`~thresholds.MIN_MODELS_QUEEN` models)."""
    roles = np.asarray(roles)
    models = np.flatnonzero(roles == "model")
    if not thresholds.queen_defined(len(models)):
        return None
    c = topic_counts(roles, values, set_words, triples, method, samples)
    peers = c["peers"]
    out = dict(peers=peers, models=models, full_num=c["pass_e"][peers],
               full_den=c["n_e"][peers])
    if len(models) >= thresholds.MIN_MODELS_JACKKNIFE:
        out.update(jk_num=c["pass_e"][peers][:, None, :] - c["pass_eh"],
                   jk_den=c["n_e"][peers][:, None] - c["n_eh"],
                   own_num=c["pass_e"][models], own_den=c["n_e"][models])
    return QueenCounts(**out)


def king_cases(q: QueenCounts):
    """KING's and ORANGE's cases of one topic, for every set, compared
    exactly (cross-multiplied integers): ``win`` (n_sets) = held-out models
    h with QUEEN_{M∖{h}}(h) > QUEEN_{M∖{h}}(a) for every peer a; ``n_le``
    (n_sets) = (h, a) with QUEEN_{M∖{h}}(a) ≤ QUEEN_{M∖{h}}(h). None when the
    topic does not enter KING (too few models or no peer)."""
    if not q.jackknifed or not thresholds.king_defined(len(q.models), len(q.peers)):
        return None
    # peer side a/b vs model side c/d: compare a·d with c·b (all positive dens)
    peer_side = q.jk_num * q.own_den[None, :, None]             # A × M × S
    model_side = q.own_num[None, :, :] * q.jk_den[:, :, None]   # A × M × S
    win = (model_side > peer_side).all(axis=0).sum(axis=0)
    n_le = (peer_side <= model_side).sum(axis=(0, 1))
    return win.astype(np.int64), n_le.astype(np.int64)
