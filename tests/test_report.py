"""Issue 12, part 1: report.html, built from a run directory alone.

- a small two-task run (one task judged, one not): every section of both
  tasks, the overview linking to both, figures inline, nothing fetched;
- the same run with tables removed (no statistics, only some stages): a
  note instead of a section, never a failure;
- ``qarla run`` writes report.html with the run, ``qarla report`` rebuilds
  it without Spark, and says one line when given no run;
- the figure functions alone (pure: frames in, SVG out).

The run is conftest's ``report_run`` (the session's shared two-task run,
also read by tests/test_report_browser.py and tests/test_statistics.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qarla_spark.report import REPORT_FILE, ReportError, build_report, task_views, write_report
from qarla_spark.report import figures as fg
from qarla_spark.report import sections
from qarla_spark.report.data import load_run

def section_ids(run_dir):
    ids = ["overview", "problems"]
    for view in task_views(load_run(run_dir)):
        ids.append(view.ident)
        ids += [view.sub(key) for key, *_ in sections.SECTIONS]
    return ids


def edited_copy(run_dir, tmp_path, drop_tables=(), drop_info=(), **config):
    """The run with some tables and run.json keys removed."""
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns(REPORT_FILE))
    for name in drop_tables:
        shutil.rmtree(copy / name, ignore_errors=True)
    info = json.loads((copy / "run.json").read_text())
    for key in drop_info:
        info.pop(key, None)
    info["config"].update(config)
    (copy / "run.json").write_text(json.dumps(info))
    return str(copy)


# ---------------------------------------------------------------- a whole run

# The tests that read report_run are slow: the shared two-task run they read
# (every stage; about a minute) is only made when one of them runs.

@pytest.mark.spark
@pytest.mark.slow
def test_the_run_writes_its_report_with_every_section(report_run):
    page = written(report_run)
    assert page == build_report(report_run)   # rebuilt from the tables alone: the same
    assert ".incomplete-" not in page and "could not be drawn" not in page
    for ident in section_ids(report_run):
        assert f'id="{ident}"' in page, ident
    assert page.count('class="task"') == 2 and 'id="task-chat-two"' in page
    # the overview links to both tasks
    overview = page.split('id="overview"', 1)[1].split("</section>", 1)[0]
    assert '<a href="#task-news">news</a>' in overview
    assert '<a href="#task-chat-two">chat two</a>' in overview
    # the judged task draws every figure; the other says why it has fewer
    news = page.split('id="task-news"', 1)[1].split('id="task-chat-two"', 1)[0]
    names = re.findall(r'<figure data-figure="(\w+)"><svg', news)
    assert set(names) == set(fg.FIGURES), names
    chat = page.split('id="task-chat-two"', 1)[1]
    assert "it has no human judgments" in chat
    assert "<svg" in chat.split('id="task-chat-two-king"', 1)[1]
    # every figure has a caption
    assert page.count("<figure") == page.count("<figcaption>") > 10


def written(run_dir) -> str:
    """The report.html the run wrote."""
    with open(os.path.join(run_dir, REPORT_FILE), encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.spark
@pytest.mark.slow
def test_the_report_is_self_contained(report_run):
    page = written(report_run)
    without_svg_ns = page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    assert not re.search(r"https?://", without_svg_ns)
    assert not re.search(r"<(script|img|link|iframe)[^>]+(src|href)=\"(?!data:)", page)
    assert page.count("<script>") == 1 and page.count("<style>") == 1
    assert 'class="sortable"' in page and "aria-sort" in page
    assert len(page.encode()) < 2_000_000


@pytest.mark.spark
@pytest.mark.slow
def test_the_header_and_the_testbed_card(report_run):
    page = written(report_run)
    info = json.load(open(os.path.join(report_run, "run.json")))
    for value in (info["signature"], str(info["seed"]), info["finished_at"]):
        assert value in page
    card = page.split('id="task-news-testbed"', 1)[1].split("</section>", 1)[0]
    assert "<dt>topics</dt><dd>6</dd>" in card and "<dd>6</dd>" in card
    assert "q: 36 summaries" in card and "all pairs (exact)" in card


@pytest.mark.spark
@pytest.mark.slow
def test_without_statistics_sections_say_so(report_run, tmp_path):
    stats = ("king_ci", "jack_ci", "auc_ci", "correlation_ci", "comparisons")
    copy = edited_copy(report_run, tmp_path, stats, ("statistics",), bootstrap=0)
    page = build_report(copy)
    assert "could not be drawn" not in page
    assert "the statistics stage was off (--bootstrap 0)" in page
    assert "Wilson interval" in page                       # KING intervals without bootstrap
    for ident in section_ids(copy):
        assert f'id="{ident}"' in page


@pytest.mark.spark
@pytest.mark.slow
def test_a_run_of_only_some_stages_gives_notes(report_run, tmp_path):
    later = [t for t in os.listdir(report_run) if os.path.isdir(os.path.join(report_run, t))
             and t not in ("testbed", "problems", "summaries", "judgments", "similarities")]
    copy = edited_copy(report_run, tmp_path, later, ("qarla", "hbr", "statistics"),
                       stages=["testbed", "similarities"])
    page = build_report(copy)
    assert "could not be drawn" not in page
    assert "the qarla stage did not run" in page and "the hbr stage did not run" in page
    assert "<svg" not in page
    for ident in section_ids(copy):
        assert f'id="{ident}"' in page


# ---------------------------------------------------------------- the command

@pytest.mark.spark
@pytest.mark.slow
def test_qarla_report_rebuilds_it_without_spark(report_run, tmp_path):
    target = tmp_path / "r.html"
    code = ("import sys; from qarla_spark.cli import main; "
            f"rc = main(['report', {report_run!r}, '--out', {str(target)!r}]); "
            "assert not [m for m in sys.modules if m.startswith('pyspark')], 'Spark imported'; "
            "sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"report: {target}"
    assert target.read_text(encoding="utf-8") == written(report_run)


@pytest.mark.spark
@pytest.mark.slow
def test_a_report_too_big_for_a_page_is_an_overview_and_a_page_per_task(report_run, tmp_path,
                                                                        monkeypatch, spark):
    """Issue 26: when the tasks' sections weigh more than one page may
    (5 MB), report.html is the overview, linking to report/<task>.html, one
    page per task holding that task's section (drawn on the executors, as
    the run draws them: the same bytes as drawn here)."""
    import qarla_spark.report as report
    copy = edited_copy(report_run, tmp_path)
    one_page = build_report(report_run)
    monkeypatch.setattr(report, "SINGLE_PAGE_BYTES", 1000)
    target = write_report(copy, spark=spark)
    page = open(target, encoding="utf-8").read()
    assert 'class="task"' not in page and 'id="overview"' in page
    assert '<a href="report/news.html#task-news">news</a>' in page
    assert '<a href="report/chat-two.html#task-chat-two">chat two</a>' in page
    pages = sorted(os.listdir(os.path.join(copy, "report")))
    assert pages == ["chat-two.html", "news.html"]
    for name, ident in (("news.html", "task-news"), ("chat-two.html", "task-chat-two")):
        text = open(os.path.join(copy, "report", name), encoding="utf-8").read()
        assert text.count('class="task"') == 1 and f'id="{ident}"' in text
        section = text.split(f'<section id="{ident}"', 1)[1].split("</main>", 1)[0]
        assert f'<section id="{ident}"{section}' in one_page     # the same section
        assert '<a href="../report.html">' in text
    assert not [f for f in os.listdir(copy) if f.startswith(".report-parts")]


@pytest.mark.spark
@pytest.mark.slow
def test_parts_the_executors_did_not_draw_are_drawn_by_the_driver(report_run, tmp_path,
                                                                  monkeypatch, spark):
    """On a cluster, executors that do not see the run's folder draw nothing;
    the driver draws what is left, and the page is the same."""
    import qarla_spark.report as report
    copy = edited_copy(report_run, tmp_path)
    original = report._draw_on_spark
    asked = []

    def half(spark_, run_dir, info, units, parts):
        asked.append(len(units))
        return original(spark_, run_dir, info, units[::2], parts)

    expected = open(write_report(copy, str(tmp_path / "by-the-driver.html")),
                    encoding="utf-8").read()
    monkeypatch.setattr(report, "_draw_on_spark", half)
    target = write_report(copy, spark=spark)
    assert asked and asked[0] > 1
    assert open(target, encoding="utf-8").read() == expected


def test_qarla_report_without_a_run_says_one_line(tmp_path, capsys):
    from qarla_spark.cli import main
    assert main(["report", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is not a directory" in err
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "has no run.json" in err
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(ReportError, match="not valid JSON"):
        write_report(str(tmp_path))


def test_the_report_tells_apart_every_family_of_the_statistics_stage():
    """Each family the statistics stage writes (qarla_spark.names.FAMILIES)
    is one the report places."""
    from qarla_spark.names import FAMILIES
    assert {sections.FAMILY_BEST_SINGLE, sections.FAMILY_REPRESENTATIVE, sections.FAMILY_SUBSET,
            sections.FAMILY_HBR_BEST, sections.FAMILY_HBR_MEDIAN} == set(FAMILIES.values())


# ---------------------------------------------------------------- figures alone

def test_figures_are_lean_inline_svg_with_their_own_ids():
    auc = pd.DataFrame({"criterion": ["q"] * 3 + ["r"] * 3, "measure": ["HBR", "a", "b"] * 2,
                        "auc": [0.61234567, 0.7, 0.4] * 2, "low": [0.5, 0.6, np.nan] * 2,
                        "high": [0.7, 0.8, np.nan] * 2})
    one = fg.to_svg(fg.auc_figure(auc), "one")
    two = fg.to_svg(fg.auc_figure(auc), "two")
    assert one.startswith("<svg ") and "<?xml" not in one and "<metadata" not in one
    assert "<text" in one and "best: a" in one               # text stays text
    assert not re.search(r'\sd="[^"]*\d\.\d{3}', one)         # coordinates rounded
    ids = re.findall(r'id="([^"]+)"', one)
    assert ids and not set(ids) & set(re.findall(r'id="([^"]+)"', two))   # unique per figure
    assert fg.to_svg(fg.auc_figure(auc), "one") == one       # deterministic


def test_the_king_figure_marks_best_single_and_clusters():
    rows = pd.DataFrame({"metric": ["a", "b", "c"], "king": [0.3, 0.1, 0.2],
                         "low": [0.2, 0.05, np.nan], "high": [0.4, 0.15, np.nan],
                         "cluster": [0, 1, 0], "representative": [True, True, False]})
    svg = fg.to_svg(fg.king_metrics_figure(rows, "a,b", 0.35, (0.3, 0.4), "a"), "k")
    assert "a ★" in svg and "best set a,b" in svg
    assert fg.CLUSTER_COLOURS[1] in svg and fg.CLUSTER_COLOURS[0] in svg


# ------------------------------------------------- reading a run one task at a time

def tiny_run(tmp_path):
    """A run directory with two tasks' AUC rows (a table with a task
    column; over all pairs and in one topic) and the input problems (one
    without), written by pandas."""
    auc = pd.DataFrame({"task": ["b", "a", "b", "a", "a", "b"], "criterion": ["c"] * 6,
                        "measure": ["HBR", "HBR", "R-1.a", "R-1.a", "HBR", "HBR"],
                        "scope": ["all"] * 4 + ["t1"] * 2,
                        "auc": [0.75, 0.5, 0.25, 1.0, 0.0, 1.0]})
    problems = pd.DataFrame({"severity": ["warning"], "file": ["x.jsonl"], "line": [3.0],
                             "field": ["text"], "message": ["empty"]})
    for name, frame in (("auc", auc), ("problems", problems)):
        (tmp_path / name).mkdir()
        frame.to_parquet(tmp_path / name / "part-00000.parquet")
    info = {"status": "complete", "testbed": [{"task": "a"}, {"task": "b"}], "config": {}}
    return str(tmp_path), info


def test_the_report_reads_one_task_at_a_time_and_forgets_it(tmp_path):
    """A task's rows are those of the whole table, in its order; forgetting
    a task drops what was made for it (so the report's memory does not grow
    with the run's tasks); a table without a task column is read whole; of
    the AUC table, only the rows over all pairs are read (the only ones
    the report shows)."""
    run_dir, info = tiny_run(tmp_path)
    run = load_run(run_dir, info)
    assert run.tasks() == ["a", "b"]
    whole = pd.read_parquet(f"{run_dir}/auc")
    whole = whole[whole["scope"] == "all"]
    for task in ("a", "b"):
        expected = whole[whole["task"] == task].reset_index(drop=True)
        pd.testing.assert_frame_equal(run.of_task("auc", task), expected)
    assert run.of_task("auc", "c") is None
    assert run.of_task("jack", "a") is None                      # not written by this run
    assert len(run.of_task("problems", "a")) == 1               # no task column: whole
    run.forget("a")
    assert [k for k in run._frames if k[1] == "a"] == []
    assert [k for k in run._frames if k[1] == "b"] != []


def test_the_report_is_written_piece_by_piece_and_never_left_half_written(tmp_path,
                                                                         monkeypatch):
    run_dir, info = tiny_run(tmp_path)
    target = tmp_path / "r.html"
    write_report(run_dir, str(target), info=info)
    assert target.read_text(encoding="utf-8") == build_report(run_dir, info)
    target.unlink()
    import qarla_spark.report as report

    def broken(view, k):
        raise RuntimeError("interrupted while drawing")
    monkeypatch.setattr(report, "task_part", broken)
    with pytest.raises(RuntimeError):
        write_report(run_dir, str(target), info=info)
    assert not [p.name for p in tmp_path.iterdir()
                if p.name.startswith(("r.html", ".report-parts"))]


def test_partition_columns_are_read_as_strings(tmp_path):
    """A table written by task (``task=`` folders) gives its task as a
    plain string column, for one task as for the whole table."""
    run_dir, info = tiny_run(tmp_path)
    frame = pd.DataFrame({"criterion": ["c", "c"], "score": [1.0, 2.0]})
    for task in ("a", "b"):
        (tmp_path / "hbr_correlations" / f"task={task}").mkdir(parents=True)
        frame.to_parquet(tmp_path / "hbr_correlations" / f"task={task}" / "part-0.parquet")
    run = load_run(run_dir, info)
    whole = run.table("hbr_correlations")
    assert sorted(whole["task"]) == ["a", "a", "b", "b"]
    assert not isinstance(whole["task"].dtype, pd.CategoricalDtype)
    assert list(run.of_task("hbr_correlations", "b")["task"]) == ["b", "b"]


@pytest.mark.spark
@pytest.mark.slow
def test_a_run_of_two_tasks_opens_with_the_across_answer(report_run):
    """Issue 28: the across-task section comes first (before the overview),
    names KING's pooled best with the tasks it is best or tied in, and a
    judged task's section has the judges' part with the chance band."""
    page = written(report_run)
    assert 0 < page.index('id="across"') < page.index('id="overview"')
    across = page.split('id="across"', 1)[1].split("</section>", 1)[0]
    assert re.search(r"<b>KING</b>: best <b>[^<]+</b> [0-9.]+ \[[0-9.]+, [0-9.]+\], best or "
                     r"tied in [0-2] of 2 tasks", across), across[:500]
    news = page.split('id="task-news-judges"', 1)[1].split("</section>", 1)[0]
    assert "chance" in news and "KING against the judges" in news
    chat = page.split('id="task-chat-two-judges"', 1)[1].split("</section>", 1)[0]
    assert "it has no human judgments" in chat


# ------------------------------------------------- drawing many tasks (issue 36)

def counted_reads(monkeypatch):
    """Count the run loads and the table reads the report makes."""
    import qarla_spark.report as report
    from qarla_spark.report import data
    loads, reads = [], []
    load, read = report.load_run, data.read_arrow

    def counting_load(*args, **kwargs):
        loads.append(args[0])
        return load(*args, **kwargs)

    def counting_read(folder, *args, **kwargs):
        reads.append(os.path.basename(folder))
        return read(folder, *args, **kwargs)
    monkeypatch.setattr(report, "load_run", counting_load)
    monkeypatch.setattr(data, "read_arrow", counting_read)
    return loads, reads


def test_drawing_many_parts_loads_the_run_and_reads_each_table_once(tmp_path, monkeypatch):
    """draw_parts (what a Spark partition draws) and the driver-only report
    load the run once and read each table once, whatever the number of
    tasks and parts (before issue 36: once per part, 14 per task)."""
    import qarla_spark.report as report
    run_dir, info = tiny_run(tmp_path)
    loads, reads = counted_reads(monkeypatch)
    views = task_views(load_run(run_dir, info))
    loads.clear(), reads.clear()
    units = [(i, v.task, v.ident, k) for i, v in enumerate(views)
             for k in range(-1, len(sections.SECTIONS))]
    parts = tmp_path / "parts"
    parts.mkdir()
    done = report.draw_parts(run_dir, info, units, str(parts))
    assert sorted((i, k) for i, k, *_ in done) == sorted((u[0], u[3]) for u in units)
    assert os.listdir(parts) == [done[0][3]]                 # one file for all the parts
    with open(parts / done[0][3], "rb") as handle:
        text = handle.read()
    assert [d[4] for d in done] == [sum(d[5] for d in done[:j]) for j in range(len(done))]
    assert len(text) == sum(d[5] for d in done)
    assert len(loads) == 1
    assert reads and len(reads) == len(set(reads)), reads
    loads.clear(), reads.clear()
    write_report(run_dir, str(tmp_path / "r.html"), info=info)
    assert len(loads) == 1 and len(reads) == len(set(reads)), (loads, reads)


def test_a_group_of_tasks_draws_what_the_whole_run_draws(tmp_path):
    """draw_parts reads its units' tasks' rows only (load_run(tasks=...)):
    each task drawn alone is byte for byte what the run loaded whole draws."""
    import qarla_spark.report as report
    run_dir, info = tiny_run(tmp_path)
    run = load_run(run_dir, info)
    views = task_views(run)
    assert len(views) > 1
    units = [(i, v.task, v.ident, k) for i, v in enumerate(views)
             for k in range(-1, len(sections.SECTIONS))]
    (tmp_path / "whole").mkdir(), (tmp_path / "alone").mkdir()

    def texts(folder, drawn):
        out = {}
        for i, k, _, name, offset, size in drawn:
            with open(tmp_path / folder / name, "rb") as handle:
                handle.seek(offset)
                out[(i, k)] = handle.read(size)
        return out
    whole = texts("whole", report.draw_units(run, units, str(tmp_path / "whole")))
    alone = {}
    for view in views:
        mine = [u for u in units if u[1] == view.task]
        alone.update(texts("alone", report.draw_parts(run_dir, info, mine,
                                                      str(tmp_path / "alone"))))
    assert alone == whole
    assert load_run(run_dir, info, tasks=[views[0].task]).columns("king", views[1].task) is None


def test_a_task_s_rows_are_dropped_once_its_parts_are_drawn(tmp_path):
    import qarla_spark.report as report
    run_dir, info = tiny_run(tmp_path)
    run = load_run(run_dir, info)
    views = task_views(run)
    units = [(i, v.task, v.ident, k) for i, v in enumerate(views) for k in (-1, 0, 8)]
    report.draw_units(run, units, str(tmp_path))
    assert run._arrow["auc"] is not None                # the tables kept,
    assert [key for key in run._frames if key[1] is not None] == []    # the tasks' rows not


def test_units_are_spread_in_runs_of_consecutive_units():
    from qarla_spark.report import chunks
    units = list(range(30))
    for n in (1, 2, 4, 7, 30, 100):
        found = chunks(units, n)
        assert [u for c in found for u in c] == units          # in order, each once
        assert len(found) == min(n, 30)
        assert max(map(len, found)) - min(map(len, found)) <= 1
    assert chunks([], 4) == []


@pytest.mark.spark
def test_drawn_on_spark_in_a_few_groups_the_page_is_the_same(tmp_path, spark, monkeypatch):
    """The executors draw the units in one group per core (each group loads
    the run and reads its tables once: issue 36, two per core read them
    twice), each group into one file; the page is the one the driver alone
    writes."""
    import qarla_spark.report as report
    run_dir, info = tiny_run(tmp_path)
    alone = open(write_report(run_dir, str(tmp_path / "alone.html"), info=info),
                 encoding="utf-8").read()
    asked = []
    original = report.chunks

    def spy(units, n):
        found = original(units, n)
        asked.append((len(units), len(found)))
        return found
    monkeypatch.setattr(report, "chunks", spy)
    monkeypatch.setattr(report, "draw_units", None)         # the driver draws nothing
    target = write_report(run_dir, str(tmp_path / "spark.html"), info=info, spark=spark)
    assert open(target, encoding="utf-8").read() == alone
    assert asked and 1 < asked[0][1] < asked[0][0]            # fewer groups than units
    assert asked[0][1] == spark.sparkContext.defaultParallelism     # one per core


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(),
                 # numpy's str_ drops a string's trailing NULs: another string
                 st.text(max_size=12).filter(lambda s: not s.endswith("\x00")),
                 st.integers(-10 ** 6, 10 ** 6)))
def test_a_cell_by_its_fast_path_is_the_cell_of_the_general_one(value):
    """html.cell makes floats and strings first (issue 36): the same cell as
    the general path (numpy scalars, made Python values) and the same escape
    as html.escape."""
    import html as std
    from qarla_spark.report import html as h
    fast = h.cell(value, 2)
    general = h.cell(np.float64(value) if isinstance(value, float) else
                     np.int64(value) if isinstance(value, int) else np.str_(value), 2)
    assert (fast.shown, fast.sort, fast.cls) == (general.shown, general.sort, general.cls)
    if isinstance(value, str):
        assert h.esc(value) == std.escape(value, quote=True) == fast.shown


# ------------------------------------------- a task's rows and tables, fast (issue 36)

def test_a_task_s_columns_are_the_values_of_its_pandas_rows(tmp_path):
    """Run.columns (what the sections read) holds, column by column, the
    values and types pandas holds for the task's rows, in the table's
    order, though the table is held grouped by task; selections take
    their rows in order; None is equal to nothing, as in pandas."""
    run_dir, info = tiny_run(tmp_path)
    run = load_run(run_dir, info)
    for task in ("a", "b"):
        frame, cols = run.of_task("auc", task), run.columns("auc", task)
        assert len(cols) == len(frame) and cols.names == tuple(frame.columns)
        for name in frame.columns:
            assert cols[name].dtype == frame[name].dtype
            assert cols[name].tolist() == frame[name].tolist()
        assert cols.take([1, 0]).values("auc") == frame["auc"].tolist()[::-1]
        picked = cols.where(cols["measure"] == "HBR")
        assert picked.values("auc") == frame[frame["measure"] == "HBR"]["auc"].tolist()
        nothing = frame["measure"] == None                      # noqa: E711 (pandas: none)
        assert len(cols.equal("measure", None)) == 0 == nothing.sum()
    assert run.columns("auc", "c") is None and run.columns("jack", "a") is None
    # loaded for some tasks (a group), a dictionary column is decoded once for
    # the table, each task given a copy of its part (loaded whole: per task)
    assert run._decoded == {}
    group = load_run(run_dir, info, tasks=["a", "b"])
    for task in ("a", "b"):
        assert group.columns("auc", task)["measure"].tolist() == \
            run.columns("auc", task)["measure"].tolist()
    assert ("auc", "measure") in group._decoded
    group.columns("auc", "a")["measure"][:] = "changed"
    group.forget("a")
    assert "changed" not in group.columns("auc", "a").values("measure")
    assert len(run.columns("problems", "a")) == 1                # no task column: whole
    assert run.columns("problems", "a") is run.columns("problems", "b")
    run.forget("a")
    assert [k for k in run._frames if k[1] == "a"] == []


def test_a_table_is_grouped_by_task_once_each_task_a_slice_of_it():
    """by_task: a stable sort by task (the table itself when already
    grouped), each task's span its rows in the table's order."""
    import pyarrow as pa
    from qarla_spark.report.data import by_task
    table = pa.table({"task": ["b", "a", "b", None, "a", "c"], "x": [0, 1, 2, 3, 4, 5]})
    grouped, spans = by_task(table)
    for task in ("a", "b", "c"):
        start, stop = spans[task]
        assert grouped.slice(start, stop - start)["x"].to_pylist() == \
            [x for t, x in zip(table["task"].to_pylist(), table["x"].to_pylist()) if t == task]
    assert set(spans) == {"a", "b", "c", None}
    ready = pa.table({"task": ["b", "b", "a"], "x": [0, 1, 2]})
    assert by_task(ready)[0] is ready and by_task(ready)[1] == {"b": (0, 2), "a": (2, 3)}
    assert by_task(ready.slice(0, 0))[1] == {}


optional_names = st.lists(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "c", "é"])),
                                   max_size=6), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(optional_names)
def test_a_dictionary_column_reads_as_its_plain_strings(chunks):
    """Columns read dictionary-encoded (data.DICTIONARY) give the report
    what the plain strings give: to_numpy the same object array (missing
    values None; Arrow's own to_numpy of a dictionary loses them), by_task
    the same rows of each task, decoded the plain table."""
    import pyarrow as pa
    from qarla_spark.report.data import by_task, decoded, to_numpy
    plain = pa.chunked_array([pa.array(c, type=pa.string()) for c in chunks])
    coded = pa.chunked_array([pa.array(c, type=pa.string()).dictionary_encode() for c in chunks])
    for lo, hi in ((0, len(plain)), (1, len(plain) - 1), (len(plain) // 2, len(plain))):
        lo, hi = min(lo, len(plain)), max(min(hi, len(plain)), 0)
        want = plain.slice(lo, max(hi - lo, 0)).to_numpy()
        found = to_numpy(coded.slice(lo, max(hi - lo, 0)))
        assert found.dtype == want.dtype and found.tolist() == want.tolist()
    x = pa.chunked_array([pa.array(list(range(len(plain))), type=pa.int64())])
    a, spans_a = by_task(pa.table({"task": plain.combine_chunks(), "x": x}))
    b, spans_b = by_task(pa.table({"task": coded, "x": x}))
    assert set(spans_a) == set(spans_b)
    for task in spans_a:
        (p, q), (r, t) = spans_a[task], spans_b[task]
        assert a["x"].slice(p, q - p).to_pylist() == b["x"].slice(r, t - r).to_pylist()
    assert decoded(pa.table({"task": coded})).equals(pa.table({"task": plain}))


def test_only_string_columns_are_read_dictionary_encoded(tmp_path):
    """read_arrow: the DICTIONARY names that hold strings come dictionary-
    encoded, any other type (a ``score`` of doubles, an integer partition
    ``level``) and the other columns as written."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from qarla_spark.report.data import read_arrow
    folder = tmp_path / "t" / "level=3"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"task": ["a", None], "score": [0.5, 1.5],
                             "metric_set": ["x", "y"]}), folder / "part-0.parquet")
    table = read_arrow(str(tmp_path / "t"))
    kinds = {f.name: f.type for f in table.schema}
    assert pa.types.is_dictionary(kinds["task"])
    assert kinds["score"] == pa.float64() and kinds["metric_set"] == pa.string()
    assert not pa.types.is_dictionary(kinds["level"])
    assert table["score"].to_pylist() == [0.5, 1.5]


