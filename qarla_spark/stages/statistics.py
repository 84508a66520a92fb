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
from qarla_spark.names import FAMILIES
from qarla_spark.measures import resampling as rs
from qarla_spark.spark import rounds as rd

UNIT = "topics"
ROW_SCHEMA = ("kind string, task string, family string, criterion string, a string, b string, "
              "value_a double, value_b double, value double, method string, ci_low double, "
              "ci_high double, p_value double, p_adjusted double")
FLIP_METHOD = "sign flips over topics"



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

    def batched(rows):
        """Every system's rows at once when each (topic, system) has one
        row (:func:`~qarla_spark.measures.resampling.grouped_ratio_means`):
        the same exact means as one system at a time."""
        rows = rows[rows["summarizer"].isin(systems)]
        s_at = {name: j for j, name in enumerate(systems)}
        t_idx = [t_at[t] for t in rows["topic"]]
        s_idx = [s_at[name] for name in rows["summarizer"]]
        if len(set(zip(t_idx, s_idx))) != len(t_idx):
            return None
        return rows, (t_idx, s_idx)

    def system_means(rows, value_of, grouped=None):
        """(B × systems) exact weighted means over each system's topics, for
        the weights ones, the replicates, the jackknife."""
        found = batched(rows) if grouped is not None else None
        if found is not None:
            mine, where = found
            return [grouped(mine, where, w) for w in (ones, weights, jack)]
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
        r["num"].to_numpy(np.int64)[:, None], r["den"].to_numpy(np.int64), w),
        lambda r, where, w: rs.grouped_ratio_means(
            r["num"].to_numpy(np.int64), r["den"].to_numpy(np.int64), where, len(systems), w))
    ys = system_means(y_rows, lambda r, w: rs.weighted_real_means(
        r["score"].to_numpy(np.float64)[:, None], w),
        lambda r, where, w: rs.grouped_real_means(
            r["score"].to_numpy(np.float64), where, len(systems), w))
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
# the stage: one reduce per task over the QARLA and HBR stages' per-topic
# records (kept on the executors), one Spark job
# ---------------------------------------------------------------------------

def _frame(rows, columns):
    import pandas as pd
    return pd.DataFrame.from_records(rows, columns=columns)


def statistics_records(task: str, kind: str, value, ctx) -> List[tuple]:
    """The records the statistics stage reads of one record of the QARLA or
    HBR stage, keyed by the group that reads them — ``king`` (KING's cases),
    ``jack``, ``corr`` (one detailed set and criterion: the judged peers'
    QUEEN), ``auc`` (one criterion: every measure's AUC counts), ``hcorr``
    (HBR of each summary and every judgment) — so that a task's groups are
    computed in parallel and the shuffle moves them without Python. Called
    by the stages' kernels (``ctx``: ``n_detailed``, ``judged``)."""
    if kind == "case":
        return [(rd.key_of(task, "king"), "s_case", value)]
    if kind == "detail":
        out = [(rd.key_of(task, "jack"), "s_jack",
                {"topic": value["topic"], "jack": value["jack"],
                 "n_models": value["n_models"]})]
        j = value["judged"]
        if ctx.get("judged") and j is not None:
            for criterion in sorted(set(j["criterion"])):
                sel = j["criterion"] == criterion
                judged = {"summarizer": j["summarizer"][sel], "score": j["score"][sel]}
                for s in range(ctx["n_detailed"]):
                    out.append((rd.key_of(task, "corr", s, criterion), "s_corr",
                                {"topic": value["topic"], "peers": value["peers"],
                                 "num": value["full_num"][:, s], "den": value["full_den"],
                                 "judged": judged}))
        return out
    if kind == "auc_topic":
        return [(rd.key_of(task, "auc", criterion), "s_auc",
                 {"topic": value["topic"], "wins2": wins2, "n_pairs": n_pairs})
                for criterion, wins2, n_pairs in value["auc"]]
    if kind == "hbr_x":
        return [(rd.key_of(task, "hcorr"), "s_hx", value)]
    if kind == "judgments":
        return [(rd.key_of(task, "hcorr"), "s_judg", value)]
    return []


#: the kinds of :func:`statistics_records`
STATISTICS_KINDS = ("s_case", "s_jack", "s_corr", "s_auc", "s_hx", "s_judg")


