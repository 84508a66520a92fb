"""The ``qarla`` command: thin argument parsing around :mod:`qarla_spark.pipeline`.

Errors the user can fix are printed as one paragraph (no traceback; add
``--debug`` for one). Exit status: 0 success, 1 the input has errors,
2 bad configuration, 3 Java missing, 70 internal error, 130 interrupted
(Ctrl-C), 143 terminated (SIGTERM).

``qarla run`` and ``qarla similarities`` print the testbed's description as
soon as the inputs are valid, then a line as each stage starts and ends
(:mod:`qarla_spark.progress`); ``--quiet``: only the final summary and
errors. An interrupt ends the run with one line: Spark's jobs are
cancelled, the staging folder removed and the JVM ended
(:func:`qarla_spark.spark.session.end_after_interrupt`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from typing import Callable, Optional, Sequence

from qarla_spark import __version__, tables
from qarla_spark.config import RunConfig, load_config
from qarla_spark.errors import ConfigError, InputError, QarlaError
from qarla_spark.options import OPTIONS, Option, add_arguments

EXIT_INPUT = 1
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130   # SIGINT (Ctrl-C); SIGTERM: 143

INPUTS_HELP = """\
inputs:
  INPUT is a file or a folder (searched recursively). The format is chosen by
  each file's name (.gz files are decompressed):
    *.jsonl, *.json  one JSON object per line: {"task", "topic", "summarizer",
                     "role": "model"|"peer", "text", "human": {criterion: score}}
                     or SacreROUGE records {"instance_id", "summarizer_id",
                     "summarizer_type": "peer"|"reference", "summary", "references"}
    *.csv, *.tsv     a header row and the same columns ("human" as JSON)
    *.parquet        the same columns ("human" as a map or struct column)
    D30001.M.100.T.A DUC/TAC summary files: topic = first dot field, summarizer
                     = fifth; letters are models, digits are peers; plain text
                     or SGML/HTML markup
  Write TASK=INPUT to give the task of records that carry none (DUC/TAC,
  SacreROUGE, files without a "task" field), or --task for all of them.
  Without INPUT the bundled SummEval testbed is used (1 task, 100 topics,
  11 models and 16 systems per topic, expert judgments).
