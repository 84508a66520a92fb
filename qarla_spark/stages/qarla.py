"""The QARLA stage (SPEC §3-7), every task at once, over a topic cube.

1. KING and ORANGE of every single metric and every requested set;
2. per task, agglomerative clustering of the metrics into k clusters, the
   best-KING representative of each cluster, KING of every non-empty subset
   of the representatives, and the best set;
3. QUEEN, system scores, JACK and its growth curve of the best set, the
   representatives and the requested sets; their agreement with human
   judgments, the human-summariser test, KING vs Pearson.

The Spark plans are in :mod:`~qarla_spark.stages.qarla_tables`, the text
the run prints in :mod:`qarla_spark.summary`. This module decides what to
evaluate; the driver receives only small per-task results (KING of each
evaluated set, clusters, the best set's ranking, ...), all collected here.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from qarla_spark.io.validate import SHOWN_NAMES, first_names
from qarla_spark.measures import thresholds
from qarla_spark.measures.clustering import representatives, subsets
from qarla_spark.measures.jack import peer_orders
from qarla_spark.measures.metric_sets import MetricSet, best_of
from qarla_spark.spark import cache
from qarla_spark.spark.cube import TopicCube
from qarla_spark.spark.grouped import local_frame
from qarla_spark.stages.clustering import SampleMasks
from qarla_spark.stages import qarla_tables as qt

#: plain-score baselines of the human-summariser test (when in the table)
PLAIN_BASELINES = ("R-1.a", "R-2.a")


class QarlaWarning(UserWarning):
    """A topic the QARLA stage leaves out (too few models, no peer)."""


SKIP_REASONS = {
    "queen": f"with fewer than {thresholds.MIN_MODELS_QUEEN} models (no QUEEN, KING, JACK)",
    "king": f"with {thresholds.MIN_MODELS_QUEEN} models or no peer (QUEEN and JACK only; "
            "no KING, ORANGE, held-out scores)",
}


@dataclass(frozen=True)
class Ranked:
    """A summarizer in the ranking of systems and references under a set."""

    name: str
    role: str
    queen: float
    position: int
    above_peers: Optional[bool]     # models: strictly above every peer (exact)


@dataclass
class TaskQarla:
    """What the QARLA stage found for one task (the run prints it)."""

    task: str
    best_set: MetricSet
    best_king: float
    best_single: MetricSet
    best_single_king: float
    representatives: List[str]
    clusters: List[List[str]]
    jack: float = float("nan")
    ranking: List[Ranked] = field(default_factory=list)      # best set, best first
    agreement: Dict[str, tuple] = field(default_factory=dict)   # criterion -> (r, rho, tau)
    human_first: Dict[str, tuple] = field(default_factory=dict)  # measure -> (first, models)
    skipped: Dict[str, tuple] = field(default_factory=dict)   # reason -> (count, first names)

    @property
    def models_above(self) -> int:
        """Models whose score is strictly above every system's (exact)."""
        return sum(1 for r in self.ranking if r.above_peers)

    @property
    def n_models(self) -> int:
        return sum(1 for r in self.ranking if r.role == "model")

    def info(self) -> Dict[str, Any]:
        """The task's entry of ``run.json``."""
        return {"best_set": self.best_set.label, "best_king": self.best_king,
                "best_single": self.best_single.label,
                "best_single_king": self.best_single_king,
                "representatives": list(self.representatives), "jack": self.jack,
                "models_above_every_system": self.models_above, "n_models": self.n_models,
                "skipped_topics": {reason: {"count": n, "first": names}
                                   for reason, (n, names) in self.skipped.items()}}


@dataclass(frozen=True)
class TaskPlan:
    """The sets the QARLA stage chose for one task (what the statistics
    stage compares)."""

    best: MetricSet
    best_single: MetricSet
    representatives: Tuple[MetricSet, ...]
    subsets: Tuple[MetricSet, ...]


@dataclass
class QarlaResult:
    tables: Dict[str, Any]          # declared table name -> DataFrame
    tasks: List[TaskQarla]
    requested: Tuple[MetricSet, ...]
    timings: Dict[str, float] = field(default_factory=dict)   # seconds per phase
    #: the evaluations (singles and requested sets; subsets; detailed sets)
    evaluations: Tuple[Any, ...] = ()
    plans: Dict[str, TaskPlan] = field(default_factory=dict)

    def info(self, config) -> Dict[str, Any]:
        return {"clusters": config.clusters, "triples": config.triples,
                "jack_orders": config.jack_orders,
                "requested_sets": [s.label for s in self.requested],
                "timings": dict(self.timings),
                "tasks": {t.task: t.info() for t in self.tasks}}


