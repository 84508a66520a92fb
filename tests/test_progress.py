"""What a run says while it runs (qarla_spark.progress): the words, the
stage protocol, the live line on a terminal and plain lines elsewhere."""

from __future__ import annotations

import io
import time

import pytest

from qarla_spark import pipeline
from qarla_spark.progress import (NullProgress, Progress, SparkCounter, SparkSnapshot,
                                  TerminalProgress, clock, finished_line, spark_line, stage,
                                  started_line)


class Recorder:
    """A Progress that remembers what it heard."""

    def __init__(self):
        self.events = []

    def testbed(self, text):
        self.events.append(("testbed", text))

    def stage_started(self, name):
        self.events.append(("started", name))

    def stage_finished(self, name, seconds):
        self.events.append(("finished", name))


class FakeCounter:
    def __init__(self, snap):
        self.snap, self.marks = snap, 0

    def mark(self):
        self.marks += 1

    def snapshot(self):
        return self.snap


def test_the_words():
    assert clock(7.9) == "0:07" and clock(754) == "12:34" and clock(3723) == "1:02:03"
    assert started_line("similarities", 12) == "qarla [0:12] similarities ..."
    assert finished_line("cube", 3.21, 75) == "qarla [1:15] cube done in 3.2 s"
    assert finished_line("similarities", 312, 330) == "qarla [5:30] similarities done in 5:12"
    assert spark_line("qarla", 62, 48, SparkSnapshot(3, 1, 34, 200)) == \
        "qarla [1:02] qarla 0:48 · Spark jobs 3 done, 1 running · tasks 34/200"
    assert spark_line("cube", 5, 1, None) == "qarla [0:05] cube 0:01"
    assert spark_line("cube", 5, 1, SparkSnapshot()) == "qarla [0:05] cube 0:01"


def test_null_and_terminal_progress_follow_the_protocol():
    assert isinstance(NullProgress(), Progress)
    assert isinstance(TerminalProgress(io.StringIO(), io.StringIO(), tty=False), Progress)


def test_stage_reports_start_end_and_timing_but_not_a_failed_stage():
    rec, timings = Recorder(), {}
    with stage(rec, "testbed tables", timings, "write_testbed_s"):
        pass
    with stage(rec, "cube", timings):
        pass
    with pytest.raises(KeyboardInterrupt):
        with stage(rec, "qarla", timings):
            raise KeyboardInterrupt
    assert rec.events == [("started", "testbed tables"), ("finished", "testbed tables"),
                          ("started", "cube"), ("finished", "cube"), ("started", "qarla")]
    assert set(timings) == {"write_testbed_s", "cube_s"}


def test_plain_lines_when_not_a_terminal():
    """Not a terminal (CI, a log): the testbed on stdout, one line per stage
    start and end on stderr, no carriage return; a long stage adds a plain
    line every plain_every seconds."""
    out, err = io.StringIO(), io.StringIO()
    p = TerminalProgress(out, err, counter=FakeCounter(SparkSnapshot(2, 1, 5, 10)), tty=False,
                         interval=0.02, plain_every=0.1)
    p.testbed("task t:\n  topics: 2")
    p.stage_started("similarities")
    time.sleep(0.35)
    p.stage_finished("similarities", 0.35)
    p.close()
    assert out.getvalue() == "task t:\n  topics: 2\n"
    lines = err.getvalue().splitlines()
    assert "\r" not in err.getvalue()
    assert lines[0].endswith("similarities ...") and lines[-1].endswith(
        "similarities done in 0.3 s")
    middle = lines[1:-1]
    assert 1 <= len(middle) <= 4 and all("Spark jobs 2 done, 1 running" in m for m in middle)


def test_live_line_on_a_terminal_is_redrawn_in_place_and_erased():
    err = io.StringIO()
    counter = FakeCounter(SparkSnapshot(1, 1, 3, 8))
    p = TerminalProgress(io.StringIO(), err, counter=counter, tty=True, interval=0.02)
    p.stage_started("qarla")
    time.sleep(0.15)
    p.message("qarla: warning: task t: 1 topic(s) ... are skipped: d1")
    time.sleep(0.1)
    p.stage_finished("qarla", 0.25)
    text = err.getvalue()
    assert counter.marks == 1
    assert text.count("\rqarla [0:00] qarla 0:00 · Spark jobs 1 done, 1 running · tasks 3/8") >= 2
    # what stays on the screen once the carriage returns are applied
    screen = [line.rsplit("\r", 1)[-1].rstrip() for line in text.split("\n")]
    assert [s for s in screen if s] == ["qarla [0:00] qarla ...",
                                       "qarla: warning: task t: 1 topic(s) ... are skipped: d1",
                                       "qarla [0:00] qarla done in 0.2 s"]


class FakeTracker:
    """Spark's status tracker: jobs 0-4, of which 0 and 1 before the stage."""

    def __init__(self):
        self.jobs = {0: "SUCCEEDED", 1: "SUCCEEDED"}

    def getJobIdsForGroup(self, group=None):
        return [j for j, s in self.jobs.items() if s != "RUNNING"]

    def getActiveJobsIds(self):
        return [j for j, s in self.jobs.items() if s == "RUNNING"]

    def getJobInfo(self, job):
        return type("Info", (), {"status": self.jobs[job]})()

    def getActiveStageIds(self):
        return [7, 8]

    def getStageInfo(self, stage_id):
        return type("Stage", (), {"numCompletedTasks": 3, "numTasks": 10})()


def test_spark_counter_counts_the_jobs_of_the_stage_and_the_running_tasks():
    tracker = FakeTracker()
    sc = type("SC", (), {"statusTracker": lambda self: tracker})()
    counter = SparkCounter(sc)
    counter.mark()
    tracker.jobs.update({2: "SUCCEEDED", 3: "FAILED", 4: "RUNNING"})
    assert counter.snapshot() == SparkSnapshot(jobs_done=1, jobs_running=1, tasks_done=6,
                                               tasks_total=20)


def test_spark_counter_says_nothing_when_spark_is_gone():
    def gone(self):
        raise RuntimeError("py4j: the JVM is gone")

    counter = SparkCounter(type("SC", (), {"statusTracker": gone})())
    counter.mark()
    assert counter.snapshot() is None
    err = io.StringIO()
    p = TerminalProgress(io.StringIO(), err, counter=counter, tty=True, interval=0.02)
    p.stage_started("hbr")
    time.sleep(0.1)
    p.close()
    assert err.getvalue().splitlines()[0] == "qarla [0:00] hbr ..."


def test_summary_leaves_out_the_testbed_printed_first():
    class Report:
        def format(self):
            return "task t:\n  topics: 2"

    result = pipeline.RunResult("runs/x", Report(), {"tables": {"king": {}},
                                                     "signature": "sig"}, ["task t (QARLA):"])
    assert result.summary().startswith("task t:\n  topics: 2\ntask t (QARLA):")
    assert result.summary(testbed=False).startswith("task t (QARLA):")
