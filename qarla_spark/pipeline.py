"""The run: stages in order, each writing a documented table.

Stages, in order (``RunConfig.stages`` may stop early):

``testbed``       read the inputs, validate them, describe the testbed, write
                  the canonical tables;
``similarities``  every metric on every ordered same-topic pair (SPEC §2),
                  user metric tables appended.

Metric names are resolved before Spark reads anything (:func:`plan_metrics`):
a typo fails the run at once, naming the closest valid names.

Tables of a run directory (Parquet; schemas in the README):

``summaries/``  task, topic, summarizer, role, text (folders by task)
``judgments/``  task, topic, summarizer, criterion, score (folders by task)
``sources/``    task, topic, documents (folders by task)
``testbed/``    one row per task: the description ``qarla validate`` prints
``problems/``   severity, file, line, unit, field, message: every warning
``similarities/``  task, topic, summarizer_s, summarizer_r, metric, value
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
        lines = [self.report.format(),
                 f"results: {self.out}/ (run.json, {', '.join(sorted(self.info['tables']))})",
                 f"signature: {self.info['signature']}"]
        return "\n".join(lines)


def run(spark, config: RunConfig, command: Optional[Sequence[str]] = None) -> RunResult:
    """Run the configured stages for every task of the input and write the
    run directory (atomically: see :mod:`qarla_spark.spark.output`)."""
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

        if "similarities" in config.stages:
            t0 = time.time()
            extra["similarities"] = similarity_stage(spark, config, testbed, metrics, out)
            timings["similarities_s"] = round(time.time() - t0, 3)

        info = run_info(spark, config, command, report, started, timings)
        info.update(extra)
        final = out.commit(info)
    except BaseException:
        out.abort()
        raise
    return RunResult(final, report, {**info, "tables": out.tables})


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
