"""Issue 28, item 5: ``qarla export RUN_DIR --format sacrerouge|mtme --out DIR``.

- SacreROUGE: the export of conftest's two-task run read back as
  SacreROUGE 0.2.5 reads it (:func:`read_sacrerouge`, after
  ``sacrerouge.io.JsonlReader(path, sacrerouge.data.Metrics).read()``), its
  values equal to scores computed here by a loop over the similarity,
  QUEEN and HBR tables; byte-identical when exported again;
- mt-metrics-eval: the layout read as ``mt_metrics_eval.data.EvalSet`` reads
  it (:func:`read_mtme`), segment scores equal to the same loop, system
  scores their exact mean over topics, human scores from the judgments;
- one value per (summary, measure) (issue 39, part 1): the exported metric
  scores bit-equal to HBR's topic scores (the statistics' inputs) and to
  the exact mean of the similarities in Fractions; metric_eval/ equal to
  correlations/, correlation_ci/ and hbr_correlations/ wherever they hold
  the same (task, measure, criterion, level, statistic), and its
  single-metric system-level correlations recomputed from the export;
- missing values (``None`` in mt-metrics-eval, left out in SacreROUGE) and
  names that are not file names, on a run directory made here with pyarrow;
- bad inputs: one line, exit status 1, nothing written.

The tests that read conftest's two-task run (a whole run: every stage) are
slow (CI runs them); the fast suite keeps the export of a run directory
made here with pyarrow (missing values, names, bad inputs).

Neither toolkit is a test dependency: sacrerouge 0.2.5 pins pytest 6.2.4
(through repro 0.1.1) against the suite's pytest >= 8 and does not import
without googledrivedownloader < 1; mt-metrics-eval is not on PyPI.
docs/DECISIONS.md, "Exporting scores".
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from fractions import Fraction

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from qarla_spark.cli import main


# ----------------------------------------------------------- independent readers

SACREROUGE_KEYS = ["instance_id", "summarizer_id", "summarizer_type", "metrics"]


def read_sacrerouge(path):
    """The records of a Metrics JSONL file as SacreROUGE 0.2.5 reads them:
    ``JsonlReader`` deserialises each line with ``jsons.loads(line, Metrics)``
    into ``Metrics(instance_id, summarizer_id, summarizer_type, metrics)``
    (``sacrerouge/data/metrics.py``; ``Metrics.serialize`` writes these four
    keys in this order); the metrics are a flat MetricsDict of numbers."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            obj = json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in {path}"))
            assert isinstance(obj, dict) and list(obj) == SACREROUGE_KEYS, obj
            assert isinstance(obj["instance_id"], str) and isinstance(obj["summarizer_id"], str)
            assert obj["summarizer_type"] in ("peer", "reference")
            assert isinstance(obj["metrics"], dict)
            for name, value in obj["metrics"].items():
                assert isinstance(name, str) and isinstance(value, float) and math.isfinite(value)
            records.append(obj)
    return records


def read_score_file(path):
    """mt-metrics-eval's ``data.ReadScoreFile``: ``SYSNAME SCORE`` lines,
    ``None`` a missing score; system -> scores in file order."""
    scores = defaultdict(list)
    with open(path) as handle:
        for line in handle:
            system, score = line.split()
            scores[system].append(float(score) if score != "None" else None)
    return dict(scores)


