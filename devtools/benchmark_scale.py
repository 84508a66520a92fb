"""Benchmark: ``qarla run`` end to end at scale — SummEval, many tasks, many
topics — against rouge-score, in one run (issue 13, part 1).

Parts (``--parts``, default all, in this order):

``baseline`` (named ``rouge-score``, always run): Google's ``rouge-score``,
    rouge1, rouge2 and rougeLsum with stemming, one process, on a seeded
    sample of ordered SummEval pairs (``devtools/benchmark_similarities.py``'s
    function); its pairs/s is the baseline of the similarity stage's.
``summeval`` (a): the bundled SummEval, as ``qarla run`` runs it: every
    stage, every table (and ``report.html`` if the run writes one), with
    ``--bootstrap`` replicates. It is the session's first run, so it also
    pays for starting Spark's Python workers and loading the compiled
    kernels; it is the baseline of the time per topic and of the memory.
``multi`` (b): ``--tasks`` tasks x ``--topics`` topics (default 10 x 100,
    27,000 summaries) of SummEval's shape, generated from SummEval's texts
    (:mod:`devtools.testbeds`: each generated topic is one SummEval
    topic's article, 11 references and 16 system outputs, drawn in seeded
    rounds without replacement; duplicate texts within a topic replaced by
    distinct extracts; SummEval's judgments kept), written as JSONL input
    files and run end to end like (a).
``topics`` (c): the same with 1 task of ``--large-topics`` topics (default
    1,000).
``battery`` (d): the similarity battery alone, cold and warm, against
    rouge-score (``devtools/benchmark_similarities.py``: 59 metrics, all 70,200
    ordered SummEval pairs, Parquet written, its own rouge-score baseline
    measured in the same process), run first in a process and Spark session
    of its own, so that its "cold" is a fresh session's and (a) stays this
    session's first run.

``cluster`` (f): ``devtools/cluster_check.py``'s setup (``make cluster-check``)
without its killed executor: a standalone Master and two one-core Workers
on this machine, the job submitted with spark-submit as the README says
(``--cluster-topics`` SummEval topics, default 6) to the cluster and to
``local[2]``, the same cores; the two wall times, their ratio (issue 14's
target: 1.3x) and whether every table is equal. Run after (e), before this
session starts.

``plans`` (g): the run's shape from Spark's event log (``qarla profile``):
SummEval and (b)'s testbed run as fresh ``qarla run`` processes at
``local[2]`` with this machine's plan and with the plan ``local[16]``
gets (``--conf spark.default.parallelism=16``: as many partitions and
tasks), alternately, ``--plan-runs`` times each (default 3) — and for each
plan, of the run with the median critical path, per stage and for the run: Spark
jobs, tasks, summed task time, driver time (no task running) and the
critical path (driver time plus the longest task of each Spark stage: the
run's time with unlimited cores), and the ratio of the big plan's task time
to the small one's (what splitting the work costs).
``many`` (h): ``--many-tasks`` tasks x ``--many-topics`` topics (default
100 x 100, 270,000 summaries), run like (b): the driver's peak memory
against SummEval's, the Spark jobs, and the report's pages (an overview and
one page per task) with the largest page's size.

``tasks`` (i): the same topics as one task or many (issue 36;
:mod:`devtools.benchmark_tasks`): N = ``--shape-topics`` (default 400 and
1,000) topics as 1 × N, 10 × N/10, 40 × N/40 and 100 × N/100 tasks
(``--shape-tasks``), each a fresh ``qarla run`` process at ``local[2]``,
``--shape-runs`` times (default 3, the shapes alternating), then once at the
16-core plan: per shape the wall time, each stage's and their ratios to
1 × N's, the Spark jobs, the task time, the 16-core plan's critical path and
the driver's peak, and the issue's targets. Run before this session starts.

``cli`` (e) (``--cli-runs N``, default 3): the installed ``qarla run`` on
the bundled SummEval in N fresh processes, one after the other, after (d)
and before this session starts: the wall time of each and the median, the
figure issue 13's 45 s target is about ((a) runs in this process's session,
already started, so it leaves out Python's, the JVM's and the workers'
start).

Printed: the machine (cores, memory, load average before and after each
part: the runs compete with whatever else runs), each part's wall time per
stage (``run.json``'s ``timings``) and the number of Spark jobs it started,
its Spark tasks, summed task time, driver time and critical path (from the
session's event log),
the similarity stage's ordered pairs per second and its ratio to
rouge-score's, the time per topic and its ratio to SummEval's, and the peak
resident memory (VmHWM) of the Python driver and of the JVM (its child
process; both reset before each part, so each figure is that part's peak)
with the driver's resident memory when the part began (a later part starts
from what the earlier ones left in the process's heap; a part run alone,
``--parts topics``, starts from a fresh process's).
A part that fails is reported with the stage it was in and for how long;
the next parts still run (after an interrupt, none does: what was measured
is printed, and written to ``--json`` after each part).

    python -m devtools.benchmark_scale [--quick]
        [--parts battery,cli,cluster,plans,tasks,summeval,multi,topics,many]
        [--tasks 10] [--topics 100] [--large-topics 1000] [--many-tasks 100]
        [--many-topics 100] [--bootstrap 1000] [--cli-runs 3] [--plan-runs 3]
        [--shape-topics 400,1000] [--shape-tasks 1,10,40,100] [--shape-runs 3]
        [--cluster-topics 6]
        [--out DIR] [--json FILE]

``--quick``: 2 tasks x 10 topics, 1 task x 50 topics, 4 tasks x 10 topics. ``--out DIR``
keeps the generated inputs and the run directories there (default: a
temporary directory, removed at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional

if __name__ == "__main__" and not __package__:
    # run as `python devtools/NAME.py` or by spark-submit: the repository root
    # on sys.path, for `devtools.*` (`python -m devtools.NAME` needs none)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.bench_common import load_average, peak_mb, reset_peak, rss_mb
from devtools.cpu_accounts import parents

PARTS = ("summeval", "multi", "topics", "many")
#: the part run as fresh ``qarla run`` processes of the same topics as one
#: task or many (:mod:`devtools.benchmark_tasks`, issue 36), before this
#: session's
SHAPES = "tasks"
#: the part run in a process of its own, before this session's
BATTERY = "battery"
#: the part run as fresh ``qarla run`` processes, before this session's
CLI = "cli"
#: the part run on a standalone cluster of this machine, before this session's
CLUSTER = "cluster"
#: the part run as fresh ``qarla run`` processes with Spark's event log, at
#: this machine's plan and at a 16-core plan, before this session's
PLANS = "plans"
#: the default parallelism of the big plan (g) measures on this machine
BIG_PLAN = 16


# --- the machine and its memory ---------------------------------------------

def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def jvm_pid(spark) -> Optional[int]:
    """The JVM's pid: the process PySpark launched (``gateway.proc``), this
    process's parent under spark-submit, or a ``java`` child; None if none
    of them is a ``java`` process."""
    candidates = []
    gateway = getattr(spark.sparkContext, "_gateway", None)
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        candidates.append(proc.pid)
    candidates.append(os.getppid())
    try:
        me = os.getpid()
        candidates.extend(pid for pid, parent in parents().items() if parent == me)
    except OSError:
        pass
    return next((pid for pid in candidates if _comm(pid) == "java"), None)


def machine() -> str:
    cpu, mem_gb = platform.processor() or platform.machine(), float("nan")
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle
                        if line.startswith("model name")), cpu)
        with open("/proc/meminfo", encoding="ascii") as handle:
            mem_gb = next(int(line.split()[1]) for line in handle
                          if line.startswith("MemTotal")) / 1024 ** 2
    except (OSError, StopIteration):
        pass
    return (f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({cpu}), "
            f"{mem_gb:.1f} GB RAM, load average {load_average()} (1/5/15 min)")


# --- what a run does --------------------------------------------------------

class Recorder:
    """A pipeline Progress that remembers each stage's start and end and how
    many Spark jobs it started, and prints one line per event to stderr (so
    a long run can be followed in a log)."""

    def __init__(self, spark, label: str):
        self.sc, self.label = spark.sparkContext, label
        self.t0 = time.time()
        self.current: Optional[str] = None
        self.started_at = self.t0
        self.jobs: Dict[str, int] = {}
        self.seconds: Dict[str, float] = {}
        self._mark = self._last_job()

    def _last_job(self) -> int:
        try:
            tracker = self.sc.statusTracker()
            ids = set(tracker.getJobIdsForGroup(None)) | set(tracker.getActiveJobsIds())
            return max(ids, default=-1)
        except Exception:
            return -1

    def _say(self, text: str) -> None:
        print(f"[{self.label} {time.time() - self.t0:7.1f} s] {text}", file=sys.stderr,
              flush=True)

    def testbed(self, text: str) -> None:
        last = self._last_job()
        self.jobs["load"] = max(0, last - self._mark)
        self._mark = last
        self._say(f"inputs read and valid, {self.jobs['load']} Spark jobs")

    def stage_started(self, name: str) -> None:
        self.current, self.started_at = name, time.time()
        self._mark = self._last_job()
        self._say(f"{name} ...")

    def stage_finished(self, name: str, seconds: float) -> None:
        last = self._last_job()
        self.jobs[name] = max(0, last - self._mark)
        self.seconds[name] = seconds
        self._mark = last
        self.current = None
        self._say(f"{name}: {seconds:.1f} s, {self.jobs[name]} Spark jobs")


def ordered_pairs(records) -> int:
    """Ordered same-topic pairs s != r of summary records."""
    per_topic = Counter((r.get("task"), r["topic"]) for r in records)
    return sum(n * (n - 1) for n in per_topic.values())


def report_pages(out: str) -> Dict:
    """The report's pages of a run: how many, and the largest (bytes)."""
    pages = [os.path.join(out, "report.html")]
    folder = os.path.join(out, "report")
    if os.path.isdir(folder):
        pages += [os.path.join(folder, f) for f in sorted(os.listdir(folder))]
    sizes = [os.path.getsize(p) for p in pages if os.path.exists(p)]
    return {"pages": len(sizes), "largest_bytes": max(sizes, default=0),
            "overview_bytes": sizes[0] if sizes else 0}


