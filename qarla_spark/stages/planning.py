"""The plan stage (issue 40, second increment): how many topics and how
many judgments the next shared task needs, simulated on a finished run's
tables (``qarla plan RUN_DIR``, ``qarla run --plan``); no similarity is
recomputed.

**Inputs** (:func:`read_inputs`: one Spark job over the run's tables, its
small per-topic rows gathered): per task, the per-topic scores of the peer
systems under the best set's QUEEN, the best single metric's QUEEN (both
``queen/``, all models), HBR (``hbr/``) and, with judgments, each human
criterion (``judgments/``: a summary's score the exact mean over its
raters, read as the run reads it: :func:`~qarla_spark.measures.planning.
human_signs`); each topic's KING cases of every subset of the
representatives (``king_topics/``, written by the QARLA stage: "stays
best" is asked among all of them, exactly); and each topic's KING share of
the best set and the best single metric, from ``queen/``'s held-out rows
(the best set against the best single metric).

**Work** (:func:`run_plan`): units keyed (task × measure × size) for the
systems' plan (:func:`~qarla_spark.measures.planning.plan_systems` of one
size), (task × ``best_set`` × size) for the best set
(:func:`~qarla_spark.measures.planning.plan_best_cases`), (task ×
``best_vs_single``) for the best set against the best single metric,
(task × criterion × size) for the pairwise-accuracy widths and (task ×
criterion × k) for PPI (:func:`~qarla_spark.measures.ppi.simulate` of one
k): the units in bins
of about equal estimated cost, one bin per partition, as many partitions
as Spark reports cores (``defaultParallelism``) unless given; the task's
inputs broadcast; each unit's rows go, keyed by task, to one reduce per
task (:func:`finish_task`: the task's sorted rows, each curve's answer, its
printed lines) on the executors. The driver gathers the answers only
(:class:`TaskAnswers`: a task's lines, its units' CPU seconds, its row
counts); the tables are written by the executors from the persisted
records, as the other stages' (one Spark job before the writes). Every
draw is keyed by (the run's seed, the unit's labels) as the pure modules
key them, so neither the bins nor the partitions change a bit of the
tables (tested at 1 and 3 partitions, and against a plain loop).

**Outputs**: ``power/`` and ``ppi/`` (:mod:`qarla_spark.tables`), the
answers (the smallest n reaching 80%, :func:`~qarla_spark.measures.
planning.smallest_n`; the judgments PPI saves) and their printed form
(:func:`describe_task`, :func:`describe_plan`), and ``run.json``'s
``plan`` entry (seed, sizes, trials, ks, the draws' keys, row counts,
timings).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.measures import planning as pl
from qarla_spark.measures import ppi
from qarla_spark.measures import resampling as rs
from qarla_spark.names import HBR, SEPARATOR, queen_of

#: the measure of the best-measure questions (``power/``'s ``measure``)
KING = "KING"
#: ``power/``'s questions
PAIR, RANKING, BEST_SET, BEST_VS_SINGLE = "pair", "ranking", "best_set", "best_vs_single"
PAIRWISE_ACCURACY = "pairwise_accuracy"
QUESTIONS = (PAIR, RANKING, BEST_SET, BEST_VS_SINGLE, PAIRWISE_ACCURACY)
DEFAULT_TRIALS = 1000
DEFAULT_KS = (10, 20, 30, 40, 50)


def default_sizes(n_topics: int) -> Tuple[int, ...]:
    """10, 20, … up to the testbed's topics (and the testbed's own size),
    then 1.5× and 2× it, extrapolated (SummEval's 100 topics: 10..100,
    150, 200)."""
    n_topics = int(n_topics)
    if n_topics < 1:
        return ()
    sizes = set(range(10, n_topics, 10)) | {n_topics, math.ceil(1.5 * n_topics),
                                             2 * n_topics}
    return tuple(sorted(sizes))


@dataclass(frozen=True)
class Settings:
    """What the plan simulates: ``sizes`` (None: :func:`default_sizes` of
    each task), ``trials``, PPI's ``ks``, the ``seed`` of every draw, the
    PPI measure (``None``: the best set's QUEEN; else a measure of the
    systems' plan by name: ``QUEEN(<set>)`` of a detailed set, or ``HBR``)."""

    trials: int = DEFAULT_TRIALS
    sizes: Optional[Tuple[int, ...]] = None
    ks: Tuple[int, ...] = DEFAULT_KS
    seed: int = 13
    ppi_measure: Optional[str] = None

    def sizes_of(self, n_topics: int) -> Tuple[int, ...]:
        return tuple(self.sizes) if self.sizes else default_sizes(n_topics)


@dataclass
class TaskInputs:
    """One task's inputs, topics in code-point order: ``measures``: measure
    → (systems, scores topics × systems, NaN missing), in the order
    best set's QUEEN, best single metric's QUEEN, HBR, criteria by name;
    ``criteria``: the human criteria among them; ``king_sets``: the best
    set and the best single metric (and the representatives) in tie-break
    order (fewer metrics, then the name) and ``king``: their per-topic KING
    shares (topics × sets), rebuilt from ``queen/``; ``subsets``: every
    subset of the representatives in tie-break order, ``subset_wins``
    (topics × subsets) and ``subset_models`` (topics; 0 where KING is not
    defined) their KING cases from ``king_topics/``."""

    task: str
    topics: Tuple[str, ...]
    best_set: str
    best_single: str
    measures: Dict[str, Tuple[Tuple[str, ...], np.ndarray]] = field(default_factory=dict)
    criteria: Tuple[str, ...] = ()
    king_sets: Tuple[str, ...] = ()
    king: Optional[np.ndarray] = None
    subsets: Tuple[str, ...] = ()
    subset_wins: Optional[np.ndarray] = None
    subset_models: Optional[np.ndarray] = None

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def has_subsets(self) -> bool:
        """The task's KING cases per topic of every subset are at hand
        (``king_topics/``): the ``best_set`` question can be asked."""
        return self.subset_wins is not None and len(self.subsets) > 0


# ---------------------------------------------------------------------------
# the units
# ---------------------------------------------------------------------------

#: a unit: (kind, task, label, size or k); kind "systems", "best" (label: the
#: question, best_set or best_vs_single), "accuracy" (label: the criterion) or
#: "ppi"
Unit = Tuple[str, str, str, int]


def units_of(inputs: Sequence[TaskInputs], settings: Settings) -> List[Tuple[Unit, float]]:
    """Every unit of the plan with its estimated cost (trials × topic
    columns × pairs or systems), in a fixed order."""
    out: List[Tuple[Unit, float]] = []
    for t in inputs:
        sizes = settings.sizes_of(t.n_topics)
        for measure, (systems, _) in t.measures.items():
            pairs = len(systems) * (len(systems) - 1) // 2
            for n in sizes:
                out.append((("systems", t.task, measure, int(n)),
                            settings.trials * (t.n_topics + 2 * n) * (3 * pairs + len(systems))))
        if t.has_subsets:
            for n in sizes:
                # one matrix product of the draws' multiplicities by the
                # subsets' cases (and a column's t-interval widths)
                out.append((("best", t.task, BEST_SET, int(n)),
                            settings.trials * (t.n_topics + 2 * n) * (len(t.subsets) / 8.0
                                                                      + 4)))
        if t.king is not None and len(t.king_sets) and has_single(t):
            cost = len(sizes) * settings.trials * (t.n_topics + 2 * max(sizes))
            out.append((("best", t.task, BEST_VS_SINGLE, 0), cost * 5))
        automatic = automatic_measures(t)
        pairs = _pairs(t)
        for criterion in t.criteria if automatic else ():
            for n in sizes:
                # the signs of each measure and the humans, one draw: calibrated on
                # SummEval's CPU (0.04 s a unit against a systems unit's 0.10 s)
                out.append((("accuracy", t.task, criterion, int(n)),
                            settings.trials * (t.n_topics + 2 * n) * pairs
                            * (len(automatic) + 1) / 3.0))
        auto = ppi_measure_of(t, settings)
        if auto is not None:
            n_s = len(t.measures[auto][0])
            for criterion in t.criteria:
                for k in settings.ks:
                    # calibrated on SummEval's measured CPU (run.json's units_cpu_s):
                    # a PPI unit costs ~2.3 systems units of the mean size
                    out.append((("ppi", t.task, criterion, int(k)),
                                140.0 * settings.trials * t.n_topics * n_s))
    return out


def automatic_measures(t: TaskInputs) -> Tuple[str, ...]:
    """The task's measures that are not human criteria (QUEEN of the best
    set and of the best single metric, HBR), in the inputs' order."""
    return tuple(m for m in t.measures if m not in t.criteria)


def _pairs(t: TaskInputs) -> int:
    """The pairs of the task's systems (the most any measure has)."""
    n = max((len(systems) for systems, _ in t.measures.values()), default=0)
    return n * (n - 1) // 2


def accuracy_label(criterion: str) -> str:
    """The draws' label (the measure's place of the key) of the
    pairwise-accuracy simulation of ``criterion``: every measure against it
    is scored on the same draws."""
    return f"{PAIRWISE_ACCURACY}:{criterion}"


def bins_of(units: Sequence[Tuple[Unit, float]], n_bins: int) -> List[List[Unit]]:
    """The units in at most ``n_bins`` bins of about equal cost
    (:func:`~qarla_spark.spark.rounds.spread_by_cost`), each bin's units
    costliest first: one bin per Spark partition."""
    from qarla_spark.spark.rounds import spread_by_cost
    n_bins = max(1, min(int(n_bins), len(units)))
    where = spread_by_cost([cost for _, cost in units], n_bins)
    bins: List[List[Unit]] = [[] for _ in range(n_bins)]
    for index in sorted(range(len(units)), key=lambda i: (-units[i][1], i)):
        bins[where[index]].append(units[index][0])
    return [b for b in bins if b]


def ppi_measure_of(t: TaskInputs, settings: Settings) -> Optional[str]:
    """The automatic side of PPI in task ``t`` (None: no criterion, or the
    measure is missing there)."""
    if not t.criteria:
        return None
    name = settings.ppi_measure or queen_of(t.best_set)
    return name if name in t.measures and name not in t.criteria else None


def _ordered_pair(plan: pl.SystemPlan, p: int) -> Tuple[int, int]:
    """The pair's systems, the better on the testbed first (a tie: the
    testbed's ranking order)."""
    i, j = int(plan.i[p]), int(plan.j[p])
    return (i, j) if plan.rank[i] < plan.rank[j] else (j, i)


def _value(x) -> Optional[float]:
    x = float(x)
    return None if math.isnan(x) else x


def run_unit(unit: Unit, t: TaskInputs, settings: Settings) -> Dict[str, List[tuple]]:
    """The rows of one unit: ``power`` rows (task, question, measure, a, b,
    adjacent, n_topics, testbed_topics, extrapolated, trials, p_same_order,
    p_significant, ci_width; for ``pairwise_accuracy`` a is the criterion
    and ci_width the interval's width, :func:`~qarla_spark.measures.
    planning.plan_pairwise_accuracy`) and ``ppi`` rows (task, criterion, measure,
    method, system, k, n_cells, trials, coverage, width, classical_width,
    k_equivalent, judgments_saved, lam)."""
    kind, task, label, size = unit
    trials, seed, n_t = settings.trials, settings.seed, t.n_topics
    power: List[tuple] = []
    rows_ppi: List[tuple] = []
    if kind == "systems":
        systems, scores = t.measures[label]
        plan = pl.plan_systems(scores, [size], trials, seed, task, label, systems, t.topics,
                               human=label in t.criteria)
        adjacent = plan.adjacent
        same, sig, width = plan.p_same_order[0], plan.p_significant[0], plan.ci_width[0]
        for p in range(plan.i.size):
            a, b = _ordered_pair(plan, p)
            power.append((task, PAIR, label, systems[a], systems[b], bool(adjacent[p]), size,
                          n_t, bool(plan.extrapolated[0]), trials, _value(same[p]),
                          _value(sig[p]), _value(width[p])))
        power.append((task, RANKING, label, None, None, None, size, n_t,
                      bool(plan.halves_extrapolated[0]), trials, _value(plan.stable[0]),
                      _value(plan.stable_significant[0]), None))
    elif kind == "best" and label == BEST_SET:
        best = pl.plan_best_cases(t.subset_wins, t.subset_models, [size], trials, seed, task,
                                  KING, t.topics)
        if best.best < 0:
            return {"power": power, "ppi": rows_ppi}
        full = t.subsets[best.best]
        models = t.subset_models
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = np.where(models > 0, t.subset_wins[:, best.best] / models, math.nan)
        widths = mean_interval_widths(shares, [size], trials, seed, task, t.topics)
        power.append((task, BEST_SET, KING, full, None, None, size, n_t,
                      bool(best.extrapolated[0]), trials, _value(best.p_stays_best[0]), None,
                      _value(widths[0])))
    elif kind == "best" and label == BEST_VS_SINGLE:
        sizes = settings.sizes_of(n_t)
        if has_single(t):
            cols = [t.king_sets.index(t.best_set), t.king_sets.index(t.best_single)]
            plan = pl.plan_systems(t.king[:, cols], sizes, trials, seed, task, KING,
                                   (t.best_set, t.best_single), t.topics)
            for row, n in enumerate(sizes):
                power.append((task, BEST_VS_SINGLE, KING, t.best_set, t.best_single, None,
                              int(n), n_t, bool(plan.extrapolated[row]), trials,
                              _value(plan.p_same_order[row, 0]),
                              _value(plan.p_significant[row, 0]),
                              _value(plan.ci_width[row, 0])))
    elif kind == "accuracy":
        systems, human = t.measures[label]
        names = automatic_measures(t)
        plan = pl.plan_pairwise_accuracy([_aligned(t.measures[m], systems) for m in names],
                                         human, [size], trials, seed, task,
                                         accuracy_label(label), names, t.topics)
        for m, measure in enumerate(names):
            power.append((task, PAIRWISE_ACCURACY, measure, label, None, None, size, n_t,
                          size > n_t, trials, None, None, _value(plan.ci_width[0, m])))
    elif kind == "ppi":
        auto_name = ppi_measure_of(t, settings)
        systems, human = t.measures[label]
        auto = _aligned(t.measures[auto_name], systems)
        sim = ppi.simulate(human, auto, [size], trials, seed, task, label, systems, t.topics)
        coverage, k_eq, saved = sim.coverage[0], sim.k_equivalent[0], sim.saved[0]
        for m, method in enumerate(ppi.METHODS):
            for s, system in enumerate(systems):
                valid = bool(sim.valid[0, s])
                rows_ppi.append((task, label, auto_name, method, system, size,
                                 int(sim.n_cells[s]), trials, _value(coverage[m, s]),
                                 _value(sim.width[0, m, s]), _value(sim.width[0, 0, s]),
                                 _value(k_eq[m, s]) if valid else None,
                                 _value(saved[m, s]) if valid else None,
                                 _value(sim.lam[0, s]) if method == ppi.PPI_PLUS else
                                 (1.0 if method == ppi.PPI else 0.0)))
    else:
        raise ValueError(f"unknown unit {unit!r}")
    return {"power": power, "ppi": rows_ppi}


def has_single(t: TaskInputs) -> bool:
    """The task's best set is not its best single metric, and both have
    per-topic KING shares."""
    return t.best_single != t.best_set and t.best_single in t.king_sets \
        and t.best_set in t.king_sets


def _aligned(measure: Tuple[Tuple[str, ...], np.ndarray], systems: Sequence[str]) -> np.ndarray:
    """The measure's scores (topics × ``systems``), NaN for a system it lacks."""
    names, scores = measure
    at = {s: k for k, s in enumerate(names)}
    out = np.full((scores.shape[0], len(systems)), math.nan)
    for k, s in enumerate(systems):
        if s in at:
            out[:, k] = scores[:, at[s]]
    return out


def mean_interval_widths(values, sizes: Sequence[int], trials: int, seed: int, task: str,
                         topics: Sequence[str]) -> np.ndarray:
    """Per size, the mean over trials of the width of the 95% t-interval of
    the mean of ``values`` (per topic, NaN missing) over the trial's drawn
    topics (the draws of :func:`~qarla_spark.measures.planning.draw_topics`
    under :data:`KING`; widths averaged exactly, rounded once)."""
    values = np.asarray(values, dtype=np.float64)
    order = sorted(range(len(topics)), key=lambda k: str(topics[k]))
    values = values[order]
    present = np.isfinite(values)
    d = np.where(present, values, 0.0)[:, None]
    out = np.full(len(sizes), math.nan)
    for row, n in enumerate(sizes):
        draws = pl.draw_topics(seed, task, KING, values.size, int(n), trials)
        sums = pl.pair_sums(d, present[:, None], pl.topic_counts(draws.sample, values.size))
        widths = pl.t_interval_width(sums.s1, sums.s2, sums.m)
        if trials:
            out[row] = rs.real_means(widths.T)[0]
    return out


# ---------------------------------------------------------------------------
# the inputs, read from a finished run's tables
# ---------------------------------------------------------------------------

def tie_break_order(sets: Sequence[str]) -> Tuple[str, ...]:
    """Sets in the project's tie-break order: fewer metrics, then the name."""
    return tuple(sorted(sets, key=lambda s: (len(s.split(SEPARATOR)), s)))


def wanted_sets(qarla_info: Dict[str, Any]) -> List[Tuple[str, str, str]]:
    """(task, metric set, its part: ``best``, ``single`` or ``rep``) of
    every task the QARLA stage describes (``run.json``'s ``qarla`` entry)."""
    wanted = []
    for task, d in sorted((qarla_info.get("tasks") or {}).items()):
        if not d.get("best_set"):
            continue
        reps = set(d.get("representatives") or ())
        wanted.append((task, d["best_set"], "best"))
        if d.get("best_single") and d["best_single"] != d["best_set"]:
            wanted.append((task, d["best_single"], "single"))
        for r in sorted(reps - {d["best_set"], d.get("best_single")}):
            wanted.append((task, r, "rep"))
    return wanted


def read_inputs(spark, folder: str, qarla_info: Dict[str, Any]) -> List[TaskInputs]:
    """The inputs of every task the QARLA stage describes (``qarla_info``:
    ``run.json``'s ``qarla`` entry) from the run's tables under ``folder``:
    with pyarrow in the driver when the folder is local (as the report
    reads a run: ~1 s for SummEval where Spark's shuffles took 17 s on the
    shared machine), else one Spark job (:func:`read_inputs_spark`); the
    same rows either way (tested)."""
    import os

    from qarla_spark.paths import local_path
    here = local_path(folder)
    if here is not None and os.path.isdir(here):
        inputs = inputs_of(read_rows_local(here, qarla_info), qarla_info.get("tasks") or {})
        return with_subsets(inputs, read_king_topics_local(here), folder)
    return read_inputs_spark(spark, folder, qarla_info)


#: ``king_topics/``'s columns the plan reads
KING_TOPICS_COLUMNS = ["task", "topic", "metric_set", "wins", "models"]


def read_king_topics_local(folder: str):
    """``king_topics/`` of a local run as a pandas frame (None: the run has
    no such table)."""
    import os

    import pyarrow.parquet as pq
    path = os.path.join(folder, "king_topics")
    if not os.path.isdir(path):
        return None
    return pq.read_table(path, columns=KING_TOPICS_COLUMNS, pre_buffer=False).to_pandas()


def table_exists(spark, folder: str, name: str) -> bool:
    """Whether the run under ``folder`` (a local path or any Hadoop file
    system) has the table ``name``."""
    import os

    from qarla_spark.paths import local_path
    here = local_path(folder)
    if here is not None:
        return os.path.isdir(os.path.join(here, name))
    try:
        spark.read.parquet(f"{folder}/{name}").schema
        return True
    except Exception:   # noqa: BLE001 - the table is not there
        return False


def read_king_topics_spark(spark, folder: str):
    """``king_topics/`` of a run anywhere as a pandas frame (None: the run
    has no such table)."""
    if not table_exists(spark, folder, "king_topics"):
        return None
    return spark.read.parquet(f"{folder}/king_topics").select(*KING_TOPICS_COLUMNS).toPandas()


def subsets_of(frame) -> Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...], np.ndarray,
                                         np.ndarray]]:
    """task → (subsets in tie-break order, topics in code-point order, wins
    (topics × subsets), models (topics)) of ``king_topics/``'s rows; every
    (topic, subset) once, else an error (never a silently wrong count)."""
    out = {}
    for task, part in frame.groupby("task", sort=True):
        labels = tuple(sorted(set(part["metric_set"]), key=pl.king_order_key))
        topics = tuple(sorted(set(part["topic"])))
        l_at = {label: k for k, label in enumerate(labels)}
        t_at = {topic: k for k, topic in enumerate(topics)}
        li = np.asarray([l_at[x] for x in part["metric_set"]], dtype=np.int64)
        ti = np.asarray([t_at[x] for x in part["topic"]], dtype=np.int64)
        seen = np.zeros((len(topics), len(labels)), dtype=np.int64)
        np.add.at(seen, (ti, li), 1)
        if not (seen == 1).all():
            raise ValueError(f"king_topics/ of task {task}: every topic needs one row per "
                             "subset of the representatives")
        wins = np.zeros((len(topics), len(labels)), dtype=np.int64)
        wins[ti, li] = part["wins"].to_numpy(dtype=np.int64)
        models = np.zeros(len(topics), dtype=np.int64)
        models[ti] = part["models"].to_numpy(dtype=np.int64)
        out[str(task)] = (labels, topics, wins, models)
    return out


