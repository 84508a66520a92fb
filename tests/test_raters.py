"""Judgments with raters (issue 39, part 3): a score may be a list, one per
rater (SacreROUGE's metrics files), and every judgment format takes a
``rater`` field or column; the checks keep each rater's judgment (the
``judgments/`` table) and give every stage the mean over a summary's raters,
exact and rounded once. Only the last test starts Spark."""

from __future__ import annotations

import io
import json
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import human_reading, make_testbed, write_jsonl
from qarla_spark.io.checks import check_records, problem_rows, rater_means
from qarla_spark.io.parsers import parse_file
from qarla_spark.names import RAW_FIELDS


def parsed(path, data, kind="judgments", task="T"):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return list(parse_file(path, data, kind, task))


def ratings(recs):
    """(criterion, rater, score, line) of the judgment records."""
    return sorted((r["criterion"], r["rater"], r["score"], r["line"]) for r in recs
                  if r["kind"] == "judgment")


def problems(recs):
    return [(p["line"], p["field"], p["message"]) for p in recs if p["kind"] == "problem"]


def jl(*objs):
    return "".join(json.dumps(o) + "\n" for o in objs)


def parquet_bytes(rows, schema):
    import pyarrow as pa
    import pyarrow.parquet as pq
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buf)
    return buf.getvalue()


SUMMEVAL_LINE = {"instance_id": "M11", "summarizer_id": "M8", "summarizer_type": "peer",
                 "metrics": {"expert": {"coherence": [4.67, 4.67, 4.67], "fluency": [5, 4, 5]},
                             "turker": {"coherence": [3, 4, 2, 3, 5]}}}


# --- list-valued scores ------------------------------------------------------

def test_sacrerouge_list_scores_are_one_rating_per_element_named_by_position():
    """SacreROUGE's SummEval metrics: nested keys joined by '_', each
    annotator's score an element (raters "0", "1", ... by position)."""
    recs = parsed("summeval.jsonl", jl(SUMMEVAL_LINE))
    assert not problems(recs)
    assert ratings(recs) == sorted(
        [("expert_coherence", str(i), 4.67, 1) for i in range(3)]
        + [("expert_fluency", str(i), float(v), 1) for i, v in enumerate([5, 4, 5])]
        + [("turker_coherence", str(i), float(v), 1) for i, v in enumerate([3, 4, 2, 3, 5])])


def test_list_scores_in_every_format():
    import pyarrow as pa
    want = [("q", "0", 4.0), ("q", "1", 2.5)]

    def got(recs):
        assert not problems(recs), problems(recs)
        return [(c, r, s) for c, r, s, _ in ratings(recs)]

    long = {"topic": "d1", "summarizer": "A", "criterion": "q", "score": [4, 2.5]}
    assert got(parsed("j.jsonl", jl(long))) == want
    human = {"topic": "d1", "summarizer": "A", "human": {"q": [4, 2.5]}}
    assert got(parsed("j.jsonl", jl(human))) == want
    summary = {"topic": "d1", "summarizer": "A", "role": "peer", "text": "x .",
               "human": {"q": [4, 2.5]}}
    assert got(parsed("s.jsonl", jl(summary), "summaries")) == want
    assert got(parsed("j.csv", 'topic,summarizer,criterion,score\nd1,A,q,"[4, 2.5]"\n')) == want
    assert got(parsed("j.tsv", "topic\tsummarizer\tq\nd1\tA\t[4, 2.5]\n")) == want
    assert got(parsed("j.csv", 'topic,summarizer,human\nd1,A,"{""q"": [4, 2.5]}"\n')) == want
    schema = pa.schema([("topic", pa.string()), ("summarizer", pa.string()),
                        ("criterion", pa.string()), ("score", pa.list_(pa.float64()))])
    assert got(parsed("j.parquet", parquet_bytes(
        [{"topic": "d1", "summarizer": "A", "criterion": "q", "score": [4.0, 2.5]}],
        schema))) == want
    schema = pa.schema([("topic", pa.string()), ("summarizer", pa.string()),
                        ("human", pa.struct([("q", pa.list_(pa.float64()))]))])
    assert got(parsed("j.parquet", parquet_bytes(
        [{"topic": "d1", "summarizer": "A", "human": {"q": [4.0, 2.5]}}], schema))) == want