def run_part(spark, label: str, config, jvm: Optional[int],
             log_dir: Optional[str] = None) -> Dict:
    """One ``qarla run`` as the CLI runs it; what it took."""
    from qarla_spark import pipeline

    pipeline.plan_metrics(config)
    # the part starts from what the process holds, not from what generating
    # the testbeds or the part before it freed (a user's run is a process of
    # its own)
    from qarla_spark.memory import release_freed_memory
    release_freed_memory()
    reset_ok = reset_peak()
    if jvm is not None:
        reset_ok = reset_peak(str(jvm)) and reset_ok
    before, start_mb = load_average(), rss_mb()
    recorder = Recorder(spark, label)
    start = time.perf_counter()
    try:
        result = pipeline.run(spark, config, progress=recorder)
    except BaseException as exc:   # a benchmark reports a failed part and goes on
        elapsed = time.perf_counter() - start
        stage = recorder.current or "loading/validating"
        print(f"[{label}] FAILED in stage {stage} after {time.time() - recorder.started_at:.1f} s "
              f"of it ({elapsed:.1f} s into the run): {type(exc).__name__}: {exc}",
              file=sys.stderr, flush=True)
        traceback.print_exc(file=sys.stderr)
        return {"failed": True, "interrupted": isinstance(exc, KeyboardInterrupt),
                "stage": stage, "elapsed_s": elapsed,
                "stage_s": time.time() - recorder.started_at,
                "error": f"{type(exc).__name__}: {exc}"[:500],
                "jobs": dict(recorder.jobs), "finished": dict(recorder.seconds),
                "driver_peak_mb": peak_mb(), "jvm_peak_mb": peak_mb(str(jvm)) if jvm else None,
                "load_before": before, "load_after": load_average()}
    elapsed = time.perf_counter() - start
    report = result.report
    return {"failed": False, "elapsed_s": elapsed, "timings": result.info["timings"],
            "jobs": recorder.jobs,
            "topics": sum(t.n_topics for t in report.tasks), "tasks": len(report.tasks),
            "summaries": sum(t.n_summaries for t in report.tasks),
            "report_html": os.path.exists(os.path.join(result.out, "report.html")),
            "phases": {stage: dict(result.info.get(stage, {}).get("timings", {}))
                       for stage in ("qarla", "hbr", "statistics")},
            "driver_peak_mb": peak_mb(), "jvm_peak_mb": peak_mb(str(jvm)) if jvm else None,
            "driver_start_mb": start_mb, "peak_reset": reset_ok, "load_before": before,
            "load_after": load_average(), "out": result.out,
            "profile": part_profile(log_dir, result.info),
            "report_pages": report_pages(result.out)}


