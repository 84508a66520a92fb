"""Spark plans of the QARLA stage: the per-topic kernel over the topic cube
and the tables made from its counts (lazy DataFrames; nothing is collected
here).

Every mean is an exact rational rounded once (:mod:`~qarla_spark.measures.exact`:
in :func:`task_tables`, the one reduce per task of an evaluation, or
:func:`~qarla_spark.spark.grouped.exact_mean`) and every comparison of means
is exact, so the tables are bit-identical under any partitioning
(DECISIONS.md, "Determinism"). A metric set is a
:class:`~qarla_spark.measures.metric_sets.MetricSet` until a table is
labelled (:meth:`Evaluation.labelled`), the one place its name is written.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np

from qarla_spark.errors import ConfigError
from qarla_spark.measures import agreement, exact
from qarla_spark.measures.king import king as king_of
from qarla_spark.measures.masks import TRIPLES
from qarla_spark.measures.metric_sets import MetricSet
from qarla_spark.measures.plain import topic_plain
from qarla_spark.measures.qarla_topic import RESULT_SCHEMA, sum_sys, topic_rows
from qarla_spark.measures.queen import METHODS
from qarla_spark.spark import cache
from qarla_spark.spark.cube import Topic, TopicCube
from qarla_spark.spark.grouped import exact_mean, local_frame, per_group

SET_SCHEMA = "set_id int, metric_set string, n_metrics int"


def queen_measure(metric_set: MetricSet) -> str:
    """The ``human_test/`` name of QUEEN of a set: ``QUEEN(<label>)``."""
    return f"QUEEN({metric_set.label})"


class Evaluation:
    """The counts of the per-topic QARLA kernel
    (:func:`~qarla_spark.measures.qarla_topic.topic_rows`) for a family of
    metric sets over a cube (topics with ≥ 3 models), persisted, and the
    tables made from them: KING and ORANGE of every set; QUEEN, system
    scores, JACK and its curve of the ``detailed`` ones. ``restrict``: per
    task, the sets whose KING, ORANGE and system scores are reported (the
    sets are evaluated for every task at once; default: all of them)."""

    def __init__(self, cube: TopicCube, sets: Sequence[MetricSet],
                 detailed: Sequence[MetricSet] = (), triples: str = "standard",
                 method: str = "auto", orders: Optional[Dict[str, List[List[str]]]] = None,
                 restrict: Optional[Dict[str, Sequence[MetricSet]]] = None):
        if triples not in TRIPLES:
            raise ConfigError(f"triples must be one of {', '.join(TRIPLES)}, not {triples!r}")
        if method not in METHODS:
            raise ConfigError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
        self.cube = cube
        self.sets = tuple(dict.fromkeys(sets))
        ids = {s: i for i, s in enumerate(self.sets)}
        unknown = [d.label for d in detailed if d not in ids]
        if unknown:
            raise ConfigError(f"detailed set(s) not among the metric sets: {', '.join(unknown)}")
        self.detailed = tuple(dict.fromkeys(detailed))
        words = cube.words(self.sets)
        detailed_ids = [ids[d] for d in self.detailed]
        orders = dict(orders or {})

        def kernel(topic: Topic):
            return topic_rows(topic.task, topic.topic, topic.names, topic.roles, topic.values,
                              words, detailed_ids, triples, method, orders.get(topic.task, ()))

        self.results = cache.persist(cube.map_topics(kernel, RESULT_SCHEMA, combine=sum_sys))
        spark = cube.spark
        self.set_table = local_frame(
            spark, [(i, s.label, s.size) for i, s in enumerate(self.sets)], SET_SCHEMA)
        self.keep = None if restrict is None else local_frame(
            spark, [(t, ids[s]) for t, chosen in restrict.items() for s in chosen],
            "task string, set_id int")
        self._summary = None

    def rows(self, kind: str):
        """The kernel's rows of one kind (``case`` and ``sys`` restricted to
        the sets ``restrict`` names per task)."""
        from pyspark.sql import functions as F
        rows = self.results.filter(F.col("kind") == kind)
        if self.keep is not None and kind in ("case", "sys"):
            rows = rows.join(F.broadcast(self.keep), ["task", "set_id"])
        return rows

    def set_id(self, metric_set: MetricSet) -> int:
        return self.sets.index(metric_set)

    def labelled(self, df):
        """``df`` with ``metric_set`` and ``n_metrics`` beside ``set_id``."""
        from pyspark.sql import functions as F
        return df.join(F.broadcast(self.set_table), "set_id")

    # -- the tables of every set, from one reduce per task --------------------

    def summary(self):
        """Every per-set result of this evaluation, per task, from one Spark
        pass (persisted on first use): the kernel's counts summed per (kind,
        set, summarizer, den, ...) within a shuffle by task, then
        :func:`task_tables` once per task (:data:`SUMMARY_SCHEMA`: KING,
        ORANGE and the peers' system scores of every set; system scores,
        JACK and its curve of the detailed ones)."""
        from pyspark.sql import functions as F
        if self._summary is None:
            kinds = ["case", "sys"] + (["queen", "jack", "curve"] if self.detailed else [])
            jk = F.col("holdout").isNotNull()
            parts = []
            for kind in kinds:
                rows = self.rows(kind)
                if kind == "queen":
                    part = F.when(jk, F.lit("jk")).otherwise(F.lit("full"))
                    topic = F.when(jk, F.col("topic"))
                else:
                    part, topic = F.lit(None).cast("string"), F.lit(None).cast("string")
                parts.append(rows.select(
                    "kind", "task", "set_id", "summarizer", "role", topic.alias("topic"),
                    "n_peers", "den", part.alias("part"), "num",
                    F.coalesce(F.col("count"), F.lit(1)).alias("count"), "n_le", "n_pairs"))
            rows = parts[0]
            for other in parts[1:]:
                rows = rows.unionByName(other)
            aggregate = (["kind", "set_id", "summarizer", "role", "topic", "n_peers", "den",
                          "part"],
                         [F.sum(c).cast("long").alias(c)
                          for c in ("num", "count", "n_le", "n_pairs")])
            self._summary = cache.persist(per_group(rows, ["task"], task_tables, SUMMARY_SCHEMA,
                                                    aggregate=aggregate))
        return self._summary

    def _table(self, table: str):
        from pyspark.sql import functions as F
        return self.summary().filter(F.col("table") == table)

    # -- KING and ORANGE (every set) ----------------------------------------

    def king(self):
        """``king/``: task, metric_set, n_metrics, king, ci_low, ci_high, n_cases."""
        from pyspark.sql import functions as F
        return self.labelled(self._table("king")).select(
            "task", "metric_set", "n_metrics", F.col("value").alias("king"), "ci_low",
            "ci_high", F.col("n").alias("n_cases"))

    def king_values(self) -> Dict[str, Dict[MetricSet, float]]:
        """task -> {set: KING} (collected: one row per task and set)."""
        out: Dict[str, Dict[MetricSet, float]] = {}
        for r in self._table("king").select("task", "set_id", "value").collect():
            out.setdefault(r["task"], {})[self.sets[r["set_id"]]] = r["value"]
        return out

    def orange(self):
        """``orange/`` rows of QUEEN: pooled over (topic, held-out model,
        peer); a ratio of two integer sums."""
        from pyspark.sql import functions as F
        return self.labelled(self._table("orange")).select(
            "task", "metric_set", "n_metrics", F.lit("QUEEN").alias("score"),
            F.col("value").alias("orange"), F.col("n").alias("n_cases"))

    def peer_scores(self):
        """task, metric_set, summarizer, queen: a peer system's mean QUEEN
        over its topics, all models (SPEC §3's system score), every set."""
        from pyspark.sql import functions as F
        return self.labelled(self._table("peer")).select(
            "task", "metric_set", "summarizer", F.col("value").alias("queen"))

    # -- the detailed sets --------------------------------------------------

    def queen(self):
        """``queen/``: every QUEEN row of the detailed sets."""
        from pyspark.sql import functions as F
        return (self.labelled(self.rows("queen"))
                .select("task", "topic", "summarizer", "role", "metric_set", "holdout",
                        (F.col("num") / F.col("den")).alias("queen")))

    def systems(self):
        """``systems/`` columns plus ``set_id``, ``position`` (1 = best,
        exact; ties by name) and ``above_peers`` (a model scores strictly
        above every peer, exact; null for peers), per task and detailed
        set."""
        from pyspark.sql import functions as F
        return self.labelled(self._table("system")).select(
            "task", "summarizer", "role", "metric_set", F.col("value").alias("queen"),
            F.col("full").alias("queen_full"), "set_id", "position",
            F.col("above").alias("above_peers"))

    def jack(self):
        """``jack/``: task, metric_set, jack (and set_id)."""
        from pyspark.sql import functions as F
        return self.labelled(self._table("jack")).select(
            "task", "metric_set", F.col("value").alias("jack"), "set_id")

    def jack_curve(self):
        """``jack_curve/``: task, metric_set, n_peers, jack."""
        from pyspark.sql import functions as F
        return self.labelled(self._table("curve")).select(
            "task", "metric_set", "n_peers", F.col("value").alias("jack"))


SUMMARY_SCHEMA = ("table string, task string, set_id int, summarizer string, role string, "
                  "n_peers int, value double, full double, n long, ci_low double, "
                  "ci_high double, position int, above boolean")


def task_tables(key, frame) -> List[tuple]:
    """The per-set results of one task (pure; :meth:`Evaluation.summary`'s
    reduce), as :data:`SUMMARY_SCHEMA` rows, from the kernel's counts summed
    per (kind, set, summarizer, role, topic, n_peers, den, part):

    - ``king`` (KING, its cases and Wilson interval) and ``orange`` (pooled
      ratio of integer sums) of every set, from the ``case`` counts;
    - ``peer``: every peer's system score (exact mean of its QUEEN over
      topics, all models) of every set, from the ``sys`` counts;
    - ``system`` (:func:`_system_rows`), ``jack`` and ``curve`` (exact
      means over topics) of the detailed sets.
    """
    (task,) = key
    out: List[tuple] = []

    def row(table, set_id, value, summarizer=None, role=None, n_peers=None, full=None,
            n=None, ci=(None, None), position=None, above=None):
        out.append((table, task, int(set_id), summarizer, role, n_peers, value, full, n,
                    ci[0], ci[1], position, above))

    by_kind = {kind: part for kind, part in frame.groupby("kind", sort=False)}
    cases = by_kind.get("case")
    if cases is not None:
        for set_id, g in cases.groupby("set_id", sort=True):
            value, n_cases, low, high = king_of(zip(g["num"], g["den"], g["count"]))
            row("king", set_id, value, n=n_cases, ci=(low, high))
            n_pairs = int(g["n_pairs"].sum())
            row("orange", set_id, float(int(g["n_le"].sum())) / float(n_pairs), n=n_pairs)
    sys_rows = by_kind.get("sys")
    if sys_rows is not None:
        means: Dict[tuple, exact.Mean] = {}
        for set_id, name, num, den, count in zip(sys_rows["set_id"], sys_rows["summarizer"],
                                                 sys_rows["num"], sys_rows["den"],
                                                 sys_rows["count"]):
            means.setdefault((int(set_id), name), exact.Mean()).add_ratio(num, den, count)
        for (set_id, name), mean in sorted(means.items()):
            row("peer", set_id, exact.to_float(mean.value()), summarizer=name)
    queen_rows = by_kind.get("queen")
    if queen_rows is not None:
        for set_id, g in queen_rows.groupby("set_id", sort=True):
            for _, _, name, role, value, full, position, above in _system_rows(
                    (task, set_id), g):
                row("system", set_id, value, summarizer=name, role=role, full=full,
                    position=position, above=above)
    for kind, table, keys in (("jack", "jack", ["set_id"]), ("curve", "curve", ["set_id", "n_peers"])):
        part = by_kind.get(kind)
        if part is None:
            continue
        for key_values, g in part.groupby(keys, sort=True):
            key_values = key_values if isinstance(key_values, tuple) else (key_values,)
            mean = exact.Mean()
            for num, den, count in zip(g["num"], g["den"], g["count"]):
                mean.add_ratio(num, den, count)
            row(table, key_values[0], exact.to_float(mean.value()),
                n_peers=int(key_values[1]) if len(key_values) > 1 else None)
    return out


def _system_rows(key, frame):
    """One (task, set)'s system scores, exactly: a model h scores the mean
    over topics of QUEEN_{M∖{h}}(h), a peer the mean over topics of its mean
    over held-out models; ``queen_full`` a peer's mean QUEEN with all
    models."""
    task, set_id = key
    per_topic: Dict[tuple, exact.Mean] = {}
    full: Dict[str, exact.Mean] = {}
    for part, name, role, topic, num, den, count in zip(
            frame["part"], frame["summarizer"], frame["role"], frame["topic"], frame["num"],
            frame["den"], frame["count"]):
        if part == "jk":
            per_topic.setdefault((name, role, topic), exact.Mean()).add_ratio(num, den, count)
        else:
            full.setdefault(name, exact.Mean()).add_ratio(num, den, count)
    means: Dict[tuple, exact.Mean] = {}
    for (name, role, _), mean in per_topic.items():
        means.setdefault((name, role), exact.Mean()).add_fraction(mean.value())
    jk = {k: m.value() for k, m in means.items()}
    ranked = agreement.rank_exact(jk)
    out = []
    for (name, role), value in jk.items():
        f = full.get(name) if role == "peer" else None
        pos, above = ranked[(name, role)]
        out.append((task, set_id, name, role, exact.to_float(value),
                    None if f is None else exact.to_float(f.value()), pos, above))
    for name, f in full.items():
        if (name, "peer") not in jk:     # a peer of topics without a jackknife only
            out.append((task, set_id, name, "peer", None, exact.to_float(f.value()), None,
                        None))
    return out


# ---------------------------------------------------------------------------
# plain scores (ORANGE's baseline, the human-summariser test's ROUGE)
# ---------------------------------------------------------------------------

PLAIN_SCHEMA = ("kind string, task string, topic string, metric string, holdout string, "
                "summarizer string, role string, score double, n_le long, n_pairs long")


def plain_results(cube: TopicCube, baselines: Sequence[str] = ()):
    """:func:`~qarla_spark.measures.plain.topic_plain` over every topic of
    the cube (lazy, no shuffle): ``orange`` rows (topic, metric: n_le,
    n_pairs) for every metric, ``score`` rows (the jackknifed plain score of
    each peer and held-out model) for ``baselines`` present in the cube."""
    import pandas as pd

    metrics = list(cube.metrics)
    wanted = [metrics.index(b) for b in baselines if b in metrics]
    metric_names = np.asarray(metrics, dtype=object)

    def kernel(topic: Topic):
        res = topic_plain(topic.names, topic.roles, topic.values, metrics, wanted)
        if res is None:
            return None
        names = topic.names
        parts = [pd.DataFrame({"kind": "orange", "metric": metric_names,
                               "n_le": res["n_le"], "n_pairs": res["n_peers"]})]
        peers, models = res["peers"], res["models"]
        for i, (peer_s, model_s) in res["scores"].items():
            parts.append(pd.DataFrame({
                "kind": "score", "metric": metrics[i],
                "holdout": np.tile(names[models], len(peers)),
                "summarizer": np.repeat(names[peers], len(models)), "role": "peer",
                "score": peer_s.ravel()}))
            parts.append(pd.DataFrame({
                "kind": "score", "metric": metrics[i], "holdout": names[models],
                "summarizer": names[models], "role": "model", "score": model_s}))
        out = pd.concat(parts, ignore_index=True)
        out["task"], out["topic"] = topic.task, topic.topic
        for c in ("holdout", "summarizer", "role", "score", "n_le", "n_pairs"):
            if c not in out:
                out[c] = None
        out["n_le"] = out["n_le"].astype("Int64")
        out["n_pairs"] = out["n_pairs"].astype("Int64")
        return out

    return cube.map_topics(kernel, PLAIN_SCHEMA)


def orange_plain(plain):
    """ORANGE(plain x) of every metric: ``orange/`` rows with score
    ``plain``."""
    from pyspark.sql import functions as F
    return (plain.filter(F.col("kind") == "orange").groupBy("task", "metric")
            .agg(F.sum("n_le").alias("n_le"), F.sum("n_pairs").alias("n_pairs"))
            .select("task", F.col("metric").alias("metric_set"), F.lit(1).alias("n_metrics"),
                    F.lit("plain").alias("score"),
                    (F.col("n_le") / F.col("n_pairs")).alias("orange"),
                    F.col("n_pairs").cast("long").alias("n_cases")))


# ---------------------------------------------------------------------------
# agreement with humans, the human-summariser test
# ---------------------------------------------------------------------------

CORRELATION_SCHEMA = ("task string, set_id int, criterion string, level string, "
                      "pearson double, spearman double, kendall double")


def correlations(evaluation: Evaluation, judgments):
    """``correlations/`` of the detailed sets (and set_id): system level — a peer
    system's mean QUEEN (all models) over its judged summaries against its
    mean human score; summary level — per topic, then averaged over the
    topics where both vary."""
    from pyspark.sql import functions as F
    full = (evaluation.rows("queen")
            .filter(F.col("holdout").isNull() & (F.col("role") == "peer"))
            .select("task", "topic", "summarizer", "set_id", "num", "den"))
    human = judgments.select("task", "topic", "summarizer", "criterion", "score")
    joined = full.join(human, ["task", "topic", "summarizer"])
    table = per_group(joined, ["task", "set_id", "criterion"], _correlation_rows,
                      CORRELATION_SCHEMA)
    return evaluation.labelled(table).select("task", "metric_set", "criterion", "level",
                                             "pearson", "spearman", "kendall", "set_id")


def _correlation_rows(key, frame):
    task, set_id, criterion = key
    xs: Dict[str, exact.Mean] = {}
    ys: Dict[str, exact.Mean] = {}
    topics: Dict[str, list] = {}
    for topic, name, num, den, score in zip(frame["topic"], frame["summarizer"],
                                            frame["num"], frame["den"], frame["score"]):
        xs.setdefault(name, exact.Mean()).add_ratio(num, den)
        ys.setdefault(name, exact.Mean()).add_real(score)
        topics.setdefault(topic, []).append((name, num / den, score))
    names = list(xs)
    out = [(task, set_id, criterion, "system", *agreement.correlations(
        names, [exact.to_float(xs[n].value()) for n in names],
        [exact.to_float(ys[n].value()) for n in names]))]
    per_topic = []
    for topic in sorted(topics):
        who, x, y = zip(*topics[topic])
        r = agreement.correlations(who, x, y, min_n=agreement.MIN_POINTS)
        if np.isfinite(r[0]):
            per_topic.append(r)
    if per_topic:
        out.append((task, set_id, criterion, "summary",
                    *(exact.to_float(exact.mean(exact.real(r[i]) for r in per_topic))
                      for i in range(3))))
    return out


def king_pearson(king, peer_scores, judgments, cube: TopicCube):
    """``king_pearson/`` (paper 000, Fig. 5): for every set of ``king``
    (labelled), the system-level Pearson between its system scores
    (``peer_scores``: task, metric_set, summarizer, queen) and each system's
    mean human score over its judged summaries in the cube's topics; null
    with fewer than 2 systems or a constant side."""
    human = exact_mean(judgments.join(cube.topics().select("task", "topic"),
                                      ["task", "topic"]),
                       ["task", "summarizer", "criterion"], "y", value="score")
    joined = peer_scores.join(human, ["task", "summarizer"])
    schema = "task string, metric_set string, criterion string, pearson double"
    pearson = per_group(joined, ["task", "criterion"], _pearson_rows, schema)
    return (king.select("task", "metric_set", "n_metrics", "king")
            .join(pearson, ["task", "metric_set"])
            .select("task", "metric_set", "n_metrics", "king", "criterion", "pearson"))


def _pearson_rows(key, frame) -> List[tuple]:
    """KING vs Pearson of one (task, criterion): for every set, the Pearson
    between its system scores (``queen``) and the systems' human scores
    (``y``), null with too few systems or a constant side. The sets with the
    same systems are computed together (one row each of
    :func:`~qarla_spark.measures.agreement.correlation_rows`)."""
    task, criterion = key
    by_systems: Dict[tuple, list] = {}
    for name, group in frame.groupby("metric_set", sort=True):
        order = np.argsort(group["summarizer"].to_numpy(dtype=object), kind="stable")
        systems = tuple(group["summarizer"].to_numpy(dtype=object)[order])
        by_systems.setdefault(systems, []).append(
            (name, group["queen"].to_numpy(np.float64)[order],
             group["y"].to_numpy(np.float64)[order]))
    out = []
    for systems, sets in by_systems.items():
        r = agreement.correlation_rows(list(systems), [x for _, x, _ in sets],
                                       [y for _, _, y in sets], min_n=agreement.MIN_POINTS,
                                       kinds=("pearson",))[:, 0]
        out += [(task, name, criterion, float(v) if np.isfinite(v) else None)
                for (name, _, _), v in zip(sets, r)]
    return out


HUMAN_TEST_SCHEMA = "task string, measure string, held_out_model string, ranked_first boolean"


def human_test(evaluation: Evaluation, plain):
    """``human_test/``: for each held-out model h of each measure (QUEEN of
    the detailed sets, the plain baselines), whether h's mean score over
    the topics scores strictly above every system's — exact means, exactly
    compared (a tie is not a win)."""
    from pyspark.sql import functions as F
    # one QUEEN per topic and summarizer: its mean over topics needs only the
    # sums of the numerators per denominator
    q = (evaluation.rows("queen").filter(F.col("holdout").isNotNull())
         .groupBy("task", "set_id", "holdout", "summarizer", "role", "den")
         .agg(F.sum("num").cast("long").alias("num"), F.count(F.lit(1)).alias("count")))
    names = local_frame(evaluation.cube.spark,
                        [(i, queen_measure(s)) for i, s in enumerate(evaluation.sets)],
                        "set_id int, measure string")
    q = (q.join(F.broadcast(names), "set_id")
         .select("task", "measure", "holdout", "summarizer", "role", "num", "den", "count",
                 F.lit(None).cast("double").alias("score")))
    p = (plain.filter(F.col("kind") == "score")
         .select("task", F.col("metric").alias("measure"), "holdout", "summarizer", "role",
                 F.lit(None).cast("long").alias("num"),
                 F.lit(None).cast("long").alias("den"), F.lit(1).cast("long").alias("count"),
                 "score"))
    return per_group(q.unionByName(p), ["task", "measure", "holdout"], _human_rows,
                     HUMAN_TEST_SCHEMA)


def _human_rows(key, frame):
    task, measure, holdout = key
    scores: Dict[tuple, exact.Mean] = {}
    for name, role, num, den, count, score in zip(frame["summarizer"], frame["role"],
                                                  frame["num"], frame["den"], frame["count"],
                                                  frame["score"]):
        mean = scores.setdefault((name, role), exact.Mean())
        if score is None or score != score:          # a QUEEN: counts
            mean.add_ratio(num, den, count)
        else:                                        # a plain score: a double
            mean.add_real(score)
    own = scores.get((holdout, "model"))
    peers = [m.value() for (_, role), m in scores.items() if role == "peer"]
    if own is None or not peers:
        return None
    return [(task, measure, holdout, agreement.ranked_first(own.value(), peers))]