"""


METRICS_HELP = """
metrics:
  --metrics takes names, shell patterns and groups, comma-separated or
  repeated: R-1.a,Rpre-L.c  'R-*.a'  'TVM.*'  default (the 59 of the battery:
  R-/Rpre-<1,2,3,4,L,W-1.2,S4,SU4>.<a,b,c>, TVM.<1..512>, AVLS, GRAMSIM)
  rouge  F (harmonic means F-<kind>.<v>, not in the default)  all.
  Variants: a = all tokens, b = SMART stop words removed, c = removed and
  stemmed (ROUGE-1.5.5's -m). 'qarla metrics' lists every name.
  Your own metrics: --user-metrics TABLE (Parquet or CSV with task, topic,
  summarizer_s, summarizer_r, metric, value; every ordered pair of every
  topic, exactly once) or --metric-plugin FILE.py (a file calling
  qarla_spark.metrics.registry.register_metric(name, func) with
  func(s_tokens, r_tokens) -> float). Both join the battery.
"""


def build_parser(options: Sequence[Option] = OPTIONS) -> argparse.ArgumentParser:
    """The ``qarla`` command; the arguments of ``validate``, ``run`` and
    ``similarities`` (and ``--debug``) come from ``options``."""
    parser = argparse.ArgumentParser(
        prog="qarla",
        description="Evaluate automatic summarizers without human judges: QARLA (QUEEN, KING, "
                    "JACK), metric clustering and Heterogeneity-Based Ranking, on Spark.",
        epilog="Run 'qarla COMMAND --help' for each command's inputs, outputs and defaults.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"qarla_spark {__version__}")
    add_arguments(parser, "qarla", options)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    v = sub.add_parser(
        "validate", help="check inputs and describe the testbed",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read the inputs, check them, and print per task: topics, models per topic "
                    "(min/median/max), peer systems, summaries, judgments by criterion, and "
                    "every problem found (file, line, field). Writes nothing. Exit status 1 "
                    "when the input has errors (warnings alone exit 0).",
        epilog=INPUTS_HELP)
    add_arguments(v, "validate", options)

    r = sub.add_parser(
        "run", help="run the evaluation and write a run directory",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read and validate the inputs, then run every stage for every task and "
                    "write the results as Parquet tables under --out, with run.json "
                    "(configuration, seed, versions) and report.html (figures and tables "
                    "to open in a browser; 'qarla report' rebuilds it). The directory "
                    "appears only when the run is complete; a crash leaves "
                    "OUT.incomplete-<id> instead (committed in place, on object stores: OUT "
                    "with a run.json saying 'incomplete', which readers refuse).",
        epilog=INPUTS_HELP + METRICS_HELP + "\n" + tables.help_text())
    add_arguments(r, "run", options)

    s = sub.add_parser(
        "similarities", help="compute the similarity table only",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read and validate the inputs, then compute every metric on every ordered "
                    "pair (s, r), s != r, of summaries of the same topic (models and peers) and "
                    "write OUT/similarities/ (task, topic, summarizer_s, summarizer_r, metric, "
                    "value; r plays the reference) with the testbed tables and run.json.",
        epilog=INPUTS_HELP + METRICS_HELP + "\n"
        + tables.help_text(stages=("testbed", "similarities")))
    add_arguments(s, "similarities", options)

    m = sub.add_parser("metrics", help="list the metrics and what they compute")
    m.add_argument("names", nargs="*", metavar="NAME",
                   help="names, patterns or groups to list (default: all)")
    m.add_argument("--metric-plugin", action="append", default=None, metavar="FILE.py",
                   dest="metric_plugins", help="also load the metrics this file registers")

    sub.add_parser("info", help="versions, Java, and where the Spark profiles are")

    rep = sub.add_parser(
        "report", help="(re)build report.html of a run directory, without Spark",
        description="Build the self-contained HTML report (figures, sortable tables) of a "
                    "finished run from its run.json and Parquet tables alone; no Spark.")
    rep.add_argument("run_dir", metavar="RUN_DIR", help="a run directory qarla run wrote")
    rep.add_argument("--out", dest="report_out", metavar="FILE", default=None,
                     help="where to write it (default: RUN_DIR/report.html)")

    prof = sub.add_parser(
        "profile", help="where a run's time went, from Spark's event log",
        description="Per stage of a finished run and for the whole run: Spark jobs, tasks, "
                    "wall time, summed task time, driver time (no task running) and the "
                    "critical path (driver time plus the longest task of each Spark stage: "
                    "the run's time with unlimited cores). The run must have been made with "
                    "--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file:///DIR.")
    prof.add_argument("run_dir", metavar="RUN_DIR", nargs="?", default=None,
                      help="a run directory qarla run wrote (its run.json names its log)")
    prof.add_argument("--log", default=None, metavar="PATH",
                      help="the event log (a file, or a rolling log's folder), if not the "
                           "one the run names; alone: its jobs grouped by qarla stage")
    prof.add_argument("--json", dest="profile_json", action="store_true",
                      help="print the figures as JSON")

    pkg = sub.add_parser(
        "package", help="write the package (and its environment) for Spark's executors",
        description="Write qarla_spark-<version>-<digest>.zip (the code, the bundled data and "
                    "the Spark profiles; reproducible) for spark-submit --py-files, and print "
                    "it. qarla run and jobs/qarla_run.py ship it by themselves on a non-local "
                    "master; its dependencies must be in the executors' Python: --env also "
                    "writes them, with qarla_spark, as a packed environment (README, 'Running "
                    "on a cluster').")
    pkg.add_argument("--out", dest="package_out", metavar="DIR", default="dist",
                     help="folder to write into (default: dist)")
    pkg.add_argument("--env", action="store_true",
                     help="also write qarla_spark-<version>-env-<python>-<platform>.tar.gz: a "
                          "venv holding qarla_spark and every run-time dependency but pyspark "
                          "(copied from this Python's installed files, no download), packed "
                          "with venv-pack for spark-submit --archives ENV#environment --conf "
                          "spark.pyspark.python=./environment/bin/python")
    pkg.add_argument("--python-prefix", metavar="PREFIX", default=None,
                     help="with --env: the prefix of the executors' Python of this version "
                          "(e.g. /usr for /usr/bin/python3.11; default: this Python's own)")
    return parser


def config_from_args(args: argparse.Namespace, base=None, config_class=RunConfig):
    """``base`` (default: ``config_class()``) updated with the options given in
    ``args``, each validated by its declaration (errors name the flag)."""
    base = base if base is not None else config_class()
    changes = {}
    for option in base.OPTIONS:
        value = option.from_args(args, getattr(base, option.name))
        if value is not None:
            changes[option.name] = option.validate(value, option.cli_label)
    return base.updated(**changes)


def session_for(config: RunConfig, verbose: bool = False, summaries: Optional[int] = None,
                warm: bool = True):
    """The Spark session of a command (``warm``: start the Python workers in
    the background, for the commands that compute)."""
    from qarla_spark.spark.session import build_session
    spark = build_session(config.profile, config.master, config.spark_conf, verbose=verbose,
                          summaries=summaries, warm=warm)
    _handle_signals()  # again, should a SparkContext made elsewhere have replaced it
    return spark


def cmd_validate(args: argparse.Namespace) -> int:
    from qarla_spark import pipeline
    config = config_from_args(args)
    checked = pipeline.check_small(config)  # small local inputs: no Spark at all
    if checked is not None:
        report = checked.report
    else:
        _, report = pipeline.load(session_for(config, args.verbose, warm=False), config)
    print(report.format())
    return 0 if report.ok else EXIT_INPUT


def refuse_existing_out(config: RunConfig) -> None:
    """An existing local ``--out`` without ``--overwrite`` fails before
    Spark starts (other file systems: when the run directory is opened)."""
    from urllib.parse import urlparse
    scheme = urlparse(config.out).scheme
    path = config.out[len("file:"):] if scheme == "file" else config.out
    if scheme in ("", "file") and not config.overwrite and os.path.exists(path):
        raise ConfigError(f"the output directory {config.out.rstrip('/')} already exists: "
                          "choose another --out or pass --overwrite to replace it")


def check_small_first(config: RunConfig, progress):
    """Small local inputs read and checked before Spark starts (``None``:
    Spark reads them): their errors are raised and their description shown
    at once; their size (``report.n_summaries``) picks the JVM flags of a
    small testbed (``qarla run``, ``jobs/qarla_run.py``)."""
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


def _run(args: argparse.Namespace, stages=None) -> int:
    from qarla_spark import pipeline
    from qarla_spark.io.files import is_local
    from qarla_spark.progress import SparkCounter, stage
    from qarla_spark.spark.session import check_can_start
    progress = make_progress(args)
    _CURRENT["progress"] = progress
    try:
        spark = None

        def start(config):
            check_can_start()  # a missing Java is the first thing said
            with stage(progress, "spark session", {}):
                return session_for(config, args.verbose)

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
        pipeline.plan_metrics(config)  # bad metric names fail before Spark starts
        if spark is None:
            check_can_start()
        checked = check_small_first(config, progress)
        if spark is None:
            summaries = None if checked is None else checked.report.n_summaries
            with stage(progress, "spark session", {}):
                spark = session_for(config, args.verbose, summaries)
        if hasattr(progress, "counter"):
            progress.counter = SparkCounter(spark.sparkContext)
        result = pipeline.run(spark, config, progress=progress, checked=checked)
    finally:
        _CURRENT.pop("progress", None)
        if hasattr(progress, "close"):
            progress.close()
    print(result.summary(testbed=not getattr(progress, "printed_testbed", False)))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    return _run(args)


def cmd_similarities(args: argparse.Namespace) -> int:
    return _run(args, stages=("testbed", "similarities"))


def cmd_metrics(args: argparse.Namespace) -> int:
    from qarla_spark.io.files import is_local
    from qarla_spark.metrics import registry
    if not all(is_local(p) for p in args.metric_plugins or ()):
        session_for(RunConfig(), warm=False)   # plugins on HDFS, S3...: read through Hadoop
    registry.load_plugins(args.metric_plugins or ())
    names = registry.resolve_metrics(args.names or "all")
    for name in names:
        info = registry.describe(name)
        flag = "*" if info.in_default else " "
        print(f"{flag} {name:<14} {info.description}")
    print(f"{len(names)} metric(s); * = in the default battery of "
          f"{len(registry.DEFAULT_BATTERY)}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    import pyspark

    from qarla_spark.spark.java import find_java, java_version
    from qarla_spark.spark.session import profile_path
    java = find_java()
    major = java_version(java)[0] if java else None
    print(f"qarla_spark {__version__}")
    print(f"python {sys.version.split()[0]}, pyspark {pyspark.__version__}")
    print(f"java: {java or 'not found'}" + (f" (version {major})" if major else ""))
    print(f"profiles: local = {profile_path('local')}, cluster = {profile_path('cluster')}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from qarla_spark.report import write_report
    print(f"report: {write_report(args.run_dir, args.report_out)}")
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    import json

    from qarla_spark.eventlog import EventLogError, format_profile, profile_run
    if args.run_dir is None and args.log is None:
        raise ConfigError("qarla profile needs a run directory or --log PATH")
    try:
        found = profile_run(args.run_dir, args.log)
    except EventLogError as exc:
        raise ConfigError(str(exc)) from None
    print(json.dumps(found.to_dict(), indent=2) if args.profile_json else format_profile(found))
    return 0


def cmd_package(args: argparse.Namespace) -> int:
    from qarla_spark.packaging import build_env, build_zip
    if args.python_prefix and not args.env:
        raise ConfigError("--python-prefix goes with --env")
    path = build_zip(args.package_out)
    print(path)
    if not args.env:
        print(f"use: spark-submit --py-files {path.resolve()} ... jobs/qarla_run.py --config "
              "FILE", file=sys.stderr)
        return 0
    env = build_env(args.package_out, args.python_prefix,
                    say=lambda text: print(f"qarla: {text}", file=sys.stderr))
    print(env)
    print(f"use: spark-submit --archives {env.resolve()}#environment --conf "
          "spark.pyspark.python=./environment/bin/python ... jobs/qarla_run.py --config FILE\n"
          "  (client mode: also --conf spark.pyspark.driver.python=<a local Python with "
          "qarla_spark>)", file=sys.stderr)
    return 0


COMMANDS = {"validate": cmd_validate, "run": cmd_run, "similarities": cmd_similarities,
            "metrics": cmd_metrics, "info": cmd_info, "report": cmd_report,
            "profile": cmd_profile, "package": cmd_package}
#: the commands that read inputs or tables in this process: their pyarrow
#: memory comes from the system's allocator (qarla_spark.memory)
READS_TABLES = ("validate", "run", "similarities", "report")


#: the running command's progress (warnings are printed through it, so that
#: they do not tear its live line)
_CURRENT: dict = {}


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """QARLA warnings (skipped topics) as one line, without a source line."""
    from qarla_spark.stages.qarla import QarlaWarning
    if issubclass(category, QarlaWarning):
        progress = _CURRENT.get("progress")
        if hasattr(progress, "message"):
            progress.message(f"qarla: warning: {message}")
        else:
            print(f"qarla: warning: {message}", file=sys.stderr)
    else:
        _ORIGINAL_SHOWWARNING(message, category, filename, lineno, file, line)


_ORIGINAL_SHOWWARNING = warnings.showwarning


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived (``signum`` says which)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_SIGNALS = {"received": None}


class _Mute:
    """Where Python's standard error goes once a run is interrupted: threads
    of PySpark (its accumulator server) and py4j print tracebacks when the
    JVM goes away."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass


def _on_signal(signum, frame):
    """The first SIGINT/SIGTERM interrupts the main thread, and from then on
    only qarla speaks; later signals are ignored while the run ends (which
    takes seconds)."""
    if _SIGNALS["received"] is None:
        from qarla_spark.spark.session import quiet_after_interrupt
        _SIGNALS["received"] = signum
        _SIGNALS["stderr"], _SIGNALS["excepthook"] = sys.stderr, threading.excepthook
        quiet_after_interrupt()
        sys.stderr = _Mute()
        threading.excepthook = lambda args: None
        raise Interrupted(signum)


def _handle_signals() -> None:
    if threading_main():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _on_signal)


