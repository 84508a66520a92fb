"""AUC meta-evaluation of measures and HBR against human judgments (SPEC §9,
paper 001 §4.2, §5): Spark plans of the HBR stage.

AUC(x) = P( x(s) > x(s') | Q(s) > Q(s') ) over ordered pairs of judged
summaries of the same topic, Q a human criterion; a tie x(s) = x(s') counts
1/2 — counted as the integer 2·wins + ties over 2·pairs, so pooled AUCs are
ratios of integer sums. Tables (every measure of the HBR set and ``HBR``):

- ``auc/``: task, criterion, measure, scope, auc, n_pairs — scope ``all``
  (pairs pooled over topics), ``consistent`` / ``inconsistent`` (pooled over
  the topics where every single measure has AUC > 0.5 / the others), or a
  topic id (that topic alone);
- ``robustness/``: task, criterion, measure, worst10_rank — per topic the
  measures are ranked by AUC (average ranks for ties) and the rank scaled to
  [0, 1] (1 = best); a measure's robustness is the exact mean of its scaled
  rank over the ceil(10%) of topics where it ranks worst (ties between
  topics by topic id; paper 001, Fig. 3);
- ``hetero_curve/``: task, criterion, bin, mean_h, p_quality_increase — the
  ordered pairs of judged summaries sorted by H({x: x(s) ≥ x(s')}) (ties by
  topic and names), cut into 100 bins of equal size (Spark's ``ntile``): per
  bin the exact mean H and P(Q(s) ≥ Q(s')) (paper 001, Fig. 1).
"""

from __future__ import annotations

from qarla_spark.spark import cache
from qarla_spark.spark.grouped import exact_mean

HBR = "HBR"


def long_scores(scores, measures, hbr):
    """(task, topic, summarizer, measure, x): each measure of the arrays in
    ``scores`` (:func:`~qarla_spark.stages.hbr.summary_scores`) and HBR."""
    from pyspark.sql import functions as F
    names = F.array(*[F.lit(m) for m in measures])
    single = (scores.select("task", "topic", "summarizer",
                            F.explode(F.arrays_zip(names.alias("measure"), F.col("x").alias("v")))
                            .alias("mv"))
              .select("task", "topic", "summarizer", F.col("mv.measure").alias("measure"),
                      F.col("mv.v").alias("x")))
    return single.unionByName(hbr.select("task", "topic", "summarizer",
                                         F.lit(HBR).alias("measure"), F.col("hbr").alias("x")))


def _judged_pairs(judgments):
    from pyspark.sql import functions as F
    j1 = judgments.select("task", "topic", "criterion", F.col("summarizer").alias("s"),
                          F.col("score").alias("q1"))
    j2 = judgments.select("task", "topic", "criterion", F.col("summarizer").alias("s2"),
                          F.col("score").alias("q2"))
    return j1.join(j2, ["task", "topic", "criterion"]).filter(F.col("s") != F.col("s2"))


def topic_auc(long, judgments):
    """(task, criterion, measure, topic, wins2, n_pairs): per topic, over the
    ordered pairs with Q(s) > Q(s'), wins2 = 2·#[x(s) > x(s')] + #[x(s) =
    x(s')] (twice the AUC's numerator, an integer)."""
    from pyspark.sql import functions as F
    better = (_judged_pairs(judgments).filter(F.col("q1") > F.col("q2"))
              .select("task", "topic", "criterion", "s", "s2"))
    x1 = long.select("task", "topic", F.col("summarizer").alias("s"), "measure",
                     F.col("x").alias("x1"))
    x2 = long.select("task", "topic", F.col("summarizer").alias("s2"), "measure",
                     F.col("x").alias("x2"))
    win2 = F.when(F.col("x1") > F.col("x2"), 2).when(F.col("x1") == F.col("x2"), 1).otherwise(0)
    return (better.join(x1, ["task", "topic", "s"]).join(x2, ["task", "topic", "s2", "measure"])
            .groupBy("task", "criterion", "measure", "topic")
            .agg(F.sum(win2).cast("long").alias("wins2"),
                 F.count(F.lit(1)).cast("long").alias("n_pairs")))


