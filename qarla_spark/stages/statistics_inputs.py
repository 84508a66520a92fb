"""What the statistics stage reads of the earlier stages (issue 37): the
records the QARLA and HBR stages' kernels emit for it beside their own
(:func:`with_statistics`, when :func:`statistics_wanted`), keyed by the
statistics group that reads them, and the run's judgments as records
(:func:`judgment_records`: the HBR stage's reduce reads them by task, the
statistics stage's HBR correlations by group). Below the QARLA, HBR and
statistics stages, which all import it and none of which imports another
for it.
"""

from __future__ import annotations

from typing import Dict, List

import numpy as np

from qarla_spark.spark import rounds as rd

#: the kinds the statistics stage reads of the QARLA stage's records
FROM_QARLA = ("s_case", "s_jack", "s_corr", "s_meta_q", "s_meta_k")
#: the kinds it reads of the HBR stage's records
FROM_HBR = ("s_auc", "s_hx", "s_meta_h")


def statistics_wanted(config) -> bool:
    """The run computes statistics (the stages' kernels then also key the
    records the statistics stage reads: :func:`with_statistics`)."""
    return bool(getattr(config, "bootstrap", 0)) and "statistics" in getattr(
        config, "stages", ("statistics",))


def statistics_records(task: str, kind: str, value, ctx) -> List[tuple]:
    """The records the statistics stage reads of one record of the QARLA or
    HBR stage, keyed by the group that reads them — ``king`` (KING's cases),
    ``jack``, ``corr`` (one detailed set and criterion: the judged peers'
    QUEEN), ``auc`` (one criterion: every measure's AUC counts), ``hcorr``
    (HBR of each summary and every judgment) — so that a task's groups are
    computed in parallel and the shuffle moves them without Python. Called
    by the stages' kernels (``ctx``: ``judged``, ``best``, ``labels``)."""
    if kind == "case":
        # KING's cases: its group, and each criterion's metric_eval group
        # (KING against the judges, on the same replicates)
        return [(rd.key_of(task, "king"), "s_case", value)] + \
            ([(rd.key_of(task, "meta"), "s_meta_k", value)] if value.get("criteria") else [])
    if kind == "detail":
        out = [(rd.key_of(task, "jack"), "s_jack",
                {"topic": value["topic"], "jack": value["jack"],
                 "n_models": value["n_models"]})]
        j = value["judged"]
        if ctx.get("judged") and j is not None and len(value["peers"]):
            queen = value["full_num"] / value["full_den"][:, None]
            out += _meta_records(task, "s_meta_q", value["topic"], value["peers"], queen, j)
        best = ctx.get("best", {}).get(task)
        if ctx.get("judged") and j is not None and best is not None:
            # correlation_ci/: the best set's correlations, every unit (what
            # the run prints); metric_eval/ has every detailed set's
            s = ctx["detailed"].labels_of(task).index(best.label)
            # one group per (task, set), every criterion (the same peers'
            # system scores computed once: correlation_group's memo)
            out.append((rd.key_of(task, "corr", s), "s_corr",
                        {"topic": value["topic"], "peers": value["peers"],
                         "num": value["full_num"][:, s], "den": value["full_den"],
                         "judged": {"summarizer": j["summarizer"], "criterion": j["criterion"],
                                    "score": j["score"]}}))
        return out
    if kind == "auc_topic":
        return [(rd.key_of(task, "auc", criterion), "s_auc",
                 {"topic": value["topic"], "wins2": wins2, "n_pairs": n_pairs})
                for criterion, wins2, n_pairs in value["auc"]]
    if kind == "hbr_x":
        out = [(rd.key_of(task, "hcorr"), "s_hx", value)]
        meta = value.get("meta")
        if meta is not None:
            hbr = {name: num / den for name, _, num, den in value["rows"]}
            peers = [a for a, role in enumerate(meta["roles"]) if role == "peer"]
            names = [meta["names"][a] for a in peers]
            scores = np.column_stack([np.asarray(meta["x"], dtype=np.float64)[peers],
                                      [hbr.get(name, np.nan) for name in names]])
            out += _meta_records(task, "s_meta_h", value["topic"], names, scores,
                                 meta["judged"])
        return out
    if kind == "judgments":
        return [(rd.key_of(task, "hcorr"), "s_judg", value)]
    return []


def _meta_records(task, kind, topic, names, scores, judged) -> List[tuple]:
    """The records of one topic's judged summaries, per criterion, for the
    task's metric_eval group (``(task, "meta")``) and the criterion's
    chance group (``(task, "chance", criterion)``): the names,
    their measures' scores (rows of ``scores``) and human scores (the mean
    of each summary's judgments, exact and rounded once)."""
    at = {name: a for a, name in enumerate(names)}
    found: Dict[str, Dict[str, list]] = {}
    for name, criterion, score in zip(judged["summarizer"], judged["criterion"],
                                      judged["score"]):
        if name in at:
            found.setdefault(criterion, {}).setdefault(name, []).append(float(score))
    out = []
    for criterion in sorted(found):
        mine = sorted(found[criterion])
        human = [_exact_mean(found[criterion][n]) for n in mine]
        value = {"topic": topic, "criterion": criterion, "names": mine,
                 "scores": np.asarray(scores, dtype=np.float64)[[at[n] for n in mine]],
                 "human": np.asarray(human, dtype=np.float64)}
        # the task's measures' group and the criterion's chance baseline's
        # (the same cells)
        out += [(rd.key_of(task, "meta"), kind, value),
                (rd.key_of(task, "chance", criterion), kind, value)]
    return out


def _exact_mean(values) -> float:
    """The mean of doubles, exact and rounded once."""
    from fractions import Fraction
    return float(sum(map(Fraction, values), Fraction(0)) / len(values))


def with_statistics(records: List[tuple], ctx) -> List[tuple]:
    """``records`` and, when the run computes statistics
    (``ctx["statistics"]``), the records the statistics stage reads of
    them (:func:`statistics_records`)."""
    if not ctx.get("statistics"):
        return records
    extra = [c for key, kind, value in records
             for c in statistics_records(key, kind, value, ctx)]
    return records + extra


def _judgment_records(pdf, group):
    """The judgments of a batch as one record per task (arrays), keyed by
    the task (or the task's statistics ``group``)."""
    out = []
    for task, part in pdf.groupby("task", sort=True):
        out.append((task if group is None else rd.key_of(task, group),
                    "judgments" if group is None else "s_judg", {
            "summarizer": part["summarizer"].to_numpy(dtype=object),
            "criterion": part["criterion"].to_numpy(dtype=object),
            "score": part["score"].to_numpy(dtype=np.float64),
            "topic": part["topic"].to_numpy(dtype=object)}))
    return out


def judgment_records(judgments, group=None):
    """The run's judgments as records per task (lazy; a narrow map), keyed
    by the task or, with ``group``, by the task's statistics group."""
    def records(pdf, _):
        return _judgment_records(pdf, group)
    return rd.over_rows(judgments.select("task", "topic", "summarizer", "criterion", "score"),
                        records)
