"""ROUGE of SPEC §2 for every pair of a topic, from sufficient statistics (no Spark).

For one variant (``a``, ``b`` or ``c``) of a topic's summaries, each
prepared once as a :class:`~qarla_spark.metrics.rouge_profiles.RougeProfile`,
:func:`topic_counts` returns, for each requested kind of ``1 2 3 4 S4 SU4 L
W-1.2``, the hits of every ordered pair and the denominator of every
summary: ``hits[kind][i, j]`` is the hit of R(i, j), the recall of ``j``'s
units (``j`` the single model / reference), whose denominator is
``dens[kind][j]``; Rpre(s, r) is R(r, s) (SPEC §2). Scores are computed
from these counts afterwards (sacrebleu style, :func:`recall`), so the
counts can be checked one by one against ROUGE-1.5.5's ``-t 2`` raw output.

What is computed, kind by kind, and how it relates to ROUGE-1.5.5
(``ROUGE-1.5.5.pl -n 4 -w 1.2 -2 4 -U -f A`` with one model):

``1``..``4``
    n-grams of the whole token sequence (sentence boundaries are crossed, as
    ROUGE-1.5.5's ``readText`` joins the sentences); hits = Σ min(count in s,
    count in r) (``ngramScore``); denominator = number of n-grams of ``r``.
    The hits are symmetric, so one intersection yields both directions
    (:func:`gram_hits`, for all pairs of the topic at once).
``S4``
    skip-bigrams: ordered token pairs with at most 4 tokens in between
    (``createSkipBigram`` with ``-2 4``), counted like n-grams.
``SU4``
    S4 units plus the unigrams of every token. **Departs from ROUGE-1.5.5**,
    which adds the unigram of every token but the last one (its loop stops
    at ``$#m_tokens - 1``); SPEC §2 does not copy that defect. Hence
    hits(SU4) = hits(S4) + hits(1) and units(SU4) = units(S4) + units(1).
``L``
    ROUGE-1.5.5's summary-level union LCS (``lcs``/``lcs_inner``/``markLCS``,
    :mod:`qarla_spark.metrics.rouge_lcs`): for each sentence of the model
    ``r``, the positions of that sentence on the LCS path against every
    sentence of ``s`` are unioned; the path is the one ROUGE-1.5.5's
    backtrack takes (diagonal on equal tokens, else up when ``c[i-1][j] >=
    c[i][j-1]``, else left). The marked tokens are then counted in sentence
    and position order, each only while its remaining unigram count in both
    texts is positive (ROUGE 1.4.1's clip). Denominator = tokens of ``r``.
``W-1.2``
    The same with ROUGE-1.5.5's weighted LCS (``wlcs``/``wlcs_inner``,
    f(k) = k^1.2): the DP value of a match is ``(c[i-1][j-1] + f(k+1)) - f(k)``
    (in that order, as Perl evaluates it, so ties resolve identically), the
    hit positions come from that DP's backtrack, and the hit is accumulated
    exactly as ROUGE-1.5.5 does: walking a model sentence, a kept hit extends
    the current run, and f(run length) is added when the next position is not
    marked or the sentence ends. (So a marked position whose clip fails
    neither extends nor ends a run, and a run still open when the sentence
    ends on clipped positions is lost -- ROUGE-1.5.5's behaviour, kept.)
    Denominator = Σ_i f(|r_i|) over the sentences of ``r``; the score is
    f⁻¹(hit / denominator). **Departs from ROUGE-1.5.5**, which applies f to
    that denominator a second time in ``computeWLCSScore`` (so identical
    texts score below 1); SPEC §2 does not copy that. W's hits and
    denominators are floats (sums of k^1.2), the only non-integer counts.

An empty side scores 0 (SPEC §2): a zero denominator gives 0. (ROUGE-1.5.5
dies with a division by zero on W when the model has no token left.)
"""

from __future__ import annotations

from typing import Dict, Iterable, NamedTuple, Sequence

import numpy as np

from qarla_spark.metrics import rouge_lcs
from qarla_spark.metrics.rouge_profiles import (GRAM_KINDS, SKIP_DISTANCE, W_WEIGHT, RougeProfile,
                                               TopicCodes, topic_codes)


class TopicCounts(NamedTuple):
    """Sufficient statistics of one variant of a topic, per kind:
    ``hits[kind][i, j]`` is the hit of R(i, j) and ``dens[kind][j]`` its
    denominator (the units of ``j``). W's are floats, the others integers
    (held exactly in float64)."""

    hits: Dict[str, np.ndarray]
    dens: Dict[str, np.ndarray]


