"""The stages of a run, in order: :mod:`~qarla_spark.stages.testbed`,
:mod:`~qarla_spark.stages.similarities`, :mod:`~qarla_spark.stages.qarla`,
:mod:`~qarla_spark.stages.hbr` and :mod:`~qarla_spark.stages.statistics`;
each a few rounds (:mod:`qarla_spark.spark.rounds`) of per-topic kernels and
per-task reduces over every task at once. The statistics stage's
judge-based groups are :mod:`~qarla_spark.stages.judges`; what it reads of
the QARLA and HBR stages, :mod:`~qarla_spark.stages.statistics_inputs`.

Each returns its tables by their declared names
(:mod:`qarla_spark.tables`) and a named result the run prints
(:mod:`qarla_spark.summary`) and records in ``run.json``. Spark plans are
lazy; what reaches the driver is collected in the stage modules only, and is
small (per task and metric set, never per topic or summary).
"""
