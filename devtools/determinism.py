"""Check: the bundled SummEval run gives bit-identical tables under other
masters and partitionings.

Runs ``qarla run`` (every stage, every table; ``--metric-set`` as given) on
the bundled testbed once per setting, each in its own process —
``local[1]``, ``local[2]``, and ``local[2]`` with 7 shuffle partitions and 5
topic partitions by default — then compares every table of every run with
the first one, floats bit for bit (:mod:`devtools.compare`). Exit
status 1 if any table differs.

    python -m devtools.determinism [--out runs/determinism] [--metric-set R-1.a,TVM.512]
    python -m devtools.determinism --compare-only   # the runs are already there
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # run as `python devtools/NAME.py` or by spark-submit: the repository root
    # on sys.path, for `devtools.*` (`python -m devtools.NAME` needs none)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SETTINGS = {
    "local1": ["--master", "local[1]"],
    "local2": ["--master", "local[2]"],
    "local2_sp7": ["--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=7",
                   "--conf", "spark.qarla.topicPartitions=5"],
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="runs/determinism",
                        help="folder of the runs (default runs/determinism)")
    parser.add_argument("--metric-set", action="append", default=["R-1.a,TVM.512"],
                        help="passed to every run (default R-1.a,TVM.512)")
    parser.add_argument("--compare-only", action="store_true",
                        help="compare runs already in --out")
    args = parser.parse_args(argv)

    from devtools.compare import compare_runs

    runs = {name: os.path.join(args.out, name) for name in SETTINGS}
    if not args.compare_only:
        for name, extra in SETTINGS.items():
            command = [sys.executable, "-m", "qarla_spark.cli", "run", "--out", runs[name],
                       "--overwrite", *[a for s in args.metric_set for a in ("--metric-set", s)],
                       *extra]
            start = time.perf_counter()
            done = subprocess.run(command, stdout=subprocess.DEVNULL)
            print(f"{name}: {' '.join(extra)}: {time.perf_counter() - start:.0f} s, "
                  f"exit {done.returncode}", flush=True)
            if done.returncode:
                return done.returncode
    first, *others = runs
    failed = False
    for other in others:
        found = compare_runs(runs[first], runs[other])
        same = [t for t, d in found.items() if not d]
        print(f"{other} vs {first}: {len(same)} of {len(found)} tables bit-identical")
        for table, diff in found.items():
            if diff:
                failed = True
                print(f"  {table}: " + "; ".join(diff))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
