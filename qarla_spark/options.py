"""Every option of a run, declared once.

An :class:`Option` holds all the project knows about one option: its name
(the attribute of :class:`~qarla_spark.config.RunConfig` and the key of a
TOML run file), its :class:`Kind` (the values it takes, their validation and
its error message, how argparse reads it), its default, its help text, and
its command-line spelling: flags, metavar, the commands that take it and the
help group. From :data:`OPTIONS` derive

- ``RunConfig``: its fields, defaults and validation
  (:func:`qarla_spark.config.make_config_class`), hence ``run.json``'s
  ``config`` (``RunConfig.to_dict()``);
- the keys of a TOML run file (:func:`qarla_spark.config.load_config`);
- the arguments of ``qarla validate|run|similarities`` and of the
  spark-submit job, and their reading into a ``RunConfig``
  (:mod:`qarla_spark.cli`);
- the table of run options in the README (``python -m qarla_spark.options``
  prints it; a test checks the README holds exactly this).

Adding an option is adding one :class:`Option` to :data:`OPTIONS` (then
reading ``config.<name>`` where it is used). Options with ``setting=False``
are command-line switches only (``--config``, ``--verbose``, ``--quiet``,
``--debug``): neither ``RunConfig`` fields nor run-file keys.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple

from qarla_spark.errors import ConfigError
from qarla_spark.names import COMMIT_MODES

DEFAULT_SEED = 13
DEFAULT_OUT = "runs/latest"
#: stages of a run, in order (each writes the tables named in pipeline.py)
STAGES = ("testbed", "similarities", "qarla", "hbr", "statistics", "plan")
#: the stages a run runs unless told: all but the plan (``--plan``)
RUN_STAGES = STAGES[:-1]

#: commands taking options: the ``qarla`` command itself (before the
#: subcommand), its subcommands, and ``job``: the spark-submit entry point
#: ``jobs/qarla_run.py``
COMMANDS = ("qarla", "validate", "run", "similarities", "plan", "job")
_READ = ("validate", "run", "similarities")  # commands that read inputs
_WRITE = ("run", "similarities", "job")      # commands that write a run directory
_COMPUTE = ("run", "similarities")           # commands that compute similarities
_PLAN = ("run", "plan", "job")               # commands that plan the next task
_SPARK = (*_READ, "plan")                    # commands that start Spark


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _or_list(choices: Sequence[str]) -> str:
    """``a or b``, ``a, b or c``."""
    return ", ".join(choices[:-1]) + " or " + choices[-1] if len(choices) > 1 else choices[0]


# --- kinds: the values an option takes ---------------------------------------

class Kind:
    """What values an option takes. ``check(label, value)`` returns the value
    normalised (lists as tuples, tables as ``{str: str}``) or raises
    :class:`~qarla_spark.errors.ConfigError` naming ``label`` (``'seed'`` for
    a run-file key, ``--seed`` for a flag). ``argparse()`` gives the
    keywords of ``add_argument``; ``from_cli`` turns the parsed value into a
    value of the option (``None``: not given), ``plain`` into JSON."""

    annotation: Any = Any
    describe: str = ""

    def check(self, label: str, value: Any) -> Any:
        return value

    def argparse(self, positional: bool = False) -> Dict[str, Any]:
        return {}

    def from_cli(self, parsed: Any, current: Any) -> Any:
        return parsed

    def plain(self, value: Any) -> Any:
        return value


def parse_conf_pairs(pairs) -> Dict[str, str]:
    """``["k=v", ...]`` (the ``--conf`` option) to a dict."""
    out: Dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf expects KEY=VALUE, found {pair!r}")
        out[key.strip()] = value
    return out


@dataclass(frozen=True)
class Integer(Kind):
    """An integer (not a boolean) of at least ``minimum``."""

    minimum: int = 0
    annotation = int

    @property
    def describe(self) -> str:
        return {0: "a non-negative integer", 1: "a positive integer"}.get(
            self.minimum, f"an integer of at least {self.minimum}")

    def check(self, label, value):
        if not _is_int(value) or value < self.minimum:
            raise ConfigError(f"{label} must be {self.describe}, found {value!r}")
        return value

    def argparse(self, positional=False):
        return {"type": int}


@dataclass(frozen=True)
class Flag(Kind):
    """true or false; on the command line a switch (``--hbr-exact``)."""

    annotation = bool
    describe = "true or false"

    def check(self, label, value):
        if not isinstance(value, bool):
            raise ConfigError(f"{label} must be true or false, found {value!r}")
        return value

    def argparse(self, positional=False):
        return {"action": "store_true"}


@dataclass(frozen=True)
class Text(Kind):
    """A string that is not blank (``None`` too when ``optional``). The
    error says the string must be ``what``; ``message``, when given, is the
    whole error (``{label}`` in it names the option)."""

    what: str = "a non-empty string"
    optional: bool = False
    message: Optional[str] = None

    @property
    def annotation(self):
        return Optional[str] if self.optional else str

    @property
    def describe(self) -> str:
        return self.what + (" (optional)" if self.optional else "")

    def check(self, label, value):
        if value is None and self.optional:
            return None
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(self.message.format(label=label) if self.message else
                              f"{label} must be {self.what}, found {value!r}")
        return value


@dataclass(frozen=True)
class Choice(Kind):
    """One of ``choices``."""

    choices: Tuple[str, ...] = ()
    annotation = str

    @property
    def describe(self) -> str:
        return _or_list(self.choices)

    def check(self, label, value):
        if value not in self.choices:
            raise ConfigError(f"{label} must be {_or_list(self.choices)}, found {value!r}")
        return value

    def argparse(self, positional=False):
        return {"choices": self.choices}


@dataclass(frozen=True)
class Strings(Kind):
    """A list of non-empty strings (a tuple in ``RunConfig``); on the command
    line a repeatable option, or the positional arguments. ``single``: one
    string is taken as a list of one. ``choices``: the strings must be some of
    these, at least one."""

    single: bool = False
    choices: Optional[Tuple[str, ...]] = None
    annotation = Tuple[str, ...]

    @property
    def describe(self) -> str:
        return f"a list of some of {', '.join(self.choices)}" if self.choices else \
            "a list of strings"

    def check(self, label, value):
        if self.single and isinstance(value, str):
            value = (value,)
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable) \
                or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{label} must be a list of paths, found {value!r}")
        value = tuple(value)
        if self.choices is not None and (not value or any(v not in self.choices for v in value)):
            raise ConfigError(f"{label} must name some of {', '.join(self.choices)}, found "
                              f"{list(value)!r}")
        return value

    def argparse(self, positional=False):
        return {"nargs": "*"} if positional else {"action": "append"}

    def from_cli(self, parsed, current):
        return tuple(parsed) if parsed else None

    def plain(self, value):
        return list(value)


@dataclass(frozen=True)
class Integers(Kind):
    """A list of integers of at least ``minimum``, increasing (a tuple in
    ``RunConfig``); on the command line comma-separated (``10,20,50``)."""

    minimum: int = 1
    annotation = Tuple[int, ...]

    @property
    def describe(self) -> str:
        return "increasing positive integers" if self.minimum == 1 else \
            f"increasing integers of at least {self.minimum}"

    def check(self, label, value):
        if isinstance(value, str):
            try:
                value = [int(v) for v in value.split(",") if v.strip()]
            except ValueError:
                raise ConfigError(f"{label} must be {self.describe}, comma-separated, found "
                                  f"{value!r}") from None
        if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
            raise ConfigError(f"{label} must be {self.describe}, found {value!r}")
        value = tuple(value)
        if not all(_is_int(v) and v >= self.minimum for v in value) or \
                any(b <= a for a, b in zip(value, value[1:])):
            raise ConfigError(f"{label} must be {self.describe}, found {list(value)!r}")
        return value

    def from_cli(self, parsed, current):
        return parsed

    def plain(self, value):
        return list(value)


@dataclass(frozen=True)
class Table(Kind):
    """A table of string settings (``{str: str}``; values are converted to
    strings); on the command line a repeatable ``KEY=VALUE`` option whose
    pairs are added to the run file's table (later ones win)."""

    what: str = "a table"
    annotation = Mapping[str, str]

    @property
    def describe(self) -> str:
        return self.what

    def check(self, label, value):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{label} must be {self.what}")
        return {str(k): str(v) for k, v in value.items()}

    def argparse(self, positional=False):
        return {"action": "append"}

    def from_cli(self, parsed, current):
        if not parsed:
            return None
        return {**dict(current or {}), **parse_conf_pairs(parsed)}

    def plain(self, value):
        return dict(value)


