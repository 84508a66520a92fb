"""The ``qarla`` command: thin argument parsing around :mod:`qarla_spark.pipeline`.

Errors the user can fix are printed as one paragraph (no traceback; add
``--debug`` for one). Exit status: 0 success, 1 the input has errors,
2 bad configuration, 3 Java missing, 70 internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Callable, Optional, Sequence

from qarla_spark import __version__, tables
from qarla_spark.config import RunConfig, load_config
from qarla_spark.errors import InputError, QarlaError
from qarla_spark.options import OPTIONS, Option, add_arguments

EXIT_INPUT = 1
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130

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
                    "(configuration, seed, versions). The directory appears only when the run "
                    "is complete; a crash leaves OUT.incomplete-<id> instead.",
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


def session_for(config: RunConfig, verbose: bool = False):
    from qarla_spark.spark.session import build_session
    return build_session(config.profile, config.master, config.spark_conf, verbose=verbose)


def cmd_validate(args: argparse.Namespace) -> int:
    from qarla_spark import pipeline
    config = config_from_args(args)
    spark = session_for(config, args.verbose)
    _, report = pipeline.load(spark, config)
    print(report.format())
    return 0 if report.ok else EXIT_INPUT


def _run(args: argparse.Namespace, stages=None) -> int:
    from qarla_spark import pipeline
    base = load_config(args.config) if args.config else None
    config = config_from_args(args, base).updated(stages=stages)
    pipeline.plan_metrics(config)  # bad metric names fail before Spark starts
    spark = session_for(config, args.verbose)
    result = pipeline.run(spark, config)
    print(result.summary())
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    return _run(args)


def cmd_similarities(args: argparse.Namespace) -> int:
    return _run(args, stages=("testbed", "similarities"))


def cmd_metrics(args: argparse.Namespace) -> int:
    from qarla_spark.metrics import registry
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


COMMANDS = {"validate": cmd_validate, "run": cmd_run, "similarities": cmd_similarities,
            "metrics": cmd_metrics, "info": cmd_info}


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """QARLA warnings (skipped topics) as one line, without a source line."""
    from qarla_spark.stages.qarla import QarlaWarning
    if issubclass(category, QarlaWarning):
        print(f"qarla: warning: {message}", file=sys.stderr)
    else:
        _ORIGINAL_SHOWWARNING(message, category, filename, lineno, file, line)


_ORIGINAL_SHOWWARNING = warnings.showwarning


def guarded(func: Callable[[], int], debug: bool = False) -> int:
    """Run ``func``; turn errors into a message and an exit status."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return func()
    except QarlaError as exc:
        if debug:
            raise
        print(f"qarla: {exc}", file=sys.stderr)
        return EXIT_INPUT if isinstance(exc, InputError) else exc.exit_code
    except KeyboardInterrupt:
        print("qarla: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug or a Spark failure: short message, no wall of Java
        if debug:
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(f"qarla: internal error: {type(exc).__name__}: {first}\n"
              "Rerun with --debug to see the full traceback, and report it if the input "
              "looks right.", file=sys.stderr)
        return EXIT_INTERNAL


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not args.command:
        parser.print_help()
        return 2
    return guarded(lambda: COMMANDS[args.command](args), args.debug)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
