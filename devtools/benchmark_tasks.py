"""Benchmark: the same topics as one task or as many (issue 36) — does a
run's cost follow its topics, not how they are split into tasks?

For each N of ``--shape-topics`` (default 400 and 1,000) one testbed of N
topics of SummEval's shape is generated (:func:`devtools.testbeds.
scale_testbed`: one task of N topics, every SummEval article N/100 times,
with their sources and judgments) and written once per split: the same N
topics, the same texts and topic ids, as 1 × N, 10 × N/10, 40 × N/40 and
100 × N/100 tasks (``--shape-tasks``; topic i goes to task ⌊i·k/N⌋). Each
shape runs as a fresh ``qarla run`` process at ``local[2]`` with Spark's
event log on, ``--shape-runs`` times (default 3), the shapes alternating
within each round so that the machine's drift touches them alike; then
once with the plan of 16 cores (``--conf spark.default.parallelism=16``,
as ``--parts plans`` does) for its critical path.

Printed per N and shape (medians of the local[2] runs): the process's wall
time and its ratio to 1 × N's; each stage's time (``run.json``'s timings;
``writing``, the report and the commit, from the stage windows; ``outside``:
the process's wall less the run's, Python's, the JVM's and the workers'
start and stop) and its ratio to 1 × N's; the Spark jobs, the summed task
time (the event log's), the critical path of the 16-core plan, and the
driver's peak resident memory (VmHWM of the ``qarla`` process itself, the
JVM apart); and the machine's load before and after. Then each stage's
CPU seconds by kind — the Python workers', the JVM's compilers', the
JVM's other threads', the driver's — from /proc readings of the run's
process tree every 0.5 s (:mod:`devtools.cpu_accounts`; empty without
/proc), and their difference to 1 × N's. Then the issue's targets, met
or not.

    python -m devtools.benchmark_tasks [--shape-topics 400,1000]
        [--shape-tasks 1,10,40,100] [--shape-runs 3] [--big-plan 16]
        [--bootstrap N] [--seed 13] [--out DIR] [--json FILE] [--quick]

``--quick``: N = 40, shapes 1 and 4, one run each, no 16-core run.
``python -m devtools.benchmark_scale --parts tasks`` runs the same.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

if __name__ == "__main__" and not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.bench_common import load_average  # noqa: E402
from devtools.cpu_accounts import KINDS, Sampler, window_accounts  # noqa: E402

#: the stages of a run's timings, in order (run.json's keys), and the two
#: made here: the report and the commit (``writing``) and the process's
#: start and stop (``outside``)
STAGES = (("load", "load_validate_s"), ("similarities", "similarities_s"),
          ("qarla", "qarla_s"), ("hbr", "hbr_s"), ("statistics", "statistics_s"))
EXTRA = ("writing", "outside")

#: the issue's targets (2-core machine, fresh processes, medians)
TARGET_WALL = {40: 1.25, 100: 1.3}           # × the wall of 1 × N
TARGET_STAGE = (1.5, 3.0)                    # a stage ≤ 1.5 × its 1 × N time, or ≤ 3 s more
TARGET_CRITICAL_S = 20.0                     # 100 × 10, 16-core plan
TARGET_DRIVER = 1.25                         # 100 × 10's driver peak ≤ 1.25 × 1 × 1,000's
TARGET_JOBS = 20


# --- the testbeds -------------------------------------------------------------

def split_tasks(records: Sequence[dict], n_tasks: int, prefix: str = "task") -> List[dict]:
    """The records of a one-task testbed as ``n_tasks`` tasks of consecutive
    topics (sorted ids): topic i of N goes to task ⌊i·n_tasks/N⌋; topic ids,
    texts and everything else unchanged."""
    topics = sorted({str(r["topic"]) for r in records})
    width = max(2, len(str(n_tasks - 1)))
    of = {t: f"{prefix}{(i * n_tasks) // len(topics):0{width}d}" for i, t in enumerate(topics)}
    return [{**r, "task": of[str(r["topic"])]} for r in records]


def write_shapes(n_topics: int, shapes: Sequence[int], folder: str, seed: int) -> Dict[int, Dict]:
    """Each shape of one testbed of ``n_topics`` topics, written as JSONL
    input files: shape -> {"summaries": path, "sources": path}."""
    from devtools.testbeds import scale_testbed
    tb = scale_testbed(1, n_topics, seed=seed)
    out = {}
    for k in shapes:
        target = os.path.join(folder, f"n{n_topics}_k{k}")
        os.makedirs(target, exist_ok=True)
        paths = {}
        for name, rows in (("summaries", tb.summaries), ("sources", tb.sources)):
            path = os.path.join(target, f"{name}.jsonl")
            with open(path, "w", encoding="utf-8") as handle:
                for row in split_tasks(rows, k):
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            paths[name] = path
        out[k] = paths
    return out


# --- one run ------------------------------------------------------------------

#: what the child process runs: ``qarla`` itself, then its own peak memory
#: into the file ``QARLA_BENCH_PEAK`` names (the JVM is another process)
_CHILD = """
import atexit, os, sys
def _peak():
    try:
        with open("/proc/self/status") as f:
            kb = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
        with open(os.environ["QARLA_BENCH_PEAK"], "w") as f:
            f.write(str(kb))
    except Exception:
        pass
