"""The ``qarla`` command: thin argument parsing around :mod:`qarla_spark.pipeline`.

Errors the user can fix are printed as one paragraph (no traceback; add
``--debug`` for one). Exit status: 0 success, 1 the input has errors,
2 bad configuration, 3 Java missing, 70 internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import warnings
from typing import Callable, List, Optional, Sequence

from qarla_spark import __version__
from qarla_spark.config import DEFAULT_OUT, DEFAULT_SEED, RunConfig, load_config
from qarla_spark.errors import InputError, QarlaError

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


def _add_input_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="summary files or folders (default: the bundled SummEval testbed)")
    p.add_argument("--judgments", action="append", default=None, metavar="PATH",
                   help="human judgments: long form (task, topic, summarizer, criterion, score), "
                        "a 'human' object per summary, SacreROUGE metrics, or a wide CSV "
                        "(one column per criterion); repeatable")
    p.add_argument("--sources", action="append", default=None, metavar="PATH",
                   help="source documents: {task, topic, documents: [text, ...]}; repeatable")
    p.add_argument("--task", default=None,
                   help="task name for records that carry none")
    p.add_argument("--limit", type=int, default=None, dest="problem_limit", metavar="N",
                   help="show at most N problems of each severity (default 50)")


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


def _add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=None, metavar="FILE",
                   help="TOML run configuration (e.g. conf/summeval.toml); options given "
                        "here win over it")
    p.add_argument("--out", default=None,
                   help=f"run directory to write (default {DEFAULT_OUT})")
    p.add_argument("--overwrite", action="store_true", default=None,
                   help="replace --out if it exists (only once the new run is complete)")
    p.add_argument("--seed", type=int, default=None,
                   help=f"seed of every random choice (default {DEFAULT_SEED})")
    g = p.add_argument_group("metrics")
    g.add_argument("--metrics", action="append", default=None, metavar="NAMES",
                   help="metrics to compute (default: the 59 of the battery); see below")
    g.add_argument("--user-metrics", action="append", default=None, metavar="TABLE",
                   dest="user_metrics", help="a table of your own metric values; repeatable")
    g.add_argument("--metric-plugin", action="append", default=None, metavar="FILE.py",
                   dest="metric_plugins",
                   help="a Python file registering metric functions; repeatable")
    g.add_argument("--tagger", default=None, choices=("pattern", "spacy"),
                   help="part-of-speech tagger of GRAMSIM (default pattern: TextBlob's "
                        "PatternTagger; spacy: an installed en_core_web_sm)")


def _add_spark_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Spark")
    g.add_argument("--profile", default=None,
                   help="Spark profile: 'local' (default: local[*], conf/local.conf), "
                        "'cluster' (conf/cluster.conf) or a spark-defaults file")
    g.add_argument("--master", default=None,
                   help="Spark master, e.g. local[2], spark://host:7077, yarn "
                        "(wins over the profile)")
    g.add_argument("--conf", action="append", default=None, metavar="KEY=VALUE",
                   dest="spark_conf", help="extra Spark setting (wins over the profile); repeatable")
    g.add_argument("--verbose", action="store_true", help="show Spark's INFO logs")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qarla",
        description="Evaluate automatic summarizers without human judges: QARLA (QUEEN, KING, "
                    "JACK), metric clustering and Heterogeneity-Based Ranking, on Spark.",
        epilog="Run 'qarla COMMAND --help' for each command's inputs, outputs and defaults.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"qarla_spark {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    v = sub.add_parser(
        "validate", help="check inputs and describe the testbed",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read the inputs, check them, and print per task: topics, models per topic "
                    "(min/median/max), peer systems, summaries, judgments by criterion, and "
                    "every problem found (file, line, field). Writes nothing. Exit status 1 "
                    "when the input has errors (warnings alone exit 0).",
        epilog=INPUTS_HELP)
    _add_input_args(v)
    _add_spark_args(v)

    r = sub.add_parser(
        "run", help="run the evaluation and write a run directory",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read and validate the inputs, then run every stage for every task and "
                    "write the results as Parquet tables under --out, with run.json "
                    "(configuration, seed, versions). The directory appears only when the run "
                    "is complete; a crash leaves OUT.incomplete-<id> instead.",
        epilog=INPUTS_HELP + METRICS_HELP + textwrap.dedent("""
            outputs (under --out):
              run.json     configuration, seed, versions, timings, table schemas
              summaries/   task, topic, summarizer, role, text
              judgments/   task, topic, summarizer, criterion, score
              sources/     task, topic, documents
              testbed/     one row per task: topics, models per topic, systems...
              problems/    every warning: severity, file, line, unit, field, message
              similarities/  task, topic, summarizer_s, summarizer_r, metric, value
              king/        task, metric_set, n_metrics, king, ci_low, ci_high, n_cases
              orange/      task, metric_set, n_metrics, score, orange, n_cases
              queen/       task, topic, summarizer, role, metric_set, holdout, queen
              systems/     task, summarizer, role, metric_set, queen, queen_full
              jack/        task, metric_set, jack
              jack_curve/  task, metric_set, n_peers, jack
              clusters/    task, metric, cluster, representative, king
              king_pearson/  task, metric_set, n_metrics, king, criterion, pearson
              human_test/  task, measure, held_out_model, ranked_first
              hbr/         task, topic, summarizer, measure_set, hbr
              heterogeneity/  task, measure_set, h, std_error, n_pairs, exact
              auc/         task, criterion, measure, scope, auc, n_pairs
              robustness/  task, criterion, measure, worst10_rank
              hetero_curve/  task, criterion, bin, mean_h, p_quality_increase
            """))
    _add_input_args(r)
    _add_run_args(r)
    q = r.add_argument_group("QARLA")
    q.add_argument("--metric-set", action="append", default=None, metavar="NAMES",
                   dest="metric_sets",
                   help='a metric set to score explicitly, e.g. "R-1.a,TVM.512"; repeatable')
    q.add_argument("--similarities", default=None, metavar="PATH",
                   help="reuse the similarities/ table of an earlier run instead of computing it")
    q.add_argument("--clusters", type=int, default=None, metavar="K",
                   help="number of metric clusters (default 10; KING of 2^K - 1 subsets)")
    q.add_argument("--triples", default=None, choices=("standard", "distinct"),
                   help="QUEEN triples (default standard: m may equal m' or m'')")
    q.add_argument("--jack-orders", type=int, default=None, metavar="R", dest="jack_orders",
                   help="random orders of the systems in the JACK curve (default 20)")
    h = r.add_argument_group("HBR")
    h.add_argument("--hbr-pairs", type=int, default=None, metavar="N", dest="hbr_pairs",
                   help="same-topic pairs sampled to estimate heterogeneity (default 10000)")
    h.add_argument("--hbr-exact", action="store_true", default=None, dest="hbr_exact",
                   help="estimate heterogeneity exactly, on all pairs")
    h.add_argument("--hbr-measures", action="append", default=None, metavar="NAMES",
                   dest="hbr_measures",
                   help='HBR\'s measures, names or patterns, e.g. "R-*.a,Rpre-*.a" (default: the '
                        "R, Rpre and F metrics and your own)")
    h.add_argument("--hbr-models", action="store_true", default=None, dest="hbr_models",
                   help="also score and rank the models (each against the other models)")
    h.add_argument("--hbr-aggregate", default=None, choices=("mean", "max"),
                   dest="hbr_aggregate", help="a summary's score over the models (default mean)")
    _add_spark_args(r)

    s = sub.add_parser(
        "similarities", help="compute the similarity table only",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read and validate the inputs, then compute every metric on every ordered "
                    "pair (s, r), s != r, of summaries of the same topic (models and peers) and "
                    "write OUT/similarities/ (task, topic, summarizer_s, summarizer_r, metric, "
                    "value; r plays the reference) with the testbed tables and run.json.",
        epilog=INPUTS_HELP + METRICS_HELP)
    _add_input_args(s)
    _add_run_args(s)
    _add_spark_args(s)

    m = sub.add_parser("metrics", help="list the metrics and what they compute")
    m.add_argument("names", nargs="*", metavar="NAME",
                   help="names, patterns or groups to list (default: all)")
    m.add_argument("--metric-plugin", action="append", default=None, metavar="FILE.py",
                   dest="metric_plugins", help="also load the metrics this file registers")

    sub.add_parser("info", help="versions, Java, and where the Spark profiles are")
    return parser


def config_from_args(args: argparse.Namespace, base: Optional[RunConfig] = None) -> RunConfig:
    from qarla_spark.spark.session import parse_conf_pairs
    base = base or RunConfig()
    spark_conf = dict(base.spark_conf)
    spark_conf.update(parse_conf_pairs(getattr(args, "spark_conf", None)))
    return base.updated(
        inputs=tuple(args.inputs) if args.inputs else None,
        judgments=tuple(args.judgments) if args.judgments else None,
        sources=tuple(args.sources) if args.sources else None,
        task=args.task,
        out=getattr(args, "out", None),
        overwrite=getattr(args, "overwrite", None),
        seed=getattr(args, "seed", None),
        profile=args.profile,
        master=args.master,
        spark_conf=spark_conf,
        problem_limit=args.problem_limit,
        metrics=tuple(args.metrics) if getattr(args, "metrics", None) else None,
        user_metrics=tuple(args.user_metrics) if getattr(args, "user_metrics", None) else None,
        metric_plugins=(tuple(args.metric_plugins) if getattr(args, "metric_plugins", None)
                        else None),
        tagger=getattr(args, "tagger", None),
        metric_sets=(tuple(args.metric_sets) if getattr(args, "metric_sets", None) else None),
        similarities=getattr(args, "similarities", None),
        clusters=getattr(args, "clusters", None),
        triples=getattr(args, "triples", None),
        jack_orders=getattr(args, "jack_orders", None),
        hbr_pairs=getattr(args, "hbr_pairs", None),
        hbr_exact=getattr(args, "hbr_exact", None),
        hbr_measures=(tuple(args.hbr_measures) if getattr(args, "hbr_measures", None) else None),
        hbr_models=getattr(args, "hbr_models", None),
        hbr_aggregate=getattr(args, "hbr_aggregate", None),
    )


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
    from qarla_spark.measures.stage import QarlaWarning
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
