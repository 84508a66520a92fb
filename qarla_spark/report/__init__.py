"""``report.html``: one self-contained, offline page of a run's results.

Built from the run directory alone — ``run.json`` and the Parquet tables,
read with pandas (no Spark) — so ``qarla report RUN_DIR`` rebuilds it at
any time; ``qarla run`` writes it into the staging folder before the
atomic rename (:func:`write_report`). Figures are static SVG drawn by
matplotlib (:mod:`qarla_spark.report.figures`); styles and the small
table-sorting script are inline; nothing is fetched when it is viewed.

Layout: a header (signature, seed, date, command, elapsed time), an
overview with one row per task linking to its section, the input problems,
then per task the sections of :data:`qarla_spark.report.sections.SECTIONS`.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Iterator, List, Optional

from qarla_spark.report import html as h
from qarla_spark.report.data import ReportError, Run, load_run, local_path
from qarla_spark.report.sections import (FAMILY_HBR_BEST, TaskView, auc_rows, best_pearson,
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
    comp = view.rows("comparisons")
    if comp is not None:
        for r in comp[comp["family"] == FAMILY_HBR_BEST].itertuples():
            star = "*" if r.significant else ""
            out[r.criterion] = h.Cell(h.esc(f"{r.difference:+.3f}{star}"), repr(r.difference),
                                      "n")
    auc = auc_rows(view)
    if auc is not None:
        for criterion, part in auc.groupby("criterion"):
            hbr = part[part["measure"] == "HBR"]["auc"]
            singles = part[part["measure"] != "HBR"]["auc"]
            if criterion not in out and len(hbr) and len(singles):
                d = float(hbr.iloc[0] - singles.max())
                out[criterion] = h.Cell(h.esc(f"{d:+.3f}"), repr(d), "n")
    return out


def overview_row(view: TaskView, criteria: List[str]) -> List[Any]:
    jack = view.rows("jack")
    jack_value = low = high = None
    if jack is not None and view.best_set is not None:
        hit = jack[jack["metric_set"] == view.best_set]
        jack_value = float(hit["jack"].iloc[0]) if len(hit) else None
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
    return [link, ci_cell(jack_value, low, high), h.Cell(h.esc(view.best_set or "")),
            ci_cell(king, k_low, k_high),
            *[ci_cell(*pearson[c], 2) if c in pearson else None for c in criteria],
            *[diffs.get(c) for c in criteria]]


def overview(views: List[TaskView]) -> str:
    if not views:
        return h.section("overview", "Overview", h.note("This run has no task."), 2)
    criteria = _criteria(views)
    headers = ["task", "JACK", "best set", "KING", *[f"Pearson {c}" for c in criteria],
               *[f"HBR − best {c}" for c in criteria]]
    rows = []
    for v in views:
        rows.append(overview_row(v, criteria))
        v.run.forget(v.task)
    tab = h.table(headers, rows, table_id="overview-table")
    text = ("<p>One row per task: JACK (how reliable the testbed is), the best metric set "
            "and its KING (how well it recognises human references), with 95% intervals; "
            "the system-level Pearson correlation of the best set's scores with each human "
            "criterion; the AUC of HBR minus that of the best single measure per criterion "
            "(* significant at 5%). Click a task to go to its section.</p>")
    return h.section("overview", "Overview", text + tab, 2)


def report_pieces(run_dir: str, info: Optional[Dict[str, Any]] = None,
                  shown_path: Optional[str] = None) -> Iterator[str]:
    """The HTML of the report of the run in ``run_dir``, in pieces: the
    page's start, the overview, the input problems, each task's section,
    the page's end. A task's rows are read for its overview row and its
    section, and dropped after each (``info`` replaces its ``run.json``
    when given; ``shown_path``: the directory the header names). A run
    that cannot be read fails here, before any piece."""
    return _pieces(load_run(run_dir, info), shown_path)


def _pieces(run: Run, shown_path: Optional[str]) -> Iterator[str]:
    views = task_views(run)
    yield h.page_start(f"qarla_spark report: {', '.join(v.task for v in views)}",
                       header(run, shown_path))
    yield overview(views)
    yield problems_block(run)
    for view in views:
        yield task_section(view)
        run.forget(view.task)
    yield h.page_end()


def build_report(run_dir: str, info: Optional[Dict[str, Any]] = None,
                 shown_path: Optional[str] = None) -> str:
    """The HTML of the report (:func:`report_pieces` joined)."""
    return "".join(report_pieces(run_dir, info, shown_path))


def write_report(run_dir: str, out_file: Optional[str] = None,
                 info: Optional[Dict[str, Any]] = None, shown_path: Optional[str] = None) -> str:
    """Write the report (default ``RUN_DIR/report.html``) piece by piece
    into a temporary file renamed when complete; returns its path."""
    pieces = report_pieces(run_dir, info, shown_path)
    target = out_file or os.path.join(local_path(run_dir) or run_dir, REPORT_FILE)
    tmp = f"{target}.tmp-{os.getpid()}-{int(time.time() * 1000)}"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            for piece in pieces:
                handle.write(piece)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return target


def write_staged_report(staging: str, info: Optional[Dict[str, Any]] = None) -> None:
    """``report.html`` into a run's folder before the run is complete
    (:meth:`RunDirectory.commit`): the staging folder, after its run.json
    and before the rename, or the run's folder before its run.json (a run
    committed in place); ``info``: what run.json says (default: read
    there). Runs on other file systems (hdfs://...) get none; a failure is
    a warning, not a lost run (``qarla report`` rebuilds it)."""
    import re
    import warnings
    path = local_path(staging)
    if path is None:
        return
    shown = re.sub(r"\.incomplete-[^/]*$", "", path)
    try:
        write_report(path, shown_path=shown, info=info)
    except Exception as exc:  # noqa: BLE001
        from qarla_spark.stages.qarla import QarlaWarning
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
