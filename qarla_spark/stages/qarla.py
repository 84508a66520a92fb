"""The QARLA stage (SPEC §3-7), every task at once, over a topic cube, in
three rounds (:mod:`qarla_spark.spark.rounds`: each a per-topic kernel over
every topic and a reduce per task, one Spark job):

1. KING and ORANGE of every single metric and every requested set, each
   task's metric clustering (the peers' QUEEN samples as bit slices, the
   agglomeration in the task's reduce), its representatives and the subsets
   of them;
2. KING of each task's subsets (its own: every topic evaluates its task's
   2^k − 1 sets), the best set, KING vs Pearson;
3. QUEEN, system scores, JACK and its growth curve of the detailed sets
   (the best sets, the representatives, the requested sets), their
   agreement with human judgments, the human-summariser test.

The kernels and per-task reductions are pure functions
(:mod:`~qarla_spark.measures.queen`, :mod:`~qarla_spark.measures.qarla_task`);
the driver receives a few values per task (KING of the sets it chooses
from, the clusters, the best set's ranking) and sends the next round its
choices as broadcast variables. The per-topic counts stay on the executors
for the statistics stage (:attr:`QarlaResult.records`). The text the run
prints is in :mod:`qarla_spark.summary`.
"""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.io.validate import SHOWN_NAMES, first_names
from qarla_spark import thresholds
from qarla_spark.names import SKIP_REASONS, QarlaWarning, queen_of
from qarla_spark.measures import agreement, exact
from qarla_spark.measures import human as hu
from qarla_spark.measures import qarla_task as qt
from qarla_spark.measures import resampling as rs
from qarla_spark.measures.clustering import (agglomerate, bit_slices, representatives,
                                             slice_counts, subsets)
from qarla_spark.measures.jack import covering_pairs, curve_counts, first_cover, peer_orders
from qarla_spark.measures.masks import TRIPLES, set_words, topic_samples
from qarla_spark.measures.metric_sets import MetricSet, best_index, best_of, positions
from qarla_spark.measures.plain import topic_plain
from qarla_spark.measures.queen import METHODS, king_cases, queen_counts
from qarla_spark.spark import cache
from qarla_spark.spark import rounds as rd
from qarla_spark.stages.cube import TopicCube, topic_of
from qarla_spark.stages.records import (BestPrinted, ClusterRow, CorrelationsRow, FirstFound,
                                        HumanTestRow, JackCurveRow, JackRow, KingCases,
                                        PeerBits, PeerCounts, PeerScoreRow, PlainCounts,
                                        SubsetsFound, SystemRow, TopicDetail, TopicPeers)
from qarla_spark.stages.statistics_inputs import (StatisticsContext, statistics_wanted,
                                                  with_statistics)
from qarla_spark.tables import table as declared_table

#: plain-score baselines of the human-summariser test (when in the table)
PLAIN_BASELINES = ("R-1.a", "R-2.a")


@dataclass(frozen=True)
class Ranked:
    """A summarizer in the ranking of systems and references under a set."""

    name: str
    role: str
    queen: float
    position: int
    above_peers: Optional[bool]     # models: strictly above every peer (exact)


@dataclass
class TaskQarla:
    """What the QARLA stage found for one task (the run prints it)."""

    task: str
    best_set: MetricSet
    best_king: float
    best_single: MetricSet
    best_single_king: float
    representatives: List[str]
    clusters: List[List[str]]
    jack: float = float("nan")
    ranking: List[Ranked] = field(default_factory=list)      # best set, best first
    agreement: Dict[str, tuple] = field(default_factory=dict)   # criterion -> (r, rho, tau)
    human_first: Dict[str, tuple] = field(default_factory=dict)  # measure -> (first, models)
    skipped: Dict[str, tuple] = field(default_factory=dict)   # reason -> (count, first names)

    @property
    def models_above(self) -> int:
        """Models whose score is strictly above every system's (exact)."""
        return sum(1 for r in self.ranking if r.above_peers)

    @property
    def n_models(self) -> int:
        return sum(1 for r in self.ranking if r.role == "model")

    def info(self) -> Dict[str, Any]:
        """The task's entry of ``run.json``."""
        return {"best_set": self.best_set.label, "best_king": self.best_king,
                "best_single": self.best_single.label,
                "best_single_king": self.best_single_king,
                "representatives": list(self.representatives), "jack": self.jack,
                "models_above_every_system": self.models_above, "n_models": self.n_models,
                "skipped_topics": {reason: {"count": n, "first": names}
                                   for reason, (n, names) in self.skipped.items()}}


@dataclass(frozen=True)
class TaskPlan:
    """The sets the QARLA stage chose for one task (what the statistics
    stage compares)."""

    best: MetricSet
    best_single: MetricSet
    representatives: Tuple[MetricSet, ...]

    @property
    def subsets(self) -> List[MetricSet]:
        """Every subset of the representatives (2^k − 1 sets, the order of
        :func:`~qarla_spark.measures.clustering.subsets`): made when asked,
        not kept (100 tasks of ten representatives are 100,000 sets)."""
        return subsets([name for r in self.representatives for name in r.names])


@dataclass
class QarlaResult:
    tables: Dict[str, Any]          # declared table name -> DataFrame
    tasks: List[TaskQarla]
    requested: Tuple[MetricSet, ...]
    timings: Dict[str, float] = field(default_factory=dict)   # seconds per phase
    plans: Dict[str, TaskPlan] = field(default_factory=dict)
    #: the per-topic records of the three rounds (kept on the executors):
    #: ``case`` (KING's cases of the first family and of each task's
    #: subsets) and ``detail`` (the detailed sets' counts), read by the
    #: statistics stage
    records: Any = None
    #: the sets of the first family (singles and requested), in order
    first: Tuple[MetricSet, ...] = ()
    #: each task's detailed sets (its best set, its representatives, the
    #: requested sets), in order
    detailed: Dict[str, Tuple[MetricSet, ...]] = field(default_factory=dict)
    #: how many tasks the cube's topics belong to (when known)
    n_tasks: Optional[int] = None

    def info(self, config) -> Dict[str, Any]:
        return {"clusters": config.clusters, "triples": config.triples,
                "jack_orders": config.jack_orders,
                "requested_sets": [s.label for s in self.requested],
                "timings": dict(self.timings),
                "tasks": {t.task: t.info() for t in self.tasks}}


def skipped_topics(summaries, shown: int = 10) -> Dict[str, Dict[str, tuple]]:
    """Per task and reason (:data:`SKIP_REASONS`), the number of topics the
    QARLA stage leaves out and the first ``shown`` of them (by name); one
    small row per (task, reason) reaches the driver."""
    from pyspark.sql import functions as F
    per_topic = (summaries.groupBy("task", "topic")
                 .agg(F.sum((F.col("role") == "model").cast("int")).alias("n_models"),
                      F.sum((F.col("role") == "peer").cast("int")).alias("n_peers")))
    reason = (F.when(F.col("n_models") < thresholds.MIN_MODELS_QUEEN, F.lit("queen"))
              .when((F.col("n_models") < thresholds.MIN_MODELS_JACKKNIFE)
                    | (F.col("n_peers") < thresholds.MIN_PEERS_KING), F.lit("king")))
    rows = (per_topic.withColumn("reason", reason).filter(F.col("reason").isNotNull())
            .groupBy("task", "reason")
            .agg(F.count(F.lit(1)).alias("n"),
                 F.slice(F.array_sort(F.collect_list("topic")), 1, shown).alias("first"))
            .collect())
    out: Dict[str, Dict[str, tuple]] = {}
    for r in rows:
        out.setdefault(r["task"], {})[SKIP_REASONS[r["reason"]]] = (int(r["n"]), list(r["first"]))
    return out


# ---------------------------------------------------------------------------
# the sets of a round
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Family:
    """Metric sets evaluated together: their labels, sizes and mask words
    over the cube's metrics."""

    sets: Tuple[MetricSet, ...]
    words: np.ndarray

    @classmethod
    def of(cls, sets: Sequence[MetricSet], metrics: Sequence[str]) -> "Family":
        from qarla_spark.measures.masks import n_words
        sets = tuple(dict.fromkeys(sets))
        position = positions(metrics)
        rows = [set_words(s.indices(position), len(metrics)) for s in sets]
        words = (np.asarray(rows, dtype=np.int64).reshape(len(rows), -1) if rows
                 else np.zeros((0, n_words(len(metrics))), dtype=np.int64))
        return cls(sets, words)

    @property
    def labels(self) -> List[str]:
        return [s.label for s in self.sets]

    @property
    def sizes(self) -> List[int]:
        return [s.size for s in self.sets]


