"""Small synthetic QARLA testbeds: random similarity tables with known roles.

:func:`make_similarities` returns what both the Spark measures and the
brute-force reference (``reference_qarla``) take as input.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

TIE_VALUES = (0.0, 0.5, 1.0)
CONSTANT_VALUE = 0.5
EQUAL_PAIR_VALUE = 1.0

IntOrList = Union[int, Sequence[int]]


def _per_topic(value: IntOrList, n_topics: int, what: str) -> List[int]:
    if isinstance(value, (int, np.integer)):
        return [int(value)] * n_topics
    value = [int(v) for v in value]
    if len(value) != n_topics:
        raise ValueError(f"{what}: {len(value)} values for {n_topics} topics")
    return value


def make_similarities(n_topics: int, n_models: IntOrList, n_peers: IntOrList,
                      metrics: Sequence[str], seed: int, ties: bool = False,
                      peer_equal_to_model: bool = False,
                      constant_metric: Optional[str] = None, task: str = "t"):
    """A random testbed of one task.

    - topics ``t0..``; models ``m0..`` and peers ``p0..`` (the same system
      names in every topic, so peers are systems across topics);
      ``n_models`` / ``n_peers``: an int for every topic or a list with one
      count per topic (e.g. ``n_models=[2, 3, 4]``).
    - one value per metric for every ordered pair (s, r), s != r, of the
      summaries of a topic: uniform in [0, 1) from
      ``numpy.random.default_rng(seed)`` or, with ``ties=True``, drawn from
      {0, 0.5, 1} so that ties are frequent.
    - ``constant_metric``: name of a metric (added to ``metrics`` if
      absent) whose every value is 0.5.
    - ``peer_equal_to_model``: in every topic having both, peer ``p0`` is a
      copy of model ``m0``: x(p0, z) = x(m0, z) and x(z, p0) = x(z, m0) for
      every other summary z, and x(p0, m0) = x(m0, p0) = 1.0 (0.5 for the
      constant metric).

    Returns ``(similarities, roles, summaries)``: a DataFrame
    (task, topic, summarizer_s, summarizer_r, metric, value), a dict
    ``{(task, topic, summarizer): role}``, and a DataFrame
    (task, topic, summarizer, role, text) with dummy texts.
    """
    rng = np.random.default_rng(seed)
    metrics = list(metrics)
    if constant_metric is not None and constant_metric not in metrics:
        metrics.append(constant_metric)
    if not metrics or len(set(metrics)) != len(metrics):
        raise ValueError(f"metrics must be non-empty and distinct: {metrics}")
    models_per = _per_topic(n_models, n_topics, "n_models")
    peers_per = _per_topic(n_peers, n_topics, "n_peers")

    sim_rows = []
    roles: Dict[Tuple[str, str, str], str] = {}
    summaries = []
    for t in range(n_topics):
        topic = f"t{t}"
        names = [f"m{i}" for i in range(models_per[t])] + [f"p{i}" for i in range(peers_per[t])]
        for name in names:
            role = "model" if name.startswith("m") else "peer"
            roles[(task, topic, name)] = role
            summaries.append(dict(task=task, topic=topic, summarizer=name, role=role,
                                  text=f"summary of {name} for topic {topic} ."))
        for metric in metrics:
            values: Dict[Tuple[str, str], float] = {}
            for s in names:
                for r in names:
                    if s == r:
                        continue
                    if metric == constant_metric:
                        values[(s, r)] = CONSTANT_VALUE
                    elif ties:
                        values[(s, r)] = float(rng.choice(TIE_VALUES))
                    else:
                        values[(s, r)] = float(rng.random())
            if peer_equal_to_model and "m0" in names and "p0" in names:
                for z in names:
                    if z in ("m0", "p0"):
                        continue
                    values[("p0", z)] = values[("m0", z)]
                    values[(z, "p0")] = values[(z, "m0")]
                pair = CONSTANT_VALUE if metric == constant_metric else EQUAL_PAIR_VALUE
                values[("p0", "m0")] = values[("m0", "p0")] = pair
            for (s, r), v in values.items():
                sim_rows.append(dict(task=task, topic=topic, summarizer_s=s, summarizer_r=r,
                                     metric=metric, value=v))
    sims = pd.DataFrame(sim_rows, columns=["task", "topic", "summarizer_s", "summarizer_r",
                                           "metric", "value"])
    summ = pd.DataFrame(summaries, columns=["task", "topic", "summarizer", "role", "text"])
    return sims, roles, summ


def transform_metric(sims, metric: str, func, new_name: Optional[str] = None):
    """A copy of ``sims`` with ``metric``'s values mapped by ``func`` (e.g. a
    strictly increasing transform); with ``new_name``, the transformed
    values are added as a new metric instead (``func=lambda v: v`` gives a
    duplicate metric)."""
    sel = sims[sims["metric"] == metric].copy()
    sel["value"] = [float(func(v)) for v in sel["value"]]
    if new_name is None:
        out = sims.copy()
        out.loc[sel.index, "value"] = sel["value"]
        return out
    sel["metric"] = new_name
    return pd.concat([sims, sel], ignore_index=True)


def add_duplicate_peer(sims, roles, summaries, peer: str, new_name: str):
    """A copy of the testbed where ``new_name`` is an exact duplicate of
    ``peer`` in every topic where ``peer`` exists: x(new, z) = x(peer, z),
    x(z, new) = x(z, peer), and x(new, peer) = x(peer, new) = 1.0."""
    new_rows = []
    for row in sims.itertuples(index=False):
        if row.summarizer_s == peer:
            new_rows.append(row._replace(summarizer_s=new_name))
        if row.summarizer_r == peer:
            new_rows.append(row._replace(summarizer_r=new_name))
    topics = {(t, p) for (t, p, n) in roles if n == peer}
    metrics = sorted(set(sims["metric"]))
    for task, topic in sorted(topics):
        for metric in metrics:
            new_rows.append((task, topic, peer, new_name, metric, 1.0))
            new_rows.append((task, topic, new_name, peer, metric, 1.0))
    add = pd.DataFrame(new_rows, columns=list(sims.columns))
    out_sims = pd.concat([sims, add], ignore_index=True)
    out_roles = dict(roles)
    for (task, topic) in topics:
        out_roles[(task, topic, new_name)] = "peer"
    dup = summaries[summaries["summarizer"] == peer].copy()
    dup["summarizer"] = new_name
    out_summ = pd.concat([summaries, dup], ignore_index=True)
    return out_sims, out_roles, out_summ


# ---------------------------------------------------------------- Spark

def spark_frames(spark, sims, summaries):
    """The similarity and summary tables of a generated testbed as Spark
    DataFrames."""
    return (spark.createDataFrame(sims[["task", "topic", "summarizer_s", "summarizer_r",
                                        "metric", "value"]]),
            spark.createDataFrame(summaries[["task", "topic", "summarizer", "role", "text"]]))


def evaluate(s_df, m_df, metrics, sets=(), singles=True, detailed=None, triples="standard",
             seed=13, n_orders=20, method="auto", judgments=None, baselines=("R-1.a", "R-2.a")):
    """The QARLA tables of some metric sets (lists of names) over a testbed,
    as the stage builds them (:func:`~qarla_spark.stages.qarla.evaluate_sets`
    over a topic cube). ``detailed``: the sets with QUEEN/JACK rows
    (default: all of them); ``orange`` holds ORANGE(QUEEN), ``orange_plain``
    ORANGE of the plain scores."""
    from types import SimpleNamespace

    from pyspark.sql import functions as F

    from qarla_spark.measures.metric_sets import MetricSet
    from qarla_spark.stages.cube import TopicCube
    from qarla_spark.stages.qarla import evaluate_sets

    cube = TopicCube.build(s_df, m_df, metrics)
    chosen = ([MetricSet([m]) for m in metrics] if singles else []) + \
        [MetricSet(s) for s in sets]
    detailed = None if detailed is None else [MetricSet(d) for d in detailed]
    ev = evaluate_sets(cube, chosen, detailed, judgments, triples, method, None, n_orders,
                       seed, baselines)
    out = dict(ev.tables)
    out["orange_plain"] = out["orange"].filter(F.col("score") == "plain")
    out["orange"] = out["orange"].filter(F.col("score") == "QUEEN")
    return SimpleNamespace(evaluation=ev, cube=ev.cube, **out)


def stage_config(**options):
    """A RunConfig for calling a stage directly (``metric_sets`` etc.)."""
    from qarla_spark.config import RunConfig
    return RunConfig(**options)
