"""What the benchmark jobs share: the bundled SummEval testbed and its
similarity table (computed once, untimed, or reused with --similarities)."""

from __future__ import annotations


def summeval_similarities(spark, tmp: str, reuse=None):
    """(testbed, report, similarities, metric names) of the bundled SummEval:
    validated (errors raise), the similarity table of the default battery
    written under ``tmp`` (or read from ``reuse``) and read back."""
    from qarla_spark.io import bundled_inputs, load_testbed
    from qarla_spark.metrics import registry
    from qarla_spark.spark.similarities import compute_similarities

    testbed, report = load_testbed(spark, bundled_inputs())
    report.raise_for_errors()
    path = reuse
    if not path:
        path = f"{tmp}/similarities"
        compute_similarities(testbed.summaries, registry.resolve_metrics("default"),
                             testbed.sources).write.parquet(path)
    sims = spark.read.parquet(path)
    metrics = sorted(r["metric"] for r in sims.select("metric").distinct().collect())
    return testbed, report, sims, metrics
