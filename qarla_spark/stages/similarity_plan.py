"""The similarity table: every metric on every ordered same-topic pair.

Output schema (long form, SPEC §2):

    task: string, topic: string, summarizer_s: string, summarizer_r: string,
    metric: string, value: double

one row per ordered pair (s, r), s ≠ r, of summaries of the same topic
(models and peers alike) and per metric; ``r`` plays the reference.

How it runs: summaries and source documents are co-grouped by (task, topic)
into an explicit number of partitions (so adaptive execution cannot merge
topics into one task); each topic is computed on an executor by
:func:`qarla_spark.metrics.battery.topic_similarities` and returned as one
row of the topic cube (:mod:`qarla_spark.stages.cube`: the topic's sorted
summaries and one float64 array of every metric of every ordered pair) —
:func:`compute_cube`. A run keeps those rows: the QARLA and HBR stages read
them as they are, with no shuffle of the similarity table. The long table is
made from them (:func:`cube_to_long`: one row per pair with a column per
metric through Arrow; the JVM then turns it into the long form).

User metrics given as a table with the same schema are validated (every
ordered pair of every topic present exactly once, finite values, no clash
with another metric's name) and appended, so that every later stage treats
them like built-in metrics.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from qarla_spark.errors import ConfigError, InputError, Problem
from qarla_spark.metrics import registry
from qarla_spark.metrics.registry import UserMetric
from qarla_spark.spark import cache

KEYS = ("task", "topic")
PAIR_KEYS = ("task", "topic", "summarizer_s", "summarizer_r")


def similarity_schema():
    from pyspark.sql.types import DoubleType, StringType, StructField, StructType
    return StructType([
        StructField("task", StringType(), False),
        StructField("topic", StringType(), False),
        StructField("summarizer_s", StringType(), False),
        StructField("summarizer_r", StringType(), False),
        StructField("metric", StringType(), False),
        StructField("value", DoubleType(), False),
    ])


def _wide_schema(metrics: Sequence[str]):
    from pyspark.sql.types import DoubleType, StringType, StructField, StructType
    fields = [StructField(k, StringType(), False) for k in PAIR_KEYS]
    fields += [StructField(f"m{i}", DoubleType(), False) for i in range(len(metrics))]
    return StructType(fields)


def _cube_function(metrics: Tuple[str, ...], user: Dict[str, UserMetric],
                   options: Dict[str, object]):
    """The per-topic function shipped to the executors (a closure over plain
    data: metric names, user functions, options): a topic's summaries (and
    sources) in, its cube row out (``CUBE_SCHEMA``). ``options["languages"]``:
    each task's language (``en`` for a task it does not name)."""
    languages = dict(options.pop("languages", None) or {})

    def compute(summaries, sources):
        import numpy as np
        import pandas as pd

        from qarla_spark.metrics.battery import topic_similarities
        from qarla_spark.stages.cube import CUBE_SCHEMA
        from qarla_spark.spark.grouped import empty_frame

        if summaries.empty:
            return empty_frame(CUBE_SCHEMA)
        summaries = summaries.sort_values("summarizer", kind="stable").reset_index(drop=True)
        task, topic = summaries["task"].iloc[0], summaries["topic"].iloc[0]
        docs = None
        if not sources.empty:
            docs = [d for row in sources["documents"] for d in list(row)]
        roles = list(summaries["role"])
        result = topic_similarities(
            list(summaries["text"]), metrics, sources=docs, roles=roles,
            user=user, options=options, where=f"task {task!r}, topic {topic!r}",
            language=languages.get(task, "en"))
        n = len(summaries)
        values = np.full((n, n, len(metrics)), np.nan)
        values[result.s, result.r] = result.values
        return pd.DataFrame({
            "task": [task], "topic": [topic], "names": [list(summaries["summarizer"])],
            "roles": [roles], "n_models": [sum(r == "model" for r in roles)],
            "n_metrics": [len(metrics)], "values": [values.tobytes()], "problem": [None]})

    return compute


def cube_to_wide(cube_rows, metrics: Sequence[str]):
    """(pair keys, m0..mk): every ordered pair s ≠ r of each topic of a
    frame of cube rows, a column per metric (s-major, as the battery
    computes them)."""
    import numpy as np
    import pandas as pd

    from qarla_spark.metrics.battery import ordered_pairs
    from qarla_spark.stages.cube import topic_of

    k = len(metrics)
    schema = _wide_schema(metrics)

    def run(batches):
        for pdf in batches:
            parts = []
            for row in pdf.to_dict("records"):
                topic = topic_of(row)
                s, r = ordered_pairs(len(topic.names))
                part = {"task": topic.task, "topic": topic.topic,
                        "summarizer_s": topic.names[s], "summarizer_r": topic.names[r]}
                pairs = topic.values[s, r]
                for i in range(k):
                    part[f"m{i}"] = pairs[:, i]
                parts.append(pd.DataFrame(part))
            yield (pd.concat(parts, ignore_index=True) if parts
                   else pd.DataFrame({f.name: pd.Series([], dtype=object if i < 4 else
                                                        np.float64)
                                      for i, f in enumerate(schema.fields)}))

    return cube_rows.mapInPandas(run, schema)