@dataclass(frozen=True)
class DetailedSets:
    """Each task's detailed sets (round 3): its best set, its
    representatives and the requested sets — not the other tasks' (issue
    36: the work of a task does not grow with the run's tasks). The sets
    of every task are rows of one catalogue (labels, mask words, metric
    indices); ``tasks`` gives each task's rows, in MetricSet order;
    ``default`` the rows of a task not named there (:func:`evaluate_sets`:
    every task the same sets)."""

    labels: Tuple[str, ...]
    words: np.ndarray
    indices: Tuple[Tuple[int, ...], ...]
    tasks: Dict[str, Tuple[int, ...]]
    default: Tuple[int, ...] = ()

    @classmethod
    def of(cls, own: Dict[str, Sequence[MetricSet]], metrics: Sequence[str],
           default: Sequence[MetricSet] = ()) -> "DetailedSets":
        """``own``: each task's sets (sorted and deduplicated here);
        ``default``: the sets of any other task, in the order given."""
        default = tuple(dict.fromkeys(default))
        catalogue = sorted({s for sets in own.values() for s in sets} | set(default))
        family = Family.of(catalogue, metrics)
        at = {s: i for i, s in enumerate(family.sets)}
        return cls(tuple(family.labels), family.words,
                   tuple(tuple(s.indices(metrics)) for s in family.sets),
                   {task: tuple(at[s] for s in sorted(set(sets))) for task, sets in own.items()},
                   tuple(at[s] for s in default))

    def rows(self, task: str) -> Tuple[int, ...]:
        return self.tasks.get(task, self.default)

    def labels_of(self, task: str) -> List[str]:
        """The labels of ``task``'s detailed sets, in order."""
        return [self.labels[i] for i in self.rows(task)]

    def words_of(self, task: str) -> np.ndarray:
        return self.words[list(self.rows(task))]

    def indices_of(self, task: str) -> List[Tuple[int, ...]]:
        return [self.indices[i] for i in self.rows(task)]


def _n_reduce(cube: TopicCube) -> int:
    """Partitions of a per-task reduce: one per task (when the cube knows
    how many), at most the topic partitions."""
    from qarla_spark.spark.partitioning import topic_partitions
    n = topic_partitions(cube.spark)
    return max(1, min(cube.n_tasks, n)) if cube.n_tasks else n


# ---------------------------------------------------------------------------
# the rounds' contexts: what each round's kernel and reduce read (broadcast)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class FirstRound:
    """Round 1's kernel (and :func:`evaluate_sets`'): the family's mask
    ``words`` over the cube's ``metrics``, QUEEN's ``triples`` and counting
    ``method``, the plain baselines (metric indices), whether the peers'
    samples are packed for the clustering, what the statistics read of the
    records (None: no statistics)."""

    words: np.ndarray
    triples: str
    method: str
    metrics: List[str]
    baselines: List[int]
    clustering: bool = True
    statistics: Optional[StatisticsContext] = None


@dataclass(frozen=True)
class FamilyReduce:
    """Round 1's reduce (and :func:`evaluate_sets`'): the family's
    ``labels`` and ``sizes``, the cube's ``metrics``; round 1: each set's
    metric names and the clusters asked (``k``); :func:`evaluate_sets`:
    whether KING vs Pearson is made (``judged``)."""

    labels: List[str]
    sizes: List[int]
    metrics: List[str]
    sets: Sequence[Tuple[str, ...]] = ()
    k: int = 0
    judged: bool = False


@dataclass(frozen=True)
class SubsetsRound:
    """Round 2: each task's representatives (``tasks``; its subsets are made
    on the executors), the cube's ``metrics``, QUEEN's ``triples`` and
    ``method``, the first family's labels and sizes, whether the run has
    judgments (KING vs Pearson), what the statistics read."""

    tasks: Dict[str, Tuple[str, ...]]
    metrics: Tuple[str, ...]
    triples: str
    method: str
    first_labels: List[str]
    first_sizes: List[int]
    judged: bool
    statistics: Optional[StatisticsContext] = None


@dataclass(frozen=True)
class DetailRound:
    """Round 3 (and :func:`evaluate_sets`' detailed sets): each task's
    ``detailed`` sets, QUEEN's ``triples`` and ``method``, each task's
    seeded system ``orders`` (JACK's curve), the cube's ``metrics``, the
    plain baselines (indices and names: the human-summariser test), each
    task's ``best`` set (what the run prints), whether the run has
    judgments, what the statistics read."""

    detailed: DetailedSets
    triples: str
    method: str
    orders: Dict[str, List[List[str]]]
    metrics: List[str]
    baselines: List[int]
    plain_baselines: List[str]
    best: Dict[str, MetricSet]
    judged: bool
    statistics: Optional[StatisticsContext] = None


# ---------------------------------------------------------------------------
# round 1: singles and requested sets, clustering
# ---------------------------------------------------------------------------

def _first_kernel(row, ctx: "FirstRound"):
    topic = topic_of(row)
    roles = topic.roles
    if not thresholds.queen_defined(int((roles == "model").sum())):
        return []
    samples = topic_samples(roles, topic.values, ctx.triples)
    q = queen_counts(roles, topic.values, ctx.words, ctx.triples, ctx.method, samples)
    task, names = topic.task, topic.names
    out = [(task, "topic", TopicPeers(topic.topic, list(names[q.peers]), topic.judged)),
           *_queen_records(topic, q, "sys", 0)]
    if len(q.peers) and ctx.clustering:
        bits = samples[4][(roles == "peer")[samples[0]]]    # the peers' samples (clustering)
        if len(bits):
            out.append((task, "bits", PeerBits(bit_slices(bits), len(bits))))
    plain = topic_plain(names, roles, topic.values, ctx.metrics, ctx.baselines)
    if plain is not None:
        out.append((task, "plain", PlainCounts(plain["n_le"], plain["n_peers"])))
    return with_statistics(out, ctx.statistics)


def _n_sets(value: PeerCounts) -> int:
    """How many sets a ``sys`` or ``sys2`` record counts."""
    return np.asarray(value.num).shape[1] if value.real is None else value.real.shape[2]


#: a partition's topics of a task whose ``sys``/``sys2`` rows leave it as
#: they are, not summed: each topic's counts are ``num`` (int32 where they
#: fit) and ``den``, ~4 bytes a (peer, set), where the sums are
#: :data:`~qarla_spark.measures.exact.FIXED_LEVELS` int64 pieces, 48 bytes
#: (issue 36: 100 tasks x 10 topics in 4 partitions moved 292 MB of sums
#: for 65 MB of counts); the reduce sums either form exactly, so the values
#: do not depend on it
PEER_ROWS_KEPT_UP_TO = 2 * exact.FIXED_LEVELS


def _compact_counts(value: PeerCounts) -> PeerCounts:
    """One topic's row with its counts ``num`` as int32 when they fit (the
    same integers)."""
    num = np.asarray(value.num)
    if num.size and num.dtype != np.int32 and \
            -(1 << 31) <= int(num.min()) and int(num.max()) < (1 << 31):
        return value._replace(num=num.astype(np.int32))
    return value


def _peer_records(rows: Dict[str, List[PeerCounts]], kind: str) -> List[tuple]:
    """A partition's ``sys``/``sys2`` rows of each key: up to
    :data:`PEER_ROWS_KEPT_UP_TO` one-topic rows as they are (compact), else
    their exact sums in one record (:class:`~qarla_spark.measures.
    qarla_task.PeerSums`)."""
    out: List[tuple] = []
    for key, values in rows.items():
        if len(values) <= PEER_ROWS_KEPT_UP_TO and all(v.real is None for v in values):
            out += [(key, kind, _compact_counts(v)) for v in values]
            continue
        sums = qt.PeerSums.of_values(_n_sets(values[0]), values)
        out.append((key, kind, PeerCounts(**sums.to_value())))
    return out


def _combine_first(records):
    """Per partition: the peers' rows (:func:`_peer_records`: as they are
    when few, else their sums), bit slices and plain counts of each task
    merged into one record (integer sums, concatenated slices)."""
    out, rows, bits, plains = [], {}, {}, {}
    for key, kind, value in records:
        if kind == "sys":
            if len(value.peer):
                rows.setdefault(key, []).append(value)
        elif kind == "bits":
            bits.setdefault(key, []).append(value)
        elif kind == "plain":
            if key in plains:
                plains[key] = PlainCounts(plains[key].n_le + value.n_le,
                                          plains[key].n_pairs + value.n_pairs)
            else:
                plains[key] = value
        else:
            out.append((key, kind, value))
    out += _peer_records(rows, "sys")
    for key, parts in bits.items():
        out.append((key, "bits", PeerBits(np.concatenate([p.slices for p in parts], axis=1),
                                          sum(p.n for p in parts))))
    out += [(key, "plain", value) for key, value in plains.items()]
    return out


