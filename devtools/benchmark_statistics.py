"""Benchmark: what the statistics stage (bootstrap intervals and paired
tests, issue 11) adds to a run — one process.

1. The similarity table of the bundled SummEval testbed is computed once (or
   read with ``--similarities PATH``); not timed.
2. ``qarla run`` on SummEval with that table (every other stage, every
   table written) and ``--bootstrap N`` (default 1,000): the statistics
   stage's time and its ratio to the rest of the same run (the baseline,
   target ≤ 25%).
3. The same run with 4 × N replicates: the statistics stage's time, and the
   driver's resident memory after each run (it must not grow with the
   replicates: they live on the executors).

    python -m devtools.benchmark_statistics [--bootstrap 1000] [--similarities PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # run as `python devtools/NAME.py` or by spark-submit: the repository root
    # on sys.path, for `devtools.*` (`python -m devtools.NAME` needs none)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", type=int, default=1000, help="replicates (default 1000)")
    parser.add_argument("--similarities", default=None,
                        help="reuse this SummEval similarity table (default: compute it)")
    parser.add_argument("--master", default=None, help="Spark master (default: the profile's)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)
    from qarla_spark.memory import use_system_arrow_pool
    use_system_arrow_pool()   # as the qarla command's driver (qarla_spark.memory)

    from devtools.bench_common import rss_mb, summeval_similarities
    from qarla_spark import __version__, pipeline
    from qarla_spark.config import RunConfig
    from qarla_spark.spark.session import build_session

    spark = build_session(master=args.master)
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = args.similarities
        if not path:
            summeval_similarities(spark, tmp)
            path = f"{tmp}/similarities"
        for n in (args.bootstrap, 4 * args.bootstrap):
            start = time.perf_counter()
            result = pipeline.run(spark, RunConfig(out=f"{tmp}/run{n}", similarities=path,
                                                   bootstrap=n))
            elapsed = time.perf_counter() - start
            stats_s = result.info["timings"]["statistics_s"]
            runs[n] = {"elapsed_s": elapsed, "statistics_s": stats_s,
                       "rest_s": elapsed - stats_s, "driver_rss_mb": rss_mb(),
                       "timings": result.info["timings"]}

    first, more = runs[args.bootstrap], runs[4 * args.bootstrap]
    print(f"qarla_spark {__version__}, Spark {spark.version} ({spark.sparkContext.master}, "
          f"{spark.sparkContext.defaultParallelism} cores), Python {platform.python_version()}")
    print(f"SummEval run, similarities given, every table written, {args.bootstrap:,} "
          f"replicates: {first['elapsed_s']:.1f} s")
    print(f"statistics stage: {first['statistics_s']:.1f} s = {first['statistics_s'] / first['rest_s']:.1%} "
          f"of the rest of the run (baseline: the other stages, {first['rest_s']:.1f} s; "
          "target <= 25%)")
    print(f"with {4 * args.bootstrap:,} replicates: statistics stage {more['statistics_s']:.1f} s "
          f"= {more['statistics_s'] / first['statistics_s']:.2f}x the {args.bootstrap:,}-replicate "
          "stage")
    print(f"driver RSS after the run: {first['driver_rss_mb']:.0f} MB ({args.bootstrap:,} "
          f"replicates), {more['driver_rss_mb']:.0f} MB ({4 * args.bootstrap:,}): "
          f"{more['driver_rss_mb'] - first['driver_rss_mb']:+.0f} MB")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"version": __version__, "runs": runs}, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