def read_mtme(testset, lp):
    """One EvalSet of an mt-metrics-eval test-set folder, read and checked
    as ``data.EvalSet._ReadDataset`` and ``CheckScores`` do: documents,
    sources, references (``<lp>.<name>.txt``), system outputs, human scores
    (``<lp>.<name>.<level>.score``) and metric scores
    (``metric-scores/<lp>/<name>-<refs>.<level>.score``)."""
    def lines(path):
        with open(path) as handle:
            return [line.rstrip() for line in handle]
    docs = [line.split() for line in lines(os.path.join(testset, "documents", f"{lp}.docs"))]
    assert all(len(d) == 2 for d in docs)
    segments = len(docs)
    doc_names = [d[1] for d in docs]
    assert len(set(doc_names)) == segments                      # contiguous, one each
    src = lines(os.path.join(testset, "sources", f"{lp}.txt"))
    refs = {}
    for name in os.listdir(os.path.join(testset, "references")):
        if name.startswith(f"{lp}."):
            ref = name.split(".")[-2]
            assert "-" not in ref and ref not in ("all", "src")
            refs[ref] = lines(os.path.join(testset, "references", name))
    systems = {name[:-len(".txt")]: lines(os.path.join(testset, "system-outputs", lp, name))
               for name in os.listdir(os.path.join(testset, "system-outputs", lp))}
    for text in [src, *refs.values(), *systems.values()]:
        assert len(text) == segments
    expected = {"sys": 1, "seg": segments}
    human, metric = {}, {}
    folder = os.path.join(testset, "human-scores")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        toks = name.split(".")
        if toks[0] != lp:
            continue
        assert len(toks) >= 4 and toks[-1] == "score"
        human[(".".join(toks[1:-2]), toks[-2])] = read_score_file(os.path.join(folder, name))
    for name in sorted(os.listdir(os.path.join(testset, "metric-scores", lp))):
        base, level, ext = name.rsplit(".", maxsplit=2)
        assert ext == "score" and level in ("sys", "domain", "doc", "seg")
        basename, used = base.rsplit("-", maxsplit=1)
        assert set(used.split(".")) <= set(refs)
        metric[(basename, level)] = read_score_file(
            os.path.join(testset, "metric-scores", lp, name))
    for (name, level), scores in [*human.items(), *metric.items()]:
        for system, values in scores.items():
            assert system in systems and len(values) == expected[level], (name, system)
    for (name, level), scores in metric.items():
        assert set(scores) == set(systems), name      # every system scored
    return {"segments": doc_names, "src": src, "refs": refs, "systems": systems,
            "human": human, "metric": metric}


# ----------------------------------------------------------- the scores, by a loop

def frame(run_dir, name):
    path = os.path.join(run_dir, name)
    return pq.read_table(path).to_pandas() if os.path.isdir(path) else None


def expected_scores(run_dir, task):
    """{(topic, summarizer): {measure: value}} of one task: each metric's
    mean over the topic's models r != s of value(s, r) (NaN left out), QUEEN
    of a peer with all models and of a model held out itself, HBR."""
    summaries = frame(run_dir, "summaries")
    summaries = summaries[summaries["task"].astype(str) == task]
    role = {(r.topic, r.summarizer): r.role for r in summaries.itertuples()}
    sims = frame(run_dir, "similarities")
    sims = sims[sims["task"].astype(str) == task]
    value = {(r.topic, r.summarizer_s, r.summarizer_r, r.metric): r.value
             for r in sims.itertuples()}
    metrics = sorted(set(sims["metric"]))
    out = {key: {} for key in role}
    for (topic, s) in role:
        models = [r for (t, r), k in role.items() if t == topic and k == "model" and r != s]
        for m in metrics:
            got = [value[(topic, s, r, m)] for r in models
                   if (topic, s, r, m) in value and not math.isnan(value[(topic, s, r, m)])]
            if got:
                out[(topic, s)][m] = fraction_mean(got)
    queen = frame(run_dir, "queen")
    for r in (queen.itertuples() if queen is not None else ()):
        if r.task == task and (r.holdout is None or r.holdout == r.summarizer):
            out[(r.topic, r.summarizer)][f"QUEEN({r.metric_set})"] = r.queen
    hbr = frame(run_dir, "hbr")
    for r in (hbr.itertuples() if hbr is not None else ()):
        if r.task == task:
            out[(r.topic, r.summarizer)]["HBR"] = r.hbr
    return out, role


def close(a, b):
    return a == pytest.approx(b, rel=1e-12, abs=1e-15)


def fraction_mean(values):
    """The exact mean of doubles, rounded once (the reference)."""
    return float(sum(map(Fraction, values), Fraction(0)) / len(values))


