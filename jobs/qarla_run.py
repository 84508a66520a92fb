"""spark-submit entry point: the same run as ``qarla run``, from a TOML file.

    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/spark-submit \\
        --properties-file conf/local.conf \\
        jobs/qarla_run.py --config conf/summeval.toml

On a cluster, ship the package with the job (see the README, "Running on a
cluster") and pass ``--master``/``--deploy-mode`` to spark-submit: its
settings win over the profile named in the run file. The run starts as
``qarla run`` starts it (:func:`qarla_spark.launcher.launch`: the same
checks, messages and exit statuses).
"""

from __future__ import annotations

import argparse
import sys

from qarla_spark.launcher import guarded, launch
from qarla_spark.memory import use_system_arrow_pool
from qarla_spark.options import OPTIONS, add_arguments


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="qarla_run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, "job", OPTIONS)  # --config (required), --out, --seed, ...
    args = parser.parse_args(argv)
    use_system_arrow_pool()   # a driver (qarla_spark.memory)
    return guarded(lambda: launch(args, command=sys.argv), args.debug)


if __name__ == "__main__":
    sys.exit(main())
