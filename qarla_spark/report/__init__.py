"""``report.html``: one self-contained, offline page of a run's results.

Built from the run directory alone — ``run.json`` and the Parquet tables,
read with pandas (no Spark) — so ``qarla report RUN_DIR`` rebuilds it at
any time; ``qarla run`` writes it into the staging folder before the
atomic rename (:func:`write_report`). Figures are static SVG drawn by
the report's own plotting layer (:mod:`qarla_spark.report.figures` on
:mod:`qarla_spark.report.svg`); styles and the small table-sorting script
are inline; nothing is fetched when it is viewed.

Layout: a header (signature, seed, date, command, elapsed time), the
across-task answer (runs of two or more tasks), an overview with one row per
task linking to its section, the input problems,
then per task the sections of :data:`qarla_spark.report.sections.SECTIONS`.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

from qarla_spark.report import html as h
from qarla_spark.names import HBR
from qarla_spark.paths import local_path
from qarla_spark.report.data import ReportError, Run, load_run
from qarla_spark.report.sections import (FAMILY_HBR_BEST, SECTIONS, TASK_TAIL, TaskView,
                                         across_section, auc_rows, best_pearson, task_head,
                                         task_part,
                                         jack_intervals, king_intervals, king_of,
                                         problems_block, task_section)

__all__ = ["REPORT_FILE", "ReportError", "build_report", "report_pieces", "write_report",
           "write_figures", "write_staged_report"]

REPORT_FILE = "report.html"


def task_views(run: Run) -> List[TaskView]:
    """The run's tasks with stable, unique section ids (``task-<name>``)."""
    views, used = [], set()
    for task in run.tasks():
        ident = f"task-{h.slug(task)}"
        while ident in used:
            ident += "-"
        used.add(ident)
        views.append(TaskView(run, task, ident))
    return views


def header(run: Run, shown_path: Optional[str] = None) -> str:
    info = run.info
    command = info.get("command") or []
    config = info.get("config") or {}
    items = [("signature", h.esc(info.get("signature"))), ("seed", h.esc(info.get("seed"))),
             ("date", h.esc(f"{info.get('started_at', '?')} → {info.get('finished_at', '?')}")),
             ("elapsed", h.esc(f"{h.num(info.get('elapsed_s'), 1)} s")),
             ("command", f"<code>{h.esc(' '.join(map(str, command)))}</code>"),
             ("stages", h.esc(", ".join(config.get("stages") or []))),
             ("status", h.esc(info.get("status", "?")))]
    languages = (info.get("similarities") or {}).get("languages") or {}
    if any(d.get("language") != "en" for d in languages.values()):
        # issue 38: each task's tokenizer, stop list and stemmer
        items.append(("languages", "<br>".join(
            h.esc(f"{task}: {d.get('language')} — {d.get('tokenizer')}; stop list "
                  f"{d.get('stop_list') or 'none'}; stemmer {d.get('stemmer') or 'none'}")
            for task, d in sorted(languages.items()))))
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
    where = h.esc(shown_path or run.path)
    return (f"<h1>qarla_spark report</h1><p>Run directory <code>{where}</code>. "
            "Click a table's header to sort it.</p>"
            f'<dl class="meta">{body}</dl>')


def _criteria(views: List[TaskView]) -> List[str]:
    found = set()
    for v in views:
        found |= set(best_pearson(v))
        auc = auc_rows(v)
        if auc is not None:
            found |= set(auc["criterion"])
        v.run.forget(v.task)
    return sorted(found)