# --- printing ---------------------------------------------------------------

def run_battery(seed: int, sample: int, master: Optional[str]) -> Dict:
    """(d): ``benchmark_similarities.py`` in a process of its own; its
    ``--json`` results, or the error."""
    import subprocess
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "battery.json")
        command = [sys.executable, str(Path(__file__).with_name("benchmark_similarities.py")),
                   "--seed", str(seed), "--sample", str(sample), "--json", target]
        if master:
            command += ["--master", master]
        t0 = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 or not os.path.exists(target):
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            return {"failed": True, "error": f"exit {done.returncode}: {tail[0]}"}
        with open(target, encoding="utf-8") as handle:
            found = json.load(handle)
    found.update(failed=False, elapsed_s=time.perf_counter() - t0)
    return found


def run_cli(times: int, seed: int, bootstrap: Optional[int], master: Optional[str],
            root: str) -> Dict:
    """(e): the installed ``qarla run`` on the bundled SummEval, ``times``
    fresh processes one after the other (each starts Python, its JVM and
    its workers, as a user's run does); the wall time of each and their
    median, or the error."""
    import statistics
    import subprocess
    qarla = os.path.join(os.path.dirname(sys.executable), "qarla")
    command = [qarla, "run", "--out", os.path.join(root, "runs", "cli"), "--overwrite",
               "--quiet", "--seed", str(seed)]
    if bootstrap is not None:
        command += ["--bootstrap", str(bootstrap)]
    if master:
        command += ["--master", master]
    from qarla_spark.spark.class_archive import cache_dir, saved
    folder = cache_dir()

    def archives():
        return set(saved(folder)) if folder is not None and folder.is_dir() else set()

    walls, wrote = [], None
    for k in range(times):
        before = archives()
        t0 = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            return {"failed": True, "error": f"run {k + 1}: exit {done.returncode}: {tail[0]}",
                    "walls_s": walls}
        walls.append(time.perf_counter() - t0)
        if wrote is None and archives() - before:
            wrote = k + 1
        print(f"[(e) qarla run] {k + 1} of {times}: {walls[-1]:.1f} s", file=sys.stderr,
              flush=True)
    return {"failed": False, "walls_s": walls, "median_s": statistics.median(walls),
            "archive_written_by": wrote}


def run_cluster(topics: int, seed: int) -> Dict:
    """(f): the cluster check's two submissions (no killed executor); the
    wall times, or the error."""
    import contextlib
    from pathlib import Path

    from devtools.cluster_check import check
    with tempfile.TemporaryDirectory(prefix="qarla-bench-cluster-") as tmp:
        with contextlib.redirect_stdout(sys.stderr):   # its lines are progress here
            found = check(Path(tmp).resolve(), topics, seed, kill=False)
    if found.ratio is None:
        return {"failed": True, "error": "; ".join(found.failures) or "no time measured"}
    return {"failed": False, "topics": topics, "local_s": found.local_s,
            "cluster_s": found.cluster_s, "ratio": found.ratio, "equal": found.equal,
            "failures": found.failures}


