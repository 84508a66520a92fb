"""One side of a ROUGE pair: one variant of one summary, prepared once (no Spark).

:func:`profile` turns the sentences of one variant (``a``, ``b`` or ``c``,
see :mod:`qarla_spark.text.variants`) into a :class:`RougeProfile`: its
tokens and sentence offsets (for the LCS tables of
:mod:`qarla_spark.metrics.rouge_lcs`), the totals of its n-grams and S4
skip-bigrams, and W's denominator (:mod:`qarla_spark.metrics.rouge` says
what each kind counts). :func:`topic_codes` numbers the tokens of one
variant of a whole topic once, for the topic's n-gram and LCS kernels.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, NamedTuple, Sequence, Tuple

import numpy as np

from qarla_spark.text.variants import Sentences

#: ROUGE-W weight: f(k) = k ** W_WEIGHT (ROUGE-1.5.5 ``-w 1.2``).
W_WEIGHT = 1.2
#: Maximum number of tokens between the two words of a skip-bigram (``-2 4``).
SKIP_DISTANCE = 4
#: The n-gram kinds of :attr:`RougeProfile.units` (and :func:`qarla_spark.metrics.rouge.gram_hits`), in order.
GRAM_KINDS: Tuple[str, ...] = ("1", "2", "3", "4", "S4")


def wlcs_weight(k: int) -> float:
    """ROUGE-1.5.5's ``wlcsWeight``: ``k ** 1.2`` (C ``pow``, as Perl's ``**``)."""
    return float(k) ** W_WEIGHT


def weights(n: int) -> List[float]:
    """``[f(0), f(1), ..., f(n)]`` with f = :func:`wlcs_weight`."""
    return [wlcs_weight(k) for k in range(n + 1)]


class RougeProfile(NamedTuple):
    """One variant of one summary, as the ROUGE counts read it.

    ``sentences`` (token tuples, empty ones dropped), ``tokens`` (their
    concatenation), ``starts`` (offset of each sentence in ``tokens``, plus
    the total), ``ends`` (for each token, the end offset of its sentence),
    ``sets`` (token set per sentence), ``units`` (the number of n-grams of
    each kind of :data:`GRAM_KINDS`), ``n_tokens``, ``max_len``
    (longest sentence) and ``w_base`` (Σ_i f(|sentence_i|), W's
    denominator, summed in sentence order as ROUGE-1.5.5 does).
    """

    sentences: Tuple[Tuple[str, ...], ...]
    tokens: Tuple[str, ...]
    starts: Tuple[int, ...]
    ends: Tuple[int, ...]
    sets: Tuple[FrozenSet[str], ...]
    units: Tuple[int, ...]
    n_tokens: int
    max_len: int
    w_base: float


def profile(sentences: Sentences) -> RougeProfile:
    """The :class:`RougeProfile` of one variant of one summary."""
    sents = tuple(tuple(s) for s in sentences if len(s))
    tokens = tuple(t for s in sents for t in s)
    starts = [0]
    for s in sents:
        starts.append(starts[-1] + len(s))
    return RougeProfile(
        sentences=sents,
        tokens=tokens,
        starts=tuple(starts),
        ends=tuple(starts[a + 1] for a, s in enumerate(sents) for _ in s),
        sets=tuple(frozenset(s) for s in sents),
        units=_units(len(tokens)),
        n_tokens=len(tokens),
        max_len=max((len(s) for s in sents), default=0),
        w_base=_w_base(sents),
    )


def _units(n: int) -> Tuple[int, ...]:
    """Numbers of 1-, 2-, 3-, 4-grams and S4 skip-bigrams (pairs of tokens
    at most :data:`SKIP_DISTANCE` tokens apart) of ``n`` tokens."""
    n_skip = sum(max(0, n - gap) for gap in range(1, SKIP_DISTANCE + 2))
    return (n, max(0, n - 1), max(0, n - 2), max(0, n - 3), n_skip)


def _w_base(sents: Tuple[Tuple[str, ...], ...]) -> float:
    """Σ_i f(|sentence_i|), added in sentence order (not ``sum``: same doubles as Perl)."""
    base = 0.0
    for s in sents:
        base += wlcs_weight(len(s))
    return base


class TopicCodes(NamedTuple):
    """One variant of a topic's summaries as integer token codes: ``codes``
    (int64) holds the tokens of every summary in turn, summary ``i`` being
    ``codes[offsets[i]:offsets[i + 1]]``; equal tokens have equal codes, in
    ``range(size)`` (numbered in order of first appearance)."""

    codes: np.ndarray
    offsets: np.ndarray
    size: int


def topic_codes(profs: Sequence[RougeProfile]) -> TopicCodes:
    """The :class:`TopicCodes` of the profiles of one variant of a topic."""
    vocab: Dict[str, int] = {}
    code = vocab.setdefault
    lengths = [p.n_tokens for p in profs]
    codes = np.fromiter((code(t, len(vocab)) for p in profs for t in p.tokens),
                        dtype=np.int64, count=sum(lengths))
    return TopicCodes(codes, np.cumsum([0] + lengths, dtype=np.int64), len(vocab))
