"""Similarity vectors and QUEEN sample masks (SPEC §3, §6).

A *sample* is (e, m, m', m'') with m, m', m'' models of e's topic, m' ≠ m''
(``triples="standard"``: m may equal m' or m''; ``"distinct"``: all three
differ) and e not among them. Its *pass-mask* has bit i set when metric i
passes: x_i(e, m) ≥ x_i(m', m'') (a tie passes). QUEEN_X(e) is the share of
e's samples whose mask contains every bit of X, so any number of metric sets
is answered from the same masks.

Masks are arrays of 63-bit words (``array<long>``), so metric lists of any
length are supported (word w holds metrics 63·w .. 63·w+62).

Sizes: a topic with |M| models and |A| peers has (|A|·|M| + |M|·(|M|−1))
ordered (e, m) pairs times |M|(|M|−1) (m', m'') pairs of samples (standard
triples), e.g. 29,260 for SummEval's 11 models and 16 peers.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence, Tuple

import numpy as np

from qarla_spark.errors import ConfigError

WORD_BITS = 63
TRIPLES = ("standard", "distinct")


def n_words(n_metrics: int) -> int:
    return max(1, -(-n_metrics // WORD_BITS))


def set_words(indices: Iterable[int], n_metrics: int) -> List[int]:
    """The mask words of a metric set given by metric indices."""
    words = [0] * n_words(n_metrics)
    for i in indices:
        words[i // WORD_BITS] |= 1 << (i % WORD_BITS)
    return words


def vectors(similarities, metrics: Sequence[str]):
    """(task, topic, s, r, v): v[i] = metrics[i](s, r) for every ordered pair.

    Raises :class:`ConfigError` naming a metric absent from the table, or a
    pair without a value for every metric."""
    from pyspark.sql import functions as F

    metrics = list(metrics)
    if not metrics:
        raise ConfigError("no metric to evaluate")
    spark = similarities.sparkSession
    present = {r["metric"] for r in similarities.select("metric").distinct().collect()}
    missing = [m for m in metrics if m not in present]
    if missing:
        raise ConfigError(f"metric(s) not in the similarity table: {', '.join(missing)}")
    index = spark.createDataFrame([(m, i) for i, m in enumerate(metrics)], "metric string, i int")
    grouped = (similarities.join(F.broadcast(index), "metric")
               .groupBy("task", "topic", "summarizer_s", "summarizer_r")
               .agg(F.array_sort(F.collect_list(F.struct("i", "value"))).alias("iv")))
    return grouped.select("task", "topic", F.col("summarizer_s").alias("s"),
                          F.col("summarizer_r").alias("r"),
                          F.expr(f"IF(size(iv) = {len(metrics)}, transform(iv, x -> x.value), "
                                 "raise_error(concat('pair without every metric: ', task, ', ', "
                                 "topic, ', ', summarizer_s, ', ', summarizer_r)))").alias("v"))


def topic_models(summaries, min_models: int = 3):
    """(task, topic, n_models) of topics with at least ``min_models`` models."""
    from pyspark.sql import functions as F
    return (summaries.groupBy("task", "topic")
            .agg(F.sum((F.col("role") == "model").cast("int")).alias("n_models"))
            .filter(F.col("n_models") >= min_models))


def topic_sample_masks(roles: Sequence[str], values: np.ndarray, triples: str = "standard"):
    """The QUEEN samples of one topic and their pass-masks (pure numpy).

    ``values[s, r, i]`` is metric i of the ordered pair (s, r) (the diagonal
    is ignored); ``roles[s]`` is ``model`` or ``peer``. Returns
    ``(e, m, m1, m2, words)``: index arrays of the samples (e, m, m', m'')
    and an (n_samples × n_words) int64 array of their masks, bit i of word
    w set when metric 63·w+i passes: values[e, m, i] ≥ values[m1, m2, i].
    """
    roles = np.asarray(roles)
    n, _, k = values.shape
    models = np.flatnonzero(roles == "model")
    e_idx, m_idx = np.meshgrid(np.arange(n), models, indexing="ij")
    keep = e_idx != m_idx
    e_idx, m_idx = e_idx[keep], m_idx[keep]
    m1, m2 = np.meshgrid(models, models, indexing="ij")
    keep = m1 != m2
    m1, m2 = m1[keep], m2[keep]
    ev = values[e_idx, m_idx]          # |EM| × k
    mv = values[m1, m2]                # |MM| × k
    valid = (e_idx[:, None] != m1[None, :]) & (e_idx[:, None] != m2[None, :])
    if triples == "distinct":
        valid &= (m_idx[:, None] != m1[None, :]) & (m_idx[:, None] != m2[None, :])
    a, b = np.nonzero(valid)
    words = np.zeros((len(a), n_words(k)), dtype=np.int64)
    for w in range(n_words(k)):
        lo, hi = w * WORD_BITS, min(k, (w + 1) * WORD_BITS)
        weights = np.int64(1) << np.arange(hi - lo, dtype=np.int64)
        passed = ev[a, lo:hi] >= mv[b, lo:hi]
        words[:, w] = passed.astype(np.int64) @ weights
    return e_idx[a], m_idx[a], m1[b], m2[b], words


def topic_values(pdf, n_metrics: int):
    """One topic's vectors (rows s, r, v, role) as (names, roles, values):
    sorted summary names, their roles, and values[s, r, i] (NaN on the
    diagonal) — the input of the per-topic kernels."""
    names = sorted(set(pdf["s"]) | set(pdf["r"]))
    pos = {name: i for i, name in enumerate(names)}
    role_of = dict(zip(pdf["s"], pdf["role"]))
    values = np.full((len(names), len(names), n_metrics), np.nan)
    values[[pos[x] for x in pdf["s"]], [pos[x] for x in pdf["r"]]] = np.stack(pdf["v"].to_numpy())
    roles = np.asarray([role_of[x] for x in names], dtype=object)
    return np.asarray(names, dtype=object), roles, values


def sets_frame(spark, metric_sets: Dict[str, Sequence[int]], n_metrics: int):
    """(metric_set, n_metrics, words, idx) for named sets of metric indices."""
    rows = [(name, len(set(idx)), set_words(idx, n_metrics), sorted(set(idx)))
            for name, idx in metric_sets.items()]
    return spark.createDataFrame(
        rows, "metric_set string, n_metrics int, words array<long>, idx array<int>")
