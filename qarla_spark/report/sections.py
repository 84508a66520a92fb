"""The report's sections: per task, one function per section taking a
:class:`TaskView` and returning HTML. A section whose tables the run did
not write says why in a short note instead.

A task's rows are read as :class:`~qarla_spark.report.data.Columns` (numpy
arrays) and its tables made from Python values column by column
(:func:`~qarla_spark.report.html.table_of`), not from pandas frames: a
pandas operation costs ~0.1-5 ms whatever its size, and a task's section
made ~100 of them (issue 36). The orders are pandas' (``sort_order``), the
figures still take pandas frames (:meth:`Columns.frame`), what several
sections ask is found once per task (:meth:`Run.memo`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from qarla_spark import meta_statistics as ms
from qarla_spark import tables as declared
from qarla_spark.names import (CHANCE, FAMILIES, HBR, HUMAN, QUEEN, RATERS, SKIP_REASONS,
                               queen_of)
from qarla_spark.report import figures as fg
from qarla_spark.report.data import Columns, Run, left_join, sort_order, taken
from qarla_spark.report.html import (NA_TD, Cell, Rendered, esc, figure, fixed, interval, note,
                                     num, section, table, table_of)

#: the ``family`` values of ``comparisons/`` the report tells apart
FAMILY_BEST_SINGLE = FAMILIES["best_single"]
FAMILY_REPRESENTATIVE = FAMILIES["representative"]
FAMILY_SUBSET = FAMILIES["subset"]
FAMILY_HBR_BEST = FAMILIES["hbr_best"]
FAMILY_HBR_MEDIAN = FAMILIES["hbr_median"]

NAN = float("nan")


# ------------------------------------------------------------------ context

@dataclass
class TaskView:
    """One task of a run, with what every section needs to know."""

    run: Run
    task: str
    ident: str                      # the HTML id of its section

    def rows(self, name: str) -> Optional[pd.DataFrame]:
        """The task's rows of table ``name`` as a pandas frame."""
        return self.run.of_task(name, self.task)

    def cols(self, name: str) -> Optional[Columns]:
        """The task's rows of table ``name`` as :class:`Columns`."""
        return self.run.columns(name, self.task)

    def memo(self, key: str, make: Callable):
        return self.run.memo(self.task, key, make)

    @property
    def qarla(self) -> Dict:
        return (self.run.stage("qarla").get("tasks") or {}).get(self.task) or {}

    @property
    def best_set(self) -> Optional[str]:
        if self.qarla.get("best_set"):
            return self.qarla["best_set"]
        return self.memo("best_set", lambda: _best_of(self.cols("king")))

    @property
    def best_single(self) -> Optional[str]:
        if self.qarla.get("best_single"):
            return self.qarla["best_single"]

        def find():
            king = self.cols("king")
            if king is None or not (king["n_metrics"] == 1).any():
                return None
            return _best_of(king.where(king["n_metrics"] == 1))
        return self.memo("best_single", find)

    def sub(self, part: str) -> str:
        return f"{self.ident}-{part}"


def _best_of(king: Optional[Columns]) -> Optional[str]:
    """The set of the highest KING (the first name of the ties)."""
    if king is None:
        return None
    return king.sorted(["king", "metric_set"], [False, True])["metric_set"][0]


def missing(view: TaskView, *names: str) -> Optional[str]:
    """Why the first of ``names`` that has no rows for the task is missing
    (``None`` when all are there)."""
    for name in names:
        if view.cols(name) is not None:
            continue
        stage = declared.table(name).stage
        config = view.run.info.get("config") or {}
        if stage not in (config.get("stages") or [stage]) or \
                (stage not in ("testbed", "similarities") and stage not in view.run.info):
            if stage == "statistics" and config.get("bootstrap") == 0:
                return f"No {name}/ table: the statistics stage was off (--bootstrap 0)."
            return f"No {name}/ table: the {stage} stage did not run."
        if name in JUDGED and not judged_criteria(view):
            return f"No {name}/ table for task {view.task}: it has no human judgments."
        return f"No rows of task {view.task} in {name}/ (the run did not produce them)."
    return None


JUDGED = {"king_pearson", "correlations", "auc", "auc_ci", "robustness", "hetero_curve",
          "hbr_correlations", "correlation_ci", "metric_eval", "king_vs_judges",
          "rater_agreement"}


def judged_criteria(view: TaskView) -> List[str]:
    card = testbed_row(view)
    return sorted((card or {}).get("judgments") or {})


def testbed_row(view: TaskView) -> Optional[Dict]:
    return view.memo("testbed_row", lambda: _testbed_row(view))


def _testbed_row(view: TaskView) -> Optional[Dict]:
    frame = view.cols("testbed")
    if frame is not None:
        # the first row's values as Python's (as pandas' Series.to_dict)
        row = {name: frame[name][:1].tolist()[0] for name in frame.names}
    else:
        row = next((t for t in view.run.info.get("testbed") or []
                    if t.get("task") == view.task), None)
    if row is not None:
        judgments = row.get("judgments")
        if judgments is not None and not isinstance(judgments, dict):
            judgments = dict(list(judgments))
        row["judgments"] = judgments or {}
    return row


def _percentile_intervals(ci: Columns) -> Dict[str, Tuple[float, float]]:
    """Each set's (low, high) of the percentile rows of a ``*_ci`` table."""
    ci = ci.equal("method", "percentile")
    return dict(zip(ci.values("metric_set"), zip(ci.values("ci_low"), ci.values("ci_high"))))


def king_intervals(view: TaskView) -> Tuple[Dict[str, Tuple[float, float]], str]:
    """Each set's 95% KING interval: bootstrap over topics (percentile)
    when the statistics stage ran, else the Wilson interval over cases."""
    return view.memo("king_intervals", lambda: _king_intervals(view))


def _king_intervals(view: TaskView) -> Tuple[Dict[str, Tuple[float, float]], str]:
    ci = view.cols("king_ci")
    if ci is not None:
        return _percentile_intervals(ci), "bootstrap over topics, percentile"
    king = view.cols("king")
    if king is None:
        return {}, ""
    return (dict(zip(king.values("metric_set"), zip(king.values("ci_low"),
                                                    king.values("ci_high")))),
            "Wilson interval over the (topic, held-out reference) cases; no bootstrap in "
            "this run")


