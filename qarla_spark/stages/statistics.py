"""The statistics stage (issue 11): is each difference real?

Bootstrap intervals (percentile and BCa, 95%) for KING of every evaluated
set, JACK of the detailed sets, the pooled AUC of every measure and of HBR,
and the system- and summary-level correlations with the human criteria;
paired sign-flip tests with bootstrap intervals of the difference for the
comparisons the run prints (best set vs best single metric, vs each
representative, vs every other subset of the representatives — adjusted
for the family with the max-T method — and HBR vs the best and the median
single measure per criterion).

The unit of resampling is the topic (Deutsch et al.'s "inputs"); system-
level correlations are also resampled over systems and over both. Nothing
loops on the driver: the per-topic counts the QARLA and HBR stages already
hold are grouped per task (and criterion, set), and each group computes all
its replicates at once on an executor (:mod:`qarla_spark.measures.resampling`:
Poisson weights regenerated from (seed, task, topic), exact weighted means,
so the replicate with all weights 1 is the reported value). Results are
bit-identical under any partitioning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

import numpy as np

from qarla_spark.measures import agreement
from qarla_spark.measures import resampling as rs
from qarla_spark.spark import cache
from qarla_spark.spark.grouped import per_group

UNIT = "topics"
ROW_SCHEMA = ("kind string, task string, family string, criterion string, a string, b string, "
              "value_a double, value_b double, value double, method string, ci_low double, "
              "ci_high double, p_value double, p_adjusted double")
CORR_SCHEMA = ("task string, set_id int, criterion string, level string, correlation string, "
               "value double, method string, ci_low double, ci_high double, unit string")
FLIP_METHOD = "sign flips over topics"

FAMILIES = {
    "best_single": "best set vs best single metric",
    "representative": "best set vs each representative",
    "subset": "best set vs every other subset of the representatives",
    "hbr_best": "HBR vs best single measure",
    "hbr_median": "HBR vs median single measure",
}


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    value_a: float
    value_b: float
    difference: float
    low: float
    high: float
    p_value: float
    p_adjusted: float

    @property
    def significant(self) -> bool:
        return self.p_adjusted < rs.ALPHA


@dataclass
class StatisticsResult:
    """Tables and the intervals and tests the run prints."""

    tables: Dict[str, Any]
    n_resamples: int
    seed: int
    king: Dict[Tuple[str, str], Interval] = field(default_factory=dict)     # (task, set)
    jack: Dict[Tuple[str, str], Interval] = field(default_factory=dict)
    auc: Dict[Tuple[str, str, str], Interval] = field(default_factory=dict)  # task, crit, measure
    #: system-level Pearson, resampling systems and topics ("both")
    correlation: Dict[Tuple[str, str, str, str], Interval] = field(default_factory=dict)
    comparisons: Dict[Tuple[str, str, str], List[Comparison]] = field(default_factory=dict)
    #: per task: (subsets whose KING is not significantly below the best
    #: set's, max-T adjusted at 5%, the best set included; subsets)
    subsets_kept: Dict[str, Tuple[int, int]] = field(default_factory=dict)

    def info(self) -> Dict[str, Any]:
        return {"n_resamples": self.n_resamples, "seed": self.seed, "unit": UNIT,
                "bootstrap": "Poisson(1) weights per topic, seeded by (seed, task, topic)",
                "interval": "percentile and BCa, 95%",
                "test": "paired sign flips over topics (mid-p); max-T adjustment within each "
                        "family"}


# ---------------------------------------------------------------------------
# per-group work (pure; on the executors)
# ---------------------------------------------------------------------------

def _ci_rows(kind, task, criterion, names, point, reps, jack):
    out = []
    for j, name in enumerate(names):
        for method, (low, high) in rs.intervals(point[j], reps[:, j], jack[:, j]).items():
            out.append((kind, task, None, criterion, name, None, None, None, float(point[j]),
                        method, low, high, None, None))
    return out


def _comparison_rows(task, criterion, family, pairs, names, point, reps, diffs_of, flips):
    """Rows of one family of comparisons a − b (``pairs`` of column
    indices): the difference, its bootstrap interval, the sign-flip p-value
    and its max-T adjustment within the family."""
    if not pairs:
        return []
    columns = [diffs_of(ia, ib) for ia, ib in pairs]
    scale = columns[0][1]
    if any(c[1] != scale for c in columns):
        raise ValueError("the differences of a family must share one scale")
    diffs = np.column_stack([c[0].astype(np.int64) for c in columns])
    p, adjusted = rs.sign_flip_family(diffs, flips)
    out = []
    for k, (ia, ib) in enumerate(pairs):
        low, high = rs.percentile_interval(reps[:, ia] - reps[:, ib])
        out.append(("comparison", task, family, criterion, names[ia], names[ib],
                    float(point[ia]), float(point[ib]), int(diffs[:, k].sum()) / scale,
                    FLIP_METHOD, low, high, float(p[k]), float(adjusted[k])))
    return out


def _matrix(rows, row_keys, col_keys):
    r_at = {k: i for i, k in enumerate(row_keys)}
    c_at = {k: i for i, k in enumerate(col_keys)}
    out = np.zeros((len(row_keys), len(col_keys)), dtype=np.int64)
    for r, c, v in rows:
        out[r_at[r], c_at[c]] = int(v)
    return out


def king_group(key, frame, labels, plans, seed: int, n: int, kind: str = "king"):
    """KING (or JACK, ``kind``) intervals of every set of one task and the
    comparisons of its plan. ``frame``: topic, gid, num, den (a row per
    topic and set; every set has the same topics); ``labels[gid]``: the
    set's name; ``plans[task]``: gids of the best set, the best single
    metric, the representatives, the subsets."""
    (task,) = key
    topics = sorted(set(frame["topic"]))
    gids = sorted(set(int(g) for g in frame["gid"]))
    wins = _matrix(zip(frame["topic"], frame["gid"].astype(int), frame["num"]), topics, gids)
    dens = _matrix(zip(frame["topic"], frame["gid"].astype(int), frame["den"]), topics,
                   gids).max(axis=1)
    names = [labels[g] for g in gids]
    point = rs.weighted_ratio_means(wins, dens, np.ones((1, len(topics)), dtype=np.int64))[0]
    reps = rs.weighted_ratio_means(wins, dens, rs.poisson_weights(seed, task, topics, n))
    jack = rs.weighted_ratio_means(wins, dens, rs.jackknife_weights(len(topics)))
    out = _ci_rows(kind, task, None, names, point, reps, jack)
    plan = plans.get(task) if kind == "king" else None
    if plan is None:
        return out
    flips = rs.sign_flips(seed, task, topics, n)
    at = {g: i for i, g in enumerate(gids)}

    def diffs_of(ia, ib):
        ints, lcm = rs.common_scale(wins[:, ia], wins[:, ib], dens)
        return ints, lcm * len(topics)

    best = plan["best"]
    for family, others in (("best_single", [plan["best_single"]]),
                           ("representative", plan["reps"]),
                           ("subset", [g for g in plan["subsets"] if g != best])):
        pairs = [(at[best], at[o]) for o in others if o in at and best in at]
        out += _comparison_rows(task, None, FAMILIES[family], pairs, names, point, reps,
                                diffs_of, flips)
    return out


def auc_group(key, frame, plans, seed: int, n: int):
    """Pooled-AUC intervals of every measure of one (task, criterion), and
    HBR vs the best and the median single measure. ``frame``: topic,
    measure, wins2, n_pairs."""
    task, criterion = key
    topics = sorted(set(frame["topic"]))
    measures = sorted(set(frame["measure"]))
    wins = _matrix(zip(frame["topic"], frame["measure"], frame["wins2"]), topics, measures)
    pairs = _matrix(zip(frame["topic"], frame["measure"], frame["n_pairs"]), topics, measures)

    def pooled(weights):
        with np.errstate(invalid="ignore", divide="ignore"):
            return ((weights @ wins).astype(np.float64)
                    / (2 * (weights @ pairs)).astype(np.float64))

    point = pooled(np.ones((1, len(topics)), dtype=np.int64))[0]
    reps = pooled(rs.poisson_weights(seed, task, topics, n))
    jack = pooled(rs.jackknife_weights(len(topics)))
    out = _ci_rows("auc", task, criterion, measures, point, reps, jack)
    plan = plans.get((task, criterion))
    if plan is None or plan["hbr"] not in measures:
        return out
    flips = rs.sign_flips(seed, task, topics, n)
    h = measures.index(plan["hbr"])

    def diffs_of(ia, ib):
        if not np.array_equal(pairs[:, ia], pairs[:, ib]):
            raise ValueError("two measures judged on different pairs cannot be compared")
        return (wins[:, ia] - wins[:, ib]).astype(object), 2 * int(pairs[:, ia].sum())

    for family, name in (("hbr_best", plan["best"]), ("hbr_median", plan["median"])):
        if name in measures:
            out += _comparison_rows(task, criterion, FAMILIES[family],
                                    [(h, measures.index(name))], measures, point, reps,
                                    diffs_of, flips)
    return out


def correlation_group(key, frame, seed: int, n: int, summary_level: bool = True):
    """Intervals of the correlations of one (task, set or HBR, criterion):
    system level (resampling topics, systems, both) and, with
    ``summary_level``, summary level (topics). ``frame``: part ("x": topic,
    summarizer, num, den — a system's score in a topic as a ratio; "y": topic,
    summarizer, score — a human score)."""
    task, set_id, criterion = key
    x_rows = frame[frame["part"] == "x"]
    y_rows = frame[frame["part"] == "y"]
    topics = sorted(set(frame["topic"]))
    t_at = {t: i for i, t in enumerate(topics)}
    systems = sorted(set(x_rows["summarizer"]) & set(y_rows["summarizer"]))
    weights = rs.poisson_weights(seed, task, topics, n)
    ones = np.ones((1, len(topics)), dtype=np.int64)
    jack = rs.jackknife_weights(len(topics))

    def system_means(rows, value_of):
        """(B × systems) exact weighted means over each system's topics, for
        the weights ones, the replicates, the jackknife."""
        outs = [np.empty((1, len(systems))), np.empty((n, len(systems))),
                np.empty((len(topics), len(systems)))]
        by_system = dict(tuple(rows.groupby("summarizer")))
        for j, name in enumerate(systems):
            mine = by_system[name]
            cols = [t_at[t] for t in mine["topic"]]
            for out, w in zip(outs, (ones, weights, jack)):
                out[:, j] = value_of(mine, w[:, cols])[:, 0]
        return outs

    xs = system_means(x_rows, lambda r, w: rs.weighted_ratio_means(
        r["num"].to_numpy(np.int64)[:, None], r["den"].to_numpy(np.int64), w))
    ys = system_means(y_rows, lambda r, w: rs.weighted_real_means(
        r["score"].to_numpy(np.float64)[:, None], w))
    kinds = agreement.KINDS

    def corr(x, y, keys=systems):
        return agreement.correlation_rows(keys, x, y)

    point = corr(xs[0], ys[0])[0]
    # systems resampled with replacement (seeded per replicate); the points
    # of a replicate are taken in the order drawn
    picks = rs.system_picks(seed, task, len(systems), n)
    keys = [f"{k:06d}" for k in range(len(systems))]
    rows = np.arange(n)[:, None]
    by_unit = {
        "topics": corr(xs[1], ys[1]),
        "systems": corr(xs[0][0][picks], ys[0][0][picks], keys),
        "both": corr(xs[1][rows, picks], ys[1][rows, picks], keys),
    }
    jack_c = corr(xs[2], ys[2])
    out = []
    for unit, reps in by_unit.items():
        for k, kind in enumerate(kinds):
            cis = rs.intervals(point[k], reps[:, k], jack_c[:, k]) if unit == "topics" \
                else {"percentile": rs.percentile_interval(reps[:, k])}
            for method, (low, high) in cis.items():
                out.append((task, set_id, criterion, "system", kind, float(point[k]), method,
                            low, high, unit))
    if not summary_level:
        return out
    per_topic, cols = [], []
    x_by_topic: Dict[str, dict] = {}
    y_by_topic: Dict[str, dict] = {}
    for topic, name, num, den in zip(x_rows["topic"], x_rows["summarizer"], x_rows["num"],
                                     x_rows["den"]):
        x_by_topic.setdefault(topic, {})[name] = int(num) / int(den)
    for topic, name, score in zip(y_rows["topic"], y_rows["summarizer"], y_rows["score"]):
        y_by_topic.setdefault(topic, {})[name] = score
    for topic in topics:
        x_of, y_t = x_by_topic.get(topic, {}), y_by_topic.get(topic, {})
        names = [s for s in x_of if s in y_t]
        if not names:
            continue
        r = agreement.correlations(names, [x_of[s] for s in names], [y_t[s] for s in names],
                                   min_n=agreement.MIN_POINTS)
        if np.isfinite(r[0]):
            per_topic.append(r)
            cols.append(t_at[topic])
    if not per_topic:
        return out
    values = np.asarray(per_topic, dtype=np.float64)
    point_s = rs.weighted_real_means(values, np.ones((1, len(cols)), dtype=np.int64))[0]
    reps_s = rs.weighted_real_means(values, weights[:, cols])
    jack_s = rs.weighted_real_means(values, rs.jackknife_weights(len(cols)))
    for k, kind in enumerate(kinds):
        for method, (low, high) in rs.intervals(point_s[k], reps_s[:, k], jack_s[:, k]).items():
            out.append((task, set_id, criterion, "summary", kind, float(point_s[k]), method,
                        low, high, "topics"))
    return out


# ---------------------------------------------------------------------------
# the stage (Spark plans; small results collected for the printed summary)
# ---------------------------------------------------------------------------

def _king_inputs(qarla):
    """(cases, labels, sizes, plans): KING's per-topic cases of every
    evaluated set with a global set id, the sets' names and sizes, and each
    task's plan as set ids."""
    from pyspark.sql import functions as F
    first, second, _ = qarla.evaluations
    catalogue = list(dict.fromkeys(first.sets + second.sets))
    gid = {s: i for i, s in enumerate(catalogue)}
    spark = first.cube.spark
    ids = spark.createDataFrame(
        [(e, sid, gid[s]) for e, ev in enumerate((first, second)) for sid, s in enumerate(ev.sets)]
        or [(-1, -1, -1)], "ev int, set_id int, gid int")
    cases = (first.rows("case").withColumn("ev", F.lit(0))
             .unionByName(second.rows("case").withColumn("ev", F.lit(1)))
             .join(F.broadcast(ids), ["ev", "set_id"])
             .select("task", "topic", "gid", "num", "den")
             .dropDuplicates(["task", "topic", "gid"]))
    plans = {task: {"best": gid[p.best], "best_single": gid[p.best_single],
                    "reps": [gid[r] for r in p.representatives if r in gid],
                    "subsets": [gid[s] for s in p.subsets if s in gid]}
             for task, p in qarla.plans.items()}
    return cases, [s.label for s in catalogue], catalogue, plans