def with_subsets(inputs: Sequence[TaskInputs], frame, folder: str = "the run"
                 ) -> List[TaskInputs]:
    """``inputs`` with each task's KING cases of every subset
    (:func:`subsets_of` of ``king_topics/``'s frame), the rows on the
    task's topics (a topic without KING: models 0). ``frame`` None (a run
    made before the table): a warning, and no ``best_set`` question."""
    if frame is None:
        import warnings

        from qarla_spark.names import QarlaWarning
        warnings.warn(QarlaWarning(
            f"{folder}: the run has no king_topics/ (it was made before the QARLA stage "
            "wrote it): the plan leaves out the question whether the best set stays best by "
            "KING; run the QARLA stage again (qarla run) to ask it"))
        return list(inputs)
    found = subsets_of(frame)
    for t in inputs:
        if t.task not in found:
            continue
        labels, topics, wins, models = found[t.task]
        at = {topic: k for k, topic in enumerate(t.topics)}
        missing = [x for x in topics if x not in at]
        if missing:
            raise ValueError(f"king_topics/ of task {t.task}: topics the run's other tables "
                             f"lack: {', '.join(missing[:3])}")
        rows = np.asarray([at[x] for x in topics], dtype=np.int64)
        t.subsets = labels
        t.subset_wins = np.zeros((t.n_topics, len(labels)), dtype=np.int64)
        t.subset_wins[rows] = wins
        t.subset_models = np.zeros(t.n_topics, dtype=np.int64)
        t.subset_models[rows] = models
    return list(inputs)


