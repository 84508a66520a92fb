"""The Python workers started while the driver starts the run.

A Python worker's first task pays for importing numpy, pandas, pyarrow and
the kernels, loading the compiled ROUGE kernels and the tagger: about 1.8 s
of the first similarity task on this project's 2-core machine, against
0.3 s for the next ones — on the run's critical path once per worker, at
any number of cores. The same held, later, for the first task of the
statistics stage in each worker (its modules, numba's own set-up and the
cached overloads of the counting kernels: ~0.9 s of a core), so the
warm-up also imports those modules and loads every kernel's cached
overloads (:func:`qarla_spark.compiled.preload`). A fresh ``qarla run`` spends about 2.7 s between
Spark's start and its first job (the session's own set-up, the testbed's
tables), with the cores idle: :func:`warm_workers` starts one task per core
then, in the background, which does that work once in each worker.
Nothing it does changes a result; a failure is ignored (the run's own tasks
then pay as before).
"""

from __future__ import annotations

import threading
from typing import List, Optional, Set

#: applications whose workers were warmed (once per session)
_WARMED: Set[str] = set()
_LOCK = threading.Lock()
_THREADS: List[threading.Thread] = []
#: one metric of each family of the battery: every kernel and resource loaded
WARM_TEXTS = ("the cat sat on the mat", "a cat sat on a mat today", "the dog sat down")


def warm_worker() -> int:
    """In a Python worker: import the kernels and compute a tiny topic with
    one metric of each built-in family. Returns 1."""
    from qarla_spark.metrics import registry
    from qarla_spark.metrics.battery import topic_similarities
    from qarla_spark.spark.worker import worker_ready

    first = {}
    for name, info in registry.BUILTIN.items():
        first.setdefault(info.family, name)
    topic_similarities(list(WARM_TEXTS), tuple(first.values()),
                       roles=["model", "model", "peer"])
    import qarla_spark.measures.hbr  # noqa: F401
    import qarla_spark.measures.qarla_task  # noqa: F401
    import qarla_spark.measures.resampling  # noqa: F401
    import qarla_spark.measures.across_tasks  # noqa: F401  (the statistics' groups)
    import qarla_spark.measures.group_statistics  # noqa: F401
    import qarla_spark.measures.judge_statistics  # noqa: F401
    from qarla_spark.compiled import preload
    preload()           # every kernel's cached overloads, numba's set-up
    worker_ready()
    return 1


def _warm(batches):
    import pandas as pd
    for _ in batches:
        pass
    try:
        done = warm_worker()
    except Exception:   # noqa: BLE001 - a warm-up never fails a run
        done = 0
    yield pd.DataFrame({"warm": [done]})


def warm_workers(spark) -> Optional[threading.Thread]:
    """Start, in a background thread, one Spark task per core that warms its
    Python worker (:func:`warm_worker`); once per application. Returns the
    thread (None when already done)."""
    app = spark.sparkContext.applicationId
    with _LOCK:
        if app in _WARMED:
            return None
        _WARMED.add(app)
    n = max(1, spark.sparkContext.defaultParallelism)

    def run():
        from qarla_spark.names import STAGE_PROPERTY, WARM_STAGE
        sc = spark.sparkContext
        try:
            sc.setLocalProperty("spark.job.description", "qarla: start the Python workers")
            sc.setLocalProperty(STAGE_PROPERTY, WARM_STAGE)
            spark.range(n, numPartitions=n).mapInPandas(_warm, "warm long").collect()
        except Exception:   # noqa: BLE001 - cancelled, or a session stopped: nothing lost
            pass

    thread = threading.Thread(target=run, name="qarla-warm-workers", daemon=True)
    thread.start()
    _THREADS.append(thread)
    return thread


def wait_warm(timeout: Optional[float] = None) -> None:
    """Wait for the warm-ups started (a caller counting Spark jobs)."""
    for thread in list(_THREADS):
        thread.join(timeout)