def test_a_group_of_tasks_holds_its_own_tasks_rows_only():
    """by_task(only=...): the rows of those tasks, each task's in the
    table's order, as the whole table's spans give them; a run loaded for
    some tasks reads the same rows of them."""
    import pyarrow as pa
    from qarla_spark.report.data import by_task
    table = pa.table({"task": ["b", "a", "b", None, "a", "c", "a"], "x": [0, 1, 2, 3, 4, 5, 6]})
    whole, spans = by_task(table)
    for only in ({"a"}, {"a", "c"}, {"b", None}, {"zz"}, {"a", "b", "c", None}):
        mine, mine_spans = by_task(table, frozenset(only))
        assert set(mine_spans) == only & set(spans)
        assert mine.num_rows == sum(b - a for a, b in mine_spans.values())
        for task, (start, stop) in mine_spans.items():
            a, b = spans[task]
            assert mine.slice(start, stop - start).to_pylist() == \
                whole.slice(a, b - a).to_pylist()


keys = st.lists(st.tuples(st.sampled_from([0.5, 0.25, -0.0, 0.0, float("nan"), 1.0]),
                          st.sampled_from(["x", "y", "a", None]), st.integers(0, 2)),
                max_size=80)


@settings(max_examples=150, deadline=None)
@given(keys, st.lists(st.booleans(), min_size=3, max_size=3),
       st.sampled_from([["f"], ["s"], ["i"], ["f", "s"], ["s", "i", "f"], ["i", "f"]]),
       st.sampled_from(["quicksort", "stable"]))
