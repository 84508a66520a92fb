"""The output tables are declared once (qarla_spark.tables): the writer,
``qarla run --help`` and the README come from the declarations."""

from __future__ import annotations

from pathlib import Path

import pytest

from qarla_spark import tables
from qarla_spark.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"


def test_names_are_unique_and_stages_known():
    from qarla_spark.options import STAGES
    names = [t.name for t in tables.TABLES]
    assert len(names) == len(set(names))
    assert {t.stage for t in tables.TABLES} == set(STAGES)
    with pytest.raises(KeyError, match="no table 'nope' is declared"):
        tables.table("nope")


def test_readme_lists_exactly_the_declared_tables():
    assert tables.markdown() in README.read_text(), \
        "README's table of outputs differs: paste `python -m qarla_spark.tables`"


def test_run_help_lists_every_table():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    text = sub.choices["run"].format_help()
    for t in tables.TABLES:
        assert f"  {t.name}/" in text, t.name
    sim = sub.choices["similarities"].format_help()
    assert "similarities/" in sim and "king/" not in sim


def test_column_text_groups_types():
    t = tables.table("summaries")
    assert t.column_text() == ("task, topic, summarizer, role: string (`model`\\|`peer`), "
                               "text: string")
    t = tables.table("judgments")
    assert t.column_text() == ("task, topic, summarizer, criterion, rater: string (null: one "
                               "anonymous rater), score: double")
    assert tables.table("testbed").columns[-1].spark_type == "map<string,bigint>"


@pytest.mark.spark
def test_the_writer_checks_the_declaration(spark, tmp_path):
    from qarla_spark.pipeline import write_tables
    from qarla_spark.spark.output import RunDirectory
    out = RunDirectory(spark, str(tmp_path / "run"))
    jack = spark.createDataFrame([("t", "a", 0.5, 7)], "task string, metric_set string, "
                                                       "jack double, extra int")
    write_tables(out, {"jack": jack}, {})          # extra columns are left out
    assert spark.read.parquet(out.path("jack")).columns == ["task", "metric_set", "jack"]
    assert out.tables["jack"]["description"] == tables.table("jack").help
    wrong = spark.createDataFrame([("t", "a", "0.5")], "task string, metric_set string, "
                                                       "jack string")
    with pytest.raises(ValueError, match="table jack: the stage produced columns"):
        write_tables(out, {"jack": wrong}, {})
    with pytest.raises(KeyError, match="no table 'jacket' is declared"):
        write_tables(out, {"jacket": jack}, {})
    out.abort()