def king_of(view: TaskView, name: Optional[str]) -> Optional[float]:
    king = view.cols("king")
    if king is None or name is None:
        return None

    def firsts():       # each set's first KING
        names, values = king.values("metric_set"), king.values("king")
        return dict(zip(names[::-1], values[::-1]))
    found = view.memo("king_of", firsts).get(name)
    return None if found is None else float(found)


def _svg(fig, key: str) -> str:
    return fg.to_svg(fig, key)


# ------------------------------------------------------------------ testbed

def testbed_card(view: TaskView) -> str:
    row = testbed_row(view)
    if row is None:
        return note(f"No description of task {view.task}: the testbed table is missing.")
    items = [("topics", num(row.get("n_topics"))),
             ("references (models) per topic",
              f"{num(row.get('models_min'))} – {num(row.get('models_max'))} "
              f"(median {num(row.get('models_median'), 1)})"),
             ("reference summarizers", num(row.get("n_model_summarizers"))),
             ("systems (peers)", num(row.get("n_peer_systems"))),
             ("summaries", f"{num(row.get('n_summaries'))} ({num(row.get('n_model_summaries'))}"
                           f" by references, {num(row.get('n_peer_summaries'))} by systems)"),
             ("topics with source documents", num(row.get("n_topics_with_sources")))]
    judgments = row["judgments"]
    items.append(("human judgments", "; ".join(
        f"{esc(c)}: {num(int(n))} summaries" for c, n in sorted(judgments.items()))
        or "none (no agreement with humans, no AUC)"))
    sample = (view.run.stage("hbr").get("samples") or {}).get(view.task)
    if sample:
        items.append(("HBR pairs", "all pairs (exact)" if sample.get("exact") else
                      f"{num(sample.get('n_pairs'))} sampled of {num(sample.get('total_pairs'))}"))
    skipped = view.qarla.get("skipped_topics") or {}
    for reason, what in sorted(skipped.items()):
        names = ", ".join(what.get("first") or [])
        more = " …" if what.get("count", 0) > len(what.get("first") or []) else ""
        items.append(("skipped topics", f"{num(what.get('count'))} "
                      f"{esc(SKIP_REASONS.get(reason, reason))}: {esc(names)}{more}"))
    problems = view.run.info.get("problems") or {}
    if problems.get("warnings"):
        items.append(("input warnings", f'<a href="#problems">{num(problems["warnings"])} '
                      "(for the whole run)</a>"))
    body = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in items)
    return f'<dl class="meta">{body}</dl>'


def problems_block(run: Run) -> str:
    counts = run.info.get("problems") or {}
    frame = run.table("problems")
    if frame is None or not len(frame):
        text = "No problems were found in the input." if counts else \
            "No problems/ table in this run."
        return section("problems", "Input problems", f"<p>{esc(text)}</p>", 2)
    shown = frame.head(200)
    body = (f"<p>{num(len(frame))} warning(s) in the input (errors stop a run); the first "
            f"{len(shown)}:</p>" + '<div class="wrap">' + table(
                ["severity", "file", "line", "field", "message"],
                [[r.severity, r.file, None if pd.isna(r.line) else int(r.line), r.field,
                  r.message] for r in shown.itertuples()], table_id="problems-table")
            + "</div>")
    return section("problems", "Input problems", body, 2)


# ------------------------------------------------------------------ QARLA

def king_section(view: TaskView) -> str:
    why = missing(view, "king")
    if why:
        return note(why)
    king = view.cols("king")
    singles = king.where(king["n_metrics"] == 1)
    metrics = singles.values("metric_set")
    clusters = view.cols("clusters")
    if clusters is not None:
        # a left merge on the metric (as pandas: each single's matches, in order)
        lefts, rights = left_join([(m,) for m in metrics],
                                  [(m,) for m in clusters.values("metric")])
        singles = singles.take(lefts)
        metrics = [metrics[i] for i in lefts.tolist()]
        cluster = taken(clusters["cluster"], rights)
        representative = taken(clusters["representative"], rights)
    else:
        cluster = np.full(len(singles), NAN)
        representative = np.zeros(len(singles), dtype=bool)
    intervals, kind = king_intervals(view)
    nothing = (NAN, NAN)
    low = np.array([intervals.get(m, nothing)[0] for m in metrics], dtype=float)
    high = np.array([intervals.get(m, nothing)[1] for m in metrics], dtype=float)
    kings = singles["king"]
    shown = np.array(metrics, dtype=object)
    frame = Columns.of({"metric": shown, "king": kings, "cluster": cluster,
                        "representative": representative, "low": low, "high": high})
    best, best_single = view.best_set, view.best_single
    best_king = king_of(view, best)
    svg = _svg(fg.king_metrics_figure(frame, best, best_king, intervals.get(best),
                                      best_single), f"{view.ident}-king")
    lead = (f"<p class=lead>Best set: <b>{esc(best)}</b>, KING "
            f"{interval(best_king, *intervals.get(best, (None, None)))}; best single metric: "
            f"<b>{esc(best_single)}</b>, KING "
            f"{interval(king_of(view, best_single), *intervals.get(best_single, (None, None)))}"
            f". Intervals: 95%, {esc(kind)}.</p>")
    caption = ("KING of each similarity metric: the share of (topic, held-out reference) cases "
               "in which QUEEN with that metric ranks the held-out human reference above every "
               "system — higher means the metric tells human summaries from system summaries "
               "better; bars are 95% intervals, colours are metric clusters (metrics that "
               "judge alike), filled dots the cluster representatives, ★ the best single "
               "metric and the dashed line the KING of the best set.")
    order = sort_order([kings, shown], [False, True]).tolist()
    metric = [metrics[i] for i in order]
    clusters_shown = [None if c != c or c is None else int(c)
                      for c in cluster[order].tolist()]
    reps = [None if r is None or r != r else bool(r) for r in representative[order].tolist()]
    tab = table_of(["metric", "cluster", "representative", "KING", "95% low", "95% high",
                    "cases"],
                   [metric, clusters_shown, reps, kings[order].tolist(), low[order].tolist(),
                    high[order].tolist(), [int(n) for n in singles["n_cases"][order].tolist()]],
                   ["hl" if m == best_single else "" for m in metric],
                   table_id=view.sub("king-table"))
    return lead + figure(svg, caption, "king_metrics") + \
        f'<details><summary>KING of every metric (table)</summary>{tab}</details>'


