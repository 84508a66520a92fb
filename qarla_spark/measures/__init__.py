"""The measures of SPEC §3-9 as pure functions (numpy, no Spark): what one
topic contributes, and the exact arithmetic that combines topics.

- :mod:`~qarla_spark.measures.metric_sets`: metric sets as values;
- :mod:`~qarla_spark.measures.exact`: exact means, rounded once;
- :mod:`~qarla_spark.measures.human`: human scores read as the rationals
  they stand for (thirds as thirds), their exact means;
- :mod:`~qarla_spark.measures.masks`: bit masks, QUEEN's samples;
- :mod:`~qarla_spark.measures.queen`: QUEEN of many sets as integer counts,
  KING's cases;
- :mod:`~qarla_spark.measures.jack`: JACK's covering pairs and growth curve;
- :mod:`~qarla_spark.measures.qarla_task`: what the QARLA stage computes
  once per task from its topics' counts (KING, ORANGE, system scores,
  correlations, the human-summariser test);
- :mod:`~qarla_spark.measures.king`: KING from its cases, Wilson's interval;
- :mod:`~qarla_spark.measures.plain`: plain scores (ORANGE's baseline);
- :mod:`~qarla_spark.measures.clustering`: the agglomerative clustering,
  representatives, subsets;
- :mod:`~qarla_spark.measures.agreement`: correlations, exact rankings, the
  human-summariser test;
- :mod:`~qarla_spark.measures.hbr`: HBR's scores, masks, split counts, the
  sample's keys (Spark's xxhash64), AUC counts;
- :mod:`~qarla_spark.measures.resampling`: bootstrap weights, intervals and
  sign-flip tests.
- :mod:`~qarla_spark.measures.group_statistics`: the intervals and paired
  tests of one group (a task's KING, a criterion's AUC, a set's
  correlations), as rows.
- :mod:`~qarla_spark.measures.meta_eval`: judge-based meta-evaluation
  (SPEC §11): pairwise accuracy, acc_eq and tie calibration, soft pairwise
  accuracy, significance clusters, chance scores.
- :mod:`~qarla_spark.measures.judge_statistics`: every measure against the
  judges (metric_eval/'s statistics, their kernels and intervals);
- :mod:`~qarla_spark.measures.ceiling`: the human ceiling (each rater
  against the mean of the others, metric_eval/'s rows of measure human);
- :mod:`~qarla_spark.measures.krippendorff`: agreement among the raters
  (Krippendorff's α, rater_agreement/);
- :mod:`~qarla_spark.measures.across_tasks`: the measures every task has,
  pooled over tasks (across/);
- :mod:`~qarla_spark.measures.pair_counts`: the statistics' exact counts
  compiled (numba), each with a numpy twin giving the same integers;
- :mod:`~qarla_spark.measures.streams`: the seeded Philox streams of many
  keys at once (numpy's generator's words);
- :mod:`~qarla_spark.measures.planning`: power and sample size over topics
  (issue 40: seeded topic trials, the paired t-test, stable rankings);
- :mod:`~qarla_spark.measures.ppi`: prediction-powered inference of a
  system's mean human score from a few judgments and a measure.

How many models and peers each measure needs is shared by every layer:
:mod:`qarla_spark.thresholds`. The stages (:mod:`qarla_spark.stages`) run
these over the topic cube with Spark.
"""
