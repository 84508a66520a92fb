"""The plan stage (stages/planning.py, issue 40, second increment): the
units run as one Spark job give the same tables bit for bit at any number
of partitions and as a plain loop over the units in the driver; the inputs
read from a finished run (pyarrow or Spark: the same) give the run's own
KING; ``qarla plan`` adds ``power/`` and ``ppi/`` to the run and its
``run.json``; the defaults and the answers."""

from __future__ import annotations

import json
import math
import os
import shutil
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.measures import planning as pl
from qarla_spark.measures import ppi
from qarla_spark.stages import planning as P


def test_default_sizes_are_tens_then_one_and_a_half_and_twice():
    assert P.default_sizes(100) == (10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 150, 200)
    assert P.default_sizes(45) == (10, 20, 30, 40, 45, 68, 90)
    assert P.default_sizes(5) == (5, 8, 10)
    assert P.default_sizes(0) == ()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 100.0), min_size=0, max_size=30), st.integers(1, 6))
def test_bins_hold_every_unit_once_and_are_balanced(costs, n_bins):
    units = [(("systems", "t", "m", k), c) for k, c in enumerate(costs)]
    bins = P.bins_of(units, n_bins)
    flat = [u for b in bins for u in b]
    assert sorted(flat) == sorted(u for u, _ in units)
    assert len(bins) <= max(1, min(n_bins, len(units))) and all(bins)
    if bins:
        loads = [sum(c for (u, c) in units if u in b) for b in bins]
        # greedy to the least loaded: no bin exceeds another by more than one unit
        assert max(loads) - min(loads) <= max(costs, default=0.0) + 1e-9


def _inputs(seed=3):
    """Two small tasks: one judged (two criteria), one not; a system
    missing a topic; a tie on the testbed."""
    rng = np.random.default_rng(seed)
    out = []
    for task, n_t, n_s, judged in (("news", 14, 5, True), ("chat", 9, 4, False)):
        topics = tuple(f"{task}-t{k:02d}" for k in range(n_t))
        systems = tuple(f"S{k}" for k in range(n_s))
        t = P.TaskInputs(task, topics, "A,B", "A")
        base = rng.normal(0.0, 0.3, n_s)
        for measure in ("QUEEN(A,B)", "QUEEN(A)", "HBR"):
            scores = base + rng.normal(0.0, 0.5, (n_t, n_s))
            scores[2, 1] = math.nan
            scores[:, -1] = scores[:, 0]             # a tie with the first system
            t.measures[measure] = (systems, scores)
        if judged:
            for criterion in ("coherence", "relevance"):
                human = t.measures["QUEEN(A,B)"][1] * 2 + rng.normal(0.0, 0.4, (n_t, n_s))
                t.measures[criterion] = (systems, np.round(human, 1))
            t.criteria = ("coherence", "relevance")
        t.king_sets = P.tie_break_order(["A", "B", "A,B"])
        t.king = rng.integers(0, 4, (n_t, 3)) / 3.0
        # every subset's KING cases (king_topics/): 4 or 5 models a topic, a
        # topic without KING
        t.subsets = P.tie_break_order(["A", "B", "C", "A,B", "A,C", "B,C", "A,B,C"])
        t.subset_models = rng.integers(4, 6, n_t)
        t.subset_models[1] = 0
        t.subset_wins = rng.integers(0, 5, (n_t, len(t.subsets))) % (t.subset_models[:, None]
                                                                      + 1)
        out.append(t)
    return out


def _loop(inputs, s):
    """The plan as a plain loop over the units in the driver, no Spark: each
    task's rows (answers included) and its printed lines."""
    power, found, lines = [], [], []
    for t in inputs:
        units = [P.run_unit(unit, t, s) for unit, _ in P.units_of([t], s)]
        rows, more, answers = P.finish_task(t, units)
        power += rows
        found += more
        lines += answers.lines
    power.sort(key=lambda r: P._sort_key(r, P.POWER_SORT))
    found.sort(key=lambda r: P._sort_key(r, P.PPI_SORT))
    return power, found, lines