def kept_status(view: TaskView, king: Columns) -> List[str]:
    """Per set of ``king``: ``kept`` (not significantly below the best set),
    ``below`` or ``untested``."""
    comp = view.cols("comparisons")
    tested: Dict[str, bool] = {}
    if comp is not None:
        subset = comp.equal("family", FAMILY_SUBSET)
        for b, significant in subset.rows("b", "significant"):
            tested[b] = not bool(significant)
        if tested:
            tested[view.best_set] = True
    return ["untested" if m not in tested else "kept" if tested[m] else "below"
            for m in king.values("metric_set")]


def subsets_section(view: TaskView) -> str:
    why = missing(view, "king")
    if why:
        return note(why)
    king = view.cols("king")
    status = np.array(kept_status(view, king), dtype=object)
    frame = Columns.of({"metric_set": king["metric_set"], "n_metrics": king["n_metrics"],
                        "king": king["king"], "status": status})
    svg = _svg(fg.king_subsets_figure(frame, view.best_set), f"{view.ident}-subsets")
    kept = int((status == "kept").sum())
    tested = int((status != "untested").sum())
    text = (f"<p>{num(kept)} of {num(tested)} subsets of the representatives are not "
            "significantly below the best set (paired sign-flip test over topics, max-T "
            "adjusted, 5%): the data cannot tell them apart from the best.</p>"
            if tested else note(missing(view, "comparisons") or
                                "No test of the subsets in this run."))
    caption = ("KING of every evaluated set of metrics against the number of metrics it "
               "combines (points spread sideways to be seen): a curve rising with size means "
               "combining metrics helps; orange sets cannot be told apart from the best set "
               "(red star), grey ones are significantly worse.")
    return figure(svg, caption, "king_subsets") + text


def ranking_section(view: TaskView) -> str:
    why = missing(view, "systems")
    if why:
        return note(why)
    systems = view.cols("systems")
    best = view.best_set
    rows = systems.equal("metric_set", best)
    if not len(rows):
        return note(f"No system scores under the best set {best} in systems/.")
    svg = _svg(fg.ranking_figure(rows), f"{view.ident}-ranking")
    ordered = rows.sorted(["queen", "summarizer"], [False, True])
    queen, role = rows["queen"], rows["role"]
    peers = queen[(role == "peer") & ~np.isnan(queen)]
    top_peer = peers.max() if len(peers) else NAN
    models = queen[role == "model"]
    above = int((models > top_peer).sum()) if not math.isnan(top_peer) else 0
    caption = ("References (orange, bold names) and systems (blue) ranked together by their "
               "mean QUEEN under the best set: QUEEN is the probability that a summary is as "
               "close to the references as they are to each other, so a good testbed and "
               "metric set put the references on top.")
    text = (f"<p>{above} of {len(models)} references rank above every system under "
            f"<b>{esc(best)}</b>.</p>")
    roles = ordered.values("role")
    tab = table_of(["rank", "summarizer", "role", "QUEEN (jackknifed)", "QUEEN, all references"],
                   [list(range(1, len(ordered) + 1)), ordered.values("summarizer"), roles,
                    ordered.values("queen"), ordered.values("queen_full")],
                   ["ref" if r == "model" else "" for r in roles],
                   table_id=view.sub("ranking-table"))
    return text + figure(svg, caption, "ranking") + tab


def jack_intervals(view: TaskView) -> Dict[str, Tuple[float, float]]:
    """Each set's 95% JACK interval (bootstrap over topics, percentile);
    empty when the statistics stage did not run."""
    def find():
        ci = view.cols("jack_ci")
        return {} if ci is None else _percentile_intervals(ci)
    return view.memo("jack_intervals", find)


def jack_section(view: TaskView) -> str:
    why = missing(view, "jack_curve")
    if why:
        return note(why)
    curve = view.cols("jack_curve")
    svg = _svg(fg.jack_curve_figure(curve, view.best_set), f"{view.ident}-jack")
    caption = ("JACK, the reliability of the testbed, as systems are added (mean over random "
               "orders): the share of (topic, reference) cases for which some pair of systems "
               "brackets the reference; a curve still rising at the right says more systems "
               "would make the testbed more reliable, a flat one that it has enough.")
    out = figure(svg, caption, "jack_curve")
    jack = view.cols("jack")
    if jack is not None:
        intervals = jack_intervals(view)
        ordered = jack.sorted(["jack"], False)
        names = ordered.values("metric_set")
        nothing = (None, None)
        bounds = [intervals.get(m, nothing) for m in names]
        out += table_of(["metric set", "JACK", "95% low", "95% high"],
                        [names, ordered.values("jack"), [b[0] for b in bounds],
                         [b[1] for b in bounds]],
                        ["hl" if m == view.best_set else "" for m in names],
                        table_id=view.sub("jack-table"))
    return out


def correlation_intervals(view: TaskView) -> Dict[Tuple[str, str, str], Tuple[float, float]]:
    """(score, set, criterion) -> the first (low, high) of the system-level
    Pearson's percentile interval resampling systems and topics."""
    def find():
        ci = view.cols("correlation_ci")
        if ci is None:
            return {}
        ci = ci.where((ci["level"] == "system") & (ci["correlation"] == "pearson")
                      & (ci["method"] == "percentile") & (ci["unit"] == "both"))
        keys = list(zip(ci.values("score"), ci.values("metric_set"), ci.values("criterion")))
        bounds = list(zip(ci.values("ci_low"), ci.values("ci_high")))
        return dict(zip(keys[::-1], bounds[::-1]))
    return view.memo("correlation_intervals", find)


