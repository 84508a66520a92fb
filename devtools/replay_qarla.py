"""The QARLA stage's rounds, captured once and replayed without Spark
(issue 36): what each round's kernel, partition combine and per-task
reduce cost per topic, and whether a change of their code keeps every
record bit for bit.

``capture`` runs a testbed of SummEval's shape (``--topics`` N split into
``--tasks`` k tasks, as ``devtools.benchmark_tasks`` builds them) through
``qarla run``'s pipeline in this process and keeps the QARLA stage's input:
the cube's rows (QUEEN's topics, judgments attached), partition by
partition as the kernels see them, its metrics, the run's config and
skipped topics. ``time`` replays :func:`qarla_spark.stages.qarla.run_qarla`
on them in this process — the same function, its Spark rounds
(:mod:`qarla_spark.spark.rounds`) replaced by in-process ones that pickle
and sort the records as the real ones do — and prints the CPU seconds of
each kernel, combine and reduce, in all and per topic (``--profile``:
cProfile's top functions). ``outputs`` writes every record the stage makes
(tables decoded to rows) to a file; ``compare`` (devtools.replay_statistics')
says whether two such files are equal, bit for bit.

    python -m devtools.replay_qarla capture DIR [--topics 200] [--tasks 10]
    OMP_NUM_THREADS=1 python -m devtools.replay_qarla time DIR [--repeat 2] [--profile]
    python -m devtools.replay_qarla outputs DIR FILE
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
from typing import Dict, List

if __name__ == "__main__" and not __package__:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CAPTURE_FILE = "qarla_inputs.pkl"


def capture(folder: str, n_topics: int, n_tasks: int, seed: int, master: str = "local[2]"):
    """Run the testbed (no statistics stage) and keep the QARLA stage's
    inputs in ``folder``."""
    from devtools.benchmark_tasks import write_shapes
    from qarla_spark import pipeline
    from qarla_spark.config import RunConfig
    from qarla_spark.spark.session import build_session
    from qarla_spark.stages import qarla

    os.makedirs(folder, exist_ok=True)
    kept: Dict = {}

    def keep(cube, testbed, report, config, found):
        queen = qarla._queen_cube(cube, testbed.judgments)

        def rows(batches):
            import pandas as pd
            out = []
            for pdf in batches:
                out.extend(pdf.to_dict("records"))
            yield pd.DataFrame({"data": [pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)]})

        parts = [pickle.loads(r["data"])
                 for r in queen.frame.mapInPandas(rows, "data binary").collect()]
        kept.update(partitions=parts, metrics=tuple(queen.metrics), judged=queen.judged,
                    n_tasks=queen.n_tasks, min_models=queen.min_models, config=config,
                    skipped=qarla.skipped_of(report.tasks))
        return pipeline._qarla(cube, testbed, report, config, found)

    pipeline.ANALYSES = tuple(
        pipeline.Analysis(a.name, a.ready, keep) if a.name == "qarla" else a
        for a in pipeline.ANALYSES if a.name != "statistics")
    spark = build_session(master=master)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_shapes(n_topics, [n_tasks], tmp, seed)[n_tasks]
        pipeline.run(spark, RunConfig(inputs=(paths["summaries"],), sources=(paths["sources"],),
                                      out=os.path.join(tmp, "run"), seed=seed, bootstrap=1000))
    spark.stop()
    with open(os.path.join(folder, CAPTURE_FILE), "wb") as handle:
        pickle.dump(kept, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return {"partitions": len(kept["partitions"]),
            "topics": sum(len(p) for p in kept["partitions"]), "tasks": kept["n_tasks"]}


# --- the rounds in this process ----------------------------------------------

class _Records(list):
    """A round's records in this process: (key, kind, pickled value),
    kept by partition (a list of lists)."""

    def unionByName(self, other):
        return _Records(list(self) + list(other))


class _Frame:
    sparkSession = None

    def __init__(self, partitions):
        self.partitions = partitions


class _Local:
    """Replaces the Spark rounds (:mod:`qarla_spark.spark.rounds`) while
    :func:`qarla_spark.stages.qarla.run_qarla` runs, timing each step."""

    def __init__(self):
        self.seconds: Dict[str, float] = {}

    def _add(self, name, seconds):
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def over_topics(self, frame, kernel, context=None, combine=None):
        from qarla_spark.spark import rounds as rd
        value = context.value if context is not None else None
        out = []
        for part in frame.partitions:
            t0 = time.process_time()
            recs = []
            for row in part:
                recs.extend(kernel(row, value))
            t1 = time.process_time()
            if combine is not None:
                recs = combine(recs)
            t2 = time.process_time()
            out.extend((k, kind, rd.dumps(v)) for k, kind, v in recs)
            t3 = time.process_time()
            self._add(f"kernel {kernel.__name__}", t1 - t0)
            self._add(f"combine {kernel.__name__}", t2 - t1)
            self._add(f"pickle {kernel.__name__}", t3 - t2)
        return _Records(out)

    def reduce_by_key(self, records, reducer, n_partitions, context=None, placement=None):
        from qarla_spark.spark import rounds as rd
        value = context.value if context is not None else None
        groups: Dict[str, list] = {}
        for key, kind, data in records:
            groups.setdefault(key, []).append((kind, data))
        out = []
        for key in sorted(groups):
            t0 = time.process_time()
            items = [(kind, rd.loads(data)) for kind, data in sorted(groups[key])]
            t1 = time.process_time()
            recs = reducer(key, items, value)
            t2 = time.process_time()
            out.extend((k, kind, rd.dumps(v)) for k, kind, v in recs)
            t3 = time.process_time()
            self._add(f"unpickle {reducer.__name__}", t1 - t0)
            self._add(f"reduce {reducer.__name__}", t2 - t1)
            self._add(f"pickle {reducer.__name__}", t3 - t2)
        return _Records(out)

    @staticmethod
    def of_kinds(records, kinds):
        kinds = set(kinds)
        return _Records(r for r in records if r[1] in kinds)

    @staticmethod
    def collect(records, kinds):
        from qarla_spark.spark import rounds as rd
        out = sorted(r for r in records if r[1] in set(kinds))
        return [(key, kind, rd.loads(data)) for key, kind, data in out]

    @staticmethod
    def records_tables(records, names):
        return {name: _Records(r for r in records if r[1] == name) for name in names}


def _patched(local: _Local):
    """The rounds' functions to replace: (module, name, replacement)."""
    from types import SimpleNamespace

    from qarla_spark.spark import cache
    from qarla_spark.spark import rounds as rd
    from qarla_spark.stages import qarla
    return [(rd, "over_topics", local.over_topics), (rd, "reduce_by_key", local.reduce_by_key),
            (rd, "of_kinds", local.of_kinds), (rd, "collect", local.collect),
            (rd, "records_tables", local.records_tables),
            (rd, "broadcast", lambda spark, value: SimpleNamespace(value=value)),
            (cache, "persist", lambda x: x)]


