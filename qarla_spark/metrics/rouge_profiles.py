"""One side of a ROUGE pair: one variant of one summary, prepared once (no Spark).

:func:`profile` turns the sentences of one variant (``a``, ``b`` or ``c``,
see :mod:`qarla_spark.text.variants`) into a :class:`RougeProfile`: its
tokens and sentence offsets (for the LCS tables of
:mod:`qarla_spark.metrics.rouge_lcs`), the Counters of its n-grams and S4
skip-bigrams with their totals, and W's denominator
(:mod:`qarla_spark.metrics.rouge` says what each kind counts).
"""

from __future__ import annotations

from collections import Counter
from typing import FrozenSet, List, NamedTuple, Tuple

from qarla_spark.text.variants import Sentences

#: ROUGE-W weight: f(k) = k ** W_WEIGHT (ROUGE-1.5.5 ``-w 1.2``).
W_WEIGHT = 1.2
#: Maximum number of tokens between the two words of a skip-bigram (``-2 4``).
SKIP_DISTANCE = 4
#: The kinds of :attr:`RougeProfile.grams` and :attr:`RougeProfile.units`, in order.
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
    ``sets`` (token set per sentence), ``grams`` (Counters of the kinds of
    :data:`GRAM_KINDS`), ``units`` (their totals), ``n_tokens``, ``max_len``
    (longest sentence) and ``w_base`` (Σ_i f(|sentence_i|), W's
    denominator, summed in sentence order as ROUGE-1.5.5 does).
    """

    sentences: Tuple[Tuple[str, ...], ...]
    tokens: Tuple[str, ...]
    starts: Tuple[int, ...]
    ends: Tuple[int, ...]
    sets: Tuple[FrozenSet[str], ...]
    grams: Tuple[Counter, ...]
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
        grams=_grams(tokens),
        units=_units(len(tokens)),
        n_tokens=len(tokens),
        max_len=max((len(s) for s in sents), default=0),
        w_base=_w_base(sents),
    )


def _grams(tokens: Tuple[str, ...]) -> Tuple[Counter, ...]:
    """Counters of 1-, 2-, 3-, 4-grams and S4 skip-bigrams (``createSkipBigram``)."""
    bi = Counter(zip(tokens, tokens[1:]))
    skip = Counter(bi)
    for gap in range(2, SKIP_DISTANCE + 2):
        skip.update(zip(tokens, tokens[gap:]))
    return (Counter(tokens), bi, Counter(zip(tokens, tokens[1:], tokens[2:])),
            Counter(zip(tokens, tokens[1:], tokens[2:], tokens[3:])), skip)


def _units(n: int) -> Tuple[int, ...]:
    """Totals of :func:`_grams` for ``n`` tokens."""
    n_skip = sum(max(0, n - gap) for gap in range(1, SKIP_DISTANCE + 2))
    return (n, max(0, n - 1), max(0, n - 2), max(0, n - 3), n_skip)


def _w_base(sents: Tuple[Tuple[str, ...], ...]) -> float:
    """Σ_i f(|sentence_i|), added in sentence order (not ``sum``: same doubles as Perl)."""
    base = 0.0
    for s in sents:
        base += wlcs_weight(len(s))
    return base
