"""Validation: relational checks, warnings, the testbed description.

Every test runs twice: with the inputs read and checked on Spark
(``load_testbed``) and in the driver (``check_in_driver``, what small local
inputs get); both must pass the same assertions, and
``test_both_readers_give_equal_tables`` compares them table by table.

Both readers apply the same checks (:func:`~qarla_spark.io.checks.check_topic`
and ``check_task``: in the driver over every record, on Spark per topic and
per task group), so the Spark reader's cases are marked slow (CI runs them)
but for the comparison of the two on a testbed with every kind of problem,
the languages' check and the missing or empty input (:data:`BOTH_FAST`).
"""

from __future__ import annotations

import json

import pytest

from helpers import make_testbed, write_jsonl
from qarla_spark.errors import InputError
from qarla_spark.io import InputSpec, check_in_driver, load_testbed

pytestmark = pytest.mark.spark

READER = {"name": "spark"}


@pytest.fixture(params=[pytest.param("spark", marks=pytest.mark.slow), "driver"], autouse=True)
def reader(request):
    READER["name"] = request.param
    yield request.param


#: a test whose Spark reader's case stays in the fast suite too
BOTH_FAST = pytest.mark.parametrize("reader", ["spark", "driver"], indirect=True)


def load(spark, *specs, limit=50, languages=None):
    if READER["name"] == "spark":
        return load_testbed(spark, list(specs), limit=limit, languages=languages)
    # file: URIs: a missing plain path may be on HDFS, so only Spark says
    specs = [InputSpec("file:" + s.path, s.kind, s.task) for s in specs]
    checked = check_in_driver(specs, limit, languages=languages)
    assert checked is not None, "the driver declined a small local input"
    return checked.testbed(spark), checked.report


def messages(report, severity=None):
    return [p.format() for p in report.problems if severity in (None, p.severity)]


def test_small_testbed_description(spark, tmp_path):
    recs = make_testbed(n_topics=3, n_models=4, n_peers=5)
    # a fourth topic with 5 models and no judgments for one peer
    recs += [{"task": "t", "topic": "t3", "summarizer": f"m{i}", "role": "model",
              "text": "x ."} for i in range(5)]
    recs += [{"task": "t", "topic": "t3", "summarizer": "p9", "role": "peer", "text": "y ."}]
    path = write_jsonl(tmp_path / "s.jsonl", recs)
    testbed, report = load(spark, InputSpec(str(path)))
    assert report.ok and report.n_warnings == 0
    (t,) = report.tasks
    # counted by hand from the records above
    assert (t.task, t.n_topics, t.models_min, t.models_median, t.models_max) == ("t", 4, 4, 4.0, 5)
    assert (t.n_model_summarizers, t.n_peer_systems) == (5, 6)
    assert (t.n_summaries, t.n_model_summaries, t.n_peer_summaries) == (33, 17, 16)
    assert t.judgments == {"quality": 15}
    assert t.n_topics_with_sources == 0
    assert testbed.summaries.count() == 33
    assert testbed.summaries.columns == ["task", "topic", "summarizer", "role", "text"]
    assert testbed.judgments.columns == ["task", "topic", "summarizer", "criterion", "score"]


