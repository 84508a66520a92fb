"""ROUGE kernels of SPEC §2 from sufficient statistics (no Spark).

For one variant (``a``, ``b`` or ``c``) of two prepared summaries ``s`` and
``r`` (see :mod:`qarla_spark.text.variants`), :func:`pair_counts` returns,
for each of the 8 kinds ``1 2 3 4 S4 SU4 L W-1.2``, the hits and
denominators of both directions: ``R(s, r)`` (recall of ``r``'s units, ``r``
the single model / reference) and ``R(r, s)``, which is ``Rpre(s, r)``
(SPEC §2). Scores are computed from these counts afterwards (sacrebleu
style, :func:`scores_from_counts`), so the counts can be checked one by one
against ROUGE-1.5.5's ``-t 2`` raw output.

What is computed, kind by kind, and how it relates to ROUGE-1.5.5
(``ROUGE-1.5.5.pl -n 4 -w 1.2 -2 4 -U -f A`` with one model):

``1``..``4``
    n-grams of the whole token sequence (sentence boundaries are crossed, as
    ROUGE-1.5.5's ``readText`` joins the sentences); hits = Σ min(count in s,
    count in r) (``ngramScore``); denominator = number of n-grams of ``r``.
    The hits are symmetric, so one intersection yields both directions.
``S4``
    skip-bigrams: ordered token pairs with at most 4 tokens in between
    (``createSkipBigram`` with ``-2 4``), counted like n-grams.
``SU4``
    S4 units plus the unigrams of every token. **Departs from ROUGE-1.5.5**,
    which adds the unigram of every token but the last one (its loop stops
    at ``$#m_tokens - 1``); SPEC §2 does not copy that defect. Hence
    hits(SU4) = hits(S4) + hits(1) and units(SU4) = units(S4) + units(1).
``L``
    ROUGE-1.5.5's summary-level union LCS (``lcs``/``lcs_inner``/``markLCS``):
    for each sentence of the model ``r``, the positions of that sentence on
    the LCS path against every sentence of ``s`` are unioned; the path is the
    one ROUGE-1.5.5's backtrack takes (diagonal on equal tokens, else up when
    ``c[i-1][j] >= c[i][j-1]``, else left). The marked tokens are then
    counted in sentence and position order, each only while its remaining
    unigram count in both texts is positive (ROUGE 1.4.1's clip).
    Denominator = tokens of ``r``.
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

For L and W the DP table of a sentence pair is the transpose of the table
with the roles swapped (W's float values included: the same operations on
the same operands), so one table per sentence pair serves both directions;
only the backtrack (its tie rule in the model's orientation) and the clipping
differ.

An empty side scores 0 (SPEC §2): a zero denominator gives 0. (ROUGE-1.5.5
dies with a division by zero on W when the model has no token left.)

Backends: the LCS/WLCS tables are filled by pure Python, or, when the
optional package ``numba`` is installed, by a compiled kernel doing the same
operations in the same order (``QARLA_ROUGE_BACKEND=python`` or
:func:`set_backend` forces the pure-Python one). Both give identical counts;
the tests run both against ROUGE-1.5.5's output.
"""

from __future__ import annotations

import os
from collections import Counter
from itertools import compress
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from qarla_spark.text.variants import VARIANTS, PreparedSummary, Sentences

__all__ = [
    "KINDS",
    "W_WEIGHT",
    "SKIP_DISTANCE",
    "COUNT_FIELDS",
    "METRIC_NAMES",
    "RougeProfile",
    "profile",
    "profiles",
    "pair_counts",
    "lcs_counts",
    "lcs_counts_all",
    "scores_from_counts",
    "pair_scores",
    "rouge_pair",
    "metric_names",
    "rouge_scores",
    "rouge_all_pairs",
    "wlcs_weight",
    "available_backends",
    "get_backend",
    "set_backend",
]

