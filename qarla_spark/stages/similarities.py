"""The similarity stage: every metric on every ordered same-topic pair
(SPEC §2), user metric tables appended — or the table of an earlier run
reused (``--similarities``)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from qarla_spark.errors import ConfigError, InputError, Problem
from qarla_spark.io import Testbed
from qarla_spark.names import check_metric_name
from qarla_spark.metrics import registry

SIMILARITY_COLUMNS = ("task", "topic", "summarizer_s", "summarizer_r", "metric", "value")


def plan_metrics(config) -> Tuple[str, ...]:
    """Load the metric plugins and resolve ``config.metrics`` (built-in and
    registered Python metrics; user tables are added as they come) — before
    Spark reads anything, so that a typo fails at once."""
    from qarla_spark.stages.testbed import language_map
    language_map(config)    # an unknown language code fails now too
    registry.load_plugins(config.metric_plugins)
    metrics = registry.resolve_metrics(config.metrics)
    if "GRAMSIM" in metrics:
        from qarla_spark.metrics.tagging import get_tagger
        get_tagger(config.tagger)  # unknown or missing tagger: fail now
    known = reused_metrics(config.similarities) if config.similarities else metrics
    if known is not None and not config.user_metrics:
        check_chosen_names(config.metric_sets, config.hbr_measures, known)
    return metrics


def _needs(name: str) -> Tuple[Optional[str], bool]:
    """(the variant a metric reads, whether it needs GRAMSIM's tagger)."""
    if name in registry.BUILTIN:
        info = registry.BUILTIN[name]
        if info.family == "tvm":
            return None, False       # the language's most processed tokens
        return info.variant, info.family == "gramsim"
    user = registry.user_functions().get(name)
    return (user.variant if user is not None else None), False


def _names(metrics: Sequence[str]) -> str:
    """``R-*.c and Rpre-*.c`` when a variant's every ROUGE metric is there,
    else the names."""
    out, rest = [], list(metrics)
    for v in registry.VARIANTS:
        for prefix in ("R", "Rpre", "F"):
            group = [f"{prefix}-{k}.{v}" for k in registry.ROUGE_KINDS]
            if all(g in rest for g in group):
                out.append(f"{prefix}-*.{v}")
                rest = [m for m in rest if m not in group]
    return ", ".join(out + rest)


def for_languages(config, metrics: Sequence[str], tasks: Sequence[str]
                  ) -> Tuple[Tuple[str, ...], Dict[str, Any]]:
    """The metrics of this run its tasks' languages can all compute, and
    what run.json says of the languages (issue 38). A metric reading a
    variant that a task's language lacks (no stop list: b; no stemmer: c),
    or GRAMSIM in a language without a tagger, is refused: named exactly in
    ``--metrics``, ``--metric-set`` or ``--hbr-measures`` it is an error;
    selected by a pattern, a group or the default battery it is left out of
    the run with a warning naming it, the tasks and why (one run's tasks
    share one list of metrics). A ``TASK=LANG`` naming no task of the input
    is an error. Never a metric silently equal to variant ``a``."""
    import warnings

    from qarla_spark.names import QarlaWarning
    from qarla_spark.stages.testbed import language_map
    from qarla_spark.text.languages import LANGUAGES, describe, missing_variants

    languages = language_map(config)
    wrong = languages.unknown_tasks(tasks)
    if wrong:
        raise ConfigError("\n".join(
            f"--language {task}=...: the input has no task {task!r}"
            + (f"; did you mean {', '.join(close)}?" if close else
               f" (its tasks: {_first_names(sorted(tasks))})") for task, close in wrong))
    per_task = languages.for_tasks(tasks)
    refused: Dict[str, List[Tuple[str, str, str]]] = {}
    for m in metrics:
        variant, tagger = _needs(m)
        for task in sorted(per_task):
            code = per_task[task]
            why = missing_variants(code).get(variant) if variant else None
            if tagger and not LANGUAGES[code].tagger:
                why = (f"GRAMSIM's part-of-speech tagger is English's; none for "
                       f"{LANGUAGES[code].name} ({code}) is installed")
            if why:
                refused.setdefault(m, []).append((task, code, why))
    exact = set(registry.split_names(config.metrics))
    exact |= {n for text in config.metric_sets for n in registry.split_names(text)}
    exact |= set(registry.split_names(list(config.hbr_measures)))
    asked = [m for m in metrics if m in refused and m in exact]
    if asked:
        raise ConfigError("\n".join(
            f"metric {m} cannot be computed for task {task!r} (language {code}): {why}"
            for m in asked for task, code, why in refused[m][:3])
            + "\n(run the tasks of other languages apart, or leave these metrics out)")
    kept = tuple(m for m in metrics if m not in refused)
    by_reason: Dict[Tuple[str, str], List[str]] = {}
    for m, where in refused.items():
        for task, code, why in where:
            by_reason.setdefault((code, why), [])
            if m not in by_reason[(code, why)]:
                by_reason[(code, why)].append(m)
    for (code, why), names in sorted(by_reason.items()):
        in_tasks = sorted({t for m in names for t, c, _ in refused[m] if c == code})
        warnings.warn(QarlaWarning(
            f"{_names(names)} left out of this run: {why} (task"
            f"{'s' if len(in_tasks) > 1 else ''} {_first_names(in_tasks)}); one run's tasks "
            "share one list of metrics: run the other tasks apart to keep them there"))
    info = {"languages": {t: describe(per_task[t]) for t in sorted(per_task)},
            "left_out": {m: sorted({t for t, _, _ in where}) for m, where in refused.items()}}
    return kept, info


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
    it. ``tasks``: the testbed's description (``ValidationReport.tasks``);
    ``metrics``: those every task's language computes (:func:`for_languages`)."""
    from qarla_spark.spark import cache
    from qarla_spark.stages.similarity_plan import add_user_tables, compute_cube, cube_to_long
    from qarla_spark.stages.testbed import language_map

    options: Dict[str, Any] = {"tagger": config.tagger}
    per_task = language_map(config).for_tasks([t.task for t in tasks])
    if any(code != "en" for code in per_task.values()):
        options["languages"] = per_task     # English runs ship exactly what they did
    rows = compute_cube(testbed.summaries, metrics, testbed.sources, options=options)
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
