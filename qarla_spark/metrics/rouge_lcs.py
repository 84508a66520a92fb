"""ROUGE-1.5.5's union LCS and WLCS hits of every pair of a topic (no Spark).

:func:`topic_lcs` returns the L and W hits (kinds ``L`` and ``W-1.2``, see
:mod:`qarla_spark.metrics.rouge`) of every ordered pair of a topic's
:class:`~qarla_spark.metrics.rouge_profiles.RougeProfile` s, the profile of
column ``j`` playing ROUGE's model.

For each sentence pair, one DP table serves both directions: the table with
the roles swapped is its transpose (W's float values included: the same
operations on the same operands), so only the backtrack (ROUGE-1.5.5's tie
rule in the model's orientation) and the clipping differ. The backtracks
mark the model positions on the LCS path (:func:`pair_lcs`); the marks of a
model sentence against every sentence of the peer are unioned, then clipped
by the remaining unigram counts (:func:`_clip_l`, :func:`_clip_w`: the
bodies of ROUGE-1.5.5's ``lcs`` and ``wlcs``).

Backends: the tables are filled by the numba-compiled kernel of
:mod:`qarla_spark.metrics.rouge_lcs_numba` (one call per topic), or by the
pure Python below, which is also the fallback when numba cannot be
imported. Both do the same operations in the same order and give identical
hits; the tests run both against ROUGE-1.5.5's output. The environment
variable ``QARLA_ROUGE_BACKEND`` (``auto``, the default, ``numba`` or
``python``) is read once, at import, by :func:`choose_backend`; the choice
is :data:`BACKEND`.
"""

from __future__ import annotations

import os
from collections import Counter
from itertools import compress
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.metrics.rouge_profiles import RougeProfile, TopicCodes, topic_codes, weights

try:  # the accelerator: the same algorithm compiled with numba
    from qarla_spark.metrics import rouge_lcs_numba as _compiled
except ImportError:  # pragma: no cover - depends on the environment
    _compiled = None

#: The usable backends.
BACKENDS: Tuple[str, ...] = ("python", "numba") if _compiled is not None else ("python",)


def choose_backend(wanted: str) -> str:
    """The backend a value of ``QARLA_ROUGE_BACKEND`` selects: ``"auto"`` (or
    empty) is numba when it can be imported, else Python; an unknown or
    unusable name is a :class:`ValueError`."""
    wanted = wanted.strip().lower()
    if wanted in ("", "auto"):
        return BACKENDS[-1]
    if wanted not in BACKENDS:
        raise ValueError(f"QARLA_ROUGE_BACKEND={wanted!r} is not available; "
                         f"choose one of {('auto',) + BACKENDS}")
    return wanted


#: The backend in use, chosen once at import from ``QARLA_ROUGE_BACKEND``.
BACKEND: str = choose_backend(os.environ.get("QARLA_ROUGE_BACKEND", "auto"))


class LcsHits(NamedTuple):
    """L and W hits of every ordered pair of a topic: ``lcs[i, j]`` and
    ``wlcs[i, j]`` are the hits of R(i, j), ``j`` the model (its units:
    ``n_tokens`` and ``w_base`` of profile ``j``)."""

    lcs: np.ndarray
    wlcs: np.ndarray


def topic_lcs(profs: Sequence[RougeProfile], codes: Optional[TopicCodes] = None) -> LcsHits:
    """L and W hits of every ordered pair of ``profs``, by :data:`BACKEND`
    (the numba kernel reads the topic's token codes: ``codes``, or
    :func:`~qarla_spark.metrics.rouge_profiles.topic_codes` of ``profs``)."""
    if BACKEND == "numba":
        return LcsHits(*_compiled.topic_lcs(
            profs, codes if codes is not None else topic_codes(profs)))
    return topic_lcs_python(profs)


def topic_lcs_python(profs: Sequence[RougeProfile]) -> LcsHits:
    """The pure-Python backend of :func:`topic_lcs`: :func:`pair_lcs` for
    every unordered pair."""
    f = weights(max((p.max_len for p in profs), default=0) + 1)
    n = len(profs)
    lcs = np.zeros((n, n))
    wlcs = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            lcs[i, j], lcs[j, i], wlcs[i, j], wlcs[j, i] = pair_lcs(profs[i], profs[j], f)
    return LcsHits(lcs, wlcs)


def pair_lcs(ps: RougeProfile, pr: RougeProfile, f: List[float]) -> Tuple[int, int, float, float]:
    """``(L hit of R(s, r), L hit of R(r, s), W hit of R(s, r), W hit of
    R(r, s))`` of one pair; ``f`` is :func:`weights` up to the longest
    sentence of either side, plus one."""
    if not (ps.n_tokens and pr.n_tokens):
        return 0, 0, 0.0, 0.0
    l_r, w_r, l_s, w_s = _union_masks(pr, ps, f)
    peer_s, peer_r = Counter(ps.tokens), Counter(pr.tokens)
    return (_clip_l(pr, l_r, peer_s), _clip_l(ps, l_s, peer_r),
            _clip_w(pr, w_r, peer_s, f), _clip_w(ps, w_s, peer_r, f))


# --- union LCS / WLCS marks (ROUGE-1.5.5 ``lcs_inner`` / ``wlcs_inner`` + ``markLCS``) ---


