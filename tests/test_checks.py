"""The checks as pure functions (qarla_spark.io.checks), without Spark.

Spark and the driver run the same functions (tests/test_validate.py runs
every validation test through both); here: the results do not depend on the
order of the records (Spark's row order is not defined), and the median and
the problem selection follow Spark's rules.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.io.checks import _median, check_records, problem_rows, select_problems
from qarla_spark.names import RAW_FIELDS
from qarla_spark.io.validate import finish_problems


def _record(kind, line, file="a.jsonl", **values):
    rec = dict.fromkeys(RAW_FIELDS)
    rec.update(kind=kind, file=file, line=line, unit="line", embedded=False)
    rec.update(values)
    return rec


@st.composite
def raw_records(draw):
    """Small messy inputs: few names, so that duplicates, unknown judgments,
    orphan sources, two roles, embedded copies and judgments by several
    raters (their means) all occur."""
    n = draw(st.integers(1, 40))
    recs = []
    for i in range(n):
        kind = draw(st.sampled_from(["summary"] * 4 + ["judgment", "source", "problem"]))
        file = draw(st.sampled_from(["a.jsonl", "b.jsonl"]))
        task, topic = draw(st.sampled_from("tu")), draw(st.sampled_from(["d1", "d2", "d3"]))
        who = draw(st.sampled_from(["A", "B", "C", "D", "1", "2"]))
        if kind == "summary":
            recs.append(_record(kind, i + 1, file, task=task, topic=topic, summarizer=who,
                                role=draw(st.sampled_from(["model", "model", "peer"])),
                                text=draw(st.sampled_from(["x .", "y ."])),
                                embedded=draw(st.booleans())))
        elif kind == "judgment":
            recs.append(_record(kind, i + 1, file, task=task, topic=topic, summarizer=who,
                                criterion=draw(st.sampled_from(["q", "r"])),
                                rater=draw(st.sampled_from([None, None, "a", "b"])),
                                score=draw(st.sampled_from([1.0, 0.1, 2.5, 1 / 3]))))
        elif kind == "source":
            recs.append(_record(kind, i + 1, file, task=task, topic=topic,
                                documents=[draw(st.sampled_from(["doc .", "other ."]))],
                                embedded=draw(st.booleans())))
        else:
            recs.append(_record(kind, i + 1, file, severity="error", field=None,
                                message="malformed JSON at column 1"))
    return recs


def _canonical(rows):
    return sorted(repr(sorted(r.items())) for r in rows)


@settings(max_examples=75, deadline=None)
@given(raw_records(), st.randoms(use_true_random=False))
def test_checks_do_not_depend_on_the_order_of_records(records, rnd):
    topic_rows, task_rows = check_records(records)
    shuffled = list(records)
    rnd.shuffle(shuffled)
    topic_rows2, task_rows2 = check_records(shuffled)
    assert _canonical(topic_rows) == _canonical(topic_rows2)
    assert _canonical(task_rows) == _canonical(task_rows2)
    problems = problem_rows(topic_rows) + problem_rows(task_rows)
    shuffled_problems = list(problems)
    rnd.shuffle(shuffled_problems)
    for limit in (1, 3, 50):
        a = finish_problems(select_problems(problems, limit, 3), limit)
        b = finish_problems(select_problems(shuffled_problems, limit, 3), limit)
        assert a[1:3] == b[1:3] and a[4] == b[4]
        assert [p.format() for p in a[0]] == [p.format() for p in b[0]]


def test_every_problem_is_counted_and_the_shown_are_bounded():
    recs = [_record("problem", i, severity="error", field=None, message="bad")
            for i in range(1, 8)]
    recs += [_record("summary", 20 + i, task="t", topic=f"d{i}", summarizer="A", role="model",
                     text="x .") for i in range(5)]
    topic_rows, task_rows = check_records(recs)
    problems = problem_rows(topic_rows) + problem_rows(task_rows)
    shown, n_errors, n_warnings, single, groups = finish_problems(
        select_problems(problems, 3, 2), 3)
    # 7 parse errors; per topic: 1 model (few_models) and no peers (no_peers)
    assert (n_errors, n_warnings) == (7, 10)
    assert [p.line for p in shown if p.severity == "error"] == [1, 2, 3]
    assert {(g.kind, g.count, g.first) for g in groups} == {
        ("few_models", 5, ("d0", "d1")), ("no_peers", 5, ("d0", "d1"))}


def test_median_interpolates_like_spark_percentile():
    assert _median([3]) == 3.0 and _median([4, 1]) == 2.5 and _median([5, 1, 3, 9]) == 4.0


def test_task_description_counts_by_hand():
    recs = [_record("summary", i, task="t", topic=topic, summarizer=who, role=role, text="x .")
            for i, (topic, who, role) in enumerate(
                [("d1", "A", "model"), ("d1", "B", "model"), ("d1", "C", "model"),
                 ("d1", "1", "peer"), ("d2", "A", "model"), ("d2", "B", "model"),
                 ("d2", "C", "model"), ("d2", "D", "model"), ("d2", "1", "peer"),
                 ("d2", "2", "peer")], start=1)]
    recs.append(_record("judgment", 30, task="t", topic="d2", summarizer="2", criterion="q",
                        score=3.0))
    recs.append(_record("source", 31, task="t", topic="d2", documents=["doc ."]))
    _, task_rows = check_records(recs)
    (stats,) = [r for r in task_rows if r["kind"] == "stats"]
    # counted by hand from the records above
    assert (stats["n_topics"], stats["models_min"], stats["models_median"],
            stats["models_max"]) == (2, 3, 3.5, 4)
    assert (stats["n_model_summarizers"], stats["n_peer_systems"], stats["n_summaries"],
            stats["n_topics_with_sources"]) == (4, 2, 10, 1)
    assert (stats["criteria"], stats["criterion_counts"]) == (["q"], [1])


class _NotEmbedded:
    """A record's ``embedded`` flag (false) whose lifetime a test can watch
    (it is part of the raw record only: no canonical row keeps it)."""

    def __bool__(self):
        return False


def test_the_driver_drops_each_topics_raw_records_once_checked(monkeypatch):
    """Issue 13 (driver memory): while the last topic is checked, the raw
    records of the topics before it are gone (a run's driver holds the raw
    records and the canonical rows of a large input at once otherwise)."""
    import gc
    import weakref

    from qarla_spark.io import checks

    refs = {}

    def records():
        for t in range(5):
            for i, (who, role) in enumerate([("A", "model"), ("B", "model"),
                                             ("C", "model"), ("1", "peer")]):
                flag = _NotEmbedded()
                refs.setdefault(f"d{t}", []).append(weakref.ref(flag))
                rec = _record("summary", 10 * t + i, task="t", topic=f"d{t}",
                              summarizer=who, role=role, text=f"{who} {t} .")
                rec["embedded"] = flag
                yield rec

    alive_at_last = []
    real = checks.check_topic

    def watched(recs, *language):
        recs = list(recs)
        if recs[0]["topic"] == "d4":
            gc.collect()
            alive_at_last.extend(t for t, rs in refs.items() if t != "d4"
                                 and any(r() is not None for r in rs))
        return real(recs, *language)

    monkeypatch.setattr(checks, "check_topic", watched)
    topic_rows, _ = checks.check_records(records())
    assert len(refs) == 5 and alive_at_last == []
    assert sum(r["kind"] == "summary" for r in topic_rows) == 20


def test_canonical_rows_carry_their_kinds_fields_and_full_row_adds_the_rest():
    from qarla_spark.io.checks import TOPIC_FIELDS, check_topic, full_row
    recs = [_record("summary", 1, task="t", topic="d", summarizer="A", role="model",
                    text="x ."),
            _record("judgment", 2, task="t", topic="d", summarizer="A", criterion="q",
                    score=2.0),
            _record("source", 3, task="t", topic="d", documents=["doc ."])]
    rows = {r["kind"]: r for r in check_topic(recs)}
    assert rows["summary"] == {"kind": "summary", "task": "t", "topic": "d",
                               "summarizer": "A", "role": "model", "text": "x ."}
    assert set(rows["judgment"]) == {"kind", "task", "topic", "summarizer", "criterion",
                                     "score"}
    assert rows["source"]["documents"] == ["doc ."]
    full = full_row(rows["summary"])
    assert tuple(full) == TOPIC_FIELDS and full["text"] == "x ." and full["score"] is None
    assert full_row(full) is full


def test_checked_input_hands_its_rows_over_once(tmp_path):
    """The driver's rows move to Spark with the testbed; a second testbed
    from the same object is refused rather than built from nothing. The
    inputs are read file by file, as consumed (no list of every record)."""
    import pytest

    from qarla_spark.io import CheckedInput, InputSpec, read_records
    path = tmp_path / "s.jsonl"
    path.write_text('{"task": "t", "topic": "d", "summarizer": "A", "role": "model", '
                    '"text": "x ."}\n')
    records = read_records([InputSpec(str(path), "summaries", None)])
    assert not isinstance(records, list) and next(records)["summarizer"] == "A"
    checked = CheckedInput(None, [], None, 0)
    with pytest.raises(RuntimeError, match="already handed to Spark"):
        checked.testbed(None)


@settings(max_examples=60, deadline=None)
@given(raw_records())
def test_checked_tables_are_the_checked_rows_in_the_schemas_spark_gives(recs):
    """What the driver hands to Spark: each kind's checked rows, in order,
    with every field, in the Arrow form of the Spark schemas of the rows
    Spark checks (the Spark side: test_validate.py's
    test_both_readers_give_equal_tables)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from qarla_spark.io.validate import CheckedTables, checked_tables
    topic_rows, task_rows = check_records(recs)
    tables = checked_tables(topic_rows, task_rows)
    schemas = CheckedTables.spark_schemas()
    expected = {"summaries": [r for r in topic_rows if r["kind"] == "summary"],
                "judgments": [r for r in topic_rows if r["kind"] == "judgment"],
                "ratings": [r for r in topic_rows if r["kind"] == "rating"],
                "sources": [r for r in topic_rows if r["kind"] == "source"],
                "problems": problem_rows(topic_rows) + problem_rows(task_rows),
                "tasks": task_rows}
    for name, rows in expected.items():
        table = getattr(tables, name)
        assert table.schema == to_arrow_schema(schemas[name]), name
        fields = [f.name for f in schemas[name].fields]
        assert table.to_pylist() == [{f: r[f] for f in fields} for r in rows], name
