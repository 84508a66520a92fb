"""devtools.cpu_accounts: whose CPU a run's stages spend (issue 36), from
/proc readings cut by the stage windows — its pure parts on made-up
readings, and one reading of this process's own tree."""

import os
import time

import pytest

from devtools import cpu_accounts as ca


def test_a_stat_line_gives_its_name_parent_and_cpu_seconds():
    # the name may hold spaces and parentheses: it ends at the last ")"
    line = "4242 (C2 Compiler(x) 1) S 17 4242 17 0 -1 4194368 0 0 0 0 150 50 0 0 20 0 1 0"
    assert ca.parse_stat(line, 100.0) == ("C2 Compiler(x) 1", 17, 2.0)


def test_threads_and_processes_get_their_kinds():
    assert ca.thread_kind("C2 CompilerThre") == "jit"
    assert ca.thread_kind("C1 CompilerThre") == "jit"
    assert ca.thread_kind("Executor task l") == "jvm"
    assert ca.thread_kind("GC Thread#0") == "jvm"
    assert ca.process_kind("python\0-c\0...", 10, 10) == "driver"
    assert ca.process_kind("/v/bin/python\0-m\0pyspark.daemon", 11, 10) == "python"
    assert ca.process_kind("/usr/lib/jvm/bin/java\0-cp\0x", 12, 10) == "jvm"
    assert ca.process_kind("/bin/bash\0spark-submit", 13, 10) == "other"


def test_descendants_are_the_whole_tree_and_nothing_else():
    parents = {1: 0, 10: 1, 11: 10, 12: 11, 13: 11, 20: 1, 21: 20}
    assert sorted(ca.descendants(parents, 10)) == [10, 11, 12, 13]
    assert ca.descendants(parents, 99) == [99]


def _totals(**kinds):
    out = {k: 0.0 for k in ca.KINDS}
    out.update(kinds)
    return out


def test_a_window_takes_the_seconds_between_its_ends_interpolated():
    samples = [(100.0, _totals(python=0.0, jit=0.0)),
               (101.0, _totals(python=2.0, jit=0.5)),
               (103.0, _totals(python=4.0, jit=0.5))]
    found = ca.window_accounts(samples, [
        {"stage": "a", "start": 100.5, "end": 102.0},
        {"stage": "b", "start": 102.0, "end": 110.0},      # past the last reading
        {"stage": "open", "start": 103.0, "end": None}])    # no end: left out
    assert found["a"]["python"] == pytest.approx(2.0)       # 1.0 → 3.0
    assert found["a"]["jit"] == pytest.approx(0.25)         # 0.25 → 0.5
    assert found["b"]["python"] == pytest.approx(1.0)       # 3.0 → 4.0
    assert "open" not in found
    assert set(found["a"]) == set(ca.KINDS)


def test_no_reading_gives_zero_seconds():
    assert ca.window_accounts([], [{"stage": "a", "start": 1.0, "end": 2.0}]) == \
        {"a": _totals()}


def test_totals_add_each_kind_of_units():
    assert ca.totals({"python:1": 1.5, "python:2": 2.0, "jit:3:4": 0.25, "jvm:3:5": 1.0}) == \
        _totals(python=3.5, jit=0.25, jvm=1.0)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux's /proc only")
def test_a_reading_of_this_process_counts_its_cpu_as_the_driver():
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    assert ca.parents()[os.getpid()] == os.getppid()
    found = ca.read_tree(os.getpid())
    assert found[f"driver:{os.getpid()}"] >= 0.05 - 0.02     # clock ticks: 1/100 s
    sampler = ca.Sampler(os.getpid(), interval=0.01).start()
    time.sleep(0.05)
    samples = sampler.stop()
    assert samples and all(set(t) == set(ca.KINDS) for _, t in samples)


def test_the_replays_split_puts_a_kernel_numpy_and_glue_apart():
    """devtools.replay_statistics.split_of: a compiled kernel's seconds as
    compiled, numpy's C functions as builtin, the rest as Python."""
    import cProfile
    import pstats

    import numpy as np

    from devtools.replay_statistics import compiled_functions, split_of
    from qarla_spark.measures import meta_kernels as mk
    if mk.backend() != "numba":
        pytest.skip("no compiled kernels here")
    kernels = compiled_functions()
    code = mk._concordance_replicates.py_func.__code__
    assert (code.co_filename, code.co_name) in kernels
    x = np.random.default_rng(1).random((3, 12, 64))
    y = np.random.default_rng(2).random((12, 64))
    mk.kendall_replicates(x, y)                     # compiled before the profile

    def glue():
        return sum(i * i for i in range(20000))

    prof = cProfile.Profile()
    prof.enable()
    mk.kendall_replicates(x, y)
    np.sort(np.random.default_rng(3).random(200000))
    glue()
    prof.disable()
    found = split_of(pstats.Stats(prof).stats, kernels)
    assert found["compiled"] > 0 and found["builtin"] > 0 and found["python"] > 0
    stats = pstats.Stats(prof).stats
    kernel = sum(v[2] for (f, _, n), v in stats.items() if n == "_concordance_replicates")
    assert found["compiled"] == pytest.approx(kernel)
