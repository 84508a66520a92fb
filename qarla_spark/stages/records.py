"""The QARLA and HBR stages' own records between their rounds (issue 37):
one frozen type per record kind, built and read by field name, pickled
between a round's kernel, its per-partition combiner, its reduce and the
driver as the tuples they are; and the named rows of the tables whose rows
a stage reads back (their fields are the declared table's columns, then
the extra fields the stage reads; :func:`~qarla_spark.spark.rounds.
table_record` keeps the columns). Below the QARLA and HBR stages and what
the statistics read of them (:mod:`~qarla_spark.stages.statistics_inputs`),
which all import it.

A record's inner rows that are many (a topic's HBR ratios, its
heterogeneity-curve pairs, its AUC counts per criterion) stay plain tuples,
unpacked by name where they are read: a named type there would pickle a
reference per row.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

# ---------------------------------------------------------------------------
# the QARLA stage: round 1 (singles, requested sets, clustering)
# ---------------------------------------------------------------------------


class TopicPeers(NamedTuple):
    """``topic``: a topic's peers (the JACK curve's systems) and its
    judgments (the cube's :func:`~qarla_spark.stages.cube.judged_arrays`,
    or None)."""

    topic: str
    peers: List[str]
    judged: Optional[dict]


class PeerCounts(NamedTuple):
    """``sys`` (round 1's sets), ``sys2`` (a task's subsets): each peer's
    QUEEN counts with all models, a row of ``num`` per set family, its
    denominator, and how many topics the row sums: 1 from a kernel; once
    combined (:class:`~qarla_spark.measures.qarla_task.PeerSums`), the
    exact sums of the doubles num / den as ``real`` (peers × pieces × sets,
    :func:`~qarla_spark.measures.exact.fixed_parts`), ``num`` and ``den``
    None."""

    peer: List[str]
    num: Optional[np.ndarray]
    den: Optional[List[int]]
    count: List[int]
    real: Optional[np.ndarray] = None


class KingCases(NamedTuple):
    """``case``: KING's cases of one topic for the sets of ``family`` (0:
    round 1's, 1: the task's subsets): the wins and ``n_le`` per set, of
    ``den`` models and ``n_pairs`` (models × peers) pairs, and the
    criteria the topic is judged on (the statistics' KING against the
    judges)."""

    topic: str
    family: int
    win: np.ndarray
    n_le: np.ndarray
    den: int
    n_pairs: int
    criteria: List[str]


class PeerBits(NamedTuple):
    """``bits``: the peers' QUEEN samples of a topic (or of a partition's
    topics, combined) as bit slices over the metrics, ``n`` samples."""

    slices: np.ndarray
    n: int


class PlainCounts(NamedTuple):
    """``plain``: ORANGE of the plain scores, per metric the (peer, model)
    pairs where the peer is not above the model, of ``n_pairs``."""

    n_le: np.ndarray
    n_pairs: int


class FirstFound(NamedTuple):
    """Round 1's ``driver``: a task's KING by set label, its
    representatives and clusters (metric names)."""

    kings: Dict[str, float]
    reps: List[str]
    clusters: List[List[str]]


class PeerScoreRow(NamedTuple):
    """A row of :func:`~qarla_spark.stages.qarla.evaluate_sets`'
    ``peer_scores``: a peer's mean QUEEN with all models under a set."""

    task: str
    metric_set: str
    summarizer: str
    queen: float


class ClusterRow(NamedTuple):
    """A row of ``clusters/``."""

    task: str
    metric: str
    cluster: int
    representative: bool
    king: Optional[float]


# ---------------------------------------------------------------------------
# the QARLA stage: round 2 (each task's subsets)
# ---------------------------------------------------------------------------


class SubsetsFound(NamedTuple):
    """Round 2's ``driver``: a task's best set (a
    :class:`~qarla_spark.measures.metric_sets.MetricSet`) and its KING."""

    best: Any
    best_king: float


# ---------------------------------------------------------------------------
# the QARLA stage: round 3 (the detailed sets)
# ---------------------------------------------------------------------------


class TopicDetail(NamedTuple):
    """``detail``: one topic's counts under its task's detailed sets — the
    peers' QUEEN with all models (``full_num`` peers × sets over
    ``full_den``), with each model held out (``jk_num`` peers × models ×
    sets over ``jk_den``, when ``jackknifed``), each model's own QUEEN
    (``own_num`` over ``own_den``), JACK's covered models per set of
    ``n_models``, its curve over ``n_orders`` seeded orders (or None), the
    topic's judgments, whether KING is defined there and the plain
    baselines' (peer, model) scores by metric (or None)."""

    topic: str
    peers: List[str]
    models: List[str]
    full_num: np.ndarray
    full_den: np.ndarray
    jackknifed: bool
    jk_num: Any
    jk_den: Any
    own_num: Any
    own_den: Any
    jack: np.ndarray
    n_models: int
    curve: Optional[np.ndarray]
    n_orders: int
    judged: Optional[dict]
    king: bool
    plain: Optional[Dict[str, Tuple[np.ndarray, np.ndarray]]] = None


class SystemRow(NamedTuple):
    """A row of ``systems/`` (its columns) and the summarizer's exact rank
    under the set (``position``; ``above_peers``: a model strictly above
    every peer), what the run prints of the best set."""

    task: str
    summarizer: str
    role: str
    metric_set: str
    queen: Optional[float]
    queen_full: Optional[float]
    position: Optional[int]
    above_peers: Optional[bool]


