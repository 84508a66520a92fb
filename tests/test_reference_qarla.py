"""Tests of the brute-force reference (reference_qarla) on hand-computed cases,
plus the SPEC §4/§5 properties on small generated testbeds. No Spark."""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest

import reference_qarla as ref
from testbeds import add_duplicate_peer, make_similarities, transform_metric

T = "task"


def build(topics):
    """topics: {topic: (models, peers, {(s, r): value} or {metric: {(s, r): v}})}.
    Missing ordered pairs get value 0.0 (they must not matter in the test)."""
    sim, roles = {}, {}
    for topic, (models, peers, values) in topics.items():
        for n in models:
            roles[(T, topic, n)] = "model"
        for n in peers:
            roles[(T, topic, n)] = "peer"
        by_metric = values if values and all(isinstance(v, dict) for v in values.values()) else {"x": values}
        names = list(models) + list(peers)
        for metric, vals in by_metric.items():
            for s in names:
                for r in names:
                    if s != r:
                        sim[(T, topic, s, r, metric)] = float(vals.get((s, r), 0.0))
    return sim, roles


# ---------------------------------------------------------------- QUEEN by hand

# 3 models, one metric x. Model pairs (m', m''):
#   (m0,m1)=.1 (m1,m0)=.2 (m0,m2)=.3 (m2,m0)=.4 (m1,m2)=.5 (m2,m1)=.6
MODEL_PAIRS = {("m0", "m1"): .1, ("m1", "m0"): .2, ("m0", "m2"): .3,
               ("m2", "m0"): .4, ("m1", "m2"): .5, ("m2", "m1"): .6}
M3 = ["m0", "m1", "m2"]


def queen_case(e_vals, extra=None):
    vals = dict(MODEL_PAIRS)
    vals.update({("e", m): v for m, v in e_vals.items()})
    sim, roles = build({"q": (M3, ["e"], vals)})
    if extra:
        sim.update(extra)
    return sim


def test_queen_standard_by_hand():
    # x(e,m0)=.35, x(e,m1)=.55, x(e,m2)=.05. Standard: 3 m × 6 ordered (m',m'') = 18.
    #   m=m0: .35 ≥ {.1,.2,.3}          -> 3 of 6
    #   m=m1: .55 ≥ {.1,.2,.3,.4,.5}    -> 5 of 6
    #   m=m2: .05 ≥ nothing             -> 0 of 6
    # QUEEN = 8/18 = 4/9.
    sim = queen_case({"m0": .35, "m1": .55, "m2": .05})
    assert len(ref.model_triples(M3, "standard")) == 18
    assert ref.queen(sim, T, "q", "e", ["x"], M3) == pytest.approx(8 / 18)


def test_queen_distinct_by_hand():
    # Distinct: the 6 permutations of (m0,m1,m2).
    #   m=m0: (m1,m2)=.5, (m2,m1)=.6 vs .35 -> 0
    #   m=m1: (m0,m2)=.3, (m2,m0)=.4 vs .55 -> 2
    #   m=m2: (m0,m1)=.1, (m1,m0)=.2 vs .05 -> 0
    # QUEEN = 2/6 = 1/3.
    sim = queen_case({"m0": .35, "m1": .55, "m2": .05})
    assert len(ref.model_triples(M3, "distinct")) == 6
    assert ref.queen(sim, T, "q", "e", ["x"], M3, "distinct") == pytest.approx(1 / 3)


def test_queen_tie_passes():
    # x(e,m0)=.3 equals x(m0,m2)=.3: "≥" lets the tie pass, so m=m0 still
    # passes 3 of 6 (strict ">" would give 2): QUEEN stays 8/18.
    sim = queen_case({"m0": .3, "m1": .55, "m2": .05})
    assert ref.queen(sim, T, "q", "e", ["x"], M3) == pytest.approx(8 / 18)


