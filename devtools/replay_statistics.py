"""The statistics stage's groups, captured once and replayed without Spark
(issue 36): what a task's statistics cost, group by group, and whether a
change of their code keeps every output bit for bit.

``capture`` runs a testbed of SummEval's shape (``--topics`` N split into
``--tasks`` k tasks, as ``devtools.benchmark_tasks`` builds them) through
``qarla run``'s pipeline in this process and keeps, instead of only
reducing them, the statistics stage's inputs
(:func:`qarla_spark.stages.statistics.statistics_inputs`): every group's
records (pickled, in the order the reduce gives them) and the context every
group reads. ``time`` replays the groups one after the other in this
process (no Spark; set ``OMP_NUM_THREADS=1`` as Spark's workers run) and
prints the CPU seconds per group kind, per task and in all (``--repeat``:
the best of that many replays; ``--profile``: cProfile's top functions).
``split`` says, per group kind and per task, how much of the replay
is compiled kernels, C functions (numpy's) and the Python glue between
them (:func:`split_groups`).
``outputs`` writes every group's records (the across-task reduce's too) (tables decoded to rows) to a
file, and ``compare`` says whether two such files are equal, bit for bit
(doubles compared by their bytes), naming the first groups that differ.

    python -m devtools.replay_statistics capture DIR [--topics 400] [--tasks 40]
        [--bootstrap 1000] [--seed 13]
    OMP_NUM_THREADS=1 python -m devtools.replay_statistics time DIR [--repeat 3]
        [--kinds meta,chance] [--profile]
    OMP_NUM_THREADS=1 python -m devtools.replay_statistics split DIR [--kinds meta]
    python -m devtools.replay_statistics outputs DIR FILE
    python -m devtools.replay_statistics compare FILE_A FILE_B
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

if __name__ == "__main__" and not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GROUPS_FILE, CONTEXT_FILE = "groups.pkl", "context.pkl"


def capture(folder: str, n_topics: int, n_tasks: int, bootstrap: int, seed: int,
            master: str = "local[2]") -> Dict:
    """Run the testbed and keep the statistics stage's inputs in ``folder``."""
    from devtools.benchmark_tasks import write_shapes
    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig
    from qarla_spark.spark import rounds as rd
    from qarla_spark.spark.session import build_session
    from qarla_spark.stages import statistics as st

    os.makedirs(folder, exist_ok=True)
    kept: Dict = {}

    def keep(cube, testbed, report, config, found):
        ratings = getattr(testbed, "ratings", None)
        got = st.statistics_inputs(found.get("qarla"), found.get("hbr"), testbed.judgments,
                                   config, report.tasks, ratings)
        groups: Dict[str, List[Tuple[str, bytes]]] = {}
        for row in got.records.select(*rd.ENVELOPE_COLUMNS).collect():
            groups.setdefault(row["key"], []).append((row["kind"], bytes(row["data"])))
        kept["groups"] = {key: sorted(items) for key, items in groups.items()}
        kept["ctx"] = got.ctx
        return st.run_statistics(found.get("qarla"), found.get("hbr"), testbed.judgments,
                                 config, report.tasks, ratings)

    pipeline.ANALYSES = tuple(
        pipeline.Analysis(a.name, a.ready, keep) if a.name == "statistics" else a
        for a in pipeline.ANALYSES)
    spark = build_session(master=master)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_shapes(n_topics, [n_tasks], tmp, seed)[n_tasks]
        t0 = time.perf_counter()
        pipeline.run(spark, RunConfig(inputs=(paths["summaries"],), sources=(paths["sources"],),
                                      out=os.path.join(tmp, "run"), seed=seed,
                                      bootstrap=bootstrap))
        wall = time.perf_counter() - t0
    spark.stop()
    with open(os.path.join(folder, GROUPS_FILE), "wb") as handle:
        pickle.dump(kept["groups"], handle, protocol=pickle.HIGHEST_PROTOCOL)
    with open(os.path.join(folder, CONTEXT_FILE), "wb") as handle:
        pickle.dump(kept["ctx"], handle, protocol=pickle.HIGHEST_PROTOCOL)
    return {"groups": len(kept["groups"]), "run_s": round(wall, 1)}


def load(folder: str):
    with open(os.path.join(folder, GROUPS_FILE), "rb") as handle:
        groups = pickle.load(handle)
    with open(os.path.join(folder, CONTEXT_FILE), "rb") as handle:
        ctx = pickle.load(handle)
    return groups, ctx


def _kind(key: str) -> str:
    from qarla_spark.spark import rounds as rd
    return rd.key_parts(key)[1]


def _task(key: str) -> str:
    from qarla_spark.spark import rounds as rd
    return rd.key_parts(key)[0]