class JackRow(NamedTuple):
    """A row of ``jack/``."""

    task: str
    metric_set: str
    jack: float


class JackCurveRow(NamedTuple):
    """A row of ``jack_curve/``."""

    task: str
    metric_set: str
    n_peers: int
    jack: float


class CorrelationsRow(NamedTuple):
    """A row of ``correlations/`` (and ``hbr_correlations/``, whose
    ``metric_set`` column is ``measure_set``)."""

    task: str
    metric_set: str
    criterion: str
    level: str
    pearson: float
    spearman: float
    kendall: float


class HumanTestRow(NamedTuple):
    """A row of ``human_test/``."""

    task: str
    measure: str
    held_out_model: str
    ranked_first: bool


class BestPrinted(NamedTuple):
    """Round 3's ``driver``: what the run prints of a task's best set — its
    ranking of the systems (:class:`~qarla_spark.stages.qarla.Ranked`, best
    first), its system-level agreement with each criterion (r, rho, tau),
    how often a held-out model comes first by measure (first, models), its
    JACK."""

    ranking: List[Any]
    agreement: Dict[str, tuple]
    human_first: Dict[str, tuple]
    jack: float


# ---------------------------------------------------------------------------
# the HBR stage: round 1 (the sample of pairs)
# ---------------------------------------------------------------------------


class EveryPair(NamedTuple):
    """``pairs`` (every pair, ``hbr_exact``): a topic's ``total`` ordered
    pairs as their distinct (G, L) mask words and counts."""

    total: int
    gl: np.ndarray
    c: np.ndarray


class SampledPairs(NamedTuple):
    """``pairs`` (a sample): a topic's ``total`` ordered pairs and those of
    them with the smallest keys: (key, s, s2) and their G and L masks."""

    total: int
    topic: str
    key: np.ndarray
    s: np.ndarray
    s2: np.ndarray
    g: np.ndarray
    l: np.ndarray  # noqa: E741


class PairSample(NamedTuple):
    """``sample``: a task's sample of pairs, its distinct (G, L) mask words
    and their counts, ``n`` pairs of the task's ``total``, ``exact`` when
    it holds every pair (round 2 reads it, broadcast)."""

    g: np.ndarray
    l: np.ndarray  # noqa: E741
    c: np.ndarray
    n: int
    total: int
    exact: bool


# ---------------------------------------------------------------------------
# the HBR stage: round 2 (HBR, AUC, the curve)
# ---------------------------------------------------------------------------


class HbrMeta(NamedTuple):
    """A judged topic's scored summaries and their measures, for the
    statistics' ``metric_eval/`` (:class:`HbrTopic`'s ``meta``)."""

    names: List[str]
    roles: List[str]
    x: np.ndarray
    judged: dict


class HbrTopic(NamedTuple):
    """``hbr_x``: HBR of each scored summary of a topic as a ratio, rows of
    (name, role, num, den); ``meta``: :class:`HbrMeta` when the run
    computes statistics and the topic is judged (else None)."""

    topic: str
    rows: List[tuple]
    meta: Optional[HbrMeta]


class NeedCounts(NamedTuple):
    """``needs``: the distinct sets (mask words) a topic's pairs need and
    how many pairs of the sample each splits."""

    need: np.ndarray
    n_split: np.ndarray


class AucTopic(NamedTuple):
    """``auc_topic``: a judged topic's AUC counts, rows of (criterion,
    doubled wins of every measure and HBR, pairs)."""

    topic: str
    auc: List[tuple]


class CurveTopic(NamedTuple):
    """``curve``: a judged topic's heterogeneity-curve pairs, rows of
    (criterion, [(n_split, s, s2, up), ...])."""

    topic: str
    pairs: List[tuple]


class HbrFound(NamedTuple):
    """Round 2's ``driver``: a task's AUC summary per criterion
    (:class:`~qarla_spark.stages.hbr.AucSummary`)."""

    auc: Dict[str, Any]


class HbrRow(NamedTuple):
    """A row of ``hbr/``."""

    task: str
    topic: str
    summarizer: str
    measure_set: str
    hbr: float
    std_error: float


class HbrSystemRow(NamedTuple):
    """A row of ``hbr_systems/``."""

    task: str
    summarizer: str
    role: str
    measure_set: str
    hbr: float


class TopicAucRow(NamedTuple):
    """A measure's AUC counts on one topic and criterion (what ``auc/`` and
    ``robustness/`` pool)."""

    criterion: str
    topic: str
    measure: str
    wins2: int
    n_pairs: int


class AucRow(NamedTuple):
    """A row of ``auc/``."""

    task: str
    criterion: str
    measure: str
    scope: str
    auc: float
    n_pairs: int


#: the named rows of the declared tables (their fields start with the
#: table's columns: ``tests/test_contract.py``)
TABLE_ROWS: Dict[str, type] = {
    "clusters": ClusterRow, "systems": SystemRow, "jack": JackRow,
    "jack_curve": JackCurveRow, "correlations": CorrelationsRow,
    "human_test": HumanTestRow, "hbr": HbrRow, "hbr_systems": HbrSystemRow, "auc": AucRow}
