"""Paths and URIs, and the files the driver reads itself: run files
(``--config``), metric plugins (``--metric-plugin``) and ``run.json``
(part of the floor, :mod:`qarla_spark.names`: imports nothing of the
project but the floor).

A path is *local* when it is a plain path (a Windows drive letter too) or a
``file:`` URI: a file of the driver's local file system (in YARN or
Kubernetes cluster mode the driver runs on the cluster: ship such files with
``spark-submit --files``, which puts them in its working directory, or give
a URI). Any other URI (``hdfs://``, ``s3a://``, ``gs://``, ...) is read
through Hadoop's FileSystem API with the session's Hadoop configuration, as
Spark reads inputs: reading it needs a SparkSession (:func:`is_local` tells
the callers when to start one first).
"""

from __future__ import annotations

from typing import Optional
from urllib.parse import urlparse

from qarla_spark.errors import ConfigError


def scheme(path: str) -> str:
    """The URI scheme of ``path`` (``""`` for a plain path; a Windows drive
    letter is a plain path too)."""
    found = urlparse(str(path)).scheme
    return "" if len(found) <= 1 else found.lower()


def is_local(path: str) -> bool:
    """Whether ``path`` is a plain path or a ``file:`` URI (read with
    ``open``), not a URI of another file system (read through Hadoop)."""
    return scheme(path) in ("", "file")


def local_path(path: str) -> Optional[str]:
    """The local file system path of a plain path or a ``file:`` URI
    (``file:///x``, ``file:/x``, ``file://localhost/x`` -> ``/x``); ``None``
    for other file systems."""
    path = str(path)
    found = scheme(path)
    if found == "":
        return path
    if found != "file":
        return None
    parsed = urlparse(path)
    return parsed.path if parsed.netloc in ("", "localhost") else None


def _session(path: str, spark):
    if spark is not None:
        return spark
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    # the session may have been made on another thread (where it is
    # "active"): any running SparkContext will do
    active = SparkSession.getActiveSession()
    if active is None and SparkContext._active_spark_context is not None:
        active = SparkSession.builder.getOrCreate()
    if active is None:
        raise ConfigError(f"{path} is not on the local file system: reading it needs Spark, "
                          "which has not started (give a local path or file: URI)")
    return active


def read_bytes(path: str, spark=None) -> bytes:
    """The content of the file ``path``: :func:`is_local` ones with
    ``open``, others through Hadoop's FileSystem API (``spark``: the session
    whose Hadoop configuration to use; default: the active one).
    :class:`FileNotFoundError` when there is no such file."""
    if is_local(path):
        with open(local_path(path) or path, "rb") as handle:
            return handle.read()
    return read_hadoop_bytes(path, _session(path, spark))


def read_hadoop_bytes(path: str, spark) -> bytes:
    """The content of the file ``path`` read through Hadoop's FileSystem
    API (a plain path on the session's default file system), or
    :class:`FileNotFoundError`."""
    session = spark
    jvm = session.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(str(path))
    fs = hpath.getFileSystem(session.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(hpath) or fs.getFileStatus(hpath).isDirectory():
        raise FileNotFoundError(path)
    stream = fs.open(hpath)
    try:
        return bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()


def read_text(path: str, spark=None) -> str:
    """:func:`read_bytes` decoded as UTF-8."""
    return read_bytes(path, spark).decode("utf-8")