def _gathered(result, name):
    """A table's rows as the executors hold them (the reduce's records),
    gathered here for the test, sorted as the stage sorts a task's rows."""
    from qarla_spark.spark import rounds as rd
    parts = [rd.arrow_of(data) for _, _, data in rd.collect(result.records, [name])]
    rows = [tuple(r.values()) for part in parts for r in part.to_pylist()]
    return sorted(rows, key=lambda r: P._sort_key(r, P.POWER_SORT if name == "power"
                                                   else P.PPI_SORT))


@pytest.mark.spark
def test_the_stage_is_bit_identical_at_any_partitioning_and_equals_a_loop(spark):
    inputs = _inputs()
    s = P.Settings(trials=24, sizes=(3, 6, 14, 21), ks=(2, 4), seed=11)
    one = P.run_plan(spark, inputs, s, n_partitions=1)
    three = P.run_plan(spark, inputs, s, n_partitions=3)
    assert one.n_partitions == 1 and three.n_partitions == 3
    power, found, lines = _loop(inputs, s)
    for result in (one, three):
        # bit for bit: NaN-free comparisons of the rows as Python values
        assert repr(_gathered(result, "power")) == repr(power)
        assert repr(_gathered(result, "ppi")) == repr(found)
        # the driver receives the answers only: a task's lines and counts
        assert [a.task for a in result.answers] == ["news", "chat"]
        assert [line for a in result.answers for line in a.lines] == lines
        assert sum(a.n_power for a in result.answers) == len(power)
        assert set(result.tables) == {"power", "ppi"}
    assert P.describe_plan(one) == P.describe_plan(three)
    table = P.arrow_table("power", power).to_pandas()
    assert set(table["question"]) == {"pair", "ranking", "best_set", "best_vs_single",
                                      "pairwise_accuracy"}
    # pairwise accuracy's widths: every automatic measure against each criterion, no answer
    accuracy = table[table["question"] == "pairwise_accuracy"]
    assert set(zip(accuracy["task"], accuracy["measure"], accuracy["a"])) == {
        ("news", m, c) for m in ("QUEEN(A,B)", "QUEEN(A)", "HBR")
        for c in ("coherence", "relevance")}
    assert accuracy["n_needed"].isna().all() and accuracy["needed_at_most"].isna().all()
    assert (accuracy["ci_width"] >= 0).all() and (accuracy["ci_width"] > 0).any()
    assert set(table.loc[table["question"] == "pair", "measure"]) == {
        "QUEEN(A,B)", "QUEEN(A)", "HBR", "coherence", "relevance"}
    # the tied pair keeps no order (NaN), the extrapolated size is marked
    tied = table[(table["question"] == "pair") & (table["a"] == "S0") & (table["b"] == "S4")]
    assert tied["p_same_order"].isna().all() and len(tied)
    pairs = table[table["question"] == "pair"]
    assert (pairs["extrapolated"] == (pairs["n_topics"] > pairs["testbed_topics"])).all()
    ppi_rows = P.arrow_table("ppi", found).to_pandas()
    assert set(ppi_rows["method"]) == {"classical", "ppi", "ppi++"}
    assert set(ppi_rows["task"]) == {"news"} and set(ppi_rows["measure"]) == {"QUEEN(A,B)"}
    classical = ppi_rows[ppi_rows["method"] == "classical"]
    assert np.allclose(classical["width"], classical["classical_width"], equal_nan=True)