def test_rows_are_sorted_in_pandas_order(rows, ascending, by, kind):
    """sort_order gives the rows in the order of pandas' sort_values (one
    key: argsort of the kind, missing last; several: stable), ties and NaN
    and None included: the report's tables keep their order."""
    from qarla_spark.report.data import sort_order
    frame = pd.DataFrame(rows, columns=["f", "s", "i"]).astype({"s": object})
    flags = ascending[:len(by)]
    expected = frame.sort_values(by, ascending=flags if len(by) > 1 else flags[0],
                                 kind=kind).index.tolist()
    found = sort_order([frame[b].to_numpy() for b in by], flags if len(by) > 1 else flags[0],
                       kind)
    assert found.tolist() == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("xy")), max_size=8),
       st.lists(st.tuples(st.sampled_from("abd"), st.sampled_from("xy"), st.booleans(),
                          st.integers(0, 5)), max_size=8))
def test_a_left_join_is_pandas_left_merge(left, right):
    """left_join and taken give the rows, order and missing values (NaN;
    integers made floats, booleans objects) of pandas' left merge."""
    from qarla_spark.report.data import left_join, taken
    lf = pd.DataFrame(left, columns=["k1", "k2"])
    rf = pd.DataFrame(right, columns=["k1", "k2", "flag", "n"]).astype({"n": "int32"})
    merged = lf.merge(rf, on=["k1", "k2"], how="left")
    lefts, rights = left_join(list(map(tuple, lf.to_numpy().tolist())),
                              list(map(tuple, rf[["k1", "k2"]].to_numpy().tolist())))
    assert lf["k1"].to_numpy()[lefts].tolist() == merged["k1"].tolist()
    for name in ("flag", "n"):
        found = taken(rf[name].to_numpy(), rights)
        assert found.dtype == merged[name].dtype
        assert [None if pd.isna(v) else v for v in found.tolist()] == \
            [None if pd.isna(v) else v for v in merged[name].tolist()]