@pytest.mark.parametrize("path, data, line, field, words", [
    ("j.jsonl", jl({"topic": "d1", "summarizer": "A", "human": {"q": []}}), 1, "human.q",
     "empty list"),
    ("j.jsonl", jl({"topic": "d1", "summarizer": "A", "criterion": "q", "score": [4, "5"]}),
     1, "score[1]", 'score must be a number, found "5"'),
    ("j.jsonl", jl({"topic": "d1", "summarizer": "A", "criterion": "q", "score": [4, None]}),
     1, "score[1]", "score must be a number, found null"),
    ("j.jsonl", jl({"topic": "d1", "summarizer": "A", "criterion": "q", "score": [True]}),
     1, "score[0]", "score must be a number, found true"),
    ("j.jsonl", jl({"topic": "d1", "summarizer": "A", "criterion": "q", "score": [[4]]}),
     1, "score[0]", "score must be a number, found [4]"),
    ("m.jsonl", "\n" + jl(dict(SUMMEVAL_LINE, metrics={"expert": {"coherence": [4, "x"]}})),
     2, "metrics.expert_coherence[1]", 'score must be a number, found "x"'),
    ("j.csv", 'topic,summarizer,criterion,score\nd1,A,q,4\nd1,A,q,"[4,"\n', 3, "score",
     "not a JSON list of scores"),
    ("j.csv", "topic,summarizer,q\nd1,A,[]\n", 2, "q", "empty list"),
    ("j.jsonl", jl({"topic": "d1", "summarizer": "A", "criterion": "q", "rater": "ann",
                    "score": [4, 5]}), 1, "score", "names rater \"ann\""),
    ("j.jsonl", jl({"topic": "d1", "summarizer": "A", "criterion": "q", "rater": [1],
                    "score": 4}), 1, "rater", "'rater' must be a string"),
])
def test_bad_lists_and_raters_name_file_line_and_field(path, data, line, field, words):
    """An empty list, an element that is not a number (named by its
    index), a list beside a named rater, a rater that is not a name: one
    problem each, at its line and field; the record is not half-read."""
    recs = parsed(path, data)
    (found,) = [p for p in recs if p["kind"] == "problem"]
    assert (found["file"], found["line"], found["field"]) == (path, line, field)
    assert words in found["message"], found["message"]
    assert all(r["line"] != line for r in recs if r["kind"] == "judgment")


# --- the rater field -------------------------------------------------------

def test_a_rater_field_or_column_in_every_format():
    import pyarrow as pa

    def got(recs):
        assert not problems(recs), problems(recs)
        return [(c, r, s) for c, r, s, _ in ratings(recs)]

    rows = [{"topic": "d1", "summarizer": "A", "criterion": "q", "rater": "ann", "score": 4},
            {"topic": "d1", "summarizer": "A", "criterion": "q", "rater": 7, "score": 2},
            {"topic": "d1", "summarizer": "A", "criterion": "r", "score": 3}]
    want = [("q", "7", 2.0), ("q", "ann", 4.0), ("r", None, 3.0)]
    assert got(parsed("j.jsonl", jl(*rows))) == want
    csv = "topic,summarizer,criterion,rater,score\nd1,A,q,ann,4\nd1,A,q,7,2\nd1,A,r,,3\n"
    assert got(parsed("j.csv", csv)) == want
    # wide: the rater column is not a criterion
    wide = "topic\tsummarizer\trater\tq\tr\nd1\tA\tann\t4\t\nd1\tA\t7\t2\t\nd1\tA\t\t\t3\n"
    assert got(parsed("j.tsv", wide)) == want
    human = [{"topic": "d1", "summarizer": "A", "rater": "ann", "human": {"q": 4}},
             {"topic": "d1", "summarizer": "A", "rater": 7, "human": {"q": 2}},
             {"topic": "d1", "summarizer": "A", "human": {"r": 3}}]
    assert got(parsed("j.jsonl", jl(*human))) == want
    schema = pa.schema([("topic", pa.string()), ("summarizer", pa.string()),
                        ("criterion", pa.string()), ("rater", pa.string()),
                        ("score", pa.float64())])
    pq_rows = [dict(r, rater=None if "rater" not in r else str(r["rater"])) for r in rows]
    assert got(parsed("j.parquet", parquet_bytes(pq_rows, schema))) == want
    sacre = dict(SUMMEVAL_LINE, rater="ann", metrics={"expert": {"coherence": 4}})
    assert got(parsed("m.jsonl", jl(sacre))) == [("expert_coherence", "ann", 4.0)]


