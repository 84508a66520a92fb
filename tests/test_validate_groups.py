"""Warnings of one kind print as one line with the count and the first few
names (issue 12, part 6), while every instance stays in ``problems/``."""

from __future__ import annotations

import json

import pytest

from helpers import write_jsonl
from qarla_spark.errors import Problem
from qarla_spark.io.validate import (ProblemGroup, ValidationReport, first_names,
                                     group_problems)


def rows(kind, names, task="t", detail="1", severity="warning", **extra):
    return [dict(severity=severity, kind=kind, task=task, detail=detail, subject=n,
                 message=f"topic '{n}' of task '{task}' has {detail} model(s): ...", **extra)
            for n in names]


# --- the pure grouping --------------------------------------------------------

def test_first_names():
    assert first_names(["a", "b", "c", "d"], 4) == "a, b, c, …"
    assert first_names(["a", "b", "c"], 3) == "a, b, c"
    assert first_names(["a", "b", "c"], 100) == "a, b, c, …"   # only the first were fetched
    assert first_names(["a"], 1) == "a"
    assert first_names([], 0) == ""


def test_one_group_per_kind_task_and_detail_counted_names_sorted():
    names = [f"d{i:03d}" for i in range(100)]
    groups = group_problems(
        rows("few_models", reversed(names)) + rows("few_models", ["x2", "x1"], detail="2")
        + rows("no_peers", names[:2]) + rows("few_models", ["u"], task="other")
        + [dict(severity="error", kind=None, task=None, detail=None, subject=None,
                message="malformed JSON")])
    assert [(g.task, g.kind, g.detail, g.count, g.first) for g in groups] == [
        ("other", "few_models", "1", 1, ("u",)),
        ("t", "few_models", "1", 100, ("d000", "d001", "d002")),
        ("t", "few_models", "2", 2, ("x1", "x2")),
        ("t", "no_peers", "1", 2, ("d000", "d001")),
    ]
    lines = [g.format() for g in groups]
    assert lines[1] == ("warning: 100 topics of task 't' have 1 model: QUEEN needs 3 and KING 4, "
                        "so the measures skip them — d000, d001, d002, … (all in problems/)")
    assert lines[2].startswith("warning: 2 topics of task 't' have 2 models: QUEEN needs 3")
    assert lines[2].endswith("— x1, x2")
    # a group of one prints as that problem's own message
    assert lines[0] == "warning: topic 'u' of task 'other' has 1 model(s): ..."


def test_totals_count_the_rows_not_fetched():
    """collect_problems fetches the first names of a group and its size."""
    (g,) = group_problems(rows("three_models", ["b", "a", "c"], detail="3", total=250))
    assert (g.count, g.first) == (250, ("a", "b", "c"))
    assert g.message() == ("250 topics of task 't' have 3 models: KING holds one out and needs "
                           "4, so KING skips them — a, b, c, … (all in problems/)")
    assert json.loads(json.dumps(g.to_dict()))["count"] == 250


def test_every_kind_has_a_line_for_one_and_for_many():
    for kind in ("few_models", "three_models", "no_peers", "model_and_peer", "orphan_sources"):
        for n in (1, 5):
            text = ProblemGroup("warning", kind, "t", "1", n, ("a",)).message()
            assert "'t'" in text and ("{" not in text) and text.endswith("— a" if n == 1 else "— a, … (all in problems/)")


def test_report_prints_groups_then_single_problems():
    errors = [Problem("error", "s.jsonl", 4, None, "malformed JSON: Expecting value at column 1")]
    groups = group_problems(rows("few_models", [f"d{i}" for i in range(3)], total=60))
    report = ValidationReport([], errors, n_errors=1, n_warnings=60, groups=groups,
                              single=errors)
    assert report.format().splitlines() == [
        "no valid summaries",
        "problems: 1 error(s), 60 warning(s)",
        "  error: s.jsonl, line 4: malformed JSON: Expecting value at column 1",
        "  warning: 60 topics of task 't' have 1 model: QUEEN needs 3 and KING 4, so the "
        "measures skip them — d0, d1, d2, … (all in problems/)"]


# --- on Spark: a testbed of many topics with one model each ------------------

def one_model_testbed(n_topics=100, n_full=3):
    """``n_full`` topics with 4 models and 3 peers, then ``n_topics`` topics
    (d000, d001, ...) with 1 model and 3 peers (as REALSumm)."""
    records = []
    for t in range(n_full + n_topics):
        topic = f"full{t}" if t < n_full else f"d{t - n_full:03d}"
        for m in range(4 if t < n_full else 1):
            records.append({"task": "t", "topic": topic, "summarizer": f"m{m}", "role": "model",
                            "text": f"model {m} of {topic} ."})
        for p in range(3):
            records.append({"task": "t", "topic": topic, "summarizer": f"p{p}", "role": "peer",
                            "text": f"peer {p} on {topic} .", "human": {"q": float(p)}})
    return records


@pytest.mark.spark
def test_many_topics_with_one_model_print_one_line_and_keep_every_row(spark, tmp_path):
    from qarla_spark.io import InputSpec, load_testbed
    records = one_model_testbed()
    path = write_jsonl(tmp_path / "s.jsonl", records + ["{oops"])
    testbed, report = load_testbed(spark, [InputSpec(str(path))], limit=50)
    assert (report.n_errors, report.n_warnings) == (1, 100)
    text = report.format()
    warning_lines = [line for line in text.splitlines() if "warning:" in line]
    assert warning_lines == [
        "  warning: 100 topics of task 't' have 1 model: QUEEN needs 3 and KING 4, so the "
        "measures skip them — d000, d001, d002, … (all in problems/)"]
    assert f"  error: {path}, line {len(records) + 1}: malformed JSON: Expecting property name enclosed in " \
           "double quotes at column 2" in text
    assert "problems: 1 error(s), 100 warning(s)\n" in text + "\n"
    # every instance is a row of the problems table, with its own message
    rows = testbed.problems.filter("severity = 'warning'").collect()
    assert len(rows) == 100
    assert sorted(r["message"].split("'")[1] for r in rows) == [f"d{i:03d}" for i in range(100)]
    assert testbed.problems.columns == ["severity", "file", "line", "unit", "field", "message"]
    # the shown problems still list instances (bounded), for callers that want them
    assert sum(p.severity == "warning" for p in report.problems) == 50
