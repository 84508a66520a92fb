"""QUEEN, KING, ORANGE, JACK for chosen metric sets, every task at once.

:func:`evaluate` is the stage ``qarla run`` calls after the similarities;
every result is a lazy DataFrame (schemas in the README).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Sequence, Tuple

from qarla_spark.errors import ConfigError
from qarla_spark.metrics.registry import metric_set_name


@dataclass
class QarlaTables:
    queen: object
    systems: object
    king: object
    orange: object
    jack: object
    jack_curve: object


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


def evaluate(similarities, summaries, metrics: Sequence[str], metric_sets: Dict[str, Tuple[int, ...]],
             triples: str = "standard", seed: int = 13, n_orders: int = 20) -> QarlaTables:
    from qarla_spark.measures.jack import jack_curve_table, jack_table
    from qarla_spark.measures.king import king_table, orange_table
    from qarla_spark.measures.masks import sample_masks, sets_frame, vectors
    from qarla_spark.measures.queen import queen_table, system_scores

    spark = summaries.sparkSession
    vecs = vectors(similarities, metrics).persist()
    sets = sets_frame(spark, metric_sets, len(metrics))
    samples = sample_masks(vecs, summaries, len(metrics), triples).persist()
    queen = queen_table(samples, sets, summaries, len(metrics)).persist()
    sizes = sets.select("metric_set", "n_metrics")
    return QarlaTables(
        queen=queen,
        systems=system_scores(queen),
        king=king_table(queen, sizes),
        orange=orange_table(queen, sizes),
        jack=jack_table(vecs, queen, summaries, sets),
        jack_curve=jack_curve_table(vecs, queen, summaries, sets, n_orders, seed),
    )