atexit.register(_peak)
from qarla_spark.cli import main
sys.argv = ["qarla"] + sys.argv[1:]
sys.exit(main())
"""


def run_shape(paths: Dict[str, str], root: str, label: str, seed: int,
              bootstrap: Optional[int], plan: Optional[int] = None) -> Dict:
    """One fresh ``qarla run`` of a shape at local[2] (``plan``: Spark's
    default parallelism), event log on: its wall, timings, profile and the
    driver's peak."""
    from qarla_spark.eventlog import profile_run
    events = tempfile.mkdtemp(prefix=f"events-{label}-", dir=root)
    run_dir = os.path.join(root, "runs", label)
    peak_file = os.path.join(root, f"peak-{label}")
    command = [sys.executable, "-c", _CHILD, "run", paths["summaries"], "--sources",
               paths["sources"], "--out", run_dir, "--overwrite", "--quiet", "--seed", str(seed),
               "--master", "local[2]", "--conf", "spark.eventLog.enabled=true",
               "--conf", f"spark.eventLog.dir=file://{os.path.abspath(events)}"]
    if plan is not None:
        command += ["--conf", f"spark.default.parallelism={plan}"]
    if bootstrap is not None:
        command += ["--bootstrap", str(bootstrap)]
    before = load_average()
    t0 = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "QARLA_BENCH_PEAK": peak_file}) as child:
        sampler = Sampler(child.pid).start()
        out, err = child.communicate()
        samples = sampler.stop()
    done = subprocess.CompletedProcess(command, child.returncode, out, err)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:] or ["no output"]
        shutil.rmtree(events, ignore_errors=True)
        return {"failed": True, "error": f"exit {done.returncode}: {' | '.join(tail)}"}
    with open(os.path.join(run_dir, "run.json"), encoding="utf-8") as handle:
        info = json.load(handle)
    figures = profile_run(run_dir).to_dict()
    stages = {name: float(info["timings"].get(key) or 0.0) for name, key in STAGES}
    windows = {w["stage"]: w for w in info.get("stage_windows", [])}
    writing = windows.get("writing")
    stages["writing"] = round(writing["end"] - writing["start"], 3) \
        if writing and writing.get("end") else figures.get("writing", {}).get("wall_s", 0.0)
    stages["outside"] = round(wall - float(info["elapsed_s"]) - stages["writing"], 3)
    try:
        with open(peak_file, encoding="ascii") as handle:
            peak_mb = int(handle.read()) / 1024
    except (OSError, ValueError):
        peak_mb = None
    shutil.rmtree(events, ignore_errors=True)
    return {"failed": False, "wall_s": wall, "stages": stages,
            "cpu": window_accounts(samples, info.get("stage_windows", [])),
            "jobs": figures["run"]["jobs"],
            "task_s": figures["run"]["task_s"], "critical_path_s":
            figures["run"]["critical_path_s"], "driver_peak_mb": peak_mb,
            "tasks": len(info["testbed"]), "load_before": before, "load_after": load_average()}


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _median_accounts(accounts: List[Dict[str, Dict[str, float]]]) -> Dict[str, Dict[str, float]]:
    """Each stage's median CPU seconds of each kind over the runs that
    have the stage (:func:`devtools.cpu_accounts.window_accounts`)."""
    stages = list(dict.fromkeys(s for a in accounts for s in a))    # the windows' order
    return {s: {k: _median([a[s][k] for a in accounts if s in a]) for k in KINDS}
            for s in stages}