def topic_counts(profs: Sequence[RougeProfile], kinds: Iterable[str]) -> TopicCounts:
    """Hits and denominators of ``kinds`` (SU4 brings 1 and S4 along) for
    every ordered pair of ``profs``."""
    kinds = set(kinds)
    codes = topic_codes(profs)
    grams = [kind for kind in GRAM_KINDS
             if kind in kinds or (kind in ("1", "S4") and "SU4" in kinds)]
    hits: Dict[str, np.ndarray] = gram_hits(codes, grams)
    dens: Dict[str, np.ndarray] = {
        kind: np.array([p.units[GRAM_KINDS.index(kind)] for p in profs], dtype=np.float64)
        for kind in grams}
    if "SU4" in kinds:
        hits["SU4"] = hits["S4"] + hits["1"]
        dens["SU4"] = dens["S4"] + dens["1"]
    if kinds & {"L", "W-1.2"}:
        lcs, wlcs = rouge_lcs.topic_lcs(profs, codes)
        hits["L"] = lcs
        dens["L"] = np.array([p.n_tokens for p in profs], dtype=np.float64)
        hits["W-1.2"] = wlcs
        dens["W-1.2"] = np.array([p.w_base for p in profs], dtype=np.float64)
    return TopicCounts(hits, dens)


def gram_hits(topic: TopicCodes, kinds: Sequence[str]) -> Dict[str, np.ndarray]:
    """``H[i, j] = Σ_g min(count of g in i, count of g in j)`` over the
    n-grams ``g`` of each kind of ``kinds`` (of :data:`GRAM_KINDS`), for every
    pair of the topic's summaries at once, from its token codes.

    Each n-gram of every summary is numbered in one pass over the topic
    (:func:`_gram_ids`; an n-gram never spans two summaries); then
    :func:`_shared_hits` counts them. Exact: integers below 2^53 in float64.
    """
    n = len(topic.offsets) - 1
    lengths = np.diff(topic.offsets)
    owner = np.repeat(np.arange(n), lengths)
    end = np.repeat(topic.offsets[1:], lengths)  # end of each token's summary
    out: Dict[str, np.ndarray] = {}
    for kind in kinds:
        owners, ids = _gram_ids(topic, kind, owner, end)
        out[kind] = _shared_hits(owners, ids, n)
    return out


def _gram_ids(topic: TopicCodes, kind: str, owner: np.ndarray, end: np.ndarray):
    """(summary, n-gram number) of every n-gram of ``kind`` of the topic:
    n-grams of ``order`` tokens start at each position with ``order - 1``
    tokens after it in its summary; S4 pairs a token with each of the next
    :data:`SKIP_DISTANCE` + 1 tokens of its summary (``createSkipBigram``)."""
    codes, size = topic.codes, max(topic.size, 1)
    pos = np.arange(len(codes))
    if kind == "S4":
        starts = [pos[pos + gap < end] for gap in range(1, SKIP_DISTANCE + 2)]
        keys = np.concatenate([codes[p] * size + codes[p + gap]
                               for gap, p in enumerate(starts, start=1)])
        return owner[np.concatenate(starts)], np.unique(keys, return_inverse=True)[1]
    ids, starts = codes, pos
    for order in range(2, int(kind) + 1):  # an n-gram = its (n-1)-gram's number, a code
        starts = pos[pos + order - 1 < end]
        keys = ids[starts] * size + codes[starts + order - 1]
        ids = np.zeros(len(codes), dtype=np.int64)
        ids[starts] = np.unique(keys, return_inverse=True)[1]
    return owner[starts], ids[starts]


def _shared_hits(owners: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    """``H[i, j] = Σ_g min(c_i[g], c_j[g])`` for the occurrences (``owners[k]``
    holds n-gram ``ids[k]``). Only n-grams of at least two summaries reach
    the counts matrix (the others add to the diagonal alone, which is each
    summary's total); min(a, b) = Σ_{t≥1} [a ≥ t][b ≥ t], so H = Σ_t B_t B_tᵀ
    with B_t the 0/1 matrix "count ≥ t": a few small matrix products."""
    hits = np.zeros((n, n))
    if len(ids):
        pairs, counts = np.unique(ids * n + owners, return_counts=True)
        gram, summary = np.divmod(pairs, n)
        shared = np.bincount(gram)[gram] >= 2
        if shared.any():
            columns = np.unique(gram[shared], return_inverse=True)[1]
            matrix = np.zeros((n, int(columns.max()) + 1), dtype=np.int32)
            matrix[summary[shared], columns] = counts[shared]
            for t in range(1, int(matrix.max()) + 1):
                layer = (matrix >= t).astype(np.float64)
                hits += layer @ layer.T
    np.fill_diagonal(hits, np.bincount(owners, minlength=n))
    return hits


def recall(counts: TopicCounts, kind: str, s_idx: np.ndarray, r_idx: np.ndarray) -> np.ndarray:
    """R(s, r) of ``kind`` for the pairs ``(s_idx[k], r_idx[k])``: hit / r's
    units, 0 when r has none; for W, f⁻¹ of that ratio, f⁻¹(x) = x ** (1 / 1.2)
    with Python's pow (numpy's vectorised pow may differ in the last bit).
    Rpre(s, r) is ``recall(counts, kind, r_idx, s_idx)``."""
    den = counts.dens[kind][r_idx]
    safe = np.where(den > 0, den, 1)
    ratio = np.where(den > 0, counts.hits[kind][s_idx, r_idx] / safe, 0.0)
    if kind != "W-1.2":
        return ratio
    inv = 1.0 / W_WEIGHT
    return np.array([x ** inv for x in ratio.tolist()])
