"""The run: its stages in order, each returning tables that are written as
declared in :mod:`qarla_spark.tables`.

Stages (``RunConfig.stages`` may stop early; :mod:`qarla_spark.stages`):

``testbed``       read the inputs, validate them, describe the testbed, the
                  canonical tables;
``similarities``  every metric on every ordered same-topic pair (SPEC §2),
                  user metric tables appended (or a given table reused);
``qarla``         KING, clustering, the best set, QUEEN, JACK, agreement
                  (SPEC §3-7);
``hbr``           HBR, heterogeneity, AUC (SPEC §8-9);
``statistics``    bootstrap intervals and paired tests of what the QARLA and
                  HBR stages found (``--bootstrap``; issue 11).

The QARLA and HBR stages read one :class:`~qarla_spark.stages.cube.TopicCube`
built here. Metric names are resolved before Spark reads anything: a typo
fails the run at once, naming the closest valid names. The run directory
is written atomically (:mod:`qarla_spark.spark.output`) and what the stages
cached is released when the run ends (:mod:`qarla_spark.spark.cache`).
"""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import asdict, dataclass
from contextlib import contextmanager
from typing import Any, Callable, Dict, List, Optional, Sequence

from qarla_spark import __version__
from qarla_spark.config import RunConfig
from qarla_spark.names import STAGE_PROPERTY
from qarla_spark.io import ValidationReport
from qarla_spark.memory import release_freed_memory
from qarla_spark.progress import NullProgress, Progress, stage
from qarla_spark.spark import cache
from qarla_spark.spark.output import RunDirectory, check_reused_table
from qarla_spark.stages.similarities import for_languages, plan_metrics  # noqa: F401 (early checks)
from qarla_spark.stages.testbed import check_local_inputs, check_small, input_specs, load  # noqa: F401,E501
from qarla_spark.tables import TABLES, table


def signature(config: RunConfig, spark_version: str,
              languages: Optional[Dict[str, Any]] = None) -> str:
    """One line naming what produced a result (sacrebleu-style); a run with a
    task in a language other than English adds each task's language and the
    versions of the packages that process it
    (:func:`~qarla_spark.text.languages.signature`)."""
    from qarla_spark.text.languages import signature as text_signature
    return (f"qarla_spark:{__version__}|spark:{spark_version}|seed:{config.seed}"
            + text_signature({t: d["language"] for t, d in (languages or {}).items()}))


@dataclass
class RunResult:
    out: str
    report: ValidationReport
    info: Dict[str, Any]
    texts: List[str]

    def summary(self, testbed: bool = True) -> str:
        """What ``qarla run`` prints at the end; without the testbed's
        description when ``testbed`` is false (progress printed it first)."""
        from qarla_spark.summary import describe_run
        text = describe_run(self.report.format() if testbed else "", self.texts, self.out,
                            self.info["tables"], self.info["signature"])
        return text if testbed else text.lstrip("\n")


def run(spark, config: RunConfig, command: Optional[Sequence[str]] = None,
        progress: Optional[Progress] = None, checked=None) -> RunResult:
    """Run the configured stages for every task of the input and write the
    run directory (atomically). What the stages cached is released when the
    run ends, so one session can run many. ``progress`` hears of the
    testbed's description and of each stage's start and end
    (:mod:`qarla_spark.progress`; default: nobody). ``checked``: the inputs
    already read and checked in the driver (:func:`check_small`), whose
    description the caller has shown."""
    from qarla_spark.spark.partitioning import run_scope
    with cache.scope(), run_scope(spark):
        return _run(spark, config, command, progress or NullProgress(), checked)


#: tables written at once (Spark runs their jobs side by side: a small
#: table's write is mostly fixed cost, planning and committing)
CONCURRENT_WRITES = 3


