"""Check that a Java runtime Spark can use is installed, before Spark tries.

Without this, a missing Java shows up as a long ``JAVA_GATEWAY_EXITED``
traceback; the user should instead read one sentence saying what to install.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Optional, Tuple

from qarla_spark.errors import JavaNotFoundError

#: Spark 4 needs Java 17 or newer.
MIN_JAVA = 17

INSTALL_HINT = (
    "install a Java {min} (or newer) runtime and run again: on Debian/Ubuntu "
    "`sudo apt-get install openjdk-17-jre-headless`, on macOS `brew install openjdk@17`, "
    "elsewhere from https://adoptium.net; if it is installed but not found, set JAVA_HOME"
)


def find_java() -> Optional[str]:
    """The java executable Spark will use: $JAVA_HOME/bin/java, else PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("java")


def parse_java_version(output: str) -> Optional[int]:
    """Major version from ``java -version`` output: ``"1.8.0_392"`` -> 8,
    ``"17.0.15"`` -> 17, ``"21"`` -> 21."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', output)
    if not match:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2):
        major = int(match.group(2))
    return major


def java_version(java: str) -> Tuple[Optional[int], str]:
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    output = proc.stderr + proc.stdout
    return parse_java_version(output), output


def check_java(min_version: int = MIN_JAVA) -> int:
    """Return the Java major version, or raise :class:`JavaNotFoundError`
    with one sentence saying how to install it."""
    hint = INSTALL_HINT.format(min=min_version)
    java = find_java()
    if java is None:
        raise JavaNotFoundError(f"Spark needs Java {min_version} or newer and no `java` was found: {hint}.")
    major, output = java_version(java)
    if major is None:
        raise JavaNotFoundError(
            f"Spark needs Java {min_version} or newer and `{java} -version` did not say which "
            f"version it is ({output.strip()[:120]!r}): {hint}.")
    if major < min_version:
        raise JavaNotFoundError(
            f"Spark needs Java {min_version} or newer but {java} is Java {major}: {hint}.")
    return major


def main() -> int:
    """``python3 -m qarla_spark.spark.java``: the check the Makefile runs
    before installing anything (needs no third-party package)."""
    import sys
    if sys.version_info < (3, 10):
        print("qarla_spark needs Python 3.10 or newer; this is "
              f"{sys.version.split()[0]}: install a newer Python and run again.", file=sys.stderr)
        return 3
    try:
        check_java()
    except JavaNotFoundError as exc:
        print(f"qarla: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
