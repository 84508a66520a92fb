"""The text a run prints: its stages' results made into sentences (the
output edge; nothing here counts or touches Spark)."""

from __future__ import annotations

import math
from typing import List, Optional, Sequence

from qarla_spark import meta_statistics as ms
from qarla_spark.names import CHANCE, HBR, HUMAN, QUEEN, queen_of


def _num(value: Optional[float], digits: int = 3) -> str:
    """A number as printed, ``n/a`` when undefined (null or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def _ci(value, interval=None, digits: int = 3) -> str:
    """``0.325 [0.290, 0.360]``: a value and its 95% interval, if any."""
    text = _num(value, digits)
    if interval is not None and text != "n/a":
        text += f" [{_num(interval.low, digits)}, {_num(interval.high, digits)}]"
    return text


#: the names of the printed intervals (issue 39, part 6: a number printed
#: with one interval while a table holds another for it names the one shown)
PERCENTILE = "bootstrap percentile"
RECENTRED = "bootstrap percentile recentred on the value"


def _named(text: str, interval, name: str) -> str:
    """``text`` followed by `` (name)`` when it printed ``interval``."""
    return f"{text} ({name})" if interval is not None and not text.endswith("n/a") else text


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def describe_comparison(c, what: str = "") -> str:
    """``+0.016 [-0.004, 0.035] (percentile), p = 0.110: not significant at
    5%`` (the adjusted p-value decides when a family was adjusted)."""
    verdict = "significant" if c.significant else "not significant"
    adjusted = "" if c.p_adjusted == c.p_value else f", adjusted {_p(c.p_adjusted)[2:]}"
    return (f"{what}{c.difference:+.3f} [{_num(c.low)}, {_num(c.high)}] (percentile), "
            f"{_p(c.p_value)}{adjusted}: {verdict} at 5%")


def describe_qarla(t, stats=None) -> str:
    """What the QARLA stage found for one task
    (:class:`~qarla_spark.stages.qarla.TaskQarla`), with the intervals and
    tests of the statistics stage (``stats``, if it ran)."""
    from qarla_spark.names import FAMILIES
    stats_ = stats if stats is not None else _NoStats()
    beats = "beats" if t.best_king > t.best_single_king else "does not beat"
    # KING's printed interval is king_ci/'s percentile one; king/ holds
    # Wilson's over the cases for the same value: the line names which
    best_ci = stats_.king.get((t.task, t.best_set.label))
    single_ci = stats_.king.get((t.task, t.best_single.label))
    lines = [f"task {t.task} (QARLA):",
             f"  best metric set: {t.best_set.label}  KING "
             + _named(_ci(t.best_king, best_ci), best_ci,
                      f"{PERCENTILE}, king_ci/; king/ holds Wilson's over the cases"),
             f"  best single metric: {t.best_single.label}  KING "
             + _named(_ci(t.best_single_king, single_ci), single_ci, PERCENTILE)
             + f" (the best set {beats} it)"]
    chance = getattr(stats_, "king_chance", {}).get(t.task)
    if chance is not None:
        lines.append(f"  chance: KING of a random metric {_ci(chance.value, chance)} (mean and "
                     "95% band of random draws)")
    found = stats_.comparisons.get((t.task, FAMILIES["best_single"], ""))
    if found and t.best_set != t.best_single:
        lines.append("  best set − best single: " + describe_comparison(found[0]))
    kept = stats_.subsets_kept.get(t.task)
    if kept:
        lines.append(f"  subsets of the representatives not significantly below the best set "
                     f"(max-T adjusted, 5%): {kept[0]:,} of {kept[1]:,}")
    lines += [f"  representatives of {len(t.clusters)} clusters: "
              + ", ".join(t.representatives),
              "  JACK of the best set: " + _named(
                  _ci(t.jack, stats_.jack.get((t.task, t.best_set.label))),
                  stats_.jack.get((t.task, t.best_set.label)), PERCENTILE)]
    if t.ranking:
        lines.append(f"  ranking under the best set: {t.models_above} of {t.n_models} models "
                     "rank above every system")
        lines.append("  top: " + "; ".join(f"{r.position}. {r.name} ({r.role}) {r.queen:.3f}"
                                           for r in t.ranking[:8]))
    if t.agreement:
        lines.append("  agreement of the best set with humans (system level, Pearson "
                     f"{'[95% percentile, resampling systems and topics] ' if stats else ''}/ "
                     "Spearman / Kendall): " + "; ".join(
                         f"{c} {_ci(r, stats_.correlation.get((t.task, QUEEN, c, 'pearson')), 2)}"
                         f" / {_num(rho, 2)} / {_num(tau, 2)}"
                         for c, (r, rho, tau) in sorted(t.agreement.items())))
    for reason, (count, names) in sorted(t.skipped.items()):
        more = f", ... ({count - len(names)} more)" if count > len(names) else ""
        lines.append(f"  skipped: {count} topic(s) {reason}: {', '.join(names)}{more}")
    if t.human_first:
        lines.append("  held-out references ranked first (human-summariser test): " + "; ".join(
            f"{m} {first} of {n}" for m, (first, n) in sorted(t.human_first.items())))
    return "\n".join(lines)


def describe_sample(sample) -> str:
    """How H was estimated for one task (:class:`~qarla_spark.stages.hbr.Sample`)."""
    if sample.exact:
        return f"all {sample.total:,} pairs (exact)"
    return f"{sample.n_pairs:,} sampled pairs of {sample.total:,}"


def describe_hbr(result, seed: int, stats=None) -> str:
    """What the HBR stage found (:class:`~qarla_spark.stages.hbr.HbrResult`),
    with the intervals and tests of the statistics stage (``stats``)."""
    from qarla_spark.names import FAMILIES
    stats_ = stats if stats is not None else _NoStats()
    lines: List[str] = [f"HBR over {len(result.measures)} measures (seed {seed})"]
    for task, sample in sorted(result.samples.items()):
        lines.append(f"  task {task}: heterogeneity from {describe_sample(sample)}")
        for criterion, a in sorted(result.auc.get(task, {}).items()):
            def auc(name, value, where=(task, criterion)):
                return _ci(value, stats_.auc.get((*where, name)))
            named = f" ({PERCENTILE})" if stats_.auc.get((task, criterion, HBR)) else ""
            lines.append(f"  task {task}, {criterion}: AUC of HBR {auc(HBR, a.hbr)}; best "
                         f"single {a.best[0]} {auc(*a.best)}, median {a.median[0]} "
                         f"{auc(*a.median)}, worst {a.worst[0]} {a.worst[1]:.3f}{named}")
            for family, what in (("hbr_best", "HBR − best"), ("hbr_median", "HBR − median")):
                found = stats_.comparisons.get((task, FAMILIES[family], criterion))
                if found:
                    lines.append(f"    {what}: {describe_comparison(found[0])}")
            corr = stats_.correlation.get((task, HBR, criterion, "pearson"))
            if corr is not None:
                lines.append(f"    system-level Pearson of HBR with {criterion}: "
                             f"{_ci(corr.value, corr, 2)} (percentile, resampling systems and "
                             "topics)")
    return "\n".join(lines)


def describe_judges(stats, best=None) -> str:
    """Judge-based meta-evaluation (issue 28), per task and criterion: the
    primary statistic (:data:`qarla_spark.meta_statistics.PRIMARY`, named
    by its declaration: system-level pairwise accuracy, Kocmi et al. 2021)
    of the best set's QUEEN, the best single metric and HBR, with the
    chance band, and Kendall's τ of KING against it (``best``: task →
    (best set, best single metric) labels)."""
    pa = getattr(stats, "pairwise_accuracy", {})
    if not pa:
        return ""
    primary = ms.statistic(ms.PRIMARY)
    lines = [f"agreement with the judges ({primary.level}-level {primary.title} and KING vs "
             f"judges τ [95%, {RECENTRED}]; chance: random scores, mean [95% band]):"]
    # each (task, criterion)'s measures, in one pass (not a pass per pair)
    by_pair: dict = {}
    for (t, c, m), v in pa.items():
        by_pair.setdefault((t, c), {})[m] = v
    for task, criterion in sorted(by_pair):
        found = by_pair[(task, criterion)]
        best_set, best_single = (best or {}).get(task, (None, None))
        parts = []
        for label, name in ((f"best set {queen_of(best_set)}", queen_of(best_set)),
                            (f"best single {best_single}", best_single),
                            (HBR, HBR), (CHANCE, CHANCE),
                            ("human ceiling (each rater vs the others)", HUMAN)):
            v = found.get(name)
            if v is not None:
                parts.append(f"{label} {_ci(v.value, v)}")
        tau = stats.king_vs_judges.get((task, criterion))
        if tau is not None:
            parts.append(f"KING vs judges τ {_ci(tau.value, tau, 2)}")
        lines.append(f"  task {task}, {criterion}: " + "; ".join(parts))
    return "\n".join(lines)


def describe_raters(stats) -> str:
    """Agreement among the raters (issue 39, part 3): per task and
    criterion rated twice or more by named raters, Krippendorff's α
    (interval metric) with its interval, the summaries it is over and the
    raters."""
    found = getattr(stats, "rater_alpha", {})
    if not found:
        return ""
    lines = [f"agreement among the raters (Krippendorff's alpha, interval metric [95%, "
             f"{PERCENTILE} over topics]):"]
    for (task, criterion), (alpha, units, raters) in sorted(found.items()):
        lines.append(f"  task {task}, {criterion}: {_ci(alpha.value, alpha)} over {units:,} "
                     f"summaries rated twice or more, {raters} raters")
    return "\n".join(lines)


def describe_across(stats) -> str:
    """Across tasks (issue 28): per basis, the pooled best measure with its
    interval and the tasks it is best or tied in, and the pooled top
    cluster."""
    found = getattr(stats, "across", {})
    if not found:
        return ""
    lines = ["across tasks (pooled over all topics of all tasks [95%, bootstrap stratified by "
             "task: KING percentile, pairwise accuracy recentred]; best or tied: in the task's "
             "top significance cluster):"]
    for (basis, criterion), a in sorted(found.items()):
        if not a:
            continue
        what = "KING" if basis == "king" else f"pairwise accuracy, {criterion}"
        top = a["top"][:6]
        more = f", ... ({len(a['top']) - len(top)} more)" if len(a["top"]) > len(top) else ""
        tied, name = a["most_tied"]
        most = f"; most often best or tied: {name} ({tied} of {a['n_tasks']})" \
            if name != a["best"] else ""
        lines.append(f"  {what}: best {a['best']} {_ci(a['value'].value, a['value'])}, best or "
                     f"tied in {a['best_or_tied']} of {a['n_tasks']} tasks{most}; top cluster: "
                     f"{', '.join(top)}{more}")
    return "\n".join(lines)


class _NoStats:
    """No statistics stage: no interval, no test."""

    king: dict = {}
    jack: dict = {}
    auc: dict = {}
    correlation: dict = {}
    comparisons: dict = {}
    subsets_kept: dict = {}


def describe_statistics(stats) -> str:
    """How the intervals and p-values were made (one line)."""
    return (f"intervals: 95%, bootstrap over topics ({stats.n_resamples:,} Poisson replicates, "
            f"seed {stats.seed}), each named where printed — percentile (the *_ci/ tables' "
            "and comparisons/' method), recentred (metric_eval/'s and king_vs_judges/' "
            "interval), chance bands of random draws; king/'s ci_low/ci_high are Wilson's over "
            "the cases, not the printed ones; p: paired sign flips over topics, max-T adjusted "
            "within a family of comparisons")


def describe_run(report_text: str, stage_texts: Sequence[str], out: str, tables: Sequence[str],
                 signature: str) -> str:
    """The whole summary ``qarla run`` prints."""
    lines = [report_text, *[t for t in stage_texts if t],
             f"results: {out}/ (run.json, {', '.join(sorted(tables))})",
             f"signature: {signature}"]
    return "\n".join(lines)
