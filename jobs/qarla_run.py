"""spark-submit entry point: the same run as ``qarla run``, from a TOML file.

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/spark-submit \\
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
from qarla_spark.cli import guarded
from qarla_spark.config import load_config
from qarla_spark.spark.session import build_session


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="qarla_run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="TOML run configuration")
    parser.add_argument("--out", default=None, help="override the run file's 'out'")
    parser.add_argument("--seed", type=int, default=None, help="override the run file's 'seed'")
    parser.add_argument("--overwrite", action="store_true", default=None,
                        help="replace an existing run directory")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks")
    args = parser.parse_args(argv)

    def go() -> int:
        config = load_config(args.config).updated(out=args.out, seed=args.seed,
                                                  overwrite=args.overwrite)
        spark = build_session(config.profile, config.master, config.spark_conf)
        result = pipeline.run(spark, config, command=sys.argv)
        print(result.summary())
        return 0

    return guarded(go, args.debug)


if __name__ == "__main__":
    sys.exit(main())