def assert_hbr_measures_agree(run_dir, task, records):
    """The metric scores are HBR's measures, bit for bit (issue 39, part 1):
    ``measures.hbr.topic_scores`` (mean aggregate, models too) on each
    topic's cube — what the HBR stage computes and hands the statistics
    (``HbrMeta.x``: metric_eval's cells) — and both the exact mean of the
    similarities in Fractions."""
    import numpy as np

    from qarla_spark.measures.hbr import topic_scores
    sims = frame(run_dir, "similarities")
    sims = sims[sims["task"].astype(str) == task]
    metrics = sorted(set(sims["metric"]))
    _, role = expected_scores(run_dir, task)
    got = {(r["instance_id"], r["summarizer_id"]): r["metrics"] for r in records}
    for topic in sorted({t for t, _ in role}):
        names = sorted(s for t, s in role if t == topic)
        cube = np.full((len(names), len(names), len(metrics)), np.nan)
        for r in sims[sims["topic"] == topic].itertuples():
            cube[names.index(r.summarizer_s), names.index(r.summarizer_r),
                 metrics.index(r.metric)] = r.value
        who, scores = topic_scores([role[(topic, s)] for s in names], cube,
                                   range(len(metrics)), models=True)
        models = [b for b, s in enumerate(names) if role[(topic, s)] == "model"]
        for i, row in zip(who, scores):
            for j, m in enumerate(metrics):
                mine = [cube[i, b, j] for b in models if not np.isnan(cube[i, b, j])]
                assert got[(topic, names[i])][m] == row[j] == fraction_mean(mine), \
                    (topic, names[i], m)


# ----------------------------------------------------------- SacreROUGE

@pytest.mark.slow       # reads conftest's two-task run (a whole run): CI runs it
def test_sacrerouge_export_reads_back_as_the_scores_by_a_loop(two_task_run, tmp_path, capsys):
    out = tmp_path / "sr"
    assert main(["export", two_task_run.out, "--format", "sacrerouge", "--out", str(out)]) == 0
    assert "export:" in capsys.readouterr().out
    assert sorted(os.listdir(out)) == ["chat_two", "news", "qarla-export.json"]
    names = json.loads((out / "qarla-export.json").read_text())
    assert names["format"] == "sacrerouge"
    assert {k: v["task"] for k, v in names["tasks"].items()} == {"chat_two": "chat two",
                                                                  "news": "news"}
    for folder, task in [("news", "news"), ("chat_two", "chat two")]:
        assert os.listdir(out / folder) == ["metrics.jsonl"]
        records = read_sacrerouge(out / folder / "metrics.jsonl")
        want, role = expected_scores(two_task_run.out, task)
        keys = [(r["instance_id"], r["summarizer_id"]) for r in records]
        assert keys == sorted(role)                  # every summary, sorted
        for rec, key in zip(records, keys):
            assert rec["summarizer_type"] == {"peer": "peer", "model": "reference"}[role[key]]
            assert set(rec["metrics"]) == set(want[key]), key
            for name, v in want[key].items():
                assert rec["metrics"][name] == v, (key, name)
        measures = set().union(*(r["metrics"] for r in records))
        assert {"R-1.a", "R-2.a", "Rpre-1.a", "AVLS", "HBR"} <= measures
        assert any(m.startswith("QUEEN(") for m in measures)
        # models: jackknifed metric means and their held-out QUEEN, no HBR
        # (no --hbr-models)
        model = next(r for r in records if r["summarizer_type"] == "reference")
        assert "R-1.a" in model["metrics"] and "HBR" not in model["metrics"]
        assert_hbr_measures_agree(two_task_run.out, task, records)
    again = tmp_path / "sr2"
    assert main(["export", two_task_run.out, "--format", "sacrerouge", "--out", str(again)]) == 0
    for folder in ("news", "chat_two"):
        assert (again / folder / "metrics.jsonl").read_bytes() == \
            (out / folder / "metrics.jsonl").read_bytes()


# ----------------------------------------------------------- mt-metrics-eval