#: The 8 ROUGE kinds of SPEC §2, in the order of every output here.
KINDS: Tuple[str, ...] = ("1", "2", "3", "4", "S4", "SU4", "L", "W-1.2")
#: ROUGE-W weight: f(k) = k ** W_WEIGHT (ROUGE-1.5.5 ``-w 1.2``).
W_WEIGHT = 1.2
#: Maximum number of tokens between the two words of a skip-bigram (``-2 4``).
SKIP_DISTANCE = 4
#: The 4 statistics per kind returned by :func:`pair_counts`, in order:
#: hits and denominator of R(s, r) (units of r), then of R(r, s) (units of s).
COUNT_FIELDS: Tuple[str, ...] = ("hit_sr", "den_r", "hit_rs", "den_s")

_N_KINDS = len(KINDS)
_INV_W = 1.0 / W_WEIGHT


def wlcs_weight(k: int) -> float:
    """ROUGE-1.5.5's ``wlcsWeight``: ``k ** 1.2`` (C ``pow``, as Perl's ``**``)."""
    return float(k) ** W_WEIGHT


class _Weights:
    """f(k) = k^1.2 for k = 0, 1, ..., grown on demand (one shared table)."""

    __slots__ = ("table", "_array")

    def __init__(self) -> None:
        self.table: List[float] = [wlcs_weight(k) for k in range(512)]
        self._array = None

    def upto(self, n: int) -> List[float]:
        """The table, long enough to index ``n``."""
        if n >= len(self.table):
            self.table.extend(wlcs_weight(k) for k in range(len(self.table), 2 * n + 2))
            self._array = None
        return self.table

    def array(self, n: int):
        """The table as a float64 numpy array (same doubles), long enough for ``n``."""
        self.upto(n)
        if self._array is None or len(self._array) != len(self.table):
            import numpy as np

            self._array = np.array(self.table, dtype=np.float64)
        return self._array


_F = _Weights()


class RougeProfile:
    """One side of a pair, prepared once per summary and variant.

    Attributes: ``sentences`` (tuple of token tuples, empty ones dropped),
    ``tokens`` (their concatenation), ``starts`` (offset of each sentence in
    ``tokens``, plus the total), ``ends`` (for each token, the end offset
    of its sentence), ``sets`` (token set per sentence), ``grams``
    (Counters of 1-, 2-, 3-, 4-grams and S4 skip-bigrams), ``units`` (their
    totals), ``n_tokens``, ``max_len`` (longest sentence) and ``w_base``
    (Σ_i f(|sentence_i|), W's denominator, summed in sentence order as
    ROUGE-1.5.5 does).
    """

    __slots__ = (
        "sentences", "tokens", "starts", "ends", "sets", "grams", "units",
        "n_tokens", "max_len", "w_base", "_codes",
    )  # fmt: skip

    def __init__(self, sentences: Sentences) -> None:
        sents = tuple(tuple(s) for s in sentences if len(s))
        tokens: Tuple[str, ...] = tuple(t for s in sents for t in s)
        n = len(tokens)
        starts = [0]
        for s in sents:
            starts.append(starts[-1] + len(s))
        self.sentences = sents
        self.tokens = tokens
        self.starts = tuple(starts)
        self.ends = tuple(starts[a + 1] for a, s in enumerate(sents) for _ in s)
        self.sets = tuple(frozenset(s) for s in sents)
        uni = Counter(tokens)
        bi = Counter(zip(tokens, tokens[1:]))
        tri = Counter(zip(tokens, tokens[1:], tokens[2:]))
        four = Counter(zip(tokens, tokens[1:], tokens[2:], tokens[3:]))
        skip = Counter(bi)
        for gap in range(2, SKIP_DISTANCE + 2):
            skip.update(zip(tokens, tokens[gap:]))
        self.grams = (uni, bi, tri, four, skip)
        n_skip = sum(max(0, n - gap) for gap in range(1, SKIP_DISTANCE + 2))
        self.units = (n, max(0, n - 1), max(0, n - 2), max(0, n - 3), n_skip)
        self.n_tokens = n
        self.max_len = max((len(s) for s in sents), default=0)
        f = _F.upto(self.max_len)
        base = 0.0
        for s in sents:
            base += f[len(s)]
        self.w_base = base
        self._codes = None

    def codes(self):
        """Tokens as int64 codes of a process-wide vocabulary (numba backend)."""
        if self._codes is None:
            import numpy as np

            vocab = _VOCAB
            self._codes = (
                np.fromiter(
                    (vocab.setdefault(t, len(vocab)) for t in self.tokens),
                    dtype=np.int64,
                    count=self.n_tokens,
                ),
                np.array(self.starts, dtype=np.int64),
            )
        return self._codes


