"""The ``qarla`` command: its arguments parsed, and each command dispatched.

How a run starts and ends — the checks before Spark, the messages and exit
statuses, interrupts — is :mod:`qarla_spark.launcher`'s, shared with the
spark-submit job. ``qarla run`` and ``qarla similarities`` print the
testbed's description as soon as the inputs are valid, then a line as each
stage starts and ends (:mod:`qarla_spark.progress`); ``--quiet``: only the
final summary and errors.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from qarla_spark import __version__, tables
from qarla_spark.config import RunConfig, config_from_args
from qarla_spark.errors import ConfigError
from qarla_spark.launcher import EXIT_INPUT, guarded, launch, session_for
from qarla_spark.options import OPTIONS, Option, add_arguments

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

    pl = sub.add_parser(
        "plan", help="plan the next shared task from a finished run: topics and judgments",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Simulate, on a finished run's tables (no similarity recomputed), how "
                    "many topics each comparison needs — the probability the run's order "
                    "holds and the power of a paired t-test at 5% for every pair of systems "
                    "under the best set's QUEEN, the best single metric, HBR and each human "
                    "criterion, the stability of the whole ranking, whether the best set stays "
                    "best — and how many judgments prediction-powered inference saves; add "
                    "power/ and ppi/ to the run and print the answers (SPEC §12).",
        epilog=tables.help_text(stages=("plan",)))
    pl.add_argument("run_dir", metavar="RUN_DIR", help="a run directory qarla run wrote")
    add_arguments(pl, "plan", options)

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

    exp = sub.add_parser(
        "export", help="write a run's per-summary scores for SacreROUGE or mt-metrics-eval",
        description="Write the per-summary scores of a finished run (each metric's mean "
                    "similarity to the topic's models, QUEEN of each metric set, HBR) from its "
                    "run.json and Parquet tables alone; no Spark. sacrerouge: SacreROUGE's "
                    "Metrics JSONL, DIR/<task>/metrics.jsonl (one object per summary). mtme: "
                    "mt-metrics-eval's test-set layout, DIR/<run folder name>/ (a task is a "
                    "language pair, a topic a segment, the peers the systems, the models the "
                    "reference 'refs'; system and segment level, and the human judgments). "
                    "DIR must not exist or be empty; DIR/qarla-export.json maps the names "
                    "written back to the run's.")
    exp.add_argument("run_dir", metavar="RUN_DIR", help="a run directory qarla run wrote")
    exp.add_argument("--format", dest="export_format", required=True,
                     metavar="{sacrerouge,mtme}", help="the file format to write")
    exp.add_argument("--out", dest="export_out", required=True, metavar="DIR",
                     help="the folder to write (absent or empty)")

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


def cmd_validate(args: argparse.Namespace) -> int:
    from qarla_spark import pipeline
    config = config_from_args(args)
    pipeline.check_local_inputs(config)     # missing local inputs: no Spark at all
    checked = pipeline.check_small(config)  # small local inputs: no Spark at all
    if checked is not None:
        report = checked.report
    else:
        _, report = pipeline.load(session_for(config, args.verbose, warm=False,
                                              debug=args.debug), config)
    print(report.format())
    return 0 if report.ok else EXIT_INPUT


def cmd_run(args: argparse.Namespace) -> int:
    return launch(args)


def cmd_similarities(args: argparse.Namespace) -> int:
    return launch(args, stages=("testbed", "similarities"))


def cmd_plan(args: argparse.Namespace) -> int:
    from qarla_spark import pipeline
    from qarla_spark.stages.planning import describe_plan
    from qarla_spark.paths import local_path
    config = config_from_args(args)
    if local_path(args.run_dir) is not None:
        # not a finished run: said before Spark starts
        from qarla_spark.report.data import ReportError, read_local_run_json
        try:
            read_local_run_json(args.run_dir)
        except ReportError as exc:
            raise ConfigError(str(exc)) from None
    spark = session_for(config, args.verbose, debug=args.debug)
    result = pipeline.plan_run(spark, args.run_dir, config)
    print(describe_plan(result))
    if local_path(args.run_dir) is not None:
        # the report shows the plan's curves: rebuilt (its pages renamed into place)
        from qarla_spark.report import write_report
        print(f"report: {write_report(args.run_dir, spark=spark)}")
    print(f"plan: {args.run_dir.rstrip('/')}/power/, ppi/ ({result.n_units} simulations in "
          f"{result.n_partitions} partitions, {result.timings['total_s']:.1f} s)")
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    from qarla_spark.paths import is_local
    from qarla_spark.metrics import registry
    if not all(is_local(p) for p in args.metric_plugins or ()):
        # plugins on HDFS, S3...: read through Hadoop
        session_for(RunConfig(), warm=False, debug=args.debug)
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
    from qarla_spark.spark.profiles import profile_path
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


def cmd_export(args: argparse.Namespace) -> int:
    from qarla_spark.report.export import export_run
    record = export_run(args.run_dir, args.export_format, args.export_out)
    parts = record.get("tasks") or record.get("lps") or {}
    print(f"export: {args.export_out} ({args.export_format}, {len(parts)} task(s))")
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
    from qarla_spark.spark.packaging import build_env, build_zip
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
            "plan": cmd_plan,
            "metrics": cmd_metrics, "info": cmd_info, "report": cmd_report,
            "export": cmd_export, "profile": cmd_profile, "package": cmd_package}
#: the commands that read inputs or tables in this process: their pyarrow
#: memory comes from the system's allocator (qarla_spark.memory)
READS_TABLES = ("validate", "run", "similarities", "plan", "report", "export")


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
