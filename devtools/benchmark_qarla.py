"""Benchmark: the QARLA stage on SummEval, and KING of all subsets of the
representatives in one pass vs one subset at a time — one run.

1. The similarity table of the bundled SummEval testbed (59 metrics) is
   computed once (or read with ``--similarities PATH``); not timed.
2. ``stage``: the whole QARLA stage as ``qarla run`` does it (topic cube,
   KING/ORANGE of the 59 metrics, clustering into 10 clusters, KING of the
   1,023 subsets of the representatives, QUEEN/JACK/curve/agreement tables
   of the detailed sets), every table written as Parquet. Target: < 60 s.
3. KING of all 2^k − 1 subsets of the stage's representatives:
   - ``one-pass`` (contender): one kernel pass over the cached topic cube,
     counting each summary's samples per distinct mask restricted to the
     representatives and summing over supersets (SPEC §6);
   - ``per-subset`` (baseline, named ``straightforward``): one evaluation
     per subset (its own kernel pass testing every sample against the
     subset, then the KING aggregation), timed on a seeded sample of
     subsets and extrapolated to all of them;
   - ``direct``: one kernel pass testing every sample against every subset
     (the one-pass layout without the superset sums), for reference.
   KING of the sampled subsets must be equal in all three (checked).

    python -m devtools.benchmark_qarla [--sample 20] [--similarities PATH]
    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/spark-submit devtools/benchmark_qarla.py
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # run as `python devtools/NAME.py` or by spark-submit: the repository root
    # on sys.path, for `devtools.*` (`python -m devtools.NAME` needs none)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def king_of(sets, method, cube):
    """KING of each set (one evaluation of the sets, counted with ``method``)."""
    from qarla_spark.measures.metric_sets import MetricSet
    from qarla_spark.stages.qarla import evaluate_sets
    king = evaluate_sets(cube, sets, detailed=[], method=method).king
    values = {}
    for r in king.select("task", "metric_set", "king").collect():
        values.setdefault(r["task"], {})[MetricSet.parse(r["metric_set"])] = r["king"]
    (kings,) = values.values()
    return kings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=20,
                        help="subsets evaluated one at a time by the baseline (default 20)")
    parser.add_argument("--similarities", default=None,
                        help="reuse this similarity table (default: compute it)")
    parser.add_argument("--seed", type=int, default=13, help="seed of the subset sample")
    parser.add_argument("--master", default=None, help="Spark master (default: the profile's)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)

    from devtools.bench_common import summeval_similarities
    from qarla_spark import __version__
    from qarla_spark.config import RunConfig
    from qarla_spark.measures.clustering import subsets
    from qarla_spark.thresholds import MIN_MODELS_QUEEN
    from qarla_spark.pipeline import write_tables
    from qarla_spark.spark import cache
    from qarla_spark.stages.cube import TopicCube
    from qarla_spark.spark.output import RunDirectory
    from qarla_spark.spark.session import build_session
    from qarla_spark.stages.qarla import run_qarla

    spark = build_session(master=args.master)
    with tempfile.TemporaryDirectory() as tmp:
        testbed, report, sims, metrics = summeval_similarities(spark, tmp, args.similarities)

        # 1. the whole stage, tables written
        config = RunConfig(out=f"{tmp}/run", seed=args.seed)
        out = RunDirectory(spark, config.out)
        start = time.perf_counter()
        with cache.scope():      # released after the stage, as a run does
            t0 = time.perf_counter()
            cube = TopicCube.build(sims, testbed.summaries, metrics)
            cube_s = time.perf_counter() - t0
            result = run_qarla(cube, testbed.summaries, testbed.judgments, config)
            written = {}
            write_tables(out, result.tables, written)
        stage_s = time.perf_counter() - start
        out.commit({"benchmark": True})
        info = result.info(config)
        info["timings"] = {"cube_s": cube_s, **info["timings"], **written}
        (task, task_info), = info["tasks"].items()
        reps = task_info["representatives"]

        # 2. all subsets of the representatives
        all_sets = subsets(reps)
        cube = TopicCube.build(sims, testbed.summaries, metrics).restrict(MIN_MODELS_QUEEN)
        start = time.perf_counter()
        one_pass = king_of(all_sets, "zeta", cube)
        one_pass_s = time.perf_counter() - start
        start = time.perf_counter()
        direct = king_of(all_sets, "direct", cube)
        direct_s = time.perf_counter() - start
        rng = random.Random(args.seed)
        sample = rng.sample(all_sets, min(args.sample, len(all_sets)))
        start = time.perf_counter()
        single = {}
        for chosen in sample:
            single.update(king_of([chosen], "direct", cube))
        per_subset_s = (time.perf_counter() - start) / len(sample)
        for name in sample:
            assert single[name] == one_pass[name] == direct[name], name
        assert direct == one_pass
    baseline_s = per_subset_s * len(all_sets)

    print(f"qarla_spark {__version__}, Spark {spark.version} ({spark.sparkContext.master}, "
          f"{spark.sparkContext.defaultParallelism} cores), Python {platform.python_version()}, "
          f"seed {args.seed}")
    print(f"SummEval: {len(metrics)} metrics, representatives of {len(reps)} clusters: "
          f"{', '.join(reps)}; best set {task_info['best_set']} "
          f"(KING {task_info['best_king']:.3f})")
    print(f"QARLA stage (similarities given, every table written): {stage_s:.1f} s "
          f"(target < 60 s)")
    print("  phases: " + ", ".join(f"{k[:-2]} {v:.1f} s" for k, v in info["timings"].items()
                                   if not k.startswith("write_")) +
          f"; writing tables {sum(v for k, v in info['timings'].items() if k.startswith('write_')):.1f} s")
    print(f"baseline straightforward (one evaluation per subset): {per_subset_s:.2f} s per subset "
          f"over {len(sample)} sampled subsets -> {baseline_s:.0f} s for all {len(all_sets):,}")
    print(f"direct (one pass, every sample tested against every subset): {direct_s:.2f} s "
          f"= {baseline_s / direct_s:.0f}x the baseline")
    print(f"one-pass (one pass, counts per distinct mask + superset sums): {one_pass_s:.2f} s "
          f"= {baseline_s / one_pass_s:.0f}x the baseline")
    print(f"KING of the {len(sample)} sampled subsets: equal in all three")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"version": __version__, "spark": spark.version, "seed": args.seed,
                       "stage_s": stage_s, "stage_timings": info["timings"],
                       "subsets": len(all_sets), "sample": [s.label for s in sample],
                       "per_subset_s": per_subset_s, "baseline_s": baseline_s,
                       "direct_s": direct_s, "one_pass_s": one_pass_s,
                       "representatives": reps}, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