def part_profile(log_dir: Optional[str], info: Dict) -> Optional[Dict]:
    """The event-log figures (``qarla profile``) of one in-process part:
    its stage windows in the session's log, or None without a log."""
    if not log_dir or not os.path.isdir(log_dir):
        return None
    from qarla_spark.eventlog import last_event_time, profile, read_events, windows_of_run
    logs = sorted(os.listdir(log_dir))
    if not logs:
        return None
    events = list(read_events(os.path.join(log_dir, logs[-1])))
    windows = windows_of_run(info, last_event_time(events))
    return profile(events, windows).to_dict() if windows else None


def run_plans(inputs: Dict[str, List[str]], seed: int, bootstrap: Optional[int],
              root: str, repeats: int = 3) -> Dict:
    """(g): each testbed (label -> ``qarla run`` input arguments) run in
    fresh processes at ``local[2]`` with this machine's plan and with the
    plan of :data:`BIG_PLAN` cores, alternately, ``repeats`` times each,
    Spark's event log on; per plan the figures of ``qarla profile`` of the
    run with the median critical path, and every run's wall time, task
    time and critical path."""
    out: Dict[str, Dict] = {}
    for label, args in inputs.items():
        runs: Dict[str, List[Dict]] = {}
        for k in range(repeats):
            for plan, extra in (("2", []), (str(BIG_PLAN), ["--conf", "spark.default."
                                                            f"parallelism={BIG_PLAN}"])):
                runs.setdefault(plan, []).append(
                    _plan_run(label, plan, k, args, extra, seed, bootstrap, root))
        found: Dict[str, Dict] = {}
        for plan, done in runs.items():
            ok = [r for r in done if not r.get("failed")]
            if not ok:
                found[plan] = done[0]
                continue
            ok.sort(key=lambda r: r["figures"]["run"]["critical_path_s"])
            median = ok[len(ok) // 2]
            found[plan] = {"failed": False, "wall_s": median["wall_s"],
                           "figures": median["figures"], "runs": len(ok),
                           "walls_s": [r["wall_s"] for r in done if not r.get("failed")],
                           "critical_paths_s": [r["figures"]["run"]["critical_path_s"]
                                                for r in ok],
                           "task_s": [r["figures"]["run"]["task_s"] for r in ok]}
        out[label] = found
    return out


def _plan_run(label: str, plan: str, k: int, args: List[str], extra: List[str], seed: int,
              bootstrap: Optional[int], root: str) -> Dict:
    """One fresh ``qarla run`` of (g)."""
    import subprocess

    from qarla_spark.eventlog import profile_run
    qarla = os.path.join(os.path.dirname(sys.executable), "qarla")
    events = os.path.join(root, "events", f"{label}-{plan}-{k}")
    os.makedirs(events, exist_ok=True)
    run_dir = os.path.join(root, "runs", f"plan-{label}-{plan}")
    command = [qarla, "run", *args, "--out", run_dir, "--overwrite", "--quiet",
               "--seed", str(seed), "--master", "local[2]", *extra,
               "--conf", "spark.eventLog.enabled=true",
               "--conf", f"spark.eventLog.dir=file://{os.path.abspath(events)}"]
    if bootstrap is not None:
        command += ["--bootstrap", str(bootstrap)]
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"failed": True, "error": f"exit {done.returncode}: {tail[0]}"}
    found = {"failed": False, "wall_s": wall, "figures": profile_run(run_dir).to_dict()}
    print(f"[(g) plans] {label} at the {plan}-core plan ({k + 1}): {wall:.1f} s, "
          f"critical path {found['figures']['run']['critical_path_s']:.1f} s",
          file=sys.stderr, flush=True)
    shutil.rmtree(run_dir, ignore_errors=True)
    return found


def plans_lines(plans: Dict) -> List[str]:
    lines = [f"(g) the run's shape from Spark's event log (`qarla profile`): fresh `qarla run` "
             f"processes at local[2], with this machine's plan (2) and the plan local"
             f"[{BIG_PLAN}] gets (--conf spark.default.parallelism={BIG_PLAN}); per stage: "
             "jobs / tasks / task s / driver s / critical s"]
    for label, found in plans.items():
        for plan, r in found.items():
            if r.get("failed"):
                lines.append(f"  {label}, {plan}-core plan: FAILED: {r['error']}")
                continue
            run = r["figures"]["run"]
            lines.append(f"  {label}, {plan}-core plan: wall {r['wall_s']:.1f} s (fresh "
                         f"process), {run['jobs']} Spark jobs, {run['tasks']:,} tasks, task time "
                         f"{run['task_s']:.1f} s, driver {run['driver_s']:.1f} s, critical path "
                         f"{run['critical_path_s']:.1f} s")
            if r.get("runs", 1) > 1:
                lines.append(f"    the run of median critical path of {r['runs']}: critical "
                             f"paths {', '.join(f'{x:.1f}' for x in r['critical_paths_s'])} s; "
                             f"walls {', '.join(f'{x:.1f}' for x in r['walls_s'])} s; task "
                             f"times {', '.join(f'{x:.1f}' for x in r['task_s'])} s")
            lines.append("    " + "; ".join(
                f"{stage} {f['jobs']}/{f['tasks']}/{f['task_s']:.1f}/{f['driver_s']:.1f}/"
                f"{f['critical_path_s']:.1f}"
                for stage, f in r["figures"].items() if stage != "run"))
        small, big = found.get("2"), found.get(str(BIG_PLAN))
        if small and big and not small.get("failed") and not big.get("failed"):
            ratio = (statistics.median(big.get("task_s") or [big["figures"]["run"]["task_s"]])
                     / statistics.median(small.get("task_s")
                                         or [small["figures"]["run"]["task_s"]]))
            lines.append(f"  {label}: task time of the {BIG_PLAN}-core plan / the 2-core "
                         f"plan's = {ratio:.2f}x (medians; issue 26's target: at most 1.5x); "
                         "critical "
                         f"path of the {BIG_PLAN}-core plan "
                         f"{big['figures']['run']['critical_path_s']:.1f} s")
    return lines