def test_a_unit_is_the_pure_module_s_plan_of_that_size():
    """A systems unit is plan_systems of its one size; the best unit's
    stays-best counts are plan_best's; a PPI unit is simulate's of its k."""
    t = _inputs()[0]
    s = P.Settings(trials=30, sizes=(4, 14, 20), ks=(3,), seed=5)
    systems, scores = t.measures["HBR"]
    whole = pl.plan_systems(scores, s.sizes, s.trials, s.seed, t.task, "HBR", systems, t.topics)
    for row, n in enumerate(s.sizes):
        rows = [r for r in P.run_unit(("systems", t.task, "HBR", n), t, s)["power"]
                if r[1] == P.PAIR]
        assert [r[11] for r in rows] == whole.p_significant[row].tolist()
    # a criterion's unit orders its systems as the run does (human=True)
    systems, human = t.measures["coherence"]
    judged = pl.plan_systems(human, (14,), s.trials, s.seed, t.task, "coherence", systems,
                             t.topics, human=True)
    rows = [r for r in P.run_unit(("systems", t.task, "coherence", 14), t, s)["power"]
            if r[1] == P.PAIR]
    assert [r[10] for r in rows] == [None if math.isnan(v) else v
                                     for v in judged.p_same_order[0].tolist()]
    best = pl.plan_best_cases(t.subset_wins, t.subset_models, s.sizes, s.trials, s.seed,
                              t.task, P.KING, t.topics)
    rows = [r for n in s.sizes for r in P.run_unit(("best", t.task, P.BEST_SET, n), t, s)[
        "power"] if r[1] == P.BEST_SET]
    assert [r[10] for r in rows] == best.p_stays_best.tolist()
    assert {r[3] for r in rows} == {t.subsets[best.best]}
    # PPI with another measure by name: its scores are the automatic side
    other = P.Settings(trials=30, ks=(3,), seed=5, ppi_measure="HBR")
    rows = P.run_unit(("ppi", t.task, "relevance", 3), t, other)["ppi"]
    assert {r[2] for r in rows} == {"HBR"}
    human = t.measures["relevance"][1]
    sim = ppi.simulate(human, t.measures["HBR"][1], [3], 30, 5, t.task, "relevance",
                       t.measures["relevance"][0], t.topics)
    assert [r[8] for r in rows if r[3] == "ppi++"] == sim.coverage[0, 2].tolist()
    assert P.ppi_measure_of(t, P.Settings(ppi_measure="coherence")) is None
    # an accuracy unit is plan_pairwise_accuracy's of its size, under the criterion's label
    rows = P.run_unit(("accuracy", t.task, "coherence", 14), t, s)["power"]
    names = P.automatic_measures(t)
    acc = pl.plan_pairwise_accuracy([t.measures[m][1] for m in names],
                                    t.measures["coherence"][1], [14], s.trials, s.seed, t.task,
                                    "pairwise_accuracy:coherence", names, t.topics)
    assert [(r[2], r[3], r[12]) for r in rows] == [
        (m, "coherence", acc.ci_width[0, k]) for k, m in enumerate(names)]


def test_a_run_without_king_topics_plans_all_but_the_best_set_and_says_so():
    """A run made before king_topics/: a named warning, no best_set unit (the
    other questions unchanged); a table lacking a (topic, subset) is an
    error, not a wrong count."""
    import pandas as pd

    from qarla_spark.names import QarlaWarning
    (t,) = _inputs()[:1]
    t.subsets, t.subset_wins, t.subset_models = (), None, None
    with pytest.warns(QarlaWarning, match="no king_topics/"):
        assert P.with_subsets([t], None, "runs/old") == [t]
    s = P.Settings(trials=5, sizes=(3, 6), ks=(2,), seed=1)
    kinds = {(u[0], u[2]) for u, _ in P.units_of([t], s)}
    assert ("best", P.BEST_SET) not in kinds and ("best", P.BEST_VS_SINGLE) in kinds
    frame = pd.DataFrame({"task": t.task, "topic": [t.topics[0], t.topics[0], t.topics[1]],
                          "metric_set": ["A", "B", "A"], "wins": [1, 2, 0],
                          "models": [4, 4, 5]})
    with pytest.raises(ValueError, match="one row per subset"):
        P.with_subsets([t], frame)
    P.with_subsets([t], frame.iloc[:2].assign(wins=[1, 2]))
    assert t.subsets == ("A", "B") and t.subset_models[0] == 4 and t.subset_models[1:].sum() == 0
    assert t.subset_wins[0].tolist() == [1, 2]


def test_the_answers_are_smallest_n_of_each_curve():
    rows = [("t", P.PAIR, "m", "a", "b", True, n, 50, n > 50, 100, 0.9, p, 0.1)
            for n, p in ((10, 0.3), (20, 0.7), (30, 0.9), (50, 0.95), (75, 0.99))]
    rows += [("t", P.RANKING, "m", None, None, None, n, 50, False, 100, p, 0.0, None)
             for n, p in ((10, 0.1), (20, 0.2))]
    out = P.with_answers(rows)
    assert out[0][-2:] == (float(math.ceil(20 + 0.1 / 0.2 * 10 - 1e-9)), False)
    assert all(r[-2] is None and r[-1] is False for r in out[5:])


