"""Stacking the pandas frames the kernels return (pure pandas).

``pd.concat`` decides a column's type from its parts, and for a column of
Python objects (strings) that is null in a part it tests every cell of that
part for null in Python: a million calls for a batch of the QARLA kernel's
rows, where the null ``holdout`` column of 25 topics' rows is all null
(issue 13: 3 of the 7.6 s the subsets' evaluation spent in Python). The
kernels' frames have the same columns and types, so they are stacked column
by column instead.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd


def stack(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    """The rows of ``frames`` in order, with ``columns`` (a new frame with
    a fresh index). Where the frames' types of a column differ,
    ``pd.concat`` decides as before."""
    frames = list(frames)
    columns = list(columns)
    if not frames:
        raise ValueError("no frames to stack")
    if len(frames) == 1:
        return frames[0][columns].reset_index(drop=True)
    if any(list(f.dtypes[columns]) != list(frames[0].dtypes[columns]) for f in frames[1:]):
        return pd.concat([f[columns] for f in frames], ignore_index=True)
    out = {}
    for c in columns:
        parts = [f[c].array for f in frames]
        if isinstance(frames[0][c].dtype, np.dtype):
            out[c] = np.concatenate([np.asarray(p) for p in parts])
        else:       # an extension type (nullable Int64, ...): its own concatenation
            out[c] = type(parts[0])._concat_same_type(parts)
    return pd.DataFrame(out, columns=columns)
