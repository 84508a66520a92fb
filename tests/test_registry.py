"""The metric registry: the 59 names, selections, errors, user functions (pure)."""

from __future__ import annotations

import pytest

from qarla_spark.errors import ConfigError
from qarla_spark.metrics import registry


def test_default_battery_is_the_59_of_the_paper():
    names = registry.DEFAULT_BATTERY
    assert len(names) == 59 and len(set(names)) == 59
    kinds = ["1", "2", "3", "4", "L", "W-1.2", "S4", "SU4"]
    expected = {f"{d}-{k}.{v}" for d in ("R", "Rpre") for k in kinds for v in "abc"}
    expected |= {f"TVM.{n}" for n in (1, 4, 8, 16, 32, 64, 128, 256, 512)}
    expected |= {"AVLS", "GRAMSIM"}
    assert set(names) == expected
    assert not any(n.startswith("F-") for n in names)
    assert len(registry.GROUPS["F"]) == 24


def test_every_metric_has_a_description():
    for name, info in registry.BUILTIN.items():
        assert info.name == name and len(info.description) > 20


@pytest.mark.parametrize("selection,expected", [
    (None, 59),
    ("", 59),
    ("R-1.a", 1),
    ("R-1.a, Rpre-L.c", 2),
    (["R-*.a", "TVM.*"], 8 + 9),
    ("rouge", 48),
    ("default,F", 83),
    ("all", 83),
    (["R-1.a", "R-1.a"], 1),
])
def test_selections(selection, expected):
    assert len(registry.resolve_metrics(selection)) == expected


def test_selection_keeps_canonical_order():
    assert registry.resolve_metrics("GRAMSIM,R-2.b,R-1.a") == ("R-1.a", "R-2.b", "GRAMSIM")


def test_unknown_name_lists_the_closest():
    with pytest.raises(ConfigError) as info:
        registry.resolve_metrics("R-1.x")
    msg = str(info.value)
    assert "unknown metric 'R-1.x'" in msg and "R-1.a" in msg and "qarla metrics" in msg


def test_pattern_without_match():
    with pytest.raises(ConfigError, match="matches no metric"):
        registry.resolve_metrics("BLEU*")


def test_user_function_registration_and_validation():
    try:
        registry.register_metric("overlap.b", lambda s, r: 0.5, variant="b",
                                 description="test metric")
        assert "overlap.b" in registry.resolve_metrics("all")
        assert registry.resolve_metrics("overlap.b") == ("overlap.b",)
        assert registry.describe("overlap.b").family == "function"
        with pytest.raises(ConfigError, match="taken"):
            registry.register_metric("R-1.a", lambda s, r: 0)
        with pytest.raises(ConfigError, match="variant"):
            registry.register_metric("x", lambda s, r: 0, variant="z")
        with pytest.raises(ConfigError, match="invalid metric name"):
            registry.register_metric("a,b", lambda s, r: 0)
    finally:
        registry.unregister_metric("overlap.b")
    assert "overlap.b" not in registry.resolve_metrics("all")


def test_plugins(tmp_path):
    plugin = tmp_path / "plug.py"
    plugin.write_text("from qarla_spark.metrics.registry import register_metric\n"
                      "register_metric('len_ratio.a', lambda s, r: min(len(s), len(r)) / "
                      "max(1, len(s), len(r)))\n")
    try:
        assert registry.load_plugins([str(plugin)]) == ("len_ratio.a",)
    finally:
        registry.unregister_metric("len_ratio.a")
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ConfigError, match="broken.py failed to load: RuntimeError: boom"):
        registry.load_plugins([str(broken)])
    with pytest.raises(ConfigError, match="not found"):
        registry.load_plugins([str(tmp_path / "none.py")])


def test_metric_set_label_sorts_and_joins():
    from qarla_spark.measures.metric_sets import MetricSet
    assert MetricSet(["TVM.512", "R-1.a", "R-1.a"]).label == "R-1.a,TVM.512"