def test_queen_metric_set_is_a_conjunction():
    # Second metric y: every model pair .5; y(e,m0)=1, y(e,m1)=0, y(e,m2)=1.
    # y passes for m=m0 and m=m2 (any pair), fails for m=m1 (0 < .5).
    # X={x,y}: m0 -> 3 (x's count), m1 -> 0, m2 -> 0 (x's count): 3/18 = 1/6.
    extra = {(T, "q", s, r, "y"): .5 for (s, r) in MODEL_PAIRS}
    extra.update({(T, "q", "e", "m0", "y"): 1.0, (T, "q", "e", "m1", "y"): 0.0,
                  (T, "q", "e", "m2", "y"): 1.0})
    sim = queen_case({"m0": .35, "m1": .55, "m2": .05}, extra)
    assert ref.queen(sim, T, "q", "e", ["y"], M3) == pytest.approx(12 / 18)
    assert ref.queen(sim, T, "q", "e", ["x", "y"], M3) == pytest.approx(3 / 18)
    # a duplicated metric changes nothing
    assert ref.queen(sim, T, "q", "e", ["x", "x"], M3) == pytest.approx(8 / 18)


def test_queen_undefined_and_errors():
    sim = queen_case({"m0": .35, "m1": .55, "m2": .05})
    # 2 models: undefined (None), for both triple modes
    assert ref.queen(sim, T, "q", "e", ["x"], ["m0", "m1"]) is None
    assert ref.queen(sim, T, "q", "e", ["x"], ["m0", "m1"], "distinct") is None
    with pytest.raises(ValueError):
        ref.queen(sim, T, "q", "m0", ["x"], M3)          # e in M
    with pytest.raises(ValueError):
        ref.queen(sim, T, "q", "e", [], M3)              # empty X
    with pytest.raises(ValueError):
        ref.queen(sim, T, "q", "e", ["x"], M3, "other")  # bad triples
    with pytest.raises(KeyError):
        ref.queen(sim, T, "q", "e", ["nope"], M3)        # missing values


def test_queen_from_dataframe():
    sim = queen_case({"m0": .35, "m1": .55, "m2": .05})
    frame = pd.DataFrame([dict(task=k[0], topic=k[1], summarizer_s=k[2], summarizer_r=k[3],
                               metric=k[4], value=v) for k, v in sim.items()])
    assert ref.sim_from_frame(frame) == sim
    assert ref.queen(frame, T, "q", "e", ["x"], M3) == pytest.approx(8 / 18)


# ---------------------------------------------------------------- KING / ORANGE by hand

M4 = ["m0", "m1", "m2", "m3"]


def topic1_values(peers):
    """4 models: x(mi, z)=.5 for i in 0..2 and any z; x(m3, z)=.1 (m3 is a
    weak model as a candidate, but .5 as anyone's reference);
    peer a: x(a, m)=.3 for every m; peer c: x(c, m)=.5 for every m."""
    vals = {}
    for s in M4:
        for r in M4 + peers:
            if s != r:
                vals[(s, r)] = .1 if s == "m3" else .5
    for p, v in (("a", .3), ("c", .5)):
        if p in peers:
            for m in M4:
                vals[(p, m)] = v
    return vals


def topic2_values():
    """5 models, all model pairs .5; peer a: x(a, m)=.5 (ties every model)."""
    M5 = [f"m{i}" for i in range(5)]
    vals = {(s, r): .5 for s in M5 for r in M5 if s != r}
    vals.update({("a", m): .5 for m in M5})
    return M5, vals