def correlation_interval(view: TaskView, score: str, name: str, criterion: str):
    if name is None or criterion is None:
        return None, None
    return correlation_intervals(view).get((score, name, criterion), (None, None))


def best_pearson(view: TaskView) -> Dict[str, Tuple[float, Optional[float], Optional[float]]]:
    """System-level Pearson of the best set per criterion, with its interval."""
    def find():
        corr = view.cols("correlations")
        if corr is None:
            return {}
        hit = corr.where(corr.is_("metric_set", view.best_set) & (corr["level"] == "system"))
        return {c: (p, *correlation_interval(view, QUEEN, view.best_set, c))
                for c, p in hit.rows("criterion", "pearson")}
    return view.memo("best_pearson", find)


def agreement_section(view: TaskView) -> str:
    why = missing(view, "king_pearson")
    if why:
        return note(why)
    kp = view.cols("king_pearson")
    svg = _svg(fg.king_pearson_figure(kp, view.best_set), f"{view.ident}-kingpearson")
    caption = ("Each point is a set of metrics: its KING (how well it recognises human "
               "references) against the system-level Pearson correlation of its QUEEN scores "
               "with the human judgments of each criterion; points rising to the right mean "
               "that sets which know references also agree with the judges.")
    out = figure(svg, caption, "king_pearson")
    corr = view.cols("correlations")
    if corr is not None:
        rows = []
        mine = corr.where(corr.is_("metric_set", view.best_set) & (corr["level"] == "system"))
        for c, pearson, spearman, kendall in mine.sorted(["criterion"]).rows(
                "criterion", "pearson", "spearman", "kendall"):
            low, high = correlation_interval(view, QUEEN, view.best_set, c)
            rows.append([queen_of(view.best_set), c, pearson, low, high, spearman, kendall])
        hbr = view.cols("hbr_correlations")
        if hbr is not None:
            for name, c, pearson, spearman, kendall in hbr.sorted(["criterion"]).rows(
                    "measure_set", "criterion", "pearson", "spearman", "kendall"):
                low, high = correlation_interval(view, HBR, name, c)
                rows.append([HBR, c, pearson, low, high, spearman, kendall])
        out += ("<p>Agreement with the judges at the system level (95% interval resampling "
                "systems and topics, when the statistics stage ran):</p>" + table(
                    ["score", "criterion", "Pearson", "95% low", "95% high", "Spearman",
                     "Kendall"], rows, table_id=view.sub("agreement-table")))
    return out


def _firsts(rows: Columns, index: str, columns: str, value: str) -> Dict[tuple, float]:
    """(index, column) -> the first value that is not NaN, of the rows whose
    keys are not missing (pandas' ``pivot_table(..., aggfunc="first")``)."""
    out: Dict[tuple, float] = {}
    for i, c, v in rows.rows(index, columns, value):
        if v == v and i is not None and c is not None and (i, c) not in out:
            out[(i, c)] = v
    return out


def orange_section(view: TaskView) -> str:
    why = missing(view, "orange")
    if why:
        return note(why)
    orange = view.cols("orange")
    firsts = _firsts(orange.where(orange["n_metrics"] == 1), "metric_set", "score", "orange")
    scores = {s for _, s in firsts}
    if QUEEN not in scores or "plain" not in scores:
        return note("orange/ has no pair of QUEEN and plain scores for single metrics.")
    metrics = sorted(m for m, s in firsts if s == QUEEN and (m, "plain") in firsts)
    queen = np.array([firsts[(m, QUEEN)] for m in metrics], dtype=float)
    plain = np.array([firsts[(m, "plain")] for m in metrics], dtype=float)
    rows = Columns.of({"metric": np.array(metrics, dtype=object), "plain": plain,
                       "queen": queen})
    best = orange.where(orange.is_("metric_set", view.best_set) & (orange["score"] == QUEEN))
    best_value = float(best["orange"][0]) if len(best) else None
    labelled = list(view.qarla.get("representatives") or [])
    svg = _svg(fg.orange_figure(rows, best_value, labelled), f"{view.ident}-orange")
    better = int((queen > plain).sum())
    caption = ("ORANGE is the share of (topic, held-out reference, system) cases where the "
               "reference scores above the system; each point is a metric, its plain mean "
               "similarity to the references (x) against its QUEEN (y): points above the "
               "dotted diagonal gain from QUEEN; representatives are labelled.")
    return (f"<p>QUEEN beats the plain score for {better} of {len(metrics)} metrics; ORANGE of "
            f"the best set: {num(best_value)}.</p>" + figure(svg, caption, "orange"))


_MARKS = {True: '<td data-v="1"><span class="yes">✓</span></td>',
          False: '<td data-v="0"><span class="no">·</span></td>',
          None: '<td data-v="-1"></td>'}


def human_section(view: TaskView) -> str:
    why = missing(view, "human_test")
    if why:
        return note(why)
    ht = view.cols("human_test")
    grid: Dict[Tuple[str, str], Optional[bool]] = {}
    for m, model, v in ht.rows("measure", "held_out_model", "ranked_first"):
        if (m, model) in grid:
            raise ValueError("Index contains duplicate entries, cannot reshape")
        grid[(m, model)] = None if v is None or v != v else bool(v)
    measures = sorted(set(ht.values("measure")))
    models = sorted(set(ht.values("held_out_model")))
    cells = {m: [grid.get((m, model)) for model in models] for m in measures}
    counts = {m: sum(v is True for v in cells[m]) for m in measures}
    order = sorted(measures, key=lambda m: (-counts[m], m))
    columns = [order, [counts[m] for m in order],
               *[Rendered([_MARKS[cells[m][j]] for m in order], False)
                 for j in range(len(models))]]
    best = queen_of(view.best_set)
    tab = table_of(["measure", "ranked first", *models], columns,
                   ["hl" if m == best else "" for m in order], table_id=view.sub("human-table"))
    return ("<p>The human-summariser test: each reference is held out and scored like a "
            "system against the other references; ✓ means the measure ranks it strictly "
            "above every system (a good measure should, as references are written by people). "
            f"Rows: QUEEN of the detailed sets and ROUGE baselines; {len(models)} references."
            "</p>" + tab)


