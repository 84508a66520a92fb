"""Pure parser tests (no Spark): every format, every bad input, named places."""

from __future__ import annotations

import gzip
import io
import json

import pytest

from qarla_spark.io.parsers import detect_format, duc_name, duc_text, parse_file


def records(path, data, kind="summaries", task=None):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return list(parse_file(path, data, kind, task))


def only(kind, recs):
    return [r for r in recs if r["kind"] == kind]


def the_problem(recs):
    problems = only("problem", recs)
    assert len(problems) == 1, problems
    return problems[0]


def jl(*objs):
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n"


GOOD = {"task": "T", "topic": "d1", "summarizer": "A", "role": "model", "text": "One . Two ."}


# --- formats ---------------------------------------------------------------

@pytest.mark.parametrize("name,fmt", [
    ("a/summaries.jsonl", "jsonl"), ("x.JSON", "jsonl"), ("x.jsonl.gz", "jsonl"),
    ("j.csv", "csv"), ("j.tsv.gz", "tsv"), ("part-0000.parquet", "parquet"),
    ("duc/D30001.M.100.T.A", "duc"), ("D0801-A.M.100.A.12", "duc"), ("README", None),
    ("notes.txt", None),
])
def test_detect_format(name, fmt):
    assert detect_format(name) == fmt


def test_qarla_jsonl_with_embedded_judgments():
    rec = dict(GOOD, role="peer", summarizer="7", human={"relevance": 4, "fluency": 3.5})
    recs = records("s.jsonl", jl(GOOD, rec))
    summaries = only("summary", recs)
    assert [(s["summarizer"], s["role"], s["line"]) for s in summaries] == [
        ("A", "model", 1), ("7", "peer", 2)]
    judgments = sorted((j["criterion"], j["score"], j["line"]) for j in only("judgment", recs))
    assert judgments == [("fluency", 3.5, 2), ("relevance", 4.0, 2)]
    assert not only("problem", recs)


def test_text_as_list_of_sentences_is_one_per_line():
    recs = records("s.jsonl", jl(dict(GOOD, text=["First one .", ["Second ."]])))
    assert only("summary", recs)[0]["text"] == "First one .\nSecond ."


def test_integer_ids_become_strings_and_default_task_fills_missing():
    rec = {"topic": 30001, "summarizer": 2, "role": "peer", "text": "x"}
    (s,) = records("s.jsonl", jl(rec), task="duc")
    assert (s["task"], s["topic"], s["summarizer"]) == ("duc", "30001", "2")


def test_gzip_and_bom():
    data = gzip.compress(b"\xef\xbb\xbf" + jl(GOOD).encode())
    (s,) = records("s.jsonl.gz", data)
    assert s["kind"] == "summary" and s["topic"] == "d1"


def test_blank_lines_are_skipped_but_lines_keep_their_numbers():
    recs = records("s.jsonl", "\n\n" + jl(GOOD, "{oops"))
    assert only("summary", recs)[0]["line"] == 3
    assert the_problem(recs)["line"] == 4


# --- bad input: one test each, each naming file, line and field -------------

def test_malformed_json():
    p = the_problem(records("in/s.jsonl", jl(GOOD, '{"topic": "d1", "summarizer": ')))
    assert (p["file"], p["line"], p["severity"]) == ("in/s.jsonl", 2, "error")
    assert "malformed JSON" in p["message"]


@pytest.mark.parametrize("line, expected", [
    # the decoder's message already ends in "at": the column is said once
    ('{"topic": "d1", "text": "no end', "Unterminated string starting at column 25"),
    ('{"topic": "d1" "text": "x"}', "Expecting ',' delimiter at column 16"),
])
def test_malformed_json_names_file_line_and_column_once(line, expected):
    from qarla_spark.errors import Problem
    p = the_problem(records("in/s.jsonl", jl(GOOD, line)))
    text = Problem(p["severity"], p["file"], p["line"], p["field"], p["message"]).format()
    assert text == f"error: in/s.jsonl, line 2: malformed JSON: {expected}"
    assert " at at " not in text and text.count("column") == 1


def test_csv_human_that_is_not_json_names_the_column_once():
    data = 'topic,summarizer,role,text,human\nd1,A,peer,Some text .,"{""q"": ""x"\n'
    p = the_problem(records("s.csv", data, task="T"))
    assert p["field"] == "human"
    assert p["message"] == "'human' is not a JSON object: Unterminated string starting at column 7"


