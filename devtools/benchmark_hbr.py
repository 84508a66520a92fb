"""Benchmark: the HBR stage on SummEval and on a synthetic 1,000-topic
testbed of the same shape — one run.

1. SummEval (bundled; similarities computed once, or ``--similarities``):
   the HBR stage as ``qarla run`` runs it (topic cube given, 48 R/Rpre
   measures, 10,000 sampled pairs, every table written). Target: < 60 s.
   Then the same in exact mode (all 24,000 ordered peer pairs), and how far
   the sampled H of every needed set is from the exact one, in standard
   errors.
2. Synthetic testbeds with SummEval's shape (11 models, 16 peers per topic,
   48 measures), generated on the executors (a seeded hash per value, a
   latent quality per summary so that measures agree more often than not,
   one judged criterion): 100 topics, then ``--synthetic-topics`` (default
   1,000). The driver's resident memory (Python process, /proc/self/status)
   is printed after each: it must not grow with the number of topics (the
   driver only receives the sample's masks and per-task results).

    python -m devtools.benchmark_hbr [--synthetic-topics 1000] [--similarities PATH]
    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/spark-submit devtools/benchmark_hbr.py
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


def synthetic(spark, n_topics: int, n_measures: int, seed: int, n_models: int = 11,
              n_peers: int = 16):
    """(similarities, summaries, judgments) of a synthetic task, built on the
    executors from ``spark.range`` (no data on the driver)."""
    from pyspark.sql import functions as F

    def u(*cols):   # a seeded uniform in [0, 1) from a 64-bit hash
        return (F.abs(F.xxhash64(F.lit(seed), *cols)) % 1_000_003) / 1_000_003.0

    n = n_models + n_peers
    people = (spark.range(n_topics).withColumnRenamed("id", "t")
              .crossJoin(spark.range(n).withColumnRenamed("id", "k"))
              .select(F.lit("synthetic").alias("task"),
                      F.format_string("t%04d", "t").alias("topic"),
                      F.when(F.col("k") < n_models, F.format_string("m%02d", "k"))
                      .otherwise(F.format_string("p%02d", F.col("k") - n_models))
                      .alias("summarizer"),
                      F.when(F.col("k") < n_models, "model").otherwise("peer").alias("role")))
    quality = people.select("task", "topic", "summarizer", "role",
                            u(F.lit("q"), "topic", "summarizer").alias("q"))
    summaries = quality.select("task", "topic", "summarizer", "role", F.lit("").alias("text"))
    s = quality.select("task", "topic", F.col("summarizer").alias("summarizer_s"),
                       F.col("q").alias("qs"))
    r = quality.select("task", "topic", F.col("summarizer").alias("summarizer_r"))
    metrics = spark.range(n_measures).select(F.format_string("R-%d.a", "id").alias("metric"))
    sims = (s.join(r, ["task", "topic"]).filter(F.col("summarizer_s") != F.col("summarizer_r"))
            .crossJoin(metrics)
            .select("task", "topic", "summarizer_s", "summarizer_r", "metric",
                    (0.6 * F.col("qs") + 0.4 * u("topic", "summarizer_s", "summarizer_r",
                                                 "metric")).alias("value")))
    judgments = (quality.filter(F.col("role") == "peer")
                 .select("task", "topic", "summarizer", F.lit("quality").alias("criterion"),
                         F.round(1 + 4 * (0.7 * F.col("q") + 0.3 * u(F.lit("j"), "topic",
                                                                       "summarizer")))
                         .alias("score")))
    names = [f"R-{i}.a" for i in range(n_measures)]
    return sims, summaries, judgments, names


def time_stage(cube, judgments, out_dir, n_pairs, exact, seed):
    """The HBR stage as a run does it, its tables written (declared columns)."""
    from qarla_spark.config import RunConfig
    from qarla_spark.stages.hbr import run_hbr
    from qarla_spark.tables import table
    start = time.perf_counter()
    res = run_hbr(cube, judgments, RunConfig(hbr_pairs=n_pairs, hbr_exact=exact, seed=seed))
    for name, df in res.tables.items():
        df.select(*table(name).column_names).write.mode("overwrite").parquet(f"{out_dir}/{name}")
    return time.perf_counter() - start, res


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--similarities", default=None,
                        help="reuse this SummEval similarity table (default: compute it)")
    parser.add_argument("--pairs", type=int, default=10_000, help="sampled pairs (default 10000)")
    parser.add_argument("--synthetic-topics", type=int, default=1000,
                        help="topics of the large synthetic testbed (default 1000)")
    parser.add_argument("--synthetic-measures", type=int, default=48,
                        help="measures of the synthetic testbeds (default 48, as SummEval's)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--master", default=None, help="Spark master (default: the profile's)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)
    from qarla_spark.memory import use_system_arrow_pool
    use_system_arrow_pool()   # as the qarla command's driver (qarla_spark.memory)

    import pandas as pd

    from devtools.bench_common import rss_mb, summeval_similarities
    from qarla_spark import __version__
    from qarla_spark.spark import cache
    from qarla_spark.stages.cube import TopicCube
    from qarla_spark.spark.session import build_session

    spark = build_session(master=args.master)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        # each part releases what it cached (as a run does) before the next
        with cache.scope():
            testbed, _, sims, metrics = summeval_similarities(spark, tmp, args.similarities)
            cube = TopicCube.build(sims, testbed.summaries, metrics)
            sampled_s, sampled = time_stage(cube, testbed.judgments, f"{tmp}/s",
                                            args.pairs, False, args.seed)
            exact_s, exact = time_stage(cube, testbed.judgments, f"{tmp}/e",
                                        args.pairs, True, args.seed)
        a = pd.read_parquet(f"{tmp}/s/heterogeneity").set_index("measure_set")
        b = pd.read_parquet(f"{tmp}/e/heterogeneity").set_index("measure_set")
        z = ((a.h - b.h.reindex(a.index)).abs() / a.std_error.clip(lower=1e-12))
        results["summeval"] = {"sampled_s": sampled_s, "exact_s": exact_s,
                               "sets": len(a), "within_3_se": float((z <= 3).mean()),
                               "max_se": float(z.max()), "exact_pairs": int(b.n_pairs.iloc[0])}

        for n_topics in (100, args.synthetic_topics):
            s_df, m_df, j_df, names = synthetic(spark, n_topics, args.synthetic_measures,
                                                args.seed)
            start = time.perf_counter()
            path = f"{tmp}/synthetic{n_topics}"
            s_df.write.parquet(path)
            gen_s = time.perf_counter() - start
            with cache.scope():
                start = time.perf_counter()
                syn_cube = TopicCube.build(spark.read.parquet(path), m_df, names)
                cube_s = time.perf_counter() - start
                stage_s, _ = time_stage(syn_cube, j_df, f"{tmp}/h{n_topics}", args.pairs,
                                        False, args.seed)
            results[f"synthetic_{n_topics}"] = {"generate_s": gen_s, "cube_s": cube_s,
                                                "hbr_s": stage_s, "driver_rss_mb": rss_mb()}

    s = results["summeval"]
    print(f"qarla_spark {__version__}, Spark {spark.version} ({spark.sparkContext.master}, "
          f"{spark.sparkContext.defaultParallelism} cores), Python {platform.python_version()}, "
          f"seed {args.seed}")
    print(f"SummEval HBR stage ({len(sampled.measures)} measures, {args.pairs:,} sampled "
          f"pairs, tables written): {s['sampled_s']:.1f} s (target < 60 s)")
    print(f"SummEval HBR stage, exact ({s['exact_pairs']:,} pairs): {s['exact_s']:.1f} s; "
          f"sampled H of {s['sets']:,} needed sets within 3 standard errors of exact: "
          f"{s['within_3_se']:.1%} (largest {s['max_se']:.1f} SE)")
    for n_topics in (100, args.synthetic_topics):
        r = results[f"synthetic_{n_topics}"]
        print(f"synthetic {n_topics:,} topics (11 models, 16 peers, {args.synthetic_measures} "
              f"measures): generated {r['generate_s']:.1f} s, cube {r['cube_s']:.1f} s, HBR stage "
              f"{r['hbr_s']:.1f} s; driver RSS {r['driver_rss_mb']:.0f} MB")
    small, large = results["synthetic_100"], results[f"synthetic_{args.synthetic_topics}"]
    print(f"driver memory: {large['driver_rss_mb'] - small['driver_rss_mb']:+.0f} MB from 100 to "
          f"{args.synthetic_topics:,} topics (baseline: the 100-topic run)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"version": __version__, "seed": args.seed, "pairs": args.pairs,
                       **results}, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
