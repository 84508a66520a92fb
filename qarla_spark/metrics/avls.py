"""AVLS -- AveragedSentenceLengthSim of SPEC §2 (pure Python + numpy).

Paper ``000`` §3.1: "a very simple metric that compares the average length
of the sentences in two summaries"; SPEC §2 fixes
AVLS(s, r) = 1 / (1 + |avg sentence length(s) − avg sentence length(r)|),
lengths in tokens.

Definition implemented here (decisions where SPEC §2 is silent are marked
**[decision]**, worded for the project's DECISIONS doc):

- **Sentences and tokens** **[decision]**: the sentences of the SPEC §2
  split (:func:`qarla_spark.text.tokenize.split_sentences`: one per
  non-blank line, else ending after every whitespace token that ends with
  ``.``, ``!`` or ``?``), each measured in variant-``a`` tokens (ROUGE-1.5.5
  tokens: maximal runs of ASCII letters and digits, no stop-word removal, no
  stemming), i.e. ``PreparedSummary.a`` of
  :func:`qarla_spark.text.variants.prepare`. Punctuation is therefore not
  counted, and a sentence left without any ``a`` token (e.g. a line holding
  only ``"--"``) is not a sentence: it counts neither in the numerator nor in
  the denominator.
- **Average** = (number of ``a`` tokens) / (number of sentences with at
  least one ``a`` token). **[decision]** A summary with no ``a`` token has
  average length 0 (so it scores 1 against another empty summary and
  1 / (1 + L) against a summary of average length L).
- AVLS is **symmetric**, lies in (0, 1], equals 1 exactly when the two
  averages are equal, and depends only on the number of tokens in each
  sentence, not on which tokens they are.
- **Departs from ``000``** only in that the paper does not say how it
  tokenized or split sentences (its DUC texts came one sentence per line,
  which the SPEC split follows too) nor how similarity was derived from the
  difference; the formula is SPEC §2's.

:func:`avls_topic` computes all ordered pairs of one topic at once (one
average per summary, then a numpy broadcast); it returns the shared
:class:`~qarla_spark.metrics.tvm.TopicPairs`.
"""

from __future__ import annotations

from typing import Any, Dict, Sequence, Tuple

import numpy as np

from qarla_spark.metrics.tvm import TopicPairs, pairs_from_similarity
from qarla_spark.text.variants import PreparedSummary

__all__ = ["AVLS_NAME", "average_sentence_length", "avls", "avls_topic", "family_kernel"]

#: Metric name (SPEC §2).
AVLS_NAME = "AVLS"


def average_sentence_length(sentences: Any) -> float:
    """Mean number of tokens per non-empty sentence; 0.0 with no token.

    ``sentences``: a :class:`~qarla_spark.text.variants.PreparedSummary`
    (its ``a`` variant is used) or a sequence of sentences, each a sequence
    of tokens (sentences without tokens are skipped).

    >>> average_sentence_length([("a", "b", "c"), ("d",), ()])
    2.0
    """
    if sentences is None:
        return 0.0
    if isinstance(sentences, PreparedSummary):
        sentences = sentences.a
    n_sent = 0
    n_tok = 0
    for sentence in sentences:
        if isinstance(sentence, str):
            raise TypeError("expected sentences as token sequences, got a str")
        k = len(sentence)
        if k:
            n_sent += 1
            n_tok += k
    return n_tok / n_sent if n_sent else 0.0


def avls(s: Any, r: Any) -> float:
    """AVLS(s, r) = 1 / (1 + |avg(s) − avg(r)|) (see :func:`average_sentence_length`)."""
    return 1.0 / (1.0 + abs(average_sentence_length(s) - average_sentence_length(r)))


def avls_topic(summaries: Sequence[Any]) -> TopicPairs:
    """AVLS of every ordered pair (i, j), i ≠ j, of one topic's summaries.

    ``summaries``: per summary, its ``a`` sentences (or a
    :class:`~qarla_spark.text.variants.PreparedSummary`). One metric, named
    ``AVLS``.
    """
    return pairs_from_similarity(_similarity(summaries), [AVLS_NAME])


def _similarity(summaries: Sequence[Any]) -> np.ndarray:
    avg = np.fromiter((average_sentence_length(x) for x in summaries), dtype=np.float64,
                      count=len(summaries))
    return 1.0 / (1.0 + np.abs(avg[:, None] - avg[None, :]))


def family_kernel(*, prepared: Sequence[PreparedSummary], s_idx: np.ndarray, r_idx: np.ndarray,
                  metrics: Sequence[str] = (AVLS_NAME,), **_: Any
                  ) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
    """Adapter for a per-topic battery: the ``AVLS`` column for the pairs
    ``(s_idx[p], r_idx[p])`` of the topic's ``prepared`` summaries."""
    if AVLS_NAME not in metrics:
        return {}, {}
    sim = _similarity([p.a for p in prepared])
    return {AVLS_NAME: sim[np.asarray(s_idx, dtype=np.int64), np.asarray(r_idx, dtype=np.int64)]}, {}
