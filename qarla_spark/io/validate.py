"""Validate raw records and build the canonical testbed tables.

Checks (each problem names its file, line/row and field):

errors
    everything the parsers report (malformed JSON/CSV/Parquet, missing or
    empty fields, unknown roles, empty texts, non-UTF-8 bytes, non-numeric
    scores, unreadable files); duplicate ``(task, topic, summarizer)``;
    judgments for unknown summaries; duplicate ``(task, topic, summarizer,
    criterion, rater)`` judgments, and a judgment without a rater beside
    another of its summary and criterion; duplicate sources of a topic.
warnings
    topics with fewer than 3 models (QUEEN needs 3: the measures skip them),
    with exactly 3 (KING holds one out and needs 4), without peers; a
    summarizer that is a model in some topics and a peer in others; sources
    for a topic without summaries.

Identical copies of a reference embedded in several SacreROUGE records are
one summary; any other repeat is a duplicate.

The checks themselves are pure functions (:mod:`qarla_spark.io.checks`),
run per topic and per task on Spark (:func:`build_testbed`) or in the driver
for small local inputs (:func:`validate_records`); either way the driver
receives only the per-task description and at most ``limit`` problems of
each severity.

The testbed-wide warnings have a *kind* (:data:`KINDS`: e.g. topics with too
few models); :meth:`ValidationReport.format` prints one line per kind and
task with the count and the first few names (:func:`group_problems`), while
every instance stays a row of the ``problems`` table.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from qarla_spark.errors import InputError, Problem
from qarla_spark.io import checks
from qarla_spark.io.readers import yields_nothing
from qarla_spark.names import JUDGMENT, PROBLEM, RATING, SOURCE, SUMMARY
from qarla_spark.thresholds import MIN_MODELS_JACKKNIFE as MIN_MODELS_KING
from qarla_spark.thresholds import MIN_MODELS_QUEEN
from qarla_spark.spark import cache

_PROBLEM_COLS = checks.PROBLEM_COLUMNS
#: the columns that group a problem (null for the parsers' problems, which
#: are listed one by one with their place)
_KIND_COLS = checks.KIND_COLUMNS

SUMMARY_COLUMNS = ("task", "topic", "summarizer", "role", "text")
JUDGMENT_COLUMNS = ("task", "topic", "summarizer", "criterion", "score")
#: each rater's judgments (the ``judgments/`` table): rater null, one anonymous rater
RATING_COLUMNS = ("task", "topic", "summarizer", "criterion", "rater", "score")
SOURCE_COLUMNS = ("task", "topic", "documents")

#: how many names a grouped line shows
SHOWN_NAMES = 3

#: per kind of testbed-wide problem: the printed line for one and for many
#: ({n} the count, {task} the task, {detail} the kind's number, e.g. the
#: models of the topics)
KINDS: Dict[str, Tuple[str, str]] = {
    "few_models": (
        "1 topic of task '{task}' has {detail} {models}: QUEEN needs {queen} and KING "
        "{king}, so the measures skip it",
        "{n} topics of task '{task}' have {detail} {models}: QUEEN needs {queen} and KING "
        "{king}, so the measures skip them"),
    "three_models": (
        "1 topic of task '{task}' has {detail} models: KING holds one out and needs {king}, "
        "so KING skips it",
        "{n} topics of task '{task}' have {detail} models: KING holds one out and needs "
        "{king}, so KING skips them"),
    "no_peers": (
        "1 topic of task '{task}' has no peer summaries",
        "{n} topics of task '{task}' have no peer summaries"),
    "model_and_peer": (
        "1 summarizer of task '{task}' is a model in some topics and a peer in others",
        "{n} summarizers of task '{task}' are a model in some topics and a peer in others"),
    "no_tokens": (
        "1 summary of task '{task}' yields no token in language {detail}: ROUGE scores it 0 "
        "and the other metrics by its length alone",
        "{n} summaries of task '{task}' yield no token in language {detail}: ROUGE scores "
        "them 0 and the other metrics by their length alone"),
    "orphan_sources": (
        "sources for 1 topic of task '{task}', which has no summaries",
        "sources for {n} topics of task '{task}', which have no summaries"),
}


def first_names(names: Sequence[str], count: int, shown: int = SHOWN_NAMES) -> str:
    """``d001, d002, d003, …``: the first ``shown`` names, and an ellipsis
    when there are more than those (``count`` in all)."""
    names = list(names)[:shown]
    if not names:
        return ""
    return ", ".join(str(n) for n in names) + (", …" if count > len(names) else "")


@dataclass(frozen=True)
class ProblemGroup:
    """Every problem of one kind (and task, and detail): how many, and the
    first names in sorted order."""

    severity: str
    kind: str
    task: Optional[str]
    detail: Optional[str]
    count: int
    first: Tuple[str, ...]
    #: a group of one: that problem's own message (printed as it is)
    only: Optional[str] = None

    def message(self) -> str:
        if self.count == 1 and self.only:
            return self.only
        one, many = KINDS[self.kind]
        text = (one if self.count == 1 else many).format(
            n=f"{self.count:,}", task=self.task, detail=self.detail,
            models="model" if str(self.detail) == "1" else "models",
            queen=MIN_MODELS_QUEEN, king=MIN_MODELS_KING)
        names = first_names(self.first, self.count)
        where = " (all in problems/)" if self.count > len(self.first) else ""
        return f"{text} — {names}{where}" if names else text

    def format(self) -> str:
        return f"{self.severity}: {self.message()}"

    def to_dict(self) -> Dict[str, object]:
        return {"severity": self.severity, "kind": self.kind, "task": self.task,
                "detail": self.detail, "count": self.count, "first": list(self.first),
                "message": self.message()}


def group_problems(rows: Iterable, shown: int = SHOWN_NAMES) -> List[ProblemGroup]:
    """One :class:`ProblemGroup` per (severity, kind, task, detail) of the
    ``rows`` (mappings or Spark rows with those keys, ``subject`` and
    optionally ``message``; rows without a kind are not grouped). A group of
    one prints as its problem's own message. A row may carry ``total``, the size of
    its group when ``rows`` hold only the first of them (as
    :func:`collect_problems` fetches them); otherwise the rows are counted.
    Names are sorted; groups come errors first, then by task, kind and
    detail."""
    members: Dict[tuple, List[str]] = {}
    totals: Dict[tuple, int] = {}
    messages: Dict[tuple, Optional[str]] = {}
    for row in rows:
        get = row.get if hasattr(row, "get") else row.asDict().get
        if get("kind") is None:
            continue
        key = (get("severity"), get("kind"), get("task"), get("detail"))
        members.setdefault(key, []).append(get("subject"))
        messages[key] = get("message")
        if get("total") is not None:
            totals[key] = max(totals.get(key, 0), int(get("total")))
    groups = []
    for key, names in members.items():
        severity, kind, task, detail = key
        names = sorted(n for n in names if n is not None)
        count = max(totals.get(key, 0), len(names))
        groups.append(ProblemGroup(severity, kind, task, detail, count, tuple(names[:shown]),
                                   messages[key] if count == 1 else None))
    order = list(KINDS)
    groups.sort(key=lambda g: (g.severity != "error", g.task or "",
                               order.index(g.kind) if g.kind in order else len(order),
                               g.kind, str(g.detail)))
    return groups


@dataclass(frozen=True)
class TaskStats:
    """What a task holds (the ``testbed/`` table has one row per task)."""

    task: str
    n_topics: int
    models_min: int
    models_median: float
    models_max: int
    n_model_summarizers: int
    n_peer_systems: int
    n_summaries: int
    n_model_summaries: int
    n_peer_summaries: int
    n_topics_with_sources: int
    judgments: Dict[str, int] = field(default_factory=dict)
    #: the topics the QARLA stage leaves out, per reason (``queen``: fewer
    #: than 3 models; ``king``: 3 models or no peer): (how many, the first
    #: names in name order)
    skipped: Dict[str, Tuple[int, List[str]]] = field(default_factory=dict)
    #: its largest topic's summaries and name (io.limits)
    summaries_max: int = 0
    largest_topic: str = ""

    def describe(self) -> str:
        median = (int(self.models_median) if float(self.models_median).is_integer()
                  else self.models_median)
        lines = [
            f"task {self.task}:",
            f"  topics: {self.n_topics:,}",
            f"  models per topic: min {self.models_min}, median {median}, max {self.models_max} "
            f"({self.n_model_summarizers:,} distinct model summarizers)",
            f"  peer systems: {self.n_peer_systems:,}",
            f"  summaries: {self.n_summaries:,} ({self.n_model_summaries:,} model, "
            f"{self.n_peer_summaries:,} peer)",
            f"  topics with source documents: {self.n_topics_with_sources:,}",
        ]
        if self.judgments:
            crit = ", ".join(f"{c} ({n:,})" for c, n in sorted(self.judgments.items()))
            lines.append(f"  judgments by criterion (judged summaries): {crit}")
        else:
            lines.append("  judgments: none")
        return "\n".join(lines)


@dataclass
class ValidationReport:
    tasks: List[TaskStats]
    problems: List[Problem]
    n_errors: int
    n_warnings: int
    #: the problems that have a kind, grouped (all of them, counted)
    groups: List[ProblemGroup] = field(default_factory=list)
    #: the shown problems printed one by one (those without a kind);
    #: ``None``: all of ``problems``
    single: Optional[List[Problem]] = None

    @property
    def ok(self) -> bool:
        return self.n_errors == 0

    @property
    def n_summaries(self) -> int:
        """The valid summaries of every task (the testbed's size)."""
        return sum(t.n_summaries for t in self.tasks)

    def format(self) -> str:
        """The testbed's description and its problems: one line per group
        of problems of a kind (:func:`group_problems`), then the others one
        by one (at most ``limit`` of each severity); all are in problems/."""
        out = [t.describe() for t in self.tasks]
        if not self.tasks:
            out.append("no valid summaries")
        if self.problems or self.groups:
            single = self.problems if self.single is None else self.single
            shown = {s: sum(p.severity == s for p in single)
                     + sum(g.count for g in self.groups if g.severity == s)
                     for s in ("error", "warning")}
            out.append(f"problems: {self.n_errors:,} error(s), {self.n_warnings:,} warning(s)"
                       + ("" if (shown["error"], shown["warning"]) == (self.n_errors,
                                                                       self.n_warnings)
                          else f" (showing {shown['error']:,} and {shown['warning']:,}; "
                               "all in problems/)"))
            lines = [(g.severity, g.format()) for g in self.groups]
            lines += [(p.severity, p.format()) for p in single]
            out += ["  " + text for _, text in sorted(lines, key=lambda sl: sl[0] != "error")]
        else:
            out.append("problems: none")
        return "\n".join(out)

    def raise_for_errors(self) -> None:
        if not self.ok:
            raise InputError([p for p in self.problems if p.severity == "error"],
                             n_errors=self.n_errors)


def nothing_to_evaluate(report: "ValidationReport", empty: Sequence[Tuple[str, str]] = ()
                        ) -> "ValidationReport":
    """``report`` with an error for each input that yielded nothing
    (``empty``: (path, kind) of the inputs read in the driver that gave no
    record and no problem), for a run without a valid summary, and for each
    task none of whose topics can be evaluated (no peer summary or no model
    summary: every measure compares peers with models). Decided before any
    stage runs: an empty glob or a file of the wrong role is an error, not a
    complete-looking run of nothing (DECISIONS "Nothing to evaluate")."""
    found = [yields_nothing(path, kind) for path, kind in empty]
    if not report.tasks and not report.n_errors and not found:
        found.append(Problem("error", "", None, None,
                             "the input yields no valid summary: nothing to evaluate"))
    for t in report.tasks:
        if t.n_peer_summaries == 0 or t.n_model_summaries == 0:
            lacking = "peer" if t.n_peer_summaries == 0 else "model"
            found.append(Problem(
                "error", "", None, None,
                f"task {t.task}: no {lacking} summary in any of its {t.n_topics:,} topic(s) "
                f"({t.n_model_summaries:,} model and {t.n_peer_summaries:,} peer summaries): "
                "nothing to evaluate (every measure compares peers with models; is the "
                "role field right?)"))
    if not found:
        return report
    single = None if report.single is None else list(report.single) + found
    return replace(report, problems=list(report.problems) + found,
                   n_errors=report.n_errors + len(found), single=single)


@dataclass
class Testbed:
    """The canonical tables (schemas in :mod:`qarla_spark.io.schemas`) and
    every problem found (``PROBLEM_SCHEMA``). ``judgments`` holds one row
    per judged (summary, criterion), its score the mean over its raters
    (what every stage reads); ``ratings`` each rater's (``RATING_SCHEMA``:
    the ``judgments/`` table)."""

    summaries: object
    judgments: object
    sources: object
    problems: object
    #: ``problems`` with the columns that group them (kind, task, detail,
    #: subject; null for the parsers' problems)
    problems_by_kind: object = None
    #: the rows of :func:`~qarla_spark.io.checks.check_task` (one ``stats``
    #: row per task, and the task-wide problems)
    task_checks: object = None
    #: each rater's judgments (None: ``judgments``, one anonymous rater each)
    ratings: object = None


def build_testbed(raw, languages: Optional[Dict[str, str]] = None) -> Testbed:
    """Check raw records on Spark: :func:`~qarla_spark.io.checks.check_topic`
    per (task, topic), then :func:`~qarla_spark.io.checks.check_task` per
    task; the canonical tables and every problem (lazy; the checked rows
    are cached, as every later stage reads them). ``languages``: each task's
    language (``{"*": default, task: code}``)."""
    from pyspark.sql import functions as F

    from qarla_spark.io.readers import ORDER_COLUMNS, READ_ORDER
    from qarla_spark.io.schemas import checked_task_schema, checked_topic_schema
    from qarla_spark.spark.grouped import map_groups

    kind = F.col("kind")
    # a topic's records in the order they were read (read_raw numbers them)
    order = READ_ORDER if set(ORDER_COLUMNS) <= set(raw.columns) else ()
    topics = cache.persist(map_groups(raw.filter(kind != PROBLEM), ("task", "topic"),
                                      _checked(checks.check_topic, languages),
                                      checked_topic_schema(), order=order))
    tasks = cache.persist(map_groups(topics.filter(kind == "profile")
                                     .select("task", "topic", *checks.PROFILE_FIELDS,
                                             *checks.SCRIPT_FIELDS), ("task",),
                                     _checked(checks.check_task, languages),
                                     checked_task_schema()))

    def problems_of(frame):
        return frame.filter(kind == PROBLEM).select(
            *_PROBLEM_COLS, F.col("problem_kind").alias("kind"), "task", "detail", "subject")

    parsed = raw.filter(kind == PROBLEM)
    if order:     # in the order they were read, as the problems table lists them
        parsed = parsed.repartition(1).sortWithinPartitions(*order)
    parsed = (parsed.select(*_PROBLEM_COLS)
              .select("*", *[F.lit(None).cast("string").alias(c) for c in _KIND_COLS]))
    problems = parsed.unionByName(problems_of(topics)).unionByName(problems_of(tasks))
    return Testbed(
        summaries=topics.filter(kind == SUMMARY).select(*SUMMARY_COLUMNS),
        judgments=topics.filter(kind == JUDGMENT).select(*JUDGMENT_COLUMNS),
        sources=topics.filter(kind == SOURCE).select(*SOURCE_COLUMNS),
        problems=problems.select(*_PROBLEM_COLS),
        problems_by_kind=problems,
        task_checks=tasks,
        ratings=topics.filter(kind == RATING).select(*RATING_COLUMNS),
    )


def _checked(check, languages: Optional[Dict[str, str]]):
    """``check(records, language)`` (:func:`~qarla_spark.io.checks.check_topic`
    or :func:`~qarla_spark.io.checks.check_task`) as a function of one
    group's records, under its task's language (what
    :func:`~qarla_spark.spark.grouped.map_groups` takes)."""
    def checked(records):
        return check(records, checks.language_of(languages, records[0]["task"]))
    return checked


def stats_from_rows(rows: Iterable) -> List[TaskStats]:
    """The :class:`TaskStats` of the ``stats`` rows of
    :func:`~qarla_spark.io.checks.check_task` (mappings), sorted by task."""
    stats = []
    for r in sorted((r for r in rows if r["kind"] == "stats"), key=lambda r: r["task"]):
        stats.append(TaskStats(
            task=r["task"], **{f: (float(r[f]) if f == "models_median" else int(r[f]))
                               for f in checks.STATS_FIELDS[:-2]},
            judgments={c: int(n) for c, n in zip(r["criteria"] or (),
                                                 r["criterion_counts"] or ())},
            skipped={reason: (int(r[f"n_skipped_{reason}"]), list(r[f"skipped_{reason}"]))
                     for reason in ("queen", "king")
                     if _present(r, f"n_skipped_{reason}")},
            summaries_max=int(r["summaries_max"]) if _present(r, "summaries_max") else 0,
            largest_topic=r["largest_topic"] if _present(r, "largest_topic") else ""))
    return stats


def _present(row, key: str) -> bool:
    """A row's count is there (not null, not NaN)."""
    try:
        value = row[key]
    except (KeyError, ValueError):
        return False
    return value is not None and value == value


def task_stats(testbed: Testbed) -> List[TaskStats]:
    """Per-task description (small: one row per task)."""
    from pyspark.sql import functions as F
    rows = testbed.task_checks.filter(F.col("kind") == "stats").collect()
    return stats_from_rows(r.asDict() for r in rows)


def collect_problems(problems, limit: int = 50, shown: int = SHOWN_NAMES):
    """(problems shown, number of errors, number of warnings, the shown
    problems without a kind, the groups of those with one), in one Spark
    job: the rows :func:`~qarla_spark.io.checks.select_problems` keeps, by
    window functions (:func:`finish_problems` does the rest). ``problems``
    may lack the kind columns."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    for c in _KIND_COLS:
        if c not in problems.columns:
            problems = problems.withColumn(c, F.lit(None).cast("string"))
    by_severity = Window.partitionBy("severity")
    ordered = by_severity.orderBy(F.col("file").asc_nulls_last(),
                                  F.col("line").asc_nulls_first(), "field", "message")
    group_keys = ["severity", *_KIND_COLS[:-1]]
    by_group = Window.partitionBy(*group_keys)
    rows = (problems.withColumn("_n", F.count(F.lit(1)).over(by_severity))
            .withColumn("_rn", F.row_number().over(ordered))
            .withColumn("total", F.count(F.lit(1)).over(by_group))
            .withColumn("_rk", F.row_number().over(by_group.orderBy("subject", "message")))
            .filter((F.col("_rn") <= limit)
                    | (F.col("kind").isNotNull() & (F.col("_rk") <= shown)))
            .collect())
    return finish_problems([r.asDict() for r in rows], limit, shown)


def finish_problems(rows: Sequence[Dict], limit: int, shown: int = SHOWN_NAMES):
    """The parts of a report from the rows :func:`collect_problems` (Spark)
    or :func:`~qarla_spark.io.checks.select_problems` (driver) fetched."""
    counts = {r["severity"]: r["_n"] for r in rows}
    listed = sorted((r for r in rows if r["_rn"] <= limit),
                    key=lambda r: (r["severity"] != "error", r["_rn"]))
    shown_problems = [Problem(r["severity"], r["file"], r["line"], r["field"], r["message"],
                              r["unit"] or "line") for r in listed]
    single = [p for p, r in zip(shown_problems, listed) if r["kind"] is None]
    groups = group_problems((r for r in rows if r["kind"] is not None and r["_rk"] <= shown),
                            shown)
    return (shown_problems, counts.get("error", 0), counts.get("warning", 0), single, groups)


def validate(testbed: Testbed, limit: int = 50) -> ValidationReport:
    """Compute the report (runs Spark jobs; the driver gets small results)."""
    frame = testbed.problems_by_kind if testbed.problems_by_kind is not None \
        else testbed.problems
    shown, n_errors, n_warnings, single, groups = collect_problems(frame, limit)
    return ValidationReport(task_stats(testbed), shown, n_errors, n_warnings, groups, single)


def validate_records(records: Iterable[Dict], limit: int = 50,
                     languages: Optional[Dict[str, str]] = None
                     ) -> Tuple[List[Dict], List[Dict], ValidationReport]:
    """Every check in the driver (:func:`~qarla_spark.io.checks.check_records`):
    the checked rows of the topics and of the tasks, and the report, equal
    to what :func:`build_testbed` and :func:`validate` give on Spark."""
    topic_rows, task_rows = checks.check_records(records, languages)
    problems = checks.problem_rows(topic_rows) + checks.problem_rows(task_rows)
    selected = checks.select_problems(problems, limit, SHOWN_NAMES)
    shown, n_errors, n_warnings, single, groups = finish_problems(selected, limit)
    return topic_rows, task_rows, ValidationReport(stats_from_rows(task_rows), shown, n_errors,
                                                   n_warnings, groups, single)


@dataclass
class CheckedTables:
    """The tables of rows checked in the driver, as Arrow tables (their
    strings are not Python objects), in the schemas Spark's checks give:
    every column nullable, as the columns of the rows Spark checks."""

    summaries: object
    #: a summary's mean over its raters, per criterion
    judgments: object
    sources: object
    #: the problems with the columns that group them (``problems_by_kind``)
    problems: object
    #: the rows of :func:`~qarla_spark.io.checks.check_task`
    tasks: object
    #: each rater's judgments (the ``judgments/`` table)
    ratings: object

    @staticmethod
    def prepare() -> None:
        """Make empty tables: every module making them needs is imported
        (pyarrow imports pandas on first use)."""
        checked_tables([], [])

    @staticmethod
    def spark_schemas() -> Dict[str, object]:
        """Each table's Spark schema."""
        from pyspark.sql.types import ArrayType, StringType, StructField, StructType

        from qarla_spark.io.schemas import (
            JUDGMENT_SCHEMA,
            PROBLEM_SCHEMA,
            RATING_SCHEMA,
            SOURCE_SCHEMA,
            SUMMARY_SCHEMA,
            checked_task_schema,
        )

        def nullable(schema):
            return StructType([StructField(f.name, ArrayType(f.dataType.elementType, True)
                                           if isinstance(f.dataType, ArrayType) else f.dataType,
                                           True) for f in schema.fields])
        problems = StructType([StructField(f.name, f.dataType, True)
                               for f in PROBLEM_SCHEMA.fields]
                              + [StructField(c, StringType(), True) for c in _KIND_COLS])
        return {"summaries": nullable(SUMMARY_SCHEMA), "judgments": nullable(JUDGMENT_SCHEMA),
                "sources": nullable(SOURCE_SCHEMA), "problems": problems,
                "tasks": checked_task_schema(), "ratings": nullable(RATING_SCHEMA)}


def checked_tables(topic_rows: Sequence[Dict], task_rows: Sequence[Dict]) -> CheckedTables:
    """The :class:`CheckedTables` of the rows of
    :func:`~qarla_spark.io.checks.check_records` (no Spark)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    schemas = CheckedTables.spark_schemas()

    def table(name, rows):
        schema = schemas[name]
        return pa.Table.from_pydict({f.name: [r[f.name] for r in rows] for f in schema.fields},
                                    schema=to_arrow_schema(schema))

    def of_kind(kind):
        return [r for r in topic_rows if r["kind"] == kind]

    problems = checks.problem_rows(topic_rows) + checks.problem_rows(task_rows)
    return CheckedTables(table("summaries", of_kind(SUMMARY)),
                         table("judgments", of_kind(JUDGMENT)),
                         table("sources", of_kind(SOURCE)),
                         table("problems", problems), table("tasks", task_rows),
                         table("ratings", of_kind(RATING)))


def testbed_from_tables(spark, tables: CheckedTables) -> Testbed:
    """The :class:`Testbed` of the tables of rows checked in the driver."""
    schemas = CheckedTables.spark_schemas()
    frames = {name: spark.createDataFrame(getattr(tables, name), schema)
              for name, schema in schemas.items()}
    by_kind = frames["problems"]
    return Testbed(frames["summaries"], frames["judgments"], frames["sources"],
                   by_kind.select(*_PROBLEM_COLS), by_kind, frames["tasks"], frames["ratings"])