cells = st.one_of(st.floats(), st.text(max_size=6), st.integers(-10 ** 6, 10 ** 6),
                  st.booleans(), st.none(), st.just("n/a"), st.just(np.float64(0.25)),
                  st.just(np.int32(7)))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 4), st.integers(0, 6), st.data())
def test_a_table_by_columns_is_the_table_cell_by_cell(width, height, data):
    """html.table (rows) and html.table_of (columns, some made already)
    write the bytes of the cell-by-cell table (html.cell, html.td), the
    numeric columns' headers included."""
    from qarla_spark.report import html as h
    rows = [[data.draw(cells) for _ in range(width)] for _ in range(height)]
    classes = [data.draw(st.sampled_from(["", "hl"])) for _ in range(height)]
    made = [[h.cell(v, 2) for v in r] for r in rows]
    numeric = [bool(made) and all(r[i].cls == "n" or r[i].shown == "n/a" for r in made)
               for i in range(width)]
    head = "".join(f'<th{" class=n" if numeric[i] else ""} scope="col">{i}</th>'
                   for i in range(width))
    body = "".join(f'<tr{f" class={c}" if c else ""}>{"".join(h.td(x) for x in r)}</tr>'
                   for r, c in zip(made, classes))
    expected = (f'<div class="scroll"><table id="t" class="sortable"><thead><tr>{head}</tr>'
                f"</thead><tbody>{body}</tbody></table></div>")
    headers = [str(i) for i in range(width)]
    assert h.table(headers, rows, classes, 2, table_id="t") == expected
    columns = [[r[i] for r in rows] for i in range(width)]
    if width:
        columns[0] = h.column(columns[0], 2)
    if width and height:                # columns without rows have no height
        assert h.table_of(headers, columns, classes, 2, table_id="t") == expected


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(), st.none()), st.one_of(st.floats(), st.none()),
       st.one_of(st.floats(), st.none(), st.integers(-5, 5)), st.sampled_from([2, 3]))