def long_arrow(metrics: Sequence[str]):
    """A function of a batch of cube rows (pandas) to the long similarity
    table's rows as pyarrow tables, one per topic (names and metrics as
    dictionary arrays: no Python object per row): what the executors write
    (:class:`~qarla_spark.spark.output.ExecutorTable`)."""
    metrics = list(metrics)

    def to_arrow(pdf):
        import numpy as np
        import pyarrow as pa

        from qarla_spark.metrics.battery import ordered_pairs
        from qarla_spark.stages.cube import topic_of
        k = len(metrics)
        metric_dict = pa.array(metrics, type=pa.string())
        out = []
        for row in pdf.to_dict("records"):
            topic = topic_of(row)
            n = len(topic.names)
            s, r = ordered_pairs(n)
            names = pa.array(list(topic.names), type=pa.string())
            rows = len(s) * k

            def dictionary(codes, values):
                return pa.DictionaryArray.from_arrays(pa.array(codes, type=pa.int32()), values)
            out.append(pa.table({
                # the topic's key repeated by Arrow (not a Python string per row:
                # 10 of a topic's 13 ms, issue 36) — the same string arrays
                "task": pa.repeat(pa.scalar(topic.task, pa.string()), rows),
                "topic": pa.repeat(pa.scalar(topic.topic, pa.string()), rows),
                "summarizer_s": dictionary(np.repeat(s, k).astype(np.int32), names),
                "summarizer_r": dictionary(np.repeat(r, k).astype(np.int32), names),
                "metric": dictionary(np.tile(np.arange(k, dtype=np.int32), len(s)),
                                     metric_dict),
                "value": pa.array(topic.values[s, r].reshape(-1), type=pa.float64())}))
        return out

    return to_arrow


def to_long(wide, metrics: Sequence[str]):
    """(pair keys, m0..mk) -> (pair keys, metric, value), in the JVM."""
    from pyspark.sql import functions as F
    if not metrics:
        return wide.sparkSession.createDataFrame([], similarity_schema())
    pairs = F.array(*[F.struct(F.lit(name).alias("metric"), F.col(f"m{i}").alias("value"))
                      for i, name in enumerate(metrics)])
    return (wide.select(*PAIR_KEYS, F.explode(pairs).alias("mv"))
                .select(*PAIR_KEYS, F.col("mv.metric").alias("metric"),
                        F.col("mv.value").alias("value")))


def compute_cube(summaries, metrics: Sequence[str], sources=None,
                 user: Optional[Mapping[str, UserMetric]] = None,
                 options: Optional[Mapping[str, object]] = None,
                 n_partitions: Optional[int] = None):
    """The cube rows (``CUBE_SCHEMA``) of every topic of the canonical
    ``summaries`` table, over ``metrics`` (built-in and registered Python
    metrics), in that order (lazy)."""
    from qarla_spark.stages.cube import CUBE_SCHEMA
    from qarla_spark.spark.partitioning import by_topic, topic_partitions

    metrics = tuple(metrics)
    user = {m: u for m, u in (user or registry.user_functions()).items() if m in metrics}
    unknown = [m for m in metrics if m not in registry.BUILTIN and m not in user]
    if unknown:
        raise ConfigError(f"cannot compute {', '.join(unknown)}: not a built-in or "
                          "registered metric (user tables are added with add_user_tables)")
    spark = summaries.sparkSession
    n = topic_partitions(spark, n_partitions)
    if sources is None:
        sources = spark.createDataFrame([], "task string, topic string, documents array<string>")
    left = by_topic(summaries.select("task", "topic", "summarizer", "role", "text"), n)
    right = by_topic(sources.select("task", "topic", "documents"), n)
    return (left.groupBy(*KEYS).cogroup(right.groupBy(*KEYS))
                .applyInPandas(_cube_function(metrics, dict(user), dict(options or {})),
                               CUBE_SCHEMA))


def cube_to_long(cube_rows, metrics: Sequence[str]):
    """The long similarity table of a frame of cube rows over ``metrics``
    (lazy)."""
    return to_long(cube_to_wide(cube_rows, metrics), metrics)


def compute_similarities(summaries, metrics: Sequence[str], sources=None,
                         user: Optional[Mapping[str, UserMetric]] = None,
                         options: Optional[Mapping[str, object]] = None,
                         n_partitions: Optional[int] = None):
    """The long similarity table of ``metrics`` (built-in and registered
    Python metrics) for the canonical ``summaries`` table (lazy)."""
    return cube_to_long(compute_cube(summaries, metrics, sources, user, options, n_partitions),
                        metrics)


# ---------------------------------------------------------------------------
# user tables
# ---------------------------------------------------------------------------

