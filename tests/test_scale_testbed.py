"""The scale testbed generator (devtools.testbeds): pure Python, no Spark."""

from __future__ import annotations

import collections

import pytest

from devtools.testbeds import (distinct_topic, scale_testbed, summeval_records, topic_order,
                               write_testbed)
from qarla_spark.io.parsers import parse_file


@pytest.fixture(scope="module")
def summeval():
    return summeval_records()


def by_topic(records):
    topics = collections.defaultdict(list)
    for r in records:
        topics[(r["task"], r["topic"])].append(r)
    return topics


def test_shape_roles_and_distinct_texts(summeval):
    tb = scale_testbed(3, 40, seed=5, records=summeval)
    assert tb.tasks == ["scale00", "scale01", "scale02"]
    assert len(tb.summaries) == 3 * 40 * 27 and len(tb.sources) == 3 * 40 and tb.n_topics == 120
    topics = by_topic(tb.summaries)
    assert len(topics) == 120
    for rows in topics.values():
        roles = collections.Counter(r["role"] for r in rows)
        assert roles == {"model": 11, "peer": 16}
        assert len({r["text"] for r in rows}) == 27                 # distinct texts
        assert len({r["summarizer"] for r in rows}) == 27
        assert all(r["text"].strip() for r in rows)
    peers = {r["summarizer"] for r in tb.summaries if r["role"] == "peer"}
    models = {r["summarizer"] for r in tb.summaries if r["role"] == "model"}
    assert len(peers) == 16 and len(models) == 11 and not peers & models


def test_a_generated_topic_is_one_summeval_topic(summeval):
    summaries, sources = summeval
    base_rows = by_topic([dict(r, task="x") for r in summaries])
    documents = {s["topic"]: s["documents"] for s in sources}
    tb = scale_testbed(2, 30, seed=1, records=summeval)
    generated = by_topic(tb.summaries)
    for (task, topic), base in tb.origin.items():
        original = {r["summarizer"]: r for r in base_rows[("x", base)]}
        rows = generated[(task, topic)]
        assert {r["summarizer"] for r in rows} == set(original)
        for r in rows:
            o = original[r["summarizer"]]
            assert r["role"] == o["role"]
            if r["text"] == o["text"]:
                assert r.get("human") == o.get("human")      # judgments copied with the text
            else:                                            # a changed duplicate: an extract
                assert "human" not in r and set(r["text"].split()) <= set(o["text"].split())
    assert all(s["documents"] == documents[tb.origin[(s["task"], s["topic"])]]
               for s in tb.sources)


def test_rounds_use_every_summeval_topic_evenly(summeval):
    tb = scale_testbed(2, 100, seed=13, records=summeval)
    for task in tb.tasks:
        used = [b for (t, _), b in tb.origin.items() if t == task]
        assert len(set(used)) == 100                          # no article twice in a task
    big = scale_testbed(1, 250, seed=13, records=summeval)
    counts = collections.Counter(big.origin.values())
    assert len(counts) == 100 and set(counts.values()) == {2, 3}
    # every task its own permutation; rounds of the sorted pool
    orders = [[b for (t, _), b in tb.origin.items() if t == task] for task in tb.tasks]
    assert orders[0] != orders[1]
    order = topic_order(["c", "a", "b"], 7, 0, 0)
    assert sorted(order[:3]) == sorted(order[3:6]) == ["a", "b", "c"] and len(order) == 7


def test_seeded_reproducibility(summeval):
    a = scale_testbed(2, 20, seed=7, records=summeval)
    b = scale_testbed(2, 20, seed=7, records=summeval)
    c = scale_testbed(2, 20, seed=8, records=summeval)
    assert a.summaries == b.summaries and a.sources == b.sources and a.origin == b.origin
    assert a.origin != c.origin
    # a task's draw does not depend on how many tasks there are
    one = scale_testbed(1, 20, seed=7, records=summeval)
    assert [v for (t, _), v in a.origin.items() if t == "scale00"] == list(one.origin.values())


def test_duplicates_become_distinct_extracts_and_lose_judgments():
    rows = [{"task": "x", "topic": "t", "summarizer": s, "role": role, "text": text,
             **({"human": {"q": 3.0}} if role == "peer" else {})}
            for s, role, text in [("ref00", "model", "A b . C d ."),
                                  ("M1", "peer", "A b . C d . E f ."),
                                  ("M0", "peer", "A b . C d . E f ."),
                                  ("M2", "peer", "A b . C d . E f ."),
                                  ("M3", "peer", "solo")]]
    out, changed = distinct_topic(rows)
    texts = {r["summarizer"]: r["text"] for r in out}
    assert changed == 2 and len(set(texts.values())) == 5
    assert texts["M0"] == "A b . C d . E f ."                 # first by name keeps it
    assert texts["M1"] != texts["ref00"] and texts["M2"] != texts["ref00"]
    assert {r["summarizer"] for r in out if "human" in r} == {"M0", "M3"}
    assert [r["summarizer"] for r in out][:1] == ["ref00"]    # models first


def test_written_files_parse_without_problems(summeval, tmp_path):
    tb = scale_testbed(2, 3, seed=2, records=summeval)
    summaries_path, sources_path = write_testbed(tb, str(tmp_path / "tb"))
    parsed = list(parse_file(summaries_path, open(summaries_path, "rb").read(), "summaries"))
    kinds = collections.Counter(r["kind"] for r in parsed)
    assert kinds["problem"] == 0 and kinds["summary"] == 2 * 3 * 27
    sources = list(parse_file(sources_path, open(sources_path, "rb").read(), "sources"))
    assert collections.Counter(r["kind"] for r in sources) == {"source": 6}