@pytest.mark.slow       # reads conftest's two-task run (a whole run): CI runs it
def test_mtme_export_layout_and_values(two_task_run, tmp_path):
    out = tmp_path / "mt"
    assert main(["export", two_task_run.out, "--format", "mtme", "--out", str(out)]) == 0
    testset = out / os.path.basename(two_task_run.out)          # the run folder's name
    assert sorted(os.listdir(out)) == sorted([testset.name, "qarla-export.json"])
    assert sorted(os.listdir(testset)) == ["documents", "human-scores", "metric-scores",
                                           "references", "sources", "system-outputs"]
    names = json.loads((out / "qarla-export.json").read_text())
    assert {lp: v["task"] for lp, v in names["lps"].items()} == {"chat_two": "chat two",
                                                                  "news": "news"}
    judgments = frame(two_task_run.out, "judgments")
    for lp, task in [("news", "news"), ("chat_two", "chat two")]:
        got = read_mtme(str(testset), lp)
        want, role = expected_scores(two_task_run.out, task)
        topics = sorted({t for t, _ in role})
        peers = sorted({s for (_, s), r in role.items() if r == "peer"})
        assert got["segments"] == topics and sorted(got["systems"]) == peers
        assert list(got["refs"]) == ["refs"]
        n_models = sum(1 for (t, _), r in role.items() if t == topics[0] and r == "model")
        assert got["refs"]["refs"][0].count(" ||| ") == n_models - 1
        measures = {m for key in want for m in want[key]}
        assert {name for name, _ in got["metric"]} == measures
        for (name, level), scores in got["metric"].items():
            for peer in peers:
                seg = [want[(t, peer)].get(name) for t in topics]
                if level == "seg":
                    assert scores[peer] == seg, (name, peer)
                else:           # the exact mean of the segment scores
                    assert scores[peer][0] == fraction_mean(seg), (name, peer)
        if task != "news":
            assert got["human"] == {}
            continue
        rows = judgments[judgments["task"].astype(str) == task]
        assert {name for name, _ in got["human"]} == set(rows["criterion"])
        for (criterion, level), scores in got["human"].items():
            part = rows[rows["criterion"] == criterion]
            for peer in peers:
                mine = part[part["summarizer"] == peer].set_index("topic")["score"]
                if level == "seg":
                    assert scores[peer] == [mine.get(t) for t in topics]
                else:
                    assert close(scores[peer][0], mine.mean())


# ----------------------------------------------------------- one value per score

@pytest.mark.slow       # reads conftest's two-task run (a whole run): CI runs it
def test_metric_eval_holds_the_exported_scores_and_the_correlation_tables(two_task_run,
                                                                          tmp_path):
    """Issue 39, part 1: metric_eval/ and correlations/, correlation_ci/,
    hbr_correlations/ give the same double for the same (task, measure,
    criterion, level, statistic); metric_eval's system-level correlations
    of every measure are those of the exported scores, each system's score
    the exact mean (Fractions) of its exported segment scores over its
    cells (judged, scored by every measure of metric_eval/)."""
    import numpy as np

    from qarla_spark.measures import agreement
    run = two_task_run.out
    me = frame(run, "metric_eval")
    me = me[me["measure"] != "chance"]
    value = {}
    for r in me.itertuples():
        key = (str(r.task), r.criterion, r.measure, r.level, r.statistic)
        assert value.setdefault(key, r.value) == r.value or (
            np.isnan(r.value) and np.isnan(value[key]))     # one value a key
    kinds = ("pearson", "spearman", "kendall")

    def check(key, v):
        if key not in value:
            return 0
        assert value[key] == v or (np.isnan(value[key]) and (v is None or np.isnan(v))), key
        return 1
    compared = {}
    for r in frame(run, "correlations").itertuples():
        compared["correlations"] = compared.get("correlations", 0) + sum(
            check((str(r.task), r.criterion, f"QUEEN({r.metric_set})", r.level, k),
                  getattr(r, k)) for k in kinds)
    for r in frame(run, "correlation_ci").itertuples():
        measure = f"QUEEN({r.metric_set})" if r.score == "QUEEN" else "HBR"
        compared["correlation_ci"] = compared.get("correlation_ci", 0) + check(
            (str(r.task), r.criterion, measure, r.level, r.correlation), r.value)
    for r in frame(run, "hbr_correlations").itertuples():
        compared["hbr_correlations"] = compared.get("hbr_correlations", 0) + sum(
            check((str(r.task), r.criterion, "HBR", r.level, k), getattr(r, k)) for k in kinds)
    assert all(n >= 6 for n in compared.values()) and len(compared) == 3, compared

    out = tmp_path / "mt"
    assert main(["export", run, "--format", "mtme", "--out", str(out)]) == 0
    got = read_mtme(str(out / os.path.basename(run)), "news")
    measures = sorted(set(me[me["task"].astype(str) == "news"]["measure"]))
    systems = sorted(got["systems"])
    checked = 0
    for (criterion, level), human in got["human"].items():
        if level != "seg":
            continue
        seg = {m: got["metric"][(m, "seg")] for m in measures}
        cells = {s: [t for t in range(len(got["segments"])) if human[s][t] is not None and
                     all(seg[m][s][t] is not None for m in measures)] for s in systems}
        who = [s for s in systems if cells[s]]
        ys = [fraction_mean([human[s][t] for t in cells[s]]) for s in who]
        for m in measures:
            xs = [fraction_mean([seg[m][s][t] for t in cells[s]]) for s in who]
            want = agreement.correlations(who, xs, ys)
            for k, v in zip(kinds, want):
                checked += check(("news", criterion, m, "system", k), float(v))
    assert checked >= 3 * len(measures)


