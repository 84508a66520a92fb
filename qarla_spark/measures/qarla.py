"""QUEEN, KING, ORANGE, JACK for chosen metric sets, every task at once.

:func:`evaluate` is the stage ``qarla run`` calls after the similarities;
every result is a lazy DataFrame (schemas in the README).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Sequence, Tuple

from qarla_spark.errors import ConfigError
from qarla_spark.metrics.registry import metric_set_name
from qarla_spark.spark import cache


@dataclass
class QarlaTables:
    queen: object
    systems: object
    king: object
    orange: object
    jack: object
    jack_curve: object
    peer_scores: object   # task, metric_set, summarizer, queen: mean over topics, all models


def named_sets(metrics: Sequence[str], sets: Iterable[Iterable[str]],
               singles: bool = True) -> Dict[str, Tuple[int, ...]]:
    """metric_set name -> metric indices: every single metric (if asked) and
    each requested set; unknown names are errors."""
    index = {m: i for i, m in enumerate(metrics)}
    out: Dict[str, Tuple[int, ...]] = {}
    if singles:
        for m in metrics:
            out[m] = (index[m],)
    for chosen in sets:
        chosen = list(chosen)
        missing = [m for m in chosen if m not in index]
        if missing:
            raise ConfigError(f"metric set {','.join(chosen)}: not in the similarity table: "
                              f"{', '.join(missing)}")
        if not chosen:
            raise ConfigError("an empty metric set")
        out[metric_set_name(chosen)] = tuple(sorted(index[m] for m in set(chosen)))
    return out


def evaluate(similarities, summaries, metrics: Sequence[str],
             metric_sets: Dict[str, Tuple[int, ...]], detailed: Optional[Iterable[str]] = None,
             triples: str = "standard", seed: int = 13, n_orders: int = 20,
             cube=None, method: str = "auto") -> QarlaTables:
    """KING and ORANGE of every set of ``metric_sets``; QUEEN, system scores,
    JACK and the JACK curve of the sets named in ``detailed`` (default: all).
    ``cube``: the :func:`~qarla_spark.measures.masks.build_cube` of
    ``metrics``, if already built (it is built and persisted otherwise);
    ``method``: how the kernel counts (see
    :func:`~qarla_spark.measures.queen.topic_counts`; same values)."""
    from pyspark.sql import functions as F

    from qarla_spark.measures.jack import jack_curve_table, jack_table, task_orders
    from qarla_spark.measures.king import king_table, orange_table
    from qarla_spark.measures.masks import TRIPLES, build_cube, set_words
    from qarla_spark.measures.queen import (METHODS, queen_table, system_scores,
                                            topic_results)

    if triples not in TRIPLES:
        raise ConfigError(f"triples must be one of {', '.join(TRIPLES)}, not {triples!r}")
    if method not in METHODS:
        raise ConfigError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    spark = summaries.sparkSession
    names = list(metric_sets)
    detailed = names if detailed is None else list(detailed)
    unknown = [d for d in detailed if d not in metric_sets]
    if unknown:
        raise ConfigError(f"detailed set(s) not among the metric sets: {', '.join(unknown)}")
    ids = {name: i for i, name in enumerate(names)}
    words = [set_words(metric_sets[name], len(metrics)) for name in names]
    if cube is None:
        cube = build_cube(similarities, summaries, metrics)
    cube = cube.filter(F.col("n_models") >= 3)     # QUEEN needs 3 models (no shuffle)
    orders = task_orders(cube, n_orders, seed) if detailed else {}
    results = cache.persist(topic_results(cube, words, [ids[d] for d in detailed], triples,
                                          method, orders))
    set_sizes = spark.createDataFrame(
        [(ids[n], n, len(set(metric_sets[n]))) for n in names] or [(-1, "", 0)],
        "set_id int, metric_set string, n_metrics int")
    set_names = set_sizes.select("set_id", "metric_set")
    detailed_names = set_names.filter(F.col("metric_set").isin(detailed))
    cases = results.filter(F.col("kind") == "case")
    queen = cache.persist(queen_table(results, set_names))
    peer_scores = (results.filter(F.col("kind") == "sys")
                   .groupBy("task", "set_id", "summarizer")
                   .agg((F.sum("queen") / F.sum("n_cases")).alias("queen"))
                   .join(F.broadcast(set_names), "set_id")
                   .select("task", "metric_set", "summarizer", "queen"))
    return QarlaTables(
        queen=queen,
        systems=system_scores(queen),
        king=king_table(cases, set_sizes),
        orange=orange_table(cases, set_sizes),
        jack=jack_table(results, cube, detailed_names),
        jack_curve=jack_curve_table(results, cube, detailed_names, orders),
        peer_scores=peer_scores,
    )