def hbr_minus_best(view: TaskView) -> Dict[str, h.Cell]:
    """Per criterion: AUC of HBR − AUC of the best single measure (``*``:
    significant at 5%)."""
    out: Dict[str, h.Cell] = {}
    comp = view.cols("comparisons")
    if comp is not None:
        hit = comp.equal("family", FAMILY_HBR_BEST)
        for criterion, difference, significant in hit.rows("criterion", "difference",
                                                           "significant"):
            star = "*" if significant else ""
            out[criterion] = h.Cell(h.esc(f"{difference:+.3f}{star}"), repr(difference), "n")
    auc = auc_rows(view)
    if auc is not None:
        # per criterion (sorted; none missing), HBR's first AUC and the others' highest
        parts: Dict[str, Tuple[list, list]] = {}
        for criterion, measure, value in auc.rows("criterion", "measure", "auc"):
            if criterion is None or criterion != criterion:
                continue
            hbr, singles = parts.setdefault(criterion, ([], []))
            (hbr if measure == HBR else singles).append(value)
        for criterion in sorted(parts):
            hbr, singles = parts[criterion]
            if criterion not in out and hbr and singles:
                defined = [v for v in singles if v == v]
                d = float(hbr[0] - (max(defined) if defined else float("nan")))
                out[criterion] = h.Cell(h.esc(f"{d:+.3f}"), repr(d), "n")
    return out


def overview_values(view: TaskView) -> Dict[str, Any]:
    """A task's overview row, before the run's criteria are known: its cells
    and, per criterion, its Pearson and HBR − best cells (picklable: a
    task's row may be drawn on an executor)."""
    jack = view.cols("jack")
    jack_value = low = high = None
    if jack is not None and view.best_set is not None:
        hit = jack.equal("metric_set", view.best_set)
        jack_value = float(hit["jack"][0]) if len(hit) else None
        low, high = jack_intervals(view).get(view.best_set, (None, None))
    intervals, _ = king_intervals(view)
    king = king_of(view, view.best_set)
    k_low, k_high = intervals.get(view.best_set, (None, None))
    pearson = best_pearson(view)
    diffs = hbr_minus_best(view)
    link = h.Cell(f'<a href="#{h.esc(view.ident)}">{h.esc(view.task)}</a>', view.task)

    def ci_cell(value, lo, hi, digits=3):
        if value is None:
            return None
        return h.Cell(h.esc(h.interval(value, lo, hi, digits)), repr(float(value)), "n")
    auc = auc_rows(view)
    criteria = set(pearson) | (set(auc["criterion"]) if auc is not None else set())
    return {"cells": [link, ci_cell(jack_value, low, high), h.Cell(h.esc(view.best_set or "")),
                      ci_cell(king, k_low, k_high)],
            "pearson": {c: ci_cell(*pearson[c], 2) for c in pearson}, "diffs": diffs,
            "criteria": sorted(criteria)}


def overview_row(view: TaskView, criteria: List[str]) -> List[Any]:
    return overview_cells(overview_values(view), criteria)


def overview_cells(values: Dict[str, Any], criteria: List[str]) -> List[Any]:
    """A task's overview row from :func:`overview_values`."""
    return [*values["cells"], *[values["pearson"].get(c) for c in criteria],
            *[values["diffs"].get(c) for c in criteria]]


def overview(views: List[TaskView]) -> str:
    if not views:
        return h.section("overview", "Overview", h.note("This run has no task."), 2)
    values = []
    for v in views:
        values.append(overview_values(v))
        v.run.forget(v.task)
    return overview_of(values)


def overview_of(values: List[Dict[str, Any]], link_to=None) -> str:
    """The overview section from the tasks' :func:`overview_values`, in
    order (``link_to(i)``: where task i's link points, default its section
    on this page)."""
    if not values:
        return h.section("overview", "Overview", h.note("This run has no task."), 2)
    criteria = sorted({c for v in values for c in v["criteria"]})
    headers = ["task", "JACK", "best set", "KING", *[f"Pearson {c}" for c in criteria],
               *[f"HBR − best {c}" for c in criteria]]
    rows = []
    for i, v in enumerate(values):
        row = overview_cells(v, criteria)
        if link_to is not None:
            link = row[0]
            row[0] = h.Cell(link.shown.replace('href="#', f'href="{h.esc(link_to(i))}#', 1),
                            link.sort, link.cls)
        rows.append(row)
    tab = h.table(headers, rows, table_id="overview-table")
    text = ("<p>One row per task: JACK (how reliable the testbed is), the best metric set "
            "and its KING (how well it recognises human references), with 95% intervals; "
            "the system-level Pearson correlation of the best set's scores with each human "
            "criterion; the AUC of HBR minus that of the best single measure per criterion "
            "(* significant at 5%). Click a task to go to its section.</p>")
    return h.section("overview", "Overview", text + tab, 2)