# ----------------------------------------------------------- missing values, names

def write_run(root, summaries, similarities, judgments=None):
    """A finished run directory as qarla run writes it (Spark's task folders,
    '/' escaped as %2F), holding only the tables given."""
    def partitioned(name, rows, columns):
        df = pd.DataFrame(rows, columns=columns)
        for task, part in df.groupby("task"):
            folder = root / name / ("task=" + task.replace("%", "%25").replace("/", "%2F"))
            folder.mkdir(parents=True)
            pq.write_table(pa.Table.from_pandas(part.drop(columns="task"), preserve_index=False),
                           folder / "part-00000.parquet")
    partitioned("summaries", summaries, ["task", "topic", "summarizer", "role", "text"])
    partitioned("similarities", similarities,
                ["task", "topic", "summarizer_s", "summarizer_r", "metric", "value"])
    if judgments:
        partitioned("judgments", judgments, ["task", "topic", "summarizer", "criterion", "score"])
    (root / "run.json").write_text(json.dumps({"status": "complete", "signature": "test"}))


def test_missing_values_and_names_that_are_not_file_names(tmp_path):
    task, numeric = "a.b/c d", "2004"
    summaries = [(task, "t 1", "m/1", "model", "m1 text"), (task, "t 1", "m2", "model", "x"),
                 (task, "t 1", "peer one", "peer", "line one\nline two"),
                 (task, "t2", "m2", "model", "y"), (task, "t2", "peer one", "peer", "z"),
                 (numeric, "d", "m", "model", "a"), (numeric, "d", "p", "peer", "b")]
    nan = float("nan")
    sims = [(task, "t 1", "peer one", "m/1", "R-1.a", 0.5),
            (task, "t 1", "peer one", "m2", "R-1.a", nan),         # left out of the mean
            (task, "t 1", "m/1", "m2", "R-1.a", 0.25), (task, "t 1", "m2", "m/1", "R-1.a", 1.0),
            (task, "t 1", "m/1", "peer one", "R-1.a", 0.0),        # r a peer: never counted
            (task, "t2", "peer one", "m2", "R-1.a", nan),          # all NaN: missing
            (task, "t2", "m2", "peer one", "R-1.a", 0.75),
            (numeric, "d", "p", "m", "R-1.a", 0.125), (numeric, "d", "m", "p", "R-1.a", 0.0)]
    judgments = [(task, "t2", "peer one", "over all", 3.0)]
    run = tmp_path / "my run"
    write_run(run, summaries, sims, judgments)

    sr = tmp_path / "sr"
    assert main(["export", str(run), "--format", "sacrerouge", "--out", str(sr)]) == 0
    folders = json.loads((sr / "qarla-export.json").read_text())["tasks"]
    assert {k: v["task"] for k, v in folders.items()} == {"2004": numeric, "a.b_c_d": task}
    got = {(r["instance_id"], r["summarizer_id"]): r["metrics"]
           for r in read_sacrerouge(sr / "a.b_c_d" / "metrics.jsonl")}
    assert got == {("t 1", "m/1"): {"R-1.a": 0.25}, ("t 1", "m2"): {"R-1.a": 1.0},
                   ("t 1", "peer one"): {"R-1.a": 0.5}, ("t2", "m2"): {},
                   ("t2", "peer one"): {}}
    assert read_sacrerouge(sr / "2004" / "metrics.jsonl")[1]["metrics"] == {"R-1.a": 0.125}

    mt = tmp_path / "mt"
    assert main(["export", str(run), "--format", "mtme", "--out", str(mt)]) == 0
    testset = mt / "my_run"
    lps = json.loads((mt / "qarla-export.json").read_text())["lps"]
    assert lps["a_b_c_d"]["task"] == task and lps["a_b_c_d"]["systems"] == {
        "peer_one": "peer one"}
    assert lps["a_b_c_d"]["documents"] == {"t_1": "t 1", "t2": "t2"}
    seg = (testset / "metric-scores" / "a_b_c_d" / "R-1.a-refs.seg.score").read_text()
    assert seg == "peer_one\t0.5\npeer_one\tNone\n"        # mt-metrics-eval's missing score
    sys_level = (testset / "metric-scores" / "a_b_c_d" / "R-1.a-refs.sys.score").read_text()
    assert sys_level == "peer_one\t0.5\n"                   # the mean over scored topics
    assert (testset / "system-outputs" / "a_b_c_d" / "peer_one.txt").read_text() == \
        "line one line two\nz\n"
    assert (testset / "references" / "a_b_c_d.refs.txt").read_text() == "m1 text ||| x\ny\n"
    assert (testset / "sources" / "a_b_c_d.txt").read_text() == "\n\n"
    human = testset / "human-scores"
    assert (human / "a_b_c_d.over_all.seg.score").read_text() == "peer_one\tNone\npeer_one\t3.0\n"
    assert (human / "a_b_c_d.over_all.sys.score").read_text() == "peer_one\t3.0\n"
    assert read_score_file(testset / "metric-scores" / "2004" / "R-1.a-refs.sys.score") == \
        {"p": [0.125]}


