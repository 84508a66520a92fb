"""Failures on Spark's executors reach the user as one sentence naming the
cause and the fix (qarla_spark.errors.executor_failure; issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qarla_spark.errors import executor_failure

GOLDEN = Path(__file__).parent / "golden" / "executor_failures"


def test_missing_python_program_names_the_setting():
    text = (GOLDEN / "missing_python.txt").read_text()
    said = executor_failure(text)
    assert said == ("Spark's executors cannot start Python '/nonexistent/python' (No such file "
                    "or directory): set PYSPARK_PYTHON (or spark.pyspark.python) to an absolute "
                    "path that exists on every executor")


def test_missing_module_names_it_and_the_fix():
    text = (GOLDEN / "missing_module.txt").read_text()
    said = executor_failure(text)
    assert said.startswith("Spark's executors cannot import the Python module 'pyarrow'")
    assert "qarla package" in said and "\n" not in said
    # the package itself: the README's way to ship it
    package = text.replace("No module named 'pyarrow'", "No module named 'qarla_spark'")
    said = executor_failure(package)
    assert said.startswith("Spark's executors cannot import qarla_spark (their Python does "
                           "not have qarla_spark installed): ship the package with the job")


def test_other_python_failures_give_the_last_raised_line():
    text = ("An exception was thrown from the Python worker:\nTraceback (most recent call "
            "last):\n  File \"x.py\", line 1, in f\nMemoryError: cannot allocate 3 GB\n"
            "\tat org.apache.spark.api.python.BasePythonRunner")
    assert executor_failure(text) == ("a Python task failed on an executor: "
                                      "MemoryError: cannot allocate 3 GB")
    lost = ("org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in "
            "stage 1.0 failed 4 times, most recent failure: Lost task 0.3 in stage 1.0 (TID 9) "
            "(10.0.0.2 executor 3): ExecutorLostFailure (executor 3 exited: killed)\n\tat x")
    assert executor_failure(lost) == ("a Spark task failed on an executor: ExecutorLostFailure "
                                      "(executor 3 exited: killed)")
    assert executor_failure("java.lang.NullPointerException at Foo.bar") is None


@pytest.mark.slow
def test_a_run_whose_executors_cannot_start_python_says_so(tmp_path):
    """End to end: `qarla run` with a PYSPARK_PYTHON that does not exist ends
    with the sentence above (exit 70), no Java or Python traceback."""
    env = dict(os.environ, PYSPARK_PYTHON="/nonexistent/python", SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.run([sys.executable, "-m", "qarla_spark.cli", "run", "--quiet",
                           "--out", str(tmp_path / "out"), "--metrics", "R-1.a"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 70, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if not line.startswith("WARNING:")]
    assert lines[0] == ("qarla: Spark's executors cannot start Python '/nonexistent/python' "
                        "(No such file or directory): set PYSPARK_PYTHON (or "
                        "spark.pyspark.python) to an absolute path that exists on every "
                        "executor.")
    assert len(lines) == 2 and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()