def cluster_lines(c: Dict) -> List[str]:
    if c.get("failed"):
        return [f"(f) cluster: FAILED: {c['error']}"]
    return [f"(f) cluster of 2 one-core workers vs local[2] (devtools/cluster_check.py's setup, "
            f"{c['topics']} SummEval topics, spark-submit as the README says, the same 2 "
            f"cores): local[2] {c['local_s']:.1f} s, cluster {c['cluster_s']:.1f} s = "
            f"{c['ratio']:.2f}x (issue 14's target: 1.3x); every table equal: "
            f"{'yes' if c['equal'] else 'NO'}"] + [f"    {f}" for f in c["failures"]]


def cli_lines(c: Dict) -> List[str]:
    if c.get("failed"):
        return [f"(e) qarla run: FAILED: {c['error']}"]
    walls = ", ".join(f"{w:.1f}" for w in c["walls_s"])
    return [f"(e) `qarla run` on SummEval (installed; every stage, table and the report), "
            f"{len(c['walls_s'])} fresh processes: {walls} s; median {c['median_s']:.1f} s "
            f"(issue 13's target: 45 s)"] + (
        [f"    run {c['archive_written_by']} wrote the JVM's class archive (once per setup; "
         f"README, 'The JVM's class archive')"] if c.get("archive_written_by") else [])


def battery_lines(b: Dict) -> List[str]:
    if b.get("failed"):
        return [f"(d) battery: FAILED: {b['error']}"]
    out = [f"(d) battery (devtools/benchmark_similarities.py, a process and Spark session of its "
           f"own): {len(b['metrics'])} metrics, all {b['ordered_pairs']:,} ordered SummEval "
           f"pairs, Parquet written; its baseline {b['baseline_pairs']:,} pairs at "
           f"{b['baseline_pairs_per_s']:,.0f} pairs/s"]
    for label, r in b["battery"].items():
        out.append(f"  battery {label}: {r['seconds']:.2f} s = {r['pairs_per_s']:,.0f} pairs/s "
                   f"= {r['ratio']:.1f}x rouge-score")
    return out


