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

from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import numpy as np

from qarla_spark.measures.human import mean as human_mean
from qarla_spark.spark import rounds as rd

# ---------------------------------------------------------------------------
# the records' kinds and types: one frozen type per kind (pickled between
# the stages as the tuples they are)
# ---------------------------------------------------------------------------

#: KING's cases of one topic and family of sets: the ``king`` group's, and
#: (a judged topic) the ``meta`` group's, for KING against the judges
S_CASE, S_META_K = "s_case", "s_meta_k"
#: JACK's counts of one topic (the ``jack`` group)
S_JACK = "s_jack"
#: the best set's QUEEN of one judged topic (the ``corr`` group)
S_CORR = "s_corr"
#: every measure's AUC counts of one topic and criterion (an ``auc`` group)
S_AUC = "s_auc"
#: HBR of each summary of one topic, and a task's judgments (``hcorr``)
S_HX, S_JUDG = "s_hx", "s_judg"
#: the measures' and human scores of one topic's judged summaries, one
#: criterion: QUEEN of the detailed sets (QARLA), the singles and HBR (HBR)
#: (the ``meta`` group and the criterion's ``chance`` group)
S_META_Q, S_META_H = "s_meta_q", "s_meta_h"
#: a task's ratings by named raters (the ``alpha`` group: rater_agreement/;
#: the ``meta``, ``hcorr`` and best set's ``corr`` groups: unit ``raters``)
S_RATE = "s_rate"
#: the kinds the statistics stage reads of the QARLA stage's records
FROM_QARLA = (S_CASE, S_JACK, S_CORR, S_META_Q, S_META_K)
#: the kinds it reads of the HBR stage's records
FROM_HBR = (S_AUC, S_HX, S_META_H)


class KingCase(NamedTuple):
    """``s_case``, ``s_meta_k``: KING's wins of one topic, one per set of
    ``family`` (0: the first round's sets, 1: the task's subsets), of
    ``den`` models, the topic's (models × peers) pairs."""

    topic: str
    family: int
    win: np.ndarray
    den: int
    n_pairs: int


class KingCounts(NamedTuple):
    """KING's counts of one task's sets, from its :class:`KingCase` records:
    the topics with a case (sorted), the wins of each (topic, set) (T ×
    sets), each topic's models (T), and which (topic, set) a case gave."""

    topics: list
    wins: np.ndarray
    dens: np.ndarray
    seen: np.ndarray


def king_counts(cases: Sequence[KingCase], family_columns, n_sets: int) -> KingCounts:
    """:class:`KingCounts` of ``cases`` over ``n_sets`` set columns;
    ``family_columns[f]``: (positions in a family-f case's ``win``, their
    set columns). The first case of a (topic, set) counts (a set of both
    families has the same counts in each); cases of no wanted set are left
    out."""
    mine = [v for v in cases if len(family_columns[v.family][1])]
    topics = sorted({v.topic for v in mine})
    t_at = {t: i for i, t in enumerate(topics)}
    wins = np.zeros((len(topics), n_sets), dtype=np.int64)
    seen = np.zeros(wins.shape, dtype=bool)
    dens = np.zeros(len(topics), dtype=np.int64)
    for v in mine:
        src, dst = family_columns[v.family]
        t = t_at[v.topic]
        new = ~seen[t, dst]
        wins[t, dst[new]] = np.asarray(v.win, dtype=np.int64)[src[new]]
        seen[t, dst[new]] = True
        dens[t] = int(v.den)
    return KingCounts(topics, wins, dens, seen)


class JackTopic(NamedTuple):
    """``s_jack``: one topic's JACK counts per detailed set, of
    ``n_models`` models."""

    topic: str
    jack: np.ndarray
    n_models: int


class Judgments(NamedTuple):
    """Judgments as aligned arrays: a batch of a task's (``s_judg``, and the
    HBR stage's ``judgments``: with their topics) or one topic's."""

    summarizer: Sequence[str]
    criterion: Sequence[str]
    score: np.ndarray
    topic: Optional[Sequence[str]] = None


class Ratings(NamedTuple):
    """``s_rate``: a batch of one task's ratings by named raters (the
    ``judgments/`` table's rows with a rater), as aligned arrays."""

    topic: Sequence[str]
    summarizer: Sequence[str]
    criterion: Sequence[str]
    rater: Sequence[str]
    score: np.ndarray


class CorrTopic(NamedTuple):
    """``s_corr``: the best set's QUEEN of one judged topic's peers, as
    ratios (``num`` / ``den``), and the topic's judgments."""

    topic: str
    peers: List[str]
    num: np.ndarray
    den: np.ndarray
    judged: Judgments


class AucTopic(NamedTuple):
    """``s_auc``: every measure's doubled wins of one topic and criterion,
    over ``n_pairs`` pairs."""

    topic: str
    wins2: np.ndarray
    n_pairs: int


class HbrRatios(NamedTuple):
    """``s_hx``: HBR of each summary of one topic, (name, role, num, den)."""

    topic: str
    rows: list