def test_json_that_is_not_an_object():
    p = the_problem(records("s.jsonl", "[1, 2]\n"))
    assert p["line"] == 1 and "expected a JSON object" in p["message"]


@pytest.mark.parametrize("field", ["topic", "summarizer", "role", "text"])
def test_missing_field(field):
    rec = {k: v for k, v in GOOD.items() if k != field}
    p = the_problem(records("s.jsonl", jl(GOOD, rec)))
    assert (p["line"], p["field"]) == (2, field)
    assert "missing" in p["message"]


@pytest.mark.parametrize("field", ["topic", "summarizer"])
def test_empty_field(field):
    p = the_problem(records("s.jsonl", jl(dict(GOOD, **{field: "  "}))))
    assert (p["line"], p["field"]) == (1, field) and "empty" in p["message"]


def test_missing_task_without_default_says_how_to_give_one():
    rec = {k: v for k, v in GOOD.items() if k != "task"}
    p = the_problem(records("s.jsonl", jl(rec)))
    assert p["field"] == "task" and "--task" in p["message"]


def test_unknown_role():
    p = the_problem(records("s.jsonl", jl(dict(GOOD, role="reference"))))
    assert p["field"] == "role"
    assert '"reference"' in p["message"] and "'model' or 'peer'" in p["message"]


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_or_whitespace_text(text):
    p = the_problem(records("s.jsonl", jl(dict(GOOD, text=text))))
    assert p["field"] == "text" and "empty text" in p["message"]


def test_non_utf8_bytes_name_the_line():
    data = jl(GOOD).encode() + b'{"topic": "caf\xe9"}\n' + jl(GOOD).encode()
    recs = records("s.jsonl", data)
    p = the_problem(recs)
    assert p["line"] == 2 and "UTF-8" in p["message"] and "0xe9" in p["message"]
    assert len(only("summary", recs)) == 2


def test_non_numeric_score():
    p = the_problem(records("s.jsonl", jl(dict(GOOD, human={"relevance": "high"}))))
    assert p["field"] == "human.relevance" and "number" in p["message"]
    # the summary with a bad judgment is not half-read
    assert not only("summary", records("s.jsonl", jl(dict(GOOD, human={"relevance": "x"}))))


@pytest.mark.parametrize("value", ["NaN", "Infinity", "true"])
def test_non_finite_or_boolean_score(value):
    line = json.dumps(dict(GOOD)).rstrip("}") + ', "human": {"q": ' + value + "}}"
    p = the_problem(records("s.jsonl", line + "\n"))
    assert p["field"] == "human.q"


def test_unreadable_file_name():
    p = the_problem(records("data/notes.txt", "hello"))
    assert p["file"] == "data/notes.txt" and p["line"] is None
    assert "format" in p["message"]


def test_corrupt_gzip():
    p = the_problem(records("s.jsonl.gz", b"not gzip at all"))
    assert "decompress" in p["message"]


# --- SacreROUGE ------------------------------------------------------------

def sacre(**kw):
    rec = {"instance_id": "d30001t", "summarizer_id": "12", "summarizer_type": "peer",
           "summary": {"text": ["Sentence one .", "Sentence two ."]},
           "references": [{"summarizer_id": "A", "summarizer_type": "reference",
                           "text": ["Ref A ."]},
                          {"summarizer_id": "B", "summarizer_type": "reference",
                           "text": "Ref B ."}],
           "documents": [{"text": ["Doc one ."]}, {"text": "Doc two ."}]}
    rec.update(kw)
    return rec


def test_sacrerouge_summary_references_and_documents():
    recs = records("sr.jsonl", jl(sacre()), task="duc2004")
    summaries = only("summary", recs)
    assert [(s["summarizer"], s["role"], s["embedded"]) for s in summaries] == [
        ("12", "peer", False), ("A", "model", True), ("B", "model", True)]
    assert summaries[0]["text"] == "Sentence one .\nSentence two ."
    assert all(s["topic"] == "d30001t" and s["task"] == "duc2004" for s in summaries)
    (src,) = only("source", recs)
    assert src["documents"] == ["Doc one .", "Doc two ."]


def test_sacrerouge_summary_as_plain_text_and_reference_line():
    rec = sacre(summary="Just text .", summarizer_type="reference", summarizer_id="C")
    del rec["references"], rec["documents"]
    (s,) = records("sr.jsonl", jl(rec), task="x")
    assert (s["summarizer"], s["role"], s["text"]) == ("C", "model", "Just text .")