def test_many_tasks_are_described_separately(spark, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", make_testbed(task="a", n_topics=2))
    b = write_jsonl(tmp_path / "b.jsonl", make_testbed(task="b", n_topics=3, judged=False))
    _, report = load(spark, InputSpec(str(a)), InputSpec(str(b)))
    assert [(t.task, t.n_topics, bool(t.judgments)) for t in report.tasks] == [
        ("a", 2, True), ("b", 3, False)]


def test_default_task_from_the_command_line(spark, tmp_path):
    recs = [{k: v for k, v in r.items() if k != "task"} for r in make_testbed()]
    path = write_jsonl(tmp_path / "s.jsonl", recs)
    _, report = load(spark, InputSpec(str(path), task="duc2004"))
    assert [t.task for t in report.tasks] == ["duc2004"]


def test_duplicate_summary_names_both_places(spark, tmp_path):
    recs = make_testbed()
    a = write_jsonl(tmp_path / "a.jsonl", recs)
    b = write_jsonl(tmp_path / "b.jsonl", [recs[5]])
    _, report = load(spark, InputSpec(str(a)), InputSpec(str(b)))
    assert report.n_errors == 1
    (msg,) = messages(report, "error")
    assert f"{a}, line 6" in msg and f"{b}, line 1" in msg
    assert "duplicate summary" in msg and "summarizer 'p1'" in msg
    with pytest.raises(InputError) as info:
        report.raise_for_errors()
    assert "1 error" in str(info.value) and "duplicate summary" in str(info.value)


def test_judgment_for_unknown_summary(spark, tmp_path):
    s = write_jsonl(tmp_path / "s.jsonl", make_testbed(judged=False))
    j = write_jsonl(tmp_path / "j.jsonl", [
        {"task": "t", "topic": "t0", "summarizer": "p0", "criterion": "q", "score": 1},
        {"task": "t", "topic": "t0", "summarizer": "p77", "criterion": "q", "score": 1}])
    _, report = load(spark, InputSpec(str(s)), InputSpec(str(j), "judgments"))
    (msg,) = messages(report, "error")
    assert f"{j}, line 2, field 'summarizer'" in msg and "unknown summary" in msg
    assert "'p77'" in msg


def test_duplicate_judgment(spark, tmp_path):
    s = write_jsonl(tmp_path / "s.jsonl", make_testbed())  # embeds quality for peers
    j = write_jsonl(tmp_path / "j.jsonl", [
        {"task": "t", "topic": "t0", "summarizer": "p0", "criterion": "quality", "score": 1}])
    _, report = load(spark, InputSpec(str(s)), InputSpec(str(j), "judgments"))
    (msg,) = messages(report, "error")
    assert "duplicate judgment" in msg and "criterion 'quality'" in msg and str(j) in msg


def test_judgments_with_raters_keep_each_rater_and_give_the_mean(spark, tmp_path):
    """Issue 39, part 3: SacreROUGE's lists and named raters; the testbed's
    judgments (what the stages read) are each summary's exact mean over its
    raters, its ratings every rater's score (the judgments/ table)."""
    from fractions import Fraction
    s = write_jsonl(tmp_path / "s.jsonl", make_testbed(judged=False))
    j = write_jsonl(tmp_path / "j.jsonl", [
        {"instance_id": "t0", "summarizer_id": "p0", "summarizer_type": "peer", "task": "t",
         "metrics": {"expert": {"coherence": [0.1, 0.2, 0.3]}}},
        {"task": "t", "topic": "t0", "summarizer": "p1", "criterion": "expert_coherence",
         "rater": "ann", "score": 4},
        {"task": "t", "topic": "t0", "summarizer": "p1", "criterion": "expert_coherence",
         "rater": "bob", "score": 5},
        {"task": "t", "topic": "t1", "summarizer": "p1", "criterion": "expert_coherence",
         "score": 2.5}])
    testbed, report = load(spark, InputSpec(str(s)), InputSpec(str(j), "judgments"))
    assert report.ok and report.tasks[0].judgments == {"expert_coherence": 3}
    means = sorted(tuple(r) for r in testbed.judgments.collect())
    exact = float((Fraction(0.1) + Fraction(0.2) + Fraction(0.3)) / 3)
    assert means == [("t", "t0", "p0", "expert_coherence", exact),
                     ("t", "t0", "p1", "expert_coherence", 4.5),
                     ("t", "t1", "p1", "expert_coherence", 2.5)]
    assert testbed.judgments.columns == ["task", "topic", "summarizer", "criterion", "score"]
    ratings = sorted((r.topic, r.summarizer, r.rater or "", r.score)
                     for r in testbed.ratings.collect())
    assert ratings == [("t0", "p0", "0", 0.1), ("t0", "p0", "1", 0.2), ("t0", "p0", "2", 0.3),
                       ("t0", "p1", "ann", 4.0), ("t0", "p1", "bob", 5.0),
                       ("t1", "p1", "", 2.5)]


def test_parse_errors_reach_the_report_with_their_place(spark, tmp_path):
    recs = make_testbed()
    path = write_jsonl(tmp_path / "s.jsonl", recs[:3] + ['{"broken": '] + recs[3:])
    _, report = load(spark, InputSpec(str(path)))
    (p,) = [p for p in report.problems if p.severity == "error"]
    assert (p.file, p.line) == (str(path), 4) and "malformed JSON" in p.message


def test_error_list_is_bounded_but_counted(spark, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", ["{bad"] * 30)
    _, report = load(spark, InputSpec(str(path)), limit=5)
    assert report.n_errors == 30
    assert len([p for p in report.problems if p.severity == "error"]) == 5
    assert [p.line for p in report.problems] == [1, 2, 3, 4, 5]
    with pytest.raises(InputError) as info:
        report.raise_for_errors()
    assert "30 errors (first 5 shown)" in str(info.value)


def test_topics_with_too_few_models_are_named(spark, tmp_path):
    recs = make_testbed(n_topics=1, n_models=4)
    recs += [dict(r, topic="small") for r in make_testbed(n_topics=1, n_models=2)]
    recs += [dict(r, topic="three") for r in make_testbed(n_topics=1, n_models=3)]
    path = write_jsonl(tmp_path / "s.jsonl", recs)
    _, report = load(spark, InputSpec(str(path)))
    assert report.ok
    warnings = messages(report, "warning")
    assert any("topic 'small' of task 't' has 2 model(s): QUEEN needs 3" in w for w in warnings)
    assert any("topic 'three' of task 't' has 3 models: KING" in w for w in warnings)
    assert not any("'t0'" in w for w in warnings)


def test_topic_without_peers_and_summarizer_with_two_roles(spark, tmp_path):
    recs = make_testbed(n_topics=2, n_peers=2, judged=False)
    recs = [r for r in recs if not (r["topic"] == "t1" and r["role"] == "peer")]
    recs.append({"task": "t", "topic": "t1", "summarizer": "p0", "role": "model", "text": "z"})
    path = write_jsonl(tmp_path / "s.jsonl", recs)
    _, report = load(spark, InputSpec(str(path)))
    warnings = " | ".join(messages(report, "warning"))
    assert "topic 't1' of task 't' has no peer summaries" in warnings
    assert "summarizer 'p0' of task 't' is a model in some topics and a peer" in warnings


def test_sacrerouge_repeated_references_are_one_summary(spark, tmp_path):
    refs = [{"summarizer_id": x, "text": f"reference {x} ."} for x in "ABCD"]
    lines = [{"instance_id": "d1", "summarizer_id": str(i), "summarizer_type": "peer",
              "summary": f"peer {i} .", "references": refs,
              "documents": ["the document ."]} for i in range(3)]
    path = write_jsonl(tmp_path / "sr.jsonl", lines)
    testbed, report = load(spark, InputSpec(str(path), task="duc"))
    assert report.ok, report.format()
    (t,) = report.tasks
    assert (t.n_model_summaries, t.n_peer_summaries, t.n_topics_with_sources) == (4, 3, 1)


def test_sacrerouge_conflicting_references_are_duplicates(spark, tmp_path):
    lines = [{"instance_id": "d1", "summarizer_id": "1", "summarizer_type": "peer",
              "summary": "p .", "references": [{"summarizer_id": "A", "text": "one ."}]},
             {"instance_id": "d1", "summarizer_id": "2", "summarizer_type": "peer",
              "summary": "q .", "references": [{"summarizer_id": "A", "text": "two ."}]}]
    path = write_jsonl(tmp_path / "sr.jsonl", lines)
    _, report = load(spark, InputSpec(str(path), task="duc"))
    (msg,) = messages(report, "error")
    assert "duplicate summary" in msg and "summarizer 'A'" in msg


def test_sources_duplicates_and_orphans(spark, tmp_path):
    s = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=1))
    src = write_jsonl(tmp_path / "src.jsonl", [
        {"task": "t", "topic": "t0", "documents": ["a"]},
        {"task": "t", "topic": "t0", "documents": ["b"]},
        {"task": "t", "topic": "elsewhere", "documents": ["c"]}])
    _, report = load(spark, InputSpec(str(s)), InputSpec(str(src), "sources"))
    (err,) = messages(report, "error")
    assert "duplicate sources of a topic" in err and f"{src}, line 1" in err
    assert any("topic 'elsewhere'" in w and "no summaries" in w
               for w in messages(report, "warning"))


def test_tvm_terms_come_from_the_description(spark, tmp_path):
    """run.json's ``tvm_terms_from`` (topics whose TVM terms come from their
    source documents, and those pooling their models) is read off the
    testbed's description: an orphan source counts for no topic."""
    from qarla_spark.stages.similarities import tvm_basis
    s = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=3))
    src = write_jsonl(tmp_path / "src.jsonl", [
        {"task": "t", "topic": "t0", "documents": ["a"]},
        {"task": "t", "topic": "t2", "documents": ["b", "c"]},
        {"task": "t", "topic": "elsewhere", "documents": ["c"]}])
    _, report = load(spark, InputSpec(str(s)), InputSpec(str(src), "sources"))
    assert tvm_basis(report.tasks) == {"t": {"topics_with_sources": 2,
                                             "topics_with_pooled_models": 1}}


