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

from typing import Iterable, List, Sequence

import numpy as np

from qarla_spark.errors import ConfigError
from qarla_spark.spark import cache

WORD_BITS = 63
TRIPLES = ("standard", "distinct")


def n_words(n_metrics: int) -> int:
    return max(1, -(-n_metrics // WORD_BITS))


def packed_u64(bits) -> np.ndarray:
    """Boolean (n × c) → (n × ⌈c/64⌉) uint64: column j is bit j % 64 of word
    j // 64 (little endian), padding bits 0."""
    bits = np.asarray(bits, dtype=bool)
    packed = np.packbits(bits, axis=1, bitorder="little")
    buffer = np.zeros((bits.shape[0], -(-bits.shape[1] // 64) * 8), dtype=np.uint8)
    buffer[:, :packed.shape[1]] = packed
    return buffer.view("<u8")


def pack(bits) -> np.ndarray:
    """Boolean (n × k) → (n × n_words(k)) int64 mask words: bit b of word w
    is column 63·w + b (bit 63 stays 0, so words are non-negative); the
    inverse of :func:`unpack`."""
    bits = np.asarray(bits, dtype=bool)
    n, k = bits.shape
    words = np.zeros((n, n_words(k)), dtype=np.int64)
    for w in range(-(-k // WORD_BITS)):
        words[:, w] = packed_u64(bits[:, w * WORD_BITS:(w + 1) * WORD_BITS])[:, 0]
    return words


def unpack(words, k: int) -> np.ndarray:
    """Mask words (n × words) → boolean (n × k): column i is bit i % 63 of
    word i // 63; the inverse of :func:`pack`."""
    words = np.asarray(words, dtype=np.int64)
    col = np.arange(k)
    return ((words[:, col // WORD_BITS] >> (col % WORD_BITS)) & 1).astype(bool)


def set_words(indices: Iterable[int], n_metrics: int) -> List[int]:
    """The mask words of a metric set given by metric indices."""
    words = [0] * n_words(n_metrics)
    for i in indices:
        words[i // WORD_BITS] |= 1 << (i % WORD_BITS)
    return words


CUBE_SCHEMA = ("task string, topic string, names array<string>, roles array<string>, "
               "n_models int, n_metrics int, values binary, problem string")


def set_indices(words) -> List[List[int]]:
    """The metric indices (increasing) of each set given as a row of mask
    words: the inverse of :func:`set_words`."""
    words = np.asarray(words, dtype=np.int64)
    if not words.size:
        return [[] for _ in range(len(words))]
    words = words.reshape(len(words), -1)
    return [np.flatnonzero(row).tolist()
            for row in unpack(words, words.shape[1] * WORD_BITS)]


def topic_cube(similarities, summaries, metrics: Sequence[str], min_models: int = 3,
               n_partitions=None):
    """One row per topic with at least ``min_models`` models: the topic's
    summaries (``names``, sorted, and their ``roles``) and ``values``, the
    bytes of a float64 array ``values[s, r, i]`` = metrics[i](s, r) (NaN on
    the diagonal), built once on the executors from the long similarity
    table (co-grouped with the summaries, partitioned by topic) and read by
    every per-topic kernel of the QARLA stage with :func:`map_topics`.

    ``problem`` names the first missing or duplicated value of a topic
    (null when complete); :func:`check_cube` turns it into an error.
    Raises :class:`ConfigError` for an empty metric list."""
    import pandas as pd
    from pyspark.sql import functions as F

    from qarla_spark.spark.partitioning import by_topic, topic_partitions

    metrics = list(metrics)
    if not metrics:
        raise ConfigError("no metric to evaluate")
    spark = summaries.sparkSession
    n = topic_partitions(spark, n_partitions)
    k = len(metrics)
    index = spark.createDataFrame([(m, i) for i, m in enumerate(metrics)], "metric string, i int")
    # only numbers cross the shuffle and Arrow: 64-bit hashes stand for the
    # topic and the summaries (a collision is detected and reported below)
    left = by_topic(similarities.join(F.broadcast(index), "metric")
                    .select(F.xxhash64("task", "topic").alias("key"),
                            F.xxhash64("summarizer_s").alias("sh"),
                            F.xxhash64("summarizer_r").alias("rh"), "i", "value"), n, ["key"])
    topics = topic_models(summaries, min_models).select("task", "topic")
    right = by_topic(summaries.join(topics, ["task", "topic"])
                     .select(F.xxhash64("task", "topic").alias("key"), "task", "topic",
                             F.col("summarizer").alias("name"), "role",
                             F.xxhash64("summarizer").alias("h")), n, ["key"])
    columns = [f.split()[0] for f in CUBE_SCHEMA.split(", ")]

    def kernel(pdf, people):
        if people.empty:   # pairs of a topic with too few models: not in the cube
            return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns}).astype(
                {"n_models": "int32", "n_metrics": "int32"})
        people = people.sort_values(["task", "topic", "name"])
        task, topic = people["task"].iloc[0], people["topic"].iloc[0]
        names = people["name"].to_numpy(dtype=object)
        hashes = people["h"].to_numpy(dtype=np.int64)
        n_s = len(names)
        problem = None
        if people[["task", "topic"]].drop_duplicates().shape[0] > 1:
            problem = "two topics share a 64-bit hash; rename one"
        elif len(np.unique(hashes)) != n_s:
            problem = "two summaries of the topic share a 64-bit hash; rename one"
        order = np.argsort(hashes, kind="stable")
        sorted_h = hashes[order]

        def position(h):
            at = np.minimum(np.searchsorted(sorted_h, h), n_s - 1)
            return np.where(sorted_h[at] == h, order[at], -1)

        si = position(pdf["sh"].to_numpy(dtype=np.int64))
        ri = position(pdf["rh"].to_numpy(dtype=np.int64))
        mi = pdf["i"].to_numpy(dtype=np.int64)
        known = (si >= 0) & (ri >= 0)
        if problem is None and not known.all():
            problem = "a pair names a summary that is not in the topic"
        keep = known & (si != ri)
        flat = (si[keep] * n_s + ri[keep]) * k + mi[keep]
        values = np.full((n_s, n_s, k), np.nan)
        values.reshape(-1)[flat] = pdf["value"].to_numpy(dtype=np.float64)[keep]
        if problem is None and len(np.unique(flat)) != len(flat):
            uniq, counts = np.unique(flat, return_counts=True)
            d = uniq[counts > 1][0]
            problem = (f"pair ({names[d // k // n_s]}, {names[d // k % n_s]}) has more than one "
                       f"value of {metrics[d % k]}")
        if problem is None:
            hole = np.isnan(values)
            hole[np.arange(n_s), np.arange(n_s)] = False
            if hole.any():
                s_, r_, i_ = (int(x[0]) for x in np.nonzero(hole))
                problem = f"pair ({names[s_]}, {names[r_]}) has no value of {metrics[i_]}"
        return pd.DataFrame({
            "task": [task], "topic": [topic], "names": [list(names)],
            "roles": [list(people["role"])],
            "n_models": [int((people["role"] == "model").sum())], "n_metrics": [k],
            "values": [values.tobytes()], "problem": [problem]})

    return (left.groupBy("key").cogroup(right.groupBy("key"))
            .applyInPandas(kernel, CUBE_SCHEMA))


def build_cube(similarities, summaries, metrics: Sequence[str], n_partitions=None,
               min_models: int = 1):
    """:func:`topic_cube` of the topics with at least ``min_models`` models,
    persisted and checked: a metric absent from the table or an incomplete
    topic is a :class:`ConfigError` naming it. (QARLA's kernels use the
    topics with ≥ 3 models, HBR those with a model.)"""
    metrics = list(metrics)
    if not metrics:
        raise ConfigError("no metric to evaluate")
    present = {r["metric"] for r in similarities.select("metric").distinct().collect()}
    missing = [m for m in metrics if m not in present]
    if missing:
        raise ConfigError(f"metric(s) not in the similarity table: {', '.join(missing)}")
    cube = cache.persist(topic_cube(similarities, summaries, metrics, min_models=min_models,
                                    n_partitions=n_partitions))
    check_cube(cube)
    return cube


def check_cube(cube) -> None:
    """Raise :class:`ConfigError` naming the first incomplete topics of a
    :func:`topic_cube` (an action; the cube should be persisted)."""
    from pyspark.sql import functions as F
    bad = cube.filter(F.col("problem").isNotNull()).select("task", "topic", "problem") \
        .limit(5).collect()
    if bad:
        raise ConfigError("the similarity table is incomplete: " + "; ".join(
            f"task {r['task']}, topic {r['topic']}: {r['problem']}" for r in bad))


def cube_arrays(row):
    """(names, roles, values) of one :func:`topic_cube` row (a mapping)."""
    names = np.asarray(row["names"], dtype=object)
    n = len(names)
    values = np.frombuffer(row["values"], dtype=np.float64).reshape(n, n, int(row["n_metrics"]))
    return names, np.asarray(row["roles"], dtype=object), values


def cube_members(cube):
    """(task, topic, name, role) of every summary of the cube's topics."""
    from pyspark.sql import functions as F
    return (cube.select("task", "topic", F.explode(F.arrays_zip("names", "roles")).alias("nr"))
            .select("task", "topic", F.col("nr.names").alias("name"),
                    F.col("nr.roles").alias("role")))


def map_topics(cube, func, schema: str, combine=None):
    """``func(task, topic, names, roles, values) -> pandas.DataFrame | None``
    for every topic of a :func:`topic_cube`, on the executors, keeping the
    cube's partitioning (no shuffle). Returns the concatenated rows with
    ``schema`` (a typed empty frame when a partition has none);
    ``combine(frame) -> frame``, if given, reduces the rows of each batch of
    topics (a partial aggregation) before they leave the executor."""
    import pandas as pd

    columns = [f.split()[0] for f in schema.split(", ")]
    types = [f.split()[1] for f in schema.split(", ")]

    def run(batches):
        for pdf in batches:
            parts = []
            for row in pdf.to_dict("records"):
                names, roles, values = cube_arrays(row)
                out = func(row["task"], row["topic"], names, roles, values)
                if out is not None and len(out):
                    parts.append(out[columns])
            if parts:
                out = pd.concat(parts, ignore_index=True)
                yield combine(out)[columns] if combine is not None else out
            else:
                yield pd.DataFrame({c: pd.Series([], dtype=_EMPTY_DTYPES.get(t, object))
                                    for c, t in zip(columns, types)})

    return cube.mapInPandas(run, schema)


_EMPTY_DTYPES = {"string": object, "int": "int32", "long": "int64", "double": "float64",
                 "boolean": "bool"}


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
    return e_idx[a], m_idx[a], m1[b], m2[b], pack(ev[a] >= mv[b])