def replay(groups, ctx, kinds=None, keep_outputs: bool = False):
    """Every group's reduce, in key order: (CPU seconds per key, outputs
    per key or None)."""
    from qarla_spark.spark import rounds as rd
    from qarla_spark.stages.statistics import _statistics_reduce
    seconds, outputs = {}, {}
    for key in sorted(groups):
        if kinds and _kind(key) not in kinds:
            continue
        items = [(kind, rd.loads(data)) for kind, data in groups[key]]
        t0 = time.process_time()
        out = _statistics_reduce(key, items, ctx)
        seconds[key] = time.process_time() - t0
        if keep_outputs:
            outputs[key] = out
    return seconds, (outputs if keep_outputs else None)


def across_groups(groups, ctx) -> Dict[str, List[Tuple[str, bytes]]]:
    """The across-task reduce's groups (the second reduce of a run of two
    tasks or more): the first reduce's records of kinds ``x_king`` and
    ``x_pa``, by key, sorted as :func:`~qarla_spark.spark.rounds.reduce_by_key`
    gives them."""
    from qarla_spark.spark import rounds as rd
    _, found = replay(groups, ctx, keep_outputs=True)
    out: Dict[str, List[Tuple[str, bytes]]] = {}
    for records in found.values():
        for key, kind, value in records:
            if kind in ("x_king", "x_pa"):
                out.setdefault(key, []).append((kind, rd.dumps(value)))
    return {key: sorted(items) for key, items in out.items()}


def replay_across(across, ctx) -> Dict[str, float]:
    """The across-task reduce of every group of :func:`across_groups`: CPU
    seconds per key."""
    from qarla_spark.spark import rounds as rd
    from qarla_spark.stages.statistics import _across_reduce
    seconds = {}
    for key in sorted(across):
        items = [(kind, rd.loads(data)) for kind, data in across[key]]
        t0 = time.process_time()
        _across_reduce(key, items, ctx)
        seconds[key] = time.process_time() - t0
    return seconds


def _best_seconds(run, repeat: int, profile: bool) -> Dict[str, float]:
    """The least CPU seconds per key of ``repeat`` calls of ``run()`` (each
    a dict of seconds per key), after one call to warm up (imports, caches
    of compiled kernels); ``profile``: cProfile's top functions of one more."""
    run()
    if profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        run()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    best: Dict[str, float] = {}
    for _ in range(max(1, repeat)):
        for key, s in run().items():
            best[key] = min(best.get(key, s), s)
    return best


def time_groups(folder: str, repeat: int, kinds=None, profile: bool = False) -> Dict:
    groups, ctx = load(folder)
    if kinds and list(kinds) == ["across"]:
        across = across_groups(groups, ctx)
        best = _best_seconds(lambda: replay_across(across, ctx), repeat, profile)
        return {"groups": len(best), "total_s": round(sum(best.values()), 3),
                "max_s": round(max(best.values(), default=0.0), 3),
                "per_key_s": {key.replace("\x1f", "/"): round(s, 4)
                              for key, s in sorted(best.items())}}
    best = _best_seconds(lambda: replay(groups, ctx, kinds)[0], repeat, profile)
    by_kind: Dict[str, List[float]] = {}
    for key, s in best.items():
        by_kind.setdefault(_kind(key), []).append(s)
    tasks = len({_task(key) for key in best})
    out = {"tasks": tasks, "total_s": round(sum(best.values()), 3),
           "per_task_s": round(sum(best.values()) / max(1, tasks), 4),
           "kinds": {k: {"groups": len(v), "total_s": round(sum(v), 3),
                         "per_group_s": round(sum(v) / len(v), 4)}
                     for k, v in sorted(by_kind.items())}}
    return out


def compiled_functions() -> set:
    """(file, name) of every compiled kernel (numba's dispatchers) of the
    modules of qarla_spark loaded: what cProfile shows under its Python
    function's file and name."""
    out = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("qarla_spark") or module is None:
            continue
        for obj in list(vars(module).values()):
            func = getattr(obj, "py_func", None)
            if func is not None and "Dispatcher" in type(obj).__name__:
                out.add((func.__code__.co_filename, func.__code__.co_name))
    return out


def split_of(stats: dict, compiled: set) -> Dict[str, float]:
    """Seconds of a cProfile run's functions (``pstats.Stats(...).stats``)
    by where they ran: ``compiled`` (a kernel of ``compiled``: (file,
    name)), ``builtin`` (C functions: numpy's, the interpreter's) and
    ``python`` (the rest: the glue)."""
    out = {"compiled": 0.0, "builtin": 0.0, "python": 0.0}
    for (file, _, name), (_, _, own, _, _) in stats.items():
        if (file, name) in compiled:
            out["compiled"] += own
        elif file == "~":
            out["builtin"] += own
        else:
            out["python"] += own
    return out