class TableWriter:
    """A run's table writes, in the background: :meth:`submit` returns at
    once and the run goes on computing while up to :data:`CONCURRENT_WRITES`
    tables are written (their Spark jobs fill the cores the run's own jobs
    leave idle); :meth:`wait` waits for all of them (the run does before
    writing run.json). ``run.json`` lists the tables in the order of their
    declarations whatever the order they finish in; a table submitted
    without a declaration is a bug, said at once. A failed write is raised
    by the next :meth:`check` or :meth:`wait`; :meth:`close` after an error
    waits for the writes running (so that removing the staging folder
    afterwards is final), after an interrupt it does not (the run cancels
    Spark's jobs)."""

    def __init__(self, out: RunDirectory):
        from concurrent.futures import ThreadPoolExecutor
        self.out = out
        self.pool = ThreadPoolExecutor(max_workers=CONCURRENT_WRITES,
                                       thread_name_prefix="qarla-write")
        self.futures: List[Any] = []

    def submit(self, tables: Dict[str, Any], timings: Dict[str, float]) -> None:
        """Write ``tables`` (declared names), each one's time into
        ``timings`` as ``write_<table>_s`` once written."""
        for name in tables:
            table(name)
        out = self.out
        spark = getattr(out, "spark", None)
        sc = spark.sparkContext if spark is not None else None
        stage_name = sc.getLocalProperty(STAGE_PROPERTY) if sc is not None else None

        def write(group):
            if sc is not None and stage_name is not None:
                # the write's jobs count for the stage that asked for it
                sc.setLocalProperty(STAGE_PROPERTY, stage_name)
            t0 = time.time()
            bundle = getattr(tables[group[0].name], "bundle", None)
            if bundle is not None:      # written together (one Spark job)
                out.write_bundle(group, bundle)
            else:
                out.write(group[0], tables[group[0].name])
            for d in group:
                timings[f"write_{d.name}_s"] = round(time.time() - t0, 3)

        declared = [d for d in TABLES if d.name in tables]
        for d in declared:      # the timings keep the declared order
            timings.setdefault(f"write_{d.name}_s", None)
        groups: Dict[Any, list] = {}
        for d in declared:
            bundle = getattr(tables[d.name], "bundle", None)
            groups.setdefault(id(bundle) if bundle is not None else d.name, []).append(d)
        self.futures += [self.pool.submit(write, group) for group in groups.values()]

    def check(self) -> None:
        """Raise the error of a write that failed (the first submitted)."""
        for future in self.futures:
            if future.done() and future.exception() is not None:
                raise future.exception()

    def wait(self) -> None:
        """Wait for every write submitted; raise the first one's error."""
        for future in self.futures:
            future.result()

    def close(self, interrupted: bool = False) -> None:
        """Stop the writes not started; wait for the running ones unless
        ``interrupted``."""
        self.pool.shutdown(wait=not interrupted, cancel_futures=True)


@contextmanager
def run_stage(spark, windows: List[Dict[str, Any]], progress: Progress, name: str,
              timings: Optional[Dict[str, float]] = None, key: Optional[str] = None):
    """:func:`~qarla_spark.progress.stage`, and: the Spark jobs started in the
    block carry the stage's name (the local property
    :data:`~qarla_spark.eventlog.STAGE_PROPERTY`, read by ``qarla profile``
    from the event log), and its window goes to ``windows`` (``run.json``'s
    ``stage_windows``)."""
    sc = spark.sparkContext
    before = sc.getLocalProperty(STAGE_PROPERTY)
    sc.setLocalProperty(STAGE_PROPERTY, name)
    window = {"stage": name, "start": round(time.time(), 3), "end": None}
    windows.append(window)     # open until the block ends (the last stage writes
    try:                       # run.json before it does)
        with stage(progress, name, timings, key):
            yield
    finally:
        # the session's later jobs (another run's input) are not this stage's
        sc.setLocalProperty(STAGE_PROPERTY, before)
    window["end"] = round(time.time(), 3)
    # what the stage's driver work freed (its collected records, plans) goes
    # back to the system before the next stage, whose peak would sit on it
    release_freed_memory()


def write_tables(out: RunDirectory, tables: Dict[str, Any], timings: Dict[str, float]) -> None:
    """Write a stage's tables (:class:`TableWriter`) and wait for them."""
    from qarla_spark.spark.interrupts import interrupted
    writer = TableWriter(out)
    try:
        writer.submit(tables, timings)
        writer.wait()
    except BaseException as exc:
        writer.close(interrupted(exc))
        raise
    writer.close()