def test_king_by_hand_strict_tie_fails():
    # Topic t1 (peer a only).
    #   h=m0: M'={m1,m2,m3}; pairs (m',m''): (m1,m2)=(m2,m1)=(m1,m3)=(m2,m3)=.5,
    #         (m3,m1)=(m3,m2)=.1. QUEEN(m0): x(m0,·)=.5 ≥ all 6 -> 18/18 = 1.
    #         QUEEN(a): .3 ≥ only the two .1 pairs -> 6/18 = 1/3. 1 > 1/3: win.
    #   h=m1, m2: same by symmetry: win.
    #   h=m3: M'={m0,m1,m2}, all pairs .5. QUEEN(m3): .1 -> 0. QUEEN(a): .3 -> 0.
    #         0 > 0 is false (strict): loss.
    #   topic mean 3/4 (Asiya's "≥" would give 1).
    # Topic t2: 5 models, every QUEEN (h and a) = 1 -> all 5 ties -> 0.
    # KING = mean over topics = (3/4 + 0)/2 = 3/8, n_cases = 4 + 5 = 9
    # (pooling cases would give 3/9).
    M5, vals2 = topic2_values()
    sim, roles = build({"t1": (M4, ["a"], topic1_values(["a"])), "t2": (M5, ["a"], vals2)})
    assert ref.queen(sim, T, "t1", "m0", ["x"], ["m1", "m2", "m3"]) == pytest.approx(1.0)
    assert ref.queen(sim, T, "t1", "a", ["x"], ["m1", "m2", "m3"]) == pytest.approx(1 / 3)
    assert ref.queen(sim, T, "t1", "m3", ["x"], ["m0", "m1", "m2"]) == 0.0
    assert ref.queen(sim, T, "t1", "a", ["x"], ["m0", "m1", "m2"]) == 0.0
    k, n = ref.king(sim, roles, ["x"])[T]
    assert k == pytest.approx(3 / 8)
    assert n == 9
    # t1 alone: 3/4 over 4 cases
    sim1, roles1 = build({"t1": (M4, ["a"], topic1_values(["a"]))})
    assert ref.king(sim1, roles1, ["x"]) == {T: (pytest.approx(0.75), 4)}


def test_king_peer_tying_every_model_gives_zero():
    # Topic t1 with peers a and c. c: x(c,m)=.5 everywhere.
    #   h=m0..m2: QUEEN(c) over M∖{h} = 1 = QUEEN(h): tie -> loss.
    #   h=m3: QUEEN(c)=1 > QUEEN(m3)=0 -> loss.  KING = 0.
    sim, roles = build({"t1": (M4, ["a", "c"], topic1_values(["a", "c"]))})
    assert ref.king(sim, roles, ["x"]) == {T: (0.0, 4)}


def test_king_constant_metric_is_zero():
    # A constant metric gives every summary QUEEN 1 (all ties pass "≥"),
    # so every held-out model ties every peer: KING 0.
    M5 = [f"m{i}" for i in range(5)]
    names = M5 + ["a", "b"]
    sim, roles = build({"t": (M5, ["a", "b"], {(s, r): .7 for s in names for r in names})})
    assert ref.queen(sim, T, "t", "a", ["x"], M5) == 1.0
    assert ref.king(sim, roles, ["x"]) == {T: (0.0, 5)}


def test_king_skips_small_topics_and_topics_without_peers():
    # t3 has 3 models (skipped: M∖{h} would have 2), t0 has no peer
    # (skipped: "beats every peer" would be vacuous); only t1 counts.
    sim, roles = build({"t1": (M4, ["a"], topic1_values(["a"])),
                        "t3": (["m0", "m1", "m2"], ["a"], {}),
                        "t0": (M4, [], topic1_values([]))})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ref.king(sim, roles, ["x"])
    assert result == {T: (pytest.approx(0.75), 4)}
    text = " ".join(str(w.message) for w in caught)
    assert "'t3'" in text and "'t0'" in text
    # no eligible topic at all: the task is absent
    sim, roles = build({"t3": (["m0", "m1", "m2"], ["a"], {})})
    with pytest.warns(UserWarning, match="'t3'"):
        assert ref.king(sim, roles, ["x"]) == {}


def test_orange_by_hand_pooled():
    # t1 with peers a, c (QUEENs as in the KING tests):
    #   h=m0..m2: q_h=1, q_a=1/3 (≤ yes), q_c=1 (tie, ≤ yes) -> 6 of 6
    #   h=m3:     q_h=0, q_a=0 (≤ yes), q_c=1 (no)          -> 1 of 2
    #   t1: 7 of 8.
    # t2 (5 models, peer a ties every h): 5 of 5.
    # ORANGE pooled = 12/13 (the mean of topic rates would be 15/16).
    M5, vals2 = topic2_values()
    sim, roles = build({"t1": (M4, ["a", "c"], topic1_values(["a", "c"])),
                        "t2": (M5, ["a"], vals2)})
    o, n = ref.orange(sim, roles, ["x"])[T]
    assert n == 13
    assert o == pytest.approx(12 / 13)


