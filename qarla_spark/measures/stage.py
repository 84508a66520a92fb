"""The QARLA stage of a run (SPEC §3-6), for every task at once.

1. KING and ORANGE of every single metric and every requested set;
2. per task, agglomerative clustering of the metrics into k clusters
   (:mod:`~qarla_spark.measures.clustering`), the best-KING representative
   of each cluster, KING of every non-empty subset of the representatives,
   and the best set;
3. QUEEN, system scores, JACK and the JACK growth curve of the best set, the
   representatives and the requested sets; their agreement with human
   judgments and the human-summariser test
   (:mod:`~qarla_spark.measures.agreement`).

The driver receives only small per-task results: KING of each evaluated set
(at most the number of metrics plus 2^k − 1 plus the requested sets) and the
clusters.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Sequence

from qarla_spark.errors import ConfigError
from qarla_spark.metrics.registry import metric_set_name
from qarla_spark.spark import cache


#: plain-score baselines of the human-summariser test (when in the table)
PLAIN_BASELINES = ("R-1.a", "R-2.a")


@dataclass
class TaskSummary:
    task: str
    best_set: str
    best_king: float
    best_single: str
    best_single_king: float
    representatives: List[str]
    clusters: List[List[str]]
    jack: float = float("nan")
    systems: List[tuple] = field(default_factory=list)   # (summarizer, role, queen) best first
    agreement: Dict[str, tuple] = field(default_factory=dict)   # criterion -> (r, rho, tau)
    human_first: Dict[str, tuple] = field(default_factory=dict)  # measure -> (first, models)
    skipped: Dict[str, tuple] = field(default_factory=dict)   # reason -> (count, first names)

    def describe(self) -> str:
        beats = "beats" if self.best_king > self.best_single_king else "does not beat"
        lines = [f"task {self.task} (QARLA):",
                 f"  best metric set: {self.best_set}  KING {self.best_king:.3f}",
                 f"  best single metric: {self.best_single}  KING {self.best_single_king:.3f} "
                 f"(the best set {beats} it)",
                 f"  representatives of {len(self.clusters)} clusters: "
                 + ", ".join(self.representatives),
                 f"  JACK of the best set: {self.jack:.3f}"]
        if self.systems:
            ranked = [f"{i + 1}. {name} ({role}) {q:.3f}"
                      for i, (name, role, q) in enumerate(self.systems)]
            first_peer = next((i for i, s in enumerate(self.systems) if s[1] == "peer"), None)
            models_above = sum(1 for s in self.systems[:first_peer] if s[1] == "model") \
                if first_peer is not None else 0
            n_models = sum(1 for s in self.systems if s[1] == "model")
            lines.append(f"  ranking under the best set: {models_above} of {n_models} models "
                         "rank above every system")
            lines.append("  top: " + "; ".join(ranked[:8]))
        if self.agreement:
            lines.append("  agreement of the best set with humans (system level, Pearson / "
                         "Spearman / Kendall): " + "; ".join(
                             f"{c} {r:.2f} / {rho:.2f} / {tau:.2f}"
                             for c, (r, rho, tau) in sorted(self.agreement.items())))
        for reason, (count, names) in sorted(self.skipped.items()):
            more = f", ... ({count - len(names)} more)" if count > len(names) else ""
            lines.append(f"  skipped: {count} topic(s) {reason}: {', '.join(names)}{more}")
        if self.human_first:
            lines.append("  held-out references ranked first (human-summariser test): " + "; ".join(
                f"{m} {first} of {n}" for m, (first, n) in sorted(self.human_first.items())))
        return "\n".join(lines)


class QarlaWarning(UserWarning):
    """A topic the QARLA stage leaves out (too few models, no peer)."""


SKIP_REASONS = {
    "queen": "with fewer than 3 models (no QUEEN, KING, JACK)",
    "king": "with 3 models or no peer (QUEEN and JACK only; no KING, ORANGE, held-out scores)",
}


def skipped_topics(summaries, shown: int = 10) -> Dict[str, Dict[str, tuple]]:
    """Per task and reason (:data:`SKIP_REASONS`), the number of topics the
    QARLA stage leaves out and the first ``shown`` of them (by name); one
    small row per (task, reason) reaches the driver."""
    from pyspark.sql import functions as F
    per_topic = (summaries.groupBy("task", "topic")
                 .agg(F.sum((F.col("role") == "model").cast("int")).alias("n_models"),
                      F.sum((F.col("role") == "peer").cast("int")).alias("n_peers")))
    reason = (F.when(F.col("n_models") < 3, F.lit("queen"))
              .when((F.col("n_models") < 4) | (F.col("n_peers") == 0), F.lit("king")))
    rows = (per_topic.withColumn("reason", reason).filter(F.col("reason").isNotNull())
            .groupBy("task", "reason")
            .agg(F.count(F.lit(1)).alias("n"),
                 F.slice(F.array_sort(F.collect_list("topic")), 1, shown).alias("first"))
            .collect())
    out: Dict[str, Dict[str, tuple]] = {}
    for r in rows:
        out.setdefault(r["task"], {})[SKIP_REASONS[r["reason"]]] = (int(r["n"]), list(r["first"]))
    return out


@dataclass
class QarlaRun:
    tables: Dict[str, object]
    summaries: List[TaskSummary]
    timings: Dict[str, float] = field(default_factory=dict)   # seconds per phase


def run_qarla(similarities, summaries, metrics: Sequence[str], requested: Sequence[Sequence[str]],
              k: int = 10, triples: str = "standard", seed: int = 13, n_orders: int = 20,
              tasks: Sequence[str] = (), judgments=None, cube=None) -> QarlaRun:
    from pyspark.sql import functions as F

    from qarla_spark.measures.clustering import (SampleMasks, best_set, representatives,
                                                 subsets)
    from qarla_spark.measures.masks import build_cube
    from qarla_spark.measures.qarla import evaluate, named_sets

    spark = summaries.sparkSession
    metrics = list(metrics)
    if k < 1:
        raise ConfigError(f"--clusters must be at least 1, not {k}")
    timings: Dict[str, float] = {}
    clock = [time.time()]

    def lap(name):
        now = time.time()
        timings[name] = round(now - clock[0], 3)
        clock[0] = now

    if cube is None:
        cube = build_cube(similarities, summaries, metrics)
    cube = cube.filter(F.col("n_models") >= 3)     # QUEEN needs 3 models (no shuffle)
    index = {m: i for i, m in enumerate(metrics)}
    skipped = skipped_topics(summaries)
    for task, reasons in sorted(skipped.items()):
        for reason, (count, names) in sorted(reasons.items()):
            warnings.warn(f"task {task}: {count} topic(s) {reason} are skipped: "
                          f"{', '.join(names)}{' ...' if count > len(names) else ''}",
                          QarlaWarning, stacklevel=2)
    lap("cube_s")

    # 1. singles and requested sets
    first_sets = named_sets(metrics, requested, singles=True)
    first = evaluate(similarities, summaries, metrics, first_sets, detailed=[], triples=triples,
                     seed=seed, n_orders=n_orders, cube=cube)
    king1 = cache.persist(first.king)
    single_king: Dict[str, Dict[str, float]] = {}
    for row in king1.select("task", "metric_set", "king").collect():
        single_king.setdefault(row["task"], {})[row["metric_set"]] = row["king"]

    lap("singles_s")

    # 2. clustering, representatives, subsets, per task
    cluster_rows = []
    task_subsets: Dict[str, List[str]] = {}
    task_reps: Dict[str, List[str]] = {}
    task_clusters: Dict[str, List[List[str]]] = {}
    for task in tasks:
        if task not in single_king:
            continue  # no topic with 4 models and a peer: nothing to rank
        masks = SampleMasks(cube, task, len(metrics), triples)
        clusters = masks.agglomerate(k, metrics)
        masks.release()
        reps = representatives(clusters, metrics, single_king[task])
        task_reps[task] = reps
        task_clusters[task] = [sorted(metrics[i] for i in c) for c in clusters]
        for c_id, (cluster, rep) in enumerate(zip(clusters, reps)):
            for i in sorted(cluster):
                cluster_rows.append((task, metrics[i], c_id, metrics[i] == rep,
                                     single_king[task].get(metrics[i])))
        task_subsets[task] = [metric_set_name(s) for s in subsets(reps)]
    lap("clustering_s")
    all_subsets = sorted({s for names in task_subsets.values() for s in names})
    second_sets = {name: tuple(sorted(index[m] for m in name.split(","))) for name in all_subsets}
    second = evaluate(similarities, summaries, metrics, second_sets, detailed=[],
                      triples=triples, seed=seed, n_orders=n_orders, cube=cube)
    own = spark.createDataFrame([(t, s) for t, names in task_subsets.items() for s in names]
                                or [("", "")], "task string, metric_set string")
    king2 = cache.persist(second.king.join(own, ["task", "metric_set"]))
    subset_king: Dict[str, Dict[str, float]] = {}
    for row in king2.select("task", "metric_set", "king").collect():
        subset_king.setdefault(row["task"], {})[row["metric_set"]] = row["king"]
    best = {task: best_set(kings) for task, kings in subset_king.items()}
    lap("subsets_s")

    # 3. detailed sets
    requested_names = [metric_set_name(s) for s in requested]
    detailed_names = sorted(set(best.values()) | set(requested_names)
                            | {r for reps in task_reps.values() for r in reps})
    third_sets = {name: tuple(sorted(index[m] for m in name.split(","))) for name in detailed_names}
    third = evaluate(similarities, summaries, metrics, third_sets, triples=triples, seed=seed,
                     n_orders=n_orders, cube=cube)

    from qarla_spark.measures.agreement import correlations, human_test, king_pearson
    from qarla_spark.measures.plain import orange_plain_table, plain_results

    plain = cache.persist(plain_results(cube, metrics, PLAIN_BASELINES))
    orange = (first.orange.unionByName(second.orange.join(own, ["task", "metric_set"]))
              .dropDuplicates(["task", "metric_set"]).unionByName(orange_plain_table(plain)))
    king = king1.unionByName(king2).dropDuplicates(["task", "metric_set"])
    clusters_df = spark.createDataFrame(
        cluster_rows, "task string, metric string, cluster int, representative boolean, "
                      "king double")
    tables = {"queen": third.queen, "systems": cache.persist(third.systems), "king": king,
              "orange": orange, "jack": cache.persist(third.jack), "jack_curve": third.jack_curve,
              "clusters": clusters_df,
              "human_test": cache.persist(human_test(third.queen, plain))}
    if judgments is not None:
        tables["correlations"] = cache.persist(correlations(third.queen, judgments))
        scores = (first.peer_scores.unionByName(
            second.peer_scores.join(own, ["task", "metric_set"]))
            .dropDuplicates(["task", "metric_set", "summarizer"]))
        tables["king_pearson"] = king_pearson(king, scores, judgments, cube)

    agreement: Dict[tuple, Dict[str, tuple]] = {}
    if "correlations" in tables:
        best_df = spark.createDataFrame(list(best.items()) or [("", "")],
                                        "task string, metric_set string")
        for r in (tables["correlations"].filter(F.col("level") == "system")
                  .join(best_df, ["task", "metric_set"]).collect()):
            agreement.setdefault(r["task"], {})[r["criterion"]] = (r["pearson"], r["spearman"],
                                                                   r["kendall"])
    firsts: Dict[str, Dict[str, tuple]] = {}
    wanted = {(t, f"QUEEN({b})") for t, b in best.items()}
    for r in (tables["human_test"].groupBy("task", "measure")
              .agg(F.sum(F.col("ranked_first").cast("int")).alias("first"),
                   F.count(F.lit(1)).alias("n")).collect()):
        if (r["task"], r["measure"]) in wanted or not r["measure"].startswith("QUEEN("):
            firsts.setdefault(r["task"], {})[r["measure"]] = (int(r["first"]), int(r["n"]))
    summaries_out = []
    jack = {(r["task"], r["metric_set"]): r["jack"] for r in third.jack.collect()}
    for task, best_name in sorted(best.items()):
        singles = {m: v for m, v in single_king[task].items() if "," not in m}
        top_single = best_set(singles)
        systems = (third.systems.filter((F.col("task") == task)
                                        & (F.col("metric_set") == best_name))
                   .orderBy(F.col("queen").desc_nulls_last(), "summarizer")
                   .select("summarizer", "role", "queen").collect())
        summaries_out.append(TaskSummary(
            task, best_name, subset_king[task][best_name], top_single, singles[top_single],
            task_reps[task], task_clusters[task], jack.get((task, best_name), float("nan")),
            [(r["summarizer"], r["role"], r["queen"]) for r in systems if r["queen"] is not None],
            agreement.get(task, {}), firsts.get(task, {}), skipped.get(task, {})))
    lap("detailed_summary_s")
    return QarlaRun(tables, summaries_out, timings)