#: the most the sections of a run's tasks may weigh on one page: beyond it
#: (many tasks), report.html is the overview and each task has a page of its
#: own, report/<task>.html
SINGLE_PAGE_BYTES = 5 * 2 ** 20
#: the folder of the tasks' pages, beside report.html
PAGES_DIR = "report"


def report_pieces(run_dir: str, info: Optional[Dict[str, Any]] = None,
                  shown_path: Optional[str] = None) -> Iterator[str]:
    """The HTML of a one-page report of the run in ``run_dir``, in pieces:
    the page's start, the overview, the input problems, each task's section,
    the page's end. A task's rows are read for its overview row and its
    section, and dropped after each (``info`` replaces its ``run.json``
    when given; ``shown_path``: the directory the header names). A run
    that cannot be read fails here, before any piece."""
    return _pieces(load_run(run_dir, info), shown_path)


def _pieces(run: Run, shown_path: Optional[str]) -> Iterator[str]:
    views = task_views(run)
    yield h.page_start(f"qarla_spark report: {', '.join(v.task for v in views)}",
                       header(run, shown_path))
    yield across_section(run)
    yield overview(views)
    yield problems_block(run)
    for view in views:
        yield task_section(view)
        run.forget(view.task)
    yield h.page_end()


def build_report(run_dir: str, info: Optional[Dict[str, Any]] = None,
                 shown_path: Optional[str] = None) -> str:
    """The HTML of a one-page report (:func:`report_pieces` joined)."""
    return "".join(report_pieces(run_dir, info, shown_path))


#: a unit drawn: (task position, part, the task's :func:`overview_values`
#: for part -1, the file under the parts folder that holds its HTML, where
#: in it the HTML starts, its bytes)
Drawn = Tuple[int, int, Optional[Dict[str, Any]], str, int, int]


def draw_parts(run_dir: str, info: Optional[Dict[str, Any]],
               units: List[Tuple[int, str, str, int]], parts: str) -> List[Drawn]:
    """Draw parts of a run's tasks' sections (``units``: (task position,
    name, section id, part: -1 for the task's overview row and the head of
    its section, else an index of :data:`~qarla_spark.report.sections.
    SECTIONS`)), one after the other into one new file of the folder
    ``parts`` (``group-*.html``); returns a :data:`Drawn` per unit. The run
    is loaded once for all ``units`` (its tables read once each, the rows
    of the units' tasks kept). Pure of Spark: run in the driver, or on
    executors that see ``run_dir``."""
    return draw_units(load_run(run_dir, info, tasks=[u[1] for u in units]), units, parts)


def draw_units(run: Run, units: List[Tuple[int, str, str, int]], parts: str) -> List[Drawn]:
    """:func:`draw_parts` with the run already loaded; a task's rows are
    dropped once its units are drawn (units come grouped by task). One file
    for all the units (a file per unit cost ~0.4 ms each to create here, and
    a run of 100 tasks has 1,500 units)."""
    import tempfile
    out: List[Drawn] = []
    if not units:
        return out
    fd, path = tempfile.mkstemp(prefix="group-", suffix=".html", dir=parts)
    name, offset = os.path.basename(path), 0
    current = None
    with os.fdopen(fd, "wb") as handle:
        for i, task, ident, k in units:
            if current is not None and task != current:
                run.forget(current)
            current = task
            view = TaskView(run, task, ident)
            values = overview_values(view) if k < 0 else None
            text = (task_head(view) if k < 0 else task_part(view, k)).encode("utf-8")
            handle.write(text)
            out.append((i, k, values, name, offset, len(text)))
            offset += len(text)
    if current is not None:
        run.forget(current)
    return out