def with_statistics(records: List[tuple], ctx) -> List[tuple]:
    """``records`` and, when the run computes statistics
    (``ctx["statistics"]``), the records the statistics stage reads of
    them (:func:`statistics_records`)."""
    if not ctx.get("statistics"):
        return records
    extra = [c for key, kind, value in records
             for c in statistics_records(key, kind, value, ctx)]
    return records + extra


def _statistics_reduce(key, items, ctx):
    """The intervals and tests of one group of a task (:func:`_route`): its
    ROW_SCHEMA rows, its ``correlation_ci`` rows and what the run prints."""
    task, group, *rest = rd.key_parts(key)
    seed, n = ctx["seed"], ctx["n"]
    out: List[tuple] = []         # ROW_SCHEMA rows
    corr: List[tuple] = []        # correlation_ci rows (labelled)
    q, h = ctx.get("qarla"), ctx.get("hbr")
    if group == "king" and q is not None and task in q["plans"]:
        gid = q["gid"]
        plan = q["plans"][task]
        task_sets = [q["first"], plan["subsets_labels"]]
        rows, seen = [], set()
        for _, v in items:
            for s, label in enumerate(task_sets[v["family"]]):
                at = (v["topic"], gid[label])
                if at not in seen:
                    seen.add(at)
                    rows.append((v["topic"], gid[label], int(v["win"][s]), int(v["den"])))
        if rows:
            out += king_group((task,), _frame(rows, ["topic", "gid", "num", "den"]),
                              q["labels"], {task: plan["gids"]}, seed, n)
    elif group == "jack" and q is not None:
        rows = [(v["topic"], s, int(v["jack"][s]), int(v["n_models"]))
                for _, v in items for s in range(len(q["detailed"]))]
        if rows:
            out += king_group((task,), _frame(rows, ["topic", "gid", "num", "den"]),
                              q["detailed"], {}, seed, n, kind="jack")
    elif group == "corr" and q is not None:
        s, criterion = int(rest[0]), rest[1]
        rows = []
        for _, v in items:
            at = {name: a for a, name in enumerate(v["peers"])}
            for name, score in zip(v["judged"]["summarizer"], v["judged"]["score"]):
                a = at.get(name)
                if a is None:
                    continue
                rows.append((v["topic"], name, "x", int(v["num"][a]), int(v["den"][a]), None))
                rows.append((v["topic"], name, "y", None, None, float(score)))
        if rows:
            frame = _frame(rows, ["topic", "summarizer", "part", "num", "den", "score"])
            label = q["detailed"][s]
            corr += [(r[0], "QUEEN", label, r[2], r[3], r[4], r[5], r[6], r[7], r[8], n, r[9])
                     for r in correlation_group((task, s, criterion), frame, seed, n)]
    elif group == "auc" and h is not None:
        criterion = rest[0]
        rows = [(v["topic"], m, int(w), int(v["n_pairs"]))
                for _, v in items for m, w in zip(h["names"], v["wins2"])]
        if rows:
            out += auc_group((task, criterion), _frame(rows, ["topic", "measure", "wins2",
                                                               "n_pairs"]),
                             h["plans"], seed, n)
    elif group == "hcorr" and h is not None:
        x_rows = [(v["topic"], name, "x", num, den, None)
                  for k, v in items if k == "s_hx" for name, _, num, den in v["rows"]]
        y_rows: Dict[str, list] = {}
        for k, v in items:
            if k == "s_judg":
                for topic, name, criterion, score in zip(v["topic"], v["summarizer"],
                                                         v["criterion"], v["score"]):
                    y_rows.setdefault(criterion, []).append(
                        (topic, name, "y", None, None, float(score)))
        for criterion in sorted(y_rows):
            frame = _frame(x_rows + y_rows[criterion], ["topic", "summarizer", "part", "num",
                                                         "den", "score"])
            corr += [(r[0], "HBR", h["label"], r[2], r[3], r[4], r[5], r[6], r[7], r[8], n,
                      r[9])
                     for r in correlation_group((task, 0, criterion), frame, seed, n,
                                                summary_level=False)]
    corr_records = [rd.table_record(key, "correlation_ci", corr)] if corr else []
    printed = _printed(task, out, corr, ctx)
    # most groups print nothing (a correlation of a set that is not the
    # task's best): no record for them — 100 tasks make ~40,000 groups
    driver = [(key, "driver", (task, printed))] if printed else []
    return [*_table_records(key, out, ctx), *corr_records, *driver]


