"""Input: readers, schemas and validation.

>>> testbed, report = load_testbed(spark, bundled_inputs())
>>> report.raise_for_errors()
>>> testbed.summaries  # (task, topic, summarizer, role, text)

Small local inputs can be read and checked before Spark starts
(:func:`check_in_driver`), with the same parsers and checks
(:mod:`qarla_spark.io.checks`) and the same tables and report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from qarla_spark.io.readers import (
    InputSpec,
    bundled_inputs,
    driver_input_bytes,
    parse_input_arg,
    read_raw,
    read_records,
)
from qarla_spark.io.validate import (
    CheckedTables,
    Testbed,
    TaskStats,
    ValidationReport,
    build_testbed,
    checked_tables,
    nothing_to_evaluate,
    testbed_from_tables,
    validate,
    validate_records,
)
from qarla_spark.spark import cache


def load_testbed(spark, specs: Iterable[InputSpec], limit: int = 50,
                 languages: Optional[Dict[str, str]] = None
                 ) -> Tuple[Testbed, ValidationReport]:
    """Read and validate inputs on Spark. The raw records are cached (the
    checks and the problems read them). ``languages``: each task's language
    (``{"*": default, task: code}``), under which the summaries' letters and
    tokens are checked (``None``: not checked; a run passes its
    ``--language``)."""
    raw = cache.persist(read_raw(spark, specs))
    testbed = build_testbed(raw, languages)
    report = nothing_to_evaluate(validate(testbed, limit))
    return testbed, report


@dataclass
class CheckedInput:
    """Inputs read and checked in the driver: the checked rows
    (:func:`~qarla_spark.io.checks.check_records`) as Arrow tables, the
    rows of the tasks and the report."""

    tables: Optional[CheckedTables]   # None once handed to Spark (testbed)
    task_rows: List[Dict]
    report: ValidationReport
    #: bytes read
    size: int

    def testbed(self, spark, write=None) -> Testbed:
        """The canonical tables on Spark (equal to :func:`load_testbed`'s).
        The tables move to Spark: this object lets go of them (a run's
        driver would otherwise hold every summary until it ends), so it
        gives the testbed once. ``write(name, table)``, if given, gets the
        run's tables ``summaries``, ``judgments``, ``sources`` and
        ``problems`` as Arrow first (the driver writes them: no Spark job)."""
        if self.tables is None:
            raise RuntimeError("the checked rows were already handed to Spark")
        from qarla_spark.memory import release_freed_memory
        if write is not None:
            # judgments/ holds each rater's judgments
            for name, held in (("summaries", "summaries"), ("judgments", "ratings"),
                               ("sources", "sources"), ("problems", "problems")):
                write(name, getattr(self.tables, held))
        tables, self.tables = self.tables, None
        testbed = testbed_from_tables(spark, tables)
        del tables
        release_freed_memory()
        return testbed


def check_in_driver(specs: Sequence[InputSpec], limit: int = 50,
                    max_bytes: int = 64 << 20,
                    languages: Optional[Dict[str, str]] = None) -> Optional[CheckedInput]:
    """Read and check the inputs in the driver when all of them are on the
    local file system (or bundled) and hold at most ``max_bytes`` in all
    (0: never); ``None`` otherwise (:func:`load_testbed` reads them).
    ``languages``: as :func:`load_testbed`'s.

    The checked rows become Arrow tables at once and are freed before
    anything else is made (a Spark session is started next): Python's
    allocator returns a block of its memory to the system only when nothing
    in it is alive, and objects made while the rows were alive would keep
    many blocks of freed rows (:mod:`qarla_spark.memory`)."""
    specs = list(specs)
    size = driver_input_bytes(specs) if max_bytes > 0 and specs else None
    if size is None or size > max_bytes:
        return None
    from qarla_spark.memory import fresh_copy, release_freed_memory
    CheckedTables.prepare()   # its imports, before the rows
    counts = [0] * len(specs)
    topic_rows, task_rows, report = validate_records(read_records(specs, counts), limit,
                                                     languages)
    report = nothing_to_evaluate(report, [(s.path, s.kind) for s, n in zip(specs, counts)
                                          if not n])
    tables = checked_tables(topic_rows, task_rows)
    del topic_rows
    task_rows, report = fresh_copy((task_rows, report))   # made among the rows
    release_freed_memory()
    return CheckedInput(tables, task_rows, report, size)


__all__ = ["CheckedInput", "InputSpec", "Testbed", "TaskStats", "ValidationReport",
           "bundled_inputs", "build_testbed", "check_in_driver", "load_testbed",
           "parse_input_arg", "read_raw", "read_records", "validate"]
