"""AUC meta-evaluation of measures and HBR against human judgments (SPEC §9,
paper 001 §4.2, §5).

AUC(x) = P( x(s) > x(s') | Q(s) > Q(s') ) over ordered pairs of judged
summaries of the same topic, Q a human criterion; a tie x(s) = x(s') counts
1/2. Tables (every measure of the HBR set and ``HBR`` itself):

- ``auc/``: task, criterion, measure, scope, auc, n_pairs — scope ``all``
  (pairs pooled over topics), ``consistent`` / ``inconsistent`` (pooled over
  the topics where every single measure has AUC > 0.5 / the others), or a
  topic id (that topic alone);
- ``robustness/``: task, criterion, measure, worst10_rank — per topic the
  measures are ranked by AUC (average ranks for ties) and the rank scaled to
  [0, 1] (1 = best); a measure's robustness is the mean of its scaled rank
  over the ceil(10%) of topics where it ranks worst (paper 001, Fig. 3);
- ``hetero_curve/``: task, criterion, bin, mean_h, p_quality_increase — the
  ordered pairs of judged summaries sorted by H({x: x(s) ≥ x(s')}) (ties by
  topic and names), cut into 100 bins of equal size (Spark's ``ntile``): per
  bin the mean H and P(Q(s) ≥ Q(s')) (paper 001, Fig. 1).
"""

from __future__ import annotations

HBR = "HBR"


def long_scores(scores, measures, hbr):
    """(task, topic, summarizer, measure, x): each measure of the arrays in
    ``scores`` (:func:`~qarla_spark.measures.hbr.summary_scores`) and HBR."""
    from pyspark.sql import functions as F
    names = F.array(*[F.lit(m) for m in measures])
    single = (scores.select("task", "topic", "summarizer",
                            F.explode(F.arrays_zip(names.alias("measure"), F.col("x").alias("v")))
                            .alias("mv"))
              .select("task", "topic", "summarizer", F.col("mv.measure").alias("measure"),
                      F.col("mv.v").alias("x")))
    return single.unionByName(hbr.select("task", "topic", "summarizer",
                                         F.lit(HBR).alias("measure"), F.col("hbr").alias("x")))


def topic_auc(long, judgments):
    """(task, criterion, measure, topic, num, n_pairs): per topic, Σ over
    the ordered pairs with Q(s) > Q(s') of 1[x(s) > x(s')] + ½·1[x(s) = x(s')]."""
    from pyspark.sql import functions as F
    j1 = judgments.select("task", "topic", "criterion", F.col("summarizer").alias("s"),
                          F.col("score").alias("q1"))
    j2 = judgments.select("task", "topic", "criterion", F.col("summarizer").alias("s2"),
                          F.col("score").alias("q2"))
    better = (j1.join(j2, ["task", "topic", "criterion"])
              .filter((F.col("s") != F.col("s2")) & (F.col("q1") > F.col("q2")))
              .select("task", "topic", "criterion", "s", "s2"))
    x1 = long.select("task", "topic", F.col("summarizer").alias("s"), "measure",
                     F.col("x").alias("x1"))
    x2 = long.select("task", "topic", F.col("summarizer").alias("s2"), "measure",
                     F.col("x").alias("x2"))
    win = (F.when(F.col("x1") > F.col("x2"), 1.0)
           .when(F.col("x1") == F.col("x2"), 0.5).otherwise(0.0))
    return (better.join(x1, ["task", "topic", "s"]).join(x2, ["task", "topic", "s2", "measure"])
            .groupBy("task", "criterion", "measure", "topic")
            .agg(F.sum(win).alias("num"), F.count(F.lit(1)).alias("n_pairs")))


def auc_table(per_topic):
    """The ``auc/`` table from :func:`topic_auc`."""
    from pyspark.sql import functions as F
    with_auc = per_topic.withColumn("auc", F.col("num") / F.col("n_pairs"))
    consistent = (with_auc.filter(F.col("measure") != HBR)
                  .groupBy("task", "criterion", "topic")
                  .agg(F.min("auc").alias("worst"))
                  .select("task", "criterion", "topic",
                          F.when(F.col("worst") > 0.5, "consistent").otherwise("inconsistent")
                          .alias("kind")))
    topic_rows = with_auc.select("task", "criterion", "measure", F.col("topic").alias("scope"),
                                 "auc", F.col("n_pairs").cast("long").alias("n_pairs"))

    def pooled(df, scope):
        return (df.groupBy("task", "criterion", "measure", *([scope] if scope != "all" else []))
                .agg((F.sum("num") / F.sum("n_pairs")).alias("auc"),
                     F.sum("n_pairs").cast("long").alias("n_pairs")))

    everything = pooled(per_topic, "all").select("task", "criterion", "measure",
                                                  F.lit("all").alias("scope"), "auc", "n_pairs")
    by_kind = pooled(per_topic.join(consistent, ["task", "criterion", "topic"]), "kind") \
        .select("task", "criterion", "measure", F.col("kind").alias("scope"), "auc", "n_pairs")
    return everything.unionByName(by_kind).unionByName(topic_rows)


def robustness_table(per_topic, share: float = 0.1):
    """The ``robustness/`` table from :func:`topic_auc`."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from qarla_spark.measures.agreement import _avg_rank
    part = ["task", "criterion", "topic"]
    auc = per_topic.withColumn("auc", F.col("num") / F.col("n_pairs"))
    n = F.count(F.lit(1)).over(Window.partitionBy(*part))
    scaled = auc.withColumn("r", _avg_rank("auc", part)).withColumn(
        "scaled", F.when(n > 1, (F.col("r") - 1) / (n - 1)).otherwise(F.lit(1.0)))
    topics = F.count(F.lit(1)).over(Window.partitionBy("task", "criterion", "measure"))
    order = Window.partitionBy("task", "criterion", "measure").orderBy("scaled", "topic")
    worst = (scaled.withColumn("k", F.ceil(topics * share))
             .withColumn("i", F.row_number().over(order))
             .filter(F.col("i") <= F.col("k")))
    return worst.groupBy("task", "criterion", "measure").agg(F.avg("scaled").alias("worst10_rank"))


def hetero_curve_table(pairs, hetero, judgments, bins: int = 100):
    """The ``hetero_curve/`` table (see the module doc)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    h = pairs.join(hetero.select("task", "need", "h"), ["task", "need"]) \
        .select("task", "topic", "s", "s2", "h")
    j1 = judgments.select("task", "topic", "criterion", F.col("summarizer").alias("s"),
                          F.col("score").alias("q1"))
    j2 = judgments.select("task", "topic", "criterion", F.col("summarizer").alias("s2"),
                          F.col("score").alias("q2"))
    joined = h.join(j1, ["task", "topic", "s"]).join(j2, ["task", "topic", "criterion", "s2"])
    w = Window.partitionBy("task", "criterion").orderBy("h", "topic", "s", "s2")
    return (joined.withColumn("bin", F.ntile(bins).over(w))
            .groupBy("task", "criterion", "bin")
            .agg(F.avg("h").alias("mean_h"),
                 F.avg((F.col("q1") >= F.col("q2")).cast("double")).alias("p_quality_increase")))
