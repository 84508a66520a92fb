"""Metric clustering (SPEC §6): the agglomerative rule with an exact pass-count
oracle, the executors' pass counts, representatives and the best set."""

from __future__ import annotations

from itertools import combinations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures.clustering import (agglomerate, bit_slices, popcount, representatives,
                                             slice_counts, subsets)
from qarla_spark.measures.masks import peer_sample_bits, set_words, topic_sample_masks, unpack
from qarla_spark.measures.metric_sets import MetricSet, best_of


def oracle(masks):
    """The number of samples passing every metric of S, over a list of
    per-sample pass sets (brute force)."""
    def count(sets):
        return [sum(1 for m in masks if s <= m) for s in sets]
    return count


def brute_sim(masks, a, b):
    """sim(C, C') = P[H_C <-> H_C'] counted sample by sample."""
    return sum((a <= m) == (b <= m) for m in masks) / len(masks)


def test_sim_identity_used_by_agglomerate():
    rng = np.random.default_rng(0)
    masks = [frozenset(np.flatnonzero(rng.random(5) < 0.6)) for _ in range(200)]
    count = oracle(masks)
    n = len(masks)
    for a, b in combinations([frozenset([0]), frozenset([1, 2]), frozenset([3]),
                              frozenset([2, 4])], 2):
        ca, cb, cab = count([a, b, a | b])
        assert (n - ca - cb + 2 * cab) / n == brute_sim(masks, a, b)


def test_agglomerate_merges_the_redundant_metrics_first():
    """Metrics 0 and 1 always pass together, 2 and 3 too, 4 is independent:
    with k = 3 the clusters are {0,1}, {2,3}, {4}."""
    rng = np.random.default_rng(1)
    masks = []
    for _ in range(300):
        a, b, c = rng.random(3) < 0.5
        masks.append(frozenset(i for i, on in enumerate([a, a, b, b, c]) if on))
    clusters = agglomerate(5, 3, oracle(masks))
    assert clusters == [frozenset({0, 1}), frozenset({2, 3}), frozenset({4})]


def test_agglomerate_matches_a_naive_implementation():
    rng = np.random.default_rng(2)
    masks = [frozenset(np.flatnonzero(rng.random(6) < rng.random())) for _ in range(150)]
    got = agglomerate(6, 2, oracle(masks))
    clusters = [frozenset([i]) for i in range(6)]
    while len(clusters) > 2:
        pairs = sorted(((brute_sim(masks, a, b), a, b) for a, b in combinations(clusters, 2)),
                       key=lambda t: (-t[0], sorted(t[1]), sorted(t[2])))
        _, a, b = pairs[0]
        clusters = [c for c in clusters if c not in (a, b)] + [a | b]
    assert sorted(got, key=sorted) == sorted(clusters, key=sorted)


def test_clusters_do_not_depend_on_the_order_of_the_metric_list():
    """Ties between candidate merges are broken by metric names, so listing
    the metrics in another order gives the same named clusters."""
    names = ["a", "b", "c", "d", "e"]
    # a, b, c pass together; d and e always; equal sims everywhere else
    masks = [frozenset({0, 1, 2, 3, 4}), frozenset({3, 4}), frozenset({0, 1, 2}), frozenset()]
    got = agglomerate(5, 2, oracle(masks), names)
    perm = [4, 2, 0, 3, 1]                   # position j holds metric names[perm[j]]
    permuted = [frozenset(perm.index(i) for i in m) for m in masks]
    other = agglomerate(5, 2, oracle(permuted), [names[i] for i in perm])
    named = sorted(sorted(names[i] for i in c) for c in got)
    assert named == sorted(sorted(names[perm[j]] for j in c) for c in other)
    assert named == [["a", "b", "c"], ["d", "e"]]


def test_bit_slices_count_like_the_brute_force_oracle():
    """70 metrics (two mask words) and 150 samples (three slice words, the
    last one padded): counts of singles, pairs, sets sharing a core (as
    during the agglomeration), mixed batches, metrics of the second word."""
    rng = np.random.default_rng(4)
    n_metrics = 70
    masks = [frozenset(np.flatnonzero(rng.random(n_metrics) < 0.8)) for _ in range(150)]
    words = np.array([set_words(m, n_metrics) for m in masks], dtype=np.int64)
    slices = bit_slices(unpack(words, n_metrics))
    assert slices.shape == (70, 3) and slices.dtype == np.uint64
    core = frozenset(range(3, 9))
    batches = [
        [frozenset([i]) for i in range(n_metrics)],
        [frozenset(p) for p in combinations(range(0, n_metrics, 7), 2)],
        [core | {j} for j in range(n_metrics)],
        [frozenset([1, 65]), frozenset([64, 69]), core, frozenset(range(60, 70)),
         frozenset([0]), frozenset(range(n_metrics))],
    ]
    for sets in batches:
        expected = [sum(1 for m in masks if s <= m) for s in sets]
        assert list(slice_counts(slices, sets)) == expected
    assert list(slice_counts(bit_slices(unpack(words[:0], n_metrics)), [core])) == [0]


