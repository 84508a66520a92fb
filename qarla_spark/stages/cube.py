"""The topic cube: every similarity of a topic as one numpy array, built
once, read by every per-topic kernel of the QARLA and HBR stages.

A :class:`TopicCube` is a persisted DataFrame with one row per topic (its
summaries' ``names``, sorted, their ``roles``, and ``values``: the bytes of
a float64 array ``values[s, r, i]`` = metric i of the ordered pair (s, r),
NaN on the diagonal) together with what it needs to be read: its metric
names, in the order of the array's last axis, and the minimum number of
models its topics have. Nothing else carries the metric order.

A run computes the cube's rows directly: the similarity battery returns
each topic as its cube row (:func:`qarla_spark.stages.similarity_plan.compute_cube`,
:meth:`TopicCube.of_rows`), and the long similarity table is written from
them. A similarity table given as such (an earlier run's, or the battery's
joined with user metric tables) is turned into the cube by
:meth:`TopicCube.build`, co-grouping it with the summaries by topic (one
shuffle, of numbers only: 64-bit hashes stand for the topic and the
summaries, a collision is reported, never merged). Either way the stages read
it with :func:`qarla_spark.spark.rounds.over_topics` (``mapInPandas`` keeping
the cube's partitioning: no further shuffle).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence, Tuple

import numpy as np

from qarla_spark.errors import ConfigError
from qarla_spark import thresholds
from qarla_spark.measures.masks import set_words
from qarla_spark.measures.metric_sets import MetricSet
from qarla_spark.spark import cache
from qarla_spark.spark.grouped import empty_frame

CUBE_SCHEMA = ("task string, topic string, names array<string>, roles array<string>, "
               "n_models int, n_metrics int, values binary, problem string")


@dataclass(frozen=True)
class Topic:
    """One topic of the cube, as the per-topic kernels see it."""

    task: str
    topic: str
    names: np.ndarray      # summarizers, sorted
    roles: np.ndarray      # "model" | "peer", aligned with names
    values: np.ndarray     # (n, n, n_metrics) float64, NaN on the diagonal
    #: the topic's human judgments (:func:`judged_arrays`), or None
    judged: Optional[dict] = None

    @property
    def models(self) -> np.ndarray:
        return np.flatnonzero(self.roles == "model")

    @property
    def peers(self) -> np.ndarray:
        return np.flatnonzero(self.roles == "peer")


@dataclass(frozen=True)
class TopicCube:
    """The cube of the topics with at least ``min_models`` models over the
    metrics ``metrics`` (see the module doc). Build it with :meth:`build`."""

    frame: object                 # the persisted DataFrame (CUBE_SCHEMA)
    metrics: Tuple[str, ...]
    min_models: int
    #: the frame has a ``judged`` column (:meth:`with_judgments`)
    judged: bool = False
    #: how many tasks the cube's topics belong to, when known (the per-task
    #: reduces take one partition per task, at most the topic partitions)
    n_tasks: Optional[int] = None

    @classmethod
    def build(cls, similarities, summaries, metrics: Sequence[str],
              min_models: int = thresholds.MIN_MODELS_HBR,
              n_partitions: Optional[int] = None) -> "TopicCube":
        """The cube of the topics with at least ``min_models`` models,
        persisted (in the active :func:`~qarla_spark.spark.cache.scope`) and
        checked: a metric absent from the table or an incomplete topic is a
        :class:`ConfigError` naming it."""
        metrics = tuple(metrics)
        if not metrics:
            raise ConfigError("no metric to evaluate")
        present = {r["metric"] for r in similarities.select("metric").distinct().collect()}
        missing = [m for m in metrics if m not in present]
        if missing:
            raise ConfigError(f"metric(s) not in the similarity table: {', '.join(missing)}")
        frame = cache.persist(_cube_frame(similarities, summaries, metrics, min_models,
                                          n_partitions))
        cube = cls(frame, metrics, min_models)
        cube.check()
        return cube

    @classmethod
    def of_rows(cls, rows, metrics: Sequence[str],
                min_models: int = thresholds.MIN_MODELS_HBR) -> "TopicCube":
        """The cube of the topics with at least ``min_models`` models among
        ``rows``, cube rows of every topic (:func:`~qarla_spark.spark.
        similarities.compute_cube`, complete by construction), persisted by
        the caller; a filter, no shuffle."""
        from pyspark.sql import functions as F
        metrics = tuple(metrics)
        if not metrics:
            raise ConfigError("no metric to evaluate")
        return cls(rows.filter(F.col("n_models") >= min_models), metrics, min_models)

    # -- what the cube holds ------------------------------------------------

    @property
    def n_metrics(self) -> int:
        return len(self.metrics)

    @property
    def spark(self):
        return self.frame.sparkSession

    def index(self, metric: str) -> int:
        try:
            return self.metrics.index(metric)
        except ValueError:
            raise ConfigError(f"metric {metric!r} is not in the similarity table") from None

    def indices(self, metrics: Sequence[str]) -> Tuple[int, ...]:
        return tuple(self.index(m) for m in metrics)

    def words(self, sets: Sequence[MetricSet]) -> np.ndarray:
        """(n_sets × mask words) int64: the mask words of each set over the
        cube's metrics (:mod:`~qarla_spark.measures.masks`)."""
        from qarla_spark.measures.masks import n_words
        rows = [set_words(s.indices(self.metrics), self.n_metrics) for s in sets]
        return (np.asarray(rows, dtype=np.int64).reshape(len(rows), -1) if rows
                else np.zeros((0, n_words(self.n_metrics)), dtype=np.int64))

    def singles(self) -> Tuple[MetricSet, ...]:
        """Every metric of the cube as a set of one."""
        return tuple(MetricSet([m]) for m in self.metrics)

    def restrict(self, min_models: int) -> "TopicCube":
        """The topics with at least ``min_models`` models (a filter: no
        shuffle, the cube's partitioning is kept)."""
        from pyspark.sql import functions as F
        if min_models <= self.min_models:
            return self
        return replace(self, frame=self.frame.filter(F.col("n_models") >= min_models),
                       min_models=min_models)

    def with_judgments(self, judgments) -> "TopicCube":
        """The cube with each topic's human judgments beside its similarities
        (column ``judged``: the topic's judgment rows, or null), so that the
        per-topic kernels read both from one row. The judgments are
        aggregated per topic in the cube's partitioning and joined to it
        without moving the cube; the result is persisted. ``judgments`` None: the cube."""
        from pyspark.sql import functions as F

        from qarla_spark.spark.partitioning import by_topic
        if judgments is None or self.judged:
            return self
        n = self.frame.rdd.getNumPartitions()
        per_topic = (by_topic(judgments.select("task", "topic", "summarizer", "criterion",
                                               "score"), n)
                     .groupBy("task", "topic")
                     .agg(F.collect_list(F.struct("summarizer", "criterion", "score"))
                          .alias("judged")))
        # a shuffled hash join: both sides are partitioned by (task, topic) in
        # the cube's partitions, so nothing moves (a broadcast join would be a
        # Spark job of its own)
        frame = cache.persist(self.frame.join(per_topic.hint("shuffle_hash"),
                                              ["task", "topic"], "left"))
        return replace(self, frame=frame, judged=True)

    def for_tasks(self, n_tasks: int) -> "TopicCube":
        """The cube, knowing that its topics belong to ``n_tasks`` tasks."""
        return replace(self, n_tasks=int(n_tasks))

    def check(self) -> None:
        """Raise :class:`ConfigError` naming the first incomplete topics (an
        action on the persisted frame)."""
        from pyspark.sql import functions as F
        bad = (self.frame.filter(F.col("problem").isNotNull())
               .select("task", "topic", "problem").limit(5).collect())
        if bad:
            raise ConfigError("the similarity table is incomplete: " + "; ".join(
                f"task {r['task']}, topic {r['topic']}: {r['problem']}" for r in bad))

    # -- reading it ---------------------------------------------------------


