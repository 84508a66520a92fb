"""Spark settings: profiles, precedence, the Java check (pure, no Spark)."""

from __future__ import annotations

import pytest

from qarla_spark.errors import ConfigError, JavaNotFoundError
from qarla_spark.spark import java
from qarla_spark.options import parse_conf_pairs
from qarla_spark.spark.profiles import read_profile, resolve_settings


def test_local_profile_settings():
    local = read_profile("local")
    assert local["spark.master"] == "local[*]"
    assert local["spark.sql.execution.arrow.pyspark.enabled"] == "true"
    assert local["spark.driver.bindAddress"] == "127.0.0.1"
    # the shuffle partitions follow the cores (set when the session starts,
    # unless given); every shuffle is explicit, so adaptive execution is off;
    # Python workers on a Unix domain socket (issue 26)
    assert "spark.sql.shuffle.partitions" not in local
    assert local["spark.sql.adaptive.enabled"] == "false"
    assert local["spark.python.unix.domain.socket.enabled"] == "true"
    # small memory pages: broadcast hash tables keep a whole page on the
    # driver (docs/DECISIONS.md, "Memory pages of 2 MB")
    assert local["spark.buffer.pageSize"] == read_profile("cluster")["spark.buffer.pageSize"] == "2m"


def test_cluster_profile_leaves_the_master_to_spark_submit():
    assert "spark.master" not in read_profile("cluster")


def test_precedence_profile_then_conf_then_master_then_external():
    settings = resolve_settings("local", master=None,
                                conf={"spark.sql.shuffle.partitions": "3"}, external={})
    assert settings["spark.master"] == "local[*]"
    assert settings["spark.sql.shuffle.partitions"] == "3"
    settings = resolve_settings("local", master="local[1]",
                                conf={"spark.master": "local[5]"}, external={})
    assert settings["spark.master"] == "local[1]"
    # spark-submit's settings are never overridden (they are left out)
    settings = resolve_settings("local", master=None, conf={"spark.app.name": "x"},
                                external={"spark.master": "yarn", "spark.app.name": "submitted"})
    assert "spark.master" not in settings and "spark.app.name" not in settings


@pytest.mark.parametrize("how", ["spark-submit", "--master", "--conf"])
def test_no_local_setting_reaches_a_cluster_master(how):
    """Issue 14: with a non-local master, the default (local) profile's
    loopback address, disabled UI and driver memory are not applied; the
    cluster profile still is."""
    master = "spark://10.0.0.1:7077"
    kwargs = {"spark-submit": dict(master=None, conf={}, external={"spark.master": master}),
              "--master": dict(master=master, conf={}, external={}),
              "--conf": dict(master=None, conf={"spark.master": master}, external={})}[how]
    settings = resolve_settings("local", **kwargs)
    local = read_profile("local")
    # (the driver's Java options are always set: the log4j file is added)
    leaked = {k for k, v in local.items()
              if k != "spark.master" and k in settings and v in settings[k]}
    assert not leaked and settings.get("spark.master", master) == master
    cluster = resolve_settings("cluster", **kwargs)
    assert cluster["spark.buffer.pageSize"] == read_profile("cluster")["spark.buffer.pageSize"]
    # a local master keeps the local profile
    local_run = resolve_settings("local", master="local[2]", conf={}, external={})
    assert local_run["spark.driver.bindAddress"] == "127.0.0.1"
    assert local_run["spark.driver.defaultJavaOptions"] == local[
        "spark.driver.defaultJavaOptions"]


@pytest.mark.parametrize("profile", ["local", "cluster"])
def test_cached_plans_may_be_coalesced_unless_the_user_says_otherwise(profile):
    """Issue 14: without this default a cluster run's cached plans kept
    Spark's 200 shuffle partitions (measured 2.7x local[2]'s time, 1.7x
    with it); a setting of the user's still wins."""
    key = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"
    assert resolve_settings(profile, "spark://10.0.0.1:7077", {}, {})[key] == "true"
    assert resolve_settings(profile, None, {}, {})[key] == "true"
    assert resolve_settings(profile, None, {key: "false"}, {})[key] == "false"
    assert key not in resolve_settings(profile, None, {}, {key: "false"})


