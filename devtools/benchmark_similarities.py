"""Benchmark: the similarity battery through Spark vs rouge-score, one run.

Baseline (named ``rouge-score``): Google's ``rouge-score`` package, rouge1,
rouge2 and rougeLsum with ``use_stemmer=True``, one process, on a seeded
sample of ordered SummEval pairs (each pair scored once; rougeLsum given the
SPEC sentence split, one sentence per line).

Contender (named ``battery``): ``compute_similarities`` on all 70,200 ordered
pairs of the bundled SummEval testbed (100 topics x 27 x 26), the full
battery (59 metrics by default), through Spark, written as Parquet (what a
run writes). It is timed twice in the same session: ``cold`` (Python workers
start, numba kernels load) and ``warm``.

Both throughputs are ordered pairs per second; the ratio is battery pairs/s
over rouge-score pairs/s (the battery computing 59 metrics, rouge-score 3).

    python -m devtools.benchmark_similarities [--sample 1500] [--metrics default]
    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/spark-submit devtools/benchmark_similarities.py

Needs the dev extra (``pip install -e '.[dev]'``) for rouge-score.
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import random
import sys
import tempfile
import time
from importlib import resources


def summeval_rows():
    path = resources.files("qarla_spark") / "data" / "summeval" / "summaries.jsonl.gz"
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def sample_pairs(rows, n, seed):
    by_topic = {}
    for r in rows:
        by_topic.setdefault(r["topic"], []).append(r["text"])
    pairs = [(s, r) for texts in by_topic.values() for s in texts for r in texts if s is not r]
    rng = random.Random(seed)
    return rng.sample(pairs, min(n, len(pairs))), len(pairs)


def time_rouge_score(pairs):
    from rouge_score import rouge_scorer

    from qarla_spark.text.tokenize import split_sentences

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)
    prepared = [("\n".join(split_sentences(s)), "\n".join(split_sentences(r))) for s, r in pairs]
    start = time.perf_counter()
    for s, r in prepared:
        scorer.score(r, s)
    return time.perf_counter() - start


def time_battery(spark, testbed, metrics, out_dir):
    from qarla_spark.stages.similarity_plan import compute_similarities

    start = time.perf_counter()
    sims = compute_similarities(testbed.summaries, metrics, testbed.sources)
    sims.write.mode("overwrite").parquet(out_dir)
    elapsed = time.perf_counter() - start
    rows = spark.read.parquet(out_dir).count()
    return elapsed, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=1500,
                        help="ordered pairs scored by rouge-score (default 1500)")
    parser.add_argument("--metrics", default="default", help="battery selection (default: 59)")
    parser.add_argument("--seed", type=int, default=13, help="seed of the pair sample")
    parser.add_argument("--master", default=None, help="Spark master (default: the profile's)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)

    from qarla_spark import __version__
    from qarla_spark.io import bundled_inputs, load_testbed
    from qarla_spark.metrics import registry
    from qarla_spark.metrics.rouge_lcs import BACKEND as lcs_backend
    from qarla_spark.spark.session import build_session

    metrics = registry.resolve_metrics(args.metrics)
    pairs, n_pairs = sample_pairs(summeval_rows(), args.sample, args.seed)
    baseline_s = time_rouge_score(pairs)
    baseline = len(pairs) / baseline_s

    spark = build_session(master=args.master)
    testbed, report = load_testbed(spark, bundled_inputs())
    report.raise_for_errors()
    testbed.summaries.persist().count()
    testbed.sources.persist().count()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label in ("cold", "warm"):
            elapsed, rows = time_battery(spark, testbed, metrics, f"{tmp}/{label}")
            assert rows == n_pairs * len(metrics), (rows, n_pairs, len(metrics))
            results[label] = {"seconds": round(elapsed, 3), "pairs_per_s": n_pairs / elapsed,
                              "ratio": (n_pairs / elapsed) / baseline}

    print(f"qarla_spark {__version__}, Spark {spark.version} ({spark.sparkContext.master}, "
          f"{spark.sparkContext.defaultParallelism} cores), Python {platform.python_version()}, "
          f"LCS backend {lcs_backend}, seed {args.seed}")
    print(f"baseline rouge-score (rouge1, rouge2, rougeLsum; stemmer; 1 process): "
          f"{len(pairs):,} ordered pairs in {baseline_s:.2f} s = {baseline:,.0f} pairs/s")
    for label, r in results.items():
        print(f"battery {label} ({len(metrics)} metrics, Spark, all {n_pairs:,} ordered pairs, "
              f"Parquet written): {r['seconds']:.2f} s = {r['pairs_per_s']:,.0f} pairs/s "
              f"= {r['ratio']:.1f}x rouge-score")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"version": __version__, "spark": spark.version, "seed": args.seed,
                       "master": spark.sparkContext.master,
                       "cores": spark.sparkContext.defaultParallelism,
                       "metrics": list(metrics), "baseline_pairs": len(pairs),
                       "baseline_pairs_per_s": baseline, "battery": results,
                       "ordered_pairs": n_pairs, "lcs_backend": lcs_backend}, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