class MetaScores(NamedTuple):
    """``s_meta_q``, ``s_meta_h``: one topic's judged summaries (``names``,
    sorted) for one criterion: their measures' scores (a row each) and
    their human scores (the mean of their judgments)."""

    topic: str
    criterion: str
    names: List[str]
    scores: np.ndarray
    human: np.ndarray


def statistics_wanted(config) -> bool:
    """The run computes statistics (the stages' kernels then also key the
    records the statistics stage reads: :func:`with_statistics`)."""
    return bool(getattr(config, "bootstrap", 0)) and "statistics" in getattr(
        config, "stages", ("statistics",))


@dataclass(frozen=True)
class StatisticsContext:
    """What a stage's kernel needs to make the statistics' records of its
    own (a field of its round's context; None: the run computes no
    statistics): whether the run has judgments and, in the QARLA stage's
    third round, each task's best set (a
    :class:`~qarla_spark.measures.metric_sets.MetricSet`) and the detailed
    sets (:class:`~qarla_spark.stages.qarla.DetailedSets`)."""

    judged: bool = False
    best: Dict[str, Any] = field(default_factory=dict)
    detailed: Any = None


# ---------------------------------------------------------------------------
# what each stage's records give the statistics
# ---------------------------------------------------------------------------

def statistics_records(task: str, kind: str, value, ctx: StatisticsContext) -> List[tuple]:
    """The records the statistics stage reads of one record of the QARLA or
    HBR stage (its :mod:`~qarla_spark.stages.records` type), keyed by the
    group that reads them — ``king`` (KING's cases), ``jack``, ``corr``
    (one detailed set and criterion: the judged peers' QUEEN), ``auc`` (one
    criterion: every measure's AUC counts), ``hcorr`` (HBR of each
    summary), ``meta`` and ``chance`` (the judge-based groups) — so that a
    task's groups are computed in parallel and the shuffle moves them
    without Python. Called by the stages' kernels."""
    if kind == "case":          # a records.KingCases
        # KING's cases: its group, and each criterion's metric_eval group
        # (KING against the judges, on the same replicates)
        case = KingCase(value.topic, value.family, value.win, value.den, value.n_pairs)
        return [(rd.key_of(task, "king"), S_CASE, case)] + \
            ([(rd.key_of(task, "meta"), S_META_K, case)] if value.criteria else [])
    if kind == "detail":        # a records.TopicDetail
        out = [(rd.key_of(task, "jack"), S_JACK,
                JackTopic(value.topic, value.jack, value.n_models))]
        j = value.judged
        if ctx.judged and j is not None and len(value.peers):
            queen = value.full_num / value.full_den[:, None]
            out += _meta_records(task, S_META_Q, value.topic, value.peers, queen, j)
        best = ctx.best.get(task)
        if ctx.judged and j is not None and best is not None:
            # correlation_ci/: the best set's correlations, every unit (what
            # the run prints); metric_eval/ has every detailed set's
            s = ctx.detailed.labels_of(task).index(best.label)
            # one group per (task, set), every criterion (the same peers'
            # system scores computed once: correlation_groups' batches)
            out.append((rd.key_of(task, "corr", s), S_CORR,
                        CorrTopic(value.topic, value.peers, value.full_num[:, s],
                                  value.full_den,
                                  Judgments(j["summarizer"], j["criterion"], j["score"]))))
        return out
    if kind == "auc_topic":     # a records.AucTopic
        return [(rd.key_of(task, "auc", criterion), S_AUC,
                 AucTopic(value.topic, wins2, n_pairs))
                for criterion, wins2, n_pairs in value.auc]
    if kind == "hbr_x":         # a records.HbrTopic
        out = [(rd.key_of(task, "hcorr"), S_HX, HbrRatios(value.topic, value.rows))]
        meta = value.meta
        if meta is not None:
            hbr = {name: num / den for name, _, num, den in value.rows}
            peers = [a for a, role in enumerate(meta.roles) if role == "peer"]
            names = [meta.names[a] for a in peers]
            scores = np.column_stack([np.asarray(meta.x, dtype=np.float64)[peers],
                                      [hbr.get(name, np.nan) for name in names]])
            out += _meta_records(task, S_META_H, value.topic, names, scores, meta.judged)
        return out
    return []


def _meta_records(task, kind, topic, names, scores, judged) -> List[tuple]:
    """The :class:`MetaScores` of one topic's judged summaries, per
    criterion, for the task's metric_eval group (``(task, "meta")``) and
    the criterion's chance group (``(task, "chance", criterion)``): the
    names, their measures' scores (rows of ``scores``) and human scores
    (the mean of each summary's judgments, exact and rounded once)."""
    at = {name: a for a, name in enumerate(names)}
    found: Dict[str, Dict[str, list]] = {}
    for name, criterion, score in zip(judged["summarizer"], judged["criterion"],
                                      judged["score"]):
        if name in at:
            found.setdefault(criterion, {}).setdefault(name, []).append(float(score))
    out = []
    for criterion in sorted(found):
        mine = sorted(found[criterion])
        human = [human_mean(found[criterion][n]) for n in mine]
        value = MetaScores(topic, criterion, mine,
                           np.asarray(scores, dtype=np.float64)[[at[n] for n in mine]],
                           np.asarray(human, dtype=np.float64))
        # the task's measures' group and the criterion's chance baseline's
        # (the same cells)
        out += [(rd.key_of(task, "meta"), kind, value),
                (rd.key_of(task, "chance", criterion), kind, value)]
    return out