@pytest.mark.parametrize("profile", ["local", "cluster"])
def test_shipped_profiles_set_each_key_once_in_one_form(profile):
    """The shipped profiles are read by read_profile and by spark-submit's
    --properties-file, both of which let a repeated key replace the first
    silently: each line sets one spark.* key, as 'key value', once (a
    comment's text that lost its '#' would show up here)."""
    from qarla_spark.spark.profiles import profile_path
    seen = {}
    for number, raw in enumerate(profile_path(profile).read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        assert key.startswith("spark.") and "=" not in key and value.strip(), (number, raw)
        assert key not in seen, f"{key} on lines {seen.get(key)} and {number}"
        seen[key] = number


def test_quiet_logging_is_configured_once():
    settings = resolve_settings("local", None, {"spark.driver.extraJavaOptions": "-Dx=1"}, {})
    opts = settings["spark.driver.extraJavaOptions"]
    assert opts.startswith("-Dx=1 ") and opts.count("log4j2.configurationFile") == 1


def test_profile_file_and_its_errors(tmp_path):
    good = tmp_path / "p.conf"
    good.write_text("# comment\n\nspark.master  local[3]\nspark.a.b=c\n")
    assert read_profile(str(good)) == {"spark.master": "local[3]", "spark.a.b": "c"}
    bad = tmp_path / "bad.conf"
    bad.write_text("spark.master\n")
    with pytest.raises(ConfigError, match="line 1"):
        read_profile(str(bad))
    with pytest.raises(ConfigError, match="neither one of local, cluster"):
        read_profile(str(tmp_path / "missing.conf"))


def test_conf_pairs():
    assert parse_conf_pairs(["a=1", "b=x=y"]) == {"a": "1", "b": "x=y"}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_conf_pairs(["novalue"])


@pytest.mark.parametrize("output,major", [
    ('openjdk version "17.0.15" 2025-04-15', 17),
    ('java version "1.8.0_392"', 8),
    ('openjdk version "21" 2023-09-19', 21),
    ("no version here", None),
])
def test_parse_java_version(output, major):
    assert java.parse_java_version(output) == major


def test_missing_java_is_one_sentence_saying_how_to_install(monkeypatch):
    monkeypatch.setattr(java, "find_java", lambda: None)
    with pytest.raises(JavaNotFoundError) as info:
        java.check_java()
    msg = str(info.value)
    assert "Java 17" in msg and "apt-get install openjdk-17" in msg and "\n" not in msg


def test_old_java_is_refused(monkeypatch):
    monkeypatch.setattr(java, "find_java", lambda: "/usr/bin/java")
    monkeypatch.setattr(java, "java_version", lambda _: (11, 'version "11.0.2"'))
    with pytest.raises(JavaNotFoundError, match="is Java 11"):
        java.check_java()


def test_a_small_testbed_gets_the_small_driver_options():
    """Issue 13: `qarla run` counts a small local input before Spark starts;
    up to the profile's bound the driver gets C1-only flags, above it the
    profile's default ones, and a --conf of the driver's default Java
    options wins over both."""
    from qarla_spark.spark.profiles import SMALL_JAVA_OPTIONS, SMALL_SUMMARIES
    local = read_profile("local")
    bound = int(local[SMALL_SUMMARIES])
    assert 2700 <= bound < 27000      # SummEval's size is small, 27,000 is not

    def options(summaries, conf=None):
        return resolve_settings("local", "local[2]", conf or {}, {},
                                summaries)["spark.driver.defaultJavaOptions"]

    assert "-XX:TieredStopAtLevel=1" in local[SMALL_JAVA_OPTIONS]
    assert options(2700) == options(bound) == local[SMALL_JAVA_OPTIONS]
    assert options(bound + 1) == options(None) == local["spark.driver.defaultJavaOptions"]
    mine = {"spark.driver.defaultJavaOptions": "-XX:+UseSerialGC"}
    assert options(2700, mine) == "-XX:+UseSerialGC"
    with pytest.raises(ConfigError, match="maxSummaries"):
        resolve_settings("local", None, {SMALL_SUMMARIES: "many"}, {}, 10)


def test_a_small_testbed_gets_the_small_executor_options_even_under_spark_submit():
    """Issue 14: the cluster profile declares C1-only flags for small
    testbeds' executors too. Executors start after the session, so under
    spark-submit (whose properties are the ``external`` settings, never
    overridden otherwise) they replace its executors' default Java options;
    the driver's, whose JVM runs already, are left alone. Above the bound,
    with ``maxSummaries 0`` or with qarla's own --conf of the key, nothing
    changes."""
    from qarla_spark.spark.profiles import SMALL_EXECUTOR_OPTIONS, SMALL_SUMMARIES
    cluster = read_profile("cluster")
    key = "spark.executor.defaultJavaOptions"
    assert "-XX:TieredStopAtLevel=1" in cluster[SMALL_EXECUTOR_OPTIONS]
    assert "-XX:TieredStopAtLevel=1" not in cluster[key]
    submitted = dict(cluster, **{"spark.master": "spark://10.0.0.1:7077"})
    bound = int(cluster[SMALL_SUMMARIES])

    def settings(summaries, external=submitted, conf=None):
        return resolve_settings("local", None, conf or {}, external, summaries)

    assert settings(2700)[key] == settings(bound)[key] == cluster[SMALL_EXECUTOR_OPTIONS]
    assert "spark.driver.defaultJavaOptions" not in settings(2700)
    for unchanged in (settings(bound + 1), settings(None),
                      settings(2700, dict(submitted, **{SMALL_SUMMARIES: "0"})),
                      settings(2700, conf={key: "-XX:+UseSerialGC"})):
        assert unchanged.get(key, "-XX:+UseSerialGC") == "-XX:+UseSerialGC"
    # spark-submit's own bound wins over the run file's profile
    assert key not in resolve_settings(
        "cluster", None, {}, dict(submitted, **{SMALL_SUMMARIES: "0"}), 2700)
    # `qarla run --profile cluster --master spark://...`: both JVMs' options
    started_here = resolve_settings("cluster", "spark://10.0.0.1:7077", {}, {}, 2700)
    assert started_here[key] == cluster[SMALL_EXECUTOR_OPTIONS]
    assert started_here["spark.driver.defaultJavaOptions"] == cluster[
        "spark.qarla.smallTestbed.driverJavaOptions"]