def test_orange_plain_by_hand():
    # t1 with peers a, c; score_{M∖{h}}(e) = mean over m ∈ M∖{h} of x(e, m):
    #   h=m0..m2: score(h)=.5, a=.3 (≤ yes), c=.5 (tie, yes)  -> 6 of 6
    #   h=m3:     score(m3)=.1, a=.3 (no), c=.5 (no)          -> 0 of 2
    # ORANGE(plain) = 6/8 (QUEEN-based ORANGE is 7/8 here).
    sim, roles = build({"t1": (M4, ["a", "c"], topic1_values(["a", "c"]))})
    assert ref.plain_score(sim, T, "t1", "m3", "x", ["m0", "m1", "m2"]) == pytest.approx(.1)
    assert ref.orange_plain(sim, roles, "x") == {T: (pytest.approx(.75), 8)}
    assert ref.orange(sim, roles, ["x"]) == {T: (pytest.approx(7 / 8), 8)}


# ---------------------------------------------------------------- JACK by hand

def jack_case():
    """3 models (all model pairs .5), peers a, b, c, one metric.
    x(a,m0)=x(a,m1)=.6, x(a,m2)=.2   -> QUEEN(a) = 2/3 (passes for m0, m1)
    x(b,m0)=.6, x(b,m1)=x(b,m2)=.2   -> QUEEN(b) = 1/3
    x(c,m)=.2 for all m              -> QUEEN(c) = 0
    x(a,b)=x(b,a)=.4; x(a,c)=x(c,a)=x(b,c)=x(c,b)=.1"""
    vals = {(s, r): .5 for s in M3 for r in M3 if s != r}
    vals.update({("a", "m0"): .6, ("a", "m1"): .6, ("a", "m2"): .2,
                 ("b", "m0"): .6, ("b", "m1"): .2, ("b", "m2"): .2,
                 ("c", "m0"): .2, ("c", "m1"): .2, ("c", "m2"): .2,
                 ("a", "b"): .4, ("b", "a"): .4, ("a", "c"): .1, ("c", "a"): .1,
                 ("b", "c"): .1, ("c", "b"): .1})
    return build({"j": (M3, ["a", "b", "c"], vals)})


def test_jack_by_hand():
    # m0: (a,b): x(a,b)=.4 ≤ x(a,m0)=.6 and x(b,a)=.4 ≤ x(b,m0)=.6 -> covered.
    # m1: (a,b): x(b,a)=.4 ≤ x(b,m1)=.2 fails; (a,c) would pass the
    #     similarity test (.1 ≤ .6, .1 ≤ .2) but QUEEN(c)=0 -> not covered.
    # m2: (a,b): .4 ≤ x(a,m2)=.2 fails; (a,c) again excluded by QUEEN(c)=0.
    # JACK = 1/3. (Without the QUEEN > 0 condition it would be 1.)
    sim, roles = jack_case()
    assert ref.queen(sim, T, "j", "a", ["x"], M3) == pytest.approx(2 / 3)
    assert ref.queen(sim, T, "j", "b", ["x"], M3) == pytest.approx(1 / 3)
    assert ref.queen(sim, T, "j", "c", ["x"], M3) == 0.0
    assert ref.jack(sim, roles, ["x"]) == {T: pytest.approx(1 / 3)}
    # restricted to systems {a, c}: no admissible pair -> 0
    assert ref.jack(sim, roles, ["x"], peers=["a", "c"]) == {T: 0.0}
    assert ref.jack(sim, roles, ["x"], peers=["a"]) == {T: 0.0}


