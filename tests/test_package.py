"""The package shipped to executors as one zip (qarla_spark.packaging,
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

from helpers import make_testbed, write_jsonl
from qarla_spark.packaging import build_zip, package_files, zip_bytes

ROOT = Path(__file__).resolve().parents[1]


def bare_python(folder: Path) -> str:
    """A Python that has every dependency of this one but not qarla_spark:
    a venv whose one .pth line adds this interpreter's site-packages (the
    .pth files there — qarla_spark's editable finder — are not read)."""
    env = folder / "env"
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run([str(python), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(python)


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
    from qarla_spark.io.compare import compare_runs

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
