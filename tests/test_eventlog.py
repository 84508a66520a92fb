"""``qarla profile``: where a run's time goes, from Spark's event log
(issue 26) — the figures on a hand-made log, reading the log Spark writes
(zstd or plain, a rolling log's folder), and a real run profiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from qarla_spark.names import STAGE_PROPERTY
from qarla_spark.eventlog import (EventLogError, Window, format_profile,
                                  profile, read_events, windows_of_run)


def job(job_id, t, stage, spark_stages):
    return {"Event": "SparkListenerJobStart", "Job ID": job_id, "Submission Time": t * 1000,
            "Stage IDs": spark_stages, "Properties": {STAGE_PROPERTY: stage}}


def job_end(job_id, t):
    return {"Event": "SparkListenerJobEnd", "Job ID": job_id, "Completion Time": t * 1000}


def task(stage_id, launch, finish):
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage_id,
            "Task Info": {"Launch Time": launch * 1000, "Finish Time": finish * 1000}}


EVENTS = [
    # stage "a" (window 0-10): job 0 with Spark stages 0 (two tasks) and 1
    job(0, 1, "a", [0, 1]), task(0, 1, 3), task(0, 1, 2), task(1, 3, 4), job_end(0, 4),
    # a job of "a" whose stage was skipped (no task)
    job(1, 5, "a", [2]), job_end(1, 5),
    # stage "b" (window 10-20): job 2, one stage, tasks 11-12 and 11-15
    job(2, 11, "b", [3]), task(3, 11, 12), task(3, 11, 15), job_end(2, 15),
    # a background write asked for by "a", running in "b"'s window
    job(3, 16, "a", [4]), task(4, 16, 17), job_end(3, 17),
]


def test_figures_per_stage_and_for_the_run():
    p = profile(EVENTS, [Window("a", 0, 10), Window("b", 10, 20)])
    a, b = p.stages
    assert (a.name, a.jobs, a.tasks) == ("a", 3, 4)
    assert a.task_s == pytest.approx(2 + 1 + 1 + 1)
    # a's window: tasks run 1-4; no task runs 0-1 and 4-10
    assert a.wall_s == 10 and a.driver_s == pytest.approx(7)
    # critical path: driver time + longest task of Spark stages 0, 1 and 4
    assert a.critical_s == pytest.approx(7 + 2 + 1 + 1)
    # b's window 10-20: tasks 11-15 and 16-17 (a's write) run in it
    assert (b.jobs, b.tasks, b.driver_s) == (1, 2, pytest.approx(10 - 5))
    assert b.critical_s == pytest.approx(5 + 4)
    run = p.run
    assert (run.jobs, run.tasks, run.wall_s) == (4, 6, 20)
    assert run.driver_s == pytest.approx(20 - 3 - 4 - 1)
    assert run.critical_s == pytest.approx(12 + 2 + 1 + 4 + 1)
    text = format_profile(p)
    assert text.splitlines()[0].split()[:3] == ["stage", "jobs", "tasks"]
    assert "critical path" in text and p.unattributed_jobs == 0
    assert p.to_dict()["run"]["critical_path_s"] == pytest.approx(20.0)


def test_the_workers_warm_up_counts_in_task_time_not_on_the_critical_path():
    """Issue 26: the job that starts the Python workers runs while the
    session starts, before the first stage: its tasks are the run's CPU, but
    not on its critical path; the profile says so on a line of its own."""
    from qarla_spark.names import WARM_STAGE
    warm = [job(9, -3, WARM_STAGE, [9]), task(9, -3, -1), task(9, -3, -2.5), job_end(9, -1)]
    p = profile(warm + EVENTS, [Window("a", 0, 10), Window("b", 10, 20)])
    plain = profile(EVENTS, [Window("a", 0, 10), Window("b", 10, 20)])
    assert p.run.critical_s == pytest.approx(plain.run.critical_s)
    assert p.run.task_s == pytest.approx(plain.run.task_s + 2 + 0.5)
    assert p.run.jobs == plain.run.jobs + 1 and p.unattributed_jobs == 0
    assert (p.warm.jobs, p.warm.tasks) == (1, 2)
    assert "before the stages: 1 job(s) starting the Python workers" in format_profile(p)
    assert list(p.to_dict())[0] == WARM_STAGE


def test_without_windows_stages_span_their_jobs():
    p = profile(EVENTS)
    assert [s.name for s in p.stages] == ["a", "b"]
    assert p.stages[0].wall_s == pytest.approx(17 - 1)     # a's jobs: 1 to 17
    assert p.run.jobs == 4


def test_windows_of_run_close_the_open_last_stage():
    info = {"stage_windows": [{"stage": "a", "start": 0, "end": 10},
                              {"stage": "writing", "start": 10, "end": None}]}
    assert windows_of_run(info, 25.0) == [Window("a", 0, 10), Window("writing", 10, 25.0)]
    assert windows_of_run(info)[-1].end == 10.0
    assert windows_of_run({}) is None


def test_reading_a_log_plain_zstd_and_rolling(tmp_path):
    import pyarrow as pa
    lines = "".join(json.dumps(e) + "\n" for e in EVENTS).encode()
    plain = tmp_path / "app-1"
    plain.write_bytes(lines)
    packed = tmp_path / "app-2.zstd"
    with pa.OSFile(str(packed), "wb") as raw, pa.CompressedOutputStream(raw, "zstd") as out:
        out.write(lines)
    rolling = tmp_path / "eventlog_v2_app-3"
    rolling.mkdir()
    (rolling / "events_1_app-3").write_bytes(lines)
    (rolling / "appstatus_app-3").write_bytes(b"")
    for path in (plain, packed, rolling):
        assert list(read_events(str(path))) == EVENTS
    with pytest.raises(EventLogError, match="does not exist"):
        list(read_events(str(tmp_path / "nope")))
    (rolling / "events_2_app-3").write_bytes(lines)
    with pytest.raises(EventLogError, match="rolled over 2 files"):
        list(read_events(str(rolling)))
    with pytest.raises(EventLogError, match="zstd codec"):
        list(read_events(_touch(tmp_path / "app-4.lz4")))


def _touch(path):
    path.write_bytes(b"")
    return str(path)


@pytest.mark.slow
def test_a_run_with_the_event_log_is_profiled_per_stage(tmp_path):
    """``qarla run`` with Spark's event log on, then ``qarla profile RUN``:
    a row per stage of the run with its Spark jobs, and the whole run."""
    from helpers import make_testbed, write_jsonl
    summaries = write_jsonl(tmp_path / "in.jsonl", make_testbed(n_topics=3))
    events = tmp_path / "events"
    events.mkdir()
    out = tmp_path / "run"
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    subprocess.run([sys.executable, "-m", "qarla_spark.cli", "run", str(summaries), "--out",
                    str(out), "-q", "--bootstrap", "50", "--master", "local[2]",
                    "--conf", "spark.eventLog.enabled=true",
                    "--conf", f"spark.eventLog.dir=file://{events}"],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    done = subprocess.run([sys.executable, "-m", "qarla_spark.cli", "profile", str(out),
                           "--json"], check=True, env=env, capture_output=True, text=True)
    figures = json.loads(done.stdout)
    from qarla_spark.names import WARM_STAGE
    assert list(figures) == [WARM_STAGE, "testbed tables", "similarities", "qarla", "hbr",
                             "statistics", "writing", "run"]
    assert figures["qarla"]["jobs"] >= 3 and figures["run"]["jobs"] == sum(
        f["jobs"] for name, f in figures.items() if name != "run")
    assert 0 < figures["run"]["critical_path_s"] <= figures["run"]["wall_s"] + 1e-6
    text = subprocess.run([sys.executable, "-m", "qarla_spark.cli", "profile", str(out)],
                          check=True, env=env, capture_output=True, text=True).stdout
    assert text.splitlines()[0].startswith("stage") and "critical path" in text


def test_a_session_log_of_several_runs_gives_each_run_its_own_jobs():
    """A session's log (a notebook, the benchmark) holds several runs with
    the same stage names: each run's figures are those of the jobs
    submitted in its span; the workers' warm-up belongs to the first."""
    from qarla_spark.names import WARM_STAGE
    warm = [job(9, -3, WARM_STAGE, [9]), task(9, -3, -1), job_end(9, -1)]
    later = [dict(e) for e in EVENTS]
    for e in later:
        for k in ("Submission Time", "Completion Time"):
            if k in e:
                e[k] = e[k] + 100_000
        if "Job ID" in e:
            e["Job ID"] += 50
        if "Stage IDs" in e:
            e["Stage IDs"] = [s + 50 for s in e["Stage IDs"]]
        if "Stage ID" in e:
            e["Stage ID"] += 50
            info = e["Task Info"]
            e["Task Info"] = {k: v + 100_000 for k, v in info.items()}
    events = warm + EVENTS + later
    windows = [Window("a", 0, 10), Window("b", 10, 20)]
    first = profile(events, windows)
    second = profile(events, [Window(w.name, w.start + 100, w.end + 100) for w in windows])
    alone = profile(EVENTS, windows)
    assert first.warm is not None and second.warm is None
    for p in (first, second):
        assert [s.to_dict() for s in p.stages] == [s.to_dict() for s in alone.stages]
        assert p.run.critical_s == pytest.approx(alone.run.critical_s)
    assert second.run.jobs == alone.run.jobs and first.run.jobs == alone.run.jobs + 1
