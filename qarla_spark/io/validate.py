"""Validate raw records and build the canonical testbed tables.

Checks (each problem names its file, line/row and field):

errors
    everything the parsers report (malformed JSON/CSV/Parquet, missing or
    empty fields, unknown roles, empty texts, non-UTF-8 bytes, non-numeric
    scores, unreadable files); duplicate ``(task, topic, summarizer)``;
    judgments for unknown summaries; duplicate ``(task, topic, summarizer,
    criterion)`` judgments; duplicate sources of a topic.
warnings
    topics with fewer than 3 models (QUEEN needs 3: the measures skip them),
    with exactly 3 (KING holds one out and needs 4), without peers; a
    summarizer that is a model in some topics and a peer in others; sources
    for a topic without summaries.

Identical copies of a reference embedded in several SacreROUGE records are
one summary; any other repeat is a duplicate.

All checks are Spark aggregations; the driver receives only counts, the
per-task description and at most ``limit`` problems of each severity.

The testbed-wide warnings have a *kind* (:data:`KINDS`: e.g. topics with too
few models); :meth:`ValidationReport.format` prints one line per kind and
task with the count and the first few names (:func:`group_problems`), while
every instance stays a row of the ``problems`` table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from qarla_spark.errors import InputError, Problem
from qarla_spark.io.schemas import JUDGMENT, PROBLEM, SOURCE, SUMMARY
from qarla_spark.measures.thresholds import MIN_MODELS_JACKKNIFE as MIN_MODELS_KING
from qarla_spark.measures.thresholds import MIN_MODELS_QUEEN
from qarla_spark.spark import cache

_PROBLEM_COLS = ("severity", "file", "line", "unit", "field", "message")
#: the columns that group a problem (null for the parsers' problems, which
#: are listed one by one with their place)
_KIND_COLS = ("kind", "task", "detail", "subject")

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


@dataclass
class Testbed:
    """The canonical tables (schemas in :mod:`qarla_spark.io.schemas`) and
    every problem found (``PROBLEM_SCHEMA``)."""

    summaries: object
    judgments: object
    sources: object
    problems: object
    #: ``problems`` with the columns that group them (kind, task, detail,
    #: subject; null for the parsers' problems)
    problems_by_kind: object = None


def _problem_frame(df, severity: str, field_name: Optional[str], message,
                   file=None, line=None, unit=None, kind: Optional[str] = None,
                   subject=None, detail=None):
    """Problem rows; with a ``kind`` (of :data:`KINDS`), also the columns
    that group them: the row's ``task``, ``detail`` and ``subject`` (the
    name a grouped line lists)."""
    from pyspark.sql import functions as F

    def text(col):
        return (col if col is not None else F.lit(None)).cast("string")

    return df.select(
        F.lit(severity).alias("severity"),
        (file if file is not None else F.lit(None).cast("string")).alias("file"),
        (line if line is not None else F.lit(None).cast("long")).alias("line"),
        (unit if unit is not None else F.lit(None).cast("string")).alias("unit"),
        F.lit(field_name).cast("string").alias("field"),
        message.alias("message"),
        F.lit(kind).cast("string").alias("kind"),
        text(F.col("task") if kind is not None else None).alias("task"),
        text(detail).alias("detail"),
        text(subject).alias("subject"),
    )


def _merge_embedded(df, keys):
    """Drop repeats of an embedded record identical to an earlier one."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    w = Window.partitionBy(*keys).orderBy(F.col("embedded").asc(), "file", "line")
    return (df.withColumn("_rn", F.row_number().over(w))
              .filter(~F.col("embedded") | (F.col("_rn") == 1)).drop("_rn"))