def _hbr_x_rows(hbr):
    """(task, topic, summarizer, num, den): HBR of a summary in its topic as
    a ratio of counts (split pairs over its pairs, H's sample size each)."""
    from pyspark.sql import functions as F
    return (hbr.pairs.join(hbr.hetero.select("task", "need", "n_split", "n_pairs"),
                           ["task", "need"])
            .groupBy("task", "topic", F.col("s").alias("summarizer"))
            .agg(F.sum("n_split").cast("long").alias("num"),
                 (F.first("n_pairs") * F.count(F.lit(1))).cast("long").alias("den")))


def _xy(x, y, keys):
    """The rows :func:`correlation_group` reads: part x (num, den) and y
    (score)."""
    from pyspark.sql import functions as F
    xs = x.select(*keys, "topic", "summarizer", F.lit("x").alias("part"), "num", "den",
                  F.lit(None).cast("double").alias("score"))
    ys = y.select(*keys, "topic", "summarizer", F.lit("y").alias("part"),
                  F.lit(None).cast("long").alias("num"), F.lit(None).cast("long").alias("den"),
                  "score")
    return xs.unionByName(ys)


def run_statistics(qarla, hbr, judgments, config) -> StatisticsResult:
    """Intervals and paired tests for what the QARLA stage (``qarla``, a
    :class:`~qarla_spark.stages.qarla.QarlaResult`, or None) and the HBR
    stage (``hbr`` or None) found; ``config.bootstrap`` replicates (and as
    many sign patterns), seeded by ``config.seed``."""
    from pyspark.sql import functions as F

    n, seed = config.bootstrap, config.seed
    result = StatisticsResult({}, n, seed)
    parts = []
    if qarla is not None and qarla.evaluations:
        first, second, third = qarla.evaluations
        spark = first.cube.spark
        cases, labels, catalogue, plans = _king_inputs(qarla)
        parts.append(per_group(cases, ["task"],
                               lambda k, f: king_group(k, f, labels, plans, seed, n),
                               ROW_SCHEMA))
        jack_labels = [s.label for s in third.sets]
        jack = third.rows("jack").select("task", "topic", F.col("set_id").alias("gid"),
                                         "num", "den")
        parts.append(per_group(jack, ["task"], lambda k, f: king_group(
            k, f, jack_labels, {}, seed, n, kind="jack"), ROW_SCHEMA))
        sizes = spark.createDataFrame([(s.label, s.size) for s in catalogue] or [("", 0)],
                                      "metric_set string, n_metrics int")
        full = (third.rows("queen").filter(F.col("holdout").isNull() & (F.col("role") == "peer"))
                .select("task", "topic", "summarizer", "set_id", "num", "den"))
        judged = full.join(judgments.select("task", "topic", "summarizer", "criterion", "score"),
                           ["task", "topic", "summarizer"])
        corr = per_group(_xy(judged, judged, ["task", "set_id", "criterion"]),
                         ["task", "set_id", "criterion"],
                         lambda k, f: correlation_group(k, f, seed, n), CORR_SCHEMA)
        corr = (third.labelled(corr).withColumn("score", F.lit("QUEEN")))
        result.tables["correlation_ci"] = corr
    else:
        sizes = None
    if hbr is not None and hbr.per_topic_auc is not None:
        auc_plans = {(task, c): {"hbr": "HBR", "best": a.best[0], "median": a.median[0]}
                     for task, cs in hbr.auc.items() for c, a in cs.items()}
        parts.append(per_group(hbr.per_topic_auc, ["task", "criterion"],
                               lambda k, f: auc_group(k, f, auc_plans, seed, n), ROW_SCHEMA))
        x = _hbr_x_rows(hbr)
        criteria = judgments.select("task", "criterion").distinct()
        y = judgments.select("task", "topic", "summarizer", "criterion", "score")
        rows = _xy(x.join(criteria, "task").withColumn("set_id", F.lit(0)),
                   y.withColumn("set_id", F.lit(0)), ["task", "set_id", "criterion"])
        hbr_corr = (per_group(rows, ["task", "set_id", "criterion"],
                              lambda k, f: correlation_group(k, f, seed, n, summary_level=False),
                              CORR_SCHEMA)
                    .withColumn("metric_set", F.lit(hbr.measure_set.label))
                    .withColumn("score", F.lit("HBR")))
        result.tables["correlation_ci"] = (result.tables["correlation_ci"].unionByName(
            hbr_corr, allowMissingColumns=True) if "correlation_ci" in result.tables
            else hbr_corr)
    if not parts:
        return result
    rows = parts[0]
    for p in parts[1:]:
        rows = rows.unionByName(p)
    rows = cache.persist(rows)
    lit_n, unit = F.lit(n).alias("n_resamples"), F.lit(UNIT).alias("unit")
    if sizes is not None:
        result.tables["king_ci"] = (rows.filter(F.col("kind") == "king")
                                    .join(F.broadcast(sizes), F.col("a") == F.col("metric_set"))
                                    .select("task", "metric_set", "n_metrics",
                                            F.col("value").alias("king"), "method", "ci_low",
                                            "ci_high", lit_n, unit))
        result.tables["jack_ci"] = (rows.filter(F.col("kind") == "jack")
                                    .select("task", F.col("a").alias("metric_set"),
                                            F.col("value").alias("jack"), "method", "ci_low",
                                            "ci_high", lit_n, unit))
    if hbr is not None and hbr.per_topic_auc is not None:
        result.tables["auc_ci"] = (rows.filter(F.col("kind") == "auc")
                                   .select("task", "criterion", F.col("a").alias("measure"),
                                           F.col("value").alias("auc"), "method", "ci_low",
                                           "ci_high", lit_n, unit))
    result.tables["comparisons"] = (
        rows.filter(F.col("kind") == "comparison")
        .select("task", "family", "criterion", "a", "b", "value_a", "value_b",
                F.col("value").alias("difference"), "ci_low", "ci_high", "p_value",
                "p_adjusted", (F.col("p_adjusted") < rs.ALPHA).alias("significant"),
                "method", lit_n, unit))
    if "correlation_ci" in result.tables:
        result.tables["correlation_ci"] = cache.persist(result.tables["correlation_ci"].select(
            "task", "score", "metric_set", "criterion", "level", "correlation", "value",
            "method", "ci_low", "ci_high", lit_n, "unit"))
    _collect(result, qarla, hbr, rows)
    return result