_VOCAB: Dict[str, int] = {}


def profile(sentences: Sentences) -> RougeProfile:
    """The :class:`RougeProfile` of one variant of one summary."""
    return RougeProfile(sentences)


def profiles(prepared: PreparedSummary) -> Tuple[RougeProfile, RougeProfile, RougeProfile]:
    """Profiles of the ``a``, ``b`` and ``c`` variants of a prepared summary."""
    a, b, c = (RougeProfile(prepared.variant(v)) for v in VARIANTS)
    return a, b, c


def _hits(x: Counter, y: Counter) -> int:
    """Σ_k min(x[k], y[k]) (ROUGE-1.5.5 ``ngramScore``); symmetric."""
    if len(x) > len(y):
        x, y = y, x
    get = y.get
    h = 0
    for key, cx in x.items():
        cy = get(key)
        if cy:
            h += cx if cx < cy else cy
    return h


# --- union LCS / WLCS hit masks --------------------------------------------
# A backend takes (r, s, f) and returns four masks over the flat tokens:
# (L marks of r with r as model, W marks of r, L marks of s with s as model,
# W marks of s). A mask supports ``mask[i]`` -> 0/1.

_Masks = Tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]]


def _lcs_masks_python(pr: RougeProfile, ps: RougeProfile) -> _Masks:
    """Pure-Python backend: ROUGE-1.5.5's DP and backtracks, both directions."""
    f = _F.upto(max(pr.max_len, ps.max_len) + 1)
    l_r = bytearray(pr.n_tokens)
    w_r = bytearray(pr.n_tokens)
    l_s = bytearray(ps.n_tokens)
    w_s = bytearray(ps.n_tokens)
    for a, x in enumerate(pr.sentences):
        xset = pr.sets[a]
        x0 = pr.starts[a]
        m = len(x)
        for b, y in enumerate(ps.sentences):
            if xset.isdisjoint(ps.sets[b]):
                continue  # no equal tokens: no diagonal move, nothing marked
            y0 = ps.starts[b]
            n = len(y)
            # Tables over x (rows: ROUGE's model) and y (columns: its peer).
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
            for rows, mask_x, mask_y in ((lrows, l_r, l_s), (wrows, w_r, w_s)):
                # x as the model (ROUGE's orientation): a tie goes up.
                i, j = m, n
                while i and j:
                    if x[i - 1] == y[j - 1]:
                        i -= 1
                        j -= 1
                        mask_x[x0 + i] = 1
                    elif rows[i - 1][j] >= rows[i][j - 1]:
                        i -= 1
                    else:
                        j -= 1
                # y as the model (transposed table): a tie drops y's token.
                i, j = m, n
                while i and j:
                    if x[i - 1] == y[j - 1]:
                        i -= 1
                        j -= 1
                        mask_y[y0 + j] = 1
                    elif rows[i][j - 1] >= rows[i - 1][j]:
                        j -= 1
                    else:
                        i -= 1
    return l_r, w_r, l_s, w_s


_BACKENDS: Dict[str, Callable[[RougeProfile, RougeProfile], _Masks]] = {
    "python": _lcs_masks_python,
}

#: backends that also clip in compiled code (name -> lcs_counts twin)
_COUNT_BACKENDS: Dict[str, Callable] = {}
#: backends computing a whole topic's pairs at once (name -> lcs_counts_all twin)
_TOPIC_BACKENDS: Dict[str, Callable] = {}

try:  # optional accelerator: same algorithm compiled with numba
    import numba as _numba
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _numba = None

