"""QUEEN (SPEC §3) for many metric sets at once, full and jackknifed.

Output of :func:`queen_table` (the ``queen/`` table):

    task, topic, summarizer, role, metric_set, holdout, queen

- ``holdout`` null: QUEEN_{X,M}(a) of every peer a with the full model set
  (topics with ≥ 3 models);
- ``holdout`` = h: QUEEN_{X,M∖{h}}(e) for every peer and for h itself
  (topics with ≥ 4 models, so that M∖{h} has the 3 QUEEN needs).

How: a per-topic kernel (:func:`topic_queen`, numpy, on the executors)
builds the topic's samples and pass-masks and counts, for every metric set
at once, the passing samples of each summary; jackknife counts are the full
ones minus those of the samples whose triple contains the held-out model.
It returns KING/ORANGE cases for every set and QUEEN rows for the sets
asked in detail; Spark aggregates them (:mod:`~qarla_spark.measures.king`,
:func:`system_scores`, :mod:`~qarla_spark.measures.jack`).
"""

from __future__ import annotations



def queen_table(results, set_names):
    """The ``queen/`` table from :func:`queen_results` rows of kind ``queen``
    (``set_names``: set_id, metric_set)."""
    from pyspark.sql import functions as F
    return (results.filter(F.col("kind") == "queen").join(F.broadcast(set_names), "set_id")
            .select("task", "topic", "summarizer", "role", "metric_set", "holdout", "queen"))


def system_scores(queen):
    """The ``systems/`` table: task, summarizer, role, metric_set, queen, queen_full.

    ``queen`` ranks models and peers together (SPEC §3): a model h scores
    mean_t QUEEN_{M_t∖{h}}(h), a peer a mean_t mean_h QUEEN_{M_t∖{h}}(a).
    ``queen_full`` is a peer's mean over topics of QUEEN with all models
    (null for models)."""
    from pyspark.sql import functions as F

    jk = queen.filter(F.col("holdout").isNotNull())
    per_topic = (jk.groupBy("task", "topic", "summarizer", "role", "metric_set")
                 .agg(F.avg("queen").alias("q")))
    ranked = (per_topic.groupBy("task", "summarizer", "role", "metric_set")
              .agg(F.avg("q").alias("queen")))
    full = (queen.filter(F.col("holdout").isNull())
            .groupBy("task", "summarizer", "metric_set").agg(F.avg("queen").alias("queen_full")))
    return ranked.join(full, ["task", "summarizer", "metric_set"], "full_outer").select(
        "task", "summarizer", F.coalesce("role", F.lit("peer")).alias("role"), "metric_set",
        "queen", "queen_full")


# ---------------------------------------------------------------------------
# many metric sets at once: a per-topic kernel (numpy) + Spark aggregations
# ---------------------------------------------------------------------------

def topic_queen(roles, values, set_words, triples: str = "standard"):
    """QUEEN of one topic for every metric set at once (pure numpy).

    ``values[s, r, i]``: metric i of the ordered pair (s, r); ``roles[s]``;
    ``set_words``: (n_sets × n_words) int64 masks of the sets. Returns a dict:

    - ``peers``, ``models``: summary indices;
    - ``full``: (|A| × n_sets) QUEEN_{X,M}(a) (None if |M| < 3);
    - ``jk_peers``: (|A| × |M| × n_sets) QUEEN_{X,M∖{h}}(a), ``jk_models``:
      (|M| × n_sets) QUEEN_{X,M∖{h}}(h) (None unless |M| ≥ 4).

    Counting is linear algebra over the topic's samples: pass[s, X] =
    (mask_s ⊇ X); per summary e the counts are Σ_s pass, and for a held-out
    h the counts of e's samples whose triple contains h are subtracted (one
    matrix product per peer).
    """
    import numpy as np

    from qarla_spark.measures.masks import topic_sample_masks

    roles = np.asarray(roles)
    peers = np.flatnonzero(roles == "peer")
    models = np.flatnonzero(roles == "model")
    out = {"peers": peers, "models": models, "full": None, "jk_peers": None, "jk_models": None}
    if len(models) < 3:
        return out
    e, m, m1, m2, words = topic_sample_masks(roles, values, triples)
    n_sets = len(set_words)
    set_words = np.asarray(set_words, dtype=np.int64).reshape(n_sets, -1) if n_sets \
        else np.zeros((0, words.shape[1]), dtype=np.int64)
    # pass matrix samples × sets, filled a block of sets at a time (memory
    # stays ~ samples × 256 whatever the number of sets)
    passed = np.empty((len(e), n_sets), dtype=np.float32)
    for lo in range(0, n_sets, 256):
        block = set_words[lo:lo + 256]
        ok = np.ones((len(e), len(block)), dtype=bool)
        for w in range(block.shape[1]):
            x = block[:, w][None, :]
            ok &= (words[:, w][:, None] & x) == x
        passed[:, lo:lo + 256] = ok
    full = np.zeros((len(peers), n_sets))
    jk_peers = np.zeros((len(peers), len(models), n_sets))
    king = len(models) >= 4
    for k, a in enumerate(peers):
        rows = e == a
        p = passed[rows]
        total, n_all = p.sum(axis=0, dtype=np.float64), rows.sum()
        full[k] = total / n_all
        if king:
            contains = np.stack([(m[rows] == h) | (m1[rows] == h) | (m2[rows] == h)
                                 for h in models], axis=1).astype(np.float64)
            with_h = contains.T @ p.astype(np.float64)    # |M| × sets (exact counts)
            n_h = contains.sum(axis=0)[:, None]
            jk_peers[k] = (total[None, :] - with_h) / (n_all - n_h)
    out["full"] = full
    if king:
        jk_models = np.zeros((len(models), n_sets))
        for k, h in enumerate(models):
            rows = e == h
            jk_models[k] = passed[rows].sum(axis=0, dtype=np.float64) / rows.sum()
        out["jk_peers"] = jk_peers
        out["jk_models"] = jk_models
    return out


