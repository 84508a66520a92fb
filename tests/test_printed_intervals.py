"""Issue 39, part 6: every interval the run prints is named — on its line or
in its section's heading — so that a reader never sees two intervals for
one number without their names (the best set's KING: the bootstrap
percentile interval printed, king/'s Wilson interval named beside it).
docs/DECISIONS.md, "Naming each printed interval (issue 39, part 6)"."""

from __future__ import annotations

import re
from types import SimpleNamespace

from qarla_spark import summary
from qarla_spark.measures.group_statistics import Comparison, Interval
from qarla_spark.measures.metric_sets import MetricSet
from qarla_spark.names import CHANCE, FAMILIES, HBR, QUEEN, queen_of
from qarla_spark.stages.hbr import AucSummary, HbrResult, Sample
from qarla_spark.stages.qarla import TaskQarla

BRACKET = re.compile(r"\[-?\d+\.\d+, -?\d+\.\d+\]")
NAMES = ("percentile", "recentred", "band", "Wilson")


def _stats():
    iv = Interval(0.3, 0.2, 0.4)
    comparison = Comparison("a", "b", 0.3, 0.2, 0.1, -0.1, 0.2, 0.4, 0.4)
    return SimpleNamespace(
        king={("t", "a,b"): iv, ("t", "a"): iv}, jack={("t", "a,b"): iv},
        auc={("t", "c", HBR): iv, ("t", "c", "a"): iv, ("t", "c", "b"): iv},
        correlation={("t", QUEEN, "c", "pearson"): iv, ("t", HBR, "c", "pearson"): iv},
        comparisons={("t", FAMILIES["best_single"], ""): [comparison],
                     ("t", FAMILIES["hbr_best"], "c"): [comparison]},
        subsets_kept={}, king_chance={"t": iv},
        pairwise_accuracy={("t", "c", queen_of("a,b")): iv, ("t", "c", "a"): iv,
                           ("t", "c", HBR): iv, ("t", "c", CHANCE): iv},
        king_vs_judges={("t", "c"): iv},
        across={("king", ""): {"best": "a", "value": iv, "best_or_tied": 2, "n_tasks": 2,
                               "top": ["a"], "most_tied": (2, "a")}},
        n_resamples=1000, seed=13)


def _texts():
    stats = _stats()
    t = TaskQarla("t", MetricSet(["a", "b"]), 0.3, MetricSet(["a"]), 0.2, ["a", "b"],
                  [["a"], ["b"]], jack=0.4, agreement={"c": (0.3, 0.2, 0.1)})
    hbr = HbrResult({}, ("a", "b", HBR), {"t": Sample(10, 20, False)},
                    auc={"t": {"c": AucSummary(0.6, ("a", 0.7), ("b", 0.5), ("a", 0.6))}})
    return [summary.describe_qarla(t, stats), summary.describe_hbr(hbr, 13, stats),
            summary.describe_judges(stats, {"t": ("a,b", "a")}),
            summary.describe_across(stats), summary.describe_statistics(stats)]


def test_every_printed_interval_is_named_on_its_line_or_in_its_heading():
    texts = _texts()
    seen = 0
    for text in texts:
        lines = text.split("\n")
        heading = lines[0]
        for line in lines:
            if BRACKET.search(line):
                seen += 1
                assert any(n in line or n in heading for n in NAMES), line
    assert seen >= 10


def test_king_names_the_interval_shown_and_kings_wilson():
    qarla = _texts()[0].split("\n")
    best = next(line for line in qarla if "best metric set" in line)
    assert "bootstrap percentile, king_ci/; king/ holds Wilson's" in best
    footer = _texts()[-1]
    assert "king/'s ci_low/ci_high are Wilson's" in footer
    assert footer.startswith("intervals: 95%, bootstrap over topics (1,000 Poisson replicates, "
                             "seed 13)")


def test_without_statistics_nothing_is_named():
    t = TaskQarla("t", MetricSet(["a", "b"]), 0.3, MetricSet(["a"]), 0.2, ["a", "b"],
                  [["a"], ["b"]], jack=0.4)
    text = summary.describe_qarla(t)
    assert "percentile" not in text and not BRACKET.search(text)


def test_the_judges_text_of_many_tasks_is_each_pair_s_measures():
    """describe_judges groups the printed pairwise accuracies by (task,
    criterion) in one pass (issue 36: a pass over all of them per pair was
    quadratic in the tasks): each line holds its own pair's measures only,
    the pairs in order, whatever the order of the entries."""
    pa, kvj = {}, {}
    tasks, criteria = [f"t{k:02d}" for k in range(12)], ["coh", "con", "flu"]
    for i, (m, t, c) in enumerate((m, t, c) for m in (queen_of("a,b"), "a", HBR, CHANCE)
                                  for c in reversed(criteria) for t in reversed(tasks)):
        pa[(t, c, m)] = Interval(i / 1000, i / 1000 - 0.1, i / 1000 + 0.1)
    for t in tasks:
        kvj[(t, "con")] = Interval(0.5, 0.4, 0.6)
    stats = SimpleNamespace(pairwise_accuracy=pa, king_vs_judges=kvj)
    best = {t: ("a,b", "a") for t in tasks}
    lines = summary.describe_judges(stats, best).splitlines()[1:]
    assert len(lines) == len(tasks) * len(criteria)
    pairs = sorted((t, c) for t in tasks for c in criteria)
    for line, (t, c) in zip(lines, pairs):
        assert line.startswith(f"  task {t}, {c}: ")
        expected = [f"{summary._ci(v.value, v)}" for (t_, c_, _), v in pa.items()
                    if (t_, c_) == (t, c)]
        shown = re.findall(r"(\d\.\d{3} \[-?\d\.\d{3}, \d\.\d{3}\])", line)
        assert sorted(shown) == sorted(expected)
        assert ("KING vs judges" in line) == (c == "con")
