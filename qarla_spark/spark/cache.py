"""Persisted DataFrames of a run, released when the run ends.

The stages persist intermediate tables that several outputs read (the topic
cube, QUEEN counts, HBR pairs, ...). They return lazy DataFrames built on
them, so nothing can be released before the tables are written; but once a
run is over, its cached blocks must not stay in the Spark session: in local
mode they live in the driver's heap, and a session that runs many evaluations
(a notebook, a service, the test suite) would fill it — measured: two runs on
SummEval in one ``local[2]`` session with a 2 GB heap left 1.5 GB of old
generation in use and the next job failed with ``OutOfMemoryError`` while
serialising a task.

:func:`persist` persists a DataFrame (or RDD) and records it in the
innermost active :func:`scope`; leaving the scope unpersists everything it
recorded, whether the block ends normally or with an error. Outside a scope
:func:`persist` is a plain ``persist()`` and releasing is the caller's job.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator, List, TypeVar

T = TypeVar("T")

_state = threading.local()


def _scopes() -> List[list]:
    if not hasattr(_state, "scopes"):
        _state.scopes = []
    return _state.scopes


def persist(frame: T) -> T:
    """``frame.persist()`` (a DataFrame or an RDD), released by the innermost
    active :func:`scope` when it ends. Returns the persisted frame."""
    kept = frame.persist()
    scopes = _scopes()
    if scopes:
        scopes[-1].append(kept)
    return kept


def keep(obj: T) -> T:
    """Record ``obj`` (anything with ``unpersist(blocking)``: a broadcast
    variable, a DataFrame already persisted) in the innermost active
    :func:`scope`, which releases it on exit. Returns ``obj``."""
    scopes = _scopes()
    if scopes:
        scopes[-1].append(obj)
    return obj


@contextlib.contextmanager
def scope() -> Iterator[list]:
    """Unpersist, on exit, every frame :func:`persist` recorded inside the
    block (nested scopes release their own frames first). Yields the list
    of recorded frames."""
    kept: list = []
    scopes = _scopes()
    scopes.append(kept)
    try:
        yield kept
    finally:
        scopes.pop()
        release(kept)


def release(frames) -> None:
    """Unpersist ``frames`` (in reverse order of persisting); a frame whose
    session has stopped is skipped."""
    for frame in reversed(list(frames)):
        with contextlib.suppress(Exception):
            frame.unpersist(True)