PEER_SCORE_SCHEMA = "task string, metric_set string, summarizer string, queen double"


def _family_reduce(task, items, ctx: "FamilyReduce"):
    """The tables of one family of sets for one task (:func:`evaluate_sets`):
    KING, ORANGE (QUEEN and plain), each peer's system score per set and,
    with judgments, KING vs Pearson."""
    labels, sizes = ctx.labels, ctx.sizes
    cases = [v for k, v in items if k == "case"]
    kings, orange, _ = qt.king_orange(task, cases, labels, sizes)
    plains = [v for k, v in items if k == "plain"]
    orange += qt.orange_plain(task, ctx.metrics, plains) if plains else []
    parts = [v for k, v in items if k == "sys"]
    blocks = []                 # the sets' system scores (peers sorted)
    if parts:
        peers, values = qt.PeerSums.of_values(len(labels), parts).matrix()
        blocks.append((labels, peers, values.T))
    peer_rows = [PeerScoreRow(task, label, peer, value)
                 for _, peers, values in blocks
                 for label, row in zip(labels, values.tolist())
                 for peer, value in zip(peers, row)]
    out = [rd.table_record(task, "king", kings), rd.table_record(task, "orange", orange),
           (task, "peer_scores", peer_rows), (task, "peers", _peers(items))]
    if ctx.judged:
        human = qt.human_means(v.judged for k, v in items if k == "topic")
        out.append(rd.table_record(task, "king_pearson", qt.king_pearson_rows(
            task, _king_sizes(kings), blocks, human)))
    return out


def _peers(items) -> List[str]:
    """The peers of a task's ``topic`` records, sorted."""
    return sorted({p for k, v in items if k == "topic" for p in v.peers})


def _king_sizes(kings) -> Dict[str, Tuple[int, float]]:
    """Set label -> (n_metrics, KING) of ``king/`` rows
    (:func:`~qarla_spark.measures.qarla_task.king_orange`'s: task,
    metric_set, n_metrics, king, ...)."""
    return {label: (size, king) for _, label, size, king, *_ in kings}


def _first_reduce(task, items, ctx: "FamilyReduce"):
    family_labels, sizes = ctx.labels, ctx.sizes
    metrics = ctx.metrics
    cases = [v for k, v in items if k == "case"]
    kings, orange, values = qt.king_orange(task, cases, family_labels, sizes)
    plains = [v for k, v in items if k == "plain"]
    orange += qt.orange_plain(task, metrics, plains) if plains else []
    out = [rd.table_record(task, "king", kings), rd.table_record(task, "orange", orange),
           (task, "peers", _peers(items))]
    if not values:        # no topic enters KING: no clustering, no best set
        return out
    by_set = {MetricSet(ctx.sets[s]): v for s, v in values.items()}
    slices = [v.slices for k, v in items if k == "bits"]
    n_metrics = len(metrics)
    if slices:
        block = np.concatenate(slices, axis=1)

        def count(sets):
            return list(slice_counts(block, [frozenset(s) for s in sets]))
    else:
        def count(sets):
            return [0] * len(sets)
    clusters = agglomerate(n_metrics, ctx.k, count, metrics)
    reps = representatives(clusters, metrics, by_set)
    rows = []
    for c_id, (cluster, rep) in enumerate(zip(clusters, reps)):
        for i in sorted(cluster):
            name = metrics[i]
            rows.append(ClusterRow(task, name, c_id, name == rep, by_set.get(MetricSet([name]))))
    out += [rd.table_record(task, "clusters", rows),
            (task, "driver", FirstFound({s.label: v for s, v in by_set.items()}, reps,
                                        [sorted(metrics[i] for i in c) for c in clusters]))]
    return out


# ---------------------------------------------------------------------------
# round 2: each task's subsets of its representatives
# ---------------------------------------------------------------------------

def subsets_family(reps: Sequence[str], metrics: Sequence[str]) -> Dict[str, Any]:
    """The round-2 family of a task whose representatives are ``reps``:
    the mask words, labels, sizes and names of every subset of them
    (9 ms for ten representatives). Made where it is used, on the
    executors, from the task's few representatives, so that what the
    driver sends and keeps grows with the tasks, not with their 2^k − 1
    subsets (100 tasks: 7.9 MB in one broadcast before)."""
    from itertools import combinations

    from qarla_spark.measures.masks import n_words
    from qarla_spark.names import SEPARATOR
    names = sorted(set(reps))
    position = positions(metrics)
    missing = [n for n in names if n not in position]
    if missing:             # what MetricSet.indices says of the first subset without it
        from qarla_spark.errors import ConfigError
        raise ConfigError(f"metric set {missing[0]}: not in the similarity table: {missing[0]}")
    # a combination of the sorted, distinct names is a MetricSet's names
    # (clustering.subsets' order: by size, then in name order); its words
    # the sum of its names' single bits (distinct bits: their OR)
    from itertools import chain
    k = len(names)
    combos = [c for r in range(1, k + 1) for c in combinations(range(k), r)]
    sets = [c for r in range(1, k + 1) for c in combinations(names, r)]     # the same order
    sizes = [len(c) for c in combos]
    member = np.zeros((len(combos), k), dtype=np.int64)
    member[np.repeat(np.arange(len(combos)), sizes),
           np.fromiter(chain.from_iterable(combos), dtype=np.intp, count=sum(sizes))] = 1
    single = np.asarray([set_words([position[n]], len(metrics)) for n in names],
                        dtype=np.int64).reshape(k, n_words(len(metrics)))
    return {"words": member @ single, "labels": [SEPARATOR.join(c) for c in sets],
            "sizes": sizes, "sets": sets}


@functools.lru_cache(maxsize=4096)
def _subsets_words(reps: Tuple[str, ...], metrics: Tuple[str, ...]) -> np.ndarray:
    """The mask words of :func:`subsets_family`, kept by each Python worker
    for the topics it evaluates (a topic's partition holds every task's
    topics; 8 KB a task of ten representatives)."""
    return subsets_family(reps, metrics)["words"]


def _subsets_kernel(row, ctx: "SubsetsRound"):
    task = row["task"]
    reps = ctx.tasks.get(task)
    if reps is None:
        return []
    topic = topic_of(row)
    roles = topic.roles
    if not thresholds.queen_defined(int((roles == "model").sum())):
        return []
    q = queen_counts(roles, topic.values, _subsets_words(reps, ctx.metrics), ctx.triples,
                     ctx.method)
    return with_statistics(_queen_records(topic, q, "sys2", 1), ctx.statistics)


def _queen_records(topic, q, sys_kind: str, family: int) -> List[tuple]:
    """A topic's records of its QUEEN counts ``q``: the peers' counts with
    all models (``sys_kind``) and, when KING is defined there, its KING
    cases (of the sets of ``family``: 0 the first round's, 1 the subsets)."""
    task = topic.task
    out = [(task, sys_kind, PeerCounts(list(topic.names[q.peers]), q.full_num,
                                       [int(d) for d in q.full_den], [1] * len(q.peers)))]
    cases = king_cases(q)
    if cases is not None:
        win, n_le = cases
        judged = topic.judged
        out.append((task, "case", KingCases(
            topic.topic, family, win, n_le, len(q.models), len(q.models) * len(q.peers),
            # the statistics' KING against the judges
            sorted(set(judged["criterion"])) if judged is not None else [])))
    return out


def _combine_subsets(records):
    out, rows = [], {}
    for key, kind, value in records:
        if kind == "sys2" and len(value.peer):
            rows.setdefault(key, []).append(value)
        elif kind != "sys2":
            out.append((key, kind, value))
    return out + _peer_records(rows, "sys2")


def king_topic_columns(task: str, cases: Sequence[KingCases], labels: Sequence[str],
                       sizes: Sequence[int]) -> List[np.ndarray]:
    """The ``king_topics/`` columns of one task (task, topic, metric_set,
    n_metrics, wins, models): each topic's KING cases of every subset of its
    representatives (round 2's ``case`` records, the counts ``king/``
    averages), the topics in code-point order, the subsets in ``labels``'
    order within a topic — the same rows whatever the partitions."""
    cases = sorted(cases, key=lambda c: c.topic)
    n_s, n_t = len(labels), len(cases)
    wins = np.stack([np.asarray(c.win, dtype=np.int64) for c in cases]) if cases else \
        np.zeros((0, n_s), dtype=np.int64)
    topics = np.asarray([c.topic for c in cases], dtype=object)
    return [np.full(n_t * n_s, task, dtype=object), np.repeat(topics, n_s),
            np.tile(np.asarray(labels, dtype=object), n_t),
            np.tile(np.asarray(sizes, dtype=np.int32), n_t), wins.ravel(),
            np.repeat(np.asarray([int(c.den) for c in cases], dtype=np.int64), n_s)]


