"""CSV files of tables (the csv stage's, for spreadsheets and for pandas code written for
BERTopic): the expected columns checked, cells written as pandas writes them, written atomically.

pyarrow's CSV writer writes them, not pandas' (six times faster on the 600 MB of document_info at
100,000 papers); text cells are quoted, which every CSV reader reads as pandas' unquoted ones.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from pipeline.errors import PipelineError
from pipeline.tables import atomic_write

# rows per slice of a CSV written: document_info repeats a topic's examples on every row (60 MB
# of text per 10,000 rows)
CSV_ROWS = 10_000


def write_csv(
    frame: pd.DataFrame, path: str | Path, columns: tuple[str, ...], more_prefix: str | None = None
) -> None:
    """Write `frame` atomically as CSV (UTF-8, no index; lists as Python writes them): its
    columns are `columns`, then (with `more_prefix`) any number whose names start with it."""
    path = Path(path)
    names = list(frame.columns)
    more = names[len(columns) :]
    if names[: len(columns)] != list(columns) or any(
        more_prefix is None or not str(name).startswith(more_prefix) for name in more
    ):
        raise PipelineError(f"{path}: columns {names}, expected {list(columns)}")
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(map(str, names))  # quoted as pandas does

    def write(tmp: str) -> None:
        with open(tmp, "wb") as file:
            file.write(header.getvalue().encode("utf-8"))
            # a slice at a time: a topic's lists are repeated on each of its papers' rows
            for start in range(0, len(frame), CSV_ROWS):
                part = _csv_table(frame.iloc[start : start + CSV_ROWS])
                pa_csv.write_csv(part, file, pa_csv.WriteOptions(include_header=False))

    atomic_write(path, write)


def _csv_table(frame: pd.DataFrame) -> pa.Table:
    """`frame` for pyarrow's CSV writer (six times pandas' speed on 600 MB of document_info),
    cells written as pandas writes them: lists as Python prints them (each distinct list object
    printed once: a topic's papers share theirs), booleans as True and False."""
    columns = {}
    for name in frame.columns:
        values = frame[name]
        if values.dtype == bool:
            columns[str(name)] = pa.array(np.where(values.to_numpy(), "True", "False"))
        elif values.dtype == object and any(isinstance(v, list | tuple) for v in values):
            columns[str(name)] = pa.array(_printed(values), pa.string())
        else:
            columns[str(name)] = pa.Array.from_pandas(values)
    return pa.table(columns)


def _printed(values: pd.Series) -> list[str | None]:
    """Each cell as Python prints it, each distinct object printed once (the frame holds them
    all, so an id is not reused meanwhile)."""
    printed: dict[int, str | None] = {}
    cells = []
    for value in values:
        if id(value) not in printed:
            missing = not isinstance(value, list | tuple) and pd.isna(value)
            printed[id(value)] = None if missing else str(value)
        cells.append(printed[id(value)])
    return cells
