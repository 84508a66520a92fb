"""The run: stages in order, each writing a documented table.

Stage 1 (this version): read the inputs, validate them, describe the
testbed, and write the canonical tables. Later stages (similarities, QUEEN/
KING/JACK, HBR) read these tables.

Tables of a run directory (Parquet; schemas in the README):

``summaries/``  task, topic, summarizer, role, text (folders by task)
``judgments/``  task, topic, summarizer, criterion, score (folders by task)
``sources/``    task, topic, documents (folders by task)
``testbed/``    one row per task: the description ``qarla validate`` prints
``problems/``   severity, file, line, unit, field, message: every warning
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
    """Run every stage for every task of the input and write the run
    directory (atomically: see :mod:`qarla_spark.spark.output`)."""
    started = time.time()
    out = RunDirectory(spark, config.out, config.overwrite)
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
        timings["write_s"] = round(time.time() - t0, 3)

        info = run_info(spark, config, command, report, started, timings)
        final = out.commit(info)
    except BaseException:
        out.abort()
        raise
    return RunResult(final, report, {**info, "tables": out.tables})


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
