"""The stages of a run, in order: :mod:`~qarla_spark.stages.testbed`,
:mod:`~qarla_spark.stages.similarities`, :mod:`~qarla_spark.stages.qarla`
(with :mod:`~qarla_spark.stages.qarla_tables` and
:mod:`~qarla_spark.stages.clustering`) and :mod:`~qarla_spark.stages.hbr`
(with :mod:`~qarla_spark.stages.auc`).

Each returns its tables by their declared names
(:mod:`qarla_spark.tables`) and a named result the run prints
(:mod:`qarla_spark.summary`) and records in ``run.json``. Spark plans are
lazy; what reaches the driver is collected in the stage modules only, and is
small (per task and metric set, never per topic or summary).
"""