def test_popcount_with_and_without_numpy_bitwise_count(monkeypatch):
    words = np.array([0, 1, 3, 2 ** 63 - 1, 2 ** 64 - 1], dtype=np.uint64)
    assert popcount(words) == 0 + 1 + 2 + 63 + 64
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert popcount(words) == 130


def test_representatives_and_best_set():
    def ms(text):
        return MetricSet.parse(text)
    metrics = ["a", "b", "c", "d"]
    clusters = [frozenset({0, 1}), frozenset({2, 3})]
    king = {ms("a"): 0.2, ms("b"): 0.3, ms("c"): 0.1, ms("d"): 0.1}
    assert representatives(clusters, metrics, king) == ["b", "c"]  # tie c/d: name order
    assert best_of({ms("b"): 0.3, ms("b,c"): 0.3, ms("c"): 0.1}) == ms("b")  # fewer metrics
    assert best_of({ms("b,c"): 0.4, ms("a,d"): 0.4}) == ms("a,d")           # then name order
    assert len(subsets(["x", "y", "z"])) == 7
    # a name that is a prefix of another: code-point order, the shorter first
    prefix = {ms("TVM.1"): 0.5, ms("TVM.128"): 0.5}
    assert representatives([frozenset({0, 1})], ["TVM.128", "TVM.1"], prefix) == ["TVM.1"]


def test_pass_rates_of_the_topics_bit_slices_equal_the_oracle():
    """The clustering counts over the task's samples as the QARLA stage's
    first round makes them — each topic's peer samples packed into bit
    slices by the per-topic kernel, the slices of the partitions
    concatenated, in any order — equal the brute-force count over the
    peers' samples (reference QUEEN samples built with plain loops), and so
    does the agglomeration."""
    import reference_qarla as ref
    from testbeds import make_similarities
    from qarla_spark.measures.masks import set_words
    from qarla_spark.stages.qarla import FirstRound, _combine_first, _first_kernel

    metrics = ["x1", "x2", "x3"]
    sims, roles, summaries = make_similarities(n_topics=3, n_models=4, n_peers=3,
                                               metrics=metrics, seed=3)
    ctx = FirstRound(np.asarray([set_words([i], 3) for i in range(3)], dtype=np.int64),
                     "standard", "auto", metrics, [])
    records = []
    for topic, part in sims.groupby("topic"):
        names = sorted(summaries[summaries.topic == topic].summarizer)
        at = {n: i for i, n in enumerate(names)}
        values = np.full((len(names), len(names), 3), np.nan)
        for r in part.itertuples():
            values[at[r.summarizer_s], at[r.summarizer_r], metrics.index(r.metric)] = r.value
        role = dict(zip(summaries.summarizer, summaries.role))
        row = {"task": "t", "topic": topic, "names": names, "roles": [role[n] for n in names],
               "n_metrics": 3, "values": values.tobytes()}
        records += _first_kernel(row, ctx)
    lookup = ref.sim_from_frame(sims)
    masks = []
    for (task, topic), (models, peers) in ref.topics_of(roles).items():
        for e in peers:
            for m, m1, m2 in ref.model_triples(models):
                masks.append(frozenset(i for i, x in enumerate(metrics)
                                       if lookup[(task, topic, e, m, x)]
                                       >= lookup[(task, topic, m1, m2, x)]))
    assert len(masks) == 3 * 3 * 4 * 12
    sets = [frozenset([0]), frozenset([1, 2]), frozenset([0, 1, 2]), frozenset([2]),
            frozenset([0, 1])]
    for order in (records, records[::-1]):      # partitions: one, or one per topic
        combined = _combine_first(list(order))
        block = np.concatenate([v.slices for _, k, v in combined if k == "bits"], axis=1)
        assert sum(v.n for _, k, v in combined if k == "bits") == len(masks)
        assert list(slice_counts(block, sets)) == oracle(masks)(sets)
        assert agglomerate(3, 2, lambda ss: list(slice_counts(block, ss)), metrics) == \
            agglomerate(3, 2, oracle(masks), metrics)


def test_peer_sample_bits_are_the_peer_rows_of_the_sample_masks():
    """The clustering's pass bits (peers' samples only, unpacked) are the
    rows of the QUEEN sample masks whose e is a peer, in the same order,
    for both kinds of triples."""
    rng = np.random.default_rng(8)
    roles = np.array(["model", "peer", "model", "model", "peer", "model", "peer"])
    values = rng.integers(0, 4, size=(7, 7, 5)).astype(np.float64)
    for triples in ("standard", "distinct"):
        e, _, _, _, words = topic_sample_masks(roles, values, triples)
        bits = peer_sample_bits(roles, values, triples)
        assert bits.dtype == bool and bits.shape == ((roles[e] == "peer").sum(), 5)
        assert (bits == unpack(words[roles[e] == "peer"], 5)).all()
    assert peer_sample_bits(np.array(["model"] * 3), values[:3, :3], "standard").shape == (0, 5)