def test_sacrerouge_unknown_summarizer_type():
    p = the_problem(records("sr.jsonl", jl(sacre(summarizer_type="human")), task="x"))
    assert p["field"] == "summarizer_type"


def test_sacrerouge_reference_without_id():
    p = the_problem(records("sr.jsonl", jl(sacre(references=[{"text": "x"}])), task="x"))
    assert p["field"] == "references[0].summarizer_id"


def test_sacrerouge_metrics_as_judgments():
    rec = {"instance_id": "d1", "summarizer_id": "3", "summarizer_type": "peer",
           "metrics": {"responsiveness": 4, "pyramid": {"modified": 0.5}}}
    recs = records("m.jsonl", jl(rec), "judgments", task="duc")
    assert sorted((j["criterion"], j["score"]) for j in only("judgment", recs)) == [
        ("pyramid_modified", 0.5), ("responsiveness", 4.0)]


# --- judgments and sources -------------------------------------------------

def test_long_form_judgments_jsonl():
    recs = records("j.jsonl", jl({"topic": "d1", "summarizer": "3", "criterion": "resp",
                                  "score": 2}), "judgments", task="T")
    (j,) = only("judgment", recs)
    assert (j["task"], j["criterion"], j["score"]) == ("T", "resp", 2.0)


def test_judgment_without_score():
    p = the_problem(records("j.jsonl", jl({"task": "T", "topic": "d1", "summarizer": "3",
                                          "criterion": "resp"}), "judgments"))
    assert p["field"] == "score"


def test_judgment_without_criterion_or_human():
    p = the_problem(records("j.jsonl", jl({"task": "T", "topic": "d1", "summarizer": "3"}),
                            "judgments"))
    assert p["field"] == "criterion"


def test_sources():
    recs = records("src.jsonl", jl({"task": "T", "topic": "d1", "documents": ["a", "b"]}),
                   "sources")
    assert only("source", recs)[0]["documents"] == ["a", "b"]
    p = the_problem(records("src.jsonl", jl({"task": "T", "topic": "d1", "documents": []}),
                            "sources"))
    assert p["field"] == "documents"


# --- CSV / TSV -------------------------------------------------------------

def test_csv_summaries_with_quoted_multiline_text_and_row_lines():
    data = ('task,topic,summarizer,role,text,human\n'
            'T,d1,A,model,"Line one .\nLine two .",\n'
            'T,d1,3,peer,Peer text .,"{""q"": 2}"\n'
            'T,d1,,peer,x,\n')
    recs = records("s.csv", data)
    s = only("summary", recs)
    assert [(r["summarizer"], r["line"]) for r in s] == [("A", 2), ("3", 4)]
    assert s[0]["text"] == "Line one .\nLine two ."
    assert only("judgment", recs)[0]["score"] == 2.0
    p = the_problem(recs)
    assert (p["line"], p["field"]) == (5, "summarizer") and "empty" in p["message"]


def test_csv_long_judgments_non_numeric_score():
    data = "task,topic,summarizer,criterion,score\nT,d1,3,resp,4\nT,d1,4,resp,good\n"
    recs = records("j.csv", data, "judgments")
    assert len(only("judgment", recs)) == 1
    p = the_problem(recs)
    assert (p["file"], p["line"], p["field"]) == ("j.csv", 3, "score")


def test_wide_tsv_judgments_blank_cell_is_not_judged():
    data = "topic\tsummarizer\tcoherence\trelevance\nd1\t3\t4\t\nd1\t4\t2.5\t3\n"
    recs = records("j.tsv", data, "judgments", task="T")
    got = sorted((j["summarizer"], j["criterion"], j["score"]) for j in only("judgment", recs))
    assert got == [("3", "coherence", 4.0), ("4", "coherence", 2.5), ("4", "relevance", 3.0)]


def test_wide_csv_non_numeric_names_the_column():
    recs = records("j.csv", "topic,summarizer,coherence\nd1,3,n/a\n", "judgments", task="T")
    p = the_problem(recs)
    assert (p["line"], p["field"]) == (2, "coherence")


