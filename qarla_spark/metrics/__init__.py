"""Similarity metrics of SPEC §2: pure kernels (no Spark).

- :mod:`~qarla_spark.metrics.registry`: metric names, descriptions, selection,
  user-registered Python metrics;
- :mod:`~qarla_spark.metrics.rouge`: ROUGE kinds 1 2 3 4 S4 SU4 L W-1.2 of
  every pair of a topic from sufficient statistics, exact to ROUGE-1.5.5 (two
  defects corrected), over :mod:`~qarla_spark.metrics.rouge_profiles` (one
  summary's units) and :mod:`~qarla_spark.metrics.rouge_lcs` (the union
  LCS/WLCS hits; compiled in :mod:`~qarla_spark.metrics.rouge_lcs_numba`);
- :mod:`~qarla_spark.metrics.tvm`, :mod:`~qarla_spark.metrics.avls`,
  :mod:`~qarla_spark.metrics.gramsim` (with :mod:`~qarla_spark.metrics.tagging`);
- :mod:`~qarla_spark.metrics.battery`: one topic's whole battery, every
  ordered pair, each summary prepared once.
"""
