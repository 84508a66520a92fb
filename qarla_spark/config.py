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


def load_config(path: str, config_class: Type = RunConfig):
    """Read a TOML run file; unknown keys are errors naming the closest key."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"run configuration {path} not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
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
