"""The package as one zip for Spark's executors (``--py-files``).

Executors import qarla_spark (the per-topic kernels run in their Python
workers). :func:`build_zip` writes the installed package — its code, the
bundled data and the Spark profiles (``qarla_spark.conf``) — as one zip that
Python imports from (``zipimport``): give it to ``spark-submit --py-files``
or let :func:`ship` add it to a session (``SparkContext.addPyFile``), which
``qarla run`` and ``jobs/qarla_run.py`` do on any non-local master.

The zip holds qarla_spark only: its dependencies (numpy, pandas, pyarrow,
scipy, numba, textblob) must be in the executors' Python, installed there or
shipped as a packed environment: :func:`build_env` (``qarla package
--env``) writes one, a venv holding qarla_spark (its files, not an editable
install's pointer to a checkout) and every run-time dependency but pyspark,
packed by venv-pack for ``spark-submit --archives`` (README, "Running on a
cluster").

The zip is reproducible: entries in sorted order with a fixed timestamp, so
the same code gives the same bytes (and the same file name, which carries
the version and a digest of the contents).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from importlib import resources
from pathlib import Path
from typing import Dict, Optional

from qarla_spark import __version__

#: a fixed timestamp for every entry (zip's earliest)
_EPOCH = (1980, 1, 1, 0, 0, 0)
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def _files(root: Path, prefix: str) -> Dict[str, Path]:
    """``{name in the zip: file}`` for the files under ``root``."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in files:
            if name.endswith(_SKIP_SUFFIXES) or name.startswith("."):
                continue
            path = Path(folder) / name
            found[f"{prefix}/{path.relative_to(root).as_posix()}"] = path
    return found


def package_files() -> Dict[str, Path]:
    """Every file of the installed package, by its name in the zip
    (``qarla_spark/...``; the profiles as ``qarla_spark/conf/...``, as they
    are installed)."""
    import qarla_spark
    files = _files(Path(qarla_spark.__file__).parent, "qarla_spark")
    conf = Path(str(resources.files("qarla_spark.conf")))
    if conf.resolve() != (Path(qarla_spark.__file__).parent / "conf").resolve():
        files.update(_files(conf, "qarla_spark/conf"))  # an editable install maps conf/
    return files


def zip_bytes() -> bytes:
    """The package as zip bytes (reproducible)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, path in sorted(package_files().items()):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def build_zip(out_dir: Optional[str] = None) -> Path:
    """Write ``qarla_spark-<version>-<digest>.zip`` into ``out_dir``
    (default: a folder of the system's temporary directory) and return its
    path; an existing file of that name is the same zip and is kept."""
    data = zip_bytes()
    digest = hashlib.sha256(data).hexdigest()[:12]
    folder = Path(out_dir) if out_dir else Path(tempfile.gettempdir()) / "qarla_spark-py-files"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"qarla_spark-{__version__}-{digest}.zip"
    if not path.exists():
        partial = path.with_name(path.name + f".partial-{os.getpid()}")
        partial.write_bytes(data)
        os.replace(partial, path)  # never a half-written zip under the final name
    return path


def shipped(spark) -> bool:
    """Whether the session already ships a qarla_spark zip (``--py-files``
    or an earlier :func:`ship`)."""
    files = spark.sparkContext.getConf().get("spark.submit.pyFiles", "") or ""
    added = getattr(spark.sparkContext, "_qarla_zip", None)
    return added is not None or any("qarla_spark" in Path(f).name for f in files.split(",") if f)


def ship(spark) -> Optional[Path]:
    """Add the package zip to the session's executors (unless shipped
    already); returns the zip's path, ``None`` when nothing was added."""
    if shipped(spark):
        return None
    path = build_zip()
    spark.sparkContext.addPyFile(str(path))
    spark.sparkContext._qarla_zip = path
    return path


# ---------------------------------------------------------------------------
# the packed environment (``qarla package --env``): a venv for --archives
# ---------------------------------------------------------------------------

#: distributions left out of the environment: Spark puts its own pyspark
#: (and py4j) on its Python processes' path, matched to the cluster's Spark
#: (and the pyspark wheel is mostly 400 MB of jars the executors already have)
LEFT_OUT = ("pyspark", "py4j")


def _canonical(name: str) -> str:
    from packaging.utils import canonicalize_name
    return str(canonicalize_name(name))