def read_rows_local(folder: str, qarla_info: Dict[str, Any]) -> List[Dict[str, Any]]:
    """:func:`read_inputs_spark`'s rows, read with pyarrow and pandas from a
    local run folder."""
    import os

    import pandas as pd
    import pyarrow.parquet as pq
    wanted = wanted_sets(qarla_info)
    if not wanted:
        return []
    sets = pd.DataFrame(wanted, columns=["task", "metric_set", "kind"])
    queen = pq.read_table(os.path.join(folder, "queen"),
                          columns=["task", "topic", "summarizer", "role", "metric_set",
                                   "holdout", "queen"],
                          filters=[("metric_set", "in", sorted(set(sets["metric_set"])))],
                          pre_buffer=False).to_pandas()
    queen = queen.merge(sets, on=["task", "metric_set"])
    rows: List[Dict[str, Any]] = []
    peers = queen[queen["holdout"].isna() & (queen["role"] == "peer")
                  & queen["kind"].isin(["best", "single"])]
    rows += [{"task": t, "kind": "queen", "name": m, "topic": tp, "summarizer": s,
              "values": [v]} for t, m, tp, s, v in zip(peers["task"], peers["metric_set"],
                                                       peers["topic"], peers["summarizer"],
                                                       peers["queen"])]
    held = queen[queen["holdout"].notna()]
    keys = ["task", "topic", "metric_set", "holdout"]
    model = held[(held["role"] == "model") & (held["summarizer"] == held["holdout"])][
        keys + ["queen"]].rename(columns={"queen": "mq"})
    top = held[held["role"] == "peer"].groupby(keys, sort=False)["queen"].max() \
        .rename("pq").reset_index()
    cases = model.merge(top, on=keys, how="left")
    cases["win"] = (cases["pq"].isna() | (cases["mq"] > cases["pq"])).astype("int64")
    king = cases.groupby(["task", "topic", "metric_set"], sort=True)["win"].agg(["sum", "count"])
    rows += [{"task": t, "kind": "king", "name": m, "topic": tp, "summarizer": None,
              "values": [float(w), float(c)]}
             for (t, tp, m), w, c in zip(king.index, king["sum"], king["count"])]
    roles = None
    if os.path.isdir(os.path.join(folder, "systems")):
        roles = pq.read_table(os.path.join(folder, "systems"), columns=["task", "summarizer",
                                                                         "role"]).to_pandas()
        roles = roles[roles["role"] == "peer"][["task", "summarizer"]].drop_duplicates()
    if os.path.isdir(os.path.join(folder, "hbr")):
        hbr = pq.read_table(os.path.join(folder, "hbr"), columns=[
            "task", "topic", "summarizer", "measure_set", "hbr"]).to_pandas()
        if roles is not None:
            hbr = hbr.merge(roles, on=["task", "summarizer"])
        rows += [{"task": t, "kind": "hbr", "name": m, "topic": tp, "summarizer": s,
                  "values": [v]} for t, m, tp, s, v in zip(hbr["task"], hbr["measure_set"],
                                                           hbr["topic"], hbr["summarizer"],
                                                           hbr["hbr"])]
    if os.path.isdir(os.path.join(folder, "judgments")):
        judged = pq.read_table(os.path.join(folder, "judgments"), columns=[
            "task", "topic", "summarizer", "criterion", "score"]).to_pandas()
        judged = judged[judged["score"].notna()]
        if roles is not None:
            judged = judged.merge(roles, on=["task", "summarizer"])
        grouped: Dict[tuple, List[float]] = {}
        for t, c, tp, s, v in zip(judged["task"], judged["criterion"], judged["topic"],
                                  judged["summarizer"], judged["score"]):
            grouped.setdefault((t, c, tp, s), []).append(float(v))
        rows += [{"task": t, "kind": "judg", "name": c, "topic": tp, "summarizer": s,
                  "values": v} for (t, c, tp, s), v in grouped.items()]
    return rows