def topic_of(row) -> Topic:
    """The :class:`Topic` of one cube row (a mapping)."""
    names = np.asarray(row["names"], dtype=object)
    n = len(names)
    values = np.frombuffer(row["values"], dtype=np.float64).reshape(n, n, int(row["n_metrics"]))
    judged = row.get("judged") if hasattr(row, "get") else None
    return Topic(row["task"], row["topic"], names, np.asarray(row["roles"], dtype=object),
                 values, judged_arrays(judged))


def judged_arrays(rows) -> Optional[dict]:
    """A topic's judgment rows (structs of summarizer, criterion, score, in
    any order) as arrays sorted by (criterion, summarizer, score):
    ``{"summarizer", "criterion", "score"}``; None without judgments."""
    if rows is None:
        return None
    rows = list(rows)
    if not rows:
        return None
    def field(r, name):
        return r[name] if not hasattr(r, "asDict") else r.asDict()[name]
    triples = sorted((str(field(r, "criterion")), str(field(r, "summarizer")),
                      float(field(r, "score"))) for r in rows)
    return {"criterion": np.asarray([t[0] for t in triples], dtype=object),
            "summarizer": np.asarray([t[1] for t in triples], dtype=object),
            "score": np.asarray([t[2] for t in triples], dtype=np.float64)}