def _subsets_reduce(task, items, ctx: "SubsetsRound"):
    reps = ctx.tasks.get(task)
    if reps is None:            # a task without KING: no subsets
        return []
    plan = subsets_family(reps, ctx.metrics)
    first_labels, first_sizes = ctx.first_labels, ctx.first_sizes
    cases1 = [v for k, v in items if k == "case" and v.family == 0]
    cases2 = [v for k, v in items if k == "case" and v.family == 1]
    king1, _, values1 = qt.king_orange(task, cases1, first_labels, first_sizes)
    king2, orange2, values2 = qt.king_orange(task, cases2, plan["labels"], plan["sizes"])
    again = set(first_labels)
    keep = [i for i, label in enumerate(plan["labels"]) if label not in again]
    out = [rd.table_record(task, "king", [king2[i] for i in keep] if king2 else []),
           rd.table_record(task, "orange", [orange2[i] for i in keep] if orange2 else []),
           rd.table_record_columns(task, "king_topics",
                                   king_topic_columns(task, cases2, plan["labels"],
                                                      plan["sizes"]))]
    if ctx.judged:
        human = qt.human_means(v.judged for k, v in items if k == "topic")
        blocks = []             # the sets' system scores (peers sorted)
        for kind, labels, rows in (("sys", first_labels, None), ("sys2", plan["labels"], keep)):
            parts = [v for k, v in items if k == kind]
            if not parts:
                continue
            peers, values = qt.PeerSums.of_values(len(labels), parts).matrix()
            if rows is None:
                blocks.append((list(labels), peers, values.T))
            else:
                blocks.append(([labels[s] for s in rows], peers, values.T[rows]))
        kings = _king_sizes(king1)
        kings.update(_king_sizes([king2[i] for i in keep] if king2 else []))
        out.append(rd.table_record(task, "king_pearson",
                                   qt.king_pearson_rows(task, kings, blocks, human)))
    at = best_index(values2, plan["labels"], plan["sizes"])
    out.append((task, "driver", SubsetsFound(MetricSet(plan["sets"][at]), values2[at])))
    return out


# ---------------------------------------------------------------------------
# round 3: the detailed sets
# ---------------------------------------------------------------------------

def _detail_kernel(row, ctx: "DetailRound"):
    topic = topic_of(row)
    roles = topic.roles
    if not thresholds.queen_defined(int((roles == "model").sum())):
        return []
    task, names = topic.task, topic.names
    detailed: DetailedSets = ctx.detailed
    labels = detailed.labels_of(task)
    q = queen_counts(roles, topic.values, detailed.words_of(task), ctx.triples,
                     ctx.method)
    peers, models = q.peers, q.models
    d = len(labels)
    label_arr = np.asarray(labels, dtype=object)
    # queen/ rows: every peer with all models, and (≥ 4 models) each peer and
    # each held-out model h with h held out
    parts = [{"summarizer": np.repeat(names[peers], d), "role": "peer",
              "metric_set": np.tile(label_arr, len(peers)), "holdout": None,
              "queen": (q.full_num / q.full_den[:, None]).ravel()}]
    if q.jackknifed:
        parts.append({"summarizer": np.repeat(names[models], d), "role": "model",
                      "metric_set": np.tile(label_arr, len(models)),
                      "holdout": np.repeat(names[models], d),
                      "queen": (q.own_num / q.own_den[:, None]).ravel()})
        parts.append({"summarizer": np.repeat(names[peers], len(models) * d), "role": "peer",
                      "metric_set": np.tile(label_arr, len(peers) * len(models)),
                      "holdout": np.tile(np.repeat(names[models], d), len(peers)),
                      "queen": (q.jk_num / q.jk_den[:, :, None]).ravel()})
    queen_rows = _queen_frame(task, topic.topic, [p for p in parts if len(p["summarizer"])])
    # JACK and its curve
    orders = ctx.orders.get(task, ())
    rank_of = [{name: i + 1 for i, name in enumerate(order)} for order in orders]
    ranks = np.array([[r[x] for x in names[peers]] for r in rank_of],
                     dtype=np.int64).reshape(len(orders), len(peers))
    n_systems = len(orders[0]) if len(orders) else 0
    jack, curve = [], []
    for s_id, idx in enumerate(detailed.indices_of(task)):
        good = covering_pairs(topic.values, peers, models, q.full_num[:, s_id] > 0, idx)
        covered = good.any(axis=(0, 1)) if len(peers) else np.zeros(len(models), bool)
        jack.append(int(covered.sum()))
        if n_systems >= 2:
            curve.append(curve_counts(first_cover(good, ranks), n_systems))
    plain = topic_plain(names, roles, topic.values, ctx.metrics, ctx.baselines)
    detail = TopicDetail(
        topic.topic, list(names[peers]), list(names[models]), q.full_num, q.full_den,
        q.jackknifed, q.jk_num, q.jk_den, q.own_num, q.own_den,
        np.asarray(jack, dtype=np.int64), len(models),
        np.stack(curve) if curve else None, len(orders), topic.judged,
        thresholds.king_defined(len(models), len(peers)),
        {ctx.metrics[i]: (peer_s, model_s) for i, (peer_s, model_s) in plain["scores"].items()}
        if plain is not None else None)
    out = [(task, "detail", detail)]
    if queen_rows is not None:
        out.append((task, "queen", queen_rows))
    return with_statistics(out, ctx.statistics)


def _queen_frame(task: str, topic: str, parts: List[dict]):
    """The ``queen/`` rows of one topic as one pandas frame (object columns
    but ``queen``), the parts one after the other (None: no part): what
    ``pd.concat`` of a frame per part gave, without a frame per part."""
    if not parts:
        return None
    import pandas as pd
    n = sum(len(p["summarizer"]) for p in parts)

    def column(name):
        out = np.empty(n, dtype=object)
        at = 0
        for p in parts:
            size = len(p["summarizer"])
            out[at:at + size] = p[name]
            at += size
        return out

    task_col = np.empty(n, dtype=object)
    task_col[:] = task
    topic_col = np.empty(n, dtype=object)
    topic_col[:] = topic
    return pd.DataFrame({"task": task_col, "topic": topic_col, "summarizer": column("summarizer"),
                         "role": column("role"), "metric_set": column("metric_set"),
                         "holdout": column("holdout"),
                         "queen": np.concatenate([np.asarray(p["queen"], dtype=np.float64)
                                                  for p in parts])})


def _means(rows_num, rows_den, groups, n_groups):
    """(numerators (G × D), denominators (G,)) of the exact means per group
    (:func:`~qarla_spark.measures.exact.ratio_sums` over the count)."""
    num, den = exact.ratio_sums(rows_num, rows_den, groups, n_groups)
    counts = np.bincount(np.asarray(groups, dtype=np.int64), minlength=n_groups)
    return num, den * counts.astype(object)


def _detail_reduce(task, items, ctx: "DetailRound"):
    """The tables of the detailed sets of one task from its topics'
    ``detail`` records, exactly, every set at once, one function a table
    (:func:`_systems_rows`, :func:`_jack_rows`, :func:`_jack_curve_rows`,
    :func:`_detail_correlations`, :func:`_human_test_rows`), and what the
    run prints of the best set (:func:`_best_printed`)."""
    labels = ctx.detailed.labels_of(task)
    details = sorted((v for k, v in items if k == "detail"), key=lambda v: v.topic)
    queen = _TaskQueen.of(details, len(labels))
    systems = _systems_rows(task, labels, queen)
    jack_rows = _jack_rows(task, labels, details)
    curve_rows = _jack_curve_rows(task, labels, details)
    corr_rows = _detail_correlations(task, labels, details) if ctx.judged else []
    human_rows = _human_test_rows(task, labels, queen) + \
        _plain_human_test_rows(task, details, ctx.plain_baselines)
    out = [rd.table_record(task, "systems", systems), rd.table_record(task, "jack", jack_rows),
           rd.table_record(task, "jack_curve", curve_rows),
           rd.table_record(task, "correlations", corr_rows),
           rd.table_record(task, "human_test", human_rows)]
    best = ctx.best.get(task)
    if best is not None:
        out.append((task, "driver", _best_printed(best, systems, corr_rows, human_rows,
                                                  jack_rows, ctx.plain_baselines)))
    return out


def _stack(parts, width: int) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros((0, width), dtype=np.int64)


