"""Spark failing to start says why in one message (issue 29, part 2), and
the JVM's start-up noise is not shown unless --verbose or --debug (part 5).

Each case runs the command line in a fresh process (the suite's own
SparkSession lives in this one, tests/conftest.py).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers import make_testbed, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def qarla(args, tmp_path):
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "qarla_spark.cli", *args], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=600)


def run_with(settings, tmp_path, *extra):
    src = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=2))
    out = tmp_path / "run"
    proc = qarla(["run", str(src), "--out", str(out), "--quiet", *settings, *extra], tmp_path)
    return proc, out


def assert_one_start_message(proc, out, named, reason):
    """Exit status 2, one message of two lines naming the setting and the
    JVM's or Spark's reason, no traceback, no run directory."""
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2, proc.stderr[-3000:]
    assert lines[0].startswith(f"qarla: Spark cannot start with {named}: "), lines[0]
    assert reason in lines[0], lines[0]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "JAVA_GATEWAY_EXITED" not in proc.stderr
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(out.name)]
    assert proc.stdout == ""   # --quiet; and nothing of the JVM's (Java writes some reasons there)


# the JVM exits before PySpark can talk to it (spark-submit's checks, or
# Java refusing its options)
@pytest.mark.slow
@pytest.mark.parametrize("settings, named, reason", [
    (["--conf", "spark.executor.memory=lots"], "spark.executor.memory=lots",
     "Executor memory must be a positive number"),
    (["--conf", "spark.driver.memory=lots"], "spark.driver.memory=lots",
     "Invalid maximum heap size: -Xmxlots"),
    # Java writes this one to its standard output
    (["--conf", "spark.driver.memory=1m"], "spark.driver.memory=1m", "Too small maximum heap"),
    (["--master", "nonsense://x"], "spark.master=nonsense://x",
     "Master must either be yarn or start with"),
    # Spark passes -XX:+IgnoreUnrecognizedVMOptions, so an unknown -XX option
    # is ignored; a malformed value is not
    (["--conf", "spark.driver.extraJavaOptions=-XX:MaxRAM=lots"],
     "spark.driver.extraJavaOptions=-XX:MaxRAM=lots", "Improperly specified VM option 'MaxRAM=lots'"),
], ids=["executor-memory", "driver-memory", "too-little-memory", "master", "java-option"])
def test_a_jvm_that_cannot_start_is_one_message(settings, named, reason, tmp_path):
    proc, out = run_with(settings, tmp_path)
    assert_one_start_message(proc, out, named, reason)


@pytest.mark.slow
def test_a_driver_port_in_use_is_one_message(tmp_path):
    # the JVM starts; its SparkContext cannot bind the port this test holds
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc, out = run_with(["--conf", f"spark.driver.port={port}",
                              "--conf", "spark.port.maxRetries=0"], tmp_path)
    assert_one_start_message(proc, out, f"spark.driver.port={port}, spark.port.maxRetries=0",
                             "Address already in use")


@pytest.mark.slow
def test_a_bind_address_not_on_the_machine_is_one_message(tmp_path):
    proc, out = run_with(["--conf", "spark.driver.bindAddress=10.254.254.254"], tmp_path)
    assert_one_start_message(proc, out, "spark.driver.bindAddress=10.254.254.254",
                             "Cannot assign requested address")


@pytest.mark.slow
def test_debug_shows_the_jvms_own_output_when_it_cannot_start(tmp_path):
    proc, out = run_with(["--conf", "spark.driver.memory=lots"], tmp_path, "--debug")
    assert proc.returncode != 0
    assert "Invalid maximum heap size: -Xmxlots" in proc.stderr
    assert "Could not create the Java Virtual Machine" in proc.stderr   # Java's own lines
    assert "SparkStartError" in proc.stderr and not out.exists()


def validate_through_spark(tmp_path, *extra):
    """``qarla validate`` with Spark reading the input (--driver-read-mb 0)."""
    src = write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=2))
    return qarla(["validate", str(src), "--driver-read-mb", "0", *extra], tmp_path)


@pytest.mark.slow
def test_the_jvms_start_up_warning_is_not_shown(tmp_path):
    proc = validate_through_spark(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "problems: none" in proc.stdout
    assert "incubator" not in proc.stderr and "WARNING" not in proc.stderr, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("switch", ["--verbose", "--debug"])
def test_verbose_and_debug_show_the_jvms_start_up_warning(switch, tmp_path):
    proc = validate_through_spark(tmp_path, switch)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "WARNING: Using incubator modules: jdk.incubator.vector" in proc.stderr


# --- the copier of the JVM's output, on a pipe of this test's ------------------

def _copy(feed, show_all=False, release_after=None):
    """What an _ErrorCopier reading ``feed`` (lines written one by one;
    released after line ``release_after``) copies to its target, and what
    it held when the feed ended."""
    from qarla_spark.spark.session import _ErrorCopier
    src_read, src_write = os.pipe()
    dst_read, dst_write = os.pipe()
    copier = _ErrorCopier(src_read, show_all, target=dst_write)
    collected = []
    reader = threading.Thread(target=lambda: collected.append(os.fdopen(dst_read, "rb").read()))
    reader.start()
    for i, line in enumerate(feed):
        os.write(src_write, line)
        if release_after == i:
            copier.release()
    os.close(src_write)
    held = copier.held_text(wait=60)
    copier.thread.join()
    os.close(dst_write)
    reader.join()
    return collected[0], held, copier.thread.is_alive()


NOISE = b"WARNING: Using incubator modules: jdk.incubator.vector\n"


def test_copier_holds_lines_until_released_then_copies_all_but_the_noise():
    copied, held, alive = _copy([NOISE, b"early\n", b"par", b"tial\n", b"late\n", b"no newline"],
                                release_after=3)
    assert copied == b"early\npartial\nlate\nno newline"
    assert held == "" and not alive


def test_copier_holds_everything_when_spark_does_not_start():
    copied, held, alive = _copy([NOISE, b"Error occurred during initialization of VM\n",
                                 b"Too small maximum heap\n"])
    assert copied == b""
    assert held.endswith("Too small maximum heap\n") and not alive


def test_copier_shows_everything_with_show_all():
    copied, held, _ = _copy([NOISE, b"early\n"], show_all=True)
    assert copied == NOISE + b"early\n" and held == ""


def test_jvm_reason_skips_noise_boilerplate_and_stack_frames():
    from qarla_spark.spark.session import jvm_reason
    assert jvm_reason(NOISE.decode() + 'Exception in thread "main" org.apache.spark.SparkException:'
                      ' Executor memory must be a positive number\n\tat org.apache.X.y(X.scala:1)\n'
                      ) == "Executor memory must be a positive number"
    assert jvm_reason("Error occurred during initialization of VM\nToo small maximum heap\n"
                      ) == "Too small maximum heap"
    assert jvm_reason("\nThe Java thread stack size specified is too small. Specify at least 136k\n"
                      "Error: Could not create the Java Virtual Machine.\n"
                      ).startswith("The Java thread stack size")
    assert jvm_reason("") == "the JVM exited without saying why"


def test_start_failure_names_the_given_setting_or_the_one_involved():
    from qarla_spark.errors import ConfigError
    from qarla_spark.spark.session import start_failure
    error = start_failure("Too small maximum heap", {"spark.driver.memory": "1m"}, {})
    assert isinstance(error, ConfigError) and error.exit_code == 2
    assert str(error).startswith("Spark cannot start with spark.driver.memory=1m: Too small")
    # not set by the user: the setting the reason is about is named all the same
    error = start_failure("bind(..) failed with error(-99): Cannot assign requested address: "
                          "Service 'sparkDriver' failed", {}, {})
    assert str(error).startswith("Spark cannot start (the setting involved: spark.driver.port): "
                                 "Cannot assign requested address")