def _table_records(key, rows, ctx):
    """The statistics' ROW_SCHEMA rows as records of the tables king_ci,
    jack_ci, auc_ci and comparisons."""
    n, sizes = ctx["n"], ctx.get("sizes", {})
    tables: Dict[str, list] = {"king_ci": [], "jack_ci": [], "auc_ci": [], "comparisons": []}
    for r in rows:
        (k, task, family, criterion, a, b, value_a, value_b, value, method, low, high, p,
         p_adj) = r
        if k == "king":
            if a in sizes:
                tables["king_ci"].append((task, a, sizes[a], value, method, low, high, n, UNIT))
        elif k == "jack":
            tables["jack_ci"].append((task, a, value, method, low, high, n, UNIT))
        elif k == "auc":
            tables["auc_ci"].append((task, criterion, a, value, method, low, high, n, UNIT))
        else:
            tables["comparisons"].append((task, family, criterion, a, b, value_a, value_b,
                                          value, low, high, p, p_adj,
                                          bool(p_adj < rs.ALPHA), method, n, UNIT))
    return [rd.table_record(key, name, found) for name, found in tables.items() if found]


def _printed(task, rows, corr, ctx) -> dict:
    """The intervals and tests the run prints, of one task (small; only
    what the group found: empty when it prints nothing)."""
    wanted = set(ctx.get("wanted", ()))
    best = ctx.get("best", {}).get(task)
    king, jack, auc, comparisons = {}, {}, {}, {}
    n_subsets = kept = 0
    for r in rows:
        kind, family, criterion, a = r[0], r[2], r[3], r[4]
        if kind in ("king", "jack") and a in wanted and r[9] == "percentile":
            (king if kind == "king" else jack)[(task, a)] = Interval(r[8], r[10], r[11])
        elif kind == "auc" and r[9] == "percentile":
            auc[(task, criterion, a)] = Interval(r[8], r[10], r[11])
        elif kind == "comparison":
            if family == FAMILIES["subset"]:
                n_subsets += 1
                kept += int(r[13] >= rs.ALPHA)
            else:
                comparisons.setdefault((task, family, criterion or ""), []).append(Comparison(
                    r[4], r[5], r[6], r[7], r[8], r[10], r[11], r[12], r[13]))
    correlation = {}
    for r in corr:
        score, label, criterion, level, kind, method, unit = (r[1], r[2], r[3], r[4], r[5],
                                                              r[7], r[11])
        if level == "system" and kind == "pearson" and method == "percentile" \
                and unit == "both" and (score == "HBR" or label == best):
            correlation[(task, score, criterion, "pearson")] = Interval(r[6], r[8], r[9])
    for key in comparisons:
        comparisons[key].sort(key=lambda c: (c.a, c.b))
    out = {name: found for name, found in (("king", king), ("jack", jack), ("auc", auc),
                                            ("comparisons", comparisons),
                                            ("correlation", correlation)) if found}
    if n_subsets:
        out["subsets_kept"] = (kept + 1, n_subsets + 1)
    return out




def _n_groups(ctx, qarla, tasks) -> int:
    """How many groups the statistics of the run make (0: unknown)."""
    if tasks is None:
        return 0
    n = 0
    for t in tasks:
        criteria = len(t.judgments)
        n += 2 + 2 * criteria
        if qarla is not None:
            n += len(qarla.detailed) * criteria
    return n