def _duplicates(df, keys, what: str, field_name: str):
    """One error per repeated key, placed at its first occurrence and naming
    another one."""
    from pyspark.sql import functions as F
    places = F.sort_array(F.collect_list(F.struct("file", "line", "unit")))
    grouped = (df.groupBy(*keys).agg(F.count(F.lit(1)).alias("n"), places.alias("places"))
                 .filter("n > 1"))
    first, second = F.col("places")[0], F.col("places")[1]
    other = F.concat_ws(", ", second["file"],
                        F.concat(second["unit"], F.lit(" "), second["line"].cast("string")))
    ident = F.concat_ws(", ", *[F.format_string(f"{k} '%s'", F.col(k)) for k in keys])
    message = F.format_string(f"duplicate {what} (%s): %d records, another at %s",
                              ident, F.col("n"), other)
    return grouped, _problem_frame(grouped, "error", field_name, message,
                                   first["file"], first["line"], first["unit"])


def build_testbed(raw) -> Testbed:
    """Split raw records into canonical tables plus a table of problems
    (lazy: nothing is computed here)."""
    from pyspark.sql import functions as F

    parse_problems = (raw.filter(F.col("kind") == PROBLEM).select(*_PROBLEM_COLS)
                      .select("*", *[F.lit(None).cast("string").alias(c) for c in _KIND_COLS]))

    # summaries are read by every check below and by every later stage
    summ = cache.persist(_merge_embedded(raw.filter(F.col("kind") == SUMMARY),
                                         ["task", "topic", "summarizer", "role", "text"]))
    skeys = ["task", "topic", "summarizer"]
    dup_summ, dup_summ_problems = _duplicates(summ, skeys, "summary", "summarizer")

    judg = raw.filter(F.col("kind") == JUDGMENT)
    unknown = judg.join(summ.select(*skeys).distinct(), skeys, "left_anti")
    unknown_problems = _problem_frame(
        unknown, "error", "summarizer",
        F.format_string("judgment for an unknown summary: task '%s', topic '%s' has no "
                        "summary by '%s' in the input", "task", "topic", "summarizer"),
        F.col("file"), F.col("line"), F.col("unit"))
    judg_single = judg.join(dup_summ.select(*skeys), skeys, "left_anti")
    _, dup_judg_problems = _duplicates(judg_single, skeys + ["criterion"], "judgment",
                                       "criterion")

    src = _merge_embedded(raw.filter(F.col("kind") == SOURCE), ["task", "topic", "documents"])
    _, dup_src_problems = _duplicates(src, ["task", "topic"], "sources of a topic", "topic")
    topics = summ.select("task", "topic").distinct()
    orphan = src.join(topics, ["task", "topic"], "left_anti")
    orphan_problems = _problem_frame(
        orphan, "warning", "topic",
        F.format_string("sources for topic '%s' of task '%s', which has no summaries",
                        "topic", "task"), F.col("file"), F.col("line"), F.col("unit"),
        kind="orphan_sources", subject=F.col("topic"))

    per_topic = summ.groupBy("task", "topic").agg(
        F.sum((F.col("role") == "model").cast("int")).alias("n_models"),
        F.sum((F.col("role") == "peer").cast("int")).alias("n_peers"))
    few = per_topic.filter(F.col("n_models") < MIN_MODELS_QUEEN)
    few_problems = _problem_frame(few, "warning", None, F.format_string(
        "topic '%s' of task '%s' has %d model(s): QUEEN needs %d and KING %d, so the "
        "measures will skip this topic", "topic", "task", "n_models",
        F.lit(MIN_MODELS_QUEEN), F.lit(MIN_MODELS_KING)),
        kind="few_models", subject=F.col("topic"), detail=F.col("n_models"))
    three = per_topic.filter(F.col("n_models") == MIN_MODELS_QUEEN)
    three_problems = _problem_frame(three, "warning", None, F.format_string(
        "topic '%s' of task '%s' has %d models: KING holds one out and needs %d, so KING "
        "will skip this topic", "topic", "task", "n_models", F.lit(MIN_MODELS_KING)),
        kind="three_models", subject=F.col("topic"), detail=F.col("n_models"))
    no_peer = per_topic.filter(F.col("n_peers") == 0)
    no_peer_problems = _problem_frame(no_peer, "warning", None, F.format_string(
        "topic '%s' of task '%s' has no peer summaries", "topic", "task"),
        kind="no_peers", subject=F.col("topic"))
    both = (summ.groupBy("task", "summarizer").agg(F.countDistinct("role").alias("roles"))
                .filter("roles > 1"))
    both_problems = _problem_frame(both, "warning", None, F.format_string(
        "summarizer '%s' of task '%s' is a model in some topics and a peer in others",
        "summarizer", "task"), kind="model_and_peer", subject=F.col("summarizer"))

    problems = parse_problems
    for frame in (dup_summ_problems, unknown_problems, dup_judg_problems, dup_src_problems,
                  orphan_problems, few_problems, three_problems, no_peer_problems,
                  both_problems):
        problems = problems.unionByName(frame)

    return Testbed(
        summaries=summ.select("task", "topic", "summarizer", "role", "text"),
        judgments=judg.select("task", "topic", "summarizer", "criterion", "score"),
        sources=src.select("task", "topic", "documents"),
        problems=problems.select(*_PROBLEM_COLS),
        problems_by_kind=problems,
    )


