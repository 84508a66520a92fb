"""Every count the QARLA stage aggregates, for one topic (pure: numpy in,
a pandas frame of :data:`RESULT_SCHEMA` out).

Rows by ``kind`` (``set_id`` indexes the metric sets given as mask words;
``num / den`` is always a ratio of counts, averaged exactly later):

``case``   (set_id) topics that enter KING (≥ 4 models and a peer), every
           set: num = held-out models whose QUEEN beats every peer's,
           den = |M| (KING); n_le = (h, a) with QUEEN(a) ≤ QUEEN(h),
           n_pairs = |M|·|A| (ORANGE);
``sys``    (summarizer, set_id) every peer and set: num = passing samples
           with all models, den = samples, count = 1 — summed per batch of
           topics by :func:`sum_sys` (system scores, KING vs Pearson);
``queen``  (summarizer, role, set_id, holdout) the detailed sets: QUEEN =
           num / den of every peer with all models (holdout null) and, in
           topics with ≥ 4 models, of every peer and of h with h held out;
``jack``   (set_id) the detailed sets: num = models covered by a pair of
           peers (SPEC §5), den = |M|;
``curve``  (set_id, n_peers = k) the detailed sets, k = 2..|A| of the task:
           num = Σ over the seeded orders of the models covered by the
           first k systems, den = orders · |M|.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from qarla_spark.measures.frames import stack
from qarla_spark.measures.jack import covering_pairs, curve_counts, first_cover
from qarla_spark.measures.masks import set_indices
from qarla_spark.measures.queen import king_cases, queen_counts

RESULT_SCHEMA = ("kind string, task string, topic string, summarizer string, role string, "
                 "set_id int, holdout string, n_peers int, num long, den long, count long, "
                 "n_le long, n_pairs long")
COLUMNS = [f.split()[0] for f in RESULT_SCHEMA.split(", ")]
_INTS = ("set_id", "n_peers", "num", "den", "count", "n_le", "n_pairs")


def topic_rows(task, topic, names, roles, values, set_words, detailed: Sequence[int],
               triples: str = "standard", method: str = "auto",
               orders: Sequence[Sequence[str]] = ()):
    """The rows of one topic (see the module doc), or None when QUEEN is
    undefined there. ``set_words``: (n_sets × words) int64 masks;
    ``detailed``: the set ids with QUEEN, JACK and curve rows; ``orders``:
    the seeded orders of the task's peer systems (JACK curve)."""
    names = np.asarray(names, dtype=object)
    set_words = np.asarray(set_words, dtype=np.int64)
    if set_words.ndim == 1:      # a list of rows of mask words
        set_words = set_words.reshape(len(set_words), -1)
    q = queen_counts(roles, values, set_words, triples, method)
    if q is None:
        return None
    peers, models = q.peers, q.models
    n_sets = set_words.shape[0]
    d = np.asarray(sorted(set(detailed)), dtype=np.int64)
    parts = [_frame("sys", summarizer=np.repeat(names[peers], n_sets), role="peer",
                    set_id=np.tile(np.arange(n_sets), len(peers)), num=q.full_num.ravel(),
                    den=np.repeat(q.full_den, n_sets), count=1)]
    cases = king_cases(q)
    if cases is not None:
        win, n_le = cases
        parts.append(_frame("case", set_id=np.arange(n_sets), num=win, den=len(models),
                            n_le=n_le, n_pairs=len(models) * len(peers)))
    if len(d):
        parts.append(_frame("queen", summarizer=np.repeat(names[peers], len(d)), role="peer",
                            set_id=np.tile(d, len(peers)), num=q.full_num[:, d].ravel(),
                            den=np.repeat(q.full_den, len(d))))
        if q.jackknifed:
            parts.append(_frame("queen", summarizer=np.repeat(names[models], len(d)),
                                role="model", set_id=np.tile(d, len(models)),
                                holdout=np.repeat(names[models], len(d)),
                                num=q.own_num[:, d].ravel(), den=np.repeat(q.own_den, len(d))))
            parts.append(_frame("queen",
                                summarizer=np.repeat(names[peers], len(models) * len(d)),
                                role="peer", set_id=np.tile(d, len(peers) * len(models)),
                                holdout=np.tile(np.repeat(names[models], len(d)), len(peers)),
                                num=q.jk_num[:, :, d].ravel(),
                                den=np.repeat(q.jk_den.ravel(), len(d))))
        parts += _jack_rows(names, peers, models, values, q.full_num, set_words, d, orders)
    return _assemble(parts, task, topic)


