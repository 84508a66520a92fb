"""Helpers shared by the tests (import as ``from helpers import ...``)."""

from __future__ import annotations

import contextlib
import json
from fractions import Fraction
from pathlib import Path


def write_jsonl(path: Path, records) -> Path:
    """Write dicts (or raw strings, written as they are) one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for rec in records:
            handle.write(rec if isinstance(rec, str) else json.dumps(rec))
            handle.write("\n")
    return path


def make_testbed(n_topics=2, n_models=4, n_peers=3, task="t", judged=True):
    """Records of a small regular testbed: topics t0.., models m0.., peers p0..;
    peers carry one 'quality' judgment."""
    records = []
    for t in range(n_topics):
        for m in range(n_models):
            records.append({"task": task, "topic": f"t{t}", "summarizer": f"m{m}",
                            "role": "model", "text": f"model {m} of topic {t} . a sentence ."})
        for p in range(n_peers):
            rec = {"task": task, "topic": f"t{t}", "summarizer": f"p{p}", "role": "peer",
                   "text": f"peer {p} writes about topic {t} ."}
            if judged:
                rec["human"] = {"quality": float(p + t)}
            records.append(rec)
    return records


TWO_TASKS = ("news", "chat two")      # one judged, one not; a space in a task name


def two_task_records():
    """The records of the shared two-task run (conftest's ``two_task_run``):
    task "news" is tests/test_determinism.py's tie-heavy testbed (6 topics,
    5 models, 6 peers, judged), task "chat two" a smaller one without
    judgments."""
    from test_determinism import tie_heavy_testbed
    records = tie_heavy_testbed(n_topics=6, n_models=5, n_peers=6, seed=5)
    for rec in records:
        rec["task"] = TWO_TASKS[0]
    other = tie_heavy_testbed(n_topics=4, n_models=4, n_peers=4, seed=8)
    for rec in other:
        rec["task"] = TWO_TASKS[1]
        rec.pop("human", None)
    return records + other


def pandas_of(table):
    """A stage's table as pandas: a Spark DataFrame, a pyarrow table (the
    small tables the driver writes) or an ExecutorTable (the big ones the
    executors write)."""
    if hasattr(table, "fallback"):          # a table the executors write
        table = table.fallback()
    return table.to_pandas() if hasattr(table, "to_pandas") else table.toPandas()


def human_reading(v: float) -> Fraction:
    """A human score's exact value (SPEC §1), by brute force: the nearest
    fraction with a denominator up to 1,000 when its double is ``v`` (no
    other such fraction is within half an ulp of it) and |v| < 2^12, else
    v's own value (issue 39, part 2)."""
    v = float(v)
    f = Fraction(v).limit_denominator(1_000)
    return f if abs(v) < 2 ** 12 and f.numerator / f.denominator == v else Fraction(v)


@contextlib.contextmanager
def numpy_backend():
    """The counting kernels' numpy twins in the block
    (``pair_counts.BACKEND``, which every compiled kernel's wrapper reads),
    then the backend as before."""
    from qarla_spark.measures import pair_counts as pc
    saved = pc.BACKEND
    pc.BACKEND = "numpy"
    try:
        yield
    finally:
        pc.BACKEND = saved
