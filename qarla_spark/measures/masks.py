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


def sample_masks(vecs, summaries, n_metrics: int, triples: str = "standard",
                 n_partitions=None):
    """One row per QUEEN sample of every topic with ≥ 3 models:
    (task, topic, e, e_role, m, m1, m2, mask).

    e ranges over peers and models; for a model e the triples avoid e (its
    samples serve QUEEN_{M∖{e}}(e)). The comparisons are a per-topic numpy
    kernel (:func:`topic_sample_masks`: one topic's vectors in, its samples
    out); counting is left to Spark aggregations.
    """
    import pandas as pd
    from pyspark.sql import functions as F

    from qarla_spark.spark.partitioning import apply_per_topic

    if triples not in TRIPLES:
        raise ConfigError(f"triples must be one of {', '.join(TRIPLES)}, not {triples!r}")
    nw = n_words(n_metrics)
    roles = summaries.select("task", "topic", F.col("summarizer").alias("s"), "role")
    topics = topic_models(summaries).select("task", "topic")
    rows = vecs.join(topics, ["task", "topic"]).join(roles, ["task", "topic", "s"])
    schema = ("task string, topic string, e string, e_role string, m string, m1 string, "
              "m2 string, " + ", ".join(f"w{w} long" for w in range(nw)))

    def kernel(pdf):
        names = sorted(set(pdf["s"]) | set(pdf["r"]))
        pos = {name: i for i, name in enumerate(names)}
        role_of = dict(zip(pdf["s"], pdf["role"]))
        values = np.full((len(names), len(names), n_metrics), np.nan)
        values[[pos[x] for x in pdf["s"]], [pos[x] for x in pdf["r"]]] = \
            np.stack(pdf["v"].to_numpy())
        roles_arr = np.asarray([role_of[x] for x in names], dtype=object)
        e, m, m1, m2, words = topic_sample_masks(roles_arr, values, triples)
        names_arr = np.asarray(names, dtype=object)
        out = {"task": pdf["task"].iloc[0], "topic": pdf["topic"].iloc[0],
               "e": names_arr[e], "e_role": roles_arr[e],
               "m": names_arr[m], "m1": names_arr[m1], "m2": names_arr[m2]}
        for w in range(nw):
            out[f"w{w}"] = words[:, w]
        return pd.DataFrame(out)

    samples = apply_per_topic(rows.select("task", "topic", "s", "r", "v", "role"), kernel,
                              schema, n_partitions)
    return samples.select("task", "topic", "e", "e_role", "m", "m1", "m2",
                          F.array(*[F.col(f"w{w}") for w in range(nw)]).alias("mask"))


def passes(mask_col: str, set_col: str, n_metrics: int):
    """SQL condition: every bit of the set's words is in the mask (written
    out per word, for code generation)."""
    from pyspark.sql import functions as F
    return F.expr(" AND ".join(f"({mask_col}[{w}] & {set_col}[{w}]) = {set_col}[{w}]"
                               for w in range(n_words(n_metrics))))


def sets_frame(spark, metric_sets: Dict[str, Sequence[int]], n_metrics: int):
    """(metric_set, n_metrics, words, idx) for named sets of metric indices."""
    rows = [(name, len(set(idx)), set_words(idx, n_metrics), sorted(set(idx)))
            for name, idx in metric_sets.items()]
    return spark.createDataFrame(
        rows, "metric_set string, n_metrics int, words array<long>, idx array<int>")
