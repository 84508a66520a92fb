"""Input: readers, schemas and validation.

>>> testbed, report = load_testbed(spark, bundled_inputs())
>>> report.raise_for_errors()
>>> testbed.summaries  # (task, topic, summarizer, role, text)
"""

from __future__ import annotations

from typing import Iterable, Tuple

from qarla_spark.io.readers import InputSpec, bundled_inputs, parse_input_arg, read_raw
from qarla_spark.io.validate import Testbed, TaskStats, ValidationReport, build_testbed, validate
from qarla_spark.spark import cache


def load_testbed(spark, specs: Iterable[InputSpec], limit: int = 50
                 ) -> Tuple[Testbed, ValidationReport]:
    """Read and validate inputs. The raw records are cached (they are read
    by every check); the canonical tables are partitioned by (task, topic)."""
    raw = cache.persist(read_raw(spark, specs))
    testbed = build_testbed(raw)
    report = validate(testbed, limit)
    return testbed, report


__all__ = ["InputSpec", "Testbed", "TaskStats", "ValidationReport", "bundled_inputs",
           "build_testbed", "load_testbed", "parse_input_arg", "read_raw", "validate"]
