"""The numba backend of :func:`qarla_spark.metrics.rouge_lcs.topic_lcs`.

The compiled twins of the pure-Python functions of
:mod:`qarla_spark.metrics.rouge_lcs` (same operations in the same order, so
the same hits, W's floats included), run on int64 token codes: one call per
topic computes every pair. Importing this module fails with
:class:`ImportError` when numba is missing; :mod:`~qarla_spark.metrics.rouge_lcs`
then falls back to pure Python.
"""

from __future__ import annotations

from typing import Sequence, Tuple

import numba  # noqa: F401  (without numba: ImportError, the pure-Python backend)
import numpy as np

from qarla_spark.compiled import compiled
from qarla_spark.metrics.rouge_profiles import RougeProfile, TopicCodes, weights


def topic_lcs(profs: Sequence[RougeProfile], topic: TopicCodes) -> Tuple[np.ndarray, np.ndarray]:
    """``(lcs, wlcs)`` of every ordered pair of ``profs`` (the fields of
    :class:`~qarla_spark.metrics.rouge_lcs.LcsHits`), in one compiled call on
    the topic's token codes."""
    codes, tok_off = topic.codes, topic.offsets
    n_starts = [len(p.starts) for p in profs]
    starts = np.fromiter((s for p in profs for s in p.starts), dtype=np.int64,
                         count=sum(n_starts))
    start_off = np.cumsum([0] + n_starts, dtype=np.int64)
    longest = max((p.max_len for p in profs), default=0)
    f = np.array(weights(longest + 1), dtype=np.float64)
    n = len(profs)
    lcs = np.zeros((n, n))
    wlcs = np.zeros((n, n))
    _topic_kernel(codes, tok_off, starts, start_off, f, longest,
                  max((p.n_tokens for p in profs), default=0), max(topic.size, 1), lcs, wlcs)
    return lcs, wlcs


@compiled
def _lcs_masks_kernel(xt, xoff, yt, yoff, f, L, W, K, l_x, w_x, l_y, w_y):  # pragma: no cover
    """Compiled twin of :func:`qarla_spark.metrics.rouge_lcs._union_masks` for
    the model ``x`` and the peer ``y`` (same operations, same order). ``L``,
    ``W``, ``K`` are the topic's tables, sized for its longest sentence: each
    sentence pair fills their top-left corner, reading only cells it wrote
    or row and column 0, which stay 0."""
    for a in range(len(xoff) - 1):
        x = xt[xoff[a]:xoff[a + 1]]
        for b in range(len(yoff) - 1):
            y = yt[yoff[b]:yoff[b + 1]]
            if not _tables(x, y, f, L, W, K):
                continue  # no equal tokens: nothing marked
            _mark_rows_model(L, x, y, l_x, xoff[a])
            _mark_columns_model(L, x, y, l_y, yoff[b])
            _mark_rows_model(W, x, y, w_x, xoff[a])
            _mark_columns_model(W, x, y, w_y, yoff[b])


@compiled
def _tables(x, y, f, L, W, K):  # pragma: no cover
    """Compiled twin of :func:`qarla_spark.metrics.rouge_lcs._tables`, in the
    top-left corner of ``L``, ``W`` (and ``K``, the run lengths); False when
    no token of ``x`` equals one of ``y``."""
    found = False
    for i in range(1, len(x) + 1):
        xi = x[i - 1]
        for j in range(1, len(y) + 1):
            if y[j - 1] == xi:
                found = True
                L[i, j] = L[i - 1, j - 1] + 1
                k = K[i - 1, j - 1]
                W[i, j] = (W[i - 1, j - 1] + f[k + 1]) - f[k]
                K[i, j] = k + 1
            else:
                K[i, j] = 0
                if L[i - 1, j] >= L[i, j - 1]:
                    L[i, j] = L[i - 1, j]
                else:
                    L[i, j] = L[i, j - 1]
                if W[i - 1, j] >= W[i, j - 1]:
                    W[i, j] = W[i - 1, j]
                else:
                    W[i, j] = W[i, j - 1]
    return found


@compiled
def _mark_rows_model(T, x, y, mask, x0):  # pragma: no cover
    """Compiled twin of :func:`qarla_spark.metrics.rouge_lcs._mark_rows_model`."""
    i, j = len(x), len(y)
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            i -= 1
            j -= 1
            mask[x0 + i] = 1
        elif T[i - 1, j] >= T[i, j - 1]:
            i -= 1
        else:
            j -= 1