if _numba is not None:

    @_numba.njit(cache=True, nogil=True)
    def _lcs_masks_kernel(xt, xoff, yt, yoff, f, l_x, w_x, l_y, w_y):  # pragma: no cover
        """Compiled twin of :func:`_lcs_masks_python` (same operations, same order)."""
        max_m = 0
        for a in range(len(xoff) - 1):
            max_m = max(max_m, xoff[a + 1] - xoff[a])
        max_n = 0
        for b in range(len(yoff) - 1):
            max_n = max(max_n, yoff[b + 1] - yoff[b])
        L = _np.zeros((max_m + 1, max_n + 1), _np.int64)
        W = _np.zeros((max_m + 1, max_n + 1), _np.float64)
        K = _np.zeros((max_m + 1, max_n + 1), _np.int64)
        for a in range(len(xoff) - 1):
            x0 = xoff[a]
            m = xoff[a + 1] - x0
            for b in range(len(yoff) - 1):
                y0 = yoff[b]
                n = yoff[b + 1] - y0
                found = False
                for i in range(1, m + 1):
                    xi = xt[x0 + i - 1]
                    for j in range(1, n + 1):
                        if yt[y0 + j - 1] == xi:
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
                if not found:
                    continue
                # L, x as the model
                i, j = m, n
                while i > 0 and j > 0:
                    if xt[x0 + i - 1] == yt[y0 + j - 1]:
                        i -= 1
                        j -= 1
                        l_x[x0 + i] = 1
                    elif L[i - 1, j] >= L[i, j - 1]:
                        i -= 1
                    else:
                        j -= 1
                # L, y as the model
                i, j = m, n
                while i > 0 and j > 0:
                    if xt[x0 + i - 1] == yt[y0 + j - 1]:
                        i -= 1
                        j -= 1
                        l_y[y0 + j] = 1
                    elif L[i, j - 1] >= L[i - 1, j]:
                        j -= 1
                    else:
                        i -= 1
                # W, x as the model
                i, j = m, n
                while i > 0 and j > 0:
                    if xt[x0 + i - 1] == yt[y0 + j - 1]:
                        i -= 1
                        j -= 1
                        w_x[x0 + i] = 1
                    elif W[i - 1, j] >= W[i, j - 1]:
                        i -= 1
                    else:
                        j -= 1
                # W, y as the model
                i, j = m, n
                while i > 0 and j > 0:
                    if xt[x0 + i - 1] == yt[y0 + j - 1]:
                        i -= 1
                        j -= 1
                        w_y[y0 + j] = 1
                    elif W[i, j - 1] >= W[i - 1, j]:
                        j -= 1
                    else:
                        i -= 1

    def _lcs_masks_numba(pr: RougeProfile, ps: RougeProfile) -> _Masks:
        """numba backend: :func:`_lcs_masks_kernel` on int-coded tokens."""
        f = _F.array(max(pr.max_len, ps.max_len) + 1)
        xt, xoff = pr.codes()
        yt, yoff = ps.codes()
        l_r = _np.zeros(pr.n_tokens, _np.uint8)
        w_r = _np.zeros(pr.n_tokens, _np.uint8)
        l_s = _np.zeros(ps.n_tokens, _np.uint8)
        w_s = _np.zeros(ps.n_tokens, _np.uint8)
        _lcs_masks_kernel(xt, xoff, yt, yoff, f, l_r, w_r, l_s, w_s)
        # bytes: fast per-item indexing in the Python clipping loops
        return l_r.tobytes(), w_r.tobytes(), l_s.tobytes(), w_s.tobytes()

    _BACKENDS["numba"] = _lcs_masks_numba

    @_numba.njit(cache=True, nogil=True)
    def _clip_kernel(xt, xoff, mask_l, mask_w, yt, f):  # pragma: no cover
        """Compiled twin of :func:`_clip_l` and :func:`_clip_w` for the model
        ``x`` (codes ``xt``, sentence offsets ``xoff``) against the peer ``yt``."""
        peer = _numba.typed.Dict.empty(key_type=_numba.types.int64,
                                       value_type=_numba.types.int64)
        for c in yt:
            peer[c] = peer.get(c, 0) + 1
        marked = _numba.typed.Dict.empty(key_type=_numba.types.int64,
                                         value_type=_numba.types.int64)
        for p in range(len(xt)):
            if mask_l[p]:
                marked[xt[p]] = marked.get(xt[p], 0) + 1
        l_hit = 0
        for c, k in marked.items():
            q = peer.get(c, 0)
            l_hit += k if k < q else q
        used = _numba.typed.Dict.empty(key_type=_numba.types.int64,
                                       value_type=_numba.types.int64)
        w_hit = 0.0
        for a in range(len(xoff) - 1):
            end = xoff[a + 1]
            run = 0
            for p in range(xoff[a], end):
                if not mask_w[p]:
                    continue
                c = xt[p]
                u = used.get(c, 0)
                if u < peer.get(c, 0):
                    used[c] = u + 1
                    run += 1
                    if p + 1 < end:
                        if not mask_w[p + 1]:
                            w_hit += f[run]
                            run = 0
                    else:
                        w_hit += f[run]
                        run = 0
        return l_hit, w_hit

    def _lcs_counts_numba(ps: RougeProfile, pr: RougeProfile) -> Tuple[int, int, float, float]:
        """numba backend of :func:`lcs_counts`: masks and clipping compiled."""
        f = _F.array(max(pr.max_len, ps.max_len) + 1)
        xt, xoff = pr.codes()
        yt, yoff = ps.codes()
        l_r = _np.zeros(pr.n_tokens, _np.uint8)
        w_r = _np.zeros(pr.n_tokens, _np.uint8)
        l_s = _np.zeros(ps.n_tokens, _np.uint8)
        w_s = _np.zeros(ps.n_tokens, _np.uint8)
        _lcs_masks_kernel(xt, xoff, yt, yoff, f, l_r, w_r, l_s, w_s)
        l_sr, w_sr = _clip_kernel(xt, xoff, l_r, w_r, yt, f)
        l_rs, w_rs = _clip_kernel(yt, yoff, l_s, w_s, xt, f)
        return l_sr, l_rs, w_sr, w_rs

    _COUNT_BACKENDS["numba"] = _lcs_counts_numba

    @_numba.njit(cache=True, nogil=True)
    def _topic_lcs_kernel(codes, tok_off, starts, start_off, f, lcs, wlcs):  # pragma: no cover
        """:func:`_lcs_counts_numba` for every unordered pair of a topic in
        one compiled call (no Python work per pair)."""
        n = len(tok_off) - 1
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
                l_x = _np.zeros(len(xt), _np.uint8)
                w_x = _np.zeros(len(xt), _np.uint8)
                l_y = _np.zeros(len(yt), _np.uint8)
                w_y = _np.zeros(len(yt), _np.uint8)
                _lcs_masks_kernel(xt, xoff, yt, yoff, f, l_x, w_x, l_y, w_y)
                l_sr, w_sr = _clip_kernel(xt, xoff, l_x, w_x, yt, f)
                l_rs, w_rs = _clip_kernel(yt, yoff, l_y, w_y, xt, f)
                lcs[i, j] = l_sr
                lcs[j, i] = l_rs
                wlcs[i, j] = w_sr
                wlcs[j, i] = w_rs

    def _topic_lcs_numba(profs: Sequence["RougeProfile"]):
        n = len(profs)
        parts = [p.codes() for p in profs]
        codes = _np.concatenate([c for c, _ in parts]) if n else _np.zeros(0, _np.int64)
        starts = _np.concatenate([s for _, s in parts]) if n else _np.zeros(0, _np.int64)
        tok_off = _np.zeros(n + 1, _np.int64)
        start_off = _np.zeros(n + 1, _np.int64)
        for k, (c, s) in enumerate(parts):
            tok_off[k + 1] = tok_off[k] + len(c)
            start_off[k + 1] = start_off[k] + len(s)
        f = _F.array(max((p.max_len for p in profs), default=0) + 1)
        lcs = _np.zeros((n, n))
        wlcs = _np.zeros((n, n))
        _topic_lcs_kernel(codes.astype(_np.int64), tok_off, starts.astype(_np.int64), start_off,
                          f, lcs, wlcs)
        return lcs, wlcs

    _TOPIC_BACKENDS["numba"] = _topic_lcs_numba