# ------------------------------------------------------------------ HBR

def auc_rows(view: TaskView) -> Optional[Columns]:
    """The AUC over all pairs of each (criterion, measure), with its
    percentile interval (``low``, ``high``; NaN without)."""
    return view.memo("auc_rows", lambda: _auc_rows(view))


def _auc_rows(view: TaskView) -> Optional[Columns]:
    auc = view.cols("auc")
    if auc is None:
        return None
    rows = auc.equal("scope", "all")
    criterion, measure = rows["criterion"], rows["measure"]
    ci = view.cols("auc_ci")
    if ci is not None:
        ci = ci.equal("method", "percentile")
        lefts, rights = left_join(list(zip(criterion.tolist(), measure.tolist())),
                                  list(zip(ci.values("criterion"), ci.values("measure"))))
        return Columns.of({"criterion": criterion[lefts], "measure": measure[lefts],
                           "auc": rows["auc"][lefts], "low": taken(ci["ci_low"], rights),
                           "high": taken(ci["ci_high"], rights)})
    nothing = np.full(len(rows), NAN)
    return Columns.of({"criterion": criterion, "measure": measure, "auc": rows["auc"],
                       "low": nothing, "high": nothing})


def auc_section(view: TaskView) -> str:
    why = missing(view, "auc")
    if why:
        return note(why)
    rows = auc_rows(view)
    svg = _svg(fg.auc_figure(rows), f"{view.ident}-auc")
    caption = ("AUC of every measure (blue, best first) and of HBR (red diamond) per human "
               "criterion: the probability that a measure orders two summaries of a topic "
               "as the judges do (0.5 = chance); whiskers are 95% bootstrap intervals over "
               "topics.")
    firsts = _firsts(rows, "measure", "criterion", "auc")
    criteria = sorted({c for _, c in firsts})
    order = sorted({m for m, _ in firsts}, key=lambda m: (m != HBR, m))
    tab = table_of(["measure", *criteria],
                   [order, *[[firsts.get((m, c), NAN) for m in order] for c in criteria]],
                   ["hl" if m == HBR else "" for m in order], table_id=view.sub("auc-table"))
    return figure(svg, caption, "auc") + \
        f"<details><summary>AUC of every measure (table)</summary>{tab}</details>"


def robustness_section(view: TaskView) -> str:
    why = missing(view, "robustness", "auc")
    if why:
        return note(why)
    rob = view.cols("robustness")
    auc = view.cols("auc").equal("scope", "all")
    lefts, rights = left_join(list(zip(rob.values("criterion"), rob.values("measure"))),
                              list(zip(auc.values("criterion"), auc.values("measure"))))
    rows = Columns.of({"criterion": rob["criterion"][lefts], "measure": rob["measure"][lefts],
                       "worst10_rank": rob["worst10_rank"][lefts],
                       "auc": taken(auc["auc"], rights)})
    svg = _svg(fg.robustness_figure(rows), f"{view.ident}-robustness")
    caption = ("Robustness: each measure's AUC over all topics (x) against its mean scaled AUC "
               "rank among all measures in its own worst 10% of topics (y, 1 = best): points "
               "high up are measures that stay good where they fail most; HBR is the red "
               "diamond.")
    return figure(svg, caption, "robustness")


def hetero_section(view: TaskView) -> str:
    why = missing(view, "hetero_curve")
    if why:
        return note(why)
    svg = _svg(fg.hetero_curve_figure(view.cols("hetero_curve")), f"{view.ident}-hetero")
    caption = ("For pairs of summaries (s, s'), binned by the heterogeneity H of the measures "
               "that say s is at least as good as s': the share of pairs the judges agree "
               "with; a curve rising with H is why HBR trusts many diverse measures more "
               "than many similar ones.")
    return figure(svg, caption, "hetero_curve")


# ------------------------------------------------------------------ statistics

def _label_of(a, b, criterion) -> str:
    where = f" ({criterion})" if isinstance(criterion, str) and criterion not in (
        "", "None") else ""
    return f"{a} − {b}{where}"


def p_cell(p) -> Cell:
    return Cell("&lt; 0.001" if p < 0.001 else f"{p:.3f}", repr(float(p)), "n")


def _p_td(p) -> str:
    if p < 0.001:
        return f'<td class=n data-v="{float(p)!r}">&lt; 0.001</td>'
    return f'<td class=n data-v="{float(p)!r}">{p:.3f}</td>'


def p_column(values: List[float]) -> Rendered:
    """The ``<td>`` of :func:`p_cell` of each p-value (floats: each
    distinct one made once; p-values tie often)."""
    if all(type(p) is float for p in values):
        made = {p: _p_td(p) for p in dict.fromkeys(values)}
        if 0.0 in made:                 # 0.0 and -0.0: one key, two cells
            return Rendered([made[p] if p else _p_td(p) for p in values], True)
        return Rendered([made[p] for p in values], True)
    return Rendered([_p_td(p) for p in values], True)


_COMPARISON_COLUMNS = ["family", "criterion", "a", "b", "value a", "value b", "a − b",
                       "95% low", "95% high", "p", "p adjusted", "significant"]


def _comparisons_table(rows: Columns, table_id: str = "") -> str:
    return table_of(_COMPARISON_COLUMNS, [
        rows.values("family"),
        [c if isinstance(c, str) else "" for c in rows.values("criterion")],
        rows.values("a"), rows.values("b"), rows.values("value_a"), rows.values("value_b"),
        rows.values("difference"), rows.values("ci_low"), rows.values("ci_high"),
        p_column(rows.values("p_value")), p_column(rows.values("p_adjusted")),
        [bool(s) for s in rows.values("significant")]], table_id=table_id)


