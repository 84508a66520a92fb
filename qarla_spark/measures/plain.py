"""Plain scores: a summary's mean similarity to the models, the baseline
QUEEN is compared with (SPEC §4 ORANGE's baseline, SPEC §7's human-summariser
test with plain ROUGE recall).

score_{M}(e, x) = mean over m ∈ M, m ≠ e of x(e, m) — one reference at a
time, averaged (not ROUGE's multi-reference pooling). Like QUEEN in KING and
ORANGE, it is jackknifed: with model h held out, every peer and h itself are
scored against M∖{h}.

A per-topic kernel over the topic cube (:func:`topic_plain`, numpy) gives

- ``orange`` rows (topic, metric): n_le = (h, a) with
  score_{M∖{h}}(a) ≤ score_{M∖{h}}(h), n_peers = |M|·|A|, for every metric
  (ORANGE(plain x), pooled like ORANGE(QUEEN));
- ``score`` rows (topic, metric, holdout h, summarizer, role): the
  jackknifed plain score of each peer and of h, for the baseline metrics of
  the human-summariser test.

Topics: those where KING is defined (≥ 4 models and a peer), so that the
plain baselines and QUEEN are compared on the same cases. Sums run over the
models in the same order for every summary, so equal similarity values give
equal scores (ties stay ties).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

PLAIN_SCHEMA = ("kind string, task string, topic string, metric string, holdout string, "
                "summarizer string, role string, score double, n_le long, n_peers long")


def topic_plain(names, roles, values, metrics: Sequence[str], baselines: Sequence[int]):
    """(orange, scores) of one topic (pure numpy): ``orange`` is
    (n_le, n_peers) per metric, n_le an int array over the metrics;
    ``scores`` maps a baseline metric index to (peer_scores |A|×|M|,
    model_scores |M|) with model h held out in column/entry h. None when the
    topic has fewer than 4 models or no peer."""
    roles = np.asarray(roles)
    peers = np.flatnonzero(roles == "peer")
    models = np.flatnonzero(roles == "model")
    if len(models) < 4 or not len(peers):
        return None
    n_m = len(models)
    k = values.shape[2]
    peer_s = np.empty((len(peers), n_m, k))
    model_s = np.empty((n_m, k))
    for j, h in enumerate(models):
        rest = np.delete(models, j)
        peer_s[:, j, :] = values[np.ix_(peers, rest)].sum(axis=1) / len(rest)
        model_s[j, :] = values[h, rest, :].sum(axis=0) / len(rest)
    n_le = (peer_s <= model_s[None, :, :]).sum(axis=(0, 1))
    scores = {i: (peer_s[:, :, i], model_s[:, i]) for i in baselines}
    return {"n_le": n_le.astype(np.int64), "n_peers": n_m * len(peers), "scores": scores,
            "peers": peers, "models": models}


def plain_results(cube, metrics: Sequence[str], baselines: Sequence[str] = ()):
    """:func:`topic_plain` over every topic of a cube (lazy, no shuffle):
    rows of :data:`PLAIN_SCHEMA`. ``baselines``: metrics (present in
    ``metrics``) whose jackknifed scores are returned."""
    import pandas as pd

    from qarla_spark.measures.masks import map_topics

    metrics = list(metrics)
    wanted = [metrics.index(b) for b in baselines if b in metrics]
    metric_names = np.asarray(metrics, dtype=object)

    def kernel(task, topic, names, roles, values):
        res = topic_plain(names, roles, values, metrics, wanted)
        if res is None:
            return None
        parts = [pd.DataFrame({"kind": "orange", "metric": metric_names,
                               "n_le": res["n_le"], "n_peers": res["n_peers"]})]
        peers, models = res["peers"], res["models"]
        for i, (peer_s, model_s) in res["scores"].items():
            parts.append(pd.DataFrame({
                "kind": "score", "metric": metrics[i],
                "holdout": np.tile(names[models], len(peers)),
                "summarizer": np.repeat(names[peers], len(models)), "role": "peer",
                "score": peer_s.ravel()}))
            parts.append(pd.DataFrame({
                "kind": "score", "metric": metrics[i], "holdout": names[models],
                "summarizer": names[models], "role": "model", "score": model_s}))
        out = pd.concat(parts, ignore_index=True)
        out["task"], out["topic"] = task, topic
        for c in ("holdout", "summarizer", "role", "score", "n_le", "n_peers"):
            if c not in out:
                out[c] = None
        out["n_le"] = out["n_le"].astype("Int64")
        out["n_peers"] = out["n_peers"].astype("Int64")
        return out

    return map_topics(cube, kernel, PLAIN_SCHEMA)


def orange_plain_table(plain):
    """ORANGE(plain x) of every metric: task, metric_set, n_metrics, score
    (``plain``), orange, n_cases — rows of the ``orange/`` table."""
    from pyspark.sql import functions as F
    return (plain.filter(F.col("kind") == "orange").groupBy("task", "metric")
            .agg((F.sum("n_le") / F.sum("n_peers")).alias("orange"),
                 F.sum("n_peers").alias("n_cases"))
            .select("task", F.col("metric").alias("metric_set"), F.lit(1).alias("n_metrics"),
                    F.lit("plain").alias("score"), "orange",
                    F.col("n_cases").cast("long").alias("n_cases")))