@dataclass(frozen=True)
class Analysis:
    """A stage over the topic cube: ``ready(cube, found, config)`` says
    whether its inputs are there (``found``: the results of the stages
    before it, by name); ``run(cube, testbed, report, config, found)``
    returns its result, whose ``tables`` (declared names) the run writes
    and whose ``info(config)`` is its entry of run.json (with its
    ``timings``)."""

    name: str
    ready: Callable[..., bool]
    run: Callable[..., Any]


def _qarla(cube, testbed, report, config, found):
    from qarla_spark.stages.qarla import run_qarla, skipped_of
    return run_qarla(cube, testbed.summaries, testbed.judgments, config,
                     skipped_of(report.tasks))


def _hbr(cube, testbed, report, config, found):
    from qarla_spark.stages.hbr import run_hbr
    return run_hbr(cube, testbed.judgments, config)


def _statistics(cube, testbed, report, config, found):
    from qarla_spark.stages.statistics import run_statistics
    return run_statistics(found.get("qarla"), found.get("hbr"), testbed.judgments, config,
                          report.tasks, getattr(testbed, "ratings", None))


#: the stages over the cube, in order
ANALYSES = (
    Analysis("qarla", lambda cube, found, config: cube is not None, _qarla),
    Analysis("hbr", lambda cube, found, config: cube is not None, _hbr),
    Analysis("statistics", lambda cube, found, config: bool(config.bootstrap) and (
        "qarla" in found or "hbr" in found), _statistics),
)


