"""What every function qarla runs on the executors calls first
(:func:`worker_ready`): the rounds' kernels and reducers
(:mod:`~qarla_spark.spark.rounds`), the writers of tables
(:mod:`~qarla_spark.spark.output`) and the workers' warm-up
(:mod:`~qarla_spark.spark.warmup`) all reach it here, none through another
(issue 37: no import circle between modules)."""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator, Optional


def worker_ready() -> None:
    """Called first by every function qarla runs on the executors: the
    objects alive now (modules, caches) join the permanent generation, so
    the full collection PySpark's worker runs after each task only walks
    what the task made (measured on this project's workers: 30-40 ms per
    task before, under 1 ms after). Objects are still freed by reference
    counting; only cycles among them are no longer collected."""
    gc.freeze()


def _openblas():
    """numpy's bundled OpenBLAS (scipy-openblas) as a ctypes library with
    its get/set thread functions, or None (another BLAS, or not found)."""
    import ctypes
    import glob
    import os

    import numpy
    folder = os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(folder, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)     # the library numpy loaded: the same handle
        except OSError:
            continue
        for suffix in ("64_", ""):
            get = getattr(lib, f"scipy_openblas_get_num_threads{suffix}", None)
            put = getattr(lib, f"scipy_openblas_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                return get, put
    return None


@contextlib.contextmanager
def blas_threads(n: int) -> Iterator[Optional[int]]:
    """numpy's BLAS limited to ``n`` threads in the block (then as before),
    where it is numpy's bundled OpenBLAS; elsewhere nothing changes. A
    Spark task has one core: BLAS's own threads on the other cores, which
    run other tasks, only slow both (measured: the plan's simulations took
    twice the CPU with OpenBLAS's default threads on the 2-core machine)."""
    found = None
    try:
        found = _openblas()
    except Exception:   # noqa: BLE001 - only an optimisation
        found = None
    if found is None:
        yield None
        return
    get, put = found
    before = int(get())
    put(int(n))
    try:
        yield before
    finally:
        put(before)