def test_duc_folder(spark, tmp_path):
    root = tmp_path / "duc2004" / "eval"
    for topic in ("D30001", "D30002"):
        for who in ("A", "B", "C", "D", "1", "2"):
            f = root / ("models" if who.isalpha() else "peers") / f"{topic}.M.100.T.{who}"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(f"Summary by {who} of {topic} .\nSecond sentence .\n")
    (root / "peers" / ".hidden").write_text("ignored")
    testbed, report = load(spark, InputSpec(str(tmp_path / "duc2004"), task="duc2004"))
    assert report.ok, report.format()
    (t,) = report.tasks
    assert (t.task, t.n_topics, t.models_min, t.n_peer_systems, t.n_summaries) == (
        "duc2004", 2, 4, 2, 12)
    text = (testbed.summaries.filter("topic = 'D30002' and summarizer = '2'")
            .select("text").first()[0])
    assert text == "Summary by 2 of D30002 .\nSecond sentence ."


@BOTH_FAST
def test_missing_input_path(spark, tmp_path):
    with pytest.raises(InputError) as info:
        load(spark, InputSpec(str(tmp_path / "nope.jsonl")))
    assert "nope.jsonl" in str(info.value) and "not found" in str(info.value)


@BOTH_FAST
def test_empty_input_folder(spark, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError) as info:
        load(spark, InputSpec(str(tmp_path / "empty")))
    assert "holds no files" in str(info.value)