def read_inputs_spark(spark, folder: str, qarla_info: Dict[str, Any]) -> List[TaskInputs]:
    """The inputs from the run's tables under ``folder`` (any Hadoop file
    system): one Spark job (the union of four small aggregations) whose
    rows — (task, kind, name, topic, summarizer, values), one per topic and
    system per measure, one per topic and set for KING — are gathered;
    ``king_topics/`` read as a frame (a second job: every subset's cases,
    :func:`with_subsets`)."""
    from pyspark.sql import functions as F

    tasks = qarla_info.get("tasks") or {}
    wanted = wanted_sets(qarla_info)
    if not wanted:
        return []
    sets = spark.createDataFrame(wanted, "task string, metric_set string, kind string")
    queen = spark.read.parquet(f"{folder}/queen").join(F.broadcast(sets),
                                                       ["task", "metric_set"])
    peers = queen.filter(F.col("holdout").isNull() & (F.col("role") == "peer")
                         & F.col("kind").isin("best", "single"))
    scores = peers.select("task", F.lit("queen").alias("kind"),
                          F.col("metric_set").alias("name"), "topic", "summarizer",
                          F.array(F.col("queen")).alias("values"))
    held = queen.filter(F.col("holdout").isNotNull())
    keys = ["task", "topic", "metric_set", "holdout"]
    model = held.filter((F.col("role") == "model") & (F.col("summarizer") == F.col("holdout"))
                        ).select(*keys, F.col("queen").alias("mq"))
    top = held.filter(F.col("role") == "peer").groupBy(*keys).agg(F.max("queen").alias("pq"))
    cases = model.join(top, keys, "left").select(
        "task", "topic", "metric_set",
        (F.col("pq").isNull() | (F.col("mq") > F.col("pq"))).cast("long").alias("win"))
    king = cases.groupBy("task", "topic", "metric_set").agg(
        F.sum("win").alias("wins"), F.count(F.lit(1)).alias("cases")).select(
        "task", F.lit("king").alias("kind"), F.col("metric_set").alias("name"), "topic",
        F.lit(None).cast("string").alias("summarizer"),
        F.array(F.col("wins").cast("double"), F.col("cases").cast("double")).alias("values"))
    parts = [scores, king]

    def exists(name):
        return table_exists(spark, folder, name)

    roles = None
    if exists("systems"):
        roles = spark.read.parquet(f"{folder}/systems").filter(F.col("role") == "peer") \
            .select("task", "summarizer").distinct()
    if exists("hbr"):
        hbr = spark.read.parquet(f"{folder}/hbr")
        if roles is not None:
            hbr = hbr.join(roles, ["task", "summarizer"])
        parts.append(hbr.select("task", F.lit("hbr").alias("kind"),
                                F.col("measure_set").alias("name"), "topic", "summarizer",
                                F.array(F.col("hbr")).alias("values")))
    if exists("judgments"):
        judged = spark.read.parquet(f"{folder}/judgments").filter(F.col("score").isNotNull())
        if roles is not None:
            judged = judged.join(roles, ["task", "summarizer"])
        parts.append(judged.groupBy("task", "criterion", "topic", "summarizer").agg(
            F.collect_list("score").alias("values")).select(
            "task", F.lit("judg").alias("kind"), F.col("criterion").alias("name"), "topic",
            "summarizer", "values"))
    frame = parts[0]
    for part in parts[1:]:
        frame = frame.unionByName(part)
    rows = frame.collect()
    return with_subsets(inputs_of(rows, tasks), read_king_topics_spark(spark, folder), folder)