def _jack_rows(names, peers, models, values, full_num, set_words, detailed, orders):
    """``jack`` and ``curve`` rows of the detailed sets (module doc)."""
    rank_of = [{name: i + 1 for i, name in enumerate(order)} for order in orders]
    ranks = np.array([[r[x] for x in names[peers]] for r in rank_of],
                     dtype=np.int64).reshape(len(orders), len(peers))
    n_systems = len(orders[0]) if len(orders) else 0
    frames = []
    for s_id, idx in zip(detailed, set_indices(set_words[detailed])):
        good = covering_pairs(values, peers, models, full_num[:, s_id] > 0, idx)
        covered = good.any(axis=(0, 1)) if len(peers) else np.zeros(len(models), bool)
        frames.append(_frame("jack", set_id=[int(s_id)], num=[int(covered.sum())],
                             den=[len(models)]))
        if n_systems >= 2:
            counts = curve_counts(first_cover(good, ranks), n_systems)
            frames.append(_frame("curve", set_id=int(s_id),
                                 n_peers=np.arange(2, n_systems + 1), num=counts,
                                 den=len(orders) * len(models)))
    return frames


@dataclass(frozen=True)
class _Part:
    """Rows of one kind: how many, and their columns (arrays, or scalars
    repeated); the other columns of :data:`COLUMNS` are null."""

    n: int
    columns: dict


def _frame(kind: str, **columns) -> _Part:
    return _Part(max(len(v) for v in columns.values() if np.ndim(v)),
                 {"kind": kind, **columns})


def _assemble(parts, task, topic):
    """The frame of :data:`COLUMNS` of the parts' rows in order, column by
    column (``pd.concat`` of frames with different columns tests every
    cell of a missing one for NA in Python: seconds per evaluation), or
    None without rows. Integer columns are nullable ``Int64``."""
    parts = [p for p in parts if p.n]
    if not parts:
        return None
    total = sum(p.n for p in parts)
    columns = {}
    for c in COLUMNS:
        if c == "task" or c == "topic":
            columns[c] = np.full(total, task if c == "task" else topic, dtype=object)
            continue
        if c in _INTS:
            values = np.zeros(total, dtype=np.int64)
            missing = np.ones(total, dtype=bool)
        else:
            values = np.full(total, None, dtype=object)
        at = 0
        for p in parts:
            if c in p.columns:
                values[at:at + p.n] = p.columns[c]
                if c in _INTS:
                    missing[at:at + p.n] = False
            at += p.n
        columns[c] = pd.arrays.IntegerArray(values, missing) if c in _INTS else values
    return pd.DataFrame(columns, columns=COLUMNS)


def sum_sys(frame: pd.DataFrame) -> pd.DataFrame:
    """Partial sums of the ``sys`` rows of a batch of topics: num and count
    summed per (task, summarizer, set_id, den) — integers, so the sums do
    not depend on how topics are batched."""
    sys_rows = frame["kind"] == "sys"
    if not sys_rows.any():
        return frame
    keys = ["task", "summarizer", "set_id", "den"]
    sums = (frame[sys_rows].groupby(keys, sort=False)[["num", "count"]].sum().reset_index())
    part = sums.assign(kind="sys", topic=None, role="peer", holdout=None, n_peers=None,
                       n_le=None, n_pairs=None)[COLUMNS]
    for c in _INTS:
        part[c] = part[c].astype("Int64")
    if not (~sys_rows).any():
        return part
    rest = frame[~sys_rows][COLUMNS].copy()
    for c in _INTS:
        rest[c] = rest[c].astype("Int64")
    return stack([rest, part], COLUMNS)

