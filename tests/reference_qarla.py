"""Brute-force reference implementation of QUEEN, KING, ORANGE and JACK.

Written straight from SPEC §3–§5 with plain Python loops, independently of
``qarla_spark.measures``, so that the test suite can check the Spark
implementation against it on small testbeds. Obviously-correct over fast:
no masks, no numpy, no Spark.

Inputs
------
- ``sim``: similarity lookup ``sim[(task, topic, s, r, metric)] = x(s, r)``
  (``r`` plays the reference), or a pandas DataFrame with columns
  ``task, topic, summarizer_s, summarizer_r, metric, value``
  (see :func:`sim_from_frame`). A missing value raises ``KeyError``.
- ``roles``: ``roles[(task, topic, summarizer)] = "model" | "peer"``, or a
  pandas summaries DataFrame with columns ``task, topic, summarizer, role``
  (see :func:`roles_from_frame`).
- ``X``: a non-empty iterable of metric names (a metric set; duplicates are
  harmless because every condition is "for all x in X").
- ``triples``: ``"standard"`` (m' != m'', m free) or ``"distinct"``.

Skipped topics (too few models) are reported with ``warnings.warn`` naming
the task and topic; they are never counted as 0. Tasks with no eligible
topic are absent from the per-task results.
"""

from __future__ import annotations

import warnings
from typing import Dict, List, Optional, Sequence, Tuple

TRIPLES = ("standard", "distinct")


# ---------------------------------------------------------------- inputs

def sim_from_frame(frame) -> Dict[tuple, float]:
    """DataFrame (task, topic, summarizer_s, summarizer_r, metric, value) ->
    ``{(task, topic, s, r, metric): value}``. Duplicate keys raise."""
    sim = {}
    for row in frame.itertuples(index=False):
        key = (row.task, row.topic, row.summarizer_s, row.summarizer_r, row.metric)
        if key in sim:
            raise ValueError(f"duplicate similarity {key}")
        sim[key] = float(row.value)
    return sim


def roles_from_frame(frame) -> Dict[tuple, str]:
    """Summaries DataFrame (task, topic, summarizer, role, ...) ->
    ``{(task, topic, summarizer): role}``."""
    roles = {}
    for row in frame.itertuples(index=False):
        key = (row.task, row.topic, row.summarizer)
        if key in roles:
            raise ValueError(f"duplicate summary {key}")
        if row.role not in ("model", "peer"):
            raise ValueError(f"bad role {row.role!r} for {key}")
        roles[key] = row.role
    return roles


def _sim(sim):
    return sim if isinstance(sim, dict) else sim_from_frame(sim)


def _roles(roles):
    return roles if isinstance(roles, dict) else roles_from_frame(roles)


def _metrics(X) -> List[str]:
    X = [X] if isinstance(X, str) else list(X)
    if not X:
        raise ValueError("the metric set X must not be empty")
    return X


def topics_of(roles) -> Dict[Tuple[str, str], Tuple[List[str], List[str]]]:
    """``{(task, topic): (sorted models M_t, sorted peers A_t)}``."""
    roles = _roles(roles)
    out: Dict[Tuple[str, str], Tuple[List[str], List[str]]] = {}
    for (task, topic, name), role in roles.items():
        models, peers = out.setdefault((task, topic), ([], []))
        (models if role == "model" else peers).append(name)
    for models, peers in out.values():
        models.sort()
        peers.sort()
    return dict(sorted(out.items()))


def _mean(values: Sequence[float]) -> float:
    values = list(values)
    return sum(values) / len(values)


# ---------------------------------------------------------------- QUEEN

def model_triples(M: Sequence[str], triples: str = "standard") -> List[tuple]:
    """Every ordered triple (m, m', m'') of models QUEEN averages over.

    standard: m' != m'' (m may equal m' or m''): |M|·|M|·(|M|-1) triples
    (18 for 3 models). distinct: m, m', m'' pairwise distinct:
    |M|·(|M|-1)·(|M|-2) triples (6 for 3 models)."""
    if triples not in TRIPLES:
        raise ValueError(f"triples must be one of {TRIPLES}, not {triples!r}")
    out = []
    for m in M:
        for m1 in M:
            for m2 in M:
                if m1 == m2:
                    continue
                if triples == "distinct" and (m == m1 or m == m2):
                    continue
                out.append((m, m1, m2))
    return out


