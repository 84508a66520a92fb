"""The package as one zip for Spark's executors (``--py-files``).

Executors import qarla_spark (the per-topic kernels run in their Python
workers). :func:`build_zip` writes the installed package — its code, the
bundled data and the Spark profiles (``qarla_spark.conf``) — as one zip that
Python imports from (``zipimport``): give it to ``spark-submit --py-files``
or let :func:`ship` add it to a session (``SparkContext.addPyFile``), which
``qarla run`` and ``jobs/qarla_run.py`` do on any non-local master.

The zip holds qarla_spark only: its dependencies (numpy, pandas, pyarrow,
scipy, numba, textblob) must be in the executors' Python, installed there or
shipped as a packed environment (README, "Running on a cluster").

The zip is reproducible: entries in sorted order with a fixed timestamp, so
the same code gives the same bytes (and the same file name, which carries
the version and a digest of the contents).
"""

from __future__ import annotations

import hashlib
import io
import os
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
