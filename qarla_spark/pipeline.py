"""The run: stages in order, each writing a documented table.

Stages, in order (``RunConfig.stages`` may stop early):

``testbed``       read the inputs, validate them, describe the testbed, write
                  the canonical tables;
``similarities``  every metric on every ordered same-topic pair (SPEC §2),
                  user metric tables appended (or a given table reused);
``qarla``         KING and ORANGE of every metric, clustering, the best set,
                  QUEEN, system scores, JACK and its curve (SPEC §3-6).

Metric names are resolved before Spark reads anything (:func:`plan_metrics`):
a typo fails the run at once, naming the closest valid names.

Tables of a run directory (Parquet; schemas in the README):

``summaries/``  task, topic, summarizer, role, text (folders by task)
``judgments/``  task, topic, summarizer, criterion, score (folders by task)
``sources/``    task, topic, documents (folders by task)
``testbed/``    one row per task: the description ``qarla validate`` prints
``problems/``   severity, file, line, unit, field, message: every warning
``similarities/``  task, topic, summarizer_s, summarizer_r, metric, value
``queen/``, ``systems/``, ``king/``, ``orange/``, ``jack/``, ``jack_curve/``,
``clusters/``  the QARLA tables (schemas in the README)
``run.json``    configuration, seed, versions, timings, table schemas
"""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from qarla_spark import __version__
from qarla_spark.config import RunConfig
from qarla_spark.metrics import registry
from qarla_spark.io import InputSpec, Testbed, ValidationReport, bundled_inputs, load_testbed
from qarla_spark.io.readers import parse_input_arg
from qarla_spark.spark import cache
from qarla_spark.spark.output import RunDirectory


def input_specs(config: RunConfig) -> List[InputSpec]:
    """The inputs of a run; the bundled SummEval testbed when none is given."""
    if config.uses_bundled:
        specs = bundled_inputs(config.task)
    else:
        specs = [parse_input_arg(p, "summaries", config.task) for p in config.inputs]
    specs += [parse_input_arg(p, "judgments", config.task) for p in config.judgments]
    specs += [parse_input_arg(p, "sources", config.task) for p in config.sources]
    return specs


def signature(config: RunConfig, spark_version: str) -> str:
    """One line naming what produced a result (sacrebleu-style)."""
    return f"qarla_spark:{__version__}|spark:{spark_version}|seed:{config.seed}"


def plan_metrics(config: RunConfig) -> Tuple[str, ...]:
    """Load the metric plugins and resolve ``config.metrics`` (built-in and
    registered Python metrics; user tables are added as they come)."""
    registry.load_plugins(config.metric_plugins)
    metrics = registry.resolve_metrics(config.metrics)
    if "GRAMSIM" in metrics:
        from qarla_spark.metrics.tagging import get_tagger
        get_tagger(config.tagger)  # unknown or missing tagger: fail now
    return metrics


def load(spark, config: RunConfig) -> Tuple[Testbed, ValidationReport]:
    """Read and validate the run's inputs (no error raised: see the report)."""
    return load_testbed(spark, input_specs(config), limit=config.problem_limit)


def _testbed_frame(spark, report: ValidationReport):
    from pyspark.sql.types import (DoubleType, LongType, MapType, StringType, StructField,
                                   StructType)
    schema = StructType([
        StructField("task", StringType(), False),
        StructField("n_topics", LongType(), False),
        StructField("models_min", LongType(), False),
        StructField("models_median", DoubleType(), False),
        StructField("models_max", LongType(), False),
        StructField("n_model_summarizers", LongType(), False),
        StructField("n_peer_systems", LongType(), False),
        StructField("n_summaries", LongType(), False),
        StructField("n_model_summaries", LongType(), False),
        StructField("n_peer_summaries", LongType(), False),
        StructField("n_topics_with_sources", LongType(), False),
        StructField("judgments", MapType(StringType(), LongType(), False), False),
    ])
    rows = [tuple(asdict(t)[f.name] for f in schema.fields) for t in report.tasks]
    return spark.createDataFrame(rows, schema)


@dataclass
class RunResult:
    out: str
    report: ValidationReport
    info: Dict[str, Any]

    def summary(self) -> str:
        lines = [self.report.format()]
        if self.info.get("qarla_summary"):
            lines.append(self.info["qarla_summary"])
        lines += [
                 f"results: {self.out}/ (run.json, {', '.join(sorted(self.info['tables']))})",
                 f"signature: {self.info['signature']}"]
        return "\n".join(lines)


def run(spark, config: RunConfig, command: Optional[Sequence[str]] = None) -> RunResult:
    """Run the configured stages for every task of the input and write the
    run directory (atomically: see :mod:`qarla_spark.spark.output`). What
    the stages cached is released when the run ends (see
    :mod:`qarla_spark.spark.cache`), so one session can run many."""
    with cache.scope():
        return _run(spark, config, command)