def queen(sim, task, topic, e, X, M, triples="standard") -> Optional[float]:
    """SPEC §3:

        QUEEN_{X,M}(e) = P_{(m, m', m'')} ( ∀x∈X: x(e, m) ≥ x(m', m'') )

    over the triples of :func:`model_triples`. The test is ``≥`` (a tie
    passes). Returns None when |M| < 3 (undefined; also when the triple
    set is empty). ``e`` must not be in ``M`` (ValueError)."""
    sim = _sim(sim)
    X = _metrics(X)
    M = list(M)
    if len(set(M)) != len(M):
        raise ValueError(f"repeated model in M: {M}")
    if e in M:
        raise ValueError(f"e={e!r} must not be in M={M}")
    if len(M) < 3:
        return None
    ts = model_triples(M, triples)
    if not ts:
        return None
    passed = 0
    for (m, m1, m2) in ts:
        ok = True
        for x in X:
            if not sim[(task, topic, e, m, x)] >= sim[(task, topic, m1, m2, x)]:
                ok = False
                break
        if ok:
            passed += 1
    return passed / len(ts)


def queen_table(sim, roles, X, triples="standard") -> List[dict]:
    """Rows ``{task, topic, summarizer, role, holdout, queen}``:

    - for every topic with |M_t| ≥ 3: every peer a with ``holdout=None``
      and queen = QUEEN_{X,M_t}(a);
    - for every topic with |M_t| ≥ 4 (so that M_t∖{h} has 3 models), for
      every model h: every peer a (role "peer") and h itself (role
      "model"), ``holdout=h``, queen = QUEEN_{X,M_t∖{h}}(·).

    Topics with < 3 models get a warning and no rows. Sorted by
    (task, topic, holdout or "", role, summarizer)."""
    sim = _sim(sim)
    rows = []
    for (task, topic), (M, A) in topics_of(roles).items():
        if len(M) < 3:
            warnings.warn(f"QUEEN undefined: task {task!r} topic {topic!r} has "
                          f"{len(M)} model(s) (< 3); skipped")
            continue
        for a in A:
            rows.append(dict(task=task, topic=topic, summarizer=a, role="peer",
                             holdout=None, queen=queen(sim, task, topic, a, X, M, triples)))
        if len(M) < 4:
            continue
        for h in M:
            rest = [m for m in M if m != h]
            rows.append(dict(task=task, topic=topic, summarizer=h, role="model",
                             holdout=h, queen=queen(sim, task, topic, h, X, rest, triples)))
            for a in A:
                rows.append(dict(task=task, topic=topic, summarizer=a, role="peer",
                                 holdout=h, queen=queen(sim, task, topic, a, X, rest, triples)))
    rows.sort(key=lambda r: (r["task"], r["topic"], r["holdout"] or "", r["role"],
                             r["summarizer"]))
    return rows


def system_scores(sim, roles, X, triples="standard") -> Dict[Tuple[str, str], dict]:
    """SPEC §3 system scores: ``{(task, summarizer): {"role", "queen",
    "queen_full"}}``.

    - ``queen_full`` (peers only; None for models) = mean over the topics
      t where the peer has a summary and |M_t| ≥ 3 of QUEEN_{X,M_t}(a).
    - ``queen`` = the score of a ranking that includes models, over topics
      with |M_t| ≥ 4: model h: mean_t QUEEN_{X,M_t∖{h}}(h);
      peer a: mean_t ( mean_{h∈M_t} QUEEN_{X,M_t∖{h}}(a) ).
      None when the summarizer has no such topic.
    """
    sim = _sim(sim)
    full: Dict[tuple, List[float]] = {}
    jk: Dict[tuple, List[float]] = {}
    role_of: Dict[tuple, str] = {}
    for (task, topic, name), role in _roles(roles).items():
        role_of[(task, name)] = role
    for (task, topic), (M, A) in topics_of(roles).items():
        if len(M) < 3:
            warnings.warn(f"QUEEN undefined: task {task!r} topic {topic!r} has "
                          f"{len(M)} model(s) (< 3); skipped")
            continue
        for a in A:
            full.setdefault((task, a), []).append(queen(sim, task, topic, a, X, M, triples))
        if len(M) < 4:
            continue
        for h in M:
            rest = [m for m in M if m != h]
            jk.setdefault((task, h), []).append(queen(sim, task, topic, h, X, rest, triples))
        for a in A:
            per_h = [queen(sim, task, topic, a, X, [m for m in M if m != h], triples)
                     for h in M]
            jk.setdefault((task, a), []).append(_mean(per_h))
    out = {}
    for key, role in sorted(role_of.items()):
        out[key] = dict(role=role,
                        queen=_mean(jk[key]) if key in jk else None,
                        queen_full=_mean(full[key]) if key in full else None)
    return out


# ---------------------------------------------------------------- KING, ORANGE