# ----------------------------------------------------------- bad inputs

def one_line_error(capsys):
    err = capsys.readouterr().err.strip()
    assert err.startswith("qarla: ") and "\n" not in err, err
    return err


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> str:
    """A finished run directory of two tasks, 'news' and 'chat two' (one
    topic, a model and a peer each), made with pyarrow: what the bad-input
    test exports when the input is good (no Spark, no whole run)."""
    run = tmp_path_factory.mktemp("export") / "run"
    summaries, sims = [], []
    for task in ("news", "chat two"):
        summaries += [(task, "d1", "m1", "model", "a ."), (task, "d1", "p1", "peer", "b .")]
        sims += [(task, "d1", "p1", "m1", "R-1.a", 0.5), (task, "d1", "m1", "p1", "R-1.a", 0.5)]
    write_run(run, summaries, sims)
    return str(run)


def test_bad_inputs_say_one_line_and_exit_1(finished_run, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["--format", "sacrerouge", "--out", str(out)]
    assert main(["export", str(tmp_path / "nothing"), *args]) == 1
    assert "is not a directory" in one_line_error(capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["export", str(empty), *args]) == 1
    assert "has no run.json" in one_line_error(capsys)
    (empty / "run.json").write_text(json.dumps({"status": "incomplete"}))
    assert main(["export", str(empty), *args]) == 1
    assert "not a finished qarla run" in one_line_error(capsys)
    assert main(["export", finished_run, "--format", "csv", "--out", str(out)]) == 1
    assert "unknown export format 'csv'" in one_line_error(capsys)
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    assert main(["export", finished_run, *args]) == 1
    assert "already exists and is not empty" in one_line_error(capsys)
    assert os.listdir(out) == ["mine.txt"]
    assert sorted(os.listdir(tmp_path)) == ["empty", "out"]       # nothing else written
    (out / "mine.txt").unlink()                                   # an empty folder will do
    assert main(["export", finished_run, *args]) == 0
    assert sorted(os.listdir(out)) == ["chat_two", "news", "qarla-export.json"]