def skipped_topics(summaries, shown: int = 10) -> Dict[str, Dict[str, tuple]]:
    """Per task and reason (:data:`SKIP_REASONS`), the number of topics the
    QARLA stage leaves out and the first ``shown`` of them (by name); one
    small row per (task, reason) reaches the driver."""
    from pyspark.sql import functions as F
    per_topic = (summaries.groupBy("task", "topic")
                 .agg(F.sum((F.col("role") == "model").cast("int")).alias("n_models"),
                      F.sum((F.col("role") == "peer").cast("int")).alias("n_peers")))
    reason = (F.when(F.col("n_models") < thresholds.MIN_MODELS_QUEEN, F.lit("queen"))
              .when((F.col("n_models") < thresholds.MIN_MODELS_JACKKNIFE)
                    | (F.col("n_peers") < thresholds.MIN_PEERS_KING), F.lit("king")))
    rows = (per_topic.withColumn("reason", reason).filter(F.col("reason").isNotNull())
            .groupBy("task", "reason")
            .agg(F.count(F.lit(1)).alias("n"),
                 F.slice(F.array_sort(F.collect_list("topic")), 1, shown).alias("first"))
            .collect())
    out: Dict[str, Dict[str, tuple]] = {}
    for r in rows:
        out.setdefault(r["task"], {})[SKIP_REASONS[r["reason"]]] = (int(r["n"]), list(r["first"]))
    return out


def task_orders(cube: TopicCube, n_orders: int, seed: int) -> Dict[str, List[List[str]]]:
    """Per task, seeded random orders of its peer systems (those of the
    cube's topics; one row per (task, system) reaches the driver)."""
    from pyspark.sql import functions as F
    per_task: Dict[str, List[str]] = {}
    for row in (cube.members().filter(F.col("role") == "peer")
                .select("task", "name").distinct().collect()):
        per_task.setdefault(row["task"], []).append(row["name"])
    return {task: peer_orders(names, n_orders, seed) for task, names in per_task.items()}


def run_qarla(cube: TopicCube, summaries, judgments, config) -> QarlaResult:
    """The QARLA stage over ``cube`` (any minimum model count: the stage
    keeps the topics QUEEN is defined on). ``config`` gives ``clusters``,
    ``triples``, ``jack_orders``, ``seed`` and ``metric_sets`` (the
    requested sets as the user wrote them)."""

    timings: Dict[str, float] = {}
    clock = [time.time()]

    def lap(name):
        now = time.time()
        timings[name] = round(now - clock[0], 3)
        clock[0] = now

    cube = cube.restrict(thresholds.MIN_MODELS_QUEEN)
    requested = tuple(dict.fromkeys(MetricSet.parse(s, cube.metrics)
                                    for s in config.metric_sets))
    skipped = skipped_topics(summaries)
    for task, reasons in sorted(skipped.items()):
        for reason, (count, names) in sorted(reasons.items()):
            warnings.warn(f"task {task}: {count:,} topic(s) {reason} are skipped: "
                          f"{first_names(names, count)}"
                          f"{' (all in problems/)' if count > SHOWN_NAMES else ''}",
                          QarlaWarning, stacklevel=2)
    lap("skipped_s")

    # 1. singles and requested sets
    first = qt.Evaluation(cube, cube.singles() + requested, triples=config.triples)
    first_kings = first.king_values()
    lap("singles_s")

    # 2. clustering, representatives, subsets, per task
    cluster_rows, task_subsets, task_reps, task_clusters = [], {}, {}, {}
    for task in sorted(first_kings):     # tasks with a topic that enters KING
        masks = SampleMasks(cube, task, config.triples)
        clusters = masks.agglomerate(config.clusters, cube.metrics)
        masks.release()
        reps = representatives(clusters, cube.metrics, first_kings[task])
        task_reps[task] = reps
        task_clusters[task] = [sorted(cube.metrics[i] for i in c) for c in clusters]
        for c_id, (cluster, rep) in enumerate(zip(clusters, reps)):
            for i in sorted(cluster):
                name = cube.metrics[i]
                cluster_rows.append((task, name, c_id, name == rep,
                                     first_kings[task].get(MetricSet([name]))))
        task_subsets[task] = subsets(reps)
    lap("clustering_s")
    all_subsets = sorted({s for sets in task_subsets.values() for s in sets})
    second = qt.Evaluation(cube, all_subsets, triples=config.triples, restrict=task_subsets)
    subset_kings = second.king_values()
    best = {task: best_of(kings) for task, kings in subset_kings.items()}
    lap("subsets_s")

    # 3. detailed sets
    from pyspark.sql import functions as F
    detailed = sorted(set(best.values()) | set(requested)
                      | {MetricSet([r]) for reps in task_reps.values() for r in reps})
    orders = task_orders(cube, config.jack_orders, config.seed)
    third = qt.Evaluation(cube, detailed, detailed, triples=config.triples, orders=orders)
    plain = cache.persist(qt.plain_results(cube, PLAIN_BASELINES))
    systems = cache.persist(third.systems())
    spark = cube.spark
    # the subsets' evaluation repeats some sets of the first one (the
    # representatives, as singles; requested sets): their rows are the first's
    again = list({s.label for s in second.sets} & {s.label for s in first.sets}) or [""]

    def both(table):
        return table(first).unionByName(table(second).filter(~F.col("metric_set").isin(again)))

    king = both(qt.Evaluation.king)
    tables = {
        "king": king,
        "orange": both(qt.Evaluation.orange).unionByName(qt.orange_plain(plain)),
        "clusters": local_frame(
            spark, cluster_rows, "task string, metric string, cluster int, "
                                 "representative boolean, king double"),
        "queen": third.queen(),
        "systems": systems,
        "jack": cache.persist(third.jack()),
        "jack_curve": third.jack_curve(),
        "human_test": cache.persist(qt.human_test(third, plain)),
    }
    if judgments is not None:
        tables["correlations"] = cache.persist(qt.correlations(third, judgments))
        tables["king_pearson"] = qt.king_pearson(king, both(qt.Evaluation.peer_scores),
                                                 judgments, cube)

    results = _task_results(tables, third, best, first_kings, subset_kings, task_reps,
                            task_clusters, skipped)
    plans = {t.task: TaskPlan(t.best_set, t.best_single,
                              tuple(MetricSet([r]) for r in t.representatives),
                              tuple(task_subsets[t.task])) for t in results}
    lap("detailed_summary_s")
    return QarlaResult(tables, results, requested, timings, (first, second, third), plans)