def _run(spark, config: RunConfig, command: Optional[Sequence[str]],
         progress: Progress, checked) -> RunResult:
    from qarla_spark.stages import similarities as sim_stage
    from qarla_spark.stages.testbed import testbed_tables

    started = time.time()
    windows: List[Dict[str, Any]] = []
    metrics = plan_metrics(config) if "similarities" in config.stages else ()
    out = RunDirectory(spark, config.out, config.overwrite, commit=config.commit)
    writer = TableWriter(out)
    extra: Dict[str, Any] = {}
    texts: List[str] = []
    try:
        announced = checked is not None
        written: List[str] = []

        def write_checked(name, rows):
            # the inputs read in the driver: their tables are written here
            if not checked.report.n_errors:
                out.write(table(name), rows)
                written.append(name)

        testbed, report = load(spark, config, checked,
                               write_checked if checked is not None else None)
        report.raise_for_errors()
        languages: Dict[str, Any] = {}
        if "similarities" in config.stages and not config.similarities:
            # metrics a task's language cannot compute: refused or left out
            metrics, languages = sim_stage.for_languages(config, metrics,
                                                         [t.task for t in report.tasks])
        if checked is None and "similarities" in config.stages:
            # inputs Spark read: their largest topics against the session's memory
            from qarla_spark.io import limits
            limits.check_report(report, len(metrics), dict(spark.sparkContext.getConf().getAll()))
        from qarla_spark.spark.partitioning import size_for_topics
        size_for_topics(spark, sum(t.n_topics for t in report.tasks))
        timings = {"load_validate_s": round(time.time() - started, 3)}
        if not announced:
            progress.testbed(report.format())

        with run_stage(spark, windows, progress, "testbed tables", timings, "write_testbed_s"):
            writer.submit(testbed_tables(spark, testbed, report, written), {})

        from qarla_spark.stages.cube import TopicCube
        sims = rows = None
        if config.similarities:
            with run_stage(spark, windows, progress, "similarities", timings):
                check_reused_table(spark, config.similarities)   # of a finished run only
                sims, extra["similarities"] = sim_stage.reuse(spark, config.similarities, testbed)
        elif "similarities" in config.stages:
            with run_stage(spark, windows, progress, "similarities", timings):
                rows, sims, extra["similarities"] = sim_stage.compute(config, testbed, metrics,
                                                                       report.tasks)
                extra["similarities"].update(languages)
                if rows is None:    # user tables: the cube comes from the table written
                    write_tables(out, {"similarities": sims}, {})
                    sims = spark.read.parquet(out.path("similarities"))
                else:               # the cube's rows computed and kept, the table written
                    rows.count()    # from them while the next stages run
                    writer.submit({"similarities": sims}, {})

        cube = None
        if "qarla" in config.stages or "hbr" in config.stages:
            if rows is not None:    # the battery's own cube rows, kept by the write
                cube = TopicCube.of_rows(rows, extra["similarities"]["metrics"])
            elif sims is not None:
                with run_stage(spark, windows, progress, "cube", timings):
                    cube = TopicCube.build(sims, testbed.summaries,
                                           extra["similarities"]["metrics"])
        if cube is not None:
            cube = cube.for_tasks(len(report.tasks)).with_judgments(testbed.judgments)
        # the analyses over the cube: each a stage of the same shape (its
        # inputs -> a result with its tables and its run.json entry)
        found: Dict[str, Any] = {}
        for analysis in ANALYSES:
            if analysis.name not in config.stages or not analysis.ready(cube, found, config):
                continue
            with run_stage(spark, windows, progress, analysis.name, timings):
                writer.check()
                result = analysis.run(cube, testbed, report, config, found)
                found[analysis.name] = result
                extra[analysis.name] = {**result.info(config)}
                extra[analysis.name].setdefault("timings", {})
                writer.submit(result.tables, extra[analysis.name]["timings"])
        qarla, hbr, stats = (found.get(name) for name in ("qarla", "hbr", "statistics"))
        planned = None
        if (config.plan or "plan" in config.stages) and qarla is not None:
            with run_stage(spark, windows, progress, "plan", timings):
                writer.wait()           # the tables the plan reads
                planned = plan_tables(spark, out.staging, extra["qarla"], config, config.seed)
                extra["plan"] = planned.info(config)
                writer.submit(planned.tables, extra["plan"]["timings"])
        with run_stage(spark, windows, progress, "writing", timings, "commit_s"):
            writer.wait()
            from qarla_spark.summary import (describe_across, describe_hbr, describe_judges,
                                             describe_qarla, describe_raters,
                                             describe_statistics)
            if qarla is not None:
                texts += [describe_qarla(t, stats) for t in qarla.tasks]
            if hbr is not None:
                texts.append(describe_hbr(hbr, config.seed, stats))
            if stats is not None:
                best = {t.task: (t.best_set.label, t.best_single.label)
                        for t in (qarla.tasks if qarla is not None else [])}
                texts += [t for t in (describe_judges(stats, best), describe_raters(stats),
                                      describe_across(stats)) if t]
                texts.append(describe_statistics(stats))
            if planned is not None:
                from qarla_spark.stages.planning import describe_plan
                texts.append(describe_plan(planned))
            extra["qarla_summary"] = "\n".join(texts)   # what the run prints of its stages
            info = run_info(spark, config, command, report, started, timings,
                            languages.get("languages"))
            info.update(extra)
            info["stage_windows"] = windows
            from qarla_spark.report import write_staged_report
            final = out.commit(info, before_move=lambda folder, info_: write_staged_report(
                folder, info_, spark=spark))
    except BaseException as exc:
        from qarla_spark.spark.interrupts import (after_jvm_end, cancel_after_interrupt,
                                                  interrupted)
        writer.close(interrupted(exc))
        if interrupted(exc):
            # Ctrl-C (SIGTERM under qarla): stop Spark's jobs before removing
            # the staging folder (their tasks write into it), and remove it
            # again once the JVM has ended (a background write may have
            # started a job after the cancel)
            cancel_after_interrupt(spark, then=out.abort)
            after_jvm_end(out.remove_local)
        else:
            out.abort()
        raise
    writer.close()
    return RunResult(final, report, {**info, "tables": out.ordered_tables()}, texts)


