"""Run configuration files (pure)."""

from __future__ import annotations

import pytest

from qarla_spark.config import RunConfig, load_config
from qarla_spark.errors import ConfigError


def test_bundled_run_file_loads():
    from importlib import resources
    config = load_config(str(resources.files("qarla_spark.conf") / "summeval.toml"))
    assert config.uses_bundled and config.seed == 13 and config.overwrite


def test_unknown_key_names_the_closest(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text('inputs = []\nsed = 3\n')
    with pytest.raises(ConfigError, match="unknown key 'sed' \\(did you mean 'seed'\\?\\)"):
        load_config(str(path))


@pytest.mark.parametrize("text,match", [
    ("seed = -1", "seed"),
    ('seed = "x"', "seed"),
    ('inputs = "a.jsonl"', "list of paths"),
    ('out = ""', "out"),
    ("seed = ", "not valid TOML"),
    ('hbr_aggregate = "median"', "hbr_aggregate"),
    ("hbr_pairs = 0", "hbr_pairs"),
    ('hbr_exact = "yes"', "hbr_exact"),
    ('hbr_measures = "R-*"', "list of paths"),
])
def test_bad_values(tmp_path, text, match):
    path = tmp_path / "r.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=match) as info:
        load_config(str(path))
    assert str(path) in str(info.value)


def test_missing_file():
    with pytest.raises(ConfigError, match="not found"):
        load_config("/nonexistent/run.toml")


def test_updated_ignores_none_and_keeps_the_original():
    base = RunConfig(out="a", seed=1)
    new = base.updated(out="b", seed=None)
    assert (new.out, new.seed, base.out) == ("b", 1, "a")
    assert new.to_dict()["inputs"] == []


def test_hbr_options_from_the_command_line():
    from qarla_spark.cli import build_parser, config_from_args
    args = build_parser().parse_args(["run", "--hbr-pairs", "500", "--hbr-exact",
                                      "--hbr-measures", "R-*.a", "--hbr-measures", "bert",
                                      "--hbr-models", "--hbr-aggregate", "max"])
    config = config_from_args(args)
    assert (config.hbr_pairs, config.hbr_exact, config.hbr_measures, config.hbr_models,
            config.hbr_aggregate) == (500, True, ("R-*.a", "bert"), True, "max")
    default = config_from_args(build_parser().parse_args(["run"]))
    assert (default.hbr_pairs, default.hbr_exact, default.hbr_models) == (10_000, False, False)
    assert "hbr" in default.stages