def available_backends() -> Tuple[str, ...]:
    """Names of the usable LCS backends (``"python"``, plus ``"numba"`` if installed)."""
    return tuple(_BACKENDS)


def _default_backend() -> str:
    wanted = os.environ.get("QARLA_ROUGE_BACKEND", "auto").strip().lower()
    if wanted in ("", "auto"):
        return "numba" if "numba" in _BACKENDS else "python"
    if wanted not in _BACKENDS:
        raise ValueError(
            f"QARLA_ROUGE_BACKEND={wanted!r} is not available; choose one of {available_backends()}"
        )
    return wanted


_backend_name = _default_backend()
_lcs_masks = _BACKENDS[_backend_name]


def get_backend() -> str:
    """The LCS backend in use."""
    return _backend_name


def set_backend(name: str) -> str:
    """Select the LCS backend: ``"python"``, ``"numba"`` or ``"auto"``.

    Returns the name of the backend used before.
    """
    global _backend_name, _lcs_masks
    previous = _backend_name
    if name == "auto":
        name = "numba" if "numba" in _BACKENDS else "python"
    if name not in _BACKENDS:
        raise ValueError(f"backend {name!r} is not available; choose one of {available_backends()}")
    _backend_name = name
    _lcs_masks = _BACKENDS[name]
    return previous


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
    return _hits(Counter(compress(model.tokens, mask)), peer_uni)


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