# --- the checks: each rater kept, the mean given to the stages ----------------

def _record(kind, line, **values):
    rec = dict.fromkeys(RAW_FIELDS)
    rec.update(kind=kind, file="j.jsonl", line=line, unit="line", embedded=False, task="T",
               topic="d1")
    rec.update(values)
    return rec


def _summaries():
    return [_record("summary", i + 1, summarizer=name, role=role, text="x .")
            for i, (name, role) in enumerate([("m1", "model"), ("m2", "model"),
                                               ("m3", "model"), ("m4", "model"),
                                               ("A", "peer"), ("B", "peer")])]


def test_the_stages_read_the_exact_mean_over_raters_and_judgments_keep_each_rater():
    judg = [_record("judgment", 10, summarizer="A", criterion="q", rater="0", score=0.1),
            _record("judgment", 10, summarizer="A", criterion="q", rater="1", score=0.2),
            _record("judgment", 10, summarizer="A", criterion="q", rater="2", score=0.3),
            _record("judgment", 11, summarizer="B", criterion="q", rater=None, score=-0.0)]
    topic_rows, task_rows = check_records(_summaries() + judg)
    assert not problem_rows(topic_rows)
    kept = sorted((r["summarizer"], r["criterion"], r["rater"], r["score"])
                  for r in topic_rows if r["kind"] == "rating")
    assert kept == [("A", "q", "0", 0.1), ("A", "q", "1", 0.2), ("A", "q", "2", 0.3),
                    ("B", "q", None, -0.0)]
    means = {r["summarizer"]: r["score"] for r in topic_rows if r["kind"] == "judgment"}
    exact = Fraction(0.1) + Fraction(0.2) + Fraction(0.3)
    assert means["A"] == float(exact / 3) and means["A"] != (0.1 + 0.2 + 0.3) / 3
    # one rating: its own double, bit for bit (the sign of a zero too)
    assert math.copysign(1.0, means["B"]) == -1.0
    (stats,) = [r for r in task_rows if r["kind"] == "stats"]
    assert dict(zip(stats["criteria"], stats["criterion_counts"])) == {"q": 2}


def test_without_raters_the_judgments_are_the_rows_as_before():
    judg = [_record("judgment", 10 + i, summarizer=s, criterion=c, score=float(i) / 7)
            for i, (s, c) in enumerate([("A", "q"), ("A", "r"), ("B", "q")])]
    topic_rows, _ = check_records(_summaries() + judg)
    assert not problem_rows(topic_rows)
    means = [(r["summarizer"], r["criterion"], r["score"]) for r in topic_rows
             if r["kind"] == "judgment"]
    assert means == [(r["summarizer"], r["criterion"], r["score"]) for r in judg]
    assert [r["rater"] for r in topic_rows if r["kind"] == "rating"] == [None] * 3