def read_user_table(spark, path: str):
    """A user metric table (Parquet file/folder, or CSV with a header) with
    the long schema."""
    from pyspark.sql import functions as F
    lower = path.lower().rstrip("/")
    try:
        if lower.endswith(".csv") or lower.endswith(".csv.gz"):
            df = spark.read.option("header", "true").option("mode", "FAILFAST").csv(path)
        else:
            df = spark.read.parquet(path)
    except Exception as exc:  # AnalysisException: path missing, not Parquet...
        raise InputError([Problem("error", path, None, None,
                                  f"cannot read the metric table: {str(exc).splitlines()[0]}")],
                         header="cannot read a user metric table") from None
    missing = [c for c in ("task", "topic", "summarizer_s", "summarizer_r", "metric", "value")
               if c not in df.columns]
    if missing:
        raise InputError([Problem("error", path, None, ", ".join(missing),
                                  f"the metric table lacks column(s) {', '.join(missing)} "
                                  "(expected task, topic, summarizer_s, summarizer_r, metric, "
                                  "value)")], header="bad user metric table")
    return df.select(*[F.col(c).cast("string") for c in PAIR_KEYS], F.col("metric").cast("string"),
                     F.col("value").cast("double").alias("value"),
                     F.coalesce(F.col("value").cast("string"), F.lit("null")).alias("_raw"))


def check_user_table(table, summaries, path: str, reserved: Iterable[str], limit: int = 20):
    """Validate a user table against the testbed; return its metric names.

    Errors (naming up to ``limit`` pairs): a metric name that is already
    taken; a value that is missing, not a number or not finite; a pair given
    twice; a pair whose summaries are not in the testbed; an ordered pair of
    the testbed missing for a metric.
    """
    from pyspark.sql import functions as F

    from qarla_spark.names import check_metric_name

    metric_names = sorted((r["metric"] for r in table.select("metric").distinct().collect()),
                          key=lambda m: (m is None, m or ""))
    problems: List[Problem] = []
    if any(m is None or not m.strip() for m in metric_names):
        problems.append(Problem("error", path, None, "metric", "empty metric name"))
    for m in metric_names:
        if m is not None and m.strip():
            try:
                check_metric_name(m)
            except ConfigError as exc:
                problems.append(Problem("error", path, None, "metric", str(exc)))
    clash = sorted(set(metric_names) & set(reserved))
    if clash:
        problems.append(Problem("error", path, None, "metric",
                                f"metric name(s) already taken: {', '.join(clash)}"))
    if problems:
        raise InputError(problems, header="bad user metric table")

    names = summaries.select("task", "topic", F.col("summarizer").alias("summarizer_s"))
    expected = (names.join(names.withColumnRenamed("summarizer_s", "summarizer_r"),
                           ["task", "topic"])
                .filter(F.col("summarizer_s") != F.col("summarizer_r")))
    expected = expected.crossJoin(table.select("metric").distinct())

    def show(df, message):
        rows = df.limit(limit).collect()
        return [Problem("error", path, None, None, message.format(**r.asDict())) for r in rows]

    bad_values = table.filter(F.col("value").isNull() | F.isnan("value")
                              | (F.abs("value") == float("inf")))
    dup = (table.groupBy(*PAIR_KEYS, "metric").count().filter("count > 1"))
    unknown = table.join(expected, list(PAIR_KEYS) + ["metric"], "left_anti")
    missing = expected.join(table, list(PAIR_KEYS) + ["metric"], "left_anti")
    checks = [
        (bad_values, "metric '{metric}', pair ({task}, {topic}, {summarizer_s}, {summarizer_r}): "
                     "value {_raw} is missing or not a finite number"),
        (dup, "metric '{metric}', pair ({task}, {topic}, {summarizer_s}, {summarizer_r}) is "
              "given {count} times"),
        (unknown, "metric '{metric}', pair ({task}, {topic}, {summarizer_s}, {summarizer_r}): "
                  "not an ordered pair of summaries of the testbed"),
        (missing, "metric '{metric}' has no value for the pair ({task}, {topic}, "
                  "{summarizer_s}, {summarizer_r})"),
    ]
    n_errors = 0
    for df, message in checks:
        count = df.count()
        if count:
            n_errors += count
            problems += show(df, message)
    if problems:
        raise InputError(problems, n_errors=n_errors, header=f"bad user metric table {path}")
    return tuple(metric_names)


def add_user_tables(similarities, summaries, paths: Sequence[str], reserved: Iterable[str]):
    """Append validated user tables to a similarity table. Returns
    (table, names of the added metrics)."""
    spark = summaries.sparkSession
    added: List[str] = []
    taken = set(reserved)
    for path in paths:
        table = cache.persist(read_user_table(spark, path))
        names = check_user_table(table, summaries, path, taken)
        taken.update(names)
        added += names
        similarities = similarities.unionByName(table.drop("_raw"))
    return similarities, tuple(added)