@compiled
def _mark_columns_model(T, x, y, mask, y0):  # pragma: no cover
    """Compiled twin of :func:`qarla_spark.metrics.rouge_lcs._mark_columns_model`."""
    i, j = len(x), len(y)
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            i -= 1
            j -= 1
            mask[y0 + j] = 1
        elif T[i, j - 1] >= T[i - 1, j]:
            j -= 1
        else:
            i -= 1


@compiled
def _clip_kernel(xt, xoff, mask_l, mask_w, yt, f, peer, marked, used):  # pragma: no cover
    """Compiled twin of :func:`~qarla_spark.metrics.rouge_lcs._clip_l` and
    :func:`~qarla_spark.metrics.rouge_lcs._clip_w` for the model ``x`` (codes
    ``xt``, sentence offsets ``xoff``) against the peer ``yt``. The counts
    per token (``peer``, ``marked``, ``used``) are arrays indexed by token
    code, all 0 on entry and left all 0 on return; L's hit is a sum of
    integers (its order does not matter), W's is accumulated in position
    order as in Python."""
    for c in yt:
        peer[c] += 1
    for p in range(len(xt)):
        if mask_l[p]:
            marked[xt[p]] += 1
    l_hit = 0
    for p in range(len(xt)):  # each marked token once: its count is reset after use
        c = xt[p]
        k = marked[c]
        if k:
            q = peer[c]
            l_hit += k if k < q else q
            marked[c] = 0
    w_hit = 0.0
    for a in range(len(xoff) - 1):
        end = xoff[a + 1]
        run = 0
        for p in range(xoff[a], end):
            if not mask_w[p]:
                continue
            c = xt[p]
            u = used[c]
            if u < peer[c]:
                used[c] = u + 1
                run += 1
                if p + 1 < end:
                    if not mask_w[p + 1]:
                        w_hit += f[run]
                        run = 0
                else:
                    w_hit += f[run]
                    run = 0
    for c in yt:
        peer[c] = 0
    for c in xt:
        used[c] = 0
    return l_hit, w_hit


@compiled
def _topic_kernel(codes, tok_off, starts, start_off, f, longest, max_tokens, vocabulary,
                  lcs, wlcs):  # pragma: no cover
    """Compiled twin of :func:`qarla_spark.metrics.rouge_lcs.topic_lcs_python`
    on the concatenated codes (in ``range(vocabulary)``) and sentence offsets
    of a topic (no Python work per pair); fills ``lcs`` and ``wlcs``. The
    tables (for sentences of up to ``longest`` tokens), masks (summaries of
    up to ``max_tokens``) and counts are allocated once per topic."""
    n = len(tok_off) - 1
    L = np.zeros((longest + 1, longest + 1), np.int64)
    W = np.zeros((longest + 1, longest + 1), np.float64)
    K = np.zeros((longest + 1, longest + 1), np.int64)
    masks = np.zeros((4, max_tokens), np.uint8)
    peer = np.zeros(vocabulary, np.int64)
    marked = np.zeros(vocabulary, np.int64)
    used = np.zeros(vocabulary, np.int64)
    for i in range(n):
        yt = codes[tok_off[i]:tok_off[i + 1]]
        yoff = starts[start_off[i]:start_off[i + 1]]
        if len(yt) == 0:
            continue
        for j in range(i + 1, n):
            xt = codes[tok_off[j]:tok_off[j + 1]]
            xoff = starts[start_off[j]:start_off[j + 1]]
            if len(xt) == 0:
                continue
            masks[:] = 0
            l_x = masks[0, :len(xt)]
            w_x = masks[1, :len(xt)]
            l_y = masks[2, :len(yt)]
            w_y = masks[3, :len(yt)]
            _lcs_masks_kernel(xt, xoff, yt, yoff, f, L, W, K, l_x, w_x, l_y, w_y)
            l_sr, w_sr = _clip_kernel(xt, xoff, l_x, w_x, yt, f, peer, marked, used)
            l_rs, w_rs = _clip_kernel(yt, yoff, l_y, w_y, xt, f, peer, marked, used)
            lcs[i, j] = l_sr
            lcs[j, i] = l_rs
            wlcs[i, j] = w_sr
            wlcs[j, i] = w_rs
