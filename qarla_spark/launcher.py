"""The one launcher of qarla_spark's commands: how a run starts, how it
ends, and what the user reads when it does not.

``qarla run``, ``qarla similarities`` and the spark-submit job
(``jobs/qarla_run.py``) start a run through :func:`launch` — the same
checks in the same order (run file, options, an existing ``--out``, metric
names, Java, small inputs read and checked), before Spark starts where
possible — and every command runs inside :func:`guarded`: errors the user
can fix are printed as one paragraph (no traceback; ``--debug`` for one),
SIGINT and SIGTERM end the run with one line (Spark's jobs cancelled, the
staging folder removed, the JVM ended:
:mod:`qarla_spark.spark.interrupts`). Exit status: 0
success, 1 the input has errors, 2 bad configuration (Spark failing to
start included: a bad setting, master URL, port or memory), 3 Java missing,
70 internal error, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from typing import Callable, Optional, Sequence

from qarla_spark.config import RunConfig, config_from_args, load_config
from qarla_spark.errors import ConfigError, InputError, QarlaError
from qarla_spark.spark import interrupts

EXIT_INPUT = 1
EXIT_INTERNAL = 70


def session_for(config: RunConfig, verbose: bool = False, summaries: Optional[int] = None,
                warm: bool = True, debug: bool = False):
    """The Spark session of a command (``warm``: start the Python workers in
    the background, for the commands that compute). Spark failing to start
    is a :class:`~qarla_spark.errors.SparkStartError`: its reason and the
    setting that caused it (the JVM's start-up output shown with
    ``--verbose`` or ``--debug``)."""
    from qarla_spark.spark.session import build_session
    spark = build_session(config.profile, config.master, config.spark_conf, verbose=verbose,
                          summaries=summaries, warm=warm, debug=debug)
    interrupts.handle_signals()  # again, should a SparkContext made elsewhere have replaced it
    return spark


def refuse_existing_out(config: RunConfig) -> None:
    """An existing local ``--out`` without ``--overwrite`` fails before
    Spark starts (other file systems: when the run directory is opened)."""
    from qarla_spark.paths import local_path
    path = local_path(config.out)
    if path is not None and not config.overwrite and os.path.exists(path):
        raise ConfigError(f"the output directory {config.out.rstrip('/')} already exists: "
                          "choose another --out or pass --overwrite to replace it")


def check_small_first(config: RunConfig, progress):
    """Small local inputs read and checked before Spark starts (``None``:
    Spark reads them): their errors are raised and their description shown
    at once; their size (``report.n_summaries``) picks the JVM flags of a
    small testbed."""
    from qarla_spark import pipeline
    checked = pipeline.check_small(config)
    if checked is not None:
        checked.report.raise_for_errors()
        progress.testbed(checked.report.format())
    return checked


def make_progress(args: argparse.Namespace):
    """What ``qarla run`` says while it runs (nothing with ``--quiet``)."""
    from qarla_spark.progress import NullProgress, TerminalProgress
    if getattr(args, "quiet", False):
        from qarla_spark.spark import class_archive
        class_archive.say_nothing()      # nor the class archive's line at exit
        return NullProgress()
    return TerminalProgress()


def launch(args: argparse.Namespace, stages=None, command: Optional[Sequence[str]] = None
           ) -> int:
    """A run from parsed options (``qarla run``, ``qarla similarities`` with
    ``stages``, the spark-submit job): the run file read, the options
    checked, an existing ``--out`` refused and the metric names resolved
    before Spark starts; small local inputs read and checked, then the
    session (sized for them), the run, its summary printed. Exit status 0;
    errors are raised (:func:`guarded` renders them). ``command``: what
    run.json records as the command line (default: this process's)."""
    from qarla_spark import pipeline
    from qarla_spark.io import limits
    from qarla_spark.paths import is_local
    from qarla_spark.progress import SparkCounter, stage
    from qarla_spark.spark.session import check_can_start
    progress = make_progress(args)
    _CURRENT["progress"] = progress
    try:
        spark = None

        def start(config):
            check_can_start()  # a missing Java is the first thing said
            with stage(progress, "spark session", {}):
                return session_for(config, getattr(args, "verbose", False),
                                   debug=getattr(args, "debug", False))

        if args.config and not is_local(args.config):
            # a run file on HDFS, S3...: read through Hadoop, so Spark starts
            # first, from the command line's options alone (load_config
            # refuses Spark settings in such a file)
            spark = start(config_from_args(args))
            base = load_config(args.config, spark=spark)
        else:
            base = load_config(args.config) if args.config else None
        config = config_from_args(args, base).updated(stages=stages)
        refuse_existing_out(config)
        if spark is None and not all(is_local(p) for p in config.metric_plugins):
            spark = start(config)   # plugins on HDFS, S3...: read through Hadoop
        metrics = pipeline.plan_metrics(config)  # bad metric names fail before Spark starts
        if spark is None:
            pipeline.check_local_inputs(config)   # missing local inputs: before Spark too
            check_can_start()
        checked = check_small_first(config, progress)
        if checked is not None and "similarities" in config.stages and not config.similarities:
            with warnings.catch_warnings():     # said by the run, once
                warnings.simplefilter("ignore")
                # a metric a task's language refuses, a wrong TASK=LANG: before Spark
                pipeline.for_languages(config, metrics, [t.task for t in checked.report.tasks])
        limits.check_run(config, checked, len(metrics) if "similarities" in config.stages else 0)
        if spark is None:
            summaries = None if checked is None else checked.report.n_summaries
            with stage(progress, "spark session", {}):
                spark = session_for(config, getattr(args, "verbose", False), summaries,
                                    debug=getattr(args, "debug", False))
        if hasattr(progress, "counter"):
            progress.counter = SparkCounter(spark.sparkContext)
        result = pipeline.run(spark, config, command=command, progress=progress,
                              checked=checked)
    finally:
        _CURRENT.pop("progress", None)
        if hasattr(progress, "close"):
            progress.close()
    print(result.summary(testbed=not getattr(progress, "printed_testbed", False)))
    return 0


#: the running command's progress (warnings are printed through it, so that
#: they do not tear its live line)
_CURRENT: dict = {}


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """QARLA warnings (skipped topics) as one line, without a source line."""
    from qarla_spark.names import QarlaWarning
    if issubclass(category, QarlaWarning):
        progress = _CURRENT.get("progress")
        if hasattr(progress, "message"):
            progress.message(f"qarla: warning: {message}")
        else:
            print(f"qarla: warning: {message}", file=sys.stderr)
    else:
        _ORIGINAL_SHOWWARNING(message, category, filename, lineno, file, line)


_ORIGINAL_SHOWWARNING = warnings.showwarning


def _error_text(exc: BaseException) -> str:
    """An error's text with its causes (a Py4J error's Java side too)."""
    parts, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        parts.append(str(exc))
        java = getattr(exc, "java_exception", None)
        if java is not None:
            try:
                parts.append(str(java.toString()))
            except Exception:  # the JVM may be gone
                pass
        exc = exc.__cause__ or exc.__context__
    return "\n".join(parts)


def guarded(func: Callable[[], int], debug: bool = False) -> int:
    """Run ``func``; turn errors into a message and an exit status.
    SIGINT and SIGTERM interrupt it
    (:func:`qarla_spark.spark.interrupts.end_interrupted`)."""
    interrupts.reset()
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    interrupts.handle_signals()
    try:
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                return func()
        except Exception as exc:
            if interrupts.received() is None and not interrupts.interrupted(exc):
                raise
            # what a signal cut short may surface as another error (a py4j
            # error, a cancelled job): the run was interrupted all the same
            raise interrupts.Interrupted(interrupts.received() or signal.SIGINT) from None
    except KeyboardInterrupt as exc:
        return interrupts.end_interrupted(exc)
    except QarlaError as exc:
        if debug:
            raise
        print(f"qarla: {exc}", file=sys.stderr)
        return EXIT_INPUT if isinstance(exc, InputError) else exc.exit_code
    except Exception as exc:  # a bug or a Spark failure: short message, no wall of Java
        if debug:
            raise
        from qarla_spark.errors import executor_failure
        cause = executor_failure(_error_text(exc))
        if cause is not None:
            print(f"qarla: {cause}.\nRerun with --debug to see the executors' traceback.",
                  file=sys.stderr)
            return EXIT_INTERNAL
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(f"qarla: internal error: {type(exc).__name__}: {first}\n"
              "Rerun with --debug to see the full traceback, and report it if the input "
              "looks right.", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        if interrupts.threading_main():
            for signum, handler in previous.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        # after an interrupt the process ends: Python's standard error stays muted
