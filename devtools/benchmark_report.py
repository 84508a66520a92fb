"""Benchmark: what writing ``report.html`` costs (issue 36) — a baseline
revision's report code (default ``main``: matplotlib figures, one Spark
group per part) against this work tree's, in one session, on finished run
directories (read only).

For each run directory and each of the two codes, in a fresh process
(``PYTHONPATH`` = that code's ``qarla_spark``, the baseline taken out of git
with ``git archive``):

Times are CPU seconds of the process (the machine may be shared), but for
the report drawn on Spark (wall seconds: its workers are other processes).

1. per figure: the time to make each figure of :data:`FIGURES` and turn it
   into SVG (median and maximum over the tasks drawn; the first task drawn
   first is a warm-up, drawn again), the rows already read;
2. per task section: ``task_section`` of a task, its tables already read
   (median, maximum; the task's rows made from them: each task is
   forgotten after it), each part of it and the task's overview row alone,
   and ``draw_parts`` of one task's parts (what a Spark group drew: it
   loads the run and reads its tables itself);
3. the whole report, written without Spark (wall and CPU seconds of the
   process), and with ``--spark``, on a local[2] session (wall seconds).

    python -m devtools.benchmark_report [--runs DIR ...] [--baseline REV]
        [--tasks 8] [--spark] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and not __package__ and "--worker" not in sys.argv:
    sys.path.insert(0, str(ROOT))

RUNS = ["/work/bench/runs/base-n400_k40", "/work/bench/runs/base-n400_k1"]


# ---------------------------------------------------------------- in the worker

def _timed_figures(fg, times):
    """Wrap the figure functions and ``to_svg`` of module ``fg``: each
    figure's time (its function, then its ``to_svg``) is added to
    ``times[name]`` (a list per task: the caller appends a new slot)."""
    current = {}
    for name, func in list(fg.FIGURES.items()):
        attr = func.__name__

        def make(original=getattr(fg, attr), name=name):
            def timed(*args, **kwargs):
                start = time.process_time()
                out = original(*args, **kwargs)
                current["name"], current["start"] = name, start
                return out
            return timed
        setattr(fg, attr, make())
    to_svg = fg.to_svg

    def timed_svg(fig, key):
        out = to_svg(fig, key)
        if current:
            times.setdefault(current["name"], []).append(time.process_time() - current["start"])
            current.clear()
        return out
    fg.to_svg = timed_svg


def worker(run_dir: str, n_tasks: int, spark: bool) -> dict:
    import qarla_spark
    import qarla_spark.report as report
    from qarla_spark.report import figures as fg
    from qarla_spark.report import sections
    from qarla_spark.report.data import load_run
    out = {"code": os.path.dirname(qarla_spark.__file__), "run": run_dir}
    figure_times: dict = {}
    _timed_figures(fg, figure_times)
    run = load_run(run_dir)
    views = report.task_views(run)
    out["tasks"] = len(views)
    sections_s, parts_s, overview_s = [], {}, []
    for i, view in enumerate(views[:1] + views[:n_tasks]):
        if i == 0:                      # reads the tables; a warm-up
            sections.task_section(view)
            report.overview_values(view)
            figure_times.clear()
            run.forget(view.task)
            continue
        start = time.process_time()
        sections.task_section(view)
        sections_s.append(time.process_time() - start)
        run.forget(view.task)
        # the same task again, part by part, with its overview row (its rows
        # read again: forgotten above)
        start = time.process_time()
        report.overview_values(view)
        overview_s.append(time.process_time() - start)
        for k, (key, *_) in enumerate(sections.SECTIONS):
            start = time.process_time()
            sections.task_part(view, k)
            parts_s.setdefault(key, []).append(time.process_time() - start)
        run.forget(view.task)
    for name in list(figure_times):         # the first of each task's two draws
        figure_times[name] = figure_times[name][::2]
    out["section_s"] = sections_s
    out["overview_s"] = overview_s
    out["part_s"] = parts_s
    out["figure_s"] = {k: list(v) for k, v in figure_times.items()}
    del run
    with tempfile.TemporaryDirectory() as tmp:
        view = views[0]
        units = [(0, view.task, view.ident, k) for k in range(-1, len(sections.SECTIONS))]
        start = time.process_time()
        report.draw_parts(run_dir, None, units, tmp)
        out["draw_parts_one_task_s"] = time.process_time() - start
        start, cpu = time.perf_counter(), time.process_time()
        report.write_report(run_dir, out_file=os.path.join(tmp, "report.html"))
        out["report_s"] = time.perf_counter() - start
        out["report_cpu_s"] = time.process_time() - cpu
        if spark:
            from qarla_spark.spark.session import build_session
            session = build_session("local", master="local[2]",
                                    conf={"spark.app.name": "benchmark_report"})
            try:
                session.range(10).count()                   # the workers started
                start = time.perf_counter()
                report.write_report(run_dir, out_file=os.path.join(tmp, "spark.html"),
                                    spark=session)
                out["report_spark_s"] = time.perf_counter() - start
            finally:
                session.stop()
    return out


# ---------------------------------------------------------------- the parent

def baseline_tree(rev: str, folder: str) -> str:
    """``qarla_spark`` (with its ``conf``) of revision ``rev``, under ``folder``."""
    for what, where in (("qarla_spark", folder), ("conf", os.path.join(folder, "qarla_spark"))):
        os.makedirs(where, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, what],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", where], input=archive, check=True)
    return folder


def run_worker(tree: str, run_dir: str, n_tasks: int, spark: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": tree}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", run_dir,
           "--tasks", str(n_tasks)] + (["--spark"] if spark else [])
    done = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"worker failed ({tree}, {run_dir}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ms(values) -> str:
    if not values:
        return "—"
    return f"{1000 * statistics.median(values):.1f} (max {1000 * max(values):.1f})"


def show(results: dict) -> None:
    for run_dir, by_code in results.items():
        print(f"\n== {run_dir} ({by_code['baseline']['tasks']} tasks)")
        names = sorted(set(by_code["baseline"]["figure_s"]) | set(by_code["current"]["figure_s"]))
        print(f"{'ms per figure, median (max)':32} {'baseline':>22} {'this tree':>22}")
        for name in names:
            print(f"{name:32} {ms(by_code['baseline']['figure_s'].get(name)):>22} "
                  f"{ms(by_code['current']['figure_s'].get(name)):>22}")
        parts = [k for k in by_code["current"].get("part_s", {})]
        if parts:
            print(f"{'ms per part, median (max)':32} {'baseline':>22} {'this tree':>22}")
            for key in parts:
                print(f"{'  ' + key:32} {ms(by_code['baseline'].get('part_s', {}).get(key)):>22} "
                      f"{ms(by_code['current']['part_s'][key]):>22}")
            print(f"{'  overview row':32} {ms(by_code['baseline'].get('overview_s')):>22} "
                  f"{ms(by_code['current']['overview_s']):>22}")
        print(f"{'task_section, rows read (ms)':32} {ms(by_code['baseline']['section_s']):>22} "
              f"{ms(by_code['current']['section_s']):>22}")
        for key, what in (("draw_parts_one_task_s", "draw_parts, one task (CPU)"),
                          ("report_s", "write_report, no Spark (wall)"),
                          ("report_cpu_s", "write_report, no Spark (CPU)"),
                          ("report_spark_s", "write_report, local[2] (wall)")):
            if key in by_code["baseline"]:
                print(f"{what:32} {by_code['baseline'][key]:>20.2f} s "
                      f"{by_code['current'][key]:>20.2f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", default=RUNS, help="finished run directories")
    parser.add_argument("--baseline", default="main", help="the revision compared (main)")
    parser.add_argument("--tasks", type=int, default=8,
                        help="tasks whose figures are timed one by one (default 8)")
    parser.add_argument("--spark", action="store_true",
                        help="also write each report on a local[2] Spark session")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.tasks, args.spark)))
        return 0
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_tree(args.baseline, os.path.join(tmp, "baseline"))
        for run_dir in args.runs:
            results[run_dir] = {
                "baseline": run_worker(base, run_dir, args.tasks, args.spark),
                "current": run_worker(str(ROOT), run_dir, args.tasks, args.spark)}
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline],
                         capture_output=True, text=True).stdout.strip()
    show(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"baseline": f"{args.baseline} ({rev})", "machine": platform.platform(),
                       "cpus": os.cpu_count(), "results": results}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
