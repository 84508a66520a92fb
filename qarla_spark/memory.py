"""Giving the operating system back what the driver's Python has freed.

Reading and checking a testbed in the driver, or handing its rows to Spark
through Arrow, allocates a lot for a moment: the 12 MB input of ten tasks
(27,000 summaries) took the driver from 116 to 237 MB. Freed, that memory
stays with the process: pyarrow's allocator (mimalloc) and glibc's heap
keep it for later use, and nothing later uses that much, so the driver
would carry it for the whole run and every later peak (the report's) would
sit on top of it. :func:`release_freed_memory` returns it (the same run:
221 MB after the rows were dropped, 160 MB after). It frees nothing that
is in use, so it never changes a result.

Two more things let it return more:

- :func:`use_system_arrow_pool`: the processes qarla starts as a driver
  (``qarla``, ``jobs/qarla_run.py``, ``python -m qarla_spark.report``, the
  benchmarks that measure the driver) give pyarrow glibc's allocator
  instead of mimalloc, which holds on to what the report's Parquet reads
  freed (``qarla report`` of ten tasks: 289 -> 222 MB peak). Spark's Python
  workers keep pyarrow's default;
- Python's own allocator returns a 1 MB block (an arena) only when nothing
  in it is alive: the input checked in the driver becomes Arrow tables and
  is freed before anything long-lived is made, and the few objects that
  outlive it are :func:`fresh_copy` copies
  (:func:`qarla_spark.io.check_in_driver`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import pickle
import sys


def release_freed_memory() -> None:
    """Collect garbage, then return the free memory of pyarrow's pool
    (if pyarrow is loaded) and of glibc's heap (``malloc_trim``, on glibc
    only) to the operating system."""
    gc.collect()
    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    _malloc_trim()


def fresh_copy(value):
    """A deep copy of ``value`` (strings included) made now: kept in place
    of ``value``, it does not pin blocks of memory freed around the
    original, made among short-lived objects."""
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def use_system_arrow_pool() -> None:
    """pyarrow's buffers of this process from the system's allocator
    (glibc's ``malloc``, whose free memory ``malloc_trim`` returns), for a
    driver process: call it at its start. Where pyarrow has no such pool,
    nothing changes."""
    import pyarrow
    try:
        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    except (AttributeError, NotImplementedError):  # pragma: no cover
        pass


def _malloc_trim() -> None:
    trim = _trim_function()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _trim_function():
    """glibc's ``malloc_trim``, or ``None`` (found once: ``find_library``
    runs ``ldconfig``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (e.g. musl): nothing to do
        return None
    trim.argtypes = [ctypes.c_size_t]
    return trim