@pytest.mark.parametrize("raters, field, words", [
    ((None, None), "criterion", "without a rater must be the only one"),
    ((None, "ann"), "criterion", "without a rater must be the only one"),
    (("ann", "ann"), "rater", "rater 'ann'"),
])
def test_repeated_judgments_are_errors_naming_both_places(raters, field, words):
    judg = [_record("judgment", 10 + i, summarizer="A", criterion="q", rater=r, score=1.0)
            for i, r in enumerate(raters)]
    topic_rows, _ = check_records(_summaries() + judg)
    (p,) = problem_rows(topic_rows)
    assert (p["severity"], p["line"], p["field"]) == ("error", 10, field)
    assert "duplicate judgment" in p["message"] and "criterion 'q'" in p["message"]
    assert "another at j.jsonl, line 11" in p["message"] and words in p["message"]


def test_named_raters_of_one_summary_are_no_duplicate():
    judg = [_record("judgment", 10 + i, summarizer="A", criterion="q", rater=r, score=1.0)
            for i, r in enumerate(["ann", "bob", "0"])]
    topic_rows, _ = check_records(_summaries() + judg)
    assert not problem_rows(topic_rows)


def test_a_list_for_an_unknown_summary_is_one_error_per_record_and_criterion():
    recs = [_record("judgment", 10, summarizer="Z", criterion=c, rater=str(i), score=1.0)
            for c in ("q", "r") for i in range(3)]
    topic_rows, _ = check_records(_summaries() + recs)
    found = [(p["line"], p["message"]) for p in problem_rows(topic_rows)]
    assert len(found) == 2 and all("unknown summary" in m for _, m in found)


doubles = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(doubles, min_size=1, max_size=9))
def test_rater_means_are_the_fraction_mean_rounded_once(scores):
    recs = [_record("judgment", 1, summarizer="A", criterion="q", rater=str(i), score=s)
            for i, s in enumerate(scores)]
    (row,) = rater_means(recs)
    # each rating as its reading (thirds as thirds, 0.1 as 1/10: issue 39
    # part 2); a wide double is its own value
    want = sum(map(human_reading, scores), Fraction(0)) / len(scores)
    assert row["score"] == float(want)     # Fraction -> float rounds correctly
    if len(scores) == 1:
        assert math.copysign(1.0, row["score"]) == math.copysign(1.0, scores[0])


# --- qarla validate on SacreROUGE's list format (no Spark: small local input) ---

def test_validate_reads_sacrerouge_list_metrics(tmp_path, capsys):
    """``qarla validate --judgments`` on SacreROUGE's SummEval metrics
    format: each annotator's score a list element; before, "score must be
    a number, found [4.67, 4.67, 4.67]" and exit 1."""
    from qarla_spark.cli import main
    summaries = write_jsonl(tmp_path / "s.jsonl", make_testbed(judged=False))
    metrics = []
    for t in range(2):
        for p in range(3):
            metrics.append({"instance_id": f"t{t}", "summarizer_id": f"p{p}",
                            "summarizer_type": "peer",
                            "metrics": {"expert": {"coherence": [4.67, 4.67, 4.67],
                                                   "fluency": [5, 4, p]}}})
    judgments = write_jsonl(tmp_path / "m.jsonl", metrics)
    assert main(["validate", f"t={summaries}", "--judgments", f"t={judgments}"]) == 0
    out = capsys.readouterr().out
    assert ("judgments by criterion (judged summaries): expert_coherence (6), "
            "expert_fluency (6)") in out
    assert "problems: none" in out
    # an empty list: exit 1, the file, line and field named
    metrics[4]["metrics"]["expert"]["fluency"] = []
    write_jsonl(judgments, metrics)
    assert main(["validate", f"t={summaries}", "--judgments", f"t={judgments}"]) == 1
    printed = capsys.readouterr()
    text = printed.out + printed.err
    assert "m.jsonl, line 5" in text and "metrics.expert_fluency" in text
    assert "empty list" in text