@dataclass(frozen=True)
class Languages(Kind):
    """The language of each task (issue 38): ``LANG`` for every task not
    named, ``TASK=LANG`` for one task; a run file may give a string, a list
    of such strings or a table ``{TASK = LANG}`` (``"*"``: every other
    task). Normalised to ``{"*": default, task: code}``; the codes are
    checked against the languages of :mod:`qarla_spark.text.languages` when
    the run is planned (this layer does not know them)."""

    annotation = Mapping[str, str]
    describe = ("a language code, or TASK=LANG pairs (a list of them, or a table "
                "{TASK = LANG} in a run file)")

    def check(self, label, value):
        return {"*": "en", **self._pairs(label, value)}

    def _pairs(self, label, value):
        if isinstance(value, str):
            value = [value]
        if isinstance(value, Mapping):
            pairs = list(value.items())
        elif isinstance(value, (list, tuple)):
            pairs = []
            for item in value:
                if not isinstance(item, str):
                    raise ConfigError(f"{label} must be {self.describe}, found {value!r}")
                task, sep, code = item.rpartition("=")
                pairs.append((task.strip() if sep else "*", code))
        else:
            raise ConfigError(f"{label} must be {self.describe}, found {value!r}")
        out = {}
        for task, code in pairs:
            if not isinstance(task, str) or not task.strip() or not isinstance(code, str) \
                    or not code.strip():
                raise ConfigError(f"{label}: {task}={code} names no task or no language "
                                  f"(expected {self.describe})")
            out[task.strip()] = code.strip()
        return out

    def argparse(self, positional=False):
        return {"action": "append"}

    def from_cli(self, parsed, current):
        if not parsed:
            return None
        return {"*": "en", **dict(current or {}), **self._pairs("--language", list(parsed))}

    def plain(self, value):
        value = dict(value)
        return value["*"] if list(value) == ["*"] else value


