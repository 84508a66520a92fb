"""Where a run's time goes, from Spark's event log: one line per Spark job
(when it started, how long it took, its tasks, its call site) and the jobs
summed per call site, longest first (issues 13 and 14: the fixed cost per
job is what SummEval's run and the cluster pay for).

    qarla run --out runs/x --overwrite --conf spark.eventLog.enabled=true \\
        --conf spark.eventLog.dir=file:///tmp/events --conf spark.eventLog.compress=false
    python -m devtools.spark_jobs /tmp/events/<the application's log>

The log is the file Spark wrote (zstd-compressed, Spark's default, or
plain), or the folder of a rolling log (``eventlog_v2_*``), read by
:func:`qarla_spark.eventlog.read_events`. ``qarla profile`` gives the
figures per stage of a run; this lists every job.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple


@dataclass(frozen=True)
class SparkJob:
    """One Spark job of the log, times in seconds from the application's start."""

    job_id: int
    start_s: float
    duration_s: Optional[float]     # None: the log ends before the job did
    tasks: int                      # tasks of the stages that ran (skipped stages left out)
    call_site: str
    description: str = ""           # spark.job.description (qarla names its table writes)

    @property
    def label(self) -> str:
        """The call site, or the description of a job started without one
        (a background thread's, e.g. a table write)."""
        return self.call_site or self.description


def jobs_of(events: Iterable[dict]) -> List[SparkJob]:
    """The jobs of a stream of event-log records (pure), in job order."""
    started: Dict[int, dict] = {}
    ended: Dict[int, int] = {}
    stage_tasks: Dict[int, int] = {}
    app_start: Optional[int] = None
    for event in events:
        kind = event.get("Event")
        if kind == "SparkListenerApplicationStart":
            app_start = event["Timestamp"]
        elif kind == "SparkListenerJobStart":
            started[event["Job ID"]] = event
        elif kind == "SparkListenerJobEnd":
            ended[event["Job ID"]] = event["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            stage_tasks[info["Stage ID"]] = info["Number of Tasks"]
    if not started:
        return []
    origin = app_start if app_start is not None else min(e["Submission Time"]
                                                         for e in started.values())
    out = []
    for job_id in sorted(started):
        event = started[job_id]
        submitted = event["Submission Time"]
        end = ended.get(job_id)
        properties = event.get("Properties") or {}
        out.append(SparkJob(
            job_id, (submitted - origin) / 1000,
            None if end is None else (end - submitted) / 1000,
            sum(stage_tasks.get(s, 0) for s in event.get("Stage IDs", [])),
            properties.get("callSite.short", ""), properties.get("spark.job.description", "")))
    return out


def by_call_site(jobs: Iterable[SparkJob]) -> List[Tuple[str, int, float]]:
    """(label: call site or description, jobs, seconds summed), longest
    first; jobs still running count for nothing."""
    seconds: Counter = Counter()
    count: Counter = Counter()
    for job in jobs:
        seconds[job.label] += job.duration_s or 0.0
        count[job.label] += 1
    return sorted(((site, count[site], seconds[site]) for site in count),
                  key=lambda row: (-row[2], row[0]))


def report(jobs: List[SparkJob], most: int) -> List[str]:
    lines = [f"{len(jobs)} Spark jobs, {sum(j.tasks for j in jobs):,} tasks"]
    for j in jobs:
        took = "running" if j.duration_s is None else f"{j.duration_s:6.2f} s"
        lines.append(f"job {j.job_id:4d}  +{j.start_s:7.1f} s  {took}  {j.tasks:5d} tasks  "
                     f"{j.label}")
    lines.append("by call site or description (seconds summed: jobs that overlap count "
                 "twice):")
    for site, n, seconds in by_call_site(jobs)[:most]:
        lines.append(f"  {seconds:7.2f} s  {n:4d} jobs  {site or '(no call site or description)'}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", help="a Spark event log file, or a rolling log's folder")
    parser.add_argument("--most", type=int, default=30, help="call sites shown (default 30)")
    args = parser.parse_args(argv)
    from qarla_spark.eventlog import EventLogError, read_events
    try:
        events = list(read_events(args.log))
    except EventLogError as exc:
        raise SystemExit(f"spark_jobs: {exc}") from None
    print("\n".join(report(jobs_of(events), args.most)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
