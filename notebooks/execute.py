"""Execute the notebooks headless (nbclient, a fresh kernel each) and, with
``--in-place``, write them back with their outputs (``make notebooks``).

The working directory of the kernel is ``--workdir`` (default
``runs/notebooks``): the run directories and the figure files the notebooks
save go there, not into the repository. An executed notebook records the
SHA-256 of its code cells in its metadata (``qarla.code_sha256``), so a check
(tests/test_notebooks.py) can tell that the committed outputs come from the
committed code. The JVM's startup line on stderr ("WARNING: Using incubator
modules: ...", printed by every Spark 4 session) is left out of the outputs.

    python notebooks/execute.py --in-place            # both notebooks
    python notebooks/execute.py --in-place qarla_summeval.ipynb
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOKS = ("qarla_summeval.ipynb", "hbr_summeval.ipynb")


def code_sha256(nb) -> str:
    """The SHA-256 of the notebook's code cells (their sources, in order)."""
    digest = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code":
            digest.update(cell.source.encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()


#: stderr lines of the JVM that say nothing about the notebook
JVM_NOISE = ("WARNING: Using incubator modules:",)


def tidy(nb):
    """Drop the JVM's startup line from the stderr outputs (a stream left
    empty is removed)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.outputs:
            if out.output_type == "stream" and out.name == "stderr":
                lines = [line for line in out.text.splitlines(keepends=True)
                         if not line.startswith(JVM_NOISE)]
                if not "".join(lines).strip():
                    continue
                out.text = "".join(lines)
            kept.append(out)
        cell.outputs = kept
    return nb


def execute(path: Path, workdir: Path, timeout: int = 1200):
    """The notebook at ``path`` executed in a fresh ``python3`` kernel whose
    working directory is ``workdir`` (the file itself is not changed)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    workdir.mkdir(parents=True, exist_ok=True)
    # Spark's own startup lines go to the terminal, not into the outputs
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(workdir)}}).execute()
    nb.metadata["qarla"] = {"code_sha256": code_sha256(nb)}
    return tidy(nb)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=list(NOTEBOOKS),
                        help="notebooks in notebooks/ (default: all)")
    parser.add_argument("--in-place", action="store_true",
                        help="write the executed notebooks back with their outputs")
    parser.add_argument("--workdir", default="runs/notebooks",
                        help="the kernels' working directory (default: runs/notebooks)")
    args = parser.parse_args(argv)

    import nbformat
    for name in args.names:
        path = HERE / name
        t0 = time.time()
        print(f"executing {path.name} ...", flush=True)
        nb = execute(path, Path(args.workdir).resolve())
        if args.in_place:
            nbformat.write(nb, path)
        print(f"{path.name}: executed in {time.time() - t0:.0f} s"
              + (f", written ({path.stat().st_size / 1e6:.2f} MB)" if args.in_place else ""),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
