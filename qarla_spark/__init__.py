"""qarla_spark: evaluate automatic summarizers without human judges.

QARLA (QUEEN, KING, JACK), metric clustering and Heterogeneity-Based Ranking
on Apache Spark. The exact definitions of every measure are in the project's
``docs/SPEC.md``; the package layout follows the data flow:

- :mod:`qarla_spark.io`: readers, schemas and validation of testbeds;
- :mod:`qarla_spark.spark`: the SparkSession, partitioning, run directories;
- :mod:`qarla_spark.pipeline`: the run, stage by stage;
- :mod:`qarla_spark.cli`: the ``qarla`` command.
"""

__version__ = "0.1.0"

from qarla_spark.errors import (  # noqa: E402  (re-exported API)
    ConfigError,
    InputError,
    JavaNotFoundError,
    QarlaError,
)

__all__ = ["__version__", "QarlaError", "InputError", "ConfigError", "JavaNotFoundError"]
