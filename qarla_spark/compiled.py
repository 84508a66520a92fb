"""Where numba keeps qarla_spark's compiled kernels: one folder per kernel
module *and content*, in the user's numba cache, whatever path the module
was imported from.

numba's own locators name a cache folder after the module's directory. The
zip spark-submit ships to a cluster's executors (``--py-files``) is unpacked
into a new folder for every application, so each executor compiled the
kernels again on every run (about 3 s of a Python worker's first task, more
than the whole similarity stage of a small testbed). Named after the
source's SHA-256 instead, a folder serves the installed package, a source
tree and every application's copy of the zip on that machine: the first run
on a machine compiles, the later ones load. numba still checks, per entry,
its own version, the signature and the CPU it was compiled for.

:func:`kernel_cache` is used around the decorators of a kernel module; with
a numba that has no ``CACHE_LOCATOR_CLASSES`` setting, or a cache folder
that cannot be written, numba's own locators apply, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import sys
import tempfile
from typing import Iterable, Iterator, Optional

#: the prefix of the cache folders (``<prefix><module>-<sha256[:16]>``)
PREFIX = "qarla_spark-"


def cache_root() -> str:
    """numba's cache folder: ``NUMBA_CACHE_DIR`` if set, else the user's."""
    from numba.core import config
    if config.CACHE_DIR:
        return config.CACHE_DIR
    from numba.misc.appdirs import AppDirs
    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def module_source(module_name: str) -> Optional[bytes]:
    """The source of a module as its loader reads it (a file, or a member of
    a zip), or None."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    loader = getattr(module, "__loader__", None)
    try:
        text = loader.get_source(module_name) if loader is not None else None
    except (ImportError, OSError):
        return None
    return None if text is None else text.encode("utf-8")


def cache_folder(module_name: str, source: bytes) -> str:
    """The folder of a module's compiled kernels: named by the module and
    the SHA-256 of its source."""
    digest = hashlib.sha256(source).hexdigest()[:16]
    return os.path.join(cache_root(), f"{PREFIX}{module_name}-{digest}")


class KernelCacheLocator:
    """A numba cache locator (numba's ``_CacheLocator`` protocol) for the
    functions of qarla_spark's modules: the folder of :func:`cache_folder`,
    the source's hash as its stamp. Other functions are left to numba's
    locators (``from_function`` returns None)."""

    def __init__(self, py_func, source: bytes):
        self._lineno = py_func.__code__.co_firstlineno
        self._path = cache_folder(py_func.__module__, source)
        self._stamp = hashlib.sha256(source).hexdigest()

    def ensure_cache_path(self) -> None:
        os.makedirs(self._path, exist_ok=True)
        tempfile.TemporaryFile(dir=self._path).close()   # writable?

    def get_cache_path(self) -> str:
        return self._path

    def get_source_stamp(self) -> str:
        return self._stamp

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        module = getattr(py_func, "__module__", "") or ""
        if not module.startswith("qarla_spark."):
            return None
        source = module_source(module)
        if source is None:
            return None
        self = cls(py_func, source)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        return self


def _class_path(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@contextlib.contextmanager
def kernel_cache() -> Iterator[None]:
    """While the kernels of a module are decorated with ``cache=True``: our
    locator first, then numba's (the setting numba reads then is restored
    afterwards, so functions decorated elsewhere are not affected)."""
    from numba.core import caching, config

    defaults = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if not hasattr(config, "CACHE_LOCATOR_CLASSES") or defaults is None:
        yield
        return
    before = config.CACHE_LOCATOR_CLASSES
    rest = before or ",".join(_class_path(c) for c in defaults)
    config.CACHE_LOCATOR_CLASSES = f"{_class_path(KernelCacheLocator)},{rest}"
    try:
        yield
    finally:
        config.CACHE_LOCATOR_CLASSES = before


def compiled(function):
    """``numba.njit(cache=True, nogil=True)`` with the cache of
    :class:`KernelCacheLocator`: the decorator of qarla_spark's kernels."""
    import numba
    with kernel_cache():
        return numba.njit(cache=True, nogil=True)(function)


def compiled_ieee(function):
    """:func:`compiled` with numpy's floating-point errors: a division by
    zero gives ±inf or NaN, as numpy's, instead of raising (the kernels
    that reproduce numpy's arithmetic)."""
    import numba
    with kernel_cache():
        return numba.njit(cache=True, nogil=True, error_model="numpy")(function)


def compiled_inline(function):
    """:func:`compiled_ieee` for a small helper of other kernels, inlined
    into them by numba (a call per row of 16 values costs more than the
    row's arithmetic)."""
    import numba
    with kernel_cache():
        return numba.njit(cache=True, nogil=True, error_model="numpy",
                          inline="always")(function)


#: the modules of qarla_spark's kernels, whose cached overloads a Python
#: worker loads when it starts (:func:`preload`)
KERNEL_MODULES = ("qarla_spark.metrics.rouge_lcs_numba", "qarla_spark.measures.streams",
                  "qarla_spark.measures.pair_counts", "qarla_spark.measures.compiled_rows",
                  "qarla_spark.measures.exact_division", "qarla_spark.measures.meta_kernels",
                  "qarla_spark.measures.selection")


def preload(module_names: Iterable[str] = KERNEL_MODULES) -> int:
    """Load from numba's cache every overload of these modules' kernels
    that the cache holds for their current source and this machine's CPU
    (the signatures earlier runs compiled): what the first task of each
    stage in a Python worker would otherwise load when it first calls the
    kernel (~25 ms an overload, and numba's own first set-up, ~0.4 s).
    Nothing is compiled: an index entry made for another CPU or source is
    left alone, and a kernel without one is compiled at its first call, as
    before. Returns how many overloads were loaded. numba's cache index is
    read through its (private) cache objects: with another numba, nothing
    is loaded — it never changes a result, only when the loading happens."""
    from numba.core.dispatcher import Dispatcher
    loaded = 0
    for name in module_names:
        module = importlib.import_module(name)
        for kernel in list(vars(module).values()):
            if not isinstance(kernel, Dispatcher):
                continue
            cache = getattr(kernel, "_cache", None)
            index_file = getattr(cache, "_cache_file", None)
            if index_file is None:
                continue
            codegen = kernel.targetctx.codegen()
            for key in index_file._load_index():
                sig = key[0]
                if cache._index_key(sig, codegen) != key or tuple(sig) in kernel.overloads:
                    continue
                kernel.compile(sig)
                loaded += 1
    return loaded
