"""The testbed stage: read the run's inputs, validate them, and the
canonical tables (summaries, judgments, sources, the testbed's description,
every warning)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Dict, List, Optional, Sequence, Tuple

from qarla_spark.io import (
    CheckedInput,
    InputSpec,
    Testbed,
    ValidationReport,
    bundled_inputs,
    check_in_driver,
    load_testbed,
)
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


def language_map(config):
    """The run's :class:`~qarla_spark.text.languages.LanguageMap`, every
    code checked (a :class:`~qarla_spark.errors.ConfigError` naming the
    closest ones: before Spark starts)."""
    from qarla_spark.text.languages import LanguageMap
    return LanguageMap.of(config.language)


def plain_paths_are_local(config, environ=None) -> bool:
    """Whether a plain path (no scheme) of this run names a file of the
    local file system before Spark starts: yes unless the run may use
    another default file system — a master that is not local, a
    ``spark.hadoop.fs.defaultFS`` (profile or ``--conf``) that is not
    ``file:``, or a Hadoop configuration in the environment
    (``HADOOP_CONF_DIR``, ``YARN_CONF_DIR``: its core-site.xml may)."""
    import os

    from qarla_spark.spark.profiles import resolve_settings
    environ = os.environ if environ is None else environ
    if environ.get("HADOOP_CONF_DIR") or environ.get("YARN_CONF_DIR"):
        return False
    settings = resolve_settings(config.profile, config.master, config.spark_conf, {})
    default_fs = settings.get("spark.hadoop.fs.defaultFS", "file:///")
    return settings["spark.master"].startswith("local") and default_fs.startswith("file:")


def check_local_inputs(config) -> None:
    """The run's inputs on the local file system exist and hold a file —
    said before Spark starts (a JVM takes seconds); other file systems'
    are checked by Spark (:func:`~qarla_spark.io.readers.check_inputs_exist`).
    Plain paths count as local when :func:`plain_paths_are_local`."""
    from qarla_spark.errors import InputError
    from qarla_spark.io.readers import local_probe, missing_inputs, not_found
    from qarla_spark.paths import scheme
    language_map(config)        # an unknown language: before anything is read
    specs = input_specs(config)
    tables = [(p, "similarity table (--similarities)") for p in [config.similarities] if p]
    tables += [(p, "metric table (--user-metrics)") for p in config.user_metrics]
    paths = [s.path for s in specs] + [p for p, _ in tables]
    plain = any(scheme(p) == "" for p in paths) and plain_paths_are_local(config)

    def here(path: str) -> bool:
        return scheme(path) == "file" or (scheme(path) == "" and plain)

    missing_inputs([s for s in specs if here(s.path)], local_probe)
    problems = [not_found(path, what) for path, what in tables
                if here(path) and local_probe(path) == "missing"]
    if problems:
        raise InputError(problems, header="cannot read the input")


def check_small(config) -> Optional[CheckedInput]:
    """The run's inputs read and checked in the driver, when they are local
    and small (``driver_read_mb``); ``None``: Spark reads them."""
    return check_in_driver(input_specs(config), config.problem_limit,
                           config.driver_read_mb << 20, language_map(config).as_dict())


def load(spark, config, checked: Optional[CheckedInput] = None, write=None
         ) -> Tuple[Testbed, ValidationReport]:
    """Read and validate the run's inputs (no error raised: see the report):
    in the driver when they are small and local (or were, ``checked``),
    otherwise on Spark. ``write(name, table)``: where the driver writes the
    testbed's tables when it read them (:meth:`CheckedInput.testbed`)."""
    if checked is None:
        checked = check_small(config)
    if checked is not None:
        return checked.testbed(spark, write), checked.report
    return load_testbed(spark, input_specs(config), limit=config.problem_limit,
                        languages=language_map(config).as_dict())


def _ratings(testbed: Testbed):
    """``judgments/``: each rater's judgments (a testbed made without them:
    its judgments, each by one anonymous rater)."""
    if testbed.ratings is not None:
        return testbed.ratings
    from pyspark.sql import functions as F
    j = testbed.judgments
    return j.select("task", "topic", "summarizer", "criterion",
                    F.lit(None).cast("string").alias("rater"), "score")


def testbed_tables(spark, testbed: Testbed, report: ValidationReport,
                   written: Sequence[str] = ()) -> Dict[str, object]:
    """The tables of the testbed stage (but those already ``written``):
    ``testbed``, one row per task, is made by the driver (a pyarrow table)."""
    import pyarrow as pa
    declared = table("testbed")
    rows = [asdict(t) for t in report.tasks]
    described = pa.table({c: [r[c] for r in rows] for c in declared.column_names},
                         schema=declared.arrow_schema())
    tables = {"summaries": testbed.summaries, "judgments": _ratings(testbed),
              "sources": testbed.sources, "testbed": described,
              "problems": testbed.problems.coalesce(1)}
    return {name: t for name, t in tables.items() if name not in written}