def test_jack_curve_by_hand():
    # order [a, b, c]: k=2 {a,b} -> 1/3; k=3 -> 1/3.
    # order [c, a, b]: k=2 {c,a} -> 0;   k=3 -> 1/3.
    # mean: k=2 -> 1/6, k=3 -> 1/3.
    sim, roles = jack_case()
    curve = ref.jack_curve(sim, roles, ["x"], orders=[["a", "b", "c"], ["c", "a", "b"]])
    assert curve == {T: {2: pytest.approx(1 / 6), 3: pytest.approx(1 / 3)}}
    with pytest.raises(ValueError):
        ref.jack_curve(sim, roles, ["x"], orders=[["a", "b"]])


def test_jack_tie_passes_the_similarity_test():
    # Raise x(b,m1) to .4 = x(b,a): "≤" lets the tie pass, so m1 is now
    # covered by (a,b) too: JACK = 2/3. (QUEEN(b) is unchanged: .4 < .5.)
    sim, roles = jack_case()
    sim[(T, "j", "b", "m1", "x")] = .4
    assert ref.jack(sim, roles, ["x"]) == {T: pytest.approx(2 / 3)}


# ---------------------------------------------------------------- tables

def test_queen_table_rows():
    # t4: 4 models, 2 peers: 2 full rows + 4 held-out × (2 peers + h) = 14.
    # t3: 3 models: 2 full rows only. t2: 2 models: nothing (warned).
    sims, roles, summ = make_similarities(3, [4, 3, 2], 2, ["x"], seed=1, task=T)
    with pytest.warns(UserWarning, match="'t2'"):
        rows = ref.queen_table(sims, summ, ["x"])
    by_topic = {}
    for r in rows:
        by_topic.setdefault(r["topic"], []).append(r)
    assert len(by_topic["t0"]) == 14 and len(by_topic["t1"]) == 2 and "t2" not in by_topic
    assert {r["holdout"] for r in by_topic["t1"]} == {None}
    model_rows = [r for r in by_topic["t0"] if r["role"] == "model"]
    assert all(r["summarizer"] == r["holdout"] for r in model_rows) and len(model_rows) == 4
    for r in rows:
        assert 0.0 <= r["queen"] <= 1.0


def test_system_scores_match_definitions():
    sims, roles, _ = make_similarities(3, [4, 5, 3], 3, ["x", "y"], seed=2, task=T)
    sim = ref.sim_from_frame(sims)
    scores = ref.system_scores(sim, roles, ["x", "y"])
    # p0, by the formulas directly
    full = [ref.queen(sim, T, t, "p0", ["x", "y"], [m for m in M]) for t, M in
            (("t0", M4), ("t1", [f"m{i}" for i in range(5)]), ("t2", M3))]
    assert scores[(T, "p0")]["queen_full"] == pytest.approx(sum(full) / 3)
    jk = []
    for t, M in (("t0", M4), ("t1", [f"m{i}" for i in range(5)])):
        jk.append(sum(ref.queen(sim, T, t, "p0", ["x", "y"], [m for m in M if m != h])
                      for h in M) / len(M))
    assert scores[(T, "p0")]["queen"] == pytest.approx(sum(jk) / 2)
    # m4 only appears in t1 (5 models)
    q = ref.queen(sim, T, "t1", "m4", ["x", "y"], ["m0", "m1", "m2", "m3"])
    assert scores[(T, "m4")] == dict(role="model", queen=pytest.approx(q), queen_full=None)


# ---------------------------------------------------------------- SPEC properties

@pytest.mark.parametrize("ties", [False, True])
def test_constant_metric_king_zero_on_testbed(ties):
    sims, roles, _ = make_similarities(3, 5, 4, ["x"], seed=3, task=T, ties=ties,
                                    constant_metric="c")
    assert ref.king(sims, roles, ["c"])[T][0] == 0.0
    assert ref.king(sims, roles, ["x", "c"]) == ref.king(sims, roles, ["x"])


def test_random_metric_king_near_zero_with_many_peers():
    # 0.5^7 ≈ 0.008: with 8 random peers the held-out model rarely beats all.
    sims, roles, _ = make_similarities(6, 4, 8, ["x"], seed=4, task=T)
    assert ref.king(sims, roles, ["x"])[T][0] <= 0.25


