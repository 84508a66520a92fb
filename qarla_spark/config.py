"""Run configuration: one frozen dataclass, filled from a TOML file and/or the
command line (the command line wins), validated before Spark starts.

Its fields, their defaults and validation, the keys of a TOML run file and
the command-line options all derive from the declarations in
:mod:`qarla_spark.options` (the README's "Run options" table lists them;
``conf/summeval.toml`` is an example run file). Every key of a run file is
optional; an unknown key is an error naming the closest valid one.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import field, make_dataclass, replace
from typing import Any, Dict, Iterable, Type

from qarla_spark.errors import ConfigError
from qarla_spark.options import (DEFAULT_OUT, DEFAULT_SEED, OPTIONS, STAGES, Option,  # noqa: F401
                                 settings)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


class _ConfigMethods:
    """What every configuration class has besides its fields (see
    :func:`make_config_class`)."""

    OPTIONS: tuple = ()
    KEYS: tuple = ()

    def __post_init__(self):
        for option in self.OPTIONS:
            object.__setattr__(self, option.name, option.validate(getattr(self, option.name)))

    @property
    def uses_bundled(self) -> bool:
        return not self.inputs

    def to_dict(self) -> Dict[str, Any]:
        """Every option, JSON-ready (lists and tables): run.json's ``config``."""
        return {o.name: o.plain(getattr(self, o.name)) for o in self.OPTIONS}

    def updated(self, **changes: Any):
        """A copy with the given (non-None) values replaced."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def make_config_class(options: Iterable[Option], name: str = "RunConfig") -> Type:
    """A frozen dataclass with one field per setting of ``options`` (its
    default from the declaration), validating every field on construction;
    ``OPTIONS`` and ``KEYS`` (the run-file keys) on the class."""
    declared = settings(options)
    specs = []
    for o in declared:
        default = (field(default_factory=lambda d=o.default: dict(d)) if isinstance(o.default, dict)
                   else field(default=o.default))
        specs.append((o.name, o.kind.annotation, default))
    cls = make_dataclass(name, specs, bases=(_ConfigMethods,), frozen=True, namespace={
        "OPTIONS": declared, "KEYS": tuple(o.name for o in declared),
        "__doc__": "The configuration of a run: one field per run option ("
                   + ", ".join(o.name for o in declared) + ")."})
    cls.__module__ = __name__
    return cls


#: The configuration of a run: one field per option of :data:`OPTIONS`.
RunConfig = make_config_class(OPTIONS)

KEYS = RunConfig.KEYS


#: run-file keys that configure Spark itself: a run file on a remote file
#: system is read once Spark runs, so it cannot set them
SESSION_KEYS = ("profile", "master", "spark_conf")


def load_config(path: str, config_class: Type = RunConfig, spark=None):
    """Read a TOML run file; unknown keys are errors naming the closest key.

    ``path``: a plain path or ``file:`` URI (read with ``open``), or a URI
    of another Hadoop file system (``hdfs://``, ``s3a://``, ...), read
    through Hadoop's FileSystem API with ``spark`` (default: the active
    session; :mod:`qarla_spark.paths`). Spark is then already running,
    so such a file cannot set :data:`SESSION_KEYS`: an error says so."""
    from qarla_spark.paths import is_local, read_bytes
    try:
        data = tomllib.loads(read_bytes(path, spark).decode("utf-8"))
    except (FileNotFoundError, IsADirectoryError):
        raise ConfigError(f"run configuration {path} not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if not is_local(path):
        for key in SESSION_KEYS:
            if key in data and key in config_class.KEYS:
                raise ConfigError(
                    f"{path}: '{key}' cannot be set in a run file that is read through Hadoop "
                    "(Spark starts before such a file is read): give it on the command line "
                    "or to spark-submit, or use a local run file")
    keys = config_class.KEYS
    for key in data:
        if key not in keys:
            close = difflib.get_close_matches(key, keys, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"{path}: unknown key '{key}'{hint}; valid keys: {', '.join(keys)}")
    try:
        return config_class(**data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except TypeError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def config_from_args(args, base=None, config_class=None):
    """``base`` (default: ``config_class()``) updated with the options given in
    ``args``, each validated by its declaration (errors name the flag)."""
    base = base if base is not None else (config_class or RunConfig)()
    changes = {}
    for option in base.OPTIONS:
        value = option.from_args(args, getattr(base, option.name))
        if value is not None:
            changes[option.name] = option.validate(value, option.cli_label)
    return base.updated(**changes)