def test_interval_and_p_value_cells_are_those_of_the_general_path(value, low, high, digits):
    """The judges' interval cells (sections.ci_td) and the p-value columns
    (sections.p_column) are the <td> of _ci_cell and p_cell."""
    from qarla_spark.report import html as h
    assert sections.ci_td(value, low, high, digits) == \
        h.td(sections._ci_cell(value, low, high, digits))
    if value is not None:
        assert sections.p_column([value]).tds == [h.td(sections.p_cell(value))]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["m1", "m2", "m3", None]),
                          st.sampled_from(["QUEEN", "plain", None]),
                          st.sampled_from([0.5, 0.25, float("nan")])), max_size=12))
def test_firsts_are_the_cells_of_pandas_pivot_table(rows):
    """sections._firsts (the AUC and ORANGE tables' cells) holds the cells
    pandas' pivot_table(aggfunc="first") holds: the first value that is
    not NaN of each pair of keys, none for a missing key."""
    from qarla_spark.report.data import Columns
    frame = pd.DataFrame(rows, columns=["i", "c", "v"]).astype({"i": object, "c": object})
    found = sections._firsts(Columns.of({k: frame[k].to_numpy() for k in frame}), "i", "c", "v")
    wide = frame.pivot_table(index="i", columns="c", values="v", aggfunc="first") \
        if len(frame) else pd.DataFrame()
    expected = {(i, c): wide.loc[i, c] for i in wide.index for c in wide.columns
                if not pd.isna(wide.loc[i, c])}
    assert found == expected
    assert sorted({c for _, c in found}) == sorted(wide.columns)
    assert sorted({i for i, _ in found}) == sorted(wide.index)