def significance_section(view: TaskView) -> str:
    why = missing(view, "comparisons")
    if why:
        return note(why)
    comp = view.cols("comparisons")
    family = comp["family"]
    main = comp.where(family != FAMILY_SUBSET)
    order = {f: i for i, f in enumerate((FAMILY_BEST_SINGLE, FAMILY_REPRESENTATIVE,
                                         FAMILY_HBR_BEST, FAMILY_HBR_MEDIAN))}
    rank = np.array([order.get(f, 9) for f in main.values("family")], dtype=np.int64)
    main = main.take(sort_order([rank, main["criterion"], main["b"]], True, "stable"))
    out = []
    subset = comp.where(family == FAMILY_SUBSET)
    if len(subset):
        kept = int((~subset["significant"].astype(bool)).sum()) + 1
        out.append(f"<p class=lead><b>{num(kept)} of {num(len(subset) + 1)}</b> subsets of the "
                   "representatives are not significantly below the best set.</p>")
    if len(main):
        labels = [_label_of(a, b, c) for a, b, c in main.rows("a", "b", "criterion")]
        frame = Columns.of({"label": np.array(labels, dtype=object),
                            "difference": main["difference"], "ci_low": main["ci_low"],
                            "ci_high": main["ci_high"], "significant": main["significant"]})
        svg = _svg(fg.comparisons_figure(frame), f"{view.ident}-comparisons")
        caption = ("Each line is a paired comparison a − b over the same topics (KING for "
                   "metric sets, AUC for HBR): the dot is the difference, the bar its 95% "
                   "bootstrap interval; red ones are significant after adjusting for the other "
                   "comparisons of their family.")
        out.append(figure(svg, caption, "comparisons"))
    out.append(_comparisons_table(main, view.sub("comparisons-table")))
    if len(subset):
        out.append("<details><summary>best set vs every other subset of the representatives "
                   f"({num(len(subset))} comparisons)</summary><div class=wrap>"
                   + _comparisons_table(subset.sorted(["p_adjusted"], False))
                   + "</div></details>")
    return "".join(out)


def _ci_cell(value, low, high, digits: int = 3) -> Cell:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Cell("n/a", "", "n")
    return Cell(esc(interval(float(value), low, high, digits)), repr(float(value)), "n")


def ci_td(value, low, high, digits: int = 3) -> str:
    """The ``<td>`` of :func:`_ci_cell` (floats made here)."""
    if value is None:
        return NA_TD
    if type(value) is float and type(low) is float and type(high) is float:
        if value != value:
            return NA_TD
        if low == low and high == high:
            return (f'<td class=n data-v="{value!r}">{value:.{digits}f} '
                    f'[{low:.{digits}f}, {high:.{digits}f}]</td>')
        return f'<td class=n data-v="{value!r}">{value:.{digits}f}</td>'
    c = _ci_cell(value, low, high, digits)
    return f'<td class=n data-v="{esc(c.sort)}">{c.shown}</td>'


def ci_tds(values: np.ndarray, lows: np.ndarray, highs: np.ndarray, digits: int = 3
           ) -> List[str]:
    """:func:`ci_td` of each (value, low, high) of three arrays (floats: the
    numbers written by :func:`~qarla_spark.report.html.fixed`, all at once)."""
    if not all(np.asarray(a).dtype == np.float64 for a in (values, lows, highs)):
        return [ci_td(v, lo, hi, digits) for v, lo, hi in
                zip(np.asarray(values).tolist(), np.asarray(lows).tolist(),
                    np.asarray(highs).tolist())]
    shown, low_shown, high_shown = (fixed(a, digits) for a in (values, lows, highs))
    out = []
    add = out.append
    for v, lo, hi, t, lt, ht in zip(values.tolist(), lows.tolist(), highs.tolist(), shown,
                                    low_shown, high_shown):
        if v != v:
            add(NA_TD)
        elif lo == lo and hi == hi:
            add(f'<td class=n data-v="{v!r}">{t} [{lt}, {ht}]</td>')
        else:
            add(f'<td class=n data-v="{v!r}">{t}</td>')
    return out


def _configuration(run: Run) -> str:
    """How the judge-based statistics were made (run.json)."""
    found = (run.stage("statistics") or {}).get("meta_evaluation") or {}
    if not found:
        return ""
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in found.items())
    return f'<details><summary>how these were computed</summary><dl class="meta">{items}</dl>' \
        "</details>"


def _judges_columns() -> Tuple[List[ms.Statistic], List[ms.Statistic]]:
    """The statistics of the report's table of the judges, in order
    (:data:`qarla_spark.meta_statistics.REPORTED`), and those of them whose
    tie threshold follows them (the calibrated ones)."""
    shown = [ms.statistic(name) for name in ms.REPORTED]
    return shown, [st for st in shown if st.calibrated]


