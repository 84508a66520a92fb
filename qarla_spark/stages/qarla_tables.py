"""Spark plans of the QARLA stage: the per-topic kernel over the topic cube
and the tables made from its counts (lazy DataFrames; nothing is collected
here).

Every mean goes through :func:`~qarla_spark.spark.grouped.exact_mean` and
every comparison of means is exact, so the tables are bit-identical under
any partitioning (DECISIONS.md, "Determinism"). A metric set is a
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
from qarla_spark.spark.grouped import exact_mean, per_group

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
        self.set_table = spark.createDataFrame(
            [(i, s.label, s.size) for i, s in enumerate(self.sets)] or [(-1, "", 0)],
            SET_SCHEMA)
        self.keep = None if restrict is None else spark.createDataFrame(
            [(t, ids[s]) for t, chosen in restrict.items() for s in chosen] or [("", -1)],
            "task string, set_id int")
        self._king = None

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

    # -- KING and ORANGE (every set) ----------------------------------------

    def _king_frame(self):
        """task, set_id, king, n_cases, ci_low, ci_high (persisted on first
        use: the stage both writes it and collects it)."""
        from pyspark.sql import functions as F
        if self._king is None:
            schema = ("task string, set_id int, king double, n_cases long, ci_low double, "
                      "ci_high double")

            def rows(key, frame):
                return [(*key, *king_of(zip(frame["wins"], frame["den"], frame["topics"])))]

            self._king = cache.persist(per_group(
                self.rows("case"), ["task", "set_id"], rows, schema,
                aggregate=(["den"], [F.sum("num").cast("long").alias("wins"),
                                     F.count(F.lit(1)).alias("topics")])))
        return self._king

    def king(self):
        """``king/``: task, metric_set, n_metrics, king, ci_low, ci_high, n_cases."""
        return self.labelled(self._king_frame()).select(
            "task", "metric_set", "n_metrics", "king", "ci_low", "ci_high", "n_cases")

    def king_values(self) -> Dict[str, Dict[MetricSet, float]]:
        """task -> {set: KING} (collected: one row per task and set)."""
        out: Dict[str, Dict[MetricSet, float]] = {}
        for r in self._king_frame().select("task", "set_id", "king").collect():
            out.setdefault(r["task"], {})[self.sets[r["set_id"]]] = r["king"]
        return out

    def orange(self):
        """``orange/`` rows of QUEEN: pooled over (topic, held-out model,
        peer); a ratio of two integer sums."""
        from pyspark.sql import functions as F
        pooled = (self.rows("case").groupBy("task", "set_id")
                  .agg(F.sum("n_le").alias("n_le"), F.sum("n_pairs").alias("n_pairs")))
        return (self.labelled(pooled)
                .select("task", "metric_set", "n_metrics", F.lit("QUEEN").alias("score"),
                        (F.col("n_le") / F.col("n_pairs")).alias("orange"),
                        F.col("n_pairs").cast("long").alias("n_cases")))

    def peer_scores(self):
        """task, metric_set, summarizer, queen: a peer system's mean QUEEN
        over its topics, all models (SPEC §3's system score), every set."""
        scores = exact_mean(self.rows("sys"), ["task", "set_id", "summarizer"], "queen",
                            num="num", den="den", count="count")
        return self.labelled(scores).select("task", "metric_set", "summarizer", "queen")

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
        # per (summarizer, den): the jackknifed rows per topic ("jk"), the rows
        # with all models over every topic ("full", topic null)
        jk = F.col("holdout").isNotNull()
        q = self.rows("queen").select(
            "task", "set_id", "summarizer", "role", "den", "num",
            F.when(jk, F.lit("jk")).otherwise(F.lit("full")).alias("part"),
            F.when(jk, F.col("topic")).alias("topic"))
        schema = ("task string, set_id int, summarizer string, role string, queen double, "
                  "queen_full double, position int, above_peers boolean")
        aggregate = (["summarizer", "role", "topic", "den", "part"],
                     [F.sum("num").cast("long").alias("num"), F.count(F.lit(1)).alias("count")])
        return self.labelled(per_group(q, ["task", "set_id"], _system_rows, schema,
                                       aggregate=aggregate)).select(
            "task", "summarizer", "role", "metric_set", "queen", "queen_full", "set_id",
            "position", "above_peers")

    def jack(self):
        """``jack/``: task, metric_set, jack (and set_id)."""
        jack = exact_mean(self.rows("jack"), ["task", "set_id"], "jack", num="num", den="den")
        return self.labelled(jack).select("task", "metric_set", "jack", "set_id")

    def jack_curve(self):
        """``jack_curve/``: task, metric_set, n_peers, jack."""
        curve = exact_mean(self.rows("curve"), ["task", "set_id", "n_peers"], "jack",
                           num="num", den="den")
        return self.labelled(curve).select("task", "metric_set", "n_peers", "jack")


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

    def rows(key, frame):
        (r,) = agreement.correlations(list(frame["summarizer"]), frame["queen"], frame["y"],
                                      min_n=agreement.MIN_POINTS, kinds=("pearson",))
        return [(*key, r if np.isfinite(r) else None)]

    pearson = per_group(joined, ["task", "metric_set", "criterion"], rows, schema)
    return (king.select("task", "metric_set", "n_metrics", "king")
            .join(pearson, ["task", "metric_set"])
            .select("task", "metric_set", "n_metrics", "king", "criterion", "pearson"))


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
    names = evaluation.cube.spark.createDataFrame(
        [(i, queen_measure(s)) for i, s in enumerate(evaluation.sets)] or [(-1, "")],
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
