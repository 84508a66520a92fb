"""QUEEN (SPEC §3) for many metric sets at once, full and jackknifed.

Output of :func:`queen_table` (the ``queen/`` table):

    task, topic, summarizer, role, metric_set, holdout, queen

- ``holdout`` null: QUEEN_{X,M}(a) of every peer a with the full model set
  (topics with ≥ 3 models);
- ``holdout`` = h: QUEEN_{X,M∖{h}}(e) for every peer and for h itself
  (topics with ≥ 4 models, so that M∖{h} has the 3 QUEEN needs).

How: a per-topic kernel (:func:`topic_rows`, numpy, on the executors, over
the topic cube of :func:`~qarla_spark.measures.masks.topic_cube`) builds the
topic's samples and pass-masks and counts (:func:`topic_counts`), for every
metric set at once, the passing samples of each summary; jackknife counts
are the full ones minus those of the samples whose triple contains the
held-out model. It returns KING/ORANGE cases and system scores for every
set and QUEEN rows and JACK's covered pairs for the sets asked in detail; Spark aggregates them (:mod:`~qarla_spark.measures.king`,
:func:`system_scores`, :mod:`~qarla_spark.measures.jack`).
"""

from __future__ import annotations


def queen_table(results, set_names):
    """The ``queen/`` table from :func:`topic_results` rows of kind ``queen``
    (``set_names``: set_id, metric_set)."""
    from pyspark.sql import functions as F
    return (results.filter(F.col("kind") == "queen").join(F.broadcast(set_names), "set_id")
            .select("task", "topic", "summarizer", "role", "metric_set", "holdout", "queen"))


def system_scores(queen):
    """The ``systems/`` table: task, summarizer, role, metric_set, queen, queen_full.

    ``queen`` ranks models and peers together (SPEC §3): a model h scores
    mean_t QUEEN_{M_t∖{h}}(h), a peer a mean_t mean_h QUEEN_{M_t∖{h}}(a).
    ``queen_full`` is a peer's mean over topics of QUEEN with all models
    (null for models)."""
    from pyspark.sql import functions as F

    jk = queen.filter(F.col("holdout").isNotNull())
    per_topic = (jk.groupBy("task", "topic", "summarizer", "role", "metric_set")
                 .agg(F.avg("queen").alias("q")))
    ranked = (per_topic.groupBy("task", "summarizer", "role", "metric_set")
              .agg(F.avg("q").alias("queen")))
    full = (queen.filter(F.col("holdout").isNull())
            .groupBy("task", "summarizer", "metric_set").agg(F.avg("queen").alias("queen_full")))
    return ranked.join(full, ["task", "summarizer", "metric_set"], "full_outer").select(
        "task", "summarizer", F.coalesce("role", F.lit("peer")).alias("role"), "metric_set",
        "queen", "queen_full")


# ---------------------------------------------------------------------------
# many metric sets at once: a per-topic kernel (numpy) + Spark aggregations
# ---------------------------------------------------------------------------

#: the one-pass ("zeta") method handles families of sets whose metrics number
#: at most this (2^12 mask counts per summary and held-out model).
ZETA_MAX_BITS = 12
METHODS = ("auto", "direct", "zeta")


def superset_sums(hist):
    """F[..., S] = Σ_{T ⊇ S} hist[..., T] over the last axis (length 2^u),
    the zeta transform: u passes of additions (a new array)."""
    import numpy as np
    out = np.array(hist, copy=True)
    size = out.shape[-1]
    u = size.bit_length() - 1
    lead = out.shape[:-1]
    for j in range(u):
        view = out.reshape(*lead, size >> (j + 1), 2, 1 << j)
        view[..., 0, :] += view[..., 1, :]
    return out


