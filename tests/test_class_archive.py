"""The driver JVM's class archive (qarla_spark.spark.class_archive): where
it lives, when the JVM maps or writes it, and that only a JVM that ended
normally leaves an archive. The protocol is tested with a stand-in process
that writes its "archive" when its standard input closes, as the JVM does;
one slow test starts real JVMs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from qarla_spark.spark import class_archive as ca


def test_cache_dir_default_env_and_off(tmp_path):
    assert ca.cache_dir({"HOME": "/h"}) == Path.home() / ".cache" / "qarla_spark" / "jvm"
    assert ca.cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "qarla_spark" / "jvm"
    assert ca.cache_dir({ca.ENV: str(tmp_path / "x")}) == tmp_path / "x"
    for off in ("off", "OFF", "0", "no", "false", "none"):
        assert ca.cache_dir({ca.ENV: off}) is None


def _jars(tmp_path, n=3):
    jars = []
    for i in range(n):
        jar = tmp_path / f"lib{i}.jar"
        jar.write_bytes(b"x" * (i + 1))
        jars.append(jar)
    return jars


def test_setup_key_follows_jars_java_and_options(tmp_path):
    jars = _jars(tmp_path)
    java = sys.executable       # any executable file stands in for java
    key = ca.setup_key(java, jars, "-Xa  -Xb")
    assert key == ca.setup_key(java, list(reversed(jars)), "-Xa -Xb")    # order, spaces
    assert key != ca.setup_key(java, jars, "-Xa -Xc")                    # options
    assert key != ca.setup_key(java, jars[:2], "-Xa -Xb")                # a jar fewer
    jars[0].write_bytes(b"changed")                                       # a jar changed
    assert key != ca.setup_key(java, jars, "-Xa -Xb")


def test_plan_writes_then_maps(tmp_path):
    folder = tmp_path / "jvm"
    first = ca.plan(folder, "k1", pid=123)
    assert folder.is_dir()
    assert first.pending == folder / "k1.jsa.123.part" and first.final == folder / "k1.jsa"
    assert first.options == f"-XX:ArchiveClassesAtExit={first.pending} {ca.QUIET}"
    first.final.write_bytes(b"archive")
    os.utime(first.final, (1, 1))
    second = ca.plan(folder, "k1", pid=124)
    assert second == ca.Plan(f"-XX:SharedArchiveFile={first.final} {ca.QUIET}")
    assert first.final.stat().st_mtime > 1          # marked as used
    assert ca.plan(None, "k1") == ca.Plan("")


def test_plan_without_a_writable_folder(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert ca.plan(blocker / "jvm", "k") == ca.Plan("")


@pytest.mark.parametrize("returncode, saved", [(0, True), (1, False), (143, False)])
def test_settle_keeps_only_a_normal_end(tmp_path, returncode, saved):
    chosen = ca.plan(tmp_path, "k", pid=5)
    chosen.pending.write_bytes(b"archive")
    assert ca.settle(chosen, returncode) is saved
    assert chosen.final.is_file() is saved
    assert not chosen.pending.exists()


def test_settle_leaves_a_dump_in_progress_and_refuses_an_empty_one(tmp_path):
    chosen = ca.plan(tmp_path, "k", pid=5)
    chosen.pending.write_bytes(b"part")
    assert ca.settle(chosen, None) is False and chosen.pending.exists()
    chosen.pending.write_bytes(b"")
    assert ca.settle(chosen, 0) is False and not chosen.final.exists()


def test_prune_stale_parts_and_old_archives(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"k.jsa.{dead.pid}.part"
    live = tmp_path / f"k.jsa.{os.getpid()}.part"
    for p in (stale, live):
        p.write_bytes(b"x")
    archives = []
    for i in range(ca.KEEP + 2):
        a = tmp_path / f"a{i}.jsa"
        a.write_bytes(b"x")
        os.utime(a, (1000 + i, 1000 + i))
        archives.append(a)
    ca.prune(tmp_path)
    assert not stale.exists() and live.exists()
    kept = sorted(p.name for p in tmp_path.glob("*.jsa"))
    assert kept == sorted(a.name for a in archives[-ca.KEEP:])


# a stand-in for the JVM: waits for its standard input to close, then
# writes the file it was told to (as -XX:ArchiveClassesAtExit does at exit)
_STAND_IN = textwrap.dedent("""
    import sys, time
    sys.stdin.read()
    time.sleep(0.2)
    open(sys.argv[1], "wb").write(b"classes")
    sys.exit(int(sys.argv[2]))
""")


@pytest.mark.parametrize("status, saved", [(0, True), (3, False)])
def test_finish_ends_the_jvm_and_waits_for_its_archive(tmp_path, capsys, status, saved):
    chosen = ca.plan(tmp_path, "k", pid=7)
    proc = subprocess.Popen([sys.executable, "-c", _STAND_IN, str(chosen.pending), str(status)],
                            stdin=subprocess.PIPE)
    assert ca.finish(chosen, proc, wait_s=30) is saved
    assert chosen.final.exists() is saved and not chosen.pending.exists()
    assert "saving the JVM's classes" in capsys.readouterr().err


def test_finish_after_the_jvm_was_ended(tmp_path, capsys):
    """An interrupted run's JVM is gone before exit: nothing is saved, nothing said."""
    chosen = ca.plan(tmp_path, "k", pid=8)
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(143)"],
                            stdin=subprocess.PIPE)
    proc.wait()
    chosen.pending.write_bytes(b"half")
    assert ca.finish(chosen, proc) is False
    assert not chosen.pending.exists() and not chosen.final.exists()
    assert capsys.readouterr().err == ""


_SESSION = textwrap.dedent("""
    from qarla_spark.spark.session import build_session
    spark = build_session("local", master="local[1]", conf={
        "spark.driver.extraJavaOptions": "-Xshare:on"})
    assert spark.range(5).count() == 5
    print(spark.sparkContext.getConf().get("spark.driver.extraJavaOptions"))
""")


@pytest.mark.slow
def test_a_real_jvm_writes_then_maps_the_archive(tmp_path):
    """Two driver processes of the same setup: the first's JVM writes the
    archive when the process exits, the second's maps it. ``-Xshare:on``
    makes a JVM that cannot map its archive fail to start, so the second
    run passing shows the archive is used, not only named."""
    env = dict(os.environ, **{ca.ENV: str(tmp_path)})

    def session():
        start = time.time()
        proc = subprocess.run([sys.executable, "-c", _SESSION], env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc, time.time() - start

    first, _ = session()
    assert "-XX:ArchiveClassesAtExit=" in first.stdout
    assert "saving the JVM's classes" in first.stderr
    archives = list(tmp_path.glob("*.jsa"))
    assert len(archives) == 1 and not list(tmp_path.glob("*.part"))
    second, _ = session()
    assert f"-XX:SharedArchiveFile={archives[0]}" in second.stdout
    assert "saving" not in second.stderr
    said = first.stdout + first.stderr + second.stdout + second.stderr
    assert "[cds" not in said and "[warning]" not in said     # the cds log is off


def test_quiet_saves_without_a_word(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ca, "_SAY", [True])
    ca.say_nothing()
    chosen = ca.plan(tmp_path, "k", pid=9)
    proc = subprocess.Popen([sys.executable, "-c", _STAND_IN, str(chosen.pending), "0"],
                            stdin=subprocess.PIPE)
    assert ca.finish(chosen, proc, wait_s=30) is True
    assert capsys.readouterr().err == ""