def judges_section(view: TaskView) -> str:
    """Every measure against each criterion (metric_eval/), the chance band,
    the clusters of pairwise accuracy (metric_ranks/) and KING against the
    judges (king_vs_judges/)."""
    why = missing(view, "metric_eval")
    if why:
        return note(why)
    ev = view.cols("metric_eval")
    # the intervals over topics (those that draw the raters too, unit
    # ``raters``, are in the table: issue 39, part 3)
    ev = ev.where(~ev.is_("unit", RATERS))
    ranks = view.cols("metric_ranks")
    kvj = view.cols("king_vs_judges")
    out = ["<p>Each measure's agreement with the judges: system-level pairwise accuracy "
           "(Kocmi et al. 2021; the share of system pairs ordered as the judges order them), "
           "soft pairwise accuracy (Thompson et al. 2024), Kendall's τ, and summary-level "
           "acc_eq with its calibrated tie threshold ε (Deutsch et al. 2023); 95% intervals "
           "over topics; <b>chance</b>: random scores (mean and 95% band); rank: significance "
           "cluster of pairwise accuracy (1 = no measure significantly better).</p>"]
    if kvj is not None:
        rows = [[c, s, n, _ci_cell(k, low, high, 2)] for c, s, n, k, low, high in
                kvj.sorted(["criterion", "statistic"]).rows(
                    "criterion", "statistic", "n_measures", "kendall", "ci_low", "ci_high")]
        out.append("<p>KING against the judges: Kendall's τ between the sets' KING and each "
                   "statistic of their QUEEN (does judge-free KING pick the metrics the "
                   "judges would?).</p>")
        out.append(table(["criterion", "statistic", "measures", "Kendall τ [95%]"], rows,
                         table_id=view.sub("kvj-table")))
    alpha = view.cols("rater_agreement")
    if alpha is not None:
        rows = [[c, _ci_cell(a, low, high), u, r, k] for c, a, low, high, u, r, k in
                alpha.sorted(["criterion"]).rows("criterion", "alpha", "ci_low", "ci_high",
                                                 "n_units", "n_ratings", "n_raters")]
        out.append("<p>Agreement among the raters: Krippendorff's α (interval metric) over "
                   "the summaries rated twice or more, 95% bootstrap percentile interval over "
                   "topics (1: full agreement, 0: as by chance).</p>")
        out.append(table(["criterion", "α [95%]", "summaries", "ratings", "raters"], rows,
                         table_id=view.sub("alpha-table")))
    best = {view.best_set and queen_of(view.best_set), view.best_single, HBR, CHANCE, HUMAN}
    criteria = ev["criterion"]
    shown, calibrated = _judges_columns()
    primary = ms.statistic(ms.PRIMARY).key
    head = ["measure", "rank", *(st.short for st in shown), *("ε" for _ in calibrated)]
    if ranks is not None:
        ranks = ranks.where(ranks["basis"] == ms.PRIMARY)
    measure_all, level_all, statistic_all = ev["measure"], ev["level"], ev["statistic"]
    value_all, low_all, high_all = ev["value"], ev["ci_low"], ev["ci_high"]
    values, lows, highs = value_all.tolist(), low_all.tolist(), high_all.tolist()
    epsilons = ev["epsilon"].tolist()
    row_keys = list(zip(level_all.tolist(), statistic_all.tolist()))
    keys, calibrated_keys = [st.key for st in shown], [st.key for st in calibrated]
    # each shown statistic's interval cells, every criterion's at once: row -> <td>
    cells: List[Dict[int, str]] = []
    for st in shown:
        level, statistic = st.key
        mine = np.flatnonzero((level_all == level) & (statistic_all == statistic))
        cells.append(dict(zip(mine.tolist(), ci_tds(value_all[mine], low_all[mine],
                                                    high_all[mine], st.digits))))
    for criterion in sorted(set(criteria)):
        rows = np.flatnonzero(criteria == criterion).tolist()
        measures = measure_all[rows].tolist()
        # each (measure, (level, statistic)): its last row (a name may be at both levels)
        last = dict(zip(zip(measures, [row_keys[i] for i in rows]), rows))
        rank = {} if ranks is None else dict(ranks.where(ranks["criterion"] == criterion).rows(
            "measure", "rank"))

        def key(m):
            r = last.get((m, primary))
            v = values[r] if r is not None else -1
            return (-(v if not math.isnan(v) else -1), m)
        order = sorted(dict.fromkeys(measures), key=key)

        def stat(j):
            k = keys[j]
            found = [last.get((m, k)) for m in order]
            made = cells[j]
            return Rendered([made[r] if r is not None else "<td></td>" for r in found],
                            all(r is not None for r in found))

        def eps(k):
            return [None if r is None else epsilons[r] for r in (last.get((m, k)) for m in order)]
        columns = [order, [rank.get(m) for m in order],
                   *(stat(j) for j in range(len(shown))),
                   *(eps(k) for k in calibrated_keys)]
        classes = ["hl" if m in best else "" for m in order]
        top = [m for m in order if rank.get(m) == 1]
        found = last.get((CHANCE, primary))
        chance = None if found is None else (values[found], lows[found], highs[found])
        lead = (f"<p class=lead><b>{esc(criterion)}</b>: {len(top)} measure(s) in the top "
                f"cluster of pairwise accuracy, led by <b>{esc(order[0])}</b>"
                + (f"; chance {esc(interval(*chance[:3]))}" if chance else "") + ".</p>")
        out.append(lead + f"<details><summary>every measure for {esc(criterion)} "
                   f"({len(order)})</summary>"
                   + table_of(head, columns, classes,
                              table_id=view.sub(f"judges-{criterion}"))
                   + "</details>")
    out.append(_configuration(view.run))
    return "".join(out)


def across_section(run: Run) -> str:
    """Across tasks (runs of two or more tasks): per basis, each measure's
    pooled value, its cluster, the tasks it is best or tied in, and its
    value per task (when there are at most 12 tasks). Empty when the run
    has no across/ table."""
    found = run.table("across")
    if found is None or not len(found):
        return ""
    out = ["<p>Which measure to trust over all tasks: each measure's value pooled over all "
           "topics of all tasks (KING: the mean over topics; pairwise accuracy: the system "
           "pairs of every task together) with its 95% interval (bootstrap stratified by "
           "task), its significance cluster (1 = none significantly better), and in how many "
           "tasks it is in the top cluster (best or tied).</p>"]
    pooled = found[found["scope"] == "pooled"]
    tasks = sorted(set(found["scope"]) - {"pooled"})
    show_tasks = len(tasks) <= 12
    for (basis, criterion), part in pooled.groupby(
            [pooled["basis"], pooled["criterion"].fillna("")], sort=True):
        what = "KING" if basis == "king" else f"pairwise accuracy, {criterion}"
        part = part.sort_values(["value", "measure"], ascending=[False, True])
        lead = part.iloc[0]
        top = part[part["rank"] == 1]["measure"].tolist()
        out.append(f"<p class=lead><b>{esc(what)}</b>: best <b>{esc(lead.measure)}</b> "
                   f"{esc(interval(lead.value, lead.ci_low, lead.ci_high))}, best or tied in "
                   f"{int(lead.best_or_tied)} of {int(lead.n_tasks)} tasks; top cluster: "
                   f"{len(top)} measure(s).</p>")
        per_task = {}
        if show_tasks:
            mine = found[(found["basis"] == basis) & (found["criterion"].fillna("") == criterion)
                         & (found["scope"] != "pooled")]
            per_task = {(r.measure, r.scope): r.value for r in mine.itertuples()}
        rows = [[r.measure, r.rank, _ci_cell(r.value, r.ci_low, r.ci_high),
                 Cell(esc(f"{int(r.best_or_tied)} of {int(r.n_tasks)}"), int(r.best_or_tied),
                      "n"), *[per_task.get((r.measure, t)) for t in tasks if show_tasks]]
                for r in part.itertuples()]
        head = ["measure", "rank", "pooled [95%]", "best or tied",
                *[f"{t}" for t in tasks if show_tasks]]
        out.append(f"<details{' open' if len(part) <= 20 else ''}><summary>every measure "
                   f"({len(part)})</summary>"
                   + table(head, rows, table_id=f"across-{basis}-{criterion}".rstrip("-"))
                   + "</details>")
    out.append(_configuration(run))
    return section("across", "Across tasks: which metric to trust", "".join(out), 2)