def _interrupted(exc: KeyboardInterrupt) -> int:
    """End the JVM, say one line, and give the exit status (130 for SIGINT,
    143 for SIGTERM)."""
    from qarla_spark.spark.session import end_after_interrupt
    if threading_main():   # a second signal changes nothing now
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
    end_after_interrupt()
    signum = getattr(exc, "signum", signal.SIGINT)
    print("qarla: terminated" if signum == signal.SIGTERM else "qarla: interrupted",
          file=_SIGNALS.get("stderr") or sys.stderr, flush=True)
    return 128 + int(signum)


def threading_main() -> bool:
    return threading.current_thread() is threading.main_thread()


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
    SIGINT and SIGTERM interrupt it (:func:`_interrupted`)."""
    _SIGNALS.update(received=None, stderr=None, excepthook=None)
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    _handle_signals()
    try:
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                return func()
        except Exception as exc:
            from qarla_spark.spark.session import interrupted
            if _SIGNALS["received"] is None and not interrupted(exc):
                raise
            # what a signal cut short may surface as another error (a py4j
            # error, a cancelled job): the run was interrupted all the same
            raise Interrupted(_SIGNALS["received"] or signal.SIGINT) from None
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
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
        if threading_main():
            for signum, handler in previous.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        # after an interrupt the process ends: Python's standard error stays muted


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not args.command:
        parser.print_help()
        return 2
    if args.command in READS_TABLES:
        from qarla_spark.memory import use_system_arrow_pool
        use_system_arrow_pool()
    return guarded(lambda: COMMANDS[args.command](args), args.debug)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