def _task_results(tables, third, best, first_kings, subset_kings, task_reps, task_clusters,
                  skipped) -> List[TaskQarla]:
    """The small per-task results the run prints (collected here)."""
    from pyspark.sql import functions as F

    best_ids = local_frame(third.cube.spark, [(t, third.set_id(s)) for t, s in best.items()],
                           "task string, set_id int")
    agreement: Dict[str, Dict[str, tuple]] = {}
    if "correlations" in tables:
        for r in (tables["correlations"].filter(F.col("level") == "system")
                  .join(best_ids, ["task", "set_id"]).collect()):
            agreement.setdefault(r["task"], {})[r["criterion"]] = (r["pearson"], r["spearman"],
                                                                   r["kendall"])
    wanted = {(t, qt.queen_measure(b)) for t, b in best.items()}
    firsts: Dict[str, Dict[str, tuple]] = {}
    for r in (tables["human_test"].groupBy("task", "measure")
              .agg(F.sum(F.col("ranked_first").cast("int")).alias("first"),
                   F.count(F.lit(1)).alias("n")).collect()):
        if (r["task"], r["measure"]) in wanted or r["measure"] in PLAIN_BASELINES:
            firsts.setdefault(r["task"], {})[r["measure"]] = (int(r["first"]), int(r["n"]))
    jack = {(r["task"], third.sets[r["set_id"]]): r["jack"]
            for r in tables["jack"].select("task", "set_id", "jack").collect()}
    ranking: Dict[str, List[Ranked]] = {}
    for r in (tables["systems"].join(best_ids, ["task", "set_id"])
              .filter(F.col("queen").isNotNull()).collect()):
        ranking.setdefault(r["task"], []).append(
            Ranked(r["summarizer"], r["role"], r["queen"], r["position"], r["above_peers"]))
    out = []
    for task, best_set in sorted(best.items()):
        singles = {s: v for s, v in first_kings[task].items() if s.size == 1}
        top_single = best_of(singles)
        out.append(TaskQarla(
            task, best_set, subset_kings[task][best_set], top_single, singles[top_single],
            task_reps[task], task_clusters[task], jack.get((task, best_set), float("nan")),
            sorted(ranking.get(task, []), key=lambda r: r.position),
            agreement.get(task, {}), firsts.get(task, {}), skipped.get(task, {})))
    return out
