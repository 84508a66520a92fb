"""The JVM's process state, in one place: what :mod:`~qarla_spark.spark.
session` records as it starts the JVM and what :mod:`~qarla_spark.spark.
interrupts` reads to quiet and end it. Both import this module; neither
imports the other for it (issue 37: no import circle between modules).

Nothing here starts or stops anything: it is the state only, and
:func:`jvm_process`, the process it names.
"""

from __future__ import annotations

import subprocess
import threading
from typing import List, Optional, Tuple

#: the thread starting the JVM and its SparkContext (:func:`~qarla_spark.
#: spark.session._start_off_main`), and the event set once it is done
STARTER: Optional[Tuple[threading.Thread, threading.Event]] = None
#: set when the driver stopped waiting for that thread (an interrupt): the
#: starting thread ends the JVM once it exists
ABANDONED = threading.Event()
#: the copiers of the JVM's standard error and output (one ``muted``
#: event: :class:`~qarla_spark.spark.session._ErrorCopier`)
COPIERS: List = []
#: the JVM this process started (``None`` under spark-submit or before)
PROC: Optional[subprocess.Popen] = None


def jvm_process():
    """The ``Popen`` of the JVM this process started (``None`` under
    spark-submit or before Spark starts)."""
    from pyspark import SparkContext
    return getattr(SparkContext._gateway, "proc", None) or PROC