def test_the_printed_answer_names_the_topics_a_pair_needs():
    t = P.TaskInputs("t", tuple(f"x{k}" for k in range(100)), "A,B", "A")
    t.measures["HBR"] = (("M22", "M23"), np.zeros((100, 2)))
    sizes = (50, 100, 150, 200)
    rows = [("t", P.PAIR, "HBR", "M22", "M23", True, n, 100, n > 100, 1000, 0.9, p, 0.1)
            for n, p in zip(sizes, (0.3, 0.6, 0.75, 0.85))]
    rows += [("t", P.RANKING, "HBR", None, None, None, n, 100, n > 50, 1000, p, 0.0, None)
             for n, p in zip(sizes, (0.5, 0.7, 0.9, 0.95))]
    text = "\n".join(P.describe_task(t, P.with_answers(rows), []))
    assert ("0 of 1 adjacent pairs reach 80% power within the 100 topics you have; to "
            "separate M22 from M23 with 80% power: ~175 topics (extrapolated)") in text
    assert "Whole ranking stable (two halves agree) with 80%: ~125 topics (extrapolated)" in text


def test_the_plan_options_parse_and_refuse():
    from qarla_spark.cli import build_parser
    from qarla_spark.config import RunConfig, config_from_args
    from qarla_spark.errors import ConfigError
    args = build_parser().parse_args(["plan", "runs/x", "--plan-sizes", "5,10,40",
                                      "--plan-trials", "50"])
    config = config_from_args(args)
    assert config.plan_sizes == (5, 10, 40) and config.plan_trials == 50
    assert config.plan_ks == (10, 20, 30, 40, 50) and args.run_dir == "runs/x"
    for bad in ("10,5", "0,3", "a"):
        with pytest.raises(ConfigError, match="--plan-sizes must be increasing"):
            config_from_args(build_parser().parse_args(["plan", "r", "--plan-sizes", bad]))
    assert RunConfig(plan=True).plan and "plan" not in RunConfig().stages


def test_qarla_plan_refuses_an_unfinished_run_before_spark_starts(tmp_path, capsys,
                                                                   monkeypatch):
    from qarla_spark import cli
    monkeypatch.setattr(cli, "session_for", lambda *a, **k: pytest.fail("Spark started"))
    assert cli.main(["plan", str(tmp_path)]) == 2
    assert "has no run.json: it is not a finished qarla run" in capsys.readouterr().err
    (tmp_path / "run.json").write_text('{"status": "incomplete"}')
    assert cli.main(["plan", str(tmp_path)]) == 2