def load(folder: str):
    with open(os.path.join(folder, CAPTURE_FILE), "rb") as handle:
        return pickle.load(handle)


def replay(kept):
    """:func:`run_qarla` on the captured cube, in this process: (CPU
    seconds per step, the stage's result)."""
    from qarla_spark.stages import qarla
    from qarla_spark.stages.cube import TopicCube
    local = _Local()
    patches = _patched(local)
    saved = [(m, n, getattr(m, n)) for m, n, _ in patches]
    saved_n = qarla._n_reduce
    try:
        for m, n, f in patches:
            setattr(m, n, f)
        qarla._n_reduce = lambda cube: cube.n_tasks or 1
        cube = TopicCube(_Frame(kept["partitions"]), kept["metrics"], kept["min_models"],
                         judged=kept["judged"], n_tasks=kept["n_tasks"])
        result = qarla.run_qarla(cube, None, None, kept["config"], kept["skipped"])
    finally:
        for m, n, f in saved:
            setattr(m, n, f)
        qarla._n_reduce = saved_n
    return local.seconds, result


def time_stage(folder: str, repeat: int, profile: bool = False) -> Dict:
    kept = load(folder)
    n_topics = sum(len(p) for p in kept["partitions"])
    replay(kept)                         # warm: imports, compiled kernels
    if profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        replay(kept)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(35)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(60)
    best: Dict[str, float] = {}
    for _ in range(max(1, repeat)):
        seconds, _ = replay(kept)
        for k, s in seconds.items():
            best[k] = min(best.get(k, s), s)
    total = sum(best.values())
    return {"topics": n_topics, "tasks": kept["n_tasks"], "total_s": round(total, 3),
            "ms_per_topic": round(1000 * total / n_topics, 2),
            "steps_ms_per_topic": {k: round(1000 * s / n_topics, 2)
                                   for k, s in sorted(best.items(), key=lambda kv: -kv[1])}}


def _plain(value):
    """devtools.replay_statistics' ``_plain``, pandas frames as their
    columns (dtype and values, floats by their bytes)."""
    import pandas as pd

    from devtools import replay_statistics
    if isinstance(value, pd.DataFrame):
        return ("frame", [(str(c), str(value[c].dtype), _plain(value[c].tolist()))
                          for c in value.columns])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_plain(v) for v in value])
    if isinstance(value, dict):
        return ("d", sorted(((_plain(k), _plain(v)) for k, v in value.items()), key=repr))
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return (type(value).__name__, _plain(vars(value)))
    return replay_statistics._plain(value)


def outputs(folder: str, file: str) -> Dict:
    """Every record of the stage (its kernels' and reduces' kept records,
    its tables), decoded to plain values, and what the driver received."""
    from qarla_spark.spark import rounds as rd
    kept = load(folder)
    _, result = replay(kept)
    plain: Dict[str, List] = {}
    for key, kind, data in sorted(result.records):
        plain.setdefault(f"records/{key}", []).append((key, kind, _plain(rd.loads(data))))
    for name, records in sorted(result.tables.items()):
        for key, kind, data in sorted(records):
            plain.setdefault(f"{name}/{key}", []).append((key, kind, _plain(rd.loads(data))))
    for t in result.tasks:
        plain[f"task/{t.task}"] = [(t.task, "info", _plain(t.info())),
                                   (t.task, "ranking", _plain(t.ranking)),
                                   (t.task, "agreement", _plain(t.agreement)),
                                   (t.task, "human_first", _plain(t.human_first))]
    with open(file, "wb") as handle:
        pickle.dump(plain, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return {"groups": len(plain), "records": sum(len(v) for v in plain.values())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("capture")
    c.add_argument("folder")
    c.add_argument("--topics", type=int, default=200)
    c.add_argument("--tasks", type=int, default=10)
    c.add_argument("--seed", type=int, default=13)
    c.add_argument("--master", default="local[2]")
    t = sub.add_parser("time")
    t.add_argument("folder")
    t.add_argument("--repeat", type=int, default=2)
    t.add_argument("--profile", action="store_true")
    o = sub.add_parser("outputs")
    o.add_argument("folder")
    o.add_argument("file")
    args = parser.parse_args(argv)
    import json
    if args.command == "capture":
        found = capture(args.folder, args.topics, args.tasks, args.seed, args.master)
    elif args.command == "time":
        found = time_stage(args.folder, args.repeat, args.profile)
    else:
        found = outputs(args.folder, args.file)
    print(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
