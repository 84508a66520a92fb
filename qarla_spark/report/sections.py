"""The report's sections: per task, one function per section taking a
:class:`TaskView` and returning HTML. A section whose tables the run did
not write says why in a short note instead."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from qarla_spark import tables as declared
from qarla_spark.names import FAMILIES, SKIP_REASONS
from qarla_spark.report import figures as fg
from qarla_spark.report.data import Run
from qarla_spark.report.html import Cell, esc, figure, interval, note, num, section, table

#: the ``family`` values of ``comparisons/`` the report tells apart
FAMILY_BEST_SINGLE = FAMILIES["best_single"]
FAMILY_REPRESENTATIVE = FAMILIES["representative"]
FAMILY_SUBSET = FAMILIES["subset"]
FAMILY_HBR_BEST = FAMILIES["hbr_best"]
FAMILY_HBR_MEDIAN = FAMILIES["hbr_median"]


# ------------------------------------------------------------------ context

@dataclass
class TaskView:
    """One task of a run, with what every section needs to know."""

    run: Run
    task: str
    ident: str                      # the HTML id of its section

    def rows(self, name: str) -> Optional[pd.DataFrame]:
        return self.run.of_task(name, self.task)

    @property
    def qarla(self) -> Dict:
        return (self.run.stage("qarla").get("tasks") or {}).get(self.task) or {}

    @property
    def best_set(self) -> Optional[str]:
        if self.qarla.get("best_set"):
            return self.qarla["best_set"]
        king = self.rows("king")
        if king is None:
            return None
        return king.sort_values(["king", "metric_set"], ascending=[False, True]).iloc[0][
            "metric_set"]

    @property
    def best_single(self) -> Optional[str]:
        if self.qarla.get("best_single"):
            return self.qarla["best_single"]
        king = self.rows("king")
        if king is None or not (king["n_metrics"] == 1).any():
            return None
        singles = king[king["n_metrics"] == 1]
        return singles.sort_values(["king", "metric_set"], ascending=[False, True]).iloc[0][
            "metric_set"]

    def sub(self, part: str) -> str:
        return f"{self.ident}-{part}"


def missing(view: TaskView, *names: str) -> Optional[str]:
    """Why the first of ``names`` that has no rows for the task is missing
    (``None`` when all are there)."""
    for name in names:
        if view.rows(name) is not None:
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
          "hbr_correlations", "correlation_ci", "metric_eval", "king_vs_judges"}


def judged_criteria(view: TaskView) -> List[str]:
    card = testbed_row(view)
    return sorted((card or {}).get("judgments") or {})


def testbed_row(view: TaskView) -> Optional[Dict]:
    frame = view.rows("testbed")
    if frame is not None:
        row = frame.iloc[0].to_dict()
    else:
        row = next((t for t in view.run.info.get("testbed") or []
                    if t.get("task") == view.task), None)
    if row is not None:
        judgments = row.get("judgments")
        if judgments is not None and not isinstance(judgments, dict):
            judgments = dict(list(judgments))
        row["judgments"] = judgments or {}
    return row


def king_intervals(view: TaskView) -> Tuple[Dict[str, Tuple[float, float]], str]:
    """Each set's 95% KING interval: bootstrap over topics (percentile)
    when the statistics stage ran, else the Wilson interval over cases."""
    ci = view.rows("king_ci")
    if ci is not None:
        ci = ci[ci["method"] == "percentile"]
        return ({r.metric_set: (r.ci_low, r.ci_high) for r in ci.itertuples()},
                "bootstrap over topics, percentile")
    king = view.rows("king")
    if king is None:
        return {}, ""
    return ({r.metric_set: (r.ci_low, r.ci_high) for r in king.itertuples()},
            "Wilson interval over the (topic, held-out reference) cases; no bootstrap in "
            "this run")


def king_of(view: TaskView, name: Optional[str]) -> Optional[float]:
    king = view.rows("king")
    if king is None or name is None:
        return None
    rows = king[king["metric_set"] == name]
    return float(rows["king"].iloc[0]) if len(rows) else None


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
    king = view.rows("king")
    singles = king[king["n_metrics"] == 1][["metric_set", "king", "n_cases"]].rename(
        columns={"metric_set": "metric"})
    clusters = view.rows("clusters")
    if clusters is not None:
        singles = singles.merge(clusters[["metric", "cluster", "representative"]], on="metric",
                                how="left")
    else:
        singles = singles.assign(cluster=float("nan"), representative=False)
    intervals, kind = king_intervals(view)
    singles["low"] = [intervals.get(m, (math.nan, math.nan))[0] for m in singles["metric"]]
    singles["high"] = [intervals.get(m, (math.nan, math.nan))[1] for m in singles["metric"]]
    best, best_single = view.best_set, view.best_single
    best_king = king_of(view, best)
    svg = _svg(fg.king_metrics_figure(singles, best, best_king, intervals.get(best),
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
    ordered = singles.sort_values(["king", "metric"], ascending=[False, True])
    rows = [[r.metric, None if pd.isna(r.cluster) else int(r.cluster),
             bool(r.representative) if not pd.isna(r.representative) else None, r.king,
             r.low, r.high, int(r.n_cases)] for r in ordered.itertuples()]
    classes = ["hl" if r[0] == best_single else "" for r in rows]
    tab = table(["metric", "cluster", "representative", "KING", "95% low", "95% high",
                 "cases"], rows, classes, table_id=view.sub("king-table"))
    return lead + figure(svg, caption, "king_metrics") + \
        f'<details><summary>KING of every metric (table)</summary>{tab}</details>'


def kept_status(view: TaskView, king: pd.DataFrame) -> List[str]:
    """Per set of ``king``: ``kept`` (not significantly below the best set),
    ``below`` or ``untested``."""
    comp = view.rows("comparisons")
    tested: Dict[str, bool] = {}
    if comp is not None:
        for r in comp[comp["family"] == FAMILY_SUBSET].itertuples():
            tested[r.b] = not bool(r.significant)
        if tested:
            tested[view.best_set] = True
    return ["untested" if m not in tested else "kept" if tested[m] else "below"
            for m in king["metric_set"]]


def subsets_section(view: TaskView) -> str:
    why = missing(view, "king")
    if why:
        return note(why)
    king = view.rows("king").copy()
    king["status"] = kept_status(view, king)
    svg = _svg(fg.king_subsets_figure(king, view.best_set), f"{view.ident}-subsets")
    kept = (king["status"] == "kept").sum()
    tested = (king["status"] != "untested").sum()
    text = (f"<p>{num(int(kept))} of {num(int(tested))} subsets of the representatives are not "
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
    systems = view.rows("systems")
    best = view.best_set
    rows = systems[systems["metric_set"] == best]
    if not len(rows):
        return note(f"No system scores under the best set {best} in systems/.")
    svg = _svg(fg.ranking_figure(rows), f"{view.ident}-ranking")
    ordered = rows.sort_values(["queen", "summarizer"], ascending=[False, True])
    top_peer = rows.loc[rows["role"] == "peer", "queen"].max()
    models = rows[rows["role"] == "model"]
    above = int((models["queen"] > top_peer).sum()) if not pd.isna(top_peer) else 0
    caption = ("References (orange, bold names) and systems (blue) ranked together by their "
               "mean QUEEN under the best set: QUEEN is the probability that a summary is as "
               "close to the references as they are to each other, so a good testbed and "
               "metric set put the references on top.")
    text = (f"<p>{above} of {len(models)} references rank above every system under "
            f"<b>{esc(best)}</b>.</p>")
    tab = table(["rank", "summarizer", "role", "QUEEN (jackknifed)", "QUEEN, all references"],
                [[i + 1, r.summarizer, r.role, r.queen, r.queen_full]
                 for i, r in enumerate(ordered.itertuples())],
                ["ref" if r == "model" else "" for r in ordered["role"]],
                table_id=view.sub("ranking-table"))
    return text + figure(svg, caption, "ranking") + tab


def jack_intervals(view: TaskView) -> Dict[str, Tuple[float, float]]:
    """Each set's 95% JACK interval (bootstrap over topics, percentile);
    empty when the statistics stage did not run."""
    ci = view.rows("jack_ci")
    if ci is None:
        return {}
    return {r.metric_set: (r.ci_low, r.ci_high)
            for r in ci[ci["method"] == "percentile"].itertuples()}


def jack_section(view: TaskView) -> str:
    why = missing(view, "jack_curve")
    if why:
        return note(why)
    curve = view.rows("jack_curve")
    svg = _svg(fg.jack_curve_figure(curve, view.best_set), f"{view.ident}-jack")
    caption = ("JACK, the reliability of the testbed, as systems are added (mean over random "
               "orders): the share of (topic, reference) cases for which some pair of systems "
               "brackets the reference; a curve still rising at the right says more systems "
               "would make the testbed more reliable, a flat one that it has enough.")
    out = figure(svg, caption, "jack_curve")
    jack = view.rows("jack")
    if jack is not None:
        intervals = jack_intervals(view)
        ordered = jack.sort_values("jack", ascending=False)
        out += table(["metric set", "JACK", "95% low", "95% high"],
                     [[r.metric_set, r.jack, *intervals.get(r.metric_set, (None, None))]
                      for r in ordered.itertuples()],
                     ["hl" if m == view.best_set else "" for m in ordered["metric_set"]],
                     table_id=view.sub("jack-table"))
    return out


def correlation_interval(view: TaskView, score: str, name: str, criterion: str):
    ci = view.rows("correlation_ci")
    if ci is None:
        return None, None
    hit = ci[(ci["score"] == score) & (ci["metric_set"] == name) & (ci["criterion"] == criterion)
             & (ci["level"] == "system") & (ci["correlation"] == "pearson")
             & (ci["method"] == "percentile") & (ci["unit"] == "both")]
    return (hit["ci_low"].iloc[0], hit["ci_high"].iloc[0]) if len(hit) else (None, None)


def best_pearson(view: TaskView) -> Dict[str, Tuple[float, Optional[float], Optional[float]]]:
    """System-level Pearson of the best set per criterion, with its interval."""
    corr = view.rows("correlations")
    if corr is None:
        return {}
    hit = corr[(corr["metric_set"] == view.best_set) & (corr["level"] == "system")]
    return {r.criterion: (r.pearson, *correlation_interval(view, "QUEEN", view.best_set,
                                                           r.criterion))
            for r in hit.itertuples()}


def agreement_section(view: TaskView) -> str:
    why = missing(view, "king_pearson")
    if why:
        return note(why)
    kp = view.rows("king_pearson")
    svg = _svg(fg.king_pearson_figure(kp, view.best_set), f"{view.ident}-kingpearson")
    caption = ("Each point is a set of metrics: its KING (how well it recognises human "
               "references) against the system-level Pearson correlation of its QUEEN scores "
               "with the human judgments of each criterion; points rising to the right mean "
               "that sets which know references also agree with the judges.")
    out = figure(svg, caption, "king_pearson")
    corr = view.rows("correlations")
    if corr is not None:
        rows = []
        for r in corr[(corr["metric_set"] == view.best_set)
                      & (corr["level"] == "system")].sort_values("criterion").itertuples():
            low, high = correlation_interval(view, "QUEEN", view.best_set, r.criterion)
            rows.append([f"QUEEN({view.best_set})", r.criterion, r.pearson, low, high,
                         r.spearman, r.kendall])
        hbr = view.rows("hbr_correlations")
        if hbr is not None:
            for r in hbr.sort_values("criterion").itertuples():
                low, high = correlation_interval(view, "HBR", r.measure_set, r.criterion)
                rows.append(["HBR", r.criterion, r.pearson, low, high, r.spearman, r.kendall])
        out += ("<p>Agreement with the judges at the system level (95% interval resampling "
                "systems and topics, when the statistics stage ran):</p>" + table(
                    ["score", "criterion", "Pearson", "95% low", "95% high", "Spearman",
                     "Kendall"], rows, table_id=view.sub("agreement-table")))
    return out


def orange_section(view: TaskView) -> str:
    why = missing(view, "orange")
    if why:
        return note(why)
    orange = view.rows("orange")
    singles = orange[orange["n_metrics"] == 1].pivot_table(
        index="metric_set", columns="score", values="orange", aggfunc="first")
    if "QUEEN" not in singles or "plain" not in singles:
        return note("orange/ has no pair of QUEEN and plain scores for single metrics.")
    rows = singles.reset_index().rename(columns={"metric_set": "metric", "QUEEN": "queen"})
    rows = rows.dropna(subset=["queen", "plain"])
    best = orange[(orange["metric_set"] == view.best_set) & (orange["score"] == "QUEEN")]
    best_value = float(best["orange"].iloc[0]) if len(best) else None
    labelled = list(view.qarla.get("representatives") or [])
    svg = _svg(fg.orange_figure(rows, best_value, labelled), f"{view.ident}-orange")
    better = int((rows["queen"] > rows["plain"]).sum())
    caption = ("ORANGE is the share of (topic, held-out reference, system) cases where the "
               "reference scores above the system; each point is a metric, its plain mean "
               "similarity to the references (x) against its QUEEN (y): points above the "
               "dotted diagonal gain from QUEEN; representatives are labelled.")
    return (f"<p>QUEEN beats the plain score for {better} of {len(rows)} metrics; ORANGE of "
            f"the best set: {num(best_value)}.</p>" + figure(svg, caption, "orange"))


def human_section(view: TaskView) -> str:
    why = missing(view, "human_test")
    if why:
        return note(why)
    ht = view.rows("human_test")
    grid = ht.pivot(index="measure", columns="held_out_model", values="ranked_first")
    models = sorted(grid.columns)

    def first(value) -> Optional[bool]:
        return None if value is None or pd.isna(value) else bool(value)
    # the grid's cells as Python values, by measure (no pandas lookup per cell)
    cells = dict(zip(grid.index, grid[models].to_numpy(dtype=object).tolist()))
    counts = {m: sum(first(v) is True for v in cells[m]) for m in grid.index}
    order = sorted(grid.index, key=lambda m: (-counts[m], m))
    marks = {True: Cell('<span class="yes">✓</span>', 1),
             False: Cell('<span class="no">·</span>', 0),
             None: Cell("", -1)}
    rows = [[m, counts[m], *[marks[first(v)] for v in cells[m]]] for m in order]
    best = f"QUEEN({view.best_set})"
    tab = table(["measure", "ranked first", *models], rows,
                ["hl" if m == best else "" for m in order], table_id=view.sub("human-table"))
    return ("<p>The human-summariser test: each reference is held out and scored like a "
            "system against the other references; ✓ means the measure ranks it strictly "
            "above every system (a good measure should, as references are written by people). "
            f"Rows: QUEEN of the detailed sets and ROUGE baselines; {len(models)} references."
            "</p>" + tab)


# ------------------------------------------------------------------ HBR

def auc_rows(view: TaskView) -> Optional[pd.DataFrame]:
    auc = view.rows("auc")
    if auc is None:
        return None
    rows = auc[auc["scope"] == "all"][["criterion", "measure", "auc"]].copy()
    ci = view.rows("auc_ci")
    if ci is not None:
        ci = ci[ci["method"] == "percentile"][["criterion", "measure", "ci_low", "ci_high"]]
        rows = rows.merge(ci, on=["criterion", "measure"], how="left")
    else:
        rows = rows.assign(ci_low=math.nan, ci_high=math.nan)
    return rows.rename(columns={"ci_low": "low", "ci_high": "high"})


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
    wide = rows.pivot_table(index="measure", columns="criterion", values="auc", aggfunc="first")
    criteria = sorted(wide.columns)
    order = sorted(wide.index, key=lambda m: (m != "HBR", m))
    tab = table(["measure", *criteria], [[m, *[wide.loc[m, c] for c in criteria]] for m in order],
                ["hl" if m == "HBR" else "" for m in order], table_id=view.sub("auc-table"))
    return figure(svg, caption, "auc") + \
        f"<details><summary>AUC of every measure (table)</summary>{tab}</details>"


def robustness_section(view: TaskView) -> str:
    why = missing(view, "robustness", "auc")
    if why:
        return note(why)
    rob = view.rows("robustness")
    auc = view.rows("auc")
    rows = rob.merge(auc[auc["scope"] == "all"][["criterion", "measure", "auc"]],
                     on=["criterion", "measure"], how="left")
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
    svg = _svg(fg.hetero_curve_figure(view.rows("hetero_curve")), f"{view.ident}-hetero")
    caption = ("For pairs of summaries (s, s'), binned by the heterogeneity H of the measures "
               "that say s is at least as good as s': the share of pairs the judges agree "
               "with; a curve rising with H is why HBR trusts many diverse measures more "
               "than many similar ones.")
    return figure(svg, caption, "hetero_curve")


# ------------------------------------------------------------------ statistics

def _label(r) -> str:
    where = f" ({r.criterion})" if isinstance(r.criterion, str) and r.criterion not in (
        "", "None") else ""
    return f"{r.a} − {r.b}{where}"


def p_cell(p) -> Cell:
    return Cell("&lt; 0.001" if p < 0.001 else f"{p:.3f}", repr(float(p)), "n")


def significance_section(view: TaskView) -> str:
    why = missing(view, "comparisons")
    if why:
        return note(why)
    comp = view.rows("comparisons")
    main = comp[comp["family"] != FAMILY_SUBSET].copy()
    order = {f: i for i, f in enumerate((FAMILY_BEST_SINGLE, FAMILY_REPRESENTATIVE,
                                         FAMILY_HBR_BEST, FAMILY_HBR_MEDIAN))}
    main["_o"] = main["family"].map(lambda f: order.get(f, 9))
    main = main.sort_values(["_o", "criterion", "b"], kind="stable")
    main["label"] = [_label(r) for r in main.itertuples()]
    out = []
    subset = comp[comp["family"] == FAMILY_SUBSET]
    if len(subset):
        kept = int((~subset["significant"].astype(bool)).sum()) + 1
        out.append(f"<p class=lead><b>{num(kept)} of {num(len(subset) + 1)}</b> subsets of the "
                   "representatives are not significantly below the best set.</p>")
    if len(main):
        svg = _svg(fg.comparisons_figure(main), f"{view.ident}-comparisons")
        caption = ("Each line is a paired comparison a − b over the same topics (KING for "
                   "metric sets, AUC for HBR): the dot is the difference, the bar its 95% "
                   "bootstrap interval; red ones are significant after adjusting for the other "
                   "comparisons of their family.")
        out.append(figure(svg, caption, "comparisons"))
    cols = ["family", "criterion", "a", "b", "value a", "value b", "a − b", "95% low",
            "95% high", "p", "p adjusted", "significant"]

    def rows_of(frame):
        return [[r.family, r.criterion if isinstance(r.criterion, str) else "", r.a, r.b,
                 r.value_a, r.value_b, r.difference, r.ci_low, r.ci_high, p_cell(r.p_value),
                 p_cell(r.p_adjusted), bool(r.significant)] for r in frame.itertuples()]
    out.append(table(cols, rows_of(main), table_id=view.sub("comparisons-table")))
    if len(subset):
        out.append("<details><summary>best set vs every other subset of the representatives "
                   f"({num(len(subset))} comparisons)</summary><div class=wrap>"
                   + table(cols, rows_of(subset.sort_values("p_adjusted", ascending=False)))
                   + "</div></details>")
    return "".join(out)


def _ci_cell(value, low, high, digits: int = 3) -> Cell:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Cell("n/a", "", "n")
    return Cell(esc(interval(float(value), low, high, digits)), repr(float(value)), "n")


def _configuration(run: Run) -> str:
    """How the judge-based statistics were made (run.json)."""
    found = (run.stage("statistics") or {}).get("meta_evaluation") or {}
    if not found:
        return ""
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in found.items())
    return f'<details><summary>how these were computed</summary><dl class="meta">{items}</dl>' \
        "</details>"


def judges_section(view: TaskView) -> str:
    """Every measure against each criterion (metric_eval/), the chance band,
    the clusters of pairwise accuracy (metric_ranks/) and KING against the
    judges (king_vs_judges/)."""
    why = missing(view, "metric_eval")
    if why:
        return note(why)
    ev = view.rows("metric_eval")
    ranks = view.rows("metric_ranks")
    kvj = view.rows("king_vs_judges")
    out = ["<p>Each measure's agreement with the judges: system-level pairwise accuracy "
           "(Kocmi et al. 2021; the share of system pairs ordered as the judges order them), "
           "soft pairwise accuracy (Thompson et al. 2024), Kendall's τ, and summary-level "
           "acc_eq with its calibrated tie threshold ε (Deutsch et al. 2023); 95% intervals "
           "over topics; <b>chance</b>: random scores (mean and 95% band); rank: significance "
           "cluster of pairwise accuracy (1 = no measure significantly better).</p>"]
    if kvj is not None:
        rows = [[r.criterion, r.statistic, r.n_measures, _ci_cell(r.kendall, r.ci_low,
                                                                 r.ci_high, 2)]
                for r in kvj.sort_values(["criterion", "statistic"]).itertuples()]
        out.append("<p>KING against the judges: Kendall's τ between the sets' KING and each "
                   "statistic of their QUEEN (does judge-free KING pick the metrics the "
                   "judges would?).</p>")
        out.append(table(["criterion", "statistic", "measures", "Kendall τ [95%]"], rows,
                         table_id=view.sub("kvj-table")))
    best = {view.best_set and f"QUEEN({view.best_set})", view.best_single, "HBR", "chance"}
    for criterion in sorted(set(ev["criterion"])):
        mine = ev[ev["criterion"] == criterion]
        wide: Dict[str, Dict[str, tuple]] = {}
        for r in mine.itertuples():
            wide.setdefault(r.measure, {})[r.statistic] = (r.value, r.ci_low, r.ci_high,
                                                          r.epsilon)
        rank = {} if ranks is None else {
            r.measure: r.rank for r in ranks[(ranks["basis"] == "pairwise_accuracy")
                                             & (ranks["criterion"] == criterion)].itertuples()}
        order = sorted(wide, key=lambda m: (-(wide[m].get("pairwise_accuracy", (-1,))[0]
                                              if not math.isnan(wide[m].get(
                                                  "pairwise_accuracy", (-1,))[0]) else -1), m))

        def stat(m, k, digits=3):
            v = wide[m].get(k)
            return _ci_cell(*v[:3], digits) if v is not None else None
        rows = [[m, rank.get(m), stat(m, "pairwise_accuracy"), stat(m, "soft_pairwise_accuracy"),
                 stat(m, "kendall", 2), stat(m, "acc_eq"),
                 (wide[m].get("acc_eq") or (None,) * 4)[3]] for m in order]
        classes = ["hl" if m in best else "" for m in order]
        head = ["measure", "rank", "pairwise accuracy", "soft PA", "Kendall τ", "acc_eq",
                "ε"]
        top = [m for m in order if rank.get(m) == 1]
        chance = wide.get("chance", {}).get("pairwise_accuracy")
        lead = (f"<p class=lead><b>{esc(criterion)}</b>: {len(top)} measure(s) in the top "
                f"cluster of pairwise accuracy, led by <b>{esc(order[0])}</b>"
                + (f"; chance {esc(interval(*chance[:3]))}" if chance else "") + ".</p>")
        out.append(lead + f"<details><summary>every measure for {esc(criterion)} "
                   f"({len(order)})</summary>"
                   + table(head, rows, classes, table_id=view.sub(f"judges-{criterion}"))
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
