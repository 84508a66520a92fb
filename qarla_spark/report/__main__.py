"""``python -m qarla_spark.report RUN_DIR [--out FILE] [--figures DIR]``:
the report of a run (as ``qarla report``), or some of its figures as SVG
files (``--figures docs/img``: the README's images)."""

from __future__ import annotations

import argparse
import sys

from qarla_spark.errors import QarlaError
from qarla_spark.memory import use_system_arrow_pool
from qarla_spark.report import write_figures, write_report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qarla_spark.report")
    parser.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument("--out", metavar="FILE", help="default: RUN_DIR/report.html")
    parser.add_argument("--figures", metavar="DIR",
                        help="write the KING, ranking and AUC figures of the first task as SVG "
                             "files into DIR instead")
    args = parser.parse_args(argv)
    use_system_arrow_pool()   # a driver-like process (qarla_spark.memory)
    try:
        if args.figures:
            for path in write_figures(args.run_dir, args.figures):
                print(path)
        else:
            print(write_report(args.run_dir, args.out))
    except QarlaError as exc:
        print(f"qarla: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