def test_a_task_s_sections_make_no_pandas_frame_of_its_rows(tmp_path, monkeypatch):
    """The sections and the overview read a task's rows as columns
    (Run.columns), not as pandas frames (~0.5 ms each before any
    operation: issue 36)."""
    from qarla_spark.report import data
    run_dir, info = tiny_run(tmp_path)

    def refused(self, name, task):
        raise AssertionError(f"a pandas frame of {name} for {task}")
    monkeypatch.setattr(data.Run, "of_task", refused)
    page = build_report(run_dir, info)
    assert "could not be drawn" not in page and page.count('data-figure="auc"') == 2


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.lists(st.sampled_from([0.0, -0.0, float("nan"), 0.5, 1e-4, float("inf")])),
                 st.lists(st.sampled_from(["n/a", "a<b", "x", ""])),
                 st.lists(st.floats(allow_nan=True))))
def test_a_column_of_repeated_values_is_made_as_cell_by_cell(values):
    """A column of floats only or strings only is made once per distinct
    value (html.column, sections.p_column): the cells are still each
    value's (0.0 and -0.0, NaN, n/a)."""
    from qarla_spark.report import html as h
    made = h.column(values, 3)
    cells = [h.cell(v, 3) for v in values]
    assert made.tds == [h.td(c) for c in cells]
    assert made.numeric == all(c.cls == "n" or c.shown == "n/a" for c in cells)
    if all(type(v) is float for v in values):
        assert sections.p_column(values).tds == [h.td(sections.p_cell(v)) for v in values]