def test_invariances_on_testbed():
    sims, roles, summ = make_similarities(3, [4, 5, 4], 3, ["x", "y"], seed=5, task=T,
                                          ties=True)
    X = ["x", "y"]
    base_k = ref.king(sims, roles, X)
    base_q = ref.queen_table(sims, roles, X)
    base_j = ref.jack(sims, roles, X)
    # strictly increasing transform of a metric
    tr = transform_metric(sims, "x", lambda v: math.exp(3 * v) - 7)
    assert ref.king(tr, roles, X) == base_k
    assert ref.queen_table(tr, roles, X) == base_q
    assert ref.jack(tr, roles, X) == base_j
    # duplicate metric in X
    dup = transform_metric(sims, "x", lambda v: v, new_name="x2")
    assert ref.queen_table(dup, roles, X + ["x2"]) == base_q
    assert ref.king(dup, roles, X + ["x2"]) == base_k
    # duplicate peer
    s2, r2, _ = add_duplicate_peer(sims, roles, summ, "p1", "p1bis")
    assert ref.king(s2, r2, X) == base_k


def test_peer_equal_to_model_ties_when_that_model_is_held_out():
    sims, roles, _ = make_similarities(2, 5, 3, ["x"], seed=6, task=T, peer_equal_to_model=True)
    sim = ref.sim_from_frame(sims)
    rest = ["m1", "m2", "m3", "m4"]
    for t in ("t0", "t1"):
        assert ref.queen(sim, T, t, "p0", ["x"], rest) == ref.queen(sim, T, t, "m0", ["x"], rest)
        assert sim[(T, t, "p0", "m0", "x")] == 1.0


def test_jack_curve_never_decreases():
    sims, roles, _ = make_similarities(3, 3, 5, ["x"], seed=7, task=T, ties=True)
    orders = [["p0", "p1", "p2", "p3", "p4"], ["p4", "p2", "p0", "p3", "p1"]]
    curve = ref.jack_curve(sims, roles, ["x"], orders=orders)[T]
    assert sorted(curve) == [2, 3, 4, 5]
    values = [curve[k] for k in sorted(curve)]
    assert all(a <= b + 1e-12 for a, b in zip(values, values[1:]))
    assert curve[5] == pytest.approx(ref.jack(sims, roles, ["x"])[T])


def test_testbed_shape():
    sims, roles, summ = make_similarities(3, [2, 3, 4], [1, 2, 3], ["x", "y"], seed=8,
                                          task="duc")
    sizes = [2 + 1, 3 + 2, 4 + 3]
    assert len(sims) == 2 * sum(n * (n - 1) for n in sizes)
    assert not sims.duplicated(["task", "topic", "summarizer_s", "summarizer_r", "metric"]).any()
    assert (sims["summarizer_s"] != sims["summarizer_r"]).all()
    assert set(sims["task"]) == {"duc"}
    assert len(summ) == sum(sizes) == len(roles)
    assert ref.roles_from_frame(summ) == roles
    again, _, _ = make_similarities(3, [2, 3, 4], [1, 2, 3], ["x", "y"], seed=8, task="duc")
    pd.testing.assert_frame_equal(sims, again)
    ties, _, _ = make_similarities(2, 3, 2, ["x"], seed=8, task=T, ties=True)
    assert set(ties["value"]) <= {0.0, 0.5, 1.0}


def test_tasks_are_independent():
    a = make_similarities(2, 4, 3, ["x"], seed=9, task="A")
    b = make_similarities(3, 5, 2, ["x"], seed=10, task="B")
    sims = pd.concat([a[0], b[0]], ignore_index=True)
    roles = {**a[1], **b[1]}
    both = ref.king(sims, roles, ["x"])
    assert both == {**ref.king(a[0], a[1], ["x"]), **ref.king(b[0], b[1], ["x"])}
    assert set(both) == {"A", "B"} and both["A"][1] == 8 and both["B"][1] == 15
    assert ref.jack(sims, roles, ["x"]) == {**ref.jack(*a[:2], ["x"]), **ref.jack(*b[:2], ["x"])}
    assert ref.orange(sims, roles, ["x"])["B"][1] == 3 * 5 * 2