# --- options -----------------------------------------------------------------

@dataclass(frozen=True)
class Option:
    """One option of a run, declared once.

    ``name``: the ``RunConfig`` attribute, the run-file key and the argparse
    ``dest``. ``help``: one text for ``--help`` and the README (``{default}``
    in it is replaced by the default). ``flags``: the command-line spellings
    (none: run files only); ``positional``: the command's positional
    arguments instead, shown as ``metavar``. ``commands``: the commands (of
    :data:`COMMANDS`) that take it; ``group``: its help group there (``None``:
    the command's own options). ``required_in``: commands where it must be
    given. ``setting=False``: a command-line switch only, not a ``RunConfig``
    field nor a run-file key.
    """

    name: str
    kind: Kind
    default: Any = None
    help: str = ""
    flags: Tuple[str, ...] = ()
    metavar: Optional[str] = None
    commands: Tuple[str, ...] = ()
    group: Optional[str] = None
    positional: bool = False
    required_in: Tuple[str, ...] = ()
    setting: bool = True

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"option name {self.name!r} is not an identifier")
        unknown = set(self.commands) - set(COMMANDS)
        if unknown:
            raise ValueError(f"option {self.name!r}: unknown commands {sorted(unknown)}")
        if self.commands and not (self.flags or self.positional):
            raise ValueError(f"option {self.name!r} has commands but no flags")
        # the default itself must pass the option's validation
        object.__setattr__(self, "default", self.kind.check(f"'{self.name}'", self.default))

    @property
    def key_label(self) -> str:
        """How errors name the option in a run file (and in ``RunConfig``)."""
        return f"'{self.name}'"

    @property
    def cli_label(self) -> str:
        """How errors name the option on the command line."""
        return self.flags[0] if self.flags else (self.metavar or self.name)

    @property
    def usage(self) -> str:
        """How ``--help`` shows the argument: ``--clusters K``, ``INPUT ...``."""
        if self.positional:
            return f"{self.metavar or self.name} ..."
        if isinstance(self.kind, Flag):
            return self.flags[0]
        choices = self.kind.choices if isinstance(self.kind, Choice) else None
        value = self.metavar or ("{" + ",".join(choices) + "}" if choices else self.name.upper())
        return f"{self.flags[0]} {value}"

    @property
    def help_text(self) -> str:
        return self.help.replace("{default}", str(self.default))

    def validate(self, value: Any, label: Optional[str] = None) -> Any:
        """``value`` checked and normalised, or :class:`ConfigError` naming
        ``label`` (default: the run-file key)."""
        return self.kind.check(label or self.key_label, value)

    def add_to(self, parser, command: str) -> None:
        """Add this option's argument to ``parser`` (a parser or a group)."""
        kwargs = dict(self.kind.argparse(self.positional), help=self.help_text)
        if self.positional:
            parser.add_argument(self.name, metavar=self.metavar, **kwargs)
            return
        if self.metavar:
            kwargs["metavar"] = self.metavar
        if command in self.required_in:
            kwargs["required"] = True
        # settings default to None so that a run file can supply them; a
        # switch of the qarla command repeated on a subcommand has no default
        # there (it would undo the switch given before the command name);
        # the spark-submit job ("job") has no command before it
        default = self.default if not self.setting else None
        if "qarla" in self.commands and command not in ("qarla", "job"):
            default = argparse.SUPPRESS
        parser.add_argument(*self.flags, dest=self.name, default=default, **kwargs)

    def from_args(self, args: Any, current: Any) -> Any:
        """This option's value in parsed ``args`` (``current``: the value it
        replaces, e.g. from a run file); ``None`` when not given."""
        return self.kind.from_cli(getattr(args, self.name, None), current)

    def plain(self, value: Any) -> Any:
        return self.kind.plain(value)