def _jackknife_topics(roles, what):
    """Topics with |M_t| ≥ 4 and at least one peer (warns about the others)."""
    for (task, topic), (M, A) in topics_of(roles).items():
        if len(M) < 4:
            warnings.warn(f"{what}: task {task!r} topic {topic!r} has {len(M)} "
                          f"model(s) (< 4); skipped")
            continue
        if not A:
            warnings.warn(f"{what}: task {task!r} topic {topic!r} has no peer; skipped")
            continue
        yield task, topic, M, A


def king(sim, roles, X, triples="standard") -> Dict[str, Tuple[float, int]]:
    """SPEC §4, per task: ``{task: (king, n_cases)}``.

        KING(X) = mean over topics t of mean over h ∈ M_t of
                  1[ ∀a ∈ A_t : QUEEN_{X,M_t∖{h}}(h) > QUEEN_{X,M_t∖{h}}(a) ]

    Strict ``>`` (a tie with any peer fails). Topics need |M_t| ≥ 4 and at
    least one peer (a topic without peers would make "beats every peer"
    vacuously true; it is skipped with a warning). ``n_cases`` = number of
    (t, h) pairs counted. The average is per topic first, then over topics
    (not pooled over cases)."""
    sim = _sim(sim)
    per_topic: Dict[str, List[float]] = {}
    cases: Dict[str, int] = {}
    for task, topic, M, A in _jackknife_topics(roles, "KING"):
        wins = []
        for h in M:
            rest = [m for m in M if m != h]
            q_h = queen(sim, task, topic, h, X, rest, triples)
            beats_all = True
            for a in A:
                q_a = queen(sim, task, topic, a, X, rest, triples)
                if not q_h > q_a:
                    beats_all = False
            wins.append(1.0 if beats_all else 0.0)
        per_topic.setdefault(task, []).append(_mean(wins))
        cases[task] = cases.get(task, 0) + len(M)
    return {task: (_mean(v), cases[task]) for task, v in sorted(per_topic.items())}


def _orange(sim, roles, score, what) -> Dict[str, Tuple[float, int]]:
    """P(score_h(a) ≤ score_h(h)) pooled over every (t, h, a) of every
    eligible topic; ``score(task, topic, e, rest)``."""
    hits: Dict[str, int] = {}
    n: Dict[str, int] = {}
    for task, topic, M, A in _jackknife_topics(roles, what):
        for h in M:
            rest = [m for m in M if m != h]
            s_h = score(task, topic, h, rest)
            for a in A:
                s_a = score(task, topic, a, rest)
                n[task] = n.get(task, 0) + 1
                if s_a <= s_h:
                    hits[task] = hits.get(task, 0) + 1
    return {task: (hits.get(task, 0) / n[task], n[task]) for task in sorted(n)}


def orange(sim, roles, X, triples="standard") -> Dict[str, Tuple[float, int]]:
    """SPEC §4 ORANGE, per task: ``{task: (orange, n_cases)}``.

        ORANGE(X) = P( QUEEN_{X,M_t∖{h}}(a) ≤ QUEEN_{X,M_t∖{h}}(h) )

    POOLED over all (topic t, held-out model h ∈ M_t, peer a ∈ A_t) of the
    task (not averaged per topic); ``≤``: a tie counts as a success.
    Same eligible topics as KING (|M_t| ≥ 4, at least one peer);
    ``n_cases`` = number of (t, h, a)."""
    sim = _sim(sim)
    return _orange(sim, roles,
                   lambda task, topic, e, rest: queen(sim, task, topic, e, X, rest, triples),
                   "ORANGE")


def plain_score(sim, task, topic, e, metric, M) -> float:
    """Plain score of e against a model set: mean over m ∈ M of
    metric(e, m) (e.g. ROUGE recall of M's units, one reference at a time,
    averaged — not ROUGE's multi-reference pooling)."""
    sim = _sim(sim)
    M = [m for m in M]
    if e in M:
        raise ValueError(f"e={e!r} must not be in M={M}")
    return _mean([sim[(task, topic, e, m, metric)] for m in M])


def orange_plain(sim, roles, metric) -> Dict[str, Tuple[float, int]]:
    """ORANGE with a plain score in place of QUEEN, per task:
    ``{task: (orange, n_cases)}``:

        P( score_{M_t∖{h}}(a) ≤ score_{M_t∖{h}}(h) ),
        score_M(e) = mean over m ∈ M of metric(e, m)

    pooled over (t, h, a) like :func:`orange`, over the SAME topics
    (|M_t| ≥ 4, at least one peer) so both baselines count the same cases
    although a plain score would need only |M_t| ≥ 2."""
    sim = _sim(sim)
    if not isinstance(metric, str):
        raise TypeError("orange_plain takes one metric name")
    return _orange(sim, roles,
                   lambda task, topic, e, rest: plain_score(sim, task, topic, e, metric, rest),
                   "ORANGE(plain)")