def lcs_counts(ps: RougeProfile, pr: RougeProfile) -> Tuple[int, int, float, float]:
    """The L and W hits of the pair (s, r), both directions:
    ``(L hits of R(s, r), L hits of R(r, s), W hit of R(s, r), W hit of
    R(r, s))`` (denominators: :attr:`RougeProfile.n_tokens` and
    :attr:`RougeProfile.w_base` of the model side)."""
    if not (ps.n_tokens and pr.n_tokens):
        return 0, 0, 0.0, 0.0
    compiled = _COUNT_BACKENDS.get(_backend_name)
    if compiled is not None:
        return compiled(ps, pr)
    gs, gr = ps.grams, pr.grams
    l_r, w_r, l_s, w_s = _lcs_masks(pr, ps)
    f = _F.upto(max(ps.max_len, pr.max_len) + 1)
    return (_clip_l(pr, l_r, gs[0]), _clip_l(ps, l_s, gr[0]),
            _clip_w(pr, w_r, gs[0], f), _clip_w(ps, w_s, gr[0], f))


def lcs_counts_all(profs: Sequence[RougeProfile]):
    """L and W hits of every ordered pair of a topic's profiles:
    ``(lcs, wlcs)``, two n × n arrays where ``lcs[i, j]`` is the L hit of
    R(i, j) (units of ``j``, the model) — :func:`lcs_counts` for every pair,
    in one compiled call with the numba backend."""
    import numpy as np

    compiled = _TOPIC_BACKENDS.get(_backend_name)
    if compiled is not None:
        return compiled(profs)
    n = len(profs)
    lcs = np.zeros((n, n))
    wlcs = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            lcs[i, j], lcs[j, i], wlcs[i, j], wlcs[j, i] = lcs_counts(profs[i], profs[j])
    return lcs, wlcs


def pair_counts(ps: RougeProfile, pr: RougeProfile) -> Tuple[float, ...]:
    """Sufficient statistics of one variant of the pair (s, r), both directions.

    Returns a flat tuple of ``4 * len(KINDS)`` numbers: for each kind of
    :data:`KINDS`, the fields of :data:`COUNT_FIELDS` (``hit_sr, den_r,
    hit_rs, den_s``). All are ints except W's hits and denominators.
    """
    out: List[float] = []
    gs, gr = ps.grams, pr.grams
    us, ur = ps.units, pr.units
    for g in range(5):  # 1, 2, 3, 4, S4: symmetric hits
        h = _hits(gs[g], gr[g]) if us[g] and ur[g] else 0
        out += (h, ur[g], h, us[g])
    h1, hs4 = out[0], out[16]
    out += (hs4 + h1, ur[4] + ur[0], hs4 + h1, us[4] + us[0])  # SU4, corrected
    l_sr, l_rs, w_sr, w_rs = lcs_counts(ps, pr)
    out += (l_sr, pr.n_tokens, l_rs, ps.n_tokens)
    out += (w_sr, pr.w_base, w_rs, ps.w_base)
    return tuple(out)


