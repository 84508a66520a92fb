"""The package shipped to executors as one zip (qarla_spark.spark.packaging,
`qarla package`; issue 14): reproducible, complete, importable by a Python
that does not have qarla_spark installed; end to end, spark-submit with
executors whose Python lacks qarla_spark runs with the zip (equal tables)
and says in one sentence what to do without it."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from devtools.cluster_check import bare_python  # a Python without qarla_spark
from helpers import make_testbed, write_jsonl
from qarla_spark.spark.packaging import build_zip, package_files, zip_bytes

ROOT = Path(__file__).resolve().parents[1]


def test_the_zip_is_reproducible_and_holds_the_whole_package(tmp_path):
    assert zip_bytes() == zip_bytes()
    path = build_zip(str(tmp_path))
    assert path.name.startswith("qarla_spark-") and build_zip(str(tmp_path)) == path
    names = set(zipfile.ZipFile(path).namelist())
    assert names == set(package_files())
    for needed in ("qarla_spark/__init__.py", "qarla_spark/conf/local.conf",
                   "qarla_spark/conf/log4j2.properties", "qarla_spark/io/checks.py",
                   "qarla_spark/data/summeval/summaries.jsonl.gz"):
        assert needed in names, needed
    source = {p.relative_to(ROOT).as_posix() for p in (ROOT / "qarla_spark").rglob("*.py")
              if "__pycache__" not in p.parts}
    assert source <= names


def test_a_python_without_qarla_spark_imports_it_from_the_zip(tmp_path):
    python = bare_python(tmp_path)
    path = build_zip(str(tmp_path))
    check = ("import importlib.resources as r, sys\n"
             "try:\n    import qarla_spark\nexcept ModuleNotFoundError:\n    pass\n"
             "else:\n    sys.exit('qarla_spark is installed in the bare Python')\n"
             f"sys.path.insert(0, {str(path)!r})\n"
             "from qarla_spark.metrics import battery\n"
             "from qarla_spark.io.checks import check_records\n"
             "assert (r.files('qarla_spark.conf') / 'local.conf').is_file()\n"
             "print(battery.__file__)\n")
    proc = subprocess.run([python, "-c", check], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(path))


@pytest.mark.slow
def test_spark_submit_ships_the_zip_to_executors_without_qarla_spark(tmp_path):
    """spark-submit --py-files ZIP with executors' Python lacking qarla_spark
    writes the same tables as the same job run by this Python; without the
    zip it fails with one sentence naming `qarla package`."""
    from devtools.compare import compare_runs

    python = bare_python(tmp_path)
    path = build_zip(str(tmp_path / "dist"))
    write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=3, n_models=4, n_peers=3))
    submit = str(Path(sys.executable).parent / "spark-submit")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_DRIVER_PYTHON=sys.executable)

    def job(out, python_for_executors, *extra):
        (tmp_path / f"{out}.toml").write_text(
            f'inputs = ["{tmp_path / "s.jsonl"}"]\nout = "{tmp_path / out}"\n'
            'bootstrap = 50\nmetrics = "R-1.a,R-2.a,R-L.a,TVM.8"\n')
        return subprocess.run(
            [submit, "--master", "local[2]", *extra, str(ROOT / "jobs" / "qarla_run.py"),
             "--config", str(tmp_path / f"{out}.toml")],
            capture_output=True, text=True, cwd=tmp_path, timeout=900,
            env=dict(env, PYSPARK_PYTHON=python_for_executors))

    shipped = job("shipped", python, "--py-files", str(path))
    assert shipped.returncode == 0, shipped.stdout[-3000:]
    installed = job("installed", sys.executable)
    assert installed.returncode == 0, installed.stdout[-3000:]
    differing = {t: d for t, d in compare_runs(str(tmp_path / "installed"),
                                                str(tmp_path / "shipped")).items() if d}
    assert not differing
    missing = job("missing", python)
    assert missing.returncode == 70
    said = [line for line in missing.stdout.splitlines() if line.startswith("qarla: ")]
    assert said == ["qarla: Spark's executors cannot import qarla_spark (their Python does "
                    "not have qarla_spark installed): ship the package with the job: `qarla "
                    "package` writes the zip for spark-submit --py-files (README, \"Running on "
                    "a cluster\")."]
    assert "Traceback" not in missing.stdout + missing.stderr


# --- the packed environment (qarla package --env) ------------------------------

def test_the_environment_holds_the_run_time_dependencies_but_not_pyspark():
    from qarla_spark.spark.packaging import runtime_distributions
    names = {d.metadata["Name"].lower().replace("_", "-") for d in runtime_distributions()}
    assert {"numpy", "pandas", "pyarrow", "scipy", "numba", "llvmlite", "textblob", "nltk",
            "matplotlib"} <= names
    assert not names & {"pyspark", "py4j", "qarla-spark"}
    # extras are not followed: nltk's "machine-learning" extra would bring scikit-learn
    assert not names & {"scikit-learn", "pytest", "jupyterlab", "playwright", "venv-pack"}


def test_a_missing_dependency_is_one_sentence(monkeypatch):
    from importlib import metadata

    from qarla_spark.errors import ConfigError
    from qarla_spark.spark.packaging import runtime_distributions
    real = metadata.distribution

    def distribution(name):
        if name == "tqdm":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", distribution)
    with pytest.raises(ConfigError, match=r"cannot pack the environment: nltk needs tqdm, which "
                                          r"is not installed in this Python \(.*\); install it "
                                          "first"):
        runtime_distributions()


def test_qarla_spark_goes_into_the_environment_as_files_with_its_metadata(tmp_path):
    """Never an editable install's pointer: the files of the zip, and a
    dist-info whose RECORD lists them with their hashes."""
    import base64
    import hashlib

    from qarla_spark.spark.packaging import _install_package
    _install_package(tmp_path)
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    info = "qarla_spark-0.1.0.dist-info"
    assert written == set(package_files()) | {f"{info}/{n}" for n in
                                               ("METADATA", "INSTALLER", "RECORD")}
    assert not [n for n in written if n.endswith(".pth") or "__editable__" in n]
    assert "Name: qarla_spark" in (tmp_path / info / "METADATA").read_text()
    for line in (tmp_path / info / "RECORD").read_text().splitlines():
        name, digest, size = line.split(",")
        if digest:
            data = (tmp_path / name).read_bytes()
            assert digest == "sha256=" + base64.urlsafe_b64encode(
                hashlib.sha256(data).digest()).rstrip(b"=").decode() and int(size) == len(data)


def test_package_options_are_checked(tmp_path, capsys):
    from qarla_spark.cli import main
    assert main(["package", "--out", str(tmp_path), "--python-prefix", "/usr"]) == 2
    assert capsys.readouterr().err == "qarla: --python-prefix goes with --env\n"
    assert main(["package", "--out", str(tmp_path), "--env", "--python-prefix", "usr"]) == 2
    assert capsys.readouterr().err == ("qarla: --python-prefix must be an absolute path, "
                                       "found 'usr'\n")


#: a kernel of each compiled or data-carrying dependency: ROUGE-L (numba),
#: TVM (scipy), AVLS, GRAMSIM (TextBlob's tagger)
PROBE = """
import json, sys
import qarla_spark
from qarla_spark.metrics import battery, rouge_lcs
def probe(_=None):
    import importlib.metadata, sys
    import qarla_spark
    from qarla_spark.metrics import battery, rouge_lcs
    result = battery.topic_similarities(
        ["the cat sat on the mat .", "a cat sat on a mat .", "the dog ran ."],
        ["R-L.a", "TVM.8", "AVLS", "GRAMSIM"], roles=["model", "model", "peer"])
    try:
        import pyspark
        spark_from = pyspark.__file__
    except ModuleNotFoundError:
        spark_from = None
    return {"qarla_spark": qarla_spark.__file__, "prefix": sys.prefix, "path": sys.path,
            "version": importlib.metadata.version("qarla_spark"), "backend": rouge_lcs.BACKEND,
            "values": result.values.tolist(), "pyspark": spark_from}