def inputs_of(rows, tasks: Dict[str, Any]) -> List[TaskInputs]:
    """:class:`TaskInputs` of the gathered rows (each with task, kind, name,
    topic, summarizer, values), every order fixed by names; a judged
    summary's score the exact mean of its raters' readings (order-free;
    the checks' :func:`~qarla_spark.measures.human.mean`)."""
    from qarla_spark.measures.human import mean as human_mean
    by_task: Dict[str, List[Any]] = {}
    for r in rows:
        by_task.setdefault(r["task"], []).append(r)
    out = []
    for task in sorted(by_task):
        d = tasks.get(task) or {}
        mine = by_task[task]
        topics = tuple(sorted({r["topic"] for r in mine}))
        at = {name: k for k, name in enumerate(topics)}
        cells: Dict[Tuple[str, str], Dict[Tuple[str, str], float]] = {}
        king: Dict[str, Dict[str, float]] = {}
        for r in mine:
            kind, name, values = r["kind"], r["name"], list(r["values"])
            if kind == "king":
                wins, count = values
                king.setdefault(name, {})[r["topic"]] = wins / count if count else math.nan
                continue
            value = human_mean(sorted(values)) if kind == "judg" else values[0]
            cells.setdefault((kind, name), {})[(r["topic"], r["summarizer"])] = value
        best, single = d.get("best_set"), d.get("best_single")
        t = TaskInputs(task, topics, best, single or best)
        hbr_names = sorted(n for k, n in cells if k == "hbr")
        order = [("queen", best, queen_of(best))]
        if single and single != best:
            order.append(("queen", single, queen_of(single)))
        if len(hbr_names) == 1:
            order.append(("hbr", hbr_names[0], HBR))
        else:       # several HBR measure sets: each by its name
            order += [("hbr", n, f"{HBR}({n})") for n in hbr_names]
        criteria = sorted(n for k, n in cells if k == "judg")
        order += [("judg", c, c) for c in criteria]
        for kind, name, label in order:
            found = cells.get((kind, name))
            if not found:
                continue
            systems = tuple(sorted({s for _, s in found}))
            s_at = {s: k for k, s in enumerate(systems)}
            scores = np.full((len(topics), len(systems)), math.nan)
            for (topic, system), value in found.items():
                scores[at[topic], s_at[system]] = value
            t.measures[label] = (systems, scores)
        t.criteria = tuple(c for c in criteria if c in t.measures)
        if king:
            t.king_sets = tie_break_order(king)
            t.king = np.array([[king[s].get(topic, math.nan) for s in t.king_sets]
                               for topic in topics])
        out.append(t)
    return out