def runtime_distributions(root: str = "qarla_spark", left_out=LEFT_OUT):
    """The installed distributions ``root`` needs at run time (its
    requirements without extras, and theirs, with their markers evaluated
    for this Python), ``root`` and ``left_out`` excepted, sorted by name.
    A requirement that is not installed is a :class:`ConfigError`."""
    from importlib import metadata

    from packaging.requirements import Requirement

    from qarla_spark.errors import ConfigError
    skip = {_canonical(n) for n in left_out}
    found: Dict[str, metadata.Distribution] = {}
    todo = [(_canonical(root), (), root)]
    seen = set()
    while todo:
        name, extras, needed_by = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise ConfigError(f"cannot pack the environment: {needed_by} needs {name}, which is "
                              f"not installed in this Python ({sys.executable}); install it "
                              "first") from None
        if name != _canonical(root):
            found[name] = dist
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is not None and not any(
                    req.marker.evaluate({"extra": e}) for e in (extras or ("",))):
                continue
            wanted = _canonical(req.name)
            if wanted not in skip:
                todo.append((wanted, tuple(sorted(req.extras)), dist.metadata["Name"]))
    return [found[n] for n in sorted(found)]


def _copy_distribution(dist, site: Path) -> int:
    """Copy the files ``dist`` installed under its site-packages into
    ``site`` (not its scripts, nor compiled ``.pyc``); returns the bytes."""
    from qarla_spark.errors import ConfigError
    if dist.files is None:
        raise ConfigError(f"cannot pack the environment: {dist.metadata['Name']} has no list "
                          "of its files (RECORD); reinstall it with pip")
    size = 0
    for entry in dist.files:
        parts = Path(str(entry)).parts
        if not parts or parts[0] == ".." or "__pycache__" in parts:
            continue
        source = Path(str(dist.locate_file(entry)))
        if not source.is_file():
            continue
        target = site.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        size += target.stat().st_size
    return size


def _install_package(site: Path) -> None:
    """qarla_spark itself into ``site``: the files of :func:`package_files`
    (never an editable install's pointer to a checkout) and a
    ``dist-info`` (its metadata and a RECORD)."""
    from importlib import metadata
    records = []
    for name, path in sorted(package_files().items()):
        data = path.read_bytes()
        target = site / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        records.append(f"{name},sha256={digest},{len(data)}")
    info = f"qarla_spark-{__version__}.dist-info"
    (site / info).mkdir()
    try:
        dist = metadata.distribution("qarla_spark")
        meta = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    except metadata.PackageNotFoundError:
        meta = None
    (site / info / "METADATA").write_text(
        meta or f"Metadata-Version: 2.1\nName: qarla_spark\nVersion: {__version__}\n",
        encoding="utf-8")
    (site / info / "INSTALLER").write_text("qarla package --env\n")
    records += [f"{info}/METADATA,,", f"{info}/INSTALLER,,", f"{info}/RECORD,,"]
    (site / info / "RECORD").write_text("\n".join(records) + "\n")


def env_name() -> str:
    """``qarla_spark-<version>-env-<python>-<platform>.tar.gz``: the
    archive only runs on this Python version and platform."""
    python = f"py{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"qarla_spark-{__version__}-env-{python}-{platform}.tar.gz"


def build_env(out_dir: Optional[str] = None, python_prefix: Optional[str] = None,
              say=None) -> Path:
    """Write the packed environment ``out_dir/<env_name()>`` for
    ``spark-submit --archives ENV#environment --conf
    spark.pyspark.python=./environment/bin/python``, and return its path.

    A fresh venv of this Python (no pip, no network) gets copies of the
    installed files of every run-time dependency
    (:func:`runtime_distributions`) and qarla_spark itself
    (:func:`_install_package`); venv-pack packs it (its ``bin/python`` is a
    link to this Python's interpreter, or under ``python_prefix`` on the
    executors: a Python of the same version must be there). ``say(text)``
    hears of the steps. The archive appears under its name only once it is
    whole."""
    from qarla_spark.errors import ConfigError
    try:
        import venv_pack
    except ImportError:
        raise ConfigError("qarla package --env needs venv-pack: pip install "
                          "'qarla_spark[package]' (or pip install 'venv-pack>=0.2,<0.3')") from None
    if python_prefix is not None and not os.path.isabs(python_prefix):
        raise ConfigError(f"--python-prefix must be an absolute path, found {python_prefix!r}")
    say = say or (lambda text: None)
    folder = Path(out_dir) if out_dir else Path("dist")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / env_name()
    dists = runtime_distributions()
    with tempfile.TemporaryDirectory(prefix=".qarla-env-", dir=folder) as tmp:
        env = Path(tmp) / "environment"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
        site = Path(subprocess.run(
            [str(env / "bin" / "python"), "-c",
             "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True).stdout.strip())
        size = sum(_copy_distribution(d, site) for d in dists)
        _install_package(site)
        say(f"environment: qarla_spark {__version__} and {len(dists)} distributions "
            f"({size / 1e6:.0f} MB): " + ", ".join(
                f"{d.metadata['Name']} {d.version}" for d in dists))
        partial = Path(tmp) / target.name
        venv_pack.pack(prefix=str(env), output=str(partial), python_prefix=python_prefix,
                       compress_level=4)
        os.chmod(partial, 0o644)
        os.replace(partial, target)   # never a half-written archive under its name
    return target