_EMPTY_DTYPES = {"string": object, "int": "int32", "long": "int64", "double": "float64"}

RESULT_SCHEMA = ("kind string, task string, topic string, summarizer string, role string, "
                 "set_id int, holdout string, queen double, win double, n_le long, n_peers long")


def queen_results(vecs, summaries, set_words, detailed, triples: str = "standard",
                  n_partitions=None):
    """Per-topic kernel over all topics (lazy). Rows of ``kind``:

    ``case``  (topic, holdout h, set_id): win = 1[QUEEN(h) > every peer's],
              n_le = peers with QUEEN ≤ QUEEN(h), n_peers — for every set
              (KING and ORANGE);
    ``queen`` QUEEN rows (full: holdout null; jackknifed) for the sets whose
              id is in ``detailed``.
    """
    import numpy as np
    import pandas as pd
    from pyspark.sql import functions as F

    from qarla_spark.measures.masks import topic_models, topic_values
    from qarla_spark.spark.partitioning import apply_per_topic

    set_words = np.asarray(set_words, dtype=np.int64).reshape(len(set_words), -1) \
        if len(set_words) else np.zeros((0, 1), dtype=np.int64)
    detailed = sorted(set(detailed))
    roles_df = summaries.select("task", "topic", F.col("summarizer").alias("s"), "role")
    topics = topic_models(summaries).select("task", "topic")
    rows = vecs.join(topics, ["task", "topic"]).join(roles_df, ["task", "topic", "s"])
    columns = [f.split()[0] for f in RESULT_SCHEMA.split(", ")]
    types = [f.split()[1] for f in RESULT_SCHEMA.split(", ")]

    def kernel(pdf):
        names, roles, values = topic_values(pdf, len(pdf["v"].iloc[0]))
        res = topic_queen(roles, values, set_words, triples)
        task, topic = pdf["task"].iloc[0], pdf["topic"].iloc[0]
        parts = []
        peers, models = res["peers"], res["models"]
        if res["full"] is not None and detailed:
            q = res["full"][:, detailed]
            parts.append(pd.DataFrame({
                "kind": "queen", "summarizer": np.repeat(names[peers], len(detailed)),
                "role": "peer", "set_id": np.tile(detailed, len(peers)), "holdout": None,
                "queen": q.ravel()}))
        if res["jk_models"] is not None:
            jk, qh = res["jk_peers"], res["jk_models"]      # A×M×S, M×S
            n_sets = qh.shape[1]
            if len(peers):
                best = jk.max(axis=0)                          # M × S
                win = (qh > best).astype(float)
                n_le = (jk <= qh[None, :, :]).sum(axis=0)
                parts.append(pd.DataFrame({
                    "kind": "case", "summarizer": None, "role": None,
                    "set_id": np.tile(np.arange(n_sets), len(models)),
                    "holdout": np.repeat(names[models], n_sets),
                    "win": win.ravel(), "n_le": n_le.ravel().astype(np.int64),
                    "n_peers": len(peers)}))
            if detailed:
                d = np.asarray(detailed)
                parts.append(pd.DataFrame({
                    "kind": "queen", "summarizer": np.repeat(names[models], len(d)),
                    "role": "model", "set_id": np.tile(d, len(models)),
                    "holdout": np.repeat(names[models], len(d)), "queen": qh[:, d].ravel()}))
                q = jk[:, :, d]                                 # A × M × D
                parts.append(pd.DataFrame({
                    "kind": "queen",
                    "summarizer": np.repeat(names[peers], len(models) * len(d)),
                    "role": "peer",
                    "set_id": np.tile(d, len(peers) * len(models)),
                    "holdout": np.tile(np.repeat(names[models], len(d)), len(peers)),
                    "queen": q.ravel()}))
        if not parts:  # typed, so that Arrow converts it to the schema
            return pd.DataFrame({c: pd.Series([], dtype=_EMPTY_DTYPES[t])
                                 for c, t in zip(columns, types)})
        out = pd.concat(parts, ignore_index=True)
        out["task"], out["topic"] = task, topic
        for c in columns:
            if c not in out:
                out[c] = None
        return out[columns]

    return apply_per_topic(rows.select("task", "topic", "s", "r", "v", "role"), kernel,
                           RESULT_SCHEMA, n_partitions)
