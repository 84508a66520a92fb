"""The registry of similarity metrics: names, descriptions, validation.

Every metric is a similarity x(s, r) between two summaries of a topic, ``r``
playing the reference (SPEC §2). Built-in names:

- ``R-<k>.<v>`` and ``Rpre-<k>.<v>`` for k in 1 2 3 4 L W-1.2 S4 SU4 and
  v in a b c (48): ROUGE recall of s against r, and inverted ROUGE R(r, s);
- ``TVM.<n>`` for n in 1 4 8 16 32 64 128 256 512 (9), ``AVLS``, ``GRAMSIM``;
- ``F-<k>.<v>`` (24, not in the default battery): the harmonic mean of R and
  Rpre, for HBR (paper ``001``).

The default battery is the 59 metrics of paper ``000`` (everything above but
``F-``). Users add metrics two ways, and both then behave exactly like
built-in ones: a table of values (:mod:`qarla_spark.stages.similarity_plan`) or
a Python function on token lists (:func:`register_metric`).

Names are validated when a run is configured (:func:`resolve_metrics`), not
when it fails: an unknown name is an error that lists the closest valid ones.
Selections may use shell-style patterns (``R-*.a``, ``TVM.*``) and the
groups ``default`` (the 59), ``rouge`` (R and Rpre), ``F`` and ``all``.
"""

from __future__ import annotations

import difflib
import fnmatch
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from qarla_spark.errors import ConfigError
from qarla_spark.names import SEPARATOR, check_metric_name

ROUGE_KINDS: Tuple[str, ...] = ("1", "2", "3", "4", "L", "W-1.2", "S4", "SU4")
VARIANTS: Tuple[str, ...] = ("a", "b", "c")
TVM_SIZES: Tuple[int, ...] = (1, 4, 8, 16, 32, 64, 128, 256, 512)

_KIND_TEXT = {
    "1": "unigram", "2": "bigram", "3": "trigram", "4": "4-gram",
    "L": "summary-level union LCS", "W-1.2": "weighted LCS (f(k)=k^1.2)",
    "S4": "skip-bigram (gap <= 4)", "SU4": "skip-bigram (gap <= 4) plus unigram",
}
_VARIANT_TEXT = {"a": "all tokens", "b": "stop words removed",
                 "c": "stop words removed, stemmed"}


@dataclass(frozen=True)
class MetricInfo:
    name: str
    family: str          # rouge | f | tvm | avls | gramsim | function | table
    description: str
    in_default: bool = False
    variant: Optional[str] = None
    kind: Optional[str] = None


def _builtin() -> Dict[str, MetricInfo]:
    out: Dict[str, MetricInfo] = {}
    for v in VARIANTS:
        for k in ROUGE_KINDS:
            what = f"ROUGE-{k} ({_KIND_TEXT[k]}), {_VARIANT_TEXT[v]}"
            out[f"R-{k}.{v}"] = MetricInfo(f"R-{k}.{v}", "rouge",
                                           f"recall of r's units found in s: {what}", True, v, k)
            out[f"Rpre-{k}.{v}"] = MetricInfo(f"Rpre-{k}.{v}", "rouge",
                                              f"inverted ROUGE R(r, s): {what}", True, v, k)
    for n in TVM_SIZES:
        out[f"TVM.{n}"] = MetricInfo(
            f"TVM.{n}", "tvm", f"term vectors of the topic's {n} most frequent stemmed "
            "content terms: 1/(1+Euclidean distance)", True)
    out["AVLS"] = MetricInfo("AVLS", "avls", "1/(1+|difference of average sentence lengths|)",
                             True)
    out["GRAMSIM"] = MetricInfo("GRAMSIM", "gramsim", "1/(1+Euclidean distance of "
                                "part-of-speech tag frequency vectors)", True)
    for v in VARIANTS:
        for k in ROUGE_KINDS:
            out[f"F-{k}.{v}"] = MetricInfo(
                f"F-{k}.{v}", "f", f"harmonic mean of R-{k}.{v} and Rpre-{k}.{v}", False, v, k)
    return out


BUILTIN: Dict[str, MetricInfo] = _builtin()
#: the 59 metrics of paper 000, in canonical order
DEFAULT_BATTERY: Tuple[str, ...] = tuple(n for n, m in BUILTIN.items() if m.in_default)
GROUPS: Dict[str, Tuple[str, ...]] = {
    "default": DEFAULT_BATTERY,
    "rouge": tuple(n for n, m in BUILTIN.items() if m.family == "rouge"),
    "F": tuple(n for n, m in BUILTIN.items() if m.family == "f"),
}