def _run(spark, config: RunConfig, command: Optional[Sequence[str]]) -> RunResult:
    started = time.time()
    metrics = plan_metrics(config) if "similarities" in config.stages else ()
    out = RunDirectory(spark, config.out, config.overwrite)
    extra: Dict[str, Any] = {}
    try:
        testbed, report = load(spark, config)
        report.raise_for_errors()
        timings = {"load_validate_s": round(time.time() - started, 3)}

        t0 = time.time()
        out.write_table("summaries", testbed.summaries, ["task"],
                        "validated summaries (task, topic, summarizer, role, text)")
        out.write_table("judgments", testbed.judgments, ["task"],
                        "human judgments in long form (task, topic, summarizer, criterion, score)")
        out.write_table("sources", testbed.sources, ["task"],
                        "source documents per topic (task, topic, documents)")
        out.write_table("testbed", _testbed_frame(spark, report), None,
                        "one row per task: what the testbed holds")
        out.write_table("problems", testbed.problems.coalesce(1), None,
                        "every warning found in the input (errors stop the run)")
        timings["write_testbed_s"] = round(time.time() - t0, 3)

        sims = None
        if config.similarities:
            t0 = time.time()
            sims, names = reuse_similarities(spark, config.similarities, testbed)
            extra["similarities"] = {"reused": config.similarities, "metrics": list(names),
                                     "n_metrics": len(names)}
            timings["similarities_s"] = round(time.time() - t0, 3)
        elif "similarities" in config.stages:
            t0 = time.time()
            extra["similarities"] = similarity_stage(spark, config, testbed, metrics, out)
            sims = spark.read.parquet(out.path("similarities"))
            timings["similarities_s"] = round(time.time() - t0, 3)
        cube = None
        texts = []
        if sims is not None and ("qarla" in config.stages or "hbr" in config.stages):
            from qarla_spark.measures.masks import build_cube
            t0 = time.time()
            cube = build_cube(sims, testbed.summaries, extra["similarities"]["metrics"])
            timings["cube_s"] = round(time.time() - t0, 3)
        if "qarla" in config.stages and cube is not None:
            t0 = time.time()
            extra["qarla"], text = qarla_stage(
                spark, config, testbed, sims, extra["similarities"]["metrics"], report, out, cube)
            timings["qarla_s"] = round(time.time() - t0, 3)
            texts.append(text)
        if "hbr" in config.stages and cube is not None:
            t0 = time.time()
            extra["hbr"], text = hbr_stage(config, testbed, cube,
                                           extra["similarities"]["metrics"], out)
            timings["hbr_s"] = round(time.time() - t0, 3)
            texts.append(text)
        if texts:
            extra["qarla_summary"] = "\n".join(texts)

        info = run_info(spark, config, command, report, started, timings)
        info.update(extra)
        final = out.commit(info)
    except BaseException:
        out.abort()
        raise
    return RunResult(final, report, {**info, "tables": out.tables})


def reuse_similarities(spark, path: str, testbed: Testbed):
    """A similarity table of an earlier run (``--similarities PATH``): its
    columns are checked, and its pairs must be those of this testbed."""
    from pyspark.sql import functions as F

    from qarla_spark.errors import InputError, Problem
    try:
        sims = spark.read.parquet(path)
    except Exception as exc:
        raise InputError([Problem("error", path, None, None,
                                  f"cannot read the similarity table: {str(exc).splitlines()[0]}")],
                         header="bad --similarities") from None
    need = ["task", "topic", "summarizer_s", "summarizer_r", "metric", "value"]
    missing = [c for c in need if c not in sims.columns]
    if missing:
        raise InputError([Problem("error", path, None, ", ".join(missing),
                                  "not a similarity table: missing column(s) "
                                  + ", ".join(missing))], header="bad --similarities")
    sims = sims.select(*need)
    names = sorted(r["metric"] for r in sims.select("metric").distinct().collect())
    pairs = sims.select("task", "topic", "summarizer_s", "summarizer_r").distinct()
    known = testbed.summaries.select("task", "topic", F.col("summarizer").alias("summarizer_s"))
    stray = pairs.join(known, ["task", "topic", "summarizer_s"], "left_anti").limit(5).collect()
    if stray:
        raise InputError([Problem("error", path, None, None,
                                  f"pair ({r.task}, {r.topic}, {r.summarizer_s}, "
                                  f"{r.summarizer_r}) names a summary not in the input")
                          for r in stray], header="--similarities does not match the input")
    return sims, tuple(names)