def run_statistics(qarla, hbr, judgments, config, tasks=None) -> StatisticsResult:
    """Intervals and paired tests for what the QARLA stage (``qarla``, a
    :class:`~qarla_spark.stages.qarla.QarlaResult`, or None) and the HBR
    stage (``hbr`` or None) found; ``config.bootstrap`` replicates (and as
    many sign patterns), seeded by ``config.seed``. ``tasks``: the
    testbed's description (its tasks' criteria; without it, the HBR
    correlations are not computed). One reduce per (task, statistic) over
    the stages' per-topic records: one Spark job."""
    from qarla_spark.stages.hbr import HBR, judgment_records

    n, seed = config.bootstrap, config.seed
    result = StatisticsResult({}, n, seed)
    sources = []
    ctx: Dict[str, Any] = {"seed": seed, "n": n, "judged": judgments is not None}
    spark = None
    sizes: Dict[str, int] = {}
    if qarla is not None and qarla.records is not None:
        catalogue = list(dict.fromkeys(list(qarla.first) + sorted(
            {s for p in qarla.plans.values() for s in p.subsets})))
        gid = {s.label: i for i, s in enumerate(catalogue)}
        sizes = {s.label: s.size for s in catalogue}
        ctx["sizes"] = sizes
        plans = {}
        for task, p in qarla.plans.items():
            plans[task] = {"subsets_labels": [s.label for s in p.subsets],
                           "gids": {"best": gid[p.best.label],
                                    "best_single": gid[p.best_single.label],
                                    "reps": [gid[r.label] for r in p.representatives
                                             if r.label in gid],
                                    "subsets": [gid[s.label] for s in p.subsets
                                                if s.label in gid]}}
        ctx["qarla"] = {"gid": gid, "labels": [s.label for s in catalogue],
                        "first": [s.label for s in qarla.first],
                        "detailed": [s.label for s in qarla.detailed], "plans": plans}
        ctx["wanted"] = sorted({p.best.label for p in qarla.plans.values()}
                               | {p.best_single.label for p in qarla.plans.values()})
        ctx["best"] = {task: p.best.label for task, p in qarla.plans.items()}
        sources.append(rd.of_kinds(qarla.records, ["s_case", "s_jack", "s_corr"]))
        spark = qarla.records.sparkSession
    if hbr is not None and hbr.records is not None and judgments is not None:
        ctx["hbr"] = {"names": list(hbr.measures) + [HBR], "label": hbr.measure_set.label,
                      "plans": {(task, c): {"hbr": HBR, "best": a.best[0],
                                            "median": a.median[0]}
                                for task, cs in hbr.auc.items() for c, a in cs.items()}}
        sources.append(rd.of_kinds(hbr.records, ["s_auc", "s_hx"]))
        sources.append(judgment_records(judgments, "hcorr"))
        spark = hbr.records.sparkSession
    if not sources:
        return result
    # each part's map side only reads cached records and filters them: a
    # few tasks each, not one per partition of every part (176 tasks of
    # 25 ms with the 16-core plan on SummEval). Coalesced under the union
    # (a coalesce right under the reduce's shuffle would be dropped)
    from qarla_spark.spark.partitioning import topic_partitions
    share = max(1, topic_partitions(spark) // len(sources))
    inputs = sources[0].coalesce(share)
    for other in sources[1:]:
        inputs = inputs.unionByName(other.coalesce(share))
    if tasks is not None:
        ctx["criteria"] = {t.task: sorted(t.judgments) for t in tasks}
    elif "hbr" in ctx:
        found: Dict[str, list] = {}
        for r in judgments.select("task", "criterion").distinct().collect():
            found.setdefault(r["task"], []).append(r["criterion"])
        ctx["criteria"] = {t: sorted(c) for t, c in found.items()}
    n_groups = _n_groups(ctx, qarla, tasks)
    n_reduce = max(1, min(n_groups, topic_partitions(spark))) if n_groups \
        else topic_partitions(spark)
    context = rd.broadcast(spark, ctx)
    from qarla_spark.spark import cache
    # kept: the driver's records are collected, then the tables written
    reduced = cache.persist(rd.reduce_by_key(inputs, _statistics_reduce, n_reduce, context))
    names = (["king_ci", "jack_ci"] if "qarla" in ctx else []) + \
        (["auc_ci"] if "hbr" in ctx else []) + ["comparisons"] + \
        (["correlation_ci"] if ctx["judged"] else [])
    result.tables.update(rd.records_tables(reduced, names))
    for _, _, (key, value) in rd.collect(reduced, ["driver"]):
        result.king.update(value.get("king", {}))
        result.jack.update(value.get("jack", {}))
        result.auc.update(value.get("auc", {}))
        result.correlation.update(value.get("correlation", {}))
        for k, comparisons in value.get("comparisons", {}).items():
            result.comparisons.setdefault(k, []).extend(comparisons)
        if "subsets_kept" in value:
            result.subsets_kept[key] = value["subsets_kept"]
    return result