def run_info(spark, config: RunConfig, command, report: ValidationReport, started: float,
             timings: Dict[str, float], languages: Optional[Dict[str, Any]] = None
             ) -> Dict[str, Any]:
    """The provenance written to run.json (``languages``: each task's
    tokenizer, stop list and stemmer, :func:`~qarla_spark.text.languages.describe`)."""
    sc = spark.sparkContext
    return {
        "qarla_spark_version": __version__,
        "spark_version": spark.version,
        "python_version": platform.python_version(),
        "master": sc.master,
        "default_parallelism": sc.defaultParallelism,
        "spark_application_id": sc.applicationId,
        "event_log_dir": (sc.getConf().get("spark.eventLog.dir", None)
                          if sc.getConf().get("spark.eventLog.enabled", "false") == "true"
                          else None),
        "signature": signature(config, spark.version, languages),
        "seed": config.seed,
        "command": list(command) if command is not None else list(sys.argv),
        "config": config.to_dict(),
        "inputs": [asdict(s) for s in input_specs(config)],
        "bundled_testbed": "summeval" if config.uses_bundled else None,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "elapsed_s": round(time.time() - started, 3),
        "timings": timings,
        "testbed": [asdict(t) for t in report.tasks],
        "problems": {"errors": report.n_errors, "warnings": report.n_warnings,
                     "groups": [g.to_dict() for g in report.groups]},
    }


# ---------------------------------------------------------------------------
# the plan of the next shared task (issue 40)
# ---------------------------------------------------------------------------

def plan_settings(config: RunConfig, seed: int):
    """The plan's :class:`~qarla_spark.stages.planning.Settings` of a run's
    configuration (``seed``: the run's)."""
    from qarla_spark.stages.planning import Settings
    return Settings(trials=config.plan_trials, sizes=tuple(config.plan_sizes) or None,
                    ks=tuple(config.plan_ks), seed=int(seed),
                    ppi_measure=config.plan_measure)


def plan_tables(spark, folder: str, qarla_info: Dict[str, Any], config: RunConfig, seed: int,
                n_partitions: Optional[int] = None):
    """The plan stage on the tables under ``folder``
    (:mod:`qarla_spark.stages.planning`): its result, whose ``tables`` are
    ``power/`` and ``ppi/``."""
    from qarla_spark.stages import planning
    started = time.time()
    inputs = planning.read_inputs(spark, folder, qarla_info)
    read_s = round(time.time() - started, 3)
    settings = plan_settings(config, seed)
    if settings.ppi_measure is not None:
        for t in inputs:
            if t.criteria and planning.ppi_measure_of(t, settings) is None:
                from qarla_spark.errors import ConfigError
                raise ConfigError(f"--plan-measure {settings.ppi_measure}: task {t.task} has "
                                  f"no such measure (it has {', '.join(t.measures)})")
    result = planning.run_plan(spark, inputs, settings, n_partitions)
    result.timings = {"read_inputs_s": read_s, **result.timings}
    return result


def plan_run(spark, run_dir: str, config: RunConfig, n_partitions: Optional[int] = None):
    """``qarla plan RUN_DIR``: the plan of a finished run, its tables and
    ``run.json``'s ``plan`` entry added to the run
    (:func:`~qarla_spark.spark.output.add_tables`). Returns the result."""
    from qarla_spark.errors import ConfigError
    from qarla_spark.spark.output import add_tables, read_run_json
    run_dir = str(run_dir).rstrip("/")
    info = read_run_json(spark, run_dir)
    if not (info.get("qarla") or {}).get("tasks"):
        raise ConfigError(f"{run_dir}: the run has no QARLA stage (no best set): nothing to "
                          "plan from")
    started = time.time()
    sc = spark.sparkContext
    before = sc.getLocalProperty(STAGE_PROPERTY)
    sc.setLocalProperty(STAGE_PROPERTY, "plan")    # qarla profile groups its jobs so
    with cache.scope():
        result = plan_tables(spark, run_dir, info["qarla"], config, info.get("seed", 13),
                             n_partitions)
        tables = result.tables
        t0 = time.time()
        entry = result.info(config)
        add_tables(spark, run_dir, tables, "plan", entry)
        entry["timings"]["write_s"] = round(time.time() - t0, 3)
    sc.setLocalProperty(STAGE_PROPERTY, before)
    result.timings.update(entry["timings"], total_s=round(time.time() - started, 3))
    return result
