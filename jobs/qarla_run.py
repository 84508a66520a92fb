"""spark-submit entry point: the same run as ``qarla run``, from a TOML file.

    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/spark-submit \\
        --properties-file conf/local.conf \\
        jobs/qarla_run.py --config conf/summeval.toml

On a cluster, ship the package with the job (see the README, "Running on a
cluster") and pass ``--master``/``--deploy-mode`` to spark-submit: its
settings win over the profile named in the run file.
"""

from __future__ import annotations

import argparse
import sys

from qarla_spark import pipeline
from qarla_spark.cli import check_small_first, config_from_args, guarded
from qarla_spark.config import load_config
from qarla_spark.io.files import is_local
from qarla_spark.memory import use_system_arrow_pool
from qarla_spark.options import OPTIONS, add_arguments
from qarla_spark.progress import SparkCounter, TerminalProgress
from qarla_spark.spark.session import build_session


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="qarla_run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, "job", OPTIONS)  # --config (required), --out, --seed, ...
    args = parser.parse_args(argv)
    use_system_arrow_pool()   # a driver (qarla_spark.memory)

    def go() -> int:
        progress = TerminalProgress()   # the same lines as `qarla run`, in a log
        checked = None
        if is_local(args.config):
            config = config_from_args(args, load_config(args.config))
            # the testbed's size picks the executors' flags of a small one
            checked = check_small_first(config, progress)
            spark = build_session(config.profile, config.master, config.spark_conf,
                                  summaries=None if checked is None else
                                  checked.report.n_summaries)
        else:
            # a run file on HDFS, S3...: read through Hadoop once Spark runs
            # (spark-submit's settings; the file cannot set profile, master
            # or spark_conf)
            spark = build_session()
            config = config_from_args(args, load_config(args.config, spark=spark))
        progress.counter = SparkCounter(spark.sparkContext)
        try:
            result = pipeline.run(spark, config, command=sys.argv, progress=progress,
                                  checked=checked)
        finally:
            progress.close()
        print(result.summary(testbed=not progress.printed_testbed))
        return 0

    return guarded(go, args.debug)


if __name__ == "__main__":
    sys.exit(main())