def write_report(run_dir: str, out_file: Optional[str] = None,
                 info: Optional[Dict[str, Any]] = None, shown_path: Optional[str] = None,
                 spark=None) -> str:
    """Write the report of a run (default ``RUN_DIR/report.html``) and
    return its path: one page while the tasks' sections weigh at most
    :data:`SINGLE_PAGE_BYTES`, else an overview page linking to one page per
    task (``report/<task>.html``). The tasks are drawn in parallel on
    ``spark``'s executors when they see the run's folder (a local master),
    else here one after the other; the pages are written into temporary
    files renamed when complete."""
    import shutil
    import tempfile
    run = load_run(run_dir, info)
    views = task_views(run)
    target = out_file or os.path.join(local_path(run_dir) or run_dir, REPORT_FILE)
    folder = os.path.dirname(os.path.abspath(target))
    parts = tempfile.mkdtemp(prefix=".report-parts-", dir=folder)
    opened: Dict[str, Any] = {}         # the parts' files, open while the pages are written
    try:
        units = [(i, v.task, v.ident, k) for i, v in enumerate(views)
                 for k in range(-1, len(SECTIONS))]
        drawn = []
        if spark is not None and _executors_may_see(spark, run.path) and units:
            drawn = _draw_on_spark(spark, run.path, run.info, units, parts)
        done = {(d[0], d[1]) for d in drawn}
        left = [u for u in units if (u[0], u[3]) not in done]
        if left:        # no Spark, or executors that do not see the run's folder
            drawn += draw_units(run, left, parts)
        drawn.sort(key=lambda t: (t[0], t[1]))
        values = [d[2] for d in drawn if d[1] < 0]
        title = f"qarla_spark report: {', '.join(v.task for v in views)}"
        top = header(run, shown_path)
        one_page = sum(d[5] for d in drawn) <= SINGLE_PAGE_BYTES
        where = {(i, k): (name, offset, size) for i, k, _, name, offset, size in drawn}

        def body(out, i):
            for k in range(-1, len(SECTIONS)):
                name, offset, size = where[(i, k)]
                handle = opened.get(name)
                if handle is None:
                    handle = opened[name] = open(os.path.join(parts, name), "rb")
                handle.seek(offset)
                out.write(handle.read(size))
            out.write(TASK_TAIL.encode("utf-8"))

        if one_page:
            _write_page(target, [h.page_start(title, top), across_section(run),
                                 overview_of(values), problems_block(run)],
                        [lambda out: [body(out, i) for i in range(len(views))]])
        else:
            pages = os.path.join(folder, PAGES_DIR)
            os.makedirs(pages, exist_ok=True)
            names = _page_names([v.task for v in views])
            for i, name, view in zip(range(len(views)), names, views):
                _write_page(os.path.join(pages, name),
                            [h.page_start(f"qarla_spark report: {view.task}", top),
                             f'<p><a href="../{h.esc(os.path.basename(target))}">'
                             "← overview of every task</a></p>"],
                            [lambda out, i=i: body(out, i)])
            _write_page(target, [h.page_start(title, top), across_section(run),
                                 overview_of(values, lambda i: f"{PAGES_DIR}/{names[i]}"),
                                 problems_block(run)], [])
    finally:
        for handle in opened.values():
            handle.close()
        shutil.rmtree(parts, ignore_errors=True)
    return target


def _page_names(tasks: List[str]) -> List[str]:
    """A file name per task (its slug; distinct)."""
    used, out = set(), []
    for task in tasks:
        name = h.slug(task)
        while name in used:
            name += "-"
        used.add(name)
        out.append(f"{name}.html")
    return out


