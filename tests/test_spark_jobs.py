"""devtools/spark_jobs.py: Spark's event log read into jobs and call sites
(pure; the events are of the shape Spark 4 writes, trimmed to the fields
read)."""

from __future__ import annotations

import json

import pytest

from devtools import spark_jobs


def _events():
    site = {"callSite.short": "collect at qarla.py:142"}
    return [
        {"Event": "SparkListenerApplicationStart", "Timestamp": 1_000},
        {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 3_000,
         "Stage IDs": [0, 1], "Properties": site},
        {"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": 0,
                                                                 "Number of Tasks": 4}},
        # stage 1 was skipped (its shuffle output reused): never completed, no tasks
        {"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 4_500},
        {"Event": "SparkListenerJobStart", "Job ID": 2, "Submission Time": 5_000,
         "Stage IDs": [2], "Properties": {"spark.job.description": "qarla: write king"}},
        {"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": 2,
                                                                 "Number of Tasks": 2}},
        {"Event": "SparkListenerJobEnd", "Job ID": 2, "Completion Time": 5_250},
        {"Event": "SparkListenerJobStart", "Job ID": 1, "Submission Time": 4_000,
         "Stage IDs": [3], "Properties": site},
        {"Event": "SparkListenerJobEnd", "Job ID": 1, "Completion Time": 4_100},
        {"Event": "SparkListenerJobStart", "Job ID": 3, "Submission Time": 6_000,
         "Stage IDs": [4], "Properties": site},          # the log ends before it did
    ]


def test_jobs_in_order_with_times_from_the_application_start_and_tasks_run():
    jobs = spark_jobs.jobs_of(_events())
    assert [j.job_id for j in jobs] == [0, 1, 2, 3]
    assert [j.start_s for j in jobs] == [2.0, 3.0, 4.0, 5.0]
    assert [j.duration_s for j in jobs] == [1.5, 0.1, 0.25, None]
    assert [j.tasks for j in jobs] == [4, 0, 2, 0]
    assert jobs[2].call_site == "" and jobs[2].label == "qarla: write king"
    assert jobs[0].label == "collect at qarla.py:142"


def test_call_sites_summed_longest_first():
    rows = spark_jobs.by_call_site(spark_jobs.jobs_of(_events()))
    assert rows == [("collect at qarla.py:142", 3, pytest.approx(1.6)),
                    ("qarla: write king", 1, 0.25)]
    assert spark_jobs.jobs_of([]) == []


def test_the_command_reads_a_log_file_or_a_rolling_logs_folder(tmp_path, capsys):
    folder = tmp_path / "eventlog_v2_local-1"
    folder.mkdir()
    (folder / "events_1_local-1").write_text(
        "\n".join(json.dumps(e) for e in _events()) + "\n")
    for given in (folder, folder / "events_1_local-1"):
        assert spark_jobs.main([str(given)]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "4 Spark jobs, 6 tasks"
        assert out[4].startswith("job    3  +    5.0 s  running")
        assert out[-2].strip().startswith("1.60 s     3 jobs  collect at qarla.py:142")
    with pytest.raises(SystemExit, match="does not exist"):
        spark_jobs.main([str(tmp_path / "missing")])
    (tmp_path / "log.lz4").write_text("")
    with pytest.raises(SystemExit, match="zstd codec"):
        spark_jobs.main([str(tmp_path / "log.lz4")])