def test_export_averages_a_summarys_raters_exactly(tmp_path):
    """``qarla export`` reads ``judgments/`` (one row per rater) and gives
    a summary's score as the checks do: the exact mean rounded once."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from qarla_spark.report.export import RunScores
    run = tmp_path / "run"
    rows = {"summaries": pd.DataFrame({"topic": ["d1", "d1"], "summarizer": ["m", "p"],
                                       "role": ["model", "peer"], "text": ["a .", "b ."]}),
            "judgments": pd.DataFrame({"topic": ["d1"] * 4, "summarizer": ["p"] * 4,
                                       "criterion": ["q", "q", "q", "r"],
                                       "rater": ["0", "1", "2", None],
                                       "score": [0.1, 0.2, 0.3, -0.0]})}
    for name, frame in rows.items():
        folder = run / name / "task=t"
        folder.mkdir(parents=True)
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False),
                       folder / "part-00000.parquet")
    (run / "run.json").write_text(json.dumps({"status": "complete", "signature": "test"}))
    got = RunScores(str(run)).judgments_of("t")
    assert got["q"][("d1", "p")] == float((Fraction(0.1) + Fraction(0.2) + Fraction(0.3)) / 3)
    assert math.copysign(1.0, got["r"][("d1", "p")]) == -1.0


# --- a run (Spark): judgments/ keeps the raters, every other table as with the means ---

def _rated_testbed(tmp_path):
    """Summaries (3 topics, 4 models, 4 peers), each peer's ratings (a list
    of three for 'quality', one to three named raters for 'fluency', one
    anonymous for 'clarity') and the same judgments as each summary's exact
    mean over its raters' readings, one row each."""
    import numpy as np
    rng = np.random.default_rng(39)
    records = make_testbed(n_topics=3, n_models=4, n_peers=4, judged=False)
    summaries = write_jsonl(tmp_path / "s.jsonl", records)
    rated, means = [], []
    choices = [1.0, 2.0, 3.0, 4.0, 5.0, 0.1, 0.2, 0.3, 4.67]
    for rec in records:
        if rec["role"] != "peer":
            continue
        key = {"task": rec["task"], "topic": rec["topic"], "summarizer": rec["summarizer"]}
        quality = [float(rng.choice(choices)) for _ in range(3)]
        rated.append(dict(key, human={"quality": quality}))
        fluency = [float(rng.choice(choices)) for _ in range(int(rng.integers(1, 4)))]
        rated += [dict(key, criterion="fluency", rater=f"r{k}", score=v)
                  for k, v in enumerate(fluency)]
        clarity = float(rng.choice(choices))
        rated.append(dict(key, criterion="clarity", score=clarity))
        for criterion, scores in (("quality", quality), ("fluency", fluency),
                                  ("clarity", [clarity])):
            # the exact mean of the ratings' readings (0.1 as 1/10, 4.67 as
            # 467/100: issue 39, part 2)
            exact = sum(map(human_reading, scores), Fraction(0)) / len(scores)
            means.append(dict(key, criterion=criterion, score=float(exact)))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    return (summaries, write_jsonl(tmp_path / "a" / "j.jsonl", rated),
            write_jsonl(tmp_path / "b" / "j.jsonl", means))


def _table(folder):
    """A table's rows in a canonical order; list and map cells as their
    repr (exact for doubles)."""
    import numpy as np
    import pandas as pd

    def plain(v):
        if isinstance(v, np.ndarray):
            return repr([plain(x) for x in v.tolist()])
        if isinstance(v, (list, tuple, dict)):
            return repr(v)
        return v

    frame = pd.read_parquet(folder)
    for c in frame.columns:
        if str(frame[c].dtype) == "category":
            frame[c] = frame[c].astype(str)
        elif frame[c].dtype == object:
            frame[c] = frame[c].map(plain)
    frame = frame[sorted(frame.columns)]
    keys = frame.apply(lambda r: repr(tuple(r)), axis=1) if len(frame) else []
    return frame.assign(_key=keys).sort_values("_key").drop(columns="_key") \
        .reset_index(drop=True)