def with_statistics(records: List[tuple], ctx: Optional[StatisticsContext]) -> List[tuple]:
    """``records`` and, when the run computes statistics (``ctx`` is not
    None), the records the statistics stage reads of them
    (:func:`statistics_records`)."""
    if ctx is None:
        return records
    extra = [c for key, kind, value in records
             for c in statistics_records(key, kind, value, ctx)]
    return records + extra


def _judgment_records(pdf, group):
    """The judgments of a batch as one :class:`Judgments` record per task,
    keyed by the task (or the task's statistics ``group``)."""
    out = []
    for task, part in pdf.groupby("task", sort=True):
        out.append((task if group is None else rd.key_of(task, group),
                    "judgments" if group is None else S_JUDG, Judgments(
            part["summarizer"].to_numpy(dtype=object), part["criterion"].to_numpy(dtype=object),
            part["score"].to_numpy(dtype=np.float64), part["topic"].to_numpy(dtype=object))))
    return out


def rating_records(ratings, groups: Sequence[str] = ("alpha",),
                   corr: Optional[Dict[str, tuple]] = None):
    """The ratings with a named rater (``judgments/``' rows; none for inputs
    without raters) as one :class:`Ratings` record per task and batch for
    each of the task's statistics ``groups`` and, for a task of ``corr``,
    its ``corr`` group of that key's rest (the best set's correlations)
    (lazy; a narrow map)."""
    from pyspark.sql import functions as F
    corr = dict(corr or {})

    def records(pdf, _):
        out = []
        for task, part in pdf.groupby("task", sort=True):
            value = Ratings(
                part["topic"].to_numpy(dtype=object), part["summarizer"].to_numpy(dtype=object),
                part["criterion"].to_numpy(dtype=object), part["rater"].to_numpy(dtype=object),
                part["score"].to_numpy(dtype=np.float64))
            keys = [rd.key_of(task, group) for group in groups]
            if task in corr:
                keys.append(rd.key_of(task, "corr", *corr[task]))
            out += [(key, S_RATE, value) for key in keys]
        return out
    return rd.over_rows(ratings.where(F.col("rater").isNotNull()).select(
        "task", "topic", "summarizer", "criterion", "rater", "score"), records)


def judgment_records(judgments, group=None):
    """The run's judgments as records per task (lazy; a narrow map), keyed
    by the task or, with ``group``, by the task's statistics group."""
    def records(pdf, _):
        return _judgment_records(pdf, group)
    return rd.over_rows(judgments.select("task", "topic", "summarizer", "criterion", "score"),
                        records)


# ---------------------------------------------------------------------------
# the statistics stage's context: what its groups read of the driver's
# results (broadcast once; a few names per task)
# ---------------------------------------------------------------------------

class TaskSets(NamedTuple):
    """One task's sets the QARLA stage chose: its representatives (whose
    subsets its KING group makes), its best set and best single metric."""

    reps: tuple
    best: str
    best_single: str


class QarlaContext(NamedTuple):
    """The QARLA stage's part of :class:`StatisticsRun`: the first
    family's labels and sizes (every single metric, the requested sets), the
    requested sets, each task's detailed sets (in their column order) and
    :class:`TaskSets`, the triples KING's chance band counts."""

    first: tuple
    first_sizes: tuple
    requested: tuple
    detailed: Dict[str, tuple]
    plans: Dict[str, TaskSets]
    triples: str = "standard"


class HbrPlan(NamedTuple):
    """HBR's comparisons of one (task, criterion): HBR's name, the best and
    the median single measure by pooled AUC."""

    hbr: str
    best: str
    median: str


class HbrContext(NamedTuple):
    """The HBR stage's part of :class:`StatisticsRun`: its measures'
    names (the singles, then HBR's), its measure set's label, the
    comparisons of each (task, criterion)."""

    names: tuple
    label: str = ""
    plans: Dict[tuple, HbrPlan] = {}


class StatisticsRun(NamedTuple):
    """What every group of the statistics stage reads besides its records:
    the run's replicates (``n``) and seed, whether the run has judgments,
    the QARLA and HBR stages' parts (None when the stage did not run), the
    sets the run prints (``wanted``) and each task's best set and best
    single metric, each task's criteria, the number of tasks."""

    seed: int
    n: int
    judged: bool = False
    qarla: Optional[QarlaContext] = None
    hbr: Optional[HbrContext] = None
    wanted: tuple = ()
    best: Dict[str, str] = {}
    best_single: Dict[str, str] = {}
    criteria: Dict[str, list] = {}
    n_tasks: int = 0
