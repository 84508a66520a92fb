"""The data model (SPEC §1) as Spark schemas.

Canonical tables, produced by every reader after validation:

``summaries``  (task, topic, summarizer, role, text)
    one row per summary; ``role`` is ``model`` (human reference) or ``peer``
    (automatic); ``(task, topic, summarizer)`` is unique; ``text`` is
    non-empty. Newlines in ``text`` separate sentences.
``judgments``  (task, topic, summarizer, criterion, score)
    human judgments in long form; ``(task, topic, summarizer, criterion)`` is
    unique, ``score`` finite (the mean over the summary's raters), and every
    row names a known summary.
``ratings``    (task, topic, summarizer, criterion, rater, score)
    each rater's judgments (the ``judgments/`` table a run writes); ``rater``
    null is one anonymous rater, the only one of its (summary, criterion).
``sources``    (task, topic, documents)
    the documents of a topic (optional; used by TVM).

All string columns but ``rater`` are non-null in canonical tables.

The parsers produce a single *raw record* table (:data:`RAW_SCHEMA`): one
row per parsed record or per problem, with the file and line it came from,
so that validation can name the place of every error.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)


SUMMARY_SCHEMA = StructType([
    StructField("task", StringType(), False),
    StructField("topic", StringType(), False),
    StructField("summarizer", StringType(), False),
    StructField("role", StringType(), False),
    StructField("text", StringType(), False),
])

JUDGMENT_SCHEMA = StructType([
    StructField("task", StringType(), False),
    StructField("topic", StringType(), False),
    StructField("summarizer", StringType(), False),
    StructField("criterion", StringType(), False),
    StructField("score", DoubleType(), False),
])

RATING_SCHEMA = StructType([
    StructField("task", StringType(), False),
    StructField("topic", StringType(), False),
    StructField("summarizer", StringType(), False),
    StructField("criterion", StringType(), False),
    StructField("rater", StringType(), True),
    StructField("score", DoubleType(), False),
])

SOURCE_SCHEMA = StructType([
    StructField("task", StringType(), False),
    StructField("topic", StringType(), False),
    StructField("documents", ArrayType(StringType(), False), False),
])

RAW_SCHEMA = StructType([
    StructField("kind", StringType(), False),        # summary|judgment|source|problem
    StructField("file", StringType(), True),
    StructField("line", LongType(), True),           # 1-based line or row
    StructField("unit", StringType(), True),         # "line" or "row"
    StructField("task", StringType(), True),
    StructField("topic", StringType(), True),
    StructField("summarizer", StringType(), True),
    StructField("role", StringType(), True),
    StructField("text", StringType(), True),
    StructField("criterion", StringType(), True),
    StructField("rater", StringType(), True),         # judgments: null = anonymous
    StructField("score", DoubleType(), True),
    StructField("documents", ArrayType(StringType(), True), True),
    # a reference repeated inside another record (SacreROUGE "references"):
    # identical repeats are merged, different texts are duplicates.
    StructField("embedded", BooleanType(), True),
    StructField("severity", StringType(), True),     # problems: error|warning
    StructField("field", StringType(), True),
    StructField("message", StringType(), True),
])

PROBLEM_SCHEMA = StructType([
    StructField("severity", StringType(), False),
    StructField("file", StringType(), True),
    StructField("line", LongType(), True),
    StructField("unit", StringType(), True),
    StructField("field", StringType(), True),
    StructField("message", StringType(), False),
])


def _checked_schema(fields) -> StructType:
    """The rows of the checks (:mod:`qarla_spark.io.checks`) as a schema."""
    types = {f.name: f.dataType for f in RAW_SCHEMA.fields}
    types.update(problem_kind=StringType(), detail=StringType(), subject=StringType(),
                 n_models=LongType(), n_peers=LongType(), has_sources=BooleanType(),
                 models=ArrayType(StringType(), True), peers=ArrayType(StringType(), True),
                 criteria=ArrayType(StringType(), True),
                 criterion_counts=ArrayType(LongType(), True),
                 models_median=DoubleType(),
                 skipped_queen=ArrayType(StringType(), True),
                 skipped_king=ArrayType(StringType(), True),
                 largest_topic=StringType(),
                 outside_scripts=ArrayType(StringType(), True),
                 outside_counts=ArrayType(LongType(), True), example=StringType())
    return StructType([StructField(name, types.get(name, LongType()), True) for name in fields])


def checked_topic_schema() -> StructType:
    """What :func:`qarla_spark.io.checks.check_topic` returns."""
    from qarla_spark.io.checks import TOPIC_FIELDS
    return _checked_schema(TOPIC_FIELDS)


def checked_task_schema() -> StructType:
    """What :func:`qarla_spark.io.checks.check_task` returns."""
    from qarla_spark.io.checks import TASK_FIELDS
    return _checked_schema(TASK_FIELDS)