def _reference_agglomerate(n, k, count, names):
    """The rule as SPEC §6 states it, re-ranking every pair at each merge:
    the highest integer similarity, ties by the pair's keys (each cluster
    named by its sorted metric names, the smaller key first)."""
    clusters = [frozenset([i]) for i in range(n)]

    def c(s):
        return count([s])[0]

    def key(a):
        return tuple(sorted(names[i] for i in a))

    while len(clusters) > k:
        ranked = []
        for a, b in combinations(clusters, 2):
            pair = (a, b) if key(a) < key(b) else (b, a)
            ranked.append(((-(2 * c(a | b) - c(a) - c(b)), key(pair[0]), key(pair[1])), pair))
        a, b = min(ranked, key=lambda t: t[0])[1]
        clusters = [x for x in clusters if x not in (a, b)] + [a | b]
    return sorted(clusters, key=key)


def test_agglomerate_equals_the_reference_rule_with_many_ties():
    """Few samples make equal similarities common: the incremental
    agglomeration (issue 36) merges exactly as the reference re-ranking."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=200, deadline=None)
    @given(st.integers(2, 9), st.data())
    def check(n, data):
        samples = data.draw(st.lists(st.lists(st.booleans(), min_size=n, max_size=n),
                                     min_size=1, max_size=6))
        masks = [frozenset(i for i, on in enumerate(s) if on) for s in samples]
        k = data.draw(st.integers(1, n))
        names = data.draw(st.permutations([f"m{i}" for i in range(n)]))
        assert agglomerate(n, k, oracle(masks), names) == \
            _reference_agglomerate(n, k, oracle(masks), names)

    check()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(1, 5), st.integers(0, 2 ** 20))
def test_a_partitions_peer_rows_are_kept_or_summed_to_the_same_means(n_topics, n_sets, seed):
    """A partition's one-topic ``sys``/``sys2`` rows of a key leave it as
    they are (counts as int32) up to PEER_ROWS_KEPT_UP_TO topics, else as
    one record of their exact sums; either way, and mixed with other
    partitions' records in any order, the reduce's means (PeerSums) are
    the same doubles as the sums of the rows themselves."""
    from qarla_spark.measures import qarla_task as qt
    from qarla_spark.stages.qarla import PEER_ROWS_KEPT_UP_TO, _peer_records
    from qarla_spark.stages.records import PeerCounts

    rng = np.random.default_rng(seed)
    peers = ["p0", "p1", "p2", "p3"]
    rows = []
    for _ in range(n_topics):
        chosen = sorted(rng.choice(peers, size=int(rng.integers(1, 5)), replace=False))
        den = rng.integers(1, 200, size=len(chosen))
        num = rng.integers(0, den[:, None] + 1, size=(len(chosen), n_sets))
        rows.append(PeerCounts(list(chosen), num.astype(np.int64), [int(d) for d in den],
                               [1] * len(chosen)))
    out = _peer_records({"t": list(rows)}, "sys2")
    assert all(key == "t" and kind == "sys2" for key, kind, _ in out)
    if n_topics <= PEER_ROWS_KEPT_UP_TO:
        assert len(out) == n_topics
        assert all(v.real is None and np.asarray(v.num).dtype == np.int32 for _, _, v in out)
        assert all((np.asarray(v.num) == r.num).all() for (_, _, v), r in zip(out, rows))
    else:
        assert len(out) == 1 and out[0][2].real is not None
    want = qt.PeerSums.of_values(n_sets, rows).means()
    half = _peer_records({"t": rows[: n_topics // 2]}, "sys2") + \
        _peer_records({"t": rows[n_topics // 2:]}, "sys2")
    for got_rows in (out, half, half[::-1]):
        got = qt.PeerSums.of_values(n_sets, [v for _, _, v in got_rows]).means()
        assert sorted(got) == sorted(want)
        for name in want:
            assert np.asarray(got[name]).tobytes() == np.asarray(want[name]).tobytes()


def test_counts_beyond_int32_are_kept_as_they_are():
    from qarla_spark.stages.qarla import _compact_counts
    from qarla_spark.stages.records import PeerCounts
    big = PeerCounts(["p"], np.array([[1 << 40]], dtype=np.int64), [1 << 41], [1])
    assert _compact_counts(big).num.dtype == np.int64
    small = PeerCounts(["p"], np.array([[3]], dtype=np.int64), [4], [1])
    assert _compact_counts(small).num.dtype == np.int32
