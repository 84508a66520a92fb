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


# --- options declared once (qarla_spark/options.py) ---------------------------

def test_every_declared_option_is_a_field_a_run_file_key_and_in_to_dict():
    import json
    from dataclasses import fields

    from qarla_spark.config import KEYS
    from qarla_spark.options import OPTIONS
    declared = tuple(o.name for o in OPTIONS if o.setting)
    assert KEYS == declared == tuple(f.name for f in fields(RunConfig))
    assert tuple(RunConfig().to_dict()) == declared  # run.json's "config"
    json.dumps(RunConfig().to_dict())
    switches = {o.name for o in OPTIONS if not o.setting}
    assert switches == {"config", "verbose", "quiet", "debug"} and not switches & set(KEYS)


def test_run_config_is_an_immutable_value():
    from dataclasses import FrozenInstanceError
    config = RunConfig(inputs=["a.jsonl"], spark_conf={"spark.x": 1}, metrics="R-1.a")
    assert config == RunConfig(inputs=("a.jsonl",), spark_conf={"spark.x": "1"},
                               metrics=("R-1.a",))
    assert config.inputs == ("a.jsonl",) and not config.uses_bundled
    assert RunConfig().uses_bundled and RunConfig().stages == ("testbed", "similarities",
                                                               "qarla", "hbr", "statistics")
    with pytest.raises(FrozenInstanceError):
        config.seed = 1
    assert config.updated(seed=2).seed == 2 and config.seed == 13
    with pytest.raises(ConfigError, match="'clusters' must be a positive integer, found 0"):
        config.updated(clusters=0)
    with pytest.raises(ConfigError, match="'stages' must name some of testbed"):
        RunConfig(stages=("qarla", "report"))


def test_readme_lists_exactly_the_declared_options():
    """The README's table is generated from the declarations; regenerate it
    with `python -m qarla_spark.options` when an option changes."""
    from pathlib import Path

    from qarla_spark.options import markdown_table
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    start = readme.index("<!-- run options:")
    section = readme[readme.index("-->", start) + 3:readme.index("<!-- end of run options")]
    assert section.strip() == markdown_table()
    keys = [line.split("`")[1] for line in section.strip().splitlines()[2:]]
    from qarla_spark.config import KEYS
    assert tuple(keys) == KEYS


def test_command_line_errors_name_the_flag():
    from qarla_spark.cli import build_parser, config_from_args
    for argv, match in ((["run", "--jack-orders", "0"], "--jack-orders must be a positive integer"),
                        (["run", "--seed", "-1"], "--seed must be a non-negative integer"),
                        (["validate", "--limit", "0"], "--limit must be a positive integer"),
                        (["run", "--out", " "], "--out \\(the run directory\\) must be")):
        with pytest.raises(ConfigError, match=match):
            config_from_args(build_parser().parse_args(argv))


def test_command_line_wins_over_the_run_file_and_conf_pairs_merge(tmp_path):
    from qarla_spark.cli import build_parser, config_from_args
    path = tmp_path / "r.toml"
    path.write_text('seed = 5\nclusters = 4\nspark_conf = {"a" = "1", "b" = "2"}\n'
                    'judgments = ["j.csv"]\n')
    args = build_parser().parse_args(["run", "x.jsonl", "--seed", "7", "--conf", "b=3"])
    config = config_from_args(args, load_config(str(path)))
    assert (config.seed, config.clusters, config.inputs, config.judgments) == \
        (7, 4, ("x.jsonl",), ("j.csv",))
    assert config.spark_conf == {"a": "1", "b": "3"}


def test_a_new_option_declared_once_reaches_cli_run_file_and_run_json(tmp_path, capsys):
    """Done-when of issue 10: one declaration, and the option is on the
    command line (with its help), in run files, in to_dict() (run.json), and
    validated on both."""
    import json

    from qarla_spark.cli import build_parser, config_from_args
    from qarla_spark.config import make_config_class
    from qarla_spark.options import OPTIONS, Integer, Option
    new = Option("new_thing", Integer(1), 1, flags=("--new-thing",), metavar="N",
                 commands=("run",), group="QARLA", help="how many new things (default {default})")
    options = OPTIONS + (new,)
    Config, parser = make_config_class(options), build_parser(options)

    config = config_from_args(parser.parse_args(["run", "--new-thing", "3"]), config_class=Config)
    assert config.new_thing == 3 and Config().new_thing == 1 and config.seed == 13
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    help_text = capsys.readouterr().out
    assert "--new-thing N" in help_text and "how many new things (default 1)" in help_text
    assert "--new-thing N" in help_text.split("\nQARLA:")[1].split("\nHBR:")[0]  # its group

    path = tmp_path / "r.toml"
    path.write_text("new_thing = 3\nseed = 5\n")
    from_file = load_config(str(path), Config)
    assert (from_file.new_thing, from_file.seed) == (3, 5)
    both = config_from_args(parser.parse_args(["run", "--new-thing", "4"]), from_file)
    assert (both.new_thing, both.seed) == (4, 5)

    assert json.loads(json.dumps(config.to_dict()))["new_thing"] == 3

    with pytest.raises(ConfigError, match="--new-thing must be a positive integer, found 0"):
        config_from_args(parser.parse_args(["run", "--new-thing", "0"]), config_class=Config)
    path.write_text("new_thing = 0\n")
    with pytest.raises(ConfigError, match="'new_thing' must be a positive integer, found 0"):
        load_config(str(path), Config)
    path.write_text("new_thin = 2\n")
    with pytest.raises(ConfigError, match="did you mean 'new_thing'"):
        load_config(str(path), Config)

    # the declarations themselves are untouched
    assert "new_thing" not in RunConfig().to_dict()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--new-thing", "3"])
    capsys.readouterr()
