"""What the QARLA stage computes once per task from its topics' counts (pure
numpy and exact rationals; SPEC §3-7). The per-topic counts are those of
:func:`~qarla_spark.measures.queen.queen_counts` and
:func:`~qarla_spark.measures.queen.king_cases`; here they are summed over a
task's topics and become the rows of the tables.

Every mean is exact (:mod:`~qarla_spark.measures.exact`) and rounded once,
so the values do not depend on how topics were grouped; ties are ties.
Rows are tuples in the column order of the table they belong to.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.measures import agreement, exact, exact_division
from qarla_spark.measures import human as hu
from qarla_spark.measures.king import king as king_of
from qarla_spark.names import QUEEN

# ---------------------------------------------------------------------------
# KING and ORANGE of a family of sets
# ---------------------------------------------------------------------------


def king_orange(task: str, cases: Sequence[Any], labels: Sequence[str],
                sizes: Sequence[int]) -> Tuple[List[tuple], List[tuple], Dict[int, float]]:
    """(king rows, orange rows, KING by set index) of one task from its
    topics' cases (records with fields ``win`` and ``n_le`` per set, ``den``
    = |M|, ``n_pairs`` = |M|·|A|: the QARLA stage's ``KingCases``): KING =
    exact mean over topics of wins / |M| with its Wilson interval;
    ORANGE(QUEEN) = Σ n_le / Σ n_pairs. No row without a case."""
    if not cases:
        return [], [], {}
    dens = np.asarray([c.den for c in cases], dtype=np.int64)
    wins = np.stack([np.asarray(c.win, dtype=np.int64) for c in cases])       # T × S
    n_le = np.stack([np.asarray(c.n_le, dtype=np.int64) for c in cases]).sum(axis=0)
    n_pairs = int(sum(int(c.n_pairs) for c in cases))
    by_den = [(int(d), wins[dens == d].sum(axis=0), int((dens == d).sum()))
              for d in sorted(set(dens.tolist()))]
    found = king_columns(by_den, len(labels))
    if found is None:               # counts too large for doubles: set by set
        found = [king_of((int(w[s]), d, t) for d, w, t in by_den) for s in range(len(labels))]
    kings, orange, values = [], [], {}
    for s, (label, size) in enumerate(zip(labels, sizes)):
        value, n_cases, low, high = found[s]
        values[s] = value
        kings.append((task, label, int(size), value, low, high, int(n_cases)))
        orange.append((task, label, int(size), QUEEN, float(int(n_le[s])) / float(n_pairs),
                       n_pairs))
    return kings, orange, values


def king_columns(by_den: Sequence[Tuple[int, np.ndarray, int]], n_sets: int
                 ) -> Optional[List[Tuple[float, int, float, float]]]:
    """:func:`~qarla_spark.measures.king.king` of every set at once (a task
    has ~1,000): ``by_den`` rows of (models per topic d, the sets' wins
    summed over those topics, topics). KING = Σ_d W_d·(L/d) / (L·T) with L
    the lcm of the d: one double division of integers below 2^53, so
    correctly rounded — the double of the exact mean, as ``king``'s
    fraction gives it; Wilson's interval by the same operations in the same
    order (:func:`~qarla_spark.measures.king.wilson_many`). None when a count
    reaches 2^53 (the caller goes set by set)."""
    from qarla_spark.measures.king import wilson_many
    if not by_den:
        return None
    lcm = math.lcm(*(d for d, _, _ in by_den))
    top = lcm * sum(t for _, _, t in by_den)
    if top >= 2 ** 53:
        return None
    num = np.zeros(n_sets, dtype=np.int64)
    for d, w, _ in by_den:
        num += np.asarray(w, dtype=np.int64) * (lcm // d)
    value = num.astype(np.float64) / float(top)
    n = sum(d * t for d, _, t in by_den)
    low, high = wilson_many(value, n)
    return list(zip(value.tolist(), [n] * n_sets, low.tolist(), high.tolist()))


def orange_plain(task: str, metrics: Sequence[str], plains: Sequence[Any]) -> List[tuple]:
    """``orange/`` rows of the plain scores (score ``plain``): every metric,
    Σ n_le / Σ n_pairs over the topics where KING is defined (records with
    fields ``n_le``, ``n_pairs``: the QARLA stage's ``PlainCounts``)."""
    if not plains:
        return []
    n_le = np.stack([np.asarray(p.n_le, dtype=np.int64) for p in plains]).sum(axis=0)
    n_pairs = int(sum(int(p.n_pairs) for p in plains))
    return [(task, m, 1, "plain", int(n_le[i]) / n_pairs, n_pairs)
            for i, m in enumerate(metrics)]


# ---------------------------------------------------------------------------
# system scores of every set (sums of the peers' QUEEN counts)
# ---------------------------------------------------------------------------


class PeerSums:
    """Each peer's QUEEN (all models) per metric set summed over its topics
    and how many topics the sums cover: the exact sum of the summaries'
    doubles num / den (correctly rounded: the ``queen/`` table's, the
    export's, the statistics'), as :func:`~qarla_spark.measures.exact.
    fixed_parts` pieces, so that a system's score (SPEC §3) is the exact
    mean of those doubles, rounded once (issue 39: the same double as
    ``correlations/`` and ``metric_eval/``)."""

    def __init__(self, n_sets: int):
        self.n_sets = n_sets
        self.sums: Dict[str, np.ndarray] = {}
        self.counts: Dict[str, int] = {}

    def add(self, peers: Sequence[str], num: Optional[np.ndarray], den: Optional[Sequence[int]],
            count: Sequence[int], real: Optional[np.ndarray] = None) -> "PeerSums":
        """One topic's rows (``num`` / ``den``, each ``count`` 1) or sums
        already made (``real``: pieces, peers × levels × sets, over
        ``count`` topics)."""
        if real is None:
            num = np.asarray(num, dtype=np.int64).reshape(len(peers), self.n_sets)
            den = np.asarray(den, dtype=np.int64)
            if len(peers) and not (np.asarray(count) == 1).all():
                raise ValueError("a PeerCounts row without its sums is one topic's")
            real = np.moveaxis(exact.fixed_parts(num / den[:, None]), 0, 1)
        for k, name in enumerate(peers):
            name = str(name)
            if name in self.sums:
                self.sums[name] = self.sums[name] + real[k]
            else:
                self.sums[name] = np.array(real[k], dtype=np.int64)
            self.counts[name] = self.counts.get(name, 0) + int(count[k])
        return self

    def merge(self, other: "PeerSums") -> "PeerSums":
        for name, value in other.sums.items():
            self.sums[name] = self.sums[name] + value if name in self.sums else value.copy()
            self.counts[name] = self.counts.get(name, 0) + other.counts[name]
        return self

    def to_value(self) -> dict:
        """The sums as the fields of a record (``peer``, ``count``,
        ``real``; ``num`` and ``den`` None: the QARLA stage's
        ``PeerCounts``)."""
        names = sorted(self.sums)
        return {"peer": names, "num": None, "den": None,
                "count": [self.counts[n] for n in names],
                "real": (np.stack([self.sums[n] for n in names]) if names
                         else np.zeros((0, exact.FIXED_LEVELS, self.n_sets), dtype=np.int64))}

    def matrix(self) -> Tuple[Tuple[str, ...], np.ndarray]:
        """(peers sorted, peers × sets float64): :meth:`means` as one
        array (the rows in the peers' order)."""
        means = self.means()
        names = tuple(means)
        values = (np.stack([np.asarray(means[n], dtype=np.float64) for n in names]) if names
                  else np.zeros((0, self.n_sets), dtype=np.float64))
        return names, values

    @classmethod
    def of_values(cls, n_sets: int, values: Iterable[Any]) -> "PeerSums":
        """The sums of records with fields ``peer``, ``num``, ``den``,
        ``count``, ``real`` (the QARLA stage's ``PeerCounts``)."""
        out = cls(n_sets)
        topics = []
        for v in values:
            if getattr(v, "real", None) is None:
                topics.append(v)        # one topic's counts: their pieces made together
            else:
                out.add(v.peer, v.num, v.den, v.count, v.real)
        return out.add_topics(topics)

    def add_topics(self, rows: Sequence[Any]) -> "PeerSums":
        """:meth:`add` of many one-topic rows (fields ``peer``, ``num``,
        ``den``, ``count``) at once: the doubles num / den of all of them
        cut in pieces in one :func:`~qarla_spark.measures.exact.fixed_parts`
        call and summed per peer (integers: the same sums in any order), not
        a call and a sum per topic and peer."""
        names: List[str] = []
        nums, dens = [], []
        for v in rows:
            if not len(v.peer):
                continue
            if not (np.asarray(v.count) == 1).all():
                raise ValueError("a PeerCounts row without its sums is one topic's")
            names += [str(p) for p in v.peer]
            nums.append(np.asarray(v.num, dtype=np.int64).reshape(len(v.peer), self.n_sets))
            dens.append(np.asarray(v.den, dtype=np.int64).reshape(-1))
        if not names:
            return self
        num, den = np.concatenate(nums), np.concatenate(dens)
        real = exact.fixed_parts(num / den[:, None])                 # L × rows × S
        unique, inverse = np.unique(np.asarray(names, dtype=object), return_inverse=True)
        inverse = inverse.ravel()
        order = np.argsort(inverse, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
        sums = np.add.reduceat(real[:, order], starts, axis=1)       # L × peers × S
        counts = np.bincount(inverse, minlength=len(unique))
        for k, name in enumerate(unique.tolist()):
            if name in self.sums:
                self.sums[name] = self.sums[name] + sums[:, k]
            else:
                self.sums[name] = np.ascontiguousarray(sums[:, k])
            self.counts[name] = self.counts.get(name, 0) + int(counts[k])
        return self

    def means(self) -> Dict[str, np.ndarray]:
        """peer -> (n_sets,) float: the exact mean over its topics of its
        QUEEN's doubles, per set, rounded once — every peer and set in one
        compiled pass (:func:`~qarla_spark.measures.exact_division.quotients`:
        the pieces' long division by the count, rounded half to even, as
        Python's integers divide), Python's integers only where it leaves
        an entry (``done`` False) or does not run."""
        names = sorted(self.sums)
        if not names:
            return {}
        sums = np.stack([np.asarray(self.sums[n], dtype=np.int64) for n in names])  # P × L × S
        counts = np.asarray([self.counts[n] for n in names], dtype=np.int64)
        found = exact_division.quotients(
            [(exact.FIXED_CHUNK * level, sums[:, level, :]) for level in range(sums.shape[1])],
            -exact.FIXED_BITS, np.broadcast_to(counts[:, None], (len(names), self.n_sets)))
        values, done = found if found is not None else (None, None)
        out = {}
        for k, name in enumerate(names):
            if done is not None and done[k].all():
                out[name] = values[k].copy()
                continue
            total = exact.fixed_value(self.sums[name])
            out[name] = exact.divide(total[None, :], np.asarray(
                [self.counts[name] << exact.FIXED_BITS], dtype=object))[0]
        return out


def human_means(judged: Iterable[Optional[dict]]) -> Dict[str, Dict[str, float]]:
    """criterion -> summarizer -> the exact mean of its human scores'
    readings over the given topics' judgments (arrays of ``summarizer``,
    ``criterion``, ``score``), rounded once (:mod:`~qarla_spark.measures.
    human`: thirds as thirds)."""
    keys, scores = [], []
    for j in judged:
        if j is None:
            continue
        for name, criterion, score in zip(j["summarizer"], j["criterion"], j["score"]):
            keys.append((str(criterion), str(name)))
            scores.append(float(score))
    means = hu.means_by_key(keys, scores)
    out: Dict[str, Dict[str, float]] = {}
    for (criterion, name), mean in sorted(means.items()):
        out.setdefault(criterion, {})[name] = mean
    return out


def king_pearson_rows(task: str, kings: Mapping[str, Tuple[int, float]],
                      blocks: Sequence[Tuple[Sequence[str], Sequence[str], np.ndarray]],
                      human: Mapping[str, Mapping[str, float]]) -> List[tuple]:
    """``king_pearson/`` rows of one task (paper 000, Fig. 5): for every set
    with a KING (``kings``: label -> (n_metrics, KING)) and system scores,
    per criterion of ``human`` (criterion -> summarizer -> mean score): the
    Pearson between the set's system scores and the systems' human scores
    over the systems with both, null with fewer than 2 of them or a
    constant side. The system scores come as ``blocks`` (labels, peers,
    values): ``values[i, p]`` the mean QUEEN of ``peers[p]`` (sorted) under
    set ``labels[i]`` (:meth:`PeerSums.matrix`; a label in two blocks: the
    later one's). Sets with the same systems are computed together, in
    label order; a set's row is gathered from its block's matrix by
    position (no dictionary per set and criterion: a task has ~1,000 sets)."""
    where: Dict[str, Tuple[int, int]] = {}
    for b, (labels, _, _) in enumerate(blocks):
        for i, label in enumerate(labels):
            where[str(label)] = (b, i)
    order = sorted(where)
    if not order:
        return []
    # each label's block and row (in label order), its KING row's fields;
    # made once, not per criterion
    block_of = np.asarray([where[label][0] for label in order], dtype=np.intp)
    row_of = np.asarray([where[label][1] for label in order], dtype=np.intp)
    fields = [(label, int(kings[label][0]), kings[label][1]) if label in kings else None
              for label in order]
    first_of = {}                   # a block's first position in label order
    for p, b in enumerate(block_of.tolist()):
        first_of.setdefault(b, p)
    out = []
    for criterion in sorted(human):
        y_of = human[criterion]
        # each block's systems with a human score (its peers are sorted)
        columns = []
        for _, peers, _ in blocks:
            systems = tuple(sorted(n for n in peers if n in y_of))
            at = {n: p for p, n in enumerate(peers)}
            columns.append((systems, np.asarray([at[n] for n in systems], dtype=np.intp)))
        # the blocks of the same systems make one group of sets, the groups
        # in the order of their first label, the sets in label order
        by_systems: Dict[tuple, List[int]] = {}
        for b in sorted(first_of, key=first_of.get):
            if columns[b][0]:
                by_systems.setdefault(columns[b][0], []).append(b)
        for systems, group in by_systems.items():
            mine_all = np.flatnonzero(np.isin(block_of, group))
            x = np.empty((len(mine_all), len(systems)), dtype=np.float64)
            for b in group:
                mine = np.flatnonzero(block_of[mine_all] == b)
                values = np.asarray(blocks[b][2], dtype=np.float64)
                x[mine] = values[row_of[mine_all[mine]]][:, columns[b][1]]
            y = np.asarray([y_of[n] for n in systems], dtype=np.float64)
            r = agreement.correlation_rows(list(systems), x, np.tile(y, (len(mine_all), 1)),
                                           min_n=agreement.MIN_POINTS, kinds=("pearson",))[:, 0]
            isfinite = math.isfinite
            out += [(task, *f, criterion, v if isfinite(v) else None)
                    for f, v in zip([fields[p] for p in mine_all.tolist()], r.tolist())
                    if f is not None]
    return out


# ---------------------------------------------------------------------------
# the detailed sets: systems, JACK, its curve, correlations, the human test
# ---------------------------------------------------------------------------


def system_rows(task: str, label: str, jk: Mapping[Tuple[str, str, str], exact.Mean],
                full: Mapping[str, exact.Mean]) -> List[tuple]:
    """``systems/`` rows of one (task, set), exactly (SPEC §3): ``jk`` maps
    (summarizer, role, topic) to the exact mean of its jackknifed QUEEN in
    the topic (a model h: QUEEN_{M∖{h}}(h); a peer: its mean over held-out
    models); a summarizer's score is the mean of those over its topics,
    ranked exactly (1 = best, ties by name; ``above_peers`` for models).
    ``full``: a peer's QUEEN with all models, averaged over its topics
    (``queen_full``). Rows: (task, summarizer, role, metric_set, queen,
    queen_full, position, above_peers)."""
    means: Dict[Tuple[str, str], exact.Mean] = {}
    for (name, role, _), mean in jk.items():
        means.setdefault((name, role), exact.Mean()).add_fraction(mean.value())
    scores = {k: m.value() for k, m in means.items()}
    ranked = agreement.rank_exact(scores)
    out = []
    for (name, role), value in scores.items():
        f = full.get(name) if role == "peer" else None
        position, above = ranked[(name, role)]
        out.append((task, name, role, label, exact.to_float(value),
                    None if f is None else exact.to_float(f.value()), position, above))
    for name, f in full.items():
        if (name, "peer") not in scores:    # a peer of topics without a jackknife only
            out.append((task, name, "peer", label, None, exact.to_float(f.value()), None, None))
    return out


def human_first(task: str, measure: str, holdout: str,
                scores: Mapping[Tuple[str, str], exact.Mean]) -> Optional[tuple]:
    """The human-summariser test of one held-out model h under one measure
    (``scores``: (summarizer, role) -> its exact mean score with h held out):
    (task, measure, h, h's mean is strictly above every system's), or None
    without h or without a system."""
    own = scores.get((holdout, "model"))
    peers = [m.value() for (_, role), m in scores.items() if role == "peer"]
    if own is None or not peers:
        return None
    return (task, measure, holdout, agreement.ranked_first(own.value(), peers))


def ratio_mean(rows: Iterable[Tuple[int, int]]) -> float:
    """The exact mean of ratios (num, den), rounded once."""
    mean = exact.Mean()
    for num, den in rows:
        mean.add_ratio(int(num), int(den))
    return exact.to_float(mean.value())