def _messy_testbed(tmp_path):
    """One input with every kind of problem of SPEC §1's checks, in two
    tasks, over several files."""
    recs = make_testbed(n_topics=3, n_models=4, n_peers=3)
    recs += [dict(r, topic="small") for r in make_testbed(n_topics=1, n_models=2, n_peers=1)]
    recs += [dict(r, topic="three") for r in make_testbed(n_topics=1, n_models=3, n_peers=0)]
    recs += [dict(r, task="u") for r in make_testbed(n_topics=2, n_models=5, n_peers=2)]
    recs.append({"task": "u", "topic": "t1", "summarizer": "p0", "role": "model", "text": "z"})
    a = write_jsonl(tmp_path / "a.jsonl", recs[:20] + ['{"broken": '] + recs[20:])
    b = write_jsonl(tmp_path / "b.jsonl", [recs[5], recs[7]])
    j = write_jsonl(tmp_path / "j.jsonl", [
        {"task": "t", "topic": "t0", "summarizer": "p77", "criterion": "q", "score": 1},
        {"task": "t", "topic": "t0", "summarizer": "p0", "criterion": "quality", "score": 2},
        {"task": "t", "topic": "gone", "summarizer": "p0", "criterion": "q", "score": 1},
        {"task": "t", "topic": "t1", "summarizer": "p1", "criterion": "q", "score": [1, 2, 2]},
        {"task": "t", "topic": "t1", "summarizer": "p2", "criterion": "q", "rater": "ann",
         "score": 0.1},
        {"task": "t", "topic": "t1", "summarizer": "p2", "criterion": "q", "rater": "bob",
         "score": 0.2},
        {"task": "t", "topic": "t1", "summarizer": "p2", "criterion": "q", "rater": "bob",
         "score": 0.3}])
    src = write_jsonl(tmp_path / "src.jsonl", [
        {"task": "t", "topic": "t0", "documents": ["a ."]},
        {"task": "t", "topic": "t0", "documents": ["b ."]},
        {"task": "t", "topic": "t1", "documents": ["c .", "d ."]},
        {"task": "u", "topic": "elsewhere", "documents": ["e ."]}])
    return [InputSpec(str(a)), InputSpec(str(b)), InputSpec(str(j), "judgments"),
            InputSpec(str(src), "sources")]