def _union_masks(pr: RougeProfile, ps: RougeProfile, f: List[float]):
    """Marked positions of both sides over their flat tokens: (L marks of
    ``r`` as the model, W marks of ``r``, L marks of ``s`` as the model, W
    marks of ``s``), each a bytearray of 0/1."""
    l_r = bytearray(pr.n_tokens)
    w_r = bytearray(pr.n_tokens)
    l_s = bytearray(ps.n_tokens)
    w_s = bytearray(ps.n_tokens)
    for a, x in enumerate(pr.sentences):
        xset = pr.sets[a]
        x0 = pr.starts[a]
        for b, y in enumerate(ps.sentences):
            if xset.isdisjoint(ps.sets[b]):
                continue  # no equal tokens: no diagonal move, nothing marked
            y0 = ps.starts[b]
            for rows, mask_x, mask_y in zip(_tables(x, y, f), (l_r, w_r), (l_s, w_s)):
                _mark_rows_model(rows, x, y, mask_x, x0)
                _mark_columns_model(rows, x, y, mask_y, y0)
    return l_r, w_r, l_s, w_s


def _tables(x: Sequence[str], y: Sequence[str], f: List[float]):
    """ROUGE-1.5.5's LCS and WLCS tables of sentence ``x`` (rows: ROUGE's
    model) against ``y`` (columns: its peer), as lists of rows."""
    n = len(y)
    lprev = [0] * (n + 1)
    wprev = [0.0] * (n + 1)
    kprev = [0] * (n + 1)
    lrows = [lprev]
    wrows = [wprev]
    for xi in x:
        lcur = [0] * (n + 1)
        wcur = [0.0] * (n + 1)
        kcur = [0] * (n + 1)
        for j in range(1, n + 1):
            if y[j - 1] == xi:
                lcur[j] = lprev[j - 1] + 1
                k = kprev[j - 1]
                # Perl evaluates a + f(k+1) - f(k) left to right.
                wcur[j] = wprev[j - 1] + f[k + 1] - f[k]
                kcur[j] = k + 1
            else:
                up = lprev[j]
                left = lcur[j - 1]
                lcur[j] = up if up >= left else left
                up = wprev[j]
                left = wcur[j - 1]
                wcur[j] = up if up >= left else left
        lrows.append(lcur)
        wrows.append(wcur)
        lprev, wprev, kprev = lcur, wcur, kcur
    return lrows, wrows


def _mark_rows_model(rows, x, y, mask: bytearray, x0: int) -> None:
    """Backtrack with ``x`` as the model (ROUGE's orientation: a tie goes
    up); marks ``x``'s positions on the path, offset by ``x0``."""
    i, j = len(x), len(y)
    while i and j:
        if x[i - 1] == y[j - 1]:
            i -= 1
            j -= 1
            mask[x0 + i] = 1
        elif rows[i - 1][j] >= rows[i][j - 1]:
            i -= 1
        else:
            j -= 1


def _mark_columns_model(rows, x, y, mask: bytearray, y0: int) -> None:
    """Backtrack with ``y`` as the model (the transposed table: a tie drops
    ``y``'s token); marks ``y``'s positions on the path, offset by ``y0``."""
    i, j = len(x), len(y)
    while i and j:
        if x[i - 1] == y[j - 1]:
            i -= 1
            j -= 1
            mask[y0 + j] = 1
        elif rows[i][j - 1] >= rows[i - 1][j]:
            j -= 1
        else:
            i -= 1


# --- clipping (ROUGE-1.5.5 ``lcs`` / ``wlcs`` bodies) ----------------------


def _clip_l(model: RougeProfile, mask: Sequence[int], peer_uni: Counter) -> int:
    """Count the marked model tokens while both unigram counts last (``lcs``).

    ROUGE-1.5.5 walks the marked positions in order and counts one while the
    remaining counts of its token in the model and in the peer are both
    positive, decrementing both. The model's count never runs out first (a
    token has at least as many occurrences as marked positions), so the hit
    is Σ_t min(marked count of t, peer count of t): the same number, without
    copying two dictionaries per pair.
    """
    get = peer_uni.get
    hit = 0
    for tok, marked in Counter(compress(model.tokens, mask)).items():
        left = get(tok, 0)
        hit += marked if marked < left else left
    return hit


def _clip_w(model: RougeProfile, mask: Sequence[int], peer_uni: Counter, f: List[float]) -> float:
    """ROUGE-1.5.5 ``wlcs``: clipping and run-weight accumulation, same logic.

    The run length is reset at each model sentence (ROUGE's ``$hitLen=0``);
    only marked positions are visited, in order. A marked position is kept
    while its token's peer count lasts (the model's count cannot run out
    first: see :func:`_clip_l`).
    """
    used: Dict[str, int] = {}
    left = peer_uni.get
    tokens = model.tokens
    ends = model.ends
    hit = 0.0
    run = 0
    end = 0
    for p in compress(range(len(tokens)), mask):
        if p >= end:  # first marked position of a new sentence
            end = ends[p]
            run = 0
        tok = tokens[p]
        u = used.get(tok, 0)
        if u < left(tok, 0):
            used[tok] = u + 1
            run += 1
            if p + 1 < end:
                if not mask[p + 1]:
                    hit += f[run]
                    run = 0
            else:  # end of sentence
                hit += f[run]
                run = 0
    return hit