def test_csv_non_utf8_names_the_line():
    data = b"task,topic,summarizer,role,text\nT,d1,A,model,ok\nT,d1,B,model,caf\xe9\n"
    p = the_problem(records("s.csv", data))
    assert p["line"] == 3 and "UTF-8" in p["message"]


def test_csv_row_with_too_many_fields():
    p = the_problem(records("s.csv", "task,topic,summarizer,role,text\nT,d1,A,model,x,extra\n"))
    assert p["line"] == 2 and "more fields" in p["message"]


# --- Parquet ---------------------------------------------------------------

def parquet_bytes(rows, schema=None):
    import pyarrow as pa
    import pyarrow.parquet as pq
    table = pa.Table.from_pylist(rows, schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def test_parquet_summaries_with_human_map():
    import pyarrow as pa
    schema = pa.schema([("task", pa.string()), ("topic", pa.string()),
                        ("summarizer", pa.string()), ("role", pa.string()),
                        ("text", pa.string()), ("human", pa.map_(pa.string(), pa.float64()))])
    rows = [dict(GOOD, human=None), dict(GOOD, summarizer="5", role="peer",
                                         human=[("relevance", 3.0)]),
            dict(GOOD, summarizer="6", role="judge", human=None)]
    recs = records("x.parquet", parquet_bytes(rows, schema))
    assert [s["summarizer"] for s in only("summary", recs)] == ["A", "5"]
    assert only("judgment", recs)[0]["criterion"] == "relevance"
    p = the_problem(recs)
    assert (p["line"], p["unit"], p["field"]) == (3, "row", "role")


def test_not_a_parquet_file():
    p = the_problem(records("x.parquet", b"PAR1 garbage"))
    assert "Parquet" in p["message"]


# --- DUC / TAC -------------------------------------------------------------

def test_duc_name():
    assert duc_name("x/D30001.M.100.T.A") == ("D30001", "A", "model")
    assert duc_name("D0801-A.M.100.A.12.gz") == ("D0801-A", "12", "peer")
    assert duc_name("D1.M.100.T.A1")[2] is None


def test_duc_plain_text_keeps_lines_as_sentences():
    recs = records("duc/D30001.M.100.T.5", "  First line .\n\nSecond   line .\n", task="duc")
    (s,) = recs
    assert (s["topic"], s["summarizer"], s["role"], s["text"]) == (
        "D30001", "5", "peer", "First line .\nSecond line .")


def test_duc_rouge_html_drops_anchor_numbers():
    html = ('<html><head><title>D30001.M.100.T.A</title></head><body bgcolor="white">\n'
            '<a name="1">[1]</a> <a href="#1" id=1>First sentence .</a>\n'
            '<a name="2">[2]</a> <a href="#2" id=2>Second &amp; last .</a>\n</body></html>')
    assert duc_text(html) == "First sentence .\nSecond & last ."


def test_duc_sgml():
    sgml = '<SUM DOCSET="d061j" TYPE="MULTI" SIZE="100" SUMMARIZER="B">\nA text about x &lt; y .\n</SUM>'
    assert duc_text(sgml) == "A text about x < y ."


def test_duc_text_with_a_lone_angle_bracket_is_plain():
    assert duc_text("x < y and y > z .") == "x < y and y > z ."


def test_duc_unknown_role_from_name():
    p = the_problem(records("D30001.M.100.T.A1", "x", task="duc"))
    assert p["field"] == "summarizer" and "letters" in p["message"]


def test_duc_needs_a_task():
    p = the_problem(records("D30001.M.100.T.A", "x"))
    assert p["field"] == "task" and "--task" in p["message"]


def test_duc_empty_file():
    p = the_problem(records("D30001.M.100.T.A", "<html><body></body></html>", task="d"))
    assert p["field"] == "text"


def test_duc_non_utf8():
    p = the_problem(records("D30001.M.100.T.A", b"ok\ncaf\xe9\n", task="d"))
    assert p["line"] == 2 and "UTF-8" in p["message"]


def test_display_path_is_relative_to_the_working_directory():
    from qarla_spark.io.readers import display_path
    assert display_path("file:/work/data/s.jsonl", "/work") == "data/s.jsonl"
    assert display_path("file:///other/s.jsonl", "/work") == "/other/s.jsonl"
    assert display_path("hdfs://nn/x/s.jsonl", "/work") == "hdfs://nn/x/s.jsonl"
    assert display_path("file:/workbench/s.jsonl", "/work") == "/workbench/s.jsonl"