def scores_from_counts(counts: Sequence[float]) -> Tuple[float, ...]:
    """``(R, Rpre)`` for each kind of :data:`KINDS` from :func:`pair_counts`.

    R = hit / den (0 when den = 0); for W, R = f⁻¹(hit / den) with
    f⁻¹(x) = x ** (1 / 1.2).
    """
    out: List[float] = []
    last = 4 * (_N_KINDS - 1)
    for base in range(0, 4 * _N_KINDS, 4):
        h_sr, d_r, h_rs, d_s = counts[base : base + 4]
        r = h_sr / d_r if d_r else 0.0
        p = h_rs / d_s if d_s else 0.0
        if base == last:  # W-1.2
            r = r**_INV_W
            p = p**_INV_W
        out += (r, p)
    return tuple(out)


def pair_scores(ps: RougeProfile, pr: RougeProfile) -> Tuple[float, ...]:
    """``(R(s, r), Rpre(s, r))`` for each kind, for one variant."""
    return scores_from_counts(pair_counts(ps, pr))


def rouge_pair(s: Sentences, r: Sentences) -> Dict[str, float]:
    """Convenience: ``{"R-<kind>": ..., "Rpre-<kind>": ...}`` for one variant.

    ``s`` and ``r`` are sentences of tokens (one variant of a prepared
    summary). Builds both profiles; to score many pairs, build each
    :class:`RougeProfile` once and call :func:`pair_scores`.
    """
    vals = pair_scores(RougeProfile(s), RougeProfile(r))
    out: Dict[str, float] = {}
    for i, kind in enumerate(KINDS):
        out[f"R-{kind}"] = vals[2 * i]
        out[f"Rpre-{kind}"] = vals[2 * i + 1]
    return out


def metric_names(variants: Sequence[str] = VARIANTS) -> Tuple[str, ...]:
    """Metric names in output order: variant, kind, then ``R`` before ``Rpre``.

    Names are ``R-<kind>.<v>`` and ``Rpre-<kind>.<v>`` (SPEC §2), e.g.
    ``R-1.a``, ``Rpre-SU4.b``, ``R-W-1.2.c``.
    """
    return tuple(f"{d}-{kind}.{v}" for v in variants for kind in KINDS for d in ("R", "Rpre"))


#: The 48 ROUGE metric names of SPEC §2 (8 kinds × 3 variants × 2 directions).
METRIC_NAMES: Tuple[str, ...] = metric_names()


def rouge_scores(s: PreparedSummary, r: PreparedSummary) -> Dict[str, float]:
    """All 48 ROUGE values of SPEC §2 for the ordered pair (s, r)."""
    vals: List[float] = []
    for v in VARIANTS:
        vals += pair_scores(RougeProfile(s.variant(v)), RougeProfile(r.variant(v)))
    return dict(zip(METRIC_NAMES, vals))


def rouge_all_pairs(
    prepared: Sequence[PreparedSummary],
    profiled: Optional[Sequence[Tuple[RougeProfile, ...]]] = None,
) -> Iterator[Tuple[int, int, Tuple[float, ...]]]:
    """All 48 values for every ordered pair (i, j), i ≠ j, of one topic.

    Yields ``(i, j, values)`` with ``values`` in :data:`METRIC_NAMES` order
    for s = ``prepared[i]``, r = ``prepared[j]``. Each summary is profiled
    once (or pass ``profiled``, the :func:`profiles` of each summary) and
    each unordered pair is computed once: (j, i) reuses the counts of (i, j).
    """
    profs = list(profiled) if profiled is not None else [profiles(p) for p in prepared]
    n = len(profs)
    n_variants = len(VARIANTS)
    for i in range(n):
        for j in range(i + 1, n):
            fwd: List[float] = []
            bwd: List[float] = []
            for v in range(n_variants):
                vals = pair_scores(profs[i][v], profs[j][v])
                fwd += vals
                # (R, Rpre) of (j, i) is (Rpre, R) of (i, j)
                for k in range(0, len(vals), 2):
                    bwd += (vals[k + 1], vals[k])
            yield i, j, tuple(fwd)
            yield j, i, tuple(bwd)