#: values whose last decimal is a tie or near one (the integer way must
#: hand them to %), non-finite ones, signed zeros, huge and tiny ones
_AWKWARD = [0.0005, -0.0005, 0.0015, 2.5, -2.5, 0.125, 1.0005, 0.0, -0.0, -1e-9, 1e-9,
            float("nan"), float("inf"), -float("inf"), 1e12, -1e300, 5e-324, 130.0715,
            999999.9995, 123456.0005]


@pytest.mark.parametrize("digits", [0, 1, 2, 3, 4])
def test_fixed_is_percent_f_of_each_value(digits):
    """html.fixed (the tables' numbers, all at once) writes each value as
    "%.<digits>f" does: every thousandth of [-100, 100], random values,
    ties, non-finite values, values beyond its table, small negatives as
    -0.000."""
    from qarla_spark.report import html as h
    rng = np.random.default_rng(digits)
    for values in (np.arange(-100_000, 100_000) / 1000.0, rng.uniform(-1, 1, 20_000),
                   rng.normal(0, 1e6, 5_000), np.array(_AWKWARD * 2),
                   np.array(_AWKWARD[:5])):
        assert h.fixed(values, digits) == [f"%.{digits}f" % v for v in values.tolist()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(width=64), max_size=40), st.sampled_from([2, 3]))