# Four whole runs (every stage): a minute. Slow (CI runs it); in the fast
# suite the means over raters are checked on the pure functions
# (check_records, rater_means, export's RunScores above), the raters'
# agreement on alpha_rows (below) and the human ceiling on ceiling_rows
# (test_ceiling.py), and the readers keep each rater (test_validate.py: the
# raters' test, the two readers' tables compared on a testbed with raters).
@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("read_mb", [16, 0], ids=["driver", "spark"])
def test_a_run_keeps_the_raters_and_every_number_is_the_means(spark, tmp_path, read_mb):
    """Two runs of one testbed: with each rater's judgments (lists, named
    raters, unbalanced counts) and with each summary's mean given once.
    judgments/ keeps every rater; every other table is equal, bit for bit:
    the stages read the mean over raters. Read in the driver (small local
    inputs) and by Spark (--driver-read-mb 0)."""
    import os

    import pandas as pd

    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig
    summaries, rated, means = _rated_testbed(tmp_path)
    outs = {}
    for name, judgments in (("rated", rated), ("means", means)):
        outs[name] = tmp_path / f"run_{name}"
        pipeline.run(spark, RunConfig(
            inputs=(str(summaries),), judgments=(str(judgments),), out=str(outs[name]),
            metrics=("R-1.a", "R-2.a", "Rpre-1.a"), clusters=2, jack_orders=2, hbr_exact=True,
            bootstrap=40, seed=5, driver_read_mb=read_mb))
    kept = _table(outs["rated"] / "judgments")
    assert list(kept.columns) == ["criterion", "rater", "score", "summarizer", "task", "topic"]
    assert len(kept) == 12 * 3 + len(kept[kept.criterion == "fluency"]) + 12
    assert set(kept[kept.criterion == "quality"].rater) == {"0", "1", "2"}
    assert kept[kept.criterion == "clarity"].rater.isna().all()
    assert set(kept[kept.criterion == "fluency"].rater) <= {"r0", "r1", "r2"}
    plain = _table(outs["means"] / "judgments")
    assert plain.rater.isna().all() and len(plain) == 36
    tables = sorted(p for p in os.listdir(outs["means"])
                    if os.path.isdir(outs["means"] / p) and p != "judgments")
    assert sorted(p for p in os.listdir(outs["rated"])
                  if os.path.isdir(outs["rated"] / p) and p != "judgments") == tables
    assert {"metric_eval", "correlations", "auc", "king_pearson", "testbed",
            "rater_agreement"} <= set(tables)
    # the agreement among the raters: the rated run's only (issue 39, part 3),
    # each criterion rated twice or more, alpha_rows of its ratings
    from qarla_spark.measures.krippendorff import alpha_rows
    agreement = _table(outs["rated"] / "rater_agreement")
    assert _table(outs["means"] / "rater_agreement").empty
    assert set(agreement.criterion) == {"quality"} | (
        {"fluency"} if kept[kept.criterion == "fluency"].groupby(
            ["topic", "summarizer"]).size().max() >= 2 else set())
    want = alpha_rows("t", kept.topic, kept.summarizer, kept.criterion, kept.rater.fillna(""),
                      kept.score, 5, 40)
    want = {r[1]: r for r in want}
    for r in agreement.itertuples():
        assert (r.task, r.criterion, r.alpha, r.ci_low, r.ci_high, r.interval, r.n_units,
                r.n_ratings, r.n_raters, r.n_resamples, r.unit) == want[r.criterion]
    assert agreement[agreement.criterion == "quality"].iloc[0].n_units == 12
    # the human ceiling: metric_eval/'s rows of measure "human", the rated
    # run's only, those of ceiling_rows on its judgments/
    from qarla_spark.measures.ceiling import ceiling_rows
    ev = _table(outs["rated"] / "metric_eval")
    human = ev[ev.measure == "human"]
    assert set(human.criterion) == set(agreement.criterion)
    named = kept[kept.rater.notna()]
    for criterion in sorted(set(human.criterion)):
        mine = named[named.criterion == criterion]
        want, _ = ceiling_rows("t", criterion, list(mine.topic), list(mine.summarizer),
                               list(mine.rater), list(mine.score), 5, 40)
        got = human[human.criterion == criterion]
        assert len(got) == len(want) == len({(r[3], r[4]) for r in want})
        by = {(r.level, r.statistic): r for r in got.itertuples()}
        for w in want:
            r = by[(w[3], w[4])]
            for a, b in ((r.value, w[5]), (r.ci_low, w[6]), (r.ci_high, w[7])):
                assert a == b or (a != a and b != b)
    for name in tables:
        if name == "rater_agreement":
            continue
        a, b = _table(outs["rated"] / name), _table(outs["means"] / name)
        if name == "metric_eval":
            a = a[a.measure != "human"].reset_index(drop=True)
        if name in ("metric_eval", "correlation_ci"):
            # the intervals that draw the raters too: the rated run's only,
            # its criteria with two named raters or more (test_rater_draws)
            named_by = kept[kept.rater.notna()].groupby("criterion").rater.nunique()
            assert set(a[a.unit == "raters"].criterion) == set(named_by[named_by >= 2].index)
            assert (b.unit != "raters").all()
            a = a[a.unit != "raters"].reset_index(drop=True)
        if name == "problems":      # the judgments files are named by their path
            a, b = a.drop(columns="file"), b.drop(columns="file")
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)