def _collect(result: StatisticsResult, qarla, hbr, rows) -> None:
    """The intervals and tests the run prints (small: per task, the best
    set, the best single metric, per criterion)."""
    from pyspark.sql import functions as F
    wanted_sets = set()
    if qarla is not None:
        for p in qarla.plans.values():
            wanted_sets |= {p.best.label, p.best_single.label}
    printed = rows.filter(((F.col("kind").isin("king", "jack")) & F.col("a").isin(
        list(wanted_sets) or [""]) & (F.col("method") == "percentile"))
        | ((F.col("kind") == "auc") & (F.col("method") == "percentile"))
        | ((F.col("kind") == "comparison") & (F.col("family") != FAMILIES["subset"])))
    for r in printed.collect():
        if r["kind"] == "comparison":
            result.comparisons.setdefault((r["task"], r["family"], r["criterion"] or ""),
                                          []).append(Comparison(
                r["a"], r["b"], r["value_a"], r["value_b"], r["value"], r["ci_low"],
                r["ci_high"], r["p_value"], r["p_adjusted"]))
        elif r["kind"] == "auc":
            result.auc[(r["task"], r["criterion"], r["a"])] = Interval(r["value"], r["ci_low"],
                                                                       r["ci_high"])
        else:
            getattr(result, r["kind"])[(r["task"], r["a"])] = Interval(
                r["value"], r["ci_low"], r["ci_high"])
    # the subsets: how many are not significantly below the best (max-T, 5%)
    for r in (rows.filter((F.col("kind") == "comparison")
                          & (F.col("family") == FAMILIES["subset"]))
              .groupBy("task").agg(F.count(F.lit(1)).alias("n"),
                                   F.sum((F.col("p_adjusted") >= rs.ALPHA).cast("int"))
                                   .alias("kept")).collect()):
        result.subsets_kept[r["task"]] = (int(r["kept"]) + 1, int(r["n"]) + 1)
    if "correlation_ci" in result.tables:
        best = {(t, p.best.label) for t, p in (qarla.plans.items() if qarla else [])}
        for r in (result.tables["correlation_ci"]
                  .filter((F.col("level") == "system") & (F.col("correlation") == "pearson")
                          & (F.col("method") == "percentile") & (F.col("unit") == "both"))
                  .collect()):
            if r["score"] == "HBR" or (r["task"], r["metric_set"]) in best:
                result.correlation[(r["task"], r["score"], r["criterion"], "pearson")] = \
                    Interval(r["value"], r["ci_low"], r["ci_high"])
