"""The similarity stage: every metric on every ordered same-topic pair
(SPEC §2), user metric tables appended — or the table of an earlier run
reused (``--similarities``)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

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
    known = reused_metrics(config.similarities) if config.similarities else metrics
    if known is not None and not config.user_metrics:
        check_chosen_names(config.metric_sets, config.hbr_measures, known)
    return metrics


def reused_metrics(path: str) -> Optional[Tuple[str, ...]]:
    """The metrics of a reused similarity table (``--similarities``) as the
    ``run.json`` of its run lists them, when that file is local; ``None``
    when unknown before the table is read."""
    import json
    import os

    from qarla_spark.names import RUN_JSON
    from qarla_spark.paths import local_path
    folder = local_path(str(path).rstrip("/"))
    if folder is None:
        return None
    try:
        with open(os.path.join(os.path.dirname(folder) or ".", RUN_JSON), "rb") as f:
            found = json.load(f).get("similarities", {}).get("metrics")
    except (OSError, ValueError, AttributeError):
        return None
    return tuple(found) if isinstance(found, list) else None


def check_chosen_names(metric_sets: Sequence[str], hbr_measures: Sequence[str],
                       known: Sequence[str]) -> None:
    """Every name of ``--metric-set`` and every name or pattern of
    ``--hbr-measures`` (command line or run file) is one of the run's
    metrics ``known`` — checked before Spark starts, the closest names
    suggested (:class:`ConfigError`)."""
    import difflib
    from fnmatch import fnmatch
    known = list(known)
    wrong = []
    for text in metric_sets:
        for name in registry.split_names(text):
            if name not in known:
                wrong.append(("--metric-set / metric_sets", text, name))
    for item in registry.split_names(list(hbr_measures)):
        if not any(fnmatch(m, item) for m in known):
            wrong.append(("--hbr-measures / hbr_measures", None, item))
    if not wrong:
        return
    lines = []
    for option, text, name in wrong:
        where = f" (in {text!r})" if text is not None and text.strip() != name else ""
        if name in registry.BUILTIN or name in registry.user_functions():
            lines.append(f"{option}: {name!r}{where} is not computed in this run: add it "
                         "to --metrics")
            continue
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        what = "matches no metric" if any(c in name for c in "*?[") else "is an unknown metric"
        lines.append(f"{option}: {name!r}{where} {what}{hint}")
    raise ConfigError("\n".join(lines) + "\n(`qarla metrics` lists the metrics; "
                      "this run's: " + _first_names(known) + ")")


def _first_names(names: Sequence[str], shown: int = 8) -> str:
    head = ", ".join(names[:shown])
    return head + (f" and {len(names) - shown} more" if len(names) > shown else "")


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