def topic_models(summaries, min_models: int = thresholds.MIN_MODELS_QUEEN):
    """(task, topic, n_models) of topics with at least ``min_models`` models."""
    from pyspark.sql import functions as F
    return (summaries.groupBy("task", "topic")
            .agg(F.sum((F.col("role") == "model").cast("int")).alias("n_models"))
            .filter(F.col("n_models") >= min_models))


def _cube_frame(similarities, summaries, metrics: Tuple[str, ...], min_models: int,
                n_partitions: Optional[int]):
    """The cube's rows (lazy): the long similarity table co-grouped with the
    summaries by topic; ``problem`` names the first missing or duplicated
    value of a topic (null when complete)."""
    import pandas as pd
    from pyspark.sql import functions as F

    from qarla_spark.spark.partitioning import by_topic, topic_partitions

    spark = summaries.sparkSession
    n = topic_partitions(spark, n_partitions)
    k = len(metrics)
    index = spark.createDataFrame([(m, i) for i, m in enumerate(metrics)], "metric string, i int")
    # only numbers cross the shuffle and Arrow: 64-bit hashes stand for the
    # topic and the summaries (a collision is detected and reported below)
    left = by_topic(similarities.join(F.broadcast(index), "metric")
                    .select(F.xxhash64("task", "topic").alias("key"),
                            F.xxhash64("summarizer_s").alias("sh"),
                            F.xxhash64("summarizer_r").alias("rh"), "i", "value"), n, ["key"])
    topics = topic_models(summaries, min_models).select("task", "topic")
    right = by_topic(summaries.join(topics, ["task", "topic"])
                     .select(F.xxhash64("task", "topic").alias("key"), "task", "topic",
                             F.col("summarizer").alias("name"), "role",
                             F.xxhash64("summarizer").alias("h")), n, ["key"])

    def kernel(pdf, people):
        if people.empty:   # pairs of a topic with too few models: not in the cube
            return empty_frame(CUBE_SCHEMA)
        people = people.sort_values(["task", "topic", "name"])
        task, topic = people["task"].iloc[0], people["topic"].iloc[0]
        names = people["name"].to_numpy(dtype=object)
        hashes = people["h"].to_numpy(dtype=np.int64)
        n_s = len(names)
        problem = None
        if people[["task", "topic"]].drop_duplicates().shape[0] > 1:
            problem = "two topics share a 64-bit hash; rename one"
        elif len(np.unique(hashes)) != n_s:
            problem = "two summaries of the topic share a 64-bit hash; rename one"
        order = np.argsort(hashes, kind="stable")
        sorted_h = hashes[order]

        def position(h):
            at = np.minimum(np.searchsorted(sorted_h, h), n_s - 1)
            return np.where(sorted_h[at] == h, order[at], -1)

        si = position(pdf["sh"].to_numpy(dtype=np.int64))
        ri = position(pdf["rh"].to_numpy(dtype=np.int64))
        mi = pdf["i"].to_numpy(dtype=np.int64)
        known = (si >= 0) & (ri >= 0)
        if problem is None and not known.all():
            problem = "a pair names a summary that is not in the topic"
        keep = known & (si != ri)
        flat = (si[keep] * n_s + ri[keep]) * k + mi[keep]
        values = np.full((n_s, n_s, k), np.nan)
        values.reshape(-1)[flat] = pdf["value"].to_numpy(dtype=np.float64)[keep]
        if problem is None and len(np.unique(flat)) != len(flat):
            uniq, counts = np.unique(flat, return_counts=True)
            d = uniq[counts > 1][0]
            problem = (f"pair ({names[d // k // n_s]}, {names[d // k % n_s]}) has more than one "
                       f"value of {metrics[d % k]}")
        if problem is None:
            hole = np.isnan(values)
            hole[np.arange(n_s), np.arange(n_s)] = False
            if hole.any():
                s_, r_, i_ = (int(x[0]) for x in np.nonzero(hole))
                problem = f"pair ({names[s_]}, {names[r_]}) has no value of {metrics[i_]}"
        return pd.DataFrame({
            "task": [task], "topic": [topic], "names": [list(names)],
            "roles": [list(people["role"])],
            "n_models": [int((people["role"] == "model").sum())], "n_metrics": [k],
            "values": [values.tobytes()], "problem": [problem]})

    return (left.groupBy("key").cogroup(right.groupBy("key"))
            .applyInPandas(kernel, CUBE_SCHEMA))