"""


def expected_values():
    from qarla_spark.metrics import battery
    return battery.topic_similarities(
        ["the cat sat on the mat .", "a cat sat on a mat .", "the dog ran ."],
        ["R-L.a", "TVM.8", "AVLS", "GRAMSIM"], roles=["model", "model", "peer"]).values.tolist()


@pytest.fixture(scope="module")
def packed_env(tmp_path_factory):
    """``qarla package --env``'s archive (built once for this module), and
    what the command said."""
    from qarla_spark.cli import main
    folder = tmp_path_factory.mktemp("env")
    import contextlib
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["package", "--env", "--out", str(folder)]) == 0, err.getvalue()
    zip_path, env_path = out.getvalue().split()
    return Path(env_path), err.getvalue()


def clean_env(**extra):
    """This process's environment without what would put /work's code or
    another Python on a child's path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    return dict(env, **extra)


@pytest.mark.slow
def test_the_packed_environment_runs_qarla_spark_from_inside_the_archive(packed_env, tmp_path):
    """Unpacked anywhere, the archive's python imports qarla_spark and its
    dependencies from the archive (not from this checkout, not pyspark) and
    runs the kernels (numba's ROUGE-L included) with this Python's
    results."""
    import json
    import tarfile
    archive, said = packed_env
    assert archive.name == (f"qarla_spark-0.1.0-env-py{sys.version_info.major}"
                            f"{sys.version_info.minor}-"
                            f"{sysconfig.get_platform().replace('-', '_')}.tar.gz")
    listed = said.splitlines()[0]
    assert listed.startswith("qarla: environment: qarla_spark 0.1.0 and ")
    assert " numba " in listed and " textblob " in listed and "pyspark" not in listed
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert not [n for n in names if n.endswith(".pth") or "__editable__" in n]
        tar.extractall(tmp_path / "environment")
    python = tmp_path / "environment" / "bin" / "python"
    proc = subprocess.run([str(python), "-c", PROBE + "print(json.dumps(probe()))"],
                          capture_output=True, text=True, cwd=tmp_path, env=clean_env(),
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    env = str(tmp_path / "environment")
    assert found["qarla_spark"].startswith(env + "/lib/")
    assert found["prefix"] == env
    assert not [p for p in found["path"] if str(ROOT) in p]
    assert found["pyspark"] is None and found["version"] == "0.1.0"
    assert found["backend"] == "numba" and found["values"] == expected_values()


@pytest.mark.slow
def test_spark_submit_with_the_packed_environment_on_a_cluster(packed_env, tmp_path):
    """A standalone cluster (devtools/cluster_check.py's) whose executors get
    their Python only from --archives ENV#environment and
    spark.pyspark.python=./environment/bin/python: they import qarla_spark
    from the unpacked archive and run the kernels; the job itself runs the
    same way. In client mode the driver needs spark.pyspark.driver.python
    (a local Python with qarla_spark): without it Spark tries to start the
    driver with ./environment/bin/python, which does not exist where
    spark-submit runs."""
    import json
    from devtools.cluster_check import Cluster
    archive, _ = packed_env
    (tmp_path / "probe.py").write_text(
        PROBE + "from pyspark.sql import SparkSession\n"
        "spark = SparkSession.builder.getOrCreate()\n"
        "print('PROBE ' + json.dumps(spark.sparkContext.parallelize(range(2), 2)"
        ".map(probe).collect()))\nspark.stop()\n")
    write_jsonl(tmp_path / "s.jsonl", make_testbed(n_topics=2, n_models=4, n_peers=3))
    (tmp_path / "run.toml").write_text(
        f'inputs = ["{tmp_path / "s.jsonl"}"]\nout = "{tmp_path / "run"}"\n'
        'stages = ["testbed", "similarities"]\nmetrics = "R-1.a,R-L.a,TVM.8,GRAMSIM"\n')
    submit = str(Path(sys.executable).parent / "spark-submit")
    import pyspark
    env = clean_env(SPARK_LOCAL_IP="127.0.0.1", SPARK_HOME=str(Path(pyspark.__file__).parent))
    cluster = Cluster(tmp_path / "cluster", workers=1)
    cluster.env = clean_env(**{k: v for k, v in cluster.env.items()
                               if k.startswith("SPARK_")})
    archives = ["--archives", f"{archive}#environment",
                "--conf", "spark.pyspark.python=./environment/bin/python"]
    driver = ["--conf", f"spark.pyspark.driver.python={sys.executable}"]

    def run(*args):
        return subprocess.run([submit, "--master", cluster.url, *args], capture_output=True,
                              text=True, cwd=tmp_path, env=env, timeout=900)

    try:
        cluster.start()
        probed = run(*archives, *driver, str(tmp_path / "probe.py"))
        assert probed.returncode == 0, probed.stdout[-3000:] + probed.stderr[-3000:]
        (line,) = [x for x in probed.stdout.splitlines() if x.startswith("PROBE ")]
        work = str((tmp_path / "cluster" / "work").resolve())
        for found in json.loads(line[len("PROBE "):]):
            assert found["qarla_spark"].startswith(work)
            assert "/environment/lib/" in found["qarla_spark"]
            assert found["prefix"].startswith(work) and found["prefix"].endswith("/environment")
            assert found["backend"] == "numba" and found["values"] == expected_values()
            assert found["pyspark"] is not None and "site-packages/qarla_spark" in \
                found["qarla_spark"]

        no_driver = run(*archives, str(tmp_path / "probe.py"))
        assert no_driver.returncode != 0
        assert 'Cannot run program "./environment/bin/python"' in \
            no_driver.stdout + no_driver.stderr

        job = run(*archives, *driver, "--properties-file", str(ROOT / "conf" / "cluster.conf"),
                  str(ROOT / "jobs" / "qarla_run.py"), "--config", str(tmp_path / "run.toml"))
        assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
        info = json.loads((tmp_path / "run" / "run.json").read_text())
        assert info["status"] == "complete" and info["master"] == cluster.url
    finally:
        assert cluster.stop() == []
