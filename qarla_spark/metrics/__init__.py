"""Similarity metrics of SPEC §2: pure kernels (no Spark).

- :mod:`~qarla_spark.metrics.registry`: metric names, descriptions, selection,
  user-registered Python metrics;
- :mod:`~qarla_spark.metrics.rouge`: ROUGE kinds 1 2 3 4 S4 SU4 L W-1.2 from
  sufficient statistics, exact to ROUGE-1.5.5 (two defects corrected);
- :mod:`~qarla_spark.metrics.tvm`, :mod:`~qarla_spark.metrics.avls`,
  :mod:`~qarla_spark.metrics.gramsim` (with :mod:`~qarla_spark.metrics.tagging`);
- :mod:`~qarla_spark.metrics.battery`: one topic's whole battery, every
  ordered pair, each summary prepared once.
"""
