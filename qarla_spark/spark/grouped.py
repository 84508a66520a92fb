"""DDL schemas as pandas: the columns of a schema string and a typed empty
frame of it (what a Python function on the executors yields when it has no
row)."""

from __future__ import annotations

from typing import List

_EMPTY_DTYPES = {"string": object, "int": "int32", "long": "int64", "double": "float64",
                 "boolean": "bool"}


def schema_columns(schema: str) -> List[tuple]:
    """``"a string, b long"`` -> [("a", "string"), ("b", "long")] (top-level
    types only; a complex type is kept whole)."""
    out, depth, current = [], 0, ""
    for ch in schema:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return [tuple(part.split(None, 1)) for part in out]


def empty_frame(schema: str):
    """A typed empty pandas frame with the columns of a DDL ``schema``."""
    import pandas as pd
    return pd.DataFrame({c: pd.Series([], dtype=_EMPTY_DTYPES.get(t, object))
                         for c, t in schema_columns(schema)})