def auc_table(per_topic):
    """The ``auc/`` table from :func:`topic_auc`: every AUC is one division
    of integer sums."""
    from pyspark.sql import functions as F

    def auc(wins2, n):
        return (F.col(wins2) / (2 * F.col(n))).alias("auc")

    # consistent: every single measure has AUC > 1/2, i.e. wins2 > n_pairs
    consistent = (per_topic.filter(F.col("measure") != HBR)
                  .groupBy("task", "criterion", "topic")
                  .agg(F.min(F.col("wins2") - F.col("n_pairs")).alias("margin"))
                  .select("task", "criterion", "topic",
                          F.when(F.col("margin") > 0, "consistent").otherwise("inconsistent")
                          .alias("kind")))
    topic_rows = per_topic.select("task", "criterion", "measure", F.col("topic").alias("scope"),
                                  auc("wins2", "n_pairs"), "n_pairs")

    def pooled(df, scope):
        return (df.groupBy("task", "criterion", "measure", *([scope] if scope != "all" else []))
                .agg(F.sum("wins2").alias("w"), F.sum("n_pairs").cast("long").alias("n_pairs"))
                .withColumn("auc", F.col("w") / (2 * F.col("n_pairs"))))

    everything = pooled(per_topic, "all").select("task", "criterion", "measure",
                                                  F.lit("all").alias("scope"), "auc", "n_pairs")
    by_kind = pooled(per_topic.join(consistent, ["task", "criterion", "topic"]), "kind") \
        .select("task", "criterion", "measure", F.col("kind").alias("scope"), "auc", "n_pairs")
    return everything.unionByName(by_kind).unionByName(topic_rows)


def robustness_table(per_topic, share: float = 0.1):
    """The ``robustness/`` table from :func:`topic_auc`. A scaled rank is
    (r − 1)/(n − 1) with r an average rank (a half-integer), kept as the
    integers 2(r − 1) and 2(n − 1) for the exact mean."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    part = ["task", "criterion", "topic"]
    auc = per_topic.withColumn("auc", F.col("wins2") / (2 * F.col("n_pairs")))
    n = F.count(F.lit(1)).over(Window.partitionBy(*part))
    ordered = Window.partitionBy(*part).orderBy("auc")
    same = Window.partitionBy(*part, "auc")
    twice_r = 2 * F.rank().over(ordered) + F.count(F.lit(1)).over(same) - 1   # 2r
    scaled = (auc.withColumn("n", n).withColumn("twice_r", twice_r)
              .withColumn("num", F.when(F.col("n") > 1, F.col("twice_r") - 2).otherwise(1))
              .withColumn("den", F.when(F.col("n") > 1, 2 * (F.col("n") - 1)).otherwise(1))
              .withColumn("scaled", F.col("num") / F.col("den")))
    topics = F.count(F.lit(1)).over(Window.partitionBy("task", "criterion", "measure"))
    order = Window.partitionBy("task", "criterion", "measure").orderBy("scaled", "topic")
    worst = (scaled.withColumn("k", F.ceil(topics * share))
             .withColumn("i", F.row_number().over(order))
             .filter(F.col("i") <= F.col("k")))
    return exact_mean(worst, ["task", "criterion", "measure"], "worst10_rank",
                      num="num", den="den")


def hetero_curve_table(pairs, hetero, judgments, bins: int = 100):
    """The ``hetero_curve/`` table (see the module doc); H of a pair is
    n_split / n_pairs of its needed set."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    h = (pairs.join(hetero.select("task", "need", "h", "n_split", F.col("n_pairs").alias("n")),
                    ["task", "need"])
         .select("task", "topic", "s", "s2", "h", "n_split", "n"))
    joined = h.join(_judged_pairs(judgments), ["task", "topic", "s", "s2"])
    w = Window.partitionBy("task", "criterion").orderBy("h", "topic", "s", "s2")
    # both aggregations read the binned pairs: computed once (a join and a
    # sort of every judged pair), not once per branch of the plan
    binned = cache.persist(joined.withColumn("bin", F.ntile(bins).over(w)))
    mean_h = exact_mean(binned, ["task", "criterion", "bin"], "mean_h", num="n_split", den="n")
    p = (binned.groupBy("task", "criterion", "bin")
         .agg((F.sum((F.col("q1") >= F.col("q2")).cast("long")) / F.count(F.lit(1)))
              .alias("p_quality_increase")))
    return mean_h.join(p, ["task", "criterion", "bin"]).select(
        "task", "criterion", "bin", "mean_h", "p_quality_increase")
