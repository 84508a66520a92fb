"""KING and ORANGE (SPEC §4) from the jackknifed QUEEN table.

KING(X) = mean over topics t of mean over h ∈ M_t of
1[∀a ∈ A_t: QUEEN_{X,M_t∖{h}}(h) > QUEEN_{X,M_t∖{h}}(a)] (strict: a tie
with any peer fails). Topics need ≥ 4 models and at least one peer (a topic
without peers is skipped: "beats every peer" would be vacuous there).

The 95% interval is Wilson's score interval for a proportion, with KING as
the proportion and the number of (topic, held-out model) cases as n
(exact when every topic has the same number of models, as in SummEval and
DUC; otherwise an approximation).

ORANGE (Lin & Och 2004, as in Asiya): P(QUEEN_{M∖{h}}(a) ≤ QUEEN_{M∖{h}}(h))
over every (topic, held-out model h, peer a), pooled.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(p: float, n: int, z: float = Z95):
    """Wilson score interval (low, high) of a proportion ``p`` over ``n``."""
    if n <= 0:
        return (float("nan"), float("nan"))
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def king_table(cases, set_sizes):
    """The ``king/`` table: task, metric_set, n_metrics, king, ci_low,
    ci_high, n_cases, from the ``case`` rows of
    :func:`qarla_spark.measures.queen.topic_results` (one per topic and set:
    wins and cases) joined with ``set_sizes`` (set_id, metric_set,
    n_metrics)."""
    from pyspark.sql import functions as F

    king = (cases.groupBy("task", "set_id")
            .agg(F.avg(F.col("win") / F.col("n_cases")).alias("king"),
                 F.sum("n_cases").alias("n_cases")))
    low, high = _wilson_columns(F.col("king"), F.col("n_cases").cast("double"))
    return (king.join(F.broadcast(set_sizes), "set_id")
            .select("task", "metric_set", "n_metrics", "king", low.alias("ci_low"),
                    high.alias("ci_high"), F.col("n_cases").cast("long").alias("n_cases")))


def orange_table(cases, set_sizes):
    """The ``orange/`` table: task, metric_set, n_metrics, score (``QUEEN``),
    orange, n_cases (pooled over every (topic, held-out model, peer)); the
    plain-score rows come from
    :func:`~qarla_spark.measures.plain.orange_plain_table`."""
    from pyspark.sql import functions as F
    return (cases.groupBy("task", "set_id")
            .agg((F.sum("n_le") / F.sum("n_peers")).alias("orange"),
                 F.sum("n_peers").alias("n_cases"))
            .join(F.broadcast(set_sizes), "set_id")
            .select("task", "metric_set", "n_metrics", F.lit("QUEEN").alias("score"), "orange",
                    F.col("n_cases").cast("long").alias("n_cases")))


def _wilson_columns(p, n, z: float = Z95):
    """:func:`wilson` as Spark column expressions."""
    from pyspark.sql import functions as F
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * F.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return F.greatest(F.lit(0.0), centre - half), F.least(F.lit(1.0), centre + half)