# ---------------------------------------------------------------------------
# the stage
# ---------------------------------------------------------------------------

POWER_SORT = (0, 1, 2, 3, 4, 6)         # task, question, measure, a, b, n_topics
PPI_SORT = (0, 1, 2, 3, 4, 5)           # task, criterion, measure, method, system, k


@dataclass(frozen=True)
class TaskAnswers:
    """What the driver receives of one task (made on the executors): the
    task's printed lines (:func:`describe_task`), its units' CPU seconds
    (measured where they ran) and its rows in ``power/`` and ``ppi/`` —
    a few dozen values a task, whatever its systems, sizes and trials."""

    task: str
    lines: Tuple[str, ...]
    cpu: Tuple[Tuple[Unit, float], ...]
    n_power: int
    n_ppi: int


def finish_task(t: TaskInputs, units: Sequence[Dict[str, List[tuple]]]
                ) -> Tuple[List[tuple], List[tuple], TaskAnswers]:
    """One task's ``power/`` rows (with each curve's answer,
    :func:`with_answers`) and ``ppi/`` rows, sorted, and its
    :class:`TaskAnswers`, from the results of its units
    (:func:`run_unit`, each with its ``cpu_s``): the plan's reduce, on the
    executors; the same pure function in a plain loop (tested)."""
    power: List[tuple] = []
    found_ppi: List[tuple] = []
    cpu: List[Tuple[Unit, float]] = []
    for rows in units:
        power += rows["power"]
        found_ppi += rows["ppi"]
        cpu += rows.get("cpu_s", [])
    power.sort(key=lambda r: _sort_key(r, POWER_SORT))
    found_ppi.sort(key=lambda r: _sort_key(r, PPI_SORT))
    power = with_answers(power)
    answers = TaskAnswers(t.task, tuple(describe_task(t, power, found_ppi)),
                          tuple(sorted(cpu)), len(power), len(found_ppi))
    return power, found_ppi, answers


@dataclass
class PlanResult:
    """The plan: its ``tables`` (``power/`` and ``ppi/``, written by the
    executors from ``records``, the reduce's persisted records), each
    task's :class:`TaskAnswers` (``answers``, the inputs' order) and what
    ``run.json`` records."""

    settings: Settings
    inputs: List[TaskInputs]
    answers: List[TaskAnswers]
    tables: Dict[str, Any]
    timings: Dict[str, float]
    n_partitions: int
    n_units: int
    records: Any = None

    def info(self, config=None) -> Dict[str, Any]:
        s = self.settings
        return {"seed": s.seed, "trials": s.trials,
                "sizes": {t.task: list(s.sizes_of(t.n_topics)) for t in self.inputs},
                "ks": list(s.ks), "alpha": pl.ALPHA, "target": pl.TARGET,
                "replace": pl.BEYOND,
                "ppi_measure": {t.task: ppi_measure_of(t, s) for t in self.inputs},
                "draws": "Philox streams keyed by (seed, 'plan', task, measure, n, trial) and "
                         "(seed, 'ppi', task, criterion, trial); KING's questions under "
                         "measure 'KING', pairwise accuracy's under "
                         "'pairwise_accuracy:<criterion>' (with replacement at every size)",
                "units": self.n_units, "partitions": self.n_partitions,
                "rows": {"power": sum(a.n_power for a in self.answers),
                         "ppi": sum(a.n_ppi for a in self.answers)},
                "timings": dict(self.timings),
                "answers": describe_plan(self).splitlines()}


def _run_bin(units_of_bin, shared):
    """A partition's units (the map side, on an executor): each unit's rows
    and CPU seconds as a record keyed by its task."""
    from qarla_spark.spark import rounds as rd
    from qarla_spark.spark.worker import blas_threads, worker_ready
    worker_ready()
    by_task, settings = shared.value
    with blas_threads(1):       # one core per partition: no oversubscription
        for unit in units_of_bin:
            began = time.process_time()
            rows = run_unit(unit, by_task[unit[1]], settings)
            rows["cpu_s"] = [(unit, time.process_time() - began)]
            yield (unit[1], "unit", rd.dumps(rows))


def _plan_reduce(key: str, items, context):
    """A task's units to its tables' records and its answers (the reduce
    side, on an executor: :func:`finish_task`)."""
    from qarla_spark.spark import rounds as rd
    by_task, _ = context
    power, found_ppi, answers = finish_task(by_task[key], [v for _, v in items])
    return [rd.table_record(key, "power", power), rd.table_record(key, "ppi", found_ppi),
            (key, "driver", answers)]