@pytest.mark.slow       # reads conftest's two-task run (a whole run): CI runs it; the stage
@pytest.mark.spark      # itself is checked in the fast suite above (bit-identical, a loop)
def test_plan_of_a_finished_run(spark, two_task_run, tmp_path):
    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig
    import pyarrow.parquet as pq
    run = str(tmp_path / "run")
    shutil.copytree(two_task_run.out, run)           # the shared run stays as it is
    info = json.load(open(os.path.join(run, "run.json")))
    local = P.read_inputs(spark, run, info["qarla"])
    remote = P.read_inputs_spark(spark, f"file://{run}", info["qarla"])
    assert [t.task for t in local] == [t.task for t in remote] == sorted(info["qarla"]["tasks"])
    king = pq.read_table(os.path.join(run, "king")).to_pandas()
    for a, b in zip(local, remote):
        assert (a.topics, a.best_set, a.best_single, a.criteria, a.king_sets) == \
            (b.topics, b.best_set, b.best_single, b.criteria, b.king_sets)
        assert list(a.measures) == list(b.measures)
        for m in a.measures:
            assert a.measures[m][0] == b.measures[m][0]
            np.testing.assert_array_equal(a.measures[m][1], b.measures[m][1])
        np.testing.assert_array_equal(a.king, b.king)
        # the per-topic shares average to the run's own KING of each set
        for k, name in enumerate(a.king_sets):
            want = king[(king["task"] == a.task) & (king["metric_set"] == name)]["king"]
            assert np.nanmean(a.king[:, k]) == pytest.approx(float(want.iloc[0]), abs=1e-12)
        assert a.best_set in a.king_sets
        # every subset's KING cases (king_topics/): both readers alike, each
        # subset's mean share over the topics with KING is king/'s, and the
        # plan's best of the testbed is the QARLA stage's best set
        assert a.subsets == b.subsets and len(a.subsets) == len(
            king[(king["task"] == a.task) & king["metric_set"].isin(a.subsets)])
        np.testing.assert_array_equal(a.subset_wins, b.subset_wins)
        np.testing.assert_array_equal(a.subset_models, b.subset_models)
        kept = a.subset_models > 0
        for k, name in enumerate(a.subsets):
            want = king[(king["task"] == a.task) & (king["metric_set"] == name)]["king"]
            share = sum(Fraction(int(w), int(m)) for w, m in
                        zip(a.subset_wins[kept, k], a.subset_models[kept])) / int(kept.sum())
            assert float(share) == float(want.iloc[0])
        best = pl.plan_best_cases(a.subset_wins, a.subset_models, (2,), 3, 1, a.task, "KING",
                                  a.topics)
        assert a.subsets[best.best] == a.best_set
    config = RunConfig(plan_trials=12, plan_ks=(2,), plan_sizes=(2, 4, 6, 9))
    from qarla_spark.errors import ConfigError
    with pytest.raises(ConfigError, match="--plan-measure nope: task news has no such measure"):
        pipeline.plan_tables(spark, run, info["qarla"], RunConfig(plan_measure="nope"), 4)
    result = pipeline.plan_run(spark, run, config)
    after = json.load(open(os.path.join(run, "run.json")))
    assert after["status"] == "complete" and after["plan"]["trials"] == 12
    assert list(after["tables"])[-2:] == ["power", "ppi"]
    assert set(info["tables"]) <= set(after["tables"])
    assert not [f for f in os.listdir(run) if f.startswith(".")]     # nothing staged left
    power = pq.read_table(os.path.join(run, "power")).to_pandas()
    assert len(power) == after["plan"]["rows"]["power"] == sum(a.n_power
                                                               for a in result.answers)
    assert set(power["task"]) == set(info["qarla"]["tasks"])
    ppi_rows = pq.read_table(os.path.join(run, "ppi")).to_pandas()
    judged = [t.task for t in local if t.criteria]
    assert set(ppi_rows["task"]) == set(judged)
    text = P.describe_plan(result)
    assert "the 6 topics you have" in text and "with 80%" in text
    # the report shows the curves and the PPI table
    from qarla_spark.report import write_report
    page = open(write_report(run, str(tmp_path / "r.html")), encoding="utf-8").read()
    assert page.count('data-figure="power"') == len(info["qarla"]["tasks"])
    assert "ppi-table" in page and "could not be drawn" not in page
    # adding the tables again replaces them, and run.json with them
    from qarla_spark.spark.output import add_tables
    add_tables(spark, run, {"power": pq.read_table(os.path.join(run, "power"))}, "plan",
               {"again": True})
    assert pq.read_table(os.path.join(run, "power")).to_pandas().equals(power)
    after = json.load(open(os.path.join(run, "run.json")))
    assert after["plan"] == {"again": True} and list(after["tables"])[-2:] == ["power", "ppi"]
    assert not [f for f in os.listdir(run) if f.startswith(".")]


