"""Where a run's time goes, from Spark's event log (``qarla profile``).

Run with Spark's event log on, then give the run directory (or the log):

    qarla run --out runs/x --conf spark.eventLog.enabled=true \\
        --conf spark.eventLog.dir=file:///tmp/spark-events
    qarla profile runs/x

For each stage of the run (its window is in ``run.json``) and for the whole
run, it prints:

- **jobs** and **tasks**: the Spark jobs the stage started (a table written
  in the background counts for the stage that asked for it) and their tasks;
- **wall**: the stage's duration;
- **task time**: the tasks' summed duration (what the work costs in
  core-seconds, scheduling included);
- **driver**: the time within the stage's window when no task of any job
  ran — the driver planning, collecting, waiting between jobs;
- **critical path**: driver time plus the longest task of each Spark stage
  (of the jobs started in the window): the run's time with unlimited cores,
  which a 2-core machine can measure for a bigger one by running with the
  bigger one's plan (``--conf spark.default.parallelism=16`` gives the plan
  ``local[16]`` gets).

The log is the file Spark wrote (``.zstd``, Spark's default codec, or
uncompressed) or the folder of a rolling log (``eventlog_v2_*``). Pure
functions of the events (:func:`profile`); reading them is
:func:`read_events`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from qarla_spark.names import STAGE_PROPERTY, WARM_STAGE

#: the row of the whole run in :class:`Profile`
WHOLE_RUN = "run"


@dataclass(frozen=True)
class Window:
    """A stage of a run and when it ran (seconds since the epoch)."""

    name: str
    start: float
    end: float


@dataclass
class StageProfile:
    """The figures of one stage (or the whole run): see the module doc."""

    name: str
    jobs: int = 0
    tasks: int = 0
    wall_s: float = 0.0
    task_s: float = 0.0
    driver_s: float = 0.0
    longest_s: float = 0.0          # Σ over Spark stages of their longest task

    @property
    def critical_s(self) -> float:
        return self.driver_s + self.longest_s

    def to_dict(self) -> Dict[str, float]:
        return {"jobs": self.jobs, "tasks": self.tasks, "wall_s": round(self.wall_s, 3),
                "task_s": round(self.task_s, 3), "driver_s": round(self.driver_s, 3),
                "critical_path_s": round(self.critical_s, 3)}


@dataclass
class Profile:
    """Per stage, in order, and the whole run (:data:`WHOLE_RUN`)."""

    stages: List[StageProfile] = field(default_factory=list)
    run: StageProfile = field(default_factory=lambda: StageProfile(WHOLE_RUN))
    #: jobs whose stage is not among the windows (none in a qarla run)
    unattributed_jobs: int = 0
    #: the jobs that started the Python workers before the stages
    #: (:data:`WARM_STAGE`): in the run's jobs and task time, not on its
    #: critical path (they run while the session starts, before the stages)
    warm: Optional[StageProfile] = None

    def to_dict(self) -> Dict[str, Dict[str, float]]:
        out = {} if self.warm is None else {WARM_STAGE: self.warm.to_dict()}
        out.update({s.name: s.to_dict() for s in self.stages})
        out[WHOLE_RUN] = self.run.to_dict()
        return out


@dataclass(frozen=True)
class _Job:
    job_id: int
    submitted: float
    stage: Optional[str]
    spark_stages: Tuple[int, ...]


# ---------------------------------------------------------------------------
# the figures (pure)
# ---------------------------------------------------------------------------

def _busy(intervals: Sequence[Tuple[float, float]], start: float, end: float) -> float:
    """Seconds of [start, end] covered by at least one interval."""
    clipped = sorted((max(a, start), min(b, end)) for a, b in intervals
                     if b > start and a < end)
    total, cur_a, cur_b = 0.0, None, None
    for a, b in clipped:
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a
    return total


def profile(events: Iterable[dict], windows: Optional[Sequence[Window]] = None) -> Profile:
    """The :class:`Profile` of a stream of event-log records. ``windows``:
    the run's stages (from ``run.json``); without them, each stage named by
    the jobs' :data:`STAGE_PROPERTY` spans its jobs, and the run spans all
    jobs."""
    jobs: Dict[int, _Job] = {}
    job_end: Dict[int, float] = {}
    tasks: List[Tuple[int, float, float]] = []        # (spark stage, launch, finish)
    for event in events:
        kind = event.get("Event")
        if kind == "SparkListenerJobStart":
            props = event.get("Properties") or {}
            jobs[event["Job ID"]] = _Job(event["Job ID"], event["Submission Time"] / 1000,
                                         props.get(STAGE_PROPERTY),
                                         tuple(event.get("Stage IDs", [])))
        elif kind == "SparkListenerJobEnd":
            job_end[event["Job ID"]] = event["Completion Time"] / 1000
        elif kind == "SparkListenerTaskEnd":
            info = event.get("Task Info") or {}
            if "Launch Time" in info and "Finish Time" in info:
                tasks.append((event["Stage ID"], info["Launch Time"] / 1000,
                              info["Finish Time"] / 1000))
    stage_job = {s: j.job_id for j in jobs.values() for s in j.spark_stages}
    by_job_tasks: Dict[int, List[Tuple[int, float, float]]] = {}
    for t in tasks:
        job = stage_job.get(t[0])
        if job is not None:
            by_job_tasks.setdefault(job, []).append(t)
    intervals = [(a, b) for _, a, b in tasks]
    if windows is None:
        windows = _windows_of(jobs, job_end, by_job_tasks)
    out = Profile()
    names = {w.name for w in windows}
    if windows:
        start, end = min(w.start for w in windows), max(w.end for w in windows)
        ours = _jobs_of_run(jobs, start, end, names)
        for w in windows:
            mine = [j for j in ours if j.stage == w.name]
            out.stages.append(_figures(w.name, w.start, w.end, mine, by_job_tasks, intervals))
        warm = [j for j in ours if j.stage == WARM_STAGE]
        if warm:
            first = min(j.submitted for j in warm)
            last = max(job_end.get(j.job_id, j.submitted) for j in warm)
            out.warm = _figures(WARM_STAGE, first, last, warm, by_job_tasks, intervals)
        out.run = _figures(WHOLE_RUN, start, end, ours, by_job_tasks, intervals,
                           critical=[j for j in ours if j.stage != WARM_STAGE])
        out.unattributed_jobs = sum(1 for j in ours
                                    if j.stage not in names and j.stage != WARM_STAGE)
    return out


def _jobs_of_run(jobs: Dict[int, "_Job"], start: float, end: float,
                 stages) -> List["_Job"]:
    """The jobs of the run spanning ``start``-``end`` in a session's log
    (which may hold other runs): those submitted within it, and the job that
    started the workers when no job of a stage (``stages``) came between
    them (the session started for this run)."""
    ours = [j for j in jobs.values() if start <= j.submitted <= end]
    before = sorted((j for j in jobs.values() if j.submitted < start
                     and (j.stage == WARM_STAGE or j.stage in stages)),
                    key=lambda j: j.submitted)
    if before and before[-1].stage == WARM_STAGE:
        ours.insert(0, before[-1])
    return ours


def _figures(name, start, end, jobs, by_job_tasks, intervals, critical=None) -> StageProfile:
    """A stage's figures; ``critical``: the jobs whose longest tasks count
    on the critical path (default ``jobs``)."""
    mine = [t for j in jobs for t in by_job_tasks.get(j.job_id, [])]
    longest: Dict[int, float] = {}
    on_path = mine if critical is None else \
        [t for j in critical for t in by_job_tasks.get(j.job_id, [])]
    for stage, a, b in on_path:
        longest[stage] = max(longest.get(stage, 0.0), b - a)
    wall = max(0.0, end - start)
    return StageProfile(name, jobs=len(jobs), tasks=len(mine), wall_s=wall,
                        task_s=sum(b - a for _, a, b in mine),
                        driver_s=max(0.0, wall - _busy(intervals, start, end)),
                        longest_s=sum(longest.values()))


def _windows_of(jobs, job_end, by_job_tasks) -> List[Window]:
    """Stage windows from the jobs alone: a stage spans its jobs, and the
    stages follow one another in the order their first job started."""
    spans: Dict[str, List[float]] = {}
    for j in sorted(jobs.values(), key=lambda j: j.submitted):
        end = job_end.get(j.job_id, max((b for _, _, b in by_job_tasks.get(j.job_id, [])),
                                        default=j.submitted))
        name = j.stage or "(other)"
        span = spans.setdefault(name, [j.submitted, end])
        span[0], span[1] = min(span[0], j.submitted), max(span[1], end)
    return [Window(name, a, b) for name, (a, b) in spans.items()]


def windows_of_run(info: dict, last: Optional[float] = None) -> Optional[List[Window]]:
    """The stage windows a run recorded in ``run.json`` (``stage_windows``),
    or None. The last stage was still open when run.json was written: it
    ends at ``last`` (the log's last event), else at the run's end."""
    found = info.get("stage_windows")
    if not found:
        return None
    end_of_run = last
    if end_of_run is None:
        end_of_run = max(float(w["end"] or w["start"]) for w in found)
    return [Window(w["stage"], float(w["start"]),
                   float(w["end"]) if w.get("end") is not None else end_of_run)
            for w in found]


def last_event_time(events: Iterable[dict]) -> Optional[float]:
    """The time (seconds) of the last job or task end of a log."""
    last = None
    for event in events:
        kind = event.get("Event")
        t = None
        if kind == "SparkListenerJobEnd":
            t = event["Completion Time"] / 1000
        elif kind == "SparkListenerTaskEnd":
            t = (event.get("Task Info") or {}).get("Finish Time", 0) / 1000
        if t is not None and (last is None or t > last):
            last = t
    return last


def format_profile(p: Profile) -> str:
    """The table ``qarla profile`` prints."""
    header = (f"{'stage':<16}{'jobs':>6}{'tasks':>8}{'wall s':>9}{'task s':>9}"
              f"{'driver s':>10}{'critical s':>12}")
    lines = [header]
    for s in p.stages + [p.run]:
        lines.append(f"{s.name:<16}{s.jobs:>6}{s.tasks:>8}{s.wall_s:>9.1f}{s.task_s:>9.1f}"
                     f"{s.driver_s:>10.1f}{s.critical_s:>12.1f}")
    lines.append("critical path: driver time plus the longest task of each Spark stage, "
                 "the time no number of cores can beat")
    if p.warm is not None:
        lines.append(f"before the stages: {p.warm.jobs} job(s) starting the Python workers "
                     f"while the session starts, {p.warm.tasks} tasks, {p.warm.task_s:.1f} s "
                     "of task time (in the run's jobs and task time, not on its critical path)")
    if p.unattributed_jobs:
        lines.append(f"{p.unattributed_jobs} job(s) outside the run's stages (another run of "
                     "the same session?)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# reading a log
# ---------------------------------------------------------------------------

class EventLogError(Exception):
    """An event log that cannot be found or read (one sentence)."""


def log_file(path: str) -> str:
    """The events file of ``path``: a file, or a rolling log's folder."""
    if os.path.isdir(path):
        parts = sorted(f for f in os.listdir(path) if f.startswith("events_"))
        if not parts:
            raise EventLogError(f"{path} holds no events_* file of a Spark event log")
        if len(parts) > 1:
            raise EventLogError(f"{path} is a log rolled over {len(parts)} files: give them "
                                "one at a time, or set spark.eventLog.rolling.enabled=false")
        return os.path.join(path, parts[0])
    if not os.path.exists(path):
        raise EventLogError(f"{path} does not exist")
    return path


def read_events(path: str) -> Iterator[dict]:
    """The records of an event log (a file or a rolling log's folder;
    zstd-compressed or plain)."""
    path = log_file(path)
    if path.endswith((".lz4", ".snappy", ".lzf")):
        raise EventLogError(f"cannot read {path}: write the log with the zstd codec "
                            "(Spark's default) or --conf spark.eventLog.compress=false")
    if path.endswith((".zstd", ".zst")):
        import pyarrow as pa
        with pa.OSFile(path, "rb") as raw, pa.CompressedInputStream(raw, "zstd") as stream:
            data = stream.read()
        lines: Iterable = data.decode("utf-8").splitlines()
    else:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    for line in lines:
        if line.strip():
            yield json.loads(line)


def find_log(info: dict) -> str:
    """The event log of a run, from what ``run.json`` recorded
    (``spark_application_id`` and ``event_log_dir``)."""
    app = info.get("spark_application_id")
    where = info.get("event_log_dir")
    if not where:
        raise EventLogError("the run was made without Spark's event log: run it again with "
                            "--conf spark.eventLog.enabled=true --conf "
                            "spark.eventLog.dir=file:///SOME/DIR, or give the log's path")
    folder = where[len("file:"):] if where.startswith("file:") else where
    folder = "/" + folder.lstrip("/") if where.startswith("file:") else folder
    if not os.path.isdir(folder):
        raise EventLogError(f"the run's event log folder {where} is not on this machine's "
                            "file system: copy the log here and give its path")
    for name in sorted(os.listdir(folder)):
        if app and app in name:
            return os.path.join(folder, name)
    raise EventLogError(f"no event log of application {app} in {where}")


def app_end_time(events: Iterable[dict]) -> Optional[float]:
    """When the application ended (seconds), if the log says."""
    for event in events:
        if event.get("Event") == "SparkListenerApplicationEnd":
            return event["Timestamp"] / 1000
    return None


def profile_run(run_dir: Optional[str] = None, log: Optional[str] = None) -> Profile:
    """The profile of a finished run (its ``run.json``'s stage windows; the
    event log it names, or ``log``), or of a log alone."""
    info = None
    if run_dir is not None:
        from qarla_spark.report.data import read_local_run_json
        info = read_local_run_json(run_dir)
        if log is None:
            log = find_log(info)
    if log is None:
        raise EventLogError("give a run directory or an event log")
    events = list(read_events(log))
    windows = None
    if info is not None:
        end = app_end_time(events) or last_event_time(events)
        windows = windows_of_run(info, end)
    return profile(events, windows)