def run_plan(spark, inputs: Sequence[TaskInputs], settings: Settings,
             n_partitions: Optional[int] = None) -> PlanResult:
    """Every unit of ``inputs`` (module doc): the units in ``n_partitions``
    bins (default: ``defaultParallelism``), one bin a partition; their rows
    grouped by task (one shuffle) into each task's tables and answers
    (:func:`finish_task`) on the executors; the driver gathers the answers
    only, and the tables are written by the executors from the persisted
    records (:func:`~qarla_spark.spark.rounds.records_tables`). One Spark
    job before the writes."""
    from qarla_spark.spark import cache
    from qarla_spark.spark import rounds as rd
    started = time.time()
    units = units_of(inputs, settings)
    n = n_partitions or max(1, spark.sparkContext.defaultParallelism)
    bins = bins_of(units, n)
    by_task = {t.task: t for t in inputs}
    if bins:
        shared = rd.broadcast(spark, (by_task, settings))
        mapped = spark.sparkContext.parallelize(bins, len(bins)).mapPartitions(
            lambda part: (row for b in part for row in _run_bin(b, shared)))
        records = spark.createDataFrame(mapped, rd.ENVELOPE)
        costs: Dict[str, float] = {}
        for (_, task, _, _), cost in units:
            costs[rd.key_of(task)] = costs.get(rd.key_of(task), 0.0) + cost
        n_reduce = max(1, min(len(costs), n))
        reduced = cache.persist(rd.reduce_by_key(
            records, _plan_reduce, n_reduce, shared,
            placement=rd.placement_by_cost(costs, n_reduce)))
    else:
        reduced = spark.createDataFrame([], rd.ENVELOPE)
    found = {key: value for key, _, value in rd.collect(reduced, ["driver"])}
    answers = [found[t.task] for t in inputs if t.task in found]
    timings = {"simulate_s": round(time.time() - started, 3)}
    timings.update(cpu_timings([c for a in answers for c in a.cpu], len(bins)))
    return PlanResult(settings, list(inputs), answers, rd.records_tables(reduced, ["power", "ppi"]),
                      timings, len(bins), len(units), reduced)


def cpu_timings(cpu: Sequence[Tuple[Unit, float]], n_bins: int) -> Dict[str, float]:
    """The units' CPU seconds (measured in the workers): in all, of the
    costliest unit, and the critical path the same units would have in 16
    bins (the largest bin's, binned by these times): what 16 cores cannot
    beat, free of the shared machine's other load."""
    cpu = sorted(cpu)
    if not cpu:
        return {}
    return {"units_cpu_s": round(sum(c for _, c in cpu), 3),
            "largest_unit_cpu_s": round(max(c for _, c in cpu), 3),
            "critical_cpu_16_s": round(max(sum(c for _, c in found) for found in [
                [u for u in cpu if u[0] in set(b)] for b in bins_of(cpu, 16)]), 3)}


def _sort_key(row, columns):
    return tuple((row[c] is None, row[c] if row[c] is not None else 0) for c in columns)


# ---------------------------------------------------------------------------
# the answers
# ---------------------------------------------------------------------------

#: which probability a question's answer reads
ANSWERED = {PAIR: 11, RANKING: 10, BEST_SET: 10, BEST_VS_SINGLE: 11}


def curves(power: Sequence[tuple]) -> Dict[tuple, List[tuple]]:
    """The rows of each curve (task, question, measure, a, b), by size."""
    out: Dict[tuple, List[tuple]] = {}
    for r in power:
        out.setdefault(tuple(r[:5]), []).append(r)
    for rows in out.values():
        rows.sort(key=lambda r: r[6])
    return out


def answer_of(rows: Sequence[tuple]) -> pl.SmallestN:
    """The smallest n of one curve (its question's probability ≥ 80%)."""
    column = ANSWERED[rows[0][1]]
    sizes = [r[6] for r in rows]
    values = [math.nan if r[column] is None else r[column] for r in rows]
    return pl.smallest_n(sizes, values, pl.TARGET, rows[0][7])


def with_answers(power: Sequence[tuple]) -> List[tuple]:
    """``power``'s rows with each curve's answer: n_needed (null: not
    within the grid), needed_at_most; both null for a question without a
    probability to reach (``pairwise_accuracy``'s widths)."""
    found = {key: answer_of(rows) for key, rows in curves(power).items()
             if key[1] in ANSWERED}
    out = []
    for r in power:
        a = found.get(tuple(r[:5]))
        # a width (pairwise accuracy's interval) has no 80% to reach
        out.append(tuple(r) + (((a.n if a.reached else None), a.at_most) if a is not None
                               else (None, None)))
    return out


def arrow_table(name: str, rows: Sequence[tuple]):
    """The declared table ``name`` of rows in its column order (pyarrow): for
    rows held in the driver (tests, a plain loop over the units)."""
    import pyarrow as pa

    from qarla_spark.tables import table
    schema = table(name).arrow_schema()
    columns = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.table([pa.array(list(c), type=f.type) for c, f in zip(columns, schema)],
                    schema=schema)


def _topics(a: pl.SmallestN) -> str:
    if not a.reached:
        return "not within the sizes simulated"
    text = f"≤ {a.n:.0f}" if a.at_most else f"~{a.n:.0f}"
    return text + " topics" + (" (extrapolated)" if a.extrapolated else "")


def describe_plan(result: PlanResult) -> str:
    """The printed answers: a header, then each task's lines
    (:func:`describe_task`, made on the executors)."""
    lines = [f"plan: {result.settings.trials:,} trials per size, seed "
             f"{result.settings.seed}; n for 80% (power of a paired t-test at 5%, or "
             "probability)"]
    for answers in result.answers:
        lines += answers.lines
    return "\n".join(lines)