def _rows(frame):
    return sorted((tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in
                   frame.collect()), key=repr)


@BOTH_FAST
def test_both_readers_give_equal_tables(spark, tmp_path, reader):
    """The driver's reader and Spark's give the same canonical tables, the
    same problems table and the same report, on a testbed with every kind
    of problem (two tasks, duplicates across files, unknown judgments,
    orphan and duplicate sources, parse errors, topics with 2, 3 models or
    no peers, a summarizer in two roles)."""
    if reader == "driver":
        pytest.skip("one comparison is enough")
    specs = _messy_testbed(tmp_path)
    on_spark, spark_report = load_testbed(spark, specs, limit=4)
    checked = check_in_driver(specs, limit=4)
    in_driver = checked.testbed(spark)
    for name in ("summaries", "judgments", "ratings", "sources", "problems",
                 "problems_by_kind"):
        a, b = getattr(on_spark, name), getattr(in_driver, name)
        assert a.schema == b.schema, name
        assert _rows(a) == _rows(b), name
    assert spark_report == checked.report
    assert spark_report.n_errors >= 5 and spark_report.n_warnings >= 5
    assert spark_report.format() == checked.report.format()


@BOTH_FAST
def test_a_task_in_another_script_is_refused_under_english(spark, tmp_path):
    """Issue 38: Russian and Chinese tasks under the default en are errors
    naming each task, an example and the --language to use; under their
    languages they are fine; a summary without a token is a warning naming
    its file and line."""
    from pathlib import Path
    fixture = Path(__file__).parent / "data" / "multilingual.jsonl"
    path = tmp_path / "ml.jsonl"
    path.write_text(fixture.read_text(encoding="utf-8"), encoding="utf-8")
    _, report = load(spark, InputSpec(str(path), "summaries"), languages={"*": "en"})
    errors = messages(report, "error")
    assert len(errors) == 2
    for task in ("ru", "zh"):
        [line] = [e for e in errors if f"task '{task}' (language en)" in e]
        assert f"--language {task}" in line and "ml.jsonl, line " in line
    _, report = load(spark, InputSpec(str(path), "summaries"),
                     languages={"*": "en", "ru": "ru", "zh": "zh"})
    assert report.ok and report.n_warnings == 0
    records = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    records[3]["text"] = "— … !!"
    write_jsonl(path, records)
    _, report = load(spark, InputSpec(str(path), "summaries"),
                     languages={"*": "en", "ru": "ru", "zh": "zh"})
    assert report.ok and report.n_warnings == 1
    [first] = report.groups[0].first
    assert report.groups[0].kind == "no_tokens" and first.endswith(f"{path}, line 4")