@dataclass(frozen=True)
class UserMetric:
    """A metric computed by a Python function on token lists.

    ``func(s, r) -> float`` receives the two summaries as lists of tokens of
    ``variant`` (``a``/``b``/``c``), or, with ``sentences=True``, as lists of
    sentences, each a list of tokens. It must be a pure function of its
    arguments (it runs on the executors) and return a finite number.
    """

    name: str
    func: Callable
    variant: str = "a"
    sentences: bool = False
    description: str = ""

    @property
    def info(self) -> MetricInfo:
        return MetricInfo(self.name, "function",
                          self.description or f"user function {getattr(self.func, '__name__', '')}",
                          False, self.variant)


_USER_FUNCTIONS: Dict[str, UserMetric] = {}


def _check_new_name(name: str) -> None:
    check_metric_name(name)
    if name in BUILTIN or name in GROUPS or name == "all":
        raise ConfigError(f"metric name {name!r} is taken by a built-in metric or group")


def register_metric(name: str, func: Callable, variant: str = "a", sentences: bool = False,
                    description: str = "") -> UserMetric:
    """Register ``func(s_tokens, r_tokens) -> float`` under ``name``.

    >>> register_metric("overlap.a", lambda s, r: len(set(s) & set(r)) / max(1, len(set(r))))
    """
    _check_new_name(name)
    if variant not in VARIANTS:
        raise ConfigError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    if not callable(func):
        raise ConfigError(f"metric {name!r}: {func!r} is not callable")
    metric = UserMetric(name, func, variant, sentences, description)
    _USER_FUNCTIONS[name] = metric
    return metric


def unregister_metric(name: str) -> None:
    _USER_FUNCTIONS.pop(name, None)


def user_functions() -> Dict[str, UserMetric]:
    return dict(_USER_FUNCTIONS)


def describe(name: str) -> MetricInfo:
    if name in BUILTIN:
        return BUILTIN[name]
    if name in _USER_FUNCTIONS:
        return _USER_FUNCTIONS[name].info
    raise ConfigError(_unknown_message(name, list(BUILTIN) + list(_USER_FUNCTIONS)))


def _unknown_message(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return (f"unknown metric {name!r}{hint} (see `qarla metrics` for the list; patterns such "
            "as 'R-*.a' and the groups default, rouge, F, all are accepted)")


def split_names(names) -> List[str]:
    """``"R-1.a, TVM.*"`` or a list of such strings -> ``["R-1.a", "TVM.*"]``."""
    if names is None:
        return []
    if isinstance(names, str):
        names = [names]
    out: List[str] = []
    for item in names:
        out += [part.strip() for part in str(item).split(SEPARATOR) if part.strip()]
    return out


def resolve_metrics(names=None, extra: Iterable[str] = ()) -> Tuple[str, ...]:
    """The metric names a selection stands for, validated, in canonical order
    (built-ins first, in registry order, then others by name), without
    repeats. ``None`` or empty: the default battery. ``extra`` are further
    known names (e.g. metrics of a user table)."""
    wanted = split_names(names)
    if not wanted:
        return DEFAULT_BATTERY
    extra = tuple(extra)
    known = list(BUILTIN) + sorted(set(_USER_FUNCTIONS) | set(extra))
    chosen = set()
    for item in wanted:
        if item == "all":
            chosen.update(known)
        elif item in GROUPS:
            chosen.update(GROUPS[item])
        elif any(ch in item for ch in "*?["):
            hits = fnmatch.filter(known, item)
            if not hits:
                raise ConfigError(f"metric pattern {item!r} matches no metric")
            chosen.update(hits)
        elif item in known:
            chosen.add(item)
        else:
            raise ConfigError(_unknown_message(item, known))
    return tuple(n for n in known if n in chosen)


def load_plugins(paths: Iterable[str]) -> Tuple[str, ...]:
    """Run Python files that register metrics (:func:`register_metric`);
    return the names they registered. A plain path or ``file:`` URI is run
    from the local file system; a URI of another Hadoop file system
    (``hdfs://``, ``s3a://``, ...) is read through Hadoop's FileSystem API
    with the active SparkSession (:mod:`qarla_spark.paths`) and run the
    same way (as a module named ``qarla_metric_plugin``, which executors
    cannot import: its functions travel to them by value)."""
    import builtins
    import runpy

    from qarla_spark.paths import is_local, local_path, read_text
    before = set(_USER_FUNCTIONS)
    for path in paths:
        try:
            if is_local(path):
                runpy.run_path(local_path(str(path)), run_name="qarla_metric_plugin")
            else:
                code = compile(read_text(str(path)), str(path), "exec")
                exec(code, {"__name__": "qarla_metric_plugin", "__file__": str(path),
                            "__builtins__": builtins})
        except (FileNotFoundError, IsADirectoryError):
            raise ConfigError(f"metric plugin {path} not found") from None
        except ConfigError as exc:
            raise ConfigError(f"metric plugin {path}: {exc}") from None
        except Exception as exc:
            raise ConfigError(f"metric plugin {path} failed to load: "
                              f"{type(exc).__name__}: {exc}") from None
    return tuple(sorted(set(_USER_FUNCTIONS) - before))