def describe_task(t: TaskInputs, power: Sequence[tuple], found_ppi: Sequence[tuple]
                  ) -> List[str]:
    """A task's printed answers from its ``power/`` and ``ppi/`` rows: per
    measure, the adjacent pairs 80% power separates within the testbed's
    size and the hardest one, the whole ranking's stability; the best set's
    questions; PPI's saving."""
    lines = [f"task {t.task} ({t.n_topics} topics):"]
    found = curves(power)
    for measure in t.measures:
        pairs = [(key, rows) for key, rows in found.items()
                 if key[0] == t.task and key[1] == PAIR and key[2] == measure
                 and rows[0][5]]
        if not pairs:
            continue
        answers = sorted(((answer_of(rows), key) for key, rows in pairs),
                         key=lambda x: (not x[0].reached, x[0].n if x[0].reached else 0,
                                        x[1][3], x[1][4]))
        within = [x for x in answers if x[0].reached and x[0].n <= t.n_topics]
        beyond = [x for x in answers if x[0].reached and x[0].n > t.n_topics]
        never = len(answers) - len(within) - len(beyond)
        largest = max(settings_sizes(found, t.task, measure), default=t.n_topics)
        parts = [f"{len(within)} of {len(answers)} adjacent pairs reach 80% power within "
                 f"the {t.n_topics} topics you have"]
        # the pairs more topics would separate (extrapolated), the easiest first
        parts += [f"to separate {k[3]} from {k[4]} with 80% power: {_topics(a)}"
                  for a, k in beyond[:3]]
        if within:
            a, k = within[-1]
            parts.append(f"the last of them, {k[3]} vs {k[4]}: {_topics(a)}")
        if never:
            a, k = max(answers[len(within) + len(beyond):],
                       key=lambda x: (_at(pairs_of(found, x[1]), largest, 11), x[1][3]))
            power = _at(pairs_of(found, k), largest, 11)
            parts.append(f"{never} not even with {largest} (the closest, {k[3]} vs {k[4]}: "
                         f"power {power:.0%} at {largest})")
        ranking = found.get((t.task, RANKING, measure, None, None))
        stable = _topics(answer_of(ranking)) if ranking else "?"
        lines.append(f"  {measure}: " + "; ".join(parts)
                     + f". Whole ranking stable (two halves agree) with 80%: {stable}")
    best = found.get((t.task, BEST_SET, KING, t.best_set, None))
    if best is None:
        best = next((rows for key, rows in found.items()
                     if key[0] == t.task and key[1] == BEST_SET), None)
    if best is not None:
        top = max(r[6] for r in best)
        among = f"among the {len(t.subsets):,} subsets of the representatives" \
            if t.subsets else "among the subsets of the representatives"
        lines.append(f"  the best set {best[0][3]} stays best by KING ({among}) with 80%: "
                     f"{_topics(answer_of(best))} (at "
                     f"{t.n_topics} topics {_at(best, t.n_topics, 10):.0%}, at {top} "
                     f"{_at(best, top, 10):.0%})")
    vs = found.get((t.task, BEST_VS_SINGLE, KING, t.best_set, t.best_single))
    if vs is not None:
        lines.append(f"  its KING above the best single metric {t.best_single} with 80% "
                     f"power: {_topics(answer_of(vs))}")
    lines += _describe_accuracy(t, found)
    lines += _describe_ppi(t, found_ppi)
    return lines


def _describe_accuracy(t: TaskInputs, found: Dict[tuple, List[tuple]]) -> List[str]:
    """The width of the 95% interval of the best set's QUEEN's pairwise
    accuracy against each criterion at the testbed's size and the largest."""
    measure = queen_of(t.best_set)
    parts = []
    for criterion in t.criteria:
        rows = found.get((t.task, PAIRWISE_ACCURACY, measure, criterion, None))
        if not rows:
            continue
        top = max(r[6] for r in rows)
        here, there = _at(rows, t.n_topics, 12), _at(rows, top, 12)
        parts.append(f"{criterion} {here:.2f} at {t.n_topics} topics, {there:.2f} at {top}"
                     + (" (extrapolated)" if top > t.n_topics else ""))
    if not parts:
        return []
    return [f"  width of the 95% interval of {measure}'s pairwise accuracy on a new testbed: "
            + "; ".join(parts)]


def pairs_of(found: Dict[tuple, List[tuple]], key: tuple) -> List[tuple]:
    return found.get(tuple(key), [])


def _at(rows: Sequence[tuple], n: int, column: int) -> float:
    """A curve's value at size n (NaN: not simulated)."""
    for r in rows:
        if r[6] == n and r[column] is not None:
            return float(r[column])
    return math.nan


def settings_sizes(found: Dict[tuple, List[tuple]], task: str, measure: str) -> List[int]:
    """The sizes simulated for a task's measure."""
    return [r[6] for key, rows in found.items() if key[0] == task and key[2] == measure
            for r in rows]


def _describe_ppi(t: TaskInputs, found_ppi: Sequence[tuple]) -> List[str]:
    """Per criterion: PPI++ with the measure, at each k, the share of the
    judgments it needs for the classical interval's width with them all
    (k_eq from the systems' summed squared widths)."""
    rows = [r for r in found_ppi if r[0] == t.task]
    if not rows:
        return []
    out = []
    measure = rows[0][2]
    for criterion in t.criteria:
        mine = [r for r in rows if r[1] == criterion]
        per_k: Dict[int, Dict[str, List[tuple]]] = {}
        for r in mine:
            per_k.setdefault(r[5], {}).setdefault(r[3], []).append(r)
        best_line = None
        parts = []
        low = False
        for k in sorted(per_k):
            plus = [r for r in per_k[k].get(ppi.PPI_PLUS, []) if r[11] is not None]
            if not plus:
                continue
            # k_eq over the systems: k · Σ w²_classical / Σ w²_ppi++ (from the mean widths)
            k_eq = _k_equivalent(plus)
            cells = sum(r[6] for r in plus) / len(plus)
            coverage = sum(r[8] for r in plus) / len(plus)
            low |= coverage < 0.9
            parts.append(f"k={k} of {cells:.0f}: ≈ {k_eq:.0f} judgments' worth, coverage "
                         f"{coverage:.0%}")
            if best_line is None and k_eq >= cells:
                best_line = (f"  {criterion}: with {measure}, {k / cells:.0%} of the judgments "
                             f"(k = {k} per system) give the intervals of 100% "
                             f"(PPI++, coverage {coverage:.0%})")
        warn = " (under 90%: too few judgments or skewed scores for the CLT interval)" \
            if low else ""
        if best_line:
            out.append(best_line + warn)
        elif parts:
            out.append(f"  {criterion}: PPI++ with {measure}: " + "; ".join(parts) + warn)
    return out


def _k_equivalent(rows: Sequence[tuple]) -> float:
    """The classical judgments per system giving PPI++'s variance, over the
    systems: the mean of the rows' k_equivalent."""
    return float(sum(r[11] for r in rows) / len(rows))