def task_stats(testbed: Testbed) -> List[TaskStats]:
    """Per-task description (small: one row per task, one per criterion)."""
    from pyspark.sql import functions as F

    summ = testbed.summaries
    per_topic = summ.groupBy("task", "topic").agg(
        F.sum((F.col("role") == "model").cast("int")).alias("n_models"))
    topic_rows = per_topic.groupBy("task").agg(
        F.count(F.lit(1)).alias("n_topics"),
        F.min("n_models").alias("models_min"),
        F.expr("percentile(n_models, 0.5)").alias("models_median"),
        F.max("n_models").alias("models_max")).collect()
    count_rows = summ.groupBy("task").agg(
        F.count(F.lit(1)).alias("n_summaries"),
        F.sum((F.col("role") == "model").cast("int")).alias("n_model_summaries"),
        F.sum((F.col("role") == "peer").cast("int")).alias("n_peer_summaries"),
        F.countDistinct(F.when(F.col("role") == "model", F.col("summarizer")))
         .alias("n_model_summarizers"),
        F.countDistinct(F.when(F.col("role") == "peer", F.col("summarizer")))
         .alias("n_peer_systems")).collect()
    src_rows = (testbed.sources.join(summ.select("task", "topic").distinct(), ["task", "topic"])
                .groupBy("task").agg(F.countDistinct("topic").alias("n"))).collect()
    judg_rows = (testbed.judgments.groupBy("task", "criterion").agg(F.count(F.lit(1)).alias("n"))
                 .collect())

    counts = {r["task"]: r for r in count_rows}
    sources = {r["task"]: r["n"] for r in src_rows}
    judgments: Dict[str, Dict[str, int]] = {}
    for r in judg_rows:
        judgments.setdefault(r["task"], {})[r["criterion"]] = r["n"]
    stats = []
    for r in sorted(topic_rows, key=lambda r: r["task"]):
        c = counts[r["task"]]
        stats.append(TaskStats(
            task=r["task"], n_topics=r["n_topics"], models_min=r["models_min"],
            models_median=float(r["models_median"]), models_max=r["models_max"],
            n_model_summarizers=c["n_model_summarizers"], n_peer_systems=c["n_peer_systems"],
            n_summaries=c["n_summaries"], n_model_summaries=c["n_model_summaries"],
            n_peer_summaries=c["n_peer_summaries"],
            n_topics_with_sources=sources.get(r["task"], 0),
            judgments=judgments.get(r["task"], {})))
    return stats


def collect_problems(problems, limit: int = 50, shown: int = SHOWN_NAMES):
    """(problems shown, number of errors, number of warnings, the shown
    problems without a kind, the groups of those with one), in one Spark
    job: at most ``limit`` problems of each severity, errors first, in
    file/line order; per group (:func:`group_problems`) its size and its
    first ``shown`` names. ``problems`` may lack the kind columns."""
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
