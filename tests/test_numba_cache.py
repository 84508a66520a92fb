"""The compiled kernels' cache is named by content, not by path: the zip a
cluster's executors import (a new folder per application) loads what the
installed package compiled (qarla_spark.compiled)."""

import os
import subprocess
import sys

import pytest

numba = pytest.importorskip("numba")

from qarla_spark import compiled as numba_cache  # noqa: E402


def test_the_folder_is_named_by_module_and_content(monkeypatch, tmp_path):
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path))
    a = numba_cache.cache_folder("qarla_spark.metrics.x", b"def f(): pass\n")
    assert a == numba_cache.cache_folder("qarla_spark.metrics.x", b"def f(): pass\n")
    assert a != numba_cache.cache_folder("qarla_spark.metrics.x", b"def f(): return 1\n")
    assert a != numba_cache.cache_folder("qarla_spark.metrics.y", b"def f(): pass\n")
    assert os.path.dirname(a) == str(tmp_path)


def test_only_qarla_functions_get_the_locator(monkeypatch, tmp_path):
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path))

    def elsewhere():
        return 1

    assert numba_cache.KernelCacheLocator.from_function(elsewhere, __file__) is None
    from qarla_spark.metrics import rouge_lcs_numba
    kernel = rouge_lcs_numba._topic_kernel.py_func
    found = numba_cache.KernelCacheLocator.from_function(kernel, "anywhere.py")
    assert found.get_cache_path().startswith(str(tmp_path))
    assert found.get_source_stamp() == __import__("hashlib").sha256(
        numba_cache.module_source("qarla_spark.metrics.rouge_lcs_numba")).hexdigest()


def test_the_setting_is_restored_after_the_decorators():
    config = numba.core.config
    if not hasattr(config, "CACHE_LOCATOR_CLASSES"):
        pytest.skip("this numba has no CACHE_LOCATOR_CLASSES")
    before = config.CACHE_LOCATOR_CLASSES
    with numba_cache.kernel_cache():
        assert config.CACHE_LOCATOR_CLASSES.startswith(
            "qarla_spark.compiled.KernelCacheLocator,")
    assert config.CACHE_LOCATOR_CLASSES == before


_CALL = """
import sys
{path}
from qarla_spark.metrics import rouge_lcs
from qarla_spark.metrics.battery import topic_similarities
assert rouge_lcs.BACKEND == "numba"
print(rouge_lcs.__file__)
topic_similarities(["the cat sat on the mat", "a cat sat on a mat", "the dog sat"],
                   ("R-L.a",), roles=["model", "model", "peer"])
"""


@pytest.mark.slow   # two fresh Python processes compiling
def test_a_zip_loads_what_the_package_compiled(tmp_path):
    """Fails with numba's own locators: the zip's folder is named after its
    path, so the second process compiles again and loads nothing."""
    if not hasattr(numba.core.config, "CACHE_LOCATOR_CLASSES"):
        pytest.skip("this numba has no CACHE_LOCATOR_CLASSES")
    from qarla_spark.spark.packaging import build_zip
    zip_path = build_zip(str(tmp_path / "dist"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_DEBUG_CACHE="1")

    def run(path_line):
        done = subprocess.run([sys.executable, "-c", _CALL.format(path=path_line)], env=env,
                              capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    first = run("")
    assert ".zip" not in first.splitlines()[0]
    assert "data saved to" in first
    second = run(f"sys.path.insert(0, {str(zip_path)!r})")
    assert ".zip" in second.splitlines()[0]
    assert "data loaded from" in second and str(tmp_path / "cache") in second
    assert "data saved to" not in second