@pytest.mark.slow       # a whole run (the shared two-task run's, with --plan)
@pytest.mark.spark
def test_a_run_with_plan_equals_the_run_then_qarla_plan(spark, two_task_run, tmp_path):
    """``qarla run --plan``: the plan stage inside a whole run (reading the
    tables the run has just staged) writes every table `qarla plan` adds to
    the same run made without it — every one of the run's tables
    identical, bit for bit — and prints the same answers."""
    from devtools.compare import compare_runs
    from helpers import two_task_records, write_jsonl
    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig
    plan = dict(plan_trials=12, plan_ks=(2, 3), plan_sizes=(2, 4, 6, 9))
    path = write_jsonl(tmp_path / "in.jsonl", two_task_records())
    out = str(tmp_path / "with_plan")
    result = pipeline.run(spark, RunConfig(
        inputs=(str(path),), out=out, metrics=("R-1.a", "R-2.a", "Rpre-1.a", "AVLS"),
        clusters=2, jack_orders=2, hbr_exact=True, bootstrap=300, seed=4, plan=True, **plan))
    after = str(tmp_path / "after")
    shutil.copytree(two_task_run.out, after)       # the shared run, made without --plan
    planned = pipeline.plan_run(spark, after, RunConfig(**plan))
    differences = compare_runs(out, after)
    assert {"power", "ppi"} <= set(differences)
    assert differences == {name: [] for name in differences}
    info = json.load(open(os.path.join(out, "run.json")))
    assert list(info["tables"])[-2:] == ["power", "ppi"]
    assert info["plan"]["answers"] == P.describe_plan(planned).splitlines()
    assert info["plan"]["rows"] == json.load(open(os.path.join(after, "run.json")))["plan"]["rows"]
    assert P.describe_plan(planned) in result.summary()
    assert "plan_s" in info["timings"] and info["plan"]["timings"]["write_power_s"] is not None


@pytest.mark.slow       # a whole run of the bundled SummEval (few metrics)
@pytest.mark.spark
def test_the_plan_orders_summeval_s_humans_as_the_run_does(spark, tmp_path):
    """The bundled SummEval (16 systems, 4 criteria): the plan's testbed
    order of every one of the 120 pairs under each criterion is the run's —
    the sign of the statistics' human system scores
    (``judge_statistics.human_scores``: the exact means of the readings,
    rounded once) — fluency's M1 and M22 tied, which the exact sums of the
    summaries' doubles order; and each automatic measure's pairwise
    accuracy on the testbed, which counts the humans' ties, is
    ``metric_eval/``'s bit for bit."""
    import pyarrow.parquet as pq

    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig
    from qarla_spark.measures import judge_statistics as js
    out = str(tmp_path / "summeval")
    pipeline.run(spark, RunConfig(out=out, metrics=("R-1.a", "R-2.a", "Rpre-1.a", "R-L.a"),
                                  clusters=2, jack_orders=2, bootstrap=20, seed=13))
    info = json.load(open(os.path.join(out, "run.json")))
    (t,) = P.read_inputs(spark, out, info["qarla"])
    assert t.criteria == ("coherence", "consistency", "fluency", "relevance")
    metric_eval = pq.read_table(os.path.join(out, "metric_eval")).to_pandas()
    pa_rows = metric_eval[(metric_eval["statistic"] == "pairwise_accuracy")
                          & (metric_eval["level"] == "system")]
    ones = np.ones((1, t.n_topics), dtype=np.int64)
    checked = 0
    for criterion in t.criteria:
        systems, human = t.measures[criterion]
        assert len(systems) == 16
        plan = pl.plan_systems(human, (), 0, 13, t.task, criterion, systems, t.topics,
                               human=True)
        run_means = js.human_scores(js.JudgedScores(t.topics, systems, ("x",),
                                                    human[:, :, None], human), ones)[0]
        want = [int(np.sign(run_means[i] - run_means[j])) for i, j in zip(plan.i, plan.j)]
        assert plan.full_order.tolist() == want and len(want) == 120
        by_doubles = pl.pair_signs(human, np.isfinite(human), ones, plan.i, plan.j)[0]
        tied = [(systems[i], systems[j]) for p, (i, j) in enumerate(zip(plan.i, plan.j))
                if want[p] == 0 and by_doubles[p] != 0]
        if criterion == "fluency":
            assert ("M1", "M22") in tied
        for measure in P.automatic_measures(t):
            acc = pl.plan_pairwise_accuracy([P._aligned(t.measures[measure], systems)], human,
                                            (), 0, 13, t.task, "x", (measure,), t.topics)
            row = pa_rows[(pa_rows["criterion"] == criterion) & (pa_rows["measure"] == measure)]
            if len(row):
                assert acc.full[0] == float(row["value"].iloc[0]), (criterion, measure)
                checked += 1
    assert checked >= 8