def test_fixed_fuzzed(values, digits):
    from qarla_spark.report import html as h
    assert h.fixed(np.array(values, dtype=float), digits) == \
        [f"%.{digits}f" % v for v in values]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.floats(), st.sampled_from([0.25, -0.0, 1e-4])),
                          st.floats(), st.floats()), min_size=0, max_size=30),
       st.sampled_from([2, 3]))
def test_interval_cells_all_at_once_are_each_one_s(rows, digits):
    """sections.ci_tds (the judges' table, a column at once) is ci_td of
    each row; arrays of another type than floats go row by row."""
    values, lows, highs = (np.array([r[i] for r in rows], dtype=float) for i in range(3))
    expected = [sections.ci_td(v, lo, hi, digits) for v, lo, hi in rows]
    assert sections.ci_tds(values, lows, highs, digits) == expected
    objects = np.array([None, *values.tolist()], dtype=object)
    assert sections.ci_tds(objects, np.array([None, *lows.tolist()], dtype=object),
                           np.array([None, *highs.tolist()], dtype=object), digits) == \
        [sections.ci_td(None, None, None, digits), *expected]


def test_a_long_column_of_floats_is_made_as_cell_by_cell():
    from qarla_spark.report import html as h
    rng = np.random.default_rng(5)
    values = [*rng.uniform(-2, 2, 300).tolist(), *_AWKWARD, 0.0, -0.0, float("nan")]
    made = h.column(values, 3)
    assert made.tds == [h.td(h.cell(v, 3)) for v in values]