def settings(options: Iterable[Option]) -> Tuple[Option, ...]:
    """The options that are ``RunConfig`` fields and run-file keys."""
    return tuple(o for o in options if o.setting)


def add_arguments(parser, command: str, options: Iterable[Option]) -> None:
    """Add the arguments of ``command`` to ``parser``, in declaration order,
    each in its help group (groups are created in order of first use)."""
    groups: Dict[str, Any] = {}
    for option in options:
        if command not in option.commands:
            continue
        target = parser
        if option.group:
            if option.group not in groups:
                groups[option.group] = parser.add_argument_group(option.group)
            target = groups[option.group]
        option.add_to(target, command)


#: Every option, in the order of ``--help`` (``RunConfig`` fields, run-file
#: keys and ``to_dict()`` follow it too).
OPTIONS: Tuple[Option, ...] = (
    # inputs
    Option("inputs", Strings(), (), positional=True, metavar="INPUT", commands=_READ,
           help="summary files or folders (default: the bundled SummEval testbed)"),
    Option("judgments", Strings(), (), flags=("--judgments",), metavar="PATH", commands=_READ,
           help="human judgments: long form (task, topic, summarizer, criterion, rater?, "
                "score), a 'human' object per summary, SacreROUGE metrics, or a wide CSV "
                "(one column per criterion); a score may be a list, one per rater; "
                "repeatable"),
    Option("sources", Strings(), (), flags=("--sources",), metavar="PATH", commands=_READ,
           help="source documents: {task, topic, documents: [text, ...]}; repeatable"),
    Option("task", Text("a non-empty name", optional=True), None, flags=("--task",),
           commands=_READ, help="task name for records that carry none"),
    Option("language", Languages(), "en", flags=("--language",), metavar="LANG",
           commands=_READ,
           help="the summaries' language: LANG for every task, TASK=LANG for one; "
                "repeatable (default en: ROUGE-1.5.5's tokens, stop list and stemmer; "
                "the languages: see below)"),
    Option("problem_limit", Integer(1), 50, flags=("--limit",), metavar="N", commands=_READ,
           help="show at most N problems of each severity (default {default})"),
    Option("driver_read_mb", Integer(0), 16, flags=("--driver-read-mb",), metavar="MB",
           commands=_READ,
           help="inputs on the local file system of at most MB megabytes in all are read and "
                "checked in the driver before Spark starts (the description comes at once and "
                "'validate' needs no Spark); larger or remote ones by Spark; 0: always Spark "
                "(default {default})"),
    # the run
    Option("config", Text("a file", optional=True), None, flags=("--config",), metavar="FILE",
           commands=_WRITE, required_in=("job",), setting=False,
           help="TOML run configuration (e.g. conf/summeval.toml); options given here win "
                "over it"),
    Option("out", Text("a non-empty path",
                       message="{label} (the run directory) must be a non-empty path"),
           DEFAULT_OUT, flags=("--out",), commands=_WRITE,
           help="run directory to write (default {default})"),
    Option("overwrite", Flag(), False, flags=("--overwrite",), commands=_WRITE,
           help="replace --out if it exists (only once the new run is complete; committed "
                "in place: once the new run starts writing)"),
    Option("commit", Choice(COMMIT_MODES), "auto", flags=("--commit",),
           commands=_WRITE,
           help="how the run directory is committed: rename (written as OUT.incomplete-<id>, "
                "then renamed to OUT: atomic on local and HDFS file systems), in-place "
                "(written under OUT, run.json last: for object stores, where a rename copies "
                "every file) or auto (default: in place on s3a, s3, gs, abfs, wasb and other "
                "object stores, rename elsewhere); readers refuse a run whose run.json is "
                "missing or not complete"),
    Option("seed", Integer(0), DEFAULT_SEED, flags=("--seed",), commands=_WRITE,
           help="seed of every random choice (default {default})"),
    Option("stages", Strings(choices=STAGES), RUN_STAGES,
           help="the stages to run, in order (default: all but plan, which --plan adds; "
                "'qarla similarities' runs the first two)"),
    # metrics
    Option("metrics", Strings(single=True), (), flags=("--metrics",), metavar="NAMES",
           commands=_COMPUTE, group="metrics",
           help="metrics to compute (default: the 59 of the battery); see below"),
    Option("user_metrics", Strings(), (), flags=("--user-metrics",), metavar="TABLE",
           commands=_COMPUTE, group="metrics",
           help="a table of your own metric values; repeatable"),
    Option("metric_plugins", Strings(), (), flags=("--metric-plugin",), metavar="FILE.py",
           commands=_COMPUTE, group="metrics",
           help="a Python file registering metric functions; repeatable"),
    Option("tagger", Text("a tagger name"), "pattern", flags=("--tagger",), metavar="NAME",
           commands=_COMPUTE, group="metrics",
           help="part-of-speech tagger of GRAMSIM (default {default}: TextBlob's "
                "PatternTagger; spacy: an installed en_core_web_sm; or one a plugin "
                "registers)"),
    # QARLA
    Option("metric_sets", Strings(), (), flags=("--metric-set",), metavar="NAMES",
           commands=("run",), group="QARLA",
           help='a metric set to score explicitly, e.g. "R-1.a,TVM.512"; repeatable'),
    Option("similarities", Text("a path", optional=True), None, flags=("--similarities",),
           metavar="PATH", commands=("run",), group="QARLA",
           help="reuse the similarities/ table of an earlier run instead of computing it"),
    Option("clusters", Integer(1), 10, flags=("--clusters",), metavar="K",
           commands=("run",), group="QARLA",
           help="number of metric clusters (default {default}; KING of 2^K - 1 subsets)"),
    Option("triples", Choice(("standard", "distinct")), "standard", flags=("--triples",),
           commands=("run",), group="QARLA",
           help="QUEEN triples (default {default}: m may equal m' or m'')"),
    Option("jack_orders", Integer(1), 20, flags=("--jack-orders",), metavar="R",
           commands=("run",), group="QARLA",
           help="random orders of the systems in the JACK curve (default {default})"),
    # HBR
    Option("hbr_pairs", Integer(1), 10_000, flags=("--hbr-pairs",), metavar="N",
           commands=("run",), group="HBR",
           help="same-topic pairs sampled to estimate heterogeneity (default {default})"),
    Option("hbr_exact", Flag(), False, flags=("--hbr-exact",), commands=("run",), group="HBR",
           help="estimate heterogeneity exactly, on all pairs"),
    Option("hbr_measures", Strings(), (), flags=("--hbr-measures",), metavar="NAMES",
           commands=("run",), group="HBR",
           help='HBR\'s measures, names or patterns, e.g. "R-*.a,Rpre-*.a" (default: the '
                "R, Rpre and F metrics and your own)"),
    Option("hbr_models", Flag(), False, flags=("--hbr-models",), commands=("run",),
           group="HBR", help="also score and rank the models (each against the other models)"),
    Option("hbr_aggregate", Choice(("mean", "max")), "mean", flags=("--hbr-aggregate",),
           commands=("run",), group="HBR",
           help="a summary's score over the models (default {default})"),
    # statistics
    Option("bootstrap", Integer(0), 1000, flags=("--bootstrap",), metavar="N",
           commands=("run",), group="statistics",
           help="bootstrap replicates over topics (and sign patterns of the paired tests) "
                "behind every interval and p-value; 0: no statistics stage (default "
                "{default})"),
    # plan (issue 40)
    Option("plan", Flag(), False, flags=("--plan",), commands=("run", "job"), group="plan",
           help="also plan the next shared task (the plan stage: power/ and ppi/, SPEC §12); "
                "'qarla plan RUN_DIR' plans a finished run"),
    Option("plan_trials", Integer(1), 1000, flags=("--plan-trials",), metavar="T",
           commands=_PLAN, group="plan",
           help="seeded trials per size and per k (default {default})"),
    Option("plan_sizes", Integers(), (), flags=("--plan-sizes",), metavar="N,N,...",
           commands=_PLAN, group="plan",
           help="numbers of topics simulated (default: 10, 20, ... up to each task's topics, "
                "then 1.5x and 2x them, drawn with replacement)"),
    Option("plan_ks", Integers(2), (10, 20, 30, 40, 50), flags=("--plan-ks",),
           metavar="K,K,...", commands=_PLAN, group="plan",
           help="judged summaries per system in the PPI simulation"),
    Option("plan_measure", Text("a measure name", optional=True), None,
           flags=("--plan-measure",), metavar="NAME", commands=_PLAN, group="plan",
           help="PPI's automatic measure: QUEEN(<set>) of the best set or the best single "
                "metric, or HBR (default: the best set's QUEEN)"),
    # Spark
    Option("profile", Text("a profile name or file"), "local", flags=("--profile",),
           commands=_SPARK, group="Spark",
           help="Spark profile: 'local' (default: local[*], conf/local.conf), "
                "'cluster' (conf/cluster.conf) or a spark-defaults file"),
    Option("master", Text("a Spark master URL", optional=True), None, flags=("--master",),
           commands=_SPARK, group="Spark",
           help="Spark master, e.g. local[2], spark://host:7077, yarn (wins over the profile)"),
    Option("spark_conf", Table("a table of Spark settings"), {}, flags=("--conf",),
           metavar="KEY=VALUE", commands=_SPARK, group="Spark",
           help="extra Spark setting (wins over the profile); repeatable"),
    Option("verbose", Flag(), False, flags=("--verbose",), commands=_SPARK, group="Spark",
           setting=False,
           help="show Spark's INFO logs (without it Spark logs nothing: its failures reach "
                "you as qarla's one-sentence message, --debug for the traceback)"),
    Option("quiet", Flag(), False, flags=("--quiet", "-q"), commands=_COMPUTE,
           setting=False,
           help="print only the final summary and errors: no testbed description first, no "
                "progress lines"),
    # switches of the qarla command itself (before or after the command name)
    # and of the spark-submit job
    Option("debug", Flag(), False, flags=("--debug",), commands=("qarla", *_SPARK, "job"),
           setting=False, help="show the full traceback of errors"),
)


# --- documentation -----------------------------------------------------------

def _toml(value: Any) -> str:
    return "" if value is None else json.dumps(value)


def markdown_table(options: Iterable[Option] = OPTIONS) -> str:
    """The README's table of run options: run-file key, command-line spelling
    (and the commands taking it), values, default and meaning."""
    rows = ["| run-file key | command line | value | default | meaning |",
            "|---|---|---|---|---|"]
    for o in settings(options):
        commands = ", ".join(c for c in COMMANDS if c in o.commands)
        cli = f"`{o.usage}` ({commands})" if o.commands else "(run files only)"
        default = _toml(o.plain(o.default))
        cells = (f"`{o.name}`", cli, o.kind.describe, f"`{default}`" if default else "",
                 o.help_text)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


if __name__ == "__main__":  # pragma: no cover
    print(markdown_table())