@dataclass(frozen=True)
class _TaskQueen:
    """The exact QUEEN of one task's summaries under its detailed sets, from
    its topics' ``detail`` records: each peer's full QUEEN (all models;
    mean over its topics), each peer's jackknifed QUEEN (a mean over
    held-out models per topic, then over topics), each model's own QUEEN
    with itself held out (over topics), as numerators and denominators;
    what the systems and the human-summariser test read."""

    n_sets: int
    peers: List[str]
    models: List[str]
    p_at: Dict[str, int]
    jk: list                  # the records of the topics with held-out models
    full_values: np.ndarray   # peers × sets
    jk_peers: List[int]       # the peers with a jackknifed QUEEN (positions)
    jk_peer_num: np.ndarray
    jk_peer_den: np.ndarray
    own_num: np.ndarray
    own_den: np.ndarray

    @classmethod
    def of(cls, details, n_sets: int) -> "_TaskQueen":
        jk = [v for v in details if v.jackknifed]
        peers = sorted({p for v in details for p in v.peers})
        models = sorted({m for v in jk for m in v.models})
        p_at = {p: i for i, p in enumerate(peers)}
        m_at = {m: i for i, m in enumerate(models)}
        # full QUEEN of each peer (all models), mean over its topics
        full_num, full_den = _means(_stack([v.full_num for v in details], n_sets),
                                    np.concatenate([v.full_den for v in details])
                                    if details else np.zeros(0, np.int64),
                                    [p_at[p] for v in details for p in v.peers],
                                    len(peers))
        full_values = exact.divide(full_num, full_den) if peers \
            else np.zeros((0, n_sets), dtype=np.int64)
        # jackknifed QUEEN: a peer's mean over held-out models per topic,
        # then over topics; a model's own QUEEN with itself held out, over
        # topics
        rows, dens, groups, topic_of_group, peer_of_group = [], [], [], [], []
        for v in jk:
            n_a, n_m = len(v.peers), len(v.models)
            base = len(topic_of_group)
            rows.append(v.jk_num.reshape(n_a * n_m, n_sets))
            dens.append(v.jk_den.reshape(-1))
            groups.append(np.repeat(np.arange(base, base + n_a), n_m))
            topic_of_group += [n_m] * n_a
            peer_of_group += [p_at[p] for p in v.peers]
        per_topic_num, per_topic_den = exact.ratio_sums(
            _stack(rows, n_sets), np.concatenate(dens) if dens else np.zeros(0, np.int64),
            np.concatenate(groups) if groups else np.zeros(0, np.int64), len(topic_of_group))
        per_topic_den = per_topic_den * np.asarray(topic_of_group, dtype=object)
        jk_peer_num, jk_peer_den = _means(per_topic_num, per_topic_den, peer_of_group,
                                          len(peers))
        own_rows = _stack([v.own_num for v in jk], n_sets)
        own_dens = np.concatenate([v.own_den for v in jk]) if jk else np.zeros(0, np.int64)
        own_groups = [m_at[m] for v in jk for m in v.models]
        own_num, own_den = _means(own_rows, own_dens, own_groups, len(models))
        return cls(n_sets, peers, models, p_at, jk, full_values, sorted(set(peer_of_group)),
                   jk_peer_num, jk_peer_den, own_num, own_den)