def _write_page(path: str, head: List[str], bodies) -> None:
    """A page: ``head`` pieces, then what each of ``bodies`` writes, then the
    page's end — into a temporary file renamed when complete."""
    tmp = f"{path}.tmp-{os.getpid()}-{int(time.time() * 1000)}"
    try:
        with open(tmp, "wb") as out:
            for piece in head:
                out.write(piece.encode("utf-8"))
            for write in bodies:
                write(out)
            out.write(h.page_end().encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _executors_may_see(spark, run_dir: str) -> bool:
    """Spark's executors share this machine's file system (a local master),
    or may (a cluster and a run folder on a file system: each checks)."""
    return str(spark.sparkContext.master).startswith("local") or \
        local_path(run_dir) is not None


def chunks(units: List[Any], n: int) -> List[List[Any]]:
    """``units`` in at most ``n`` runs of consecutive units, of sizes that
    differ by one at most (a task's parts stay together where they can)."""
    n = max(1, min(n, len(units)))
    size, extra = divmod(len(units), n)
    out, start = [], 0
    for k in range(n):
        stop = start + size + (k < extra)
        out.append(units[start:stop])
        start = stop
    return [c for c in out if c]


def _draw_on_spark(spark, run_dir: str, info, units, parts):
    """:func:`draw_parts` on the executors: the units in as many runs of
    consecutive units as Spark has cores (:func:`chunks`), one partition
    each, so that each loads the run and reads its tables once (not once
    per unit: 40 tasks are 600 units; nor once per partition of two per
    core: a core's second partition read every table again, ~0.3 s of a
    core for 40 tasks)."""
    from qarla_spark.spark import rounds as rd
    groups = chunks(units, max(1, spark.sparkContext.defaultParallelism))
    # one row per partition: a range of n rows in n slices
    frame = spark.range(0, len(groups), 1, len(groups))
    context = rd.broadcast(spark, {"run_dir": run_dir, "info": info, "parts": parts,
                                   "groups": groups})

    def draw(pdf, ctx):
        if not os.path.isdir(ctx["parts"]):         # not the driver's file system
            return []
        out = []
        for g in pdf["id"].tolist():
            try:
                done = draw_parts(ctx["run_dir"], ctx["info"], ctx["groups"][g], ctx["parts"])
            except OSError:                         # seen but not writable: the driver draws
                continue
            out.extend((f"group-{g}", "drawn", d) for d in done)
        return out

    return [value for _, _, value in rd.collect(rd.over_rows(frame, draw, context), ["drawn"])]


def write_staged_report(staging: str, info: Optional[Dict[str, Any]] = None,
                        spark=None) -> None:
    """``report.html`` into a run's folder before the run is complete
    (:meth:`RunDirectory.commit`): the staging folder, after its run.json
    and before the rename, or the run's folder before its run.json (a run
    committed in place); ``info``: what run.json says (default: read
    there); ``spark``: its executors draw the tasks. Runs on other file
    systems (hdfs://...) get none; a failure is a warning, not a lost run
    (``qarla report`` rebuilds it)."""
    import re
    import warnings
    path = local_path(staging)
    if path is None:
        return
    shown = re.sub(r"\.incomplete-[^/]*$", "", path)
    try:
        write_report(path, shown_path=shown, info=info, spark=spark)
    except Exception as exc:  # noqa: BLE001
        from qarla_spark.names import QarlaWarning
        warnings.warn(f"report.html was not written ({type(exc).__name__}: {exc}); rebuild it "
                      f"with: qarla report {shown}", QarlaWarning, stacklevel=2)


def write_figures(run_dir: str, folder: str, task: Optional[str] = None,
                  names=("king_metrics", "ranking", "auc")) -> List[str]:
    """Save some of a task's figures as SVG files (the README's images)."""
    import re
    run = load_run(run_dir)
    views = [v for v in task_views(run) if task is None or v.task == task][:1]
    if not views:
        raise ReportError(f"no task {task!r} in {run_dir}")
    os.makedirs(folder, exist_ok=True)
    written = []
    page = task_section(views[0])
    for name in names:
        found = re.search(rf'<figure data-figure="{name}">(<svg.*?</svg>)', page, re.S)
        if found:
            path = os.path.join(folder, f"{name}.svg")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(found.group(1).replace(
                    "<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
                    if "xmlns=" not in found.group(1)[:300] else found.group(1))
            written.append(path)
    return written