def split_groups(folder: str, kinds=None) -> Dict:
    """Per group kind: the replay's seconds (one pass, after one to warm
    up) and, of a profiled pass, the seconds in compiled kernels, in C
    functions (numpy's) and in Python. Profiling inflates the Python
    glue's calls, not a kernel's or a C function's single call, so the
    glue's seconds are estimated as the unprofiled pass's less the other
    two (``glue_s``)."""
    import cProfile
    import pstats
    groups, ctx = load(folder)
    replay(groups, ctx, kinds)                      # warm: imports, kernels
    compiled = compiled_functions()
    tasks = len({_task(key) for key in groups})
    out: Dict[str, Dict] = {}
    every = sorted({_kind(key) for key in groups if not kinds or _kind(key) in kinds})
    for kind in every:
        seconds, _ = replay(groups, ctx, {kind})
        prof = cProfile.Profile()
        prof.enable()
        replay(groups, ctx, {kind})
        prof.disable()
        found = split_of(pstats.Stats(prof).stats, compiled)
        total = sum(seconds.values())
        glue = total - found["compiled"] - found["builtin"]
        out[kind] = {"groups": len(seconds), "replay_s": round(total, 3),
                     "compiled_s": round(found["compiled"], 3),
                     "builtin_s": round(found["builtin"], 3), "glue_s": round(glue, 3),
                     "profiled_python_s": round(found["python"], 3)}
    per_task = {k: round(sum(v[k] for v in out.values()) / max(1, tasks) * 1e3, 1)
                for k in ("replay_s", "compiled_s", "builtin_s", "glue_s")}
    return {"tasks": tasks, "per_task_ms": {k.replace("_s", ""): v for k, v in per_task.items()},
            "kinds": out}


def _plain(value):
    """A record's value as plain, comparable Python: Arrow table bytes as
    their rows, numpy arrays as (dtype, shape, bytes), floats by their
    bytes."""
    import struct

    import numpy as np
    if isinstance(value, bytes):
        try:
            from qarla_spark.spark.rounds import arrow_of
            table = arrow_of(value)
            return ("arrow", table.schema.names, [_plain(v) for v in table.to_pylist()])
        except Exception:
            return ("bytes", value)
    if isinstance(value, float):
        return ("f", struct.pack("<d", value))
    if isinstance(value, np.ndarray):
        return ("nd", str(value.dtype), value.shape,
                value.tobytes() if value.dtype != object else [_plain(v) for v in value.ravel()])
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, dict):
        return ("d", sorted(((_plain(k), _plain(v)) for k, v in value.items()), key=repr))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_plain(v) for v in value])
    if hasattr(value, "__dict__"):
        return (type(value).__name__, _plain(vars(value)))
    return value


def outputs(folder: str, file: str) -> Dict:
    from qarla_spark.spark import rounds as rd
    from qarla_spark.stages.statistics import _across_reduce
    groups, ctx = load(folder)
    _, found = replay(groups, ctx, keep_outputs=True)
    # the across-task reduce's records too (keyed "2:" + its key)
    across = across_groups(groups, ctx)
    for key in sorted(across):
        found["2:" + key] = _across_reduce(
            key, [(kind, rd.loads(data)) for kind, data in across[key]], ctx)
    plain = {key: [(k, kind, _plain(v)) for k, kind, v in records]
             for key, records in found.items()}
    with open(file, "wb") as handle:
        pickle.dump(plain, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return {"groups": len(plain), "records": sum(len(v) for v in plain.values())}


def compare(file_a: str, file_b: str) -> Dict:
    with open(file_a, "rb") as handle:
        a = pickle.load(handle)
    with open(file_b, "rb") as handle:
        b = pickle.load(handle)
    differ = [key for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]
    out = {"groups": len(set(a) | set(b)), "differ": len(differ)}
    for key in differ[:5]:
        ra, rb = a.get(key) or [], b.get(key) or []
        kinds = [(x[1], y[1]) for x, y in zip(ra, rb) if x != y]
        out.setdefault("first", []).append({"key": key.replace("\x1f", "/"),
                                            "records": (len(ra), len(rb)), "kinds": kinds[:5]})
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("capture")
    c.add_argument("folder")
    c.add_argument("--topics", type=int, default=400)
    c.add_argument("--tasks", type=int, default=40)
    c.add_argument("--bootstrap", type=int, default=1000)
    c.add_argument("--seed", type=int, default=13)
    c.add_argument("--master", default="local[2]")
    t = sub.add_parser("time")
    t.add_argument("folder")
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--kinds", default="")
    t.add_argument("--profile", action="store_true")
    p = sub.add_parser("split")
    p.add_argument("folder")
    p.add_argument("--kinds", default="")
    o = sub.add_parser("outputs")
    o.add_argument("folder")
    o.add_argument("file")
    k = sub.add_parser("compare")
    k.add_argument("file_a")
    k.add_argument("file_b")
    args = parser.parse_args(argv)
    import json
    if args.command == "capture":
        found = capture(args.folder, args.topics, args.tasks, args.bootstrap, args.seed,
                        args.master)
    elif args.command == "time":
        found = time_groups(args.folder, args.repeat,
                            set(filter(None, args.kinds.split(","))), args.profile)
    elif args.command == "split":
        found = split_groups(args.folder, set(filter(None, args.kinds.split(","))))
    elif args.command == "outputs":
        found = outputs(args.folder, args.file)
    else:
        found = compare(args.file_a, args.file_b)
    print(json.dumps(found, indent=1))
    return 0 if args.command != "compare" or not found["differ"] else 1


if __name__ == "__main__":
    sys.exit(main())