def summarize(runs: List[Dict], big: Optional[Dict]) -> Dict:
    """The medians of a shape's local[2] runs, its 16-core critical path."""
    ok = [r for r in runs if not r.get("failed")]
    if not ok:
        return {"failed": True, "error": runs[0].get("error") if runs else "no run"}
    return {"failed": False, "runs": len(ok), "wall_s": _median([r["wall_s"] for r in ok]),
            "walls_s": [round(r["wall_s"], 1) for r in ok],
            "stages": {s: _median([r["stages"][s] for r in ok])
                       for s in [n for n, _ in STAGES] + list(EXTRA)},
            "cpu": _median_accounts([r.get("cpu") or {} for r in ok]),
            "jobs": max(r["jobs"] for r in ok), "task_s": _median([r["task_s"] for r in ok]),
            "critical_path_s": None if not big or big.get("failed") else big["critical_path_s"],
            "driver_peak_mb": _median([r["driver_peak_mb"] for r in ok]),
            "loads": [(r["load_before"], r["load_after"]) for r in ok]}


def run_shapes(topics: Sequence[int], shapes: Sequence[int], repeats: int, seed: int,
               bootstrap: Optional[int], root: str, big_plan: Optional[int] = 16) -> Dict:
    """Every shape of every N: {N: {shape: summary}}."""
    out: Dict[int, Dict[int, Dict]] = {}
    for n in topics:
        mine = [k for k in shapes if n % k == 0]
        inputs = write_shapes(n, mine, os.path.join(root, "inputs"), seed)
        runs: Dict[int, List[Dict]] = {k: [] for k in mine}
        for r in range(repeats):
            for k in mine:
                label = f"{k}x{n // k}"
                found = run_shape(inputs[k], root, label, seed, bootstrap)
                runs[k].append(found)
                print(f"[tasks] {label} ({r + 1} of {repeats}): "
                      + (f"{found['wall_s']:.1f} s, load {found['load_before']}"
                         if not found["failed"] else f"FAILED {found['error']}"),
                      file=sys.stderr, flush=True)
        bigs = {}
        for k in mine:
            if big_plan:
                label = f"{k}x{n // k}-plan{big_plan}"
                bigs[k] = run_shape(inputs[k], root, label, seed, bootstrap, big_plan)
                if not bigs[k]["failed"]:
                    print(f"[tasks] {label}: critical path {bigs[k]['critical_path_s']:.1f} s",
                          file=sys.stderr, flush=True)
        out[n] = {k: summarize(runs[k], bigs.get(k)) for k in mine}
    return out


# --- printing -----------------------------------------------------------------

def _ratio(a, b) -> str:
    return f"{a / b:.2f}" if a is not None and b else "-"


def shape_lines(found: Dict[int, Dict[int, Dict]]) -> List[str]:
    lines = ["the same topics as 1 task or as many (issue 36): fresh `qarla run` processes at "
             "local[2], medians; each stage's seconds and (its ratio to 1 × N's); critical "
             "path: the 16-core plan's"]
    names = [n for n, _ in STAGES] + list(EXTRA)
    for n, shapes in found.items():
        base = shapes.get(min(shapes)) if shapes else None
        lines.append("")
        lines.append(f"N = {n:,} topics")
        head = f"  {'shape':>9} {'wall s':>14}" + "".join(f" {s:>17}" for s in names) + \
            f" {'jobs':>5} {'task s':>8} {'critical s':>10} {'driver MB':>10}"
        lines.append(head)
        for k, s in shapes.items():
            label = f"{k}x{n // k}"
            if s["failed"]:
                lines.append(f"  {label:>9} FAILED: {s['error']}")
                continue
            ok = base is not None and not base["failed"]
            cells = [f"{s['wall_s']:6.1f} ({_ratio(s['wall_s'], base['wall_s']) if ok else '-':>5})"]
            for name in names:
                v = s["stages"][name]
                b = base["stages"][name] if ok else None
                cells.append(f"{v:8.1f} ({_ratio(v, b):>5})")
            crit = f"{s['critical_path_s']:.1f}" if s["critical_path_s"] is not None else "-"
            peak = f"{s['driver_peak_mb']:.0f}" if s["driver_peak_mb"] is not None else "-"
            lines.append(f"  {label:>9} " + " ".join(f"{c:>14}" if i == 0 else f"{c:>17}"
                                                    for i, c in enumerate(cells))
                         + f" {s['jobs']:>5} {s['task_s']:8.1f} {crit:>10} {peak:>10}")
        lines.append("  loads (before, after) per run: " + "; ".join(
            f"{k}x{n // k}: {s.get('loads')}" for k, s in shapes.items() if not s["failed"]))
        lines += cpu_lines(n, shapes)
    lines += [""] + target_lines(found)
    return lines