def qarla_stage(spark, config: RunConfig, testbed: Testbed, sims, metrics: Sequence[str],
                report: ValidationReport, out: RunDirectory, cube=None):
    """QUEEN/KING/JACK, clustering and the best set for every task."""
    from qarla_spark.errors import ConfigError
    from qarla_spark.measures.stage import run_qarla

    requested = [registry.split_names(s) for s in config.metric_sets]
    for names in requested:
        unknown = [n for n in names if n not in metrics]
        if unknown:
            raise ConfigError(f"--metric-set {','.join(names)}: not in the similarity table: "
                              f"{', '.join(unknown)}")
    result = run_qarla(sims, testbed.summaries, metrics, requested, config.clusters,
                       config.triples, config.seed, config.jack_orders,
                       tasks=[t.task for t in report.tasks], judgments=testbed.judgments,
                       cube=cube)
    docs = {
        "queen": "QUEEN of every summary (holdout null: all models; else that model held out)",
        "systems": "system scores: models and peers ranked together (jackknifed); queen_full "
                   "for peers with all models",
        "king": "KING of every single metric, every subset of representatives, requested sets",
        "orange": "ORANGE of the same sets (score QUEEN) and of each metric's plain score "
                  "(score plain)",
        "jack": "JACK of the best set, the representatives and requested sets",
        "jack_curve": "JACK as systems are added, mean over seeded random orders",
        "clusters": "metric clusters, their representatives and each metric's KING",
        "correlations": "Pearson, Spearman, Kendall with each human criterion, system and "
                        "summary level",
        "human_test": "does each held-out model rank above every system (paper 004, Table 1)",
        "king_pearson": "KING and system-level Pearson with each criterion of every evaluated "
                        "set (paper 000, Fig. 5)",
    }
    timings = dict(result.timings)
    for name, df in result.tables.items():
        t0 = time.time()
        out.write_table(name, df, None, docs[name])
        timings[f"write_{name}_s"] = round(time.time() - t0, 3)
    info = {
        "clusters": config.clusters, "triples": config.triples, "jack_orders": config.jack_orders,
        "requested_sets": [registry.metric_set_name(s) for s in requested],
        "timings": timings,
        "tasks": {s.task: {"best_set": s.best_set, "best_king": s.best_king,
                           "best_single": s.best_single, "best_single_king": s.best_single_king,
                           "representatives": s.representatives, "jack": s.jack,
                           "skipped_topics": {reason: {"count": n, "first": names}
                                              for reason, (n, names) in s.skipped.items()}}
                  for s in result.summaries},
    }
    return info, "\n".join(s.describe() for s in result.summaries)


def hbr_stage(config: RunConfig, testbed: Testbed, cube, metrics: Sequence[str],
              out: RunDirectory):
    """HBR, heterogeneity and the AUC meta-evaluation for every task."""
    from qarla_spark.measures.hbr import run_hbr

    result = run_hbr(cube, metrics, testbed.judgments, list(config.hbr_measures) or None,
                     config.hbr_pairs, config.hbr_exact, config.seed, config.hbr_aggregate,
                     config.hbr_models)
    docs = {
        "hbr": "HBR of every scored summary (peers; models with --hbr-models)",
        "heterogeneity": "H of every measure set HBR needs, its standard error and sample size",
        "hbr_systems": "HBR system scores: mean over topics",
        "auc": "AUC of every measure and of HBR per human criterion: all topics pooled, "
               "consistent / inconsistent topics, and per topic",
        "robustness": "mean scaled AUC rank over each measure's worst 10% topics",
        "hetero_curve": "pairs in 100 equal bins of heterogeneity: mean H and P(quality "
                        "increase)",
        "hbr_correlations": "system-level Pearson, Spearman, Kendall of HBR with each criterion",
    }
    timings = {}
    for name, df in result.tables.items():
        t0 = time.time()
        out.write_table(name, df, None, docs[name])
        timings[f"write_{name}_s"] = round(time.time() - t0, 3)
    return {**result.info, "timings": timings}, "\n".join(result.lines)


def similarity_stage(spark, config: RunConfig, testbed: Testbed, metrics: Sequence[str],
                     out: RunDirectory) -> Dict[str, Any]:
    """Compute the similarity table, append user tables, write it."""
    from qarla_spark.spark.similarities import add_user_tables, compute_similarities, tvm_basis

    sims = compute_similarities(testbed.summaries, metrics, testbed.sources,
                                options={"tagger": config.tagger})
    sims, added = add_user_tables(sims, testbed.summaries, config.user_metrics, metrics)
    out.write_table("similarities", sims, ["task"],
                    "every metric on every ordered same-topic pair (s, r); r is the reference")
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
        info["tvm_terms_from"] = tvm_basis(testbed.summaries, testbed.sources)
    if "gramsim" in families:
        info["gramsim_tagger"] = config.tagger
    return info


def run_info(spark, config: RunConfig, command, report: ValidationReport, started: float,
             timings: Dict[str, float]) -> Dict[str, Any]:
    """The provenance written to run.json."""
    sc = spark.sparkContext
    return {
        "qarla_spark_version": __version__,
        "spark_version": spark.version,
        "python_version": platform.python_version(),
        "master": sc.master,
        "default_parallelism": sc.defaultParallelism,
        "signature": signature(config, spark.version),
        "seed": config.seed,
        "command": list(command) if command is not None else list(sys.argv),
        "config": config.to_dict(),
        "inputs": [asdict(s) for s in input_specs(config)],
        "bundled_testbed": "summeval" if config.uses_bundled else None,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "elapsed_s": round(time.time() - started, 3),
        "timings": timings,
        "testbed": [asdict(t) for t in report.tasks],
        "problems": {"errors": report.n_errors, "warnings": report.n_warnings},
    }