def _fmt(value, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def stage_table(parts: Dict[str, Dict], labels: Dict[str, str]) -> List[str]:
    ok = {k: v for k, v in parts.items() if not v["failed"]}
    keys: List[str] = []
    for r in ok.values():
        keys += [k for k in r["timings"] if k not in keys]
    width = max([len(k) for k in keys] + [22])
    cols = list(ok)
    lines = ["wall time per stage, s (Spark jobs) [ms per topic]:",
             "  " + "stage".ljust(width) + "".join(f"{labels[c]:>28}" for c in cols)]
    for key in keys:
        stage = key[:-2] if key.endswith("_s") else key
        stage = {"load_validate": "load", "write_testbed": "testbed tables",
                 "commit": "writing"}.get(stage, stage)
        cells = []
        for c in cols:
            r = ok[c]
            seconds = r["timings"].get(key)
            jobs = r["jobs"].get(stage)
            cell = _fmt(seconds, ".1f")
            if jobs is not None:
                cell += f" ({jobs})"
            if seconds is not None:
                cell += f" [{1000 * seconds / r['topics']:.0f}]"
            cells.append(f"{cell:>28}")
        lines.append("  " + key.ljust(width) + "".join(cells))
    cells = []
    for c in cols:
        r = ok[c]
        per_topic = 1000 * r["elapsed_s"] / r["topics"]
        cell = f"{r['elapsed_s']:.1f} ({sum(r['jobs'].values())}) [{per_topic:.0f}]"
        cells.append(f"{cell:>28}")
    lines.append("  " + "total (wall)".ljust(width) + "".join(cells))
    return lines


def report_lines(data: Dict) -> List[str]:
    """What the benchmark prints, from its results (``--json``'s content)."""
    labels, results, generated = data["labels"], data["runs"], data["generated"]
    b = data["baseline"]
    baseline = b["pairs_per_s"]
    bootstrap = data.get("bootstrap")
    out = [f"machine: {data['machine']}",
           f"qarla_spark {data['version']}, Spark {data['spark']} ({data['master']}, "
           f"{data['cores']} cores), Python {platform.python_version()}, seed {data['seed']}"
           + (f", {bootstrap:,} bootstrap replicates per run" if bootstrap is not None else ""),
           f"baseline rouge-score (rouge1, rouge2, rougeLsum; stemmer; 1 process): "
           f"{b['pairs']:,} ordered SummEval pairs in {b['seconds']:.2f} s = "
           f"{baseline:,.0f} pairs/s"]
    for part, g in generated.items():
        out.append(f"generated {labels[part]}: {g['tasks']} task(s) x {g['topics']:,} topics = "
                   f"{g['summaries']:,} summaries ({g['changed']:,} duplicates made distinct), "
                   f"JSONL {g['bytes'] / 1e6:.1f} MB, in {g['seconds']:.1f} s")
    for part, r in results.items():
        if r["failed"]:
            what = "INTERRUPTED" if r.get("interrupted") else "FAILED"
            done = ", ".join(f"{name} {seconds:.1f} s ({r['jobs'].get(name, '?')} jobs)"
                             for name, seconds in r.get("finished", {}).items())
            out.append(f"{labels[part]}: {what} in stage {r['stage']} after "
                       f"{r['stage_s']:.1f} s of it ({r['elapsed_s']:.1f} s into the run): "
                       f"{r['error']}; finished stages: {done or 'none'}; driver peak "
                       f"{_fmt(r['driver_peak_mb'], '.0f')} MB, JVM peak "
                       f"{_fmt(r['jvm_peak_mb'], '.0f')} MB")
    ok = {p: r for p, r in results.items() if not r["failed"]}
    if ok:
        out += stage_table(ok, labels)
    ref = ok.get("summeval")
    for part, r in ok.items():
        sims_s = r["timings"].get("similarities_s")
        rate = r["pairs"] / sims_s if sims_s else None
        per_topic = r["elapsed_s"] / r["topics"]
        line = (f"{labels[part]}: {r['tasks']} task(s), {r['topics']:,} topics, "
                f"{r['summaries']:,} summaries: {r['elapsed_s']:.1f} s = "
                f"{per_topic:.3f} s per topic")
        if ref is not None and part != "summeval":
            line += f" = {per_topic / (ref['elapsed_s'] / ref['topics']):.2f}x SummEval's"
        out.append(line)
        if rate is not None:
            out.append(f"  similarity stage: {r['pairs']:,} ordered pairs in {sims_s:.1f} s = "
                       f"{rate:,.0f} pairs/s = {rate / baseline:.1f}x rouge-score")
        mem = f"  peak RSS: driver (Python) {_fmt(r['driver_peak_mb'], ',.0f')} MB"
        start = r.get("driver_start_mb")
        if start is not None and start == start:   # known (not NaN)
            # what the process held when the part began (the earlier parts'
            # heap stays with it): the part's own growth is the difference
            mem += f" ({start:,.0f} MB at its start)"
        mem += f", JVM {_fmt(r['jvm_peak_mb'], ',.0f')} MB"
        if ref is not None and part != "summeval" and r["driver_peak_mb"] and ref["driver_peak_mb"]:
            mem += f" (driver {r['driver_peak_mb'] / ref['driver_peak_mb'] - 1:+.0%} vs SummEval's"
            if r["jvm_peak_mb"] and ref["jvm_peak_mb"]:
                mem += f", JVM {r['jvm_peak_mb'] / ref['jvm_peak_mb'] - 1:+.0%}"
            mem += ")"
        if not r["peak_reset"]:
            mem += " (peaks not reset between parts: cumulative)"
        out.append(mem)
        phases = []
        for stage, found in r.get("phases", {}).items():
            writes = sum(v for k, v in found.items() if k.startswith("write_"))
            inner = ", ".join(f"{k[:-2]} {v:.1f}" for k, v in found.items()
                              if not k.startswith("write_"))
            if found:
                phases.append(f"{stage} " + (f"({inner}) " if inner else "")
                              + f"writing tables {writes:.1f} s")
        if phases:
            out.append("  within stages: " + "; ".join(phases))
        prof = r.get("profile")
        if prof:
            run = prof["run"]
            out.append(f"  event log: {run['jobs']} Spark jobs, {run['tasks']:,} tasks, task time "
                       f"{run['task_s']:.1f} s, driver {run['driver_s']:.1f} s, critical path "
                       f"{run['critical_path_s']:.1f} s; per stage (jobs/critical s): " + ", ".join(
                           f"{st} {f['jobs']}/{f['critical_path_s']:.1f}"
                           for st, f in prof.items() if st != "run"))
        pages = r.get("report_pages")
        if pages:
            out.append(f"  report: {pages['pages']} page(s), the largest "
                       f"{pages['largest_bytes'] / 1e6:.2f} MB")
        out.append(f"  load average {r['load_before']} before, {r['load_after']} after; "
                   f"report.html {'written' if r['report_html'] else 'not written by the run'}")
    if data.get("battery"):
        out += battery_lines(data["battery"])
    if data.get("cli"):
        out += cli_lines(data["cli"])
    if data.get("cluster"):
        out += cluster_lines(data["cluster"])
    if data.get("plans"):
        out += plans_lines(data["plans"])
    if data.get("shapes"):
        from devtools.benchmark_tasks import shape_lines
        out += ["", "(i) " + "\n".join(shape_lines({int(n): {int(k): v for k, v in s.items()}
                                                     for n, s in data["shapes"].items()}))]
    if "summeval" in results:
        out.append("(a) is the session's first run: it also pays for starting Python workers and "
                   "loading the compiled kernels; the JVM keeps the heap it has grown, so its "
                   "peak in a later part is at least what it held before")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default=",".join((BATTERY, CLI, CLUSTER, PLANS, SHAPES)
                                                    + PARTS),
                        help="which runs, comma-separated, of battery, cli, cluster, plans, "
                             "summeval, tasks, topics, many (default: all; the rouge-score "
                             "baseline always runs)")
    parser.add_argument("--tasks", type=int, default=10, help="tasks of part (b) (default 10)")
    parser.add_argument("--topics", type=int, default=100,
                        help="topics per task of part (b) (default 100)")
    parser.add_argument("--large-topics", type=int, default=1000,
                        help="topics of the single task of part (c) (default 1000)")
    parser.add_argument("--many-tasks", type=int, default=100,
                        help="tasks of part (h) (default 100)")
    parser.add_argument("--many-topics", type=int, default=100,
                        help="topics per task of part (h) (default 100)")
    parser.add_argument("--quick", action="store_true",
                        help="a quick check: (b) 2 tasks x 10 topics, (c) 1 x 50 topics, "
                             "(h) 4 x 10")
    parser.add_argument("--bootstrap", type=int, default=None,
                        help="bootstrap replicates of every run (default: the run's, 1000)")
    parser.add_argument("--shape-topics", default="400,1000",
                        help="part tasks (i): the topics of each testbed (default 400,1000)")
    parser.add_argument("--shape-tasks", default="1,10,40,100",
                        help="part tasks (i): the tasks they are split in (default 1,10,40,100)")
    parser.add_argument("--shape-runs", type=int, default=3,
                        help="part tasks (i): fresh runs of each shape (default 3, medians)")
    parser.add_argument("--sample", type=int, default=1500,
                        help="ordered pairs scored by rouge-score (default 1500)")
    parser.add_argument("--seed", type=int, default=13,
                        help="seed of the runs, the generated testbeds and the pair sample")
    parser.add_argument("--out", default=None,
                        help="keep the inputs and runs in this folder (default: a temporary "
                             "folder, removed)")
    parser.add_argument("--master", default=None, help="Spark master (default: the profile's)")
    parser.add_argument("--cli-runs", type=int, default=3,
                        help="part cli (e): how many times the installed `qarla run` runs "
                             "SummEval, each in a fresh process (default 3, for a median)")
    parser.add_argument("--plan-runs", type=int, default=3,
                        help="part plans (g): fresh runs per testbed and plan, alternating "
                             "the plans (default 3: the figures of the median critical path)")
    parser.add_argument("--cluster-topics", type=int, default=6,
                        help="part cluster (f): SummEval topics of its testbed (default 6, "
                             "the cluster check's)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)
    from qarla_spark.memory import use_system_arrow_pool
    use_system_arrow_pool()   # as the qarla command's driver (qarla_spark.memory)
    if args.quick:
        args.tasks, args.topics, args.large_topics = 2, 10, 50
        args.many_tasks, args.many_topics = 4, 10
        args.plan_runs = 1
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS) - {BATTERY, CLI, CLUSTER, PLANS, SHAPES})
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}: choose among "
                     f"{', '.join((BATTERY, CLI, CLUSTER, PLANS, SHAPES) + PARTS)}")
    if args.cli_runs < 1:
        parser.error("--cli-runs must be at least 1 (leave the part out of --parts instead)")
    with_battery, with_cli, with_cluster = BATTERY in parts, CLI in parts, CLUSTER in parts
    with_plans = PLANS in parts
    requested = set(parts)
    parts = [p for p in PARTS if p in parts]

    from devtools.benchmark_similarities import sample_pairs, summeval_rows, time_rouge_score
    from qarla_spark import __version__
    from qarla_spark.config import RunConfig
    from qarla_spark.spark.session import build_session
    from devtools.testbeds import scale_testbed, summeval_records, write_testbed

    machine_before = machine()
    labels = {"summeval": "(a) SummEval",
              "multi": f"(b) {args.tasks}x{args.topics:,}",
              "topics": f"(c) 1x{args.large_topics:,}",
              "many": f"(h) {args.many_tasks}x{args.many_topics:,}"}

    # (d) the baseline, before Spark starts
    rows = summeval_rows()
    pairs, _ = sample_pairs(rows, args.sample, args.seed)
    baseline_s = time_rouge_score(pairs)
    baseline = len(pairs) / baseline_s
    print(f"[baseline] rouge-score: {len(pairs):,} pairs in {baseline_s:.2f} s", file=sys.stderr,
          flush=True)

    root = args.out or tempfile.mkdtemp(prefix="qarla-scale-")
    os.makedirs(root, exist_ok=True)
    results: Dict[str, Dict] = {}
    generated: Dict[str, Dict] = {}
    try:
        # the generated testbeds, written as input files (not timed as part of a run)
        configs, pair_counts = {}, {"summeval": ordered_pairs(rows)}
        extra = {} if args.bootstrap is None else {"bootstrap": args.bootstrap}
        base = RunConfig(seed=args.seed, overwrite=True, master=args.master, **extra)
        if "summeval" in parts:
            configs["summeval"] = base.updated(out=f"{root}/runs/summeval")
        records = summeval_records()
        for part, (n_tasks, n_topics) in (("multi", (args.tasks, args.topics)),
                                          ("topics", (1, args.large_topics)),
                                          ("many", (args.many_tasks, args.many_topics))):
            if part not in parts and not (part == "multi" and with_plans):
                continue
            t0 = time.perf_counter()
            tb = scale_testbed(n_tasks, n_topics, seed=args.seed, records=records)
            summaries_path, sources_path = write_testbed(tb, f"{root}/inputs/{part}")
            generated[part] = {"seconds": time.perf_counter() - t0, "tasks": n_tasks,
                               "topics": n_topics, "summaries": len(tb.summaries),
                               "changed": tb.changed,
                               "bytes": os.path.getsize(summaries_path)}
            pair_counts[part] = ordered_pairs(tb.summaries)
            configs[part] = base.updated(out=f"{root}/runs/{part}", inputs=[summaries_path],
                                         sources=[sources_path])
            del tb

        battery = None
        if with_battery:
            print(f"[(d) battery] starting in a process of its own (load average "
                  f"{load_average()})", file=sys.stderr, flush=True)
            battery = run_battery(args.seed, args.sample, args.master)

        cli = None
        if with_cli:
            print(f"[(e) qarla run] {args.cli_runs} fresh processes (load average "
                  f"{load_average()})", file=sys.stderr, flush=True)
            cli = run_cli(args.cli_runs, args.seed, args.bootstrap, args.master, root)

        cluster = None
        if with_cluster:
            print(f"[(f) cluster] a standalone cluster of this machine against local[2] (load "
                  f"average {load_average()})", file=sys.stderr, flush=True)
            cluster = run_cluster(args.cluster_topics, args.seed)

        shapes = None
        if SHAPES in requested:
            from devtools.benchmark_tasks import run_shapes
            print(f"[(i) tasks] the same topics as one task or many, fresh processes (load "
                  f"average {load_average()})", file=sys.stderr, flush=True)
            topics_ = [40] if args.quick else [int(x) for x in args.shape_topics.split(",")]
            shapes_ = [1, 4] if args.quick else [int(x) for x in args.shape_tasks.split(",")]
            shapes = run_shapes(topics_, shapes_, 1 if args.quick else args.shape_runs,
                                args.seed, args.bootstrap, os.path.join(root, "shapes"),
                                None if args.quick else BIG_PLAN)

        plans = None
        if with_plans:
            print(f"[(g) plans] fresh processes at the 2- and {BIG_PLAN}-core plans (load "
                  f"average {load_average()})", file=sys.stderr, flush=True)
            inputs = {"summeval": []}
            if "multi" in configs:
                c = configs["multi"]
                inputs[labels["multi"].split()[1]] = [*c.inputs, "--sources", *c.sources]
            plans = run_plans(inputs, args.seed, args.bootstrap, root, args.plan_runs)

        spark = jvm = None
        log_dir = os.path.join(root, "events", "session")
        if parts:           # the battery alone needs no session here (it had its own)
            os.makedirs(log_dir, exist_ok=True)
            spark = build_session(base.profile, base.master, {
                **base.spark_conf, "spark.eventLog.enabled": "true",
                "spark.eventLog.compress": "false",
                "spark.eventLog.dir": f"file://{os.path.abspath(log_dir)}"})
            jvm = jvm_pid(spark)
            master, cores, spark_version = (spark.sparkContext.master,
                                            spark.sparkContext.defaultParallelism, spark.version)
        else:
            found = battery or {}
            master, cores, spark_version = (found.get("master", "-"), found.get("cores", "-"),
                                            found.get("spark", "-"))
        results_all = {"version": __version__, "spark": spark_version, "master": master,
                       "cores": cores, "machine": machine_before, "seed": args.seed,
                       "bootstrap": configs[parts[0]].bootstrap if parts else None,
                       # the generated testbeds' too (plans runs "multi" without its part)
                       "labels": {p: labels[p] for p in dict.fromkeys([*parts, *generated])},
                       "baseline": {"pairs": len(pairs), "seconds": baseline_s,
                                    "pairs_per_s": baseline},
                       "generated": generated, "runs": results, "battery": battery,
                       "cli": cli, "cluster": cluster, "plans": plans,
                       "shapes": None if shapes is None else {
                           str(n): {str(k): v for k, v in found.items()}
                           for n, found in shapes.items()}}
        for part in parts:
            print(f"[{labels[part]}] starting (load average {load_average()})", file=sys.stderr,
                  flush=True)
            results[part] = run_part(spark, labels[part], configs[part], jvm, log_dir)
            results[part]["pairs"] = pair_counts[part]
            if args.json:    # after each part: a later failure keeps what was measured
                with open(args.json, "w", encoding="utf-8") as handle:
                    json.dump(results_all, handle, indent=2, default=str)
            if results[part].get("interrupted"):
                break
    finally:
        if not args.out:
            shutil.rmtree(root, ignore_errors=True)

    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results_all, handle, indent=2, default=str)
    print("\n".join(report_lines(results_all)))
    if any(r.get("interrupted") for r in results.values()):
        return 130
    return 0 if all(not r["failed"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