def cpu_lines(n: int, shapes: Dict[int, Dict]) -> List[str]:
    """Each shape's CPU seconds by kind (:mod:`devtools.cpu_accounts`) in
    each stage's window (medians), and the difference to 1 × N's: whose
    seconds a shape adds."""
    ok = {k: s for k, s in shapes.items() if not s["failed"] and s.get("cpu")}
    if not ok:
        return []
    base = ok.get(min(ok))
    out = [f"  CPU seconds by kind in each stage's window (python workers, JVM compilers, "
           f"JVM other, driver, other; in (): the difference to {min(ok)}x{n // min(ok)}'s)"]
    for k, s in ok.items():
        for stage, kinds in s["cpu"].items():
            cells = []
            for kind in KINDS:
                v = kinds.get(kind) or 0.0
                b = (base["cpu"].get(stage) or {}).get(kind) if k != min(ok) else None
                cells.append(f"{kind} {v:5.1f}" + (f" ({v - b:+5.1f})" if b is not None
                                                   else ""))
            out.append(f"    {k}x{n // k:<5} {stage:<14} " + "  ".join(cells))
    return out


def target_lines(found: Dict[int, Dict[int, Dict]]) -> List[str]:
    """The issue's targets, each met or not (those the shapes measured)."""
    out = ["targets (issue 36):"]
    names = [n for n, _ in STAGES] + list(EXTRA)

    def say(ok, text):
        out.append(f"  [{'met' if ok else 'NOT met'}] {text}")

    for n, shapes in found.items():
        base = shapes.get(1)
        if base is None or base["failed"]:
            continue
        for k, limit in TARGET_WALL.items():
            s = shapes.get(k)
            if s is None or s["failed"] or (k == 40 and n != 400) or (k == 100 and n != 1000):
                continue
            ratio = s["wall_s"] / base["wall_s"]
            say(ratio <= limit, f"{k}x{n // k} wall {s['wall_s']:.1f} s = {ratio:.2f} × 1x{n}'s "
                f"{base['wall_s']:.1f} s (≤ {limit})")
            if k == 40:
                worse = [f"{name} {s['stages'][name]:.1f} vs {base['stages'][name]:.1f} s"
                         for name in names if name != "outside"
                         and s["stages"][name] > max(TARGET_STAGE[0] * base["stages"][name],
                                                     base["stages"][name] + TARGET_STAGE[1])]
                say(not worse, f"{k}x{n // k}: no stage > {TARGET_STAGE[0]} × its 1x{n} time "
                    f"or > {TARGET_STAGE[1]:.0f} s more" + (f" ({'; '.join(worse)})"
                                                             if worse else ""))
        big = shapes.get(100) if n == 1000 else None
        if big is not None and not big["failed"]:
            if big["critical_path_s"] is not None:
                say(big["critical_path_s"] <= TARGET_CRITICAL_S,
                    f"100x10 critical path of the 16-core plan {big['critical_path_s']:.1f} s "
                    f"(≤ {TARGET_CRITICAL_S:.0f})")
            if big["driver_peak_mb"] and base["driver_peak_mb"]:
                ratio = big["driver_peak_mb"] / base["driver_peak_mb"]
                say(ratio <= TARGET_DRIVER, f"100x10 driver peak {big['driver_peak_mb']:.0f} MB "
                    f"= {ratio:.2f} × 1x1000's ({TARGET_DRIVER} at most)")
        jobs = [s["jobs"] for s in shapes.values() if not s["failed"]]
        if jobs:
            say(max(jobs) <= TARGET_JOBS, f"N = {n}: at most {max(jobs)} Spark jobs a run "
                f"(≤ {TARGET_JOBS})")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape-topics", default="400,1000")
    parser.add_argument("--shape-tasks", default="1,10,40,100")
    parser.add_argument("--shape-runs", type=int, default=3)
    parser.add_argument("--big-plan", type=int, default=16,
                        help="the plan whose critical path is printed (0: none)")
    parser.add_argument("--bootstrap", type=int, default=None)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    topics = [int(x) for x in args.shape_topics.split(",") if x.strip()]
    shapes = [int(x) for x in args.shape_tasks.split(",") if x.strip()]
    if args.quick:
        topics, shapes, args.shape_runs, args.big_plan = [40], [1, 4], 1, 0
    root = args.out or tempfile.mkdtemp(prefix="qarla-shapes-")
    os.makedirs(root, exist_ok=True)
    try:
        found = run_shapes(topics, shapes, args.shape_runs, args.seed, args.bootstrap, root,
                           args.big_plan or None)
    finally:
        if not args.out:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"shapes": {str(n): {str(k): v for k, v in s.items()}
                                  for n, s in found.items()}}, handle, indent=2, default=str)
    print("\n".join(shape_lines(found)))
    return 0 if all(not s["failed"] for shapes_ in found.values() for s in shapes_.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
