"""The testbed stage: read the run's inputs, validate them, and the
canonical tables (summaries, judgments, sources, the testbed's description,
every warning)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Dict, List, Tuple

from qarla_spark.io import InputSpec, Testbed, ValidationReport, bundled_inputs, load_testbed
from qarla_spark.io.readers import parse_input_arg
from qarla_spark.tables import table


def input_specs(config) -> List[InputSpec]:
    """The inputs of a run; the bundled SummEval testbed when none is given."""
    if config.uses_bundled:
        specs = bundled_inputs(config.task)
    else:
        specs = [parse_input_arg(p, "summaries", config.task) for p in config.inputs]
    specs += [parse_input_arg(p, "judgments", config.task) for p in config.judgments]
    specs += [parse_input_arg(p, "sources", config.task) for p in config.sources]
    return specs


def load(spark, config) -> Tuple[Testbed, ValidationReport]:
    """Read and validate the run's inputs (no error raised: see the report)."""
    return load_testbed(spark, input_specs(config), limit=config.problem_limit)


def testbed_tables(spark, testbed: Testbed, report: ValidationReport) -> Dict[str, object]:
    """The tables of the testbed stage."""
    declared = table("testbed")
    rows = [tuple(asdict(t)[c] for c in declared.column_names) for t in report.tasks]
    return {"summaries": testbed.summaries, "judgments": testbed.judgments,
            "sources": testbed.sources,
            "testbed": spark.createDataFrame(rows, declared.ddl),
            "problems": testbed.problems.coalesce(1)}