def test_alpha_rows_are_alpha_with_its_topic_bootstrap_interval():
    """rater_agreement/'s rows (issue 39, part 3): per criterion with a unit
    rated twice or more, α over those units (``interval_alpha``, exact; a
    unit rated once is left out) and the 95% percentile interval of its
    replicates, each unit weighted by its topic's Poisson weight keyed by
    (seed, task, topic); a criterion rated once per summary has no row."""
    import numpy as np

    from qarla_spark.measures import resampling as rs
    from qarla_spark.measures.krippendorff import alpha_rows, interval_alpha
    rng = np.random.default_rng(3)
    recs = []
    for t in range(5):
        for s in range(4):
            for r in range(int(rng.integers(1, 4))):
                recs.append((f"t{t}", f"s{s}", "q", f"r{r}", float(rng.integers(1, 6)) / 3))
            recs.append((f"t{t}", f"s{s}", "once", "r0", 1.0))
    topics, names, crits, raters, scores = map(list, zip(*recs))
    rows = alpha_rows("task", topics, names, crits, raters, scores, seed=7, n=200)
    assert [r[1] for r in rows] == ["q"]
    (row,) = rows
    units = {}
    for t, s, c, r, v in recs:
        if c == "q":
            units.setdefault((t, s), []).append(v)
    kept = {u: v for u, v in units.items() if len(v) >= 2}
    values = [v for vs in kept.values() for v in vs]
    labels = [u for u, vs in kept.items() for _ in vs]
    assert row[2] == interval_alpha(values, labels)
    assert row[6:9] == (len(kept), len(values), len({r for _, _, c, r, _ in recs if c == "q"}))
    # the replicates by hand: a unit's weight is its topic's, as copies
    names_t = sorted({u[0] for u in kept})
    w = rs.poisson_weights(7, "task", names_t, 200)
    reps = []
    for b in range(200):
        vals, labs = [], []
        for u, vs in kept.items():
            for copy in range(int(w[b, names_t.index(u[0])])):
                vals += vs
                labs += [(u, copy)] * len(vs)
        reps.append(interval_alpha(vals, labs) if vals else float("nan"))
    low, high = rs.percentile_interval(reps)
    assert abs(row[3] - low) < 1e-12 and abs(row[4] - high) < 1e-12
    assert row[5] == "percentile" and row[9:] == (200, "topics")