def _systems_rows(task, labels, queen: _TaskQueen) -> List[tuple]:
    """``systems/``: under each set, every peer (its jackknifed and full
    QUEEN) and every model (its own QUEEN), ranked exactly — the scores
    num / den over one common denominator (Python integers, every set at
    once; no Fraction per score), each rounded once
    (:func:`~qarla_spark.measures.exact.divide`)."""
    import math

    q = queen
    keys = [(q.peers[i], "peer") for i in q.jk_peers] + [(m, "model") for m in q.models]
    n_jk = len(q.jk_peers)
    dens = [int(q.jk_peer_den[i]) for i in q.jk_peers] + [int(d) for d in q.own_den]
    nums = np.empty((len(keys), q.n_sets), dtype=object)
    for k, i in enumerate(q.jk_peers):
        nums[k] = [int(x) for x in q.jk_peer_num[i]]
    for h in range(len(q.models)):
        nums[n_jk + h] = [int(x) for x in q.own_num[h]]
    common = math.lcm(*dens) if dens else 1
    scaled = nums * np.asarray([common // d for d in dens], dtype=object)[:, None] \
        if keys else nums
    values = exact.divide(nums, np.asarray(dens, dtype=object)).tolist() if keys else []
    full = q.full_values.tolist() if len(q.peers) else []
    full_of = [full[q.p_at[name]] if role == "peer" else None for name, role in keys]
    rest = [(name, q.p_at[name]) for name in q.peers if name not in
            {q.peers[i] for i in q.jk_peers}]
    systems = []
    for s in range(q.n_sets):
        column = scaled[:, s].tolist()
        order = sorted(range(len(keys)), key=lambda k: (-column[k], keys[k][0], keys[k][1]))
        position = [0] * len(keys)
        for pos, k in enumerate(order, start=1):
            position[k] = pos
        peer_best = max(column[:n_jk]) if n_jk else None
        for k, (name, role) in enumerate(keys):
            above = None
            if role == "model":
                above = peer_best is not None and column[k] > peer_best
            systems.append(SystemRow(task, name, role, labels[s], values[k][s],
                                     full_of[k][s] if full_of[k] is not None else None,
                                     position[k], above))
        for name, p in rest:
            systems.append(SystemRow(task, name, "peer", labels[s], None, full[p][s], None,
                                     None))
    return systems


def _jack_rows(task, labels, details) -> List[tuple]:
    """``jack/``: each set's JACK, the exact mean over topics of the models
    it covers."""
    if not details:
        return []
    j_num, j_den = _means(_stack([v.jack[None, :] for v in details], len(labels)),
                          [v.n_models for v in details], [0] * len(details), 1)
    return [JackRow(task, labels[s], float(value))
            for s, value in enumerate(exact.divide(j_num, j_den)[0])]


def _jack_curve_rows(task, labels, details) -> List[tuple]:
    """``jack_curve/``: each set's JACK growth curve over the seeded orders
    of the systems (the topics that have one)."""
    with_curve = [v for v in details if v.curve is not None]
    if not with_curve:
        return []
    n_sets, n_k = len(labels), with_curve[0].curve.shape[1]
    c_num, c_den = _means(_stack([v.curve.reshape(1, -1) for v in with_curve], n_sets * n_k),
                          [v.n_orders * v.n_models for v in with_curve],
                          [0] * len(with_curve), 1)
    values = exact.divide(c_num, c_den)[0].reshape(n_sets, n_k)
    return [JackCurveRow(task, labels[s], j + 2, float(values[s, j]))
            for s in range(n_sets) for j in range(n_k)]


def _detail_correlations(task, labels, details) -> List[tuple]:
    """``correlations/``: each set's agreement with each criterion, from
    the judged peers of every topic (:func:`_correlation_rows`)."""
    points: Dict[str, list] = {}
    for v in details:
        j = v.judged
        if j is None:
            continue
        at = {name: a for a, name in enumerate(v.peers)}
        for name, criterion, score in zip(j["summarizer"], j["criterion"], j["score"]):
            a = at.get(name)
            if a is not None:
                points.setdefault(criterion, []).append(
                    _JudgedPoint(v.topic, name, v.full_num[a], int(v.full_den[a]), float(score)))
    return [row for criterion in sorted(points)
            for row in _correlation_rows(task, labels, criterion, points[criterion])]


def _human_test_rows(task, labels, queen: _TaskQueen) -> List[tuple]:
    """``human_test/``, QUEEN: for each held-out model and set, whether the
    model's own QUEEN is strictly above every peer's QUEEN with it held
    out (exact: the peers' means of every held-out model in one
    :func:`_means`, groups (model, peer), compared by cross products of
    Python integers, every set and peer at once)."""
    q = queen
    n_p = len(q.peers)
    m_at = {m: h for h, m in enumerate(q.models)}
    rows, dens, groups = [], [], []
    for v in q.jk:
        n_a = len(v.peers)
        peer_ids = np.asarray([q.p_at[p] for p in v.peers], dtype=np.int64)
        for hh, model in enumerate(v.models):
            rows.append(v.jk_num[:, hh, :])
            dens.append(v.jk_den[:, hh])
            groups.append(m_at[model] * n_p + peer_ids if n_a else peer_ids)
    if not groups:
        return []
    group = np.concatenate(groups)
    num, den = _means(_stack(rows, q.n_sets), np.concatenate(dens), group,
                      len(q.models) * n_p)
    present = np.zeros(len(q.models) * n_p, dtype=bool)
    present[group] = True
    rows_out = []
    for h, model in enumerate(q.models):
        mine = np.flatnonzero(present[h * n_p:(h + 1) * n_p]) + h * n_p
        if not len(mine):
            continue
        own_n = np.asarray([int(x) for x in q.own_num[h]], dtype=object)       # sets
        own_d = int(q.own_den[h])
        peer_n = np.asarray(num[mine], dtype=object)                           # peers × sets
        peer_d = np.asarray([int(d) for d in den[mine]], dtype=object)
        first = (own_n[None, :] * peer_d[:, None] > peer_n * own_d).all(axis=0)
        rows_out += [HumanTestRow(task, queen_of(labels[s]), model, bool(first[s]))
                     for s in range(q.n_sets)]
    return rows_out


def _plain_human_test_rows(task, details, plain_baselines) -> List[tuple]:
    """``human_test/``, the plain baselines: for each metric and held-out
    model, whether the model's mean plain score is above every peer's
    (:func:`~qarla_spark.measures.agreement.ranked_first`; exact means: the
    scores of every (held-out model, summarizer) summed at once by
    :func:`~qarla_spark.measures.exact.real_sums`, not a double at a time)."""
    out = []
    for metric in plain_baselines:
        ids: Dict[str, int] = {}            # every name (models and peers) a number
        values, holdouts, who, roles = [], [], [], []
        for v in details:
            plain = v.plain
            if plain is None or metric not in plain:
                continue
            peer_s, model_s = plain[metric]
            n_a, n_m = len(v.peers), len(v.models)
            m_ids = np.asarray([ids.setdefault(m, len(ids)) for m in v.models], dtype=np.int64)
            p_ids = np.asarray([ids.setdefault(p, len(ids)) for p in v.peers], dtype=np.int64)
            # per held-out model hh: the model's own score, then each peer's
            values.append(np.concatenate([np.asarray(model_s, dtype=np.float64)
                                          .reshape(n_m, 1),
                                          np.asarray(peer_s, dtype=np.float64)
                                          .reshape(n_a, n_m).T], axis=1).ravel())
            holdouts.append(np.repeat(m_ids, n_a + 1))
            who.append(np.concatenate([m_ids.reshape(n_m, 1),
                                       np.broadcast_to(p_ids, (n_m, n_a))], axis=1).ravel())
            roles.append(np.tile(np.r_[0, np.ones(n_a, dtype=np.int64)], n_m))
        if not values:
            continue
        # a group: (held-out model, summarizer, role 0 model / 1 peer)
        codes = (np.concatenate(holdouts) * len(ids) + np.concatenate(who)) * 2 \
            + np.concatenate(roles)
        unique, inverse = np.unique(codes, return_inverse=True)
        inverse = inverse.ravel()
        sums = exact.real_sums(np.concatenate(values), inverse, len(unique))
        counts = np.bincount(inverse, minlength=len(unique)).tolist()
        names = list(ids)
        own: Dict[str, Any] = {}
        peers: Dict[str, list] = {}
        for g, code in enumerate(unique.tolist()):
            holdout, rest = divmod(code, 2 * len(ids))
            name, role = divmod(rest, 2)
            mean = sums[g] / counts[g]
            if role:
                peers.setdefault(names[holdout], []).append(mean)
            elif name == holdout:
                own[names[holdout]] = mean
        for holdout in sorted(set(own) | set(peers)):
            if holdout in own and peers.get(holdout):
                out.append(HumanTestRow(task, metric, holdout,
                                        agreement.ranked_first(own[holdout], peers[holdout])))
    return out


def _best_printed(best: MetricSet, systems, corr_rows, human_rows, jack_rows,
                  plain_baselines) -> BestPrinted:
    """What the run prints of a task's best set: its ranking of the systems,
    its system-level agreement with each criterion, how often a held-out
    model comes first (its QUEEN and the plain baselines), its JACK."""
    label = best.label
    ranking = sorted((Ranked(r.summarizer, r.role, r.queen, r.position, r.above_peers)
                      for r in systems if r.metric_set == label and r.queen is not None),
                     key=lambda r: r.position)
    agreement_ = {r.criterion: (r.pearson, r.spearman, r.kendall) for r in corr_rows
                  if r.metric_set == label and r.level == "system"}
    wanted = {queen_of(best.label)} | set(plain_baselines)
    firsts: Dict[str, tuple] = {}
    for r in human_rows:
        if r.measure in wanted:
            first, n = firsts.get(r.measure, (0, 0))
            firsts[r.measure] = (first + int(bool(r.ranked_first)), n + 1)
    jack_value = next((r.jack for r in jack_rows if r.metric_set == label), float("nan"))
    return BestPrinted(ranking, agreement_, firsts, jack_value)


class _JudgedPoint(NamedTuple):
    """A judged peer of one topic: its QUEEN numerators under every detailed
    set, their denominator, one human score of it."""

    topic: str
    summarizer: str
    num: np.ndarray
    den: int
    score: float


def _correlation_rows(task, labels, criterion, points: Sequence[_JudgedPoint]):
    """``correlations/`` rows of every detailed set for one (task,
    criterion), every set at once, from the judged peers' points: a
    summary's QUEEN is its one double, num / den correctly rounded (the
    ``queen/`` table's, the export's, metric_eval's); system level — a
    system's exact mean of those doubles, rounded once (metric_eval's system
    scores), against its exact mean human score (of the readings:
    :mod:`~qarla_spark.measures.human`); summary level — per topic,
    then the exact mean over the topics where both sides vary."""
    n_sets = len(labels)
    names = sorted({p.summarizer for p in points})
    at = {n: i for i, n in enumerate(names)}
    x_all = np.stack([np.asarray(p.num, dtype=np.int64) for p in points]) \
        / np.asarray([p.den for p in points], dtype=np.int64)[:, None]
    xs = rs.grouped_nan_real_means(x_all, [at[p.summarizer] for p in points],
                                   len(names))                    # names × sets
    # a system's human score: the exact mean of its summaries' readings
    # (thirds as thirds: issue 39, part 2)
    ys_mean = hu.means_by_key([p.summarizer for p in points], [p.score for p in points])
    ys = np.asarray([ys_mean[n] for n in names], dtype=np.float64)
    system = agreement.correlation_rows(names, xs.T, np.broadcast_to(ys, (n_sets, len(names))))
    out = [CorrelationsRow(task, labels[s], criterion, "system", *map(float, system[s]))
           for s in range(n_sets)]
    by_topic: Dict[str, list] = {}
    for p in points:
        by_topic.setdefault(p.topic, []).append(p)
    # each topic's points in the order correlation_rows takes them (a stable
    # sort of the names), the topics of as many points in one call (its
    # rows are computed each by itself: the same doubles as a call a topic)
    by_n: Dict[int, list] = {}
    for topic in sorted(by_topic):
        pts = by_topic[topic]
        order = np.argsort(np.asarray([p.summarizer for p in pts], dtype=object), kind="stable")
        pts = [pts[i] for i in order.tolist()]
        x = np.stack([np.asarray(p.num, dtype=np.int64) for p in pts], axis=1) \
            / np.asarray([p.den for p in pts], dtype=np.int64)[None, :]
        y = np.broadcast_to(np.asarray([p.score for p in pts], dtype=np.float64), x.shape)
        by_n.setdefault(len(pts), []).append((x, y))
    # the exact mean over topics of each set's three correlations: the
    # topics' rows summed at once (exact.real_sums), not a double at a time
    found, sets_of = [], []
    for n, topics in by_n.items():
        r = agreement.correlation_rows(list(range(n)), np.concatenate([x for x, _ in topics]),
                                       np.concatenate([y for _, y in topics]),
                                       min_n=agreement.MIN_POINTS)
        ok = np.flatnonzero(np.isfinite(r[:, 0]))
        found.append(r[ok, :3])
        sets_of.append(ok % n_sets)
    at = np.concatenate(sets_of) if sets_of else np.zeros(0, dtype=np.int64)
    counts = np.bincount(at, minlength=n_sets).tolist()
    if len(at):
        sums = exact.real_sums(np.concatenate(found).ravel(),
                               (at[:, None] * 3 + np.arange(3)[None, :]).ravel(), n_sets * 3)
        for s in range(n_sets):
            if counts[s]:
                out.append(CorrelationsRow(task, labels[s], criterion, "summary",
                                           *(exact.to_float(sums[3 * s + i] / counts[s])
                                             for i in range(3))))
    return out


# ---------------------------------------------------------------------------
# the rounds as run_qarla and evaluate_sets run them
# ---------------------------------------------------------------------------

#: how a run counts QUEEN (:func:`~qarla_spark.measures.queen.queen_counts`'
#: ``method``: chosen per topic; every method gives the same counts);
#: :func:`evaluate_sets` and the benchmarks may ask for one of ``METHODS``
RUN_METHOD = "auto"


def _check_round_options(triples: str, method: str) -> None:
    """QUEEN's ``triples`` and counting ``method`` are known ones (a
    :class:`~qarla_spark.errors.ConfigError` otherwise)."""
    from qarla_spark.errors import ConfigError
    if triples not in TRIPLES:
        raise ConfigError(f"triples must be one of {', '.join(TRIPLES)}, not {triples!r}")
    if method not in METHODS:
        raise ConfigError(f"method must be one of {', '.join(METHODS)}, not {method!r}")


def _queen_cube(cube: TopicCube, judgments) -> TopicCube:
    """The topics of ``cube`` QUEEN is defined on, with ``judgments``
    attached (when given)."""
    cube = cube.restrict(thresholds.MIN_MODELS_QUEEN)
    return cube.with_judgments(judgments) if judgments is not None else cube


def _first_round(cube: TopicCube, ctx: FirstRound, reducer, reduce_ctx: FamilyReduce,
                 kinds: Sequence[str], n_reduce: int):
    """Round 1 of a family of sets: :func:`_first_kernel` on every topic
    (records combined per partition), ``reducer`` on each task's records
    of ``kinds``: (the kernel's records, the reduce's), both kept."""
    spark = cube.spark
    records = cache.persist(rd.over_topics(cube.frame, _first_kernel, rd.broadcast(spark, ctx),
                                           _combine_first))
    reduced = cache.persist(rd.reduce_by_key(rd.of_kinds(records, list(kinds)), reducer,
                                             n_reduce, rd.broadcast(spark, reduce_ctx)))
    return records, reduced


def _detail_round(cube: TopicCube, ctx: DetailRound, n_reduce: int):
    """Round 3, the detailed sets: :func:`_detail_kernel` on every topic,
    :func:`_detail_reduce` on each task's ``detail`` records: (the
    kernel's records, the reduce's), both kept."""
    context = rd.broadcast(cube.spark, ctx)
    records = cache.persist(rd.over_topics(cube.frame, _detail_kernel, context))
    reduced = cache.persist(rd.reduce_by_key(rd.of_kinds(records, ["detail"]), _detail_reduce,
                                             n_reduce, context))
    return records, reduced


# ---------------------------------------------------------------------------
# any family of sets (library use, tests)
# ---------------------------------------------------------------------------

@dataclass
class SetEvaluation:
    """The QARLA tables of chosen metric sets over a cube
    (:func:`evaluate_sets`): ``king``, ``orange`` (QUEEN and plain scores),
    ``peer_scores`` (task, metric_set, summarizer, queen: a peer's mean
    QUEEN with all models), and with judgments ``king_pearson``; of the
    detailed sets ``queen``, ``systems``, ``jack``, ``jack_curve``,
    ``human_test`` and with judgments ``correlations`` (lazy DataFrames)."""

    cube: TopicCube
    sets: Tuple[MetricSet, ...]
    detailed: Tuple[MetricSet, ...]
    tables: Dict[str, Any]

    def __getattr__(self, name):
        tables = self.__dict__.get("tables") or {}
        if name in tables:
            return tables[name]
        raise AttributeError(name)


def evaluate_sets(cube: TopicCube, sets: Sequence[MetricSet],
                  detailed: Optional[Sequence[MetricSet]] = None, judgments=None,
                  triples: str = "standard", method: str = "auto",
                  orders: Optional[Dict[str, List[List[str]]]] = None, n_orders: int = 20,
                  seed: int = 13, baselines: Sequence[str] = PLAIN_BASELINES) -> SetEvaluation:
    """KING, ORANGE, system scores (and KING vs Pearson) of ``sets``, and
    QUEEN, systems, JACK and its curve, correlations and the human test of
    ``detailed`` (default: all of them), over every task of ``cube`` (its
    topics with at least 3 models), as the QARLA stage computes them: two
    rounds. ``orders``: the seeded orders of each task's systems for the
    JACK curve (default: ``n_orders`` of them from ``seed``);
    ``baselines``: plain metrics of the human-summariser test."""
    from qarla_spark.errors import ConfigError
    _check_round_options(triples, method)
    spark = cube.spark
    cube = _queen_cube(cube, judgments)
    metrics = list(cube.metrics)
    family = Family.of(sets, metrics)
    detailed = family.sets if detailed is None else tuple(dict.fromkeys(detailed))
    unknown = [d.label for d in detailed if d not in family.sets]
    if unknown:
        raise ConfigError(f"detailed set(s) not among the metric sets: {', '.join(unknown)}")
    base = [metrics.index(b) for b in baselines if b in metrics]
    n_reduce = _n_reduce(cube)
    _, reduced = _first_round(
        cube, FirstRound(family.words, triples, method, metrics, base, clustering=False),
        _family_reduce, FamilyReduce(family.labels, family.sizes, metrics, judged=cube.judged),
        ["topic", "case", "sys", "plain"], n_reduce)
    tables = {"king": _rows_table(reduced, "king"),
              "orange": _rows_table(reduced, "orange"),
              "peer_scores": _rows_table(reduced, "peer_scores", PEER_SCORE_SCHEMA)}
    if cube.judged:
        tables["king_pearson"] = _rows_table(reduced, "king_pearson")
    if detailed:
        if orders is None:
            orders = {task: peer_orders(names, n_orders, seed)
                      for task, _, names in rd.collect(reduced, ["peers"]) if names}
        map3, red3 = _detail_round(cube, DetailRound(
            DetailedSets.of({}, metrics, detailed), triples, method, dict(orders), metrics,
            base, [metrics[i] for i in base], {}, cube.judged), n_reduce)
        tables.update({
            "queen": rd.table_of(map3, "queen", declared_table("queen").ddl),
            "systems": _rows_table(red3, "systems"),
            "jack": _rows_table(red3, "jack"),
            "jack_curve": _rows_table(red3, "jack_curve"),
            "human_test": _rows_table(red3, "human_test")})
        if cube.judged:
            tables["correlations"] = _rows_table(red3, "correlations")
    else:
        empty = ["queen", "systems", "jack", "jack_curve", "human_test"] + (
            ["correlations"] if cube.judged else [])
        tables.update({name: spark.createDataFrame([], declared_table(name).ddl)
                       for name in empty})
    return SetEvaluation(cube, family.sets, tuple(detailed), tables)


# ---------------------------------------------------------------------------
# the stage
# ---------------------------------------------------------------------------

def _rows_table(records, kind: str, schema: Optional[str] = None):
    """A table whose records hold its rows (Arrow, :func:`~qarla_spark.spark.
    rounds.table_record`; or lists of tuples in ``schema``'s order), as a
    DataFrame (lazy)."""
    from qarla_spark.tables import table
    if schema is None:
        return rd.table_of(records, kind, table(kind).ddl)
    from qarla_spark.spark.grouped import schema_columns
    columns = [c for c, _ in schema_columns(schema)]
    return rd.table_of(_as_frames(records, kind, columns), kind, schema)


def _as_frames(records, kind: str, columns: Sequence[str]):
    """Records whose values are lists of tuples, as records of pandas frames
    (a narrow map), so that :func:`~qarla_spark.spark.rounds.table_of` can
    read them."""
    def convert(pdf, _):
        import pandas as pd
        out = []
        for key, k, data in rd.records_of(pdf):
            if k != kind:
                continue
            rows = rd.loads(data)
            if rows:
                out.append((key, kind, pd.DataFrame.from_records(rows, columns=columns)))
        return out
    return rd.over_rows(rd.of_kinds(records, [kind]), convert)


def skipped_of(tasks) -> Dict[str, Dict[str, tuple]]:
    """:func:`skipped_topics` from the testbed's description (its
    :class:`~qarla_spark.io.validate.TaskStats`, where validation counted
    them): no Spark job."""
    out: Dict[str, Dict[str, tuple]] = {}
    for t in tasks:
        for reason, (count, names) in (getattr(t, "skipped", None) or {}).items():
            if count:
                out.setdefault(t.task, {})[SKIP_REASONS[reason]] = (int(count), list(names))
    return out


def run_qarla(cube: TopicCube, summaries, judgments, config,
              skipped: Optional[Dict[str, Dict[str, tuple]]] = None) -> QarlaResult:
    """The QARLA stage over ``cube`` (any minimum model count: the stage
    keeps the topics QUEEN is defined on). ``config`` gives ``clusters``,
    ``triples``, ``jack_orders``, ``seed`` and ``metric_sets`` (the
    requested sets as the user wrote them). ``judgments``: the run's
    judgments (attached to the cube's topics when the cube has none).
    ``skipped``: the topics left out per task (:func:`skipped_of`; default:
    counted from ``summaries``, one Spark job)."""
    _check_round_options(config.triples, RUN_METHOD)
    clock = _Clock()
    cube = _queen_cube(cube, judgments)
    run = _Run.of(cube, config)
    if skipped is None:
        skipped = skipped_topics(summaries)
    _warn_skipped(skipped)
    clock.lap("skipped_s")
    first, map1, red1, found1, peers = _run_first(run)
    clock.lap("singles_clustering_s")
    map2, red2, found2 = _run_subsets(run, first, map1, found1)
    clock.lap("subsets_s")
    own, map3, red3, found3 = _run_detailed(run, found1, found2, peers)
    tables = _qarla_tables(run, red1, red2, red3, map3)
    results, plans = _task_results(found1, found2, found3, skipped)
    clock.lap("detailed_summary_s")
    records = map1.unionByName(map2).unionByName(map3)
    return QarlaResult(tables, results, run.requested, clock.timings, plans, records, first.sets,
                       {task: tuple(sorted(set(sets))) for task, sets in own.items()},
                       cube.n_tasks)


class _Clock:
    """The seconds of each phase of the stage (:attr:`QarlaResult.timings`)."""

    def __init__(self):
        self.timings: Dict[str, float] = {}
        self._since = time.time()

    def lap(self, name: str) -> None:
        now = time.time()
        self.timings[name] = round(now - self._since, 3)
        self._since = now


@dataclass(frozen=True)
class _Run:
    """What :func:`run_qarla`'s rounds share: the cube (its QUEEN topics),
    the run's ``config``, the requested sets, the cube's metrics, the plain
    baselines (indices), the per-task reduces' partitions, what the
    statistics read of the records (None: no statistics)."""

    cube: TopicCube
    config: Any
    requested: Tuple[MetricSet, ...]
    metrics: List[str]
    baselines: List[int]
    n_reduce: int
    wanted: bool

    @classmethod
    def of(cls, cube: TopicCube, config) -> "_Run":
        metrics = list(cube.metrics)
        requested = tuple(dict.fromkeys(MetricSet.parse(s, cube.metrics)
                                        for s in config.metric_sets))
        return cls(cube, config, requested, metrics,
                   [metrics.index(b) for b in PLAIN_BASELINES if b in metrics],
                   _n_reduce(cube), statistics_wanted(config))

    @property
    def statistics(self) -> Optional[StatisticsContext]:
        """Rounds 1 and 2's statistics context (None: no statistics)."""
        return StatisticsContext(self.cube.judged) if self.wanted else None


def _warn_skipped(skipped: Dict[str, Dict[str, tuple]]) -> None:
    """A :class:`~qarla_spark.names.QarlaWarning` per task and reason of the
    topics the stage leaves out (to :func:`run_qarla`'s caller)."""
    for task, reasons in sorted(skipped.items()):
        for reason, (count, names) in sorted(reasons.items()):
            warnings.warn(f"task {task}: {count:,} topic(s) {reason} are skipped: "
                          f"{first_names(names, count)}"
                          f"{' (all in problems/)' if count > SHOWN_NAMES else ''}",
                          QarlaWarning, stacklevel=3)


def _run_first(run: _Run):
    """Round 1, the singles and requested sets and the clustering: (its
    family, the kernel's and the reduce's records, each task's
    :class:`FirstFound`, each task's peers)."""
    config = run.config
    first = Family.of(run.cube.singles() + run.requested, run.metrics)
    map1, red1 = _first_round(
        run.cube, FirstRound(first.words, config.triples, RUN_METHOD, run.metrics, run.baselines,
                             statistics=run.statistics),
        _first_reduce, FamilyReduce(first.labels, first.sizes, run.metrics,
                                    [s.names for s in first.sets], config.clusters),
        ["topic", "case", "sys", "bits", "plain"], run.n_reduce)
    found1: Dict[str, FirstFound] = {}
    peers: Dict[str, List[str]] = {}
    for key, kind, value in rd.collect(red1, ["driver", "peers"]):
        (found1 if kind == "driver" else peers)[key] = value
    return first, map1, red1, found1, peers


def _run_subsets(run: _Run, first: Family, map1, found1: Dict[str, FirstFound]):
    """Round 2, each task's subsets (made on the executors from its
    representatives) with round 1's kernel records ``map1``: (the kernel's
    and the reduce's records, each task's :class:`SubsetsFound`)."""
    config = run.config
    plans = {task: tuple(sorted(set(value.reps))) for task, value in sorted(found1.items())}
    ctx = rd.broadcast(run.cube.spark, SubsetsRound(
        plans, tuple(run.metrics), config.triples, RUN_METHOD, first.labels, first.sizes,
        run.cube.judged, run.statistics))
    map2 = cache.persist(rd.over_topics(run.cube.frame, _subsets_kernel, ctx, _combine_subsets))
    inputs = rd.of_kinds(map1, ["topic", "case", "sys"]).unionByName(
        rd.of_kinds(map2, ["case", "sys2"]))
    red2 = cache.persist(rd.reduce_by_key(inputs, _subsets_reduce, run.n_reduce, ctx))
    found2 = {key: value for key, _, value in rd.collect(red2, ["driver"])}
    return map2, red2, found2


def _run_detailed(run: _Run, found1: Dict[str, FirstFound], found2: Dict[str, SubsetsFound],
                  peers: Dict[str, List[str]]):
    """Round 3, each task's detailed sets (its best set, its representatives,
    the requested sets): (each task's sets, the kernel's and the reduce's
    records, each task's :class:`BestPrinted`)."""
    config, metrics = run.config, run.metrics
    best = {task: v.best for task, v in found2.items()}
    own = {task: [*([best[task]] if task in best else []), *run.requested,
                  *(MetricSet([r]) for r in (found1[task].reps if task in found1 else ()))]
           for task in sorted(set(peers) | set(found1) | set(found2))}
    detailed = DetailedSets.of(own, metrics, run.requested)
    orders = {task: peer_orders(names, config.jack_orders, config.seed)
              for task, names in peers.items() if names}
    judged = run.cube.judged
    map3, red3 = _detail_round(run.cube, DetailRound(
        detailed, config.triples, RUN_METHOD, orders, metrics, run.baselines,
        [metrics[i] for i in run.baselines], best, judged,
        StatisticsContext(judged, best, detailed) if run.wanted else None), run.n_reduce)
    found3 = {key: value for key, _, value in rd.collect(red3, ["driver"])}
    return own, map3, red3, found3


def _qarla_tables(run: _Run, red1, red2, red3, map3) -> Dict[str, Any]:
    """The stage's tables: those of a few rows per task, written together by
    the executors (the driver holds none of them, whatever the number of
    tasks); the QUEEN rows, per topic, on their own."""
    judged = run.cube.judged
    names2 = ["king", "orange", "king_topics"] + (["king_pearson"] if judged else [])
    names3 = ["systems", "jack", "jack_curve", "human_test"] + (["correlations"] if judged
                                                                  else [])
    small = rd.of_kinds(red1, ["king", "orange", "clusters"]).unionByName(
        rd.of_kinds(red2, names2)).unionByName(rd.of_kinds(red3, names3))
    return {**rd.records_tables(small, ["king", "orange", "clusters", *names2[2:], *names3]),
            **rd.records_tables(map3, ["queen"])}


def _task_results(found1: Dict[str, FirstFound], found2: Dict[str, SubsetsFound],
                  found3: Dict[str, BestPrinted], skipped: Dict[str, Dict[str, tuple]]):
    """(each task's :class:`TaskQarla`, each task's :class:`TaskPlan`) from
    what the three rounds told the driver."""
    results, plans = [], {}
    for task in sorted(found2):
        v1, v2 = found1[task], found2[task]
        kings = {MetricSet.parse(label): value for label, value in v1.kings.items()}
        singles = {s: v for s, v in kings.items() if s.size == 1}
        top_single = best_of(singles)
        v3 = found3.get(task)
        if v3 is None:      # no detailed best set: nothing printed of it
            v3 = BestPrinted([], {}, {}, float("nan"))
        results.append(TaskQarla(
            task, v2.best, v2.best_king, top_single, singles[top_single], v1.reps,
            v1.clusters, v3.jack, v3.ranking, v3.agreement, v3.human_first,
            skipped.get(task, {})))
        plans[task] = TaskPlan(v2.best, top_single, tuple(MetricSet([r]) for r in v1.reps))
    return results, plans