def topic_counts(roles, values, set_words, triples: str = "standard", method: str = "auto"):
    """Integer counts behind QUEEN for one topic and every metric set (pure
    numpy): the sufficient statistics of :func:`topic_queen`.

    Returns ``peers``, ``models`` (summary indices) and

    - ``n_e`` (n_summaries): samples of each summary e (full model set);
    - ``pass_e`` (n_summaries × n_sets): those whose mask contains the set;
    - ``n_eh`` (|A| × |M|), ``pass_eh`` (|A| × |M| × n_sets): the same
      restricted to the peer's samples whose triple contains model h.

    ``method``: ``direct`` tests every sample against every set;
    ``zeta`` (SPEC §6's one pass) counts each summary's samples per distinct
    mask restricted to the metrics the sets use, then sums over supersets
    (needs at most :data:`ZETA_MAX_BITS` such metrics); ``auto`` picks zeta
    when it applies and the sets are many. Both give identical counts.
    """
    import numpy as np

    from qarla_spark.measures.masks import WORD_BITS, set_indices, topic_sample_masks

    roles = np.asarray(roles)
    peers = np.flatnonzero(roles == "peer")
    models = np.flatnonzero(roles == "model")
    n = len(roles)
    e, m, m1, m2, words = topic_sample_masks(roles, values, triples)
    n_sets = len(set_words)
    set_words = np.asarray(set_words, dtype=np.int64).reshape(n_sets, -1) if n_sets \
        else np.zeros((0, words.shape[1]), dtype=np.int64)
    indices = set_indices(set_words)
    used = sorted({i for idx in indices for i in idx})
    if method == "auto":
        method = "zeta" if len(used) <= ZETA_MAX_BITS and n_sets > 2 * len(used) else "direct"
    if method not in ("direct", "zeta"):
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    contains = [(m == h) | (m1 == h) | (m2 == h) for h in models]
    n_e = np.bincount(e, minlength=n).astype(np.int64)
    n_eh = np.stack([np.bincount(e[c], minlength=n) for c in contains], axis=1)[peers] \
        if len(models) else np.zeros((len(peers), 0), dtype=np.int64)
    if method == "zeta":
        if len(used) > ZETA_MAX_BITS:
            raise ValueError(f"the zeta method handles at most {ZETA_MAX_BITS} metrics, "
                             f"these sets use {len(used)}")
        u = len(used)
        code = np.zeros(len(e), dtype=np.int64)
        for j, i in enumerate(used):
            code |= ((words[:, i // WORD_BITS] >> (i % WORD_BITS)) & 1) << j
        size = 1 << u
        full = superset_sums(np.bincount(e * size + code, minlength=n * size).reshape(n, size))
        with_h = np.stack([np.bincount(e[c] * size + code[c], minlength=n * size)
                           .reshape(n, size)[peers] for c in contains], axis=1) \
            if len(models) else np.zeros((len(peers), 0, size), dtype=np.int64)
        with_h = superset_sums(with_h)
        pos = {i: j for j, i in enumerate(used)}
        codes = np.array([sum(1 << pos[i] for i in idx) for idx in indices],
                         dtype=np.int64)
        return {"peers": peers, "models": models, "n_e": n_e, "pass_e": full[:, codes],
                "n_eh": n_eh, "pass_eh": with_h[:, :, codes]}
    pass_e = np.zeros((n, n_sets), dtype=np.int64)
    pass_eh = np.zeros((len(peers), len(models), n_sets), dtype=np.int64)
    order = np.argsort(e, kind="stable")
    bounds = np.searchsorted(e[order], np.arange(n + 1))
    contains_m = np.stack(contains, axis=1) if len(models) else np.zeros((len(e), 0), bool)
    peer_pos = {int(a): k for k, a in enumerate(peers)}
    for lo_set in range(0, n_sets, 256):   # memory ~ samples × 256 whatever n_sets
        block = set_words[lo_set:lo_set + 256]
        ok = np.ones((len(e), len(block)), dtype=bool)
        for w in range(block.shape[1]):
            x = block[:, w][None, :]
            ok &= (words[:, w][:, None] & x) == x
        ok = ok[order]
        sums = np.add.reduceat(ok.astype(np.int64), bounds[:-1], axis=0) if len(e) \
            else np.zeros((n, len(block)), dtype=np.int64)
        sums[bounds[:-1] == bounds[1:]] = 0          # summaries without samples
        pass_e[:, lo_set:lo_set + 256] = sums
        for a, k in peer_pos.items():
            rows = order[bounds[a]:bounds[a + 1]]
            pass_eh[k, :, lo_set:lo_set + 256] = (contains_m[rows].T.astype(np.float64)
                                                  @ ok[bounds[a]:bounds[a + 1]]
                                                  .astype(np.float64)).astype(np.int64)
    return {"peers": peers, "models": models, "n_e": n_e, "pass_e": pass_e,
            "n_eh": n_eh, "pass_eh": pass_eh}


def topic_queen(roles, values, set_words, triples: str = "standard", method: str = "auto"):
    """QUEEN of one topic for every metric set at once (pure numpy).

    ``values[s, r, i]``: metric i of the ordered pair (s, r); ``roles[s]``;
    ``set_words``: (n_sets × n_words) int64 masks of the sets. Returns a dict:

    - ``peers``, ``models``: summary indices;
    - ``full``: (|A| × n_sets) QUEEN_{X,M}(a) (None if |M| < 3);
    - ``jk_peers``: (|A| × |M| × n_sets) QUEEN_{X,M∖{h}}(a), ``jk_models``:
      (|M| × n_sets) QUEEN_{X,M∖{h}}(h) (None unless |M| ≥ 4).

    From the counts of :func:`topic_counts`: QUEEN_{X,M}(e) = pass_e / n_e;
    a held-out h removes the samples whose triple contains h, so
    QUEEN_{X,M∖{h}}(a) = (pass_e − pass_eh) / (n_e − n_eh); a model h's own
    samples never contain h, so QUEEN_{X,M∖{h}}(h) = pass_e[h] / n_e[h].
    """
    import numpy as np

    roles = np.asarray(roles)
    peers = np.flatnonzero(roles == "peer")
    models = np.flatnonzero(roles == "model")
    out = {"peers": peers, "models": models, "full": None, "jk_peers": None, "jk_models": None}
    if len(models) < 3:
        return out
    c = topic_counts(roles, values, set_words, triples, method)
    n_e = c["n_e"].astype(np.float64)[:, None]
    out["full"] = c["pass_e"][peers] / n_e[peers]
    if len(models) >= 4:
        out["jk_peers"] = ((c["pass_e"][peers][:, None, :] - c["pass_eh"])
                           / (n_e[peers][:, None, :] - c["n_eh"][:, :, None]))
        out["jk_models"] = c["pass_e"][models] / n_e[models]
    return out


RESULT_SCHEMA = ("kind string, task string, topic string, summarizer string, role string, "
                 "set_id int, holdout string, queen double, win long, n_cases long, "
                 "n_le long, n_peers long, o int, k_first int")


def topic_rows(task, topic, names, roles, values, set_words, detailed, triples="standard",
               method="auto", orders=()):
    """The result rows of one topic (a pandas frame, columns of
    :data:`RESULT_SCHEMA`; see :func:`topic_results`)."""
    import numpy as np
    import pandas as pd

    res = topic_queen(roles, values, set_words, triples, method)
    peers, models = res["peers"], res["models"]
    if res["full"] is None:
        return None
    n_sets = res["full"].shape[1]
    parts = []
    # system scores of every set: each peer's QUEEN with all models
    parts.append(pd.DataFrame({
        "kind": "sys", "summarizer": np.repeat(names[peers], n_sets), "role": "peer",
        "set_id": np.tile(np.arange(n_sets), len(peers)), "queen": res["full"].ravel()}))
    d = np.asarray(sorted(set(detailed)), dtype=np.int64)
    if len(d):
        parts.append(pd.DataFrame({
            "kind": "queen", "summarizer": np.repeat(names[peers], len(d)), "role": "peer",
            "set_id": np.tile(d, len(peers)), "queen": res["full"][:, d].ravel()}))
        parts.append(_cover_rows(names, peers, models, values, res["full"], set_words, d,
                                 orders))
    if res["jk_models"] is not None:
        jk, qh = res["jk_peers"], res["jk_models"]          # A×M×S, M×S
        if len(peers):
            win = (qh > jk.max(axis=0)).sum(axis=0)          # S
            n_le = (jk <= qh[None, :, :]).sum(axis=(0, 1))   # S
            parts.append(pd.DataFrame({
                "kind": "case", "set_id": np.arange(n_sets), "win": win.astype(np.int64),
                "n_cases": len(models), "n_le": n_le.astype(np.int64),
                "n_peers": len(models) * len(peers)}))
        if len(d):
            parts.append(pd.DataFrame({
                "kind": "queen", "summarizer": np.repeat(names[models], len(d)),
                "role": "model", "set_id": np.tile(d, len(models)),
                "holdout": np.repeat(names[models], len(d)), "queen": qh[:, d].ravel()}))
            parts.append(pd.DataFrame({
                "kind": "queen", "summarizer": np.repeat(names[peers], len(models) * len(d)),
                "role": "peer", "set_id": np.tile(d, len(peers) * len(models)),
                "holdout": np.tile(np.repeat(names[models], len(d)), len(peers)),
                "queen": jk[:, :, d].ravel()}))
    parts = [p for p in parts if len(p)]
    if not parts:
        return None
    out = pd.concat(parts, ignore_index=True)
    out["task"], out["topic"] = task, topic
    columns = [f.split()[0] for f in RESULT_SCHEMA.split(", ")]
    for c in columns:
        if c not in out:
            out[c] = None
    for c in ("win", "n_cases", "n_le", "n_peers", "o", "k_first"):
        out[c] = out[c].astype("Int64")
    return out[columns]


def _cover_rows(names, peers, models, values, full, set_words, detailed, orders=()):
    """JACK (SPEC §5) for the detailed sets. A peer pair a ≠ a' covers model
    m when QUEEN_M(a) > 0, QUEEN_M(a') > 0 and, for every metric x of the
    set, x(a, a') ≤ x(a, m) and x(a', a) ≤ x(a', m). Rows: ``cover``
    (holdout = m, set_id) for each covered model; ``first`` (holdout = m,
    set_id, o, k_first) for each order o of ``orders`` (lists of the task's
    peer systems): the smallest k such that a covering pair is among the
    first k systems (the JACK growth curve)."""
    import numpy as np
    import pandas as pd

    from qarla_spark.measures.masks import set_indices

    idx_of = set_indices(np.asarray(set_words)[detailed])
    v_pp = values[np.ix_(peers, peers)]                       # A × A × k
    v_pm = values[np.ix_(peers, models)]                      # A × M × k
    # ok[a, a2, m, i] = x_i(a, a2) <= x_i(a, m) and x_i(a2, a) <= x_i(a2, m)
    one = v_pp[:, :, None, :] <= v_pm[:, None, :, :]
    ok = one & one.transpose(1, 0, 2, 3)
    upper = np.triu(np.ones((len(peers), len(peers)), dtype=bool), 1)
    # rank of each of the topic's peers in each order (1-based)
    ranks = np.array([[order.index(x) + 1 for x in names[peers]] for order in orders],
                     dtype=np.int64).reshape(len(orders), len(peers))
    pair_k = np.maximum(ranks[:, :, None], ranks[:, None, :])  # O × A × A
    big = np.iinfo(np.int64).max
    frames = []
    for s_id, idx in zip(detailed, idx_of):
        positive = full[:, s_id] > 0
        good = ok[:, :, :, idx].all(axis=3) & (upper & np.outer(positive, positive))[:, :, None]
        covered = good.any(axis=(0, 1))                         # M
        if not covered.any():
            continue
        frames.append(pd.DataFrame({"kind": "cover", "holdout": names[models[covered]],
                                    "set_id": int(s_id)}))
        if len(orders):
            k_first = np.where(good[None, :, :, :], pair_k[:, :, :, None], big).min(axis=(1, 2))
            o_idx, m_idx = np.nonzero(k_first[:, covered] < big)
            frames.append(pd.DataFrame({
                "kind": "first", "holdout": names[models[covered][m_idx]], "set_id": int(s_id),
                "o": o_idx, "k_first": k_first[:, covered][o_idx, m_idx]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def topic_results(cube, set_words, detailed, triples: str = "standard", method: str = "auto",
                  orders=None):
    """Per-topic kernel over every topic of a
    :func:`~qarla_spark.measures.masks.topic_cube` (lazy, no shuffle). Rows
    of ``kind``:

    ``case``  (topic, set_id): win = held-out models whose QUEEN beats every
              peer's, n_cases = |M|, n_le = (h, a) with QUEEN(a) ≤ QUEEN(h),
              n_peers = |M|·|A| — for every set, topics with ≥ 4 models and a
              peer (KING and ORANGE);
    ``sys``   (peer, set_id): Σ over the topics of a partition of the
              peer's QUEEN with all models (queen) and their number
              (n_cases), for every set (system scores, KING vs Pearson);
    ``queen`` QUEEN rows (holdout null: all models; else jackknifed) for the
              sets whose id is in ``detailed``;
    ``cover`` (topic, holdout = m, set_id): a peer pair satisfies JACK's
              condition for model m, for the detailed sets;
    ``first`` (topic, holdout = m, set_id, o, k_first): for each order o of
              ``orders[task]`` (seeded orders of the task's peer systems),
              the first k at which m is covered by the first k systems.
    """
    import numpy as np

    from qarla_spark.measures.masks import map_topics

    set_words = np.asarray(set_words, dtype=np.int64).reshape(len(set_words), -1) \
        if len(set_words) else np.zeros((0, 1), dtype=np.int64)
    detailed = sorted(set(detailed))

    orders = dict(orders or {})

    def kernel(task, topic, names, roles, values):
        return topic_rows(task, topic, names, roles, values, set_words, detailed, triples,
                          method, orders.get(task, ()))

    return map_topics(cube, kernel, RESULT_SCHEMA, combine=_sum_sys)


def _sum_sys(frame):
    """Partial sums of the ``sys`` rows over the topics of a batch: queen =
    Σ QUEEN, n_cases = number of topics (per task, peer and set)."""
    import warnings

    import pandas as pd
    sys_rows = frame["kind"] == "sys"
    if not sys_rows.any():
        return frame
    sums = (frame[sys_rows].groupby(["task", "summarizer", "set_id"], sort=False)["queen"]
            .agg(["sum", "count"]).reset_index())
    part = pd.DataFrame({"kind": "sys", "task": sums["task"], "topic": None,
                         "summarizer": sums["summarizer"], "role": "peer",
                         "set_id": sums["set_id"], "holdout": None, "queen": sums["sum"],
                         "win": None, "n_cases": sums["count"].astype("Int64"),
                         "n_le": None, "n_peers": None, "o": None, "k_first": None})
    rest = frame[~sys_rows]
    if len(rest):
        with warnings.catch_warnings():   # all-null columns: dtypes are fixed below
            warnings.simplefilter("ignore", FutureWarning)
            out = pd.concat([rest, part], ignore_index=True)
    else:
        out = part
    for c in ("win", "n_cases", "n_le", "n_peers", "o", "k_first"):
        out[c] = out[c].astype("Int64")
    return out