def plan_section(view: TaskView) -> str:
    """The plan of the next task (``power/``, ``ppi/``; SPEC §12)."""
    why = missing(view, "power")
    if why:
        return note(why + " Run 'qarla plan RUN_DIR' (or 'qarla run --plan') to plan the "
                          "next shared task.")
    power = view.cols("power")
    topics = power["testbed_topics"]
    testbed = int(topics[0]) if len(topics) else None
    svg = _svg(fg.power_figure(power, testbed), f"{view.ident}-plan")
    trials = int(power["trials"][0]) if len(power) else 0
    caption = (f"How many topics the comparisons need, over {trials:,} seeded draws of n "
               "topics per size (beyond the testbed's topics, shaded: drawn with "
               "replacement). Grey: the power of a paired t-test at 5% for each pair of "
               "systems adjacent in the testbed's ranking; red: the probability that two "
               "disjoint halves order every pair alike (the ranking's stability). KING: how "
               "often the best set stays the best (among itself and the representatives) and "
               "the power of its lead over the best single metric. The last panel: the width "
               "of the 95% interval of the best set's KING and of its QUEEN's pairwise "
               "accuracy against each criterion on a testbed of n topics. A curve above the dashed "
               "80% line at n says n topics suffice for that question. Up to the testbed's "
               "topics a draw is a subset of this testbed, so at its size every draw is the "
               "testbed itself: power is then 0 or 1 (the testbed's own test), not that of a "
               "new testbed of as many topics.")
    out = figure(svg, caption, "power")
    ppi_rows = view.cols("ppi")
    if ppi_rows is None or not len(ppi_rows):
        return out + note("No ppi/ rows for this task: it has no human judgments.")
    plus = ppi_rows.where(ppi_rows["method"] == "ppi++")
    groups: Dict[Tuple[str, int], List[int]] = {}
    for i, key in enumerate(plus.rows("criterion", "k")):
        groups.setdefault(key, []).append(i)
    keys = sorted(groups)

    def mean(column, idx):
        values = [v for v in plus[column][idx].tolist() if v is not None and v == v]
        return sum(values) / len(values) if values else NAN

    columns = [[k[0] for k in keys], [k[1] for k in keys]]
    for column in ("n_cells", "coverage", "width", "classical_width", "k_equivalent",
                   "judgments_saved"):
        columns.append([mean(column, groups[k]) for k in keys])
    measure = plus["measure"][0] if len(plus) else ""
    out += table_of(["criterion", "k judged", "judged summaries", "coverage", "width",
                     "classical width", "k equivalent", "judgments saved"], columns,
                    table_id=view.sub("ppi-table"))
    out += note(f"PPI++ with {measure} as the automatic measure: the mean over systems of "
                "the coverage of each system's mean human score, the interval widths, the "
                "classical judgments giving the same width (k equivalent) and 1 − k / k "
                "equivalent (judgments saved). Below ~90% coverage the CLT interval is not "
                "to be trusted (few judgments, skewed scores).")
    return out


# ------------------------------------------------------------------ a task

#: (id suffix, link text, title, function) of every section of a task
SECTIONS: Sequence[Tuple[str, str, str, Callable[[TaskView], str]]] = (
    ("testbed", "testbed", "Testbed", testbed_card),
    ("king", "KING", "KING of every metric", king_section),
    ("subsets", "sets", "KING of every set of metrics", subsets_section),
    ("ranking", "ranking", "QUEEN ranking of references and systems (best set)",
     ranking_section),
    ("jack", "JACK", "JACK: is the testbed reliable?", jack_section),
    ("agreement", "KING vs Pearson", "KING vs agreement with the judges", agreement_section),
    ("orange", "ORANGE", "ORANGE: QUEEN vs the plain score", orange_section),
    ("human", "human test", "Human-summariser test", human_section),
    ("auc", "HBR AUC", "HBR: AUC of HBR and of every measure", auc_section),
    ("robustness", "robustness", "HBR: robustness in the worst topics", robustness_section),
    ("hetero", "heterogeneity", "HBR: the heterogeneity curve", hetero_section),
    ("significance", "significance", "Is the difference real? Significance tests",
     significance_section),
    ("judges", "judges", "Which metrics agree with the judges", judges_section),
    ("plan", "plan", "Planning the next task: topics and judgments", plan_section),
)


def guarded(func: Callable[[TaskView], str], view: TaskView) -> str:
    """A section, or a note saying it could not be drawn (one broken section
    never costs the whole report)."""
    try:
        return func(view)
    except Exception as exc:  # noqa: BLE001 (shown in the report, not hidden)
        return note(f"This section could not be drawn: {type(exc).__name__}: {exc}")


def task_head(view: TaskView) -> str:
    """A task's section up to its parts: its title and their links."""
    nav = " ".join(f'<a href="#{view.sub(key)}">{esc(link)}</a>'
                   for key, link, _, _ in SECTIONS)
    return (f'<section id="{esc(view.ident)}" class="task"><h2>Task {esc(view.task)}</h2>'
            f'<nav class="toc">{nav}</nav>')


def task_part(view: TaskView, k: int) -> str:
    """Part ``k`` of :data:`SECTIONS` of a task's section (drawn alone: the
    parts of a run's tasks may be drawn in parallel)."""
    key, _, title, func = SECTIONS[k]
    return section(view.sub(key), title, guarded(func, view))


#: the end of a task's section
TASK_TAIL = "</section>"


def task_section(view: TaskView) -> str:
    return (task_head(view) + "".join(task_part(view, k) for k in range(len(SECTIONS)))
            + TASK_TAIL)
