"""qarla_spark: evaluate automatic summarizers without human judges.

QARLA (QUEEN, KING, JACK), metric clustering and Heterogeneity-Based Ranking
on Apache Spark. The exact definitions of every measure are in the project's
``docs/SPEC.md``. The package is in layers, each importing only those below
it (``.importlinter`` states them; ``make test`` checks them):

- :mod:`qarla_spark.cli`: the ``qarla`` command, parsing and dispatch;
- :mod:`qarla_spark.launcher`: how every run starts and ends (checks before
  Spark, messages, exit statuses, interrupts), for the CLI and the job;
- :mod:`qarla_spark.pipeline`: the run, stage by stage;
- :mod:`qarla_spark.report`, :mod:`qarla_spark.summary`: what a run shows;
- :mod:`qarla_spark.stages`: the stages' Spark plans (the topic cube, rounds
  of per-topic kernels and per-task reduces);
- :mod:`qarla_spark.io`: readers, schemas and validation of testbeds;
- :mod:`qarla_spark.spark`: Spark runtime — the session, partitioning,
  rounds, run directories, the package shipped to executors;
- :mod:`qarla_spark.measures`, :mod:`qarla_spark.metrics`,
  :mod:`qarla_spark.text`: the pure core (numpy kernels, the battery);
- :mod:`qarla_spark.config`, :mod:`qarla_spark.options`,
  :mod:`qarla_spark.tables`: every option and table, declared once;
- the floor, :mod:`qarla_spark.names` (with ``thresholds``, ``paths`` and
  ``errors``): the names every layer shares, defined once.
"""

__version__ = "0.1.0"

from qarla_spark.errors import (  # noqa: E402  (re-exported API)
    ConfigError,
    InputError,
    JavaNotFoundError,
    QarlaError,
)

__all__ = ["__version__", "QarlaError", "InputError", "ConfigError", "JavaNotFoundError"]
