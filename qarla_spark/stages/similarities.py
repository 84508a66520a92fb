"""The similarity stage: every metric on every ordered same-topic pair
(SPEC §2), user metric tables appended — or the table of an earlier run
reused (``--similarities``)."""

from __future__ import annotations

from typing import Any, Dict, Sequence, Tuple

from qarla_spark.errors import ConfigError, InputError, Problem
from qarla_spark.io import Testbed
from qarla_spark.names import check_metric_name
from qarla_spark.metrics import registry

SIMILARITY_COLUMNS = ("task", "topic", "summarizer_s", "summarizer_r", "metric", "value")


def plan_metrics(config) -> Tuple[str, ...]:
    """Load the metric plugins and resolve ``config.metrics`` (built-in and
    registered Python metrics; user tables are added as they come) — before
    Spark reads anything, so that a typo fails at once."""
    registry.load_plugins(config.metric_plugins)
    metrics = registry.resolve_metrics(config.metrics)
    if "GRAMSIM" in metrics:
        from qarla_spark.metrics.tagging import get_tagger
        get_tagger(config.tagger)  # unknown or missing tagger: fail now
    return metrics


def tvm_basis(tasks) -> Dict[str, Dict[str, int]]:
    """Per task of the testbed's description (``TaskStats``): its topics
    whose TVM terms come from source documents, and those that pool the
    model summaries instead (for run.json)."""
    return {t.task: {"topics_with_sources": int(t.n_topics_with_sources),
                     "topics_with_pooled_models": int(t.n_topics - t.n_topics_with_sources)}
            for t in tasks}


def compute(config, testbed: Testbed, metrics: Sequence[str], tasks=()):
    """(rows, similarities, info): the cube rows of every topic, persisted
    (None with user metric tables: the cube is then built from the long
    table), the lazy long similarity table and what ``run.json`` says of
    it. ``tasks``: the testbed's description (``ValidationReport.tasks``)."""
    from qarla_spark.spark import cache
    from qarla_spark.stages.similarity_plan import add_user_tables, compute_cube, cube_to_long

    rows = compute_cube(testbed.summaries, metrics, testbed.sources,
                        options={"tagger": config.tagger})
    if not config.user_metrics:
        rows = cache.persist(rows)
        added: Sequence[str] = ()
        sims = None         # planned only if Spark writes it (the fallback below)
    else:
        sims, added = add_user_tables(cube_to_long(rows, metrics), testbed.summaries,
                                      config.user_metrics, metrics)
    info: Dict[str, Any] = {
        "metrics": list(metrics) + list(added),
        "n_metrics": len(metrics) + len(added),
        "computed_metrics": list(metrics),
        "user_table_metrics": list(added),
        "user_function_metrics": [m for m in metrics if m not in registry.BUILTIN],
        "user_tables": list(config.user_metrics),
    }
    families = {registry.BUILTIN[m].family for m in metrics if m in registry.BUILTIN}
    if "tvm" in families:
        info["tvm_terms_from"] = tvm_basis(tasks)
    if "gramsim" in families:
        info["gramsim_tagger"] = config.tagger
    if not config.user_metrics:
        # the executors write the long table from the cube rows (pyarrow),
        # where they share the run's folder; elsewhere Spark writes ``sims``
        from qarla_spark.spark.output import ExecutorTable
        from qarla_spark.stages.similarity_plan import long_arrow
        sims = ExecutorTable(rows, long_arrow(metrics), lambda: cube_to_long(rows, metrics))
    return (None if config.user_metrics else rows), sims, info


def reuse(spark, path: str, testbed: Testbed):
    """(similarities, info) of an earlier run's table (``--similarities``):
    its columns and metric names are checked, and its pairs must be those of
    this testbed."""
    from pyspark.sql import functions as F

    def bad(message, field=None, header="bad --similarities"):
        return InputError([Problem("error", path, None, field, message)], header=header)

    try:
        sims = spark.read.parquet(path)
    except Exception as exc:
        raise bad(f"cannot read the similarity table: {str(exc).splitlines()[0]}") from None
    missing = [c for c in SIMILARITY_COLUMNS if c not in sims.columns]
    if missing:
        raise bad("not a similarity table: missing column(s) " + ", ".join(missing),
                  ", ".join(missing))
    sims = sims.select(*SIMILARITY_COLUMNS)
    names = sorted(r["metric"] for r in sims.select("metric").distinct().collect())
    for name in names:
        try:
            check_metric_name(name)
        except ConfigError as exc:
            raise bad(str(exc), "metric") from None
    pairs = sims.select("task", "topic", "summarizer_s", "summarizer_r").distinct()
    known = testbed.summaries.select("task", "topic", F.col("summarizer").alias("summarizer_s"))
    stray = pairs.join(known, ["task", "topic", "summarizer_s"], "left_anti").limit(5).collect()
    if stray:
        raise InputError([Problem("error", path, None, None,
                                  f"pair ({r.task}, {r.topic}, {r.summarizer_s}, "
                                  f"{r.summarizer_r}) names a summary not in the input")
                          for r in stray], header="--similarities does not match the input")
    return sims, {"reused": path, "metrics": list(names), "n_metrics": len(names)}