# ---------------------------------------------------------------- JACK

def jack_covered(sim, task, topic, X, M, A, m, triples="standard",
                 q=None) -> bool:
    """The indicator of SPEC §5 for one (topic, model m):

        ∃ a ≠ a' ∈ A : QUEEN_{X,M}(a) > 0 ∧ QUEEN_{X,M}(a') > 0 ∧
            ∀x∈X: x(a, a') ≤ x(a, m) ∧ x(a', a) ≤ x(a', m)

    with QUEEN over the full model set M. ``q``: optional precomputed
    ``{peer: QUEEN_{X,M}(peer)}``."""
    sim = _sim(sim)
    X = _metrics(X)
    if q is None:
        q = {a: queen(sim, task, topic, a, X, M, triples) for a in A}
    for a in A:
        for a2 in A:
            if a == a2:
                continue
            if not (q[a] > 0 and q[a2] > 0):
                continue
            ok = True
            for x in X:
                if not (sim[(task, topic, a, a2, x)] <= sim[(task, topic, a, m, x)]
                        and sim[(task, topic, a2, a, x)] <= sim[(task, topic, a2, m, x)]):
                    ok = False
                    break
            if ok:
                return True
    return False


def jack(sim, roles, X, triples="standard", peers=None) -> Dict[str, float]:
    """SPEC §5, per task: ``{task: jack}``.

        JACK(X) = mean over topics t of mean over m ∈ M_t of
          1[ ∃ a ≠ a' ∈ A_t : QUEEN(a) > 0 ∧ QUEEN(a') > 0 ∧
             ∀x∈X: x(a, a') ≤ x(a, m) ∧ x(a', a) ≤ x(a', m) ]

    QUEEN with the full M_t. Topics need |M_t| ≥ 3 (QUEEN defined; others
    are skipped with a warning). A topic with fewer than two (selected)
    peers is NOT skipped: it counts 0 for each of its models (no pair
    exists). ``peers``: optional collection of peer-system names; A_t is
    then restricted to those systems (QUEEN does not depend on the other
    peers, so it is unchanged)."""
    sim = _sim(sim)
    keep = None if peers is None else set(peers)
    per_topic: Dict[str, List[float]] = {}
    for (task, topic), (M, A) in topics_of(roles).items():
        if len(M) < 3:
            warnings.warn(f"JACK: task {task!r} topic {topic!r} has {len(M)} "
                          f"model(s) (< 3); skipped")
            continue
        if keep is not None:
            A = [a for a in A if a in keep]
        q = {a: queen(sim, task, topic, a, X, M, triples) for a in A}
        hits = [1.0 if jack_covered(sim, task, topic, X, M, A, m, triples, q) else 0.0
                for m in M]
        per_topic.setdefault(task, []).append(_mean(hits))
    return {task: _mean(v) for task, v in sorted(per_topic.items())}


def jack_curve(sim, roles, X, triples="standard", orders=()) -> Dict[str, Dict[int, float]]:
    """JACK growth curve (SPEC §5, paper 000 Fig. 3), per task:
    ``{task: {k: jack}}`` for k = 2..|A| where |A| = number of peer
    systems of the task.

    For each order, JACK restricted to the first k systems of the order
    (:func:`jack` with ``peers=order[:k]``); the value at k is the plain
    mean over the orders. ``orders``: a list of orders (each a list of
    peer-system names) used for every task after dropping names that are
    not peers of that task, or a dict ``{task: [order, ...]}``. Every
    order must contain every peer system of the task (ValueError)."""
    sim = _sim(sim)
    roles = _roles(roles)
    systems: Dict[str, set] = {}
    for (task, topic, name), role in roles.items():
        if role == "peer":
            systems.setdefault(task, set()).add(name)
    out = {}
    for task in sorted(systems):
        names = systems[task]
        task_orders = orders[task] if isinstance(orders, dict) else orders
        task_orders = [[n for n in order if n in names] for order in task_orders]
        if not task_orders:
            raise ValueError(f"no order given for task {task!r}")
        for order in task_orders:
            if sorted(order) != sorted(names):
                raise ValueError(f"order {order} is not a permutation of the peer "
                                 f"systems of task {task!r}: {sorted(names)}")
        task_roles = {k: v for k, v in roles.items() if k[0] == task}
        curve = {}
        for k in range(2, len(names) + 1):
            values = []
            for order in task_orders:
                res = jack(sim, task_roles, X, triples, peers=order[:k])
                if task in res:
                    values.append(res[task])
            if values:
                curve[k] = _mean(values)
        if curve:
            out[task] = curve
    return out
