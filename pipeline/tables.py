"""The one place that reads and writes the stage tables (and the stages' JSON figures).

Every table has a schema (`pipeline.schemas`) checked on write and on read (missing or
unexpected columns, wrong embedding width), and every file is written to a temporary name and
renamed into place, so a crashed stage never leaves a half-written file that looks complete.

Every Parquet output also records its lineage in the file's metadata: a fingerprint of the
config section and inputs it was built from, and the fingerprints of the tables it read. A stage
calls `stage_lineage(...)` on the tables it reads; it refuses tables from different builds (clusters
made from another documents.parquet) and tables without lineage, and returns the lineage its own
output records.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.errors import PipelineError
from pipeline.schemas import DOCUMENTS, Schema

# rows per Parquet row group: readers decode one group at a time (a million papers' vectors
# written as one group took 6.5 GB to read, four times their size)
ROW_GROUP = 65_536


def _check_columns(schema: Schema, columns: list[str], where: str) -> None:
    missing = [c for c in schema.columns if c not in columns]
    extra = [c for c in columns if c not in schema.columns]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing column(s) {missing}")
        if extra:
            parts.append(f"unexpected column(s) {extra}")
        raise PipelineError(f"{where}: {schema.name} table has {' and '.join(parts)}")


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write) -> None:
    """Write through `write(tmp_path)` to a temporary file, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp creates 0600; use normal permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    # A run killed mid-write (SIGKILL) leaves its temporary file behind: sweep those up now.
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        stale.unlink(missing_ok=True)


def write_text(path: str | Path, text: str) -> None:
    atomic_write(Path(path), lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def write_json(data: dict, path: str | Path) -> None:
    """Figures as indented JSON (NaN is refused: write None for a missing figure)."""
    write_text(path, json.dumps(data, indent=2, allow_nan=False) + "\n")


def read_json(path: str | Path, name: str) -> dict:
    """A stage's JSON figures (metrics.json, ...); a missing or broken file is one-line error."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(f"{path}: {name} not found (run the earlier stage first)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PipelineError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise PipelineError(f"{path}: expected a JSON object of figures")
    return data


def write_table(
    frame: pd.DataFrame,
    path: str | Path,
    schema: Schema,
    lineage: Lineage | None = None,
    notes: dict[str, str] | None = None,
) -> None:
    """Validate `frame` against `schema` and write it atomically as Parquet (with `lineage`,
    and `notes`: facts about the table as a whole, read back by `read_notes`)."""
    path = Path(path)
    _check_columns(schema, list(frame.columns), str(path))
    ordered = frame[schema.columns]
    try:
        table = pa.Table.from_pandas(ordered, schema=schema.arrow, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
        for field in schema.fields:
            if not field.nullable and ordered[field.name].isna().any():
                raise PipelineError(
                    f"{path}: {schema.name} column '{field.name}' has missing values"
                ) from exc
        raise PipelineError(f"{path}: cannot write {schema.name} table ({exc})") from exc
    table = _with_metadata(table, lineage, notes)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, row_group_size=ROW_GROUP))


def _open(path: Path, schema_name: str, reader=pq.read_table):
    if not path.exists():
        raise PipelineError(f"{path}: {schema_name} table not found (run the earlier stage first)")
    try:
        return reader(path)
    except (pa.ArrowException, OSError) as exc:
        raise PipelineError(f"{path}: not a readable Parquet file ({exc})") from None


def _batches(path: Path, columns: list[str] | None = None, doc_ids=None):
    """The file's `columns` (all: None) for the papers in `doc_ids` (all: None), a row group (a
    table) at a time."""
    wanted = None if doc_ids is None else pa.array(list(doc_ids), pa.string())
    file = pq.ParquetFile(path)
    # read_row_group, not iter_batches: in pyarrow 26 the latter held on to what it had read
    # (2 GB more for a million papers' vectors)
    for group in range(file.num_row_groups):
        batch = file.read_row_group(group, columns=columns)
        if wanted is not None:
            batch = batch.filter(pc.is_in(batch.column("doc_id"), value_set=wanted))
        yield batch


def _frame(path: Path, columns: list[str] | None, doc_ids) -> pd.DataFrame:
    """_batches as one DataFrame, each row group converted as it is read: the Arrow copy of
    the whole file is never held beside the frame."""
    frames = [batch.to_pandas() for batch in _batches(path, columns, doc_ids)]
    if not frames:
        schema = pq.read_schema(path)
        return schema.empty_table().select(columns or schema.names).to_pandas()
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def read_table(
    path: str | Path, schema: Schema, columns: list[str] | None = None, doc_ids=None
) -> pd.DataFrame:
    """Read a stage table and check its columns against `schema`. `columns`: only these are
    read, and `doc_ids` (a collection): only these papers' rows, in the file's order; the
    file's columns are checked whole either way. A stage that needs a few columns, or the
    fitted papers' text alone, then holds no more than that (a million abstracts are GBs)."""
    path = Path(path)
    found = _open(path, schema.name, pq.read_schema).names
    _check_columns(schema, found, str(path))
    frame = _open(path, schema.name, lambda p: _frame(p, columns, doc_ids))
    for field in schema.fields:  # keep nullable strings as Python None, not NaN
        if field.name in frame and (
            pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
        ):
            frame[field.name] = (
                frame[field.name].astype(object).where(frame[field.name].notna(), None)
            )
    return frame


def write_key_vectors(path: Path, keys: list[str], vectors: np.ndarray) -> None:
    """(key, embedding) rows, float32, atomically: the embedding cache and the embed stage's
    work folder, whose rows are found by the text's key rather than by a paper."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1])
    table = pa.table({"key": pa.array(keys, pa.string()), "embedding": column})
    # no dictionary: neither keys nor vectors repeat (write_embeddings)
    atomic_write(Path(path), lambda tmp: pq.write_table(table, tmp, use_dictionary=False))


def read_key_vectors(path: Path, width: int) -> tuple[list[str], np.ndarray]:
    """write_key_vectors' rows back: the keys and a float32 matrix of `width` columns (raises
    pyarrow's, numpy's or the OS's error on a file that is not such a table)."""
    table = pq.read_table(path)
    flat = table.column("embedding").combine_chunks().flatten().to_numpy()
    vectors = flat.reshape(table.num_rows, width).astype(np.float32, copy=False)
    return table.column("key").to_pylist(), vectors


def write_embeddings(
    doc_ids: list[str],
    vectors: np.ndarray,
    path: str | Path,
    lineage: Lineage | None = None,
    notes: dict[str, str] | None = None,
) -> None:
    """Write `doc_id` plus a fixed-width float32 `embedding` column (`notes` as in
    `write_table`: the embed stage records its encoder's identity)."""
    path = Path(path)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(doc_ids):
        raise PipelineError(
            f"{path}: {len(doc_ids)} doc_ids but embedding matrix of shape {vectors.shape}"
        )
    width = vectors.shape[1]
    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), width)
    table = pa.table({"doc_id": pa.array(doc_ids, pa.string()), "embedding": column})
    table = _with_metadata(table, lineage, notes)
    # no dictionary: vectors do not repeat, and one only slows reading (twice over at 100,000)
    write = partial(pq.write_table, row_group_size=ROW_GROUP, use_dictionary=False)
    atomic_write(path, lambda tmp: write(table, tmp))


def read_embeddings(
    path: str | Path,
    width: int | None = None,
    documents: pd.DataFrame | None = None,
    doc_ids=None,
) -> tuple[list[str], np.ndarray]:
    """Return (doc_ids, float32 matrix); check the width when `width` is given, and that the
    rows are `documents`' papers in their order when it is given. `doc_ids` (a collection):
    only these papers' rows, in the file's order. The vectors are copied out of Parquet a
    record batch at a time into one matrix, never whole twice over (a million papers'
    vectors are 1.5 GB)."""
    path = Path(path)
    schema = _open(path, "embeddings", pq.read_schema)
    if schema.names != ["doc_id", "embedding"]:
        raise PipelineError(
            f"{path}: embeddings table must have columns ['doc_id', 'embedding'], "
            f"has {schema.names}"
        )
    type_ = schema.field("embedding").type
    if not pa.types.is_fixed_size_list(type_) or not pa.types.is_float32(type_.value_type):
        raise PipelineError(f"{path}: 'embedding' must be a fixed-width float32 list, is {type_}")
    if width is not None and type_.list_size != width:
        raise PipelineError(f"{path}: embeddings are {type_.list_size} wide, expected {width}")
    ids, vectors = _open(path, "embeddings", lambda p: _matrix(p, type_.list_size, doc_ids))
    if documents is not None and ids != documents["doc_id"].tolist():
        raise PipelineError(f"{path}: embeddings do not match documents: rerun the embed stage")
    return ids, vectors


def _matrix(path: Path, width: int, doc_ids) -> tuple[list[str], np.ndarray]:
    """(doc_ids, vectors) of the file's papers in `doc_ids` (all: None), copied a record batch
    at a time into one preallocated matrix."""
    rows = pq.ParquetFile(path).metadata.num_rows
    if doc_ids is not None:
        rows = min(rows, len(set(doc_ids)))
    ids, vectors, row = [], np.empty((rows, width), dtype=np.float32), 0
    for batch in _batches(path, doc_ids=doc_ids):
        flat = batch.column("embedding").combine_chunks().flatten().to_numpy()
        vectors[row : row + batch.num_rows] = flat.reshape(-1, width)
        ids += batch.column("doc_id").to_pylist()
        row += batch.num_rows
    return ids, vectors if row == rows else vectors[:row].copy()


def join_papers(documents: pd.DataFrame, clusters: pd.DataFrame) -> pd.DataFrame:
    """clusters with each paper's documents columns, in clusters' order; refuses tables that do
    not hold the same papers."""
    merged = clusters.merge(
        documents, on="doc_id", how="left", validate="one_to_one", indicator="_found"
    )
    if len(merged) != len(documents) or (merged.pop("_found") != "both").any():
        raise PipelineError("clusters do not match documents (different papers): rerun cluster")
    return merged


def paper_frame(
    documents: pd.DataFrame, clusters: pd.DataFrame, topics: pd.DataFrame
) -> pd.DataFrame:
    """One row per paper, ordered by doc_id: its documents columns, topic and x, y (the map's
    and the figures' papers); refuses a topics table that lacks a paper's topic."""
    frame = join_papers(documents, clusters)
    missing = set(frame["topic"]) - set(topics["topic"])
    if missing:
        raise PipelineError(f"topics table lacks topic(s) {sorted(missing)}: rerun label")
    return frame.sort_values("doc_id", ignore_index=True)


def join_fitted(
    documents: pd.DataFrame, clusters: pd.DataFrame, vectors: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """The papers the topic model was fitted on (clusters' `placed` == "fit"), with their
    documents columns, in doc_id order (terms, labels and themes then do not depend on the
    order of the input rows), and their vectors in that order. `documents` (and `vectors`, row
    for row) may hold every paper or only the fitted ones (read_fitted)."""
    fitted = clusters[clusters["placed"] == "fit"].sort_values("doc_id", kind="stable")
    keep = documents["doc_id"].isin(fitted["doc_id"]).to_numpy()
    documents, vectors = documents[keep], np.asarray(vectors, dtype=np.float32)[keep]
    merged = join_papers(documents, fitted).reset_index(drop=True)
    row_of = {doc_id: i for i, doc_id in enumerate(documents["doc_id"])}
    return merged, vectors[[row_of[d] for d in merged["doc_id"]]].reshape(-1, vectors.shape[1])


def read_fitted(
    documents: Path, embeddings: Path, clusters: pd.DataFrame
) -> tuple[pd.DataFrame, np.ndarray]:
    """The documents rows and vectors of the papers the topic model was fitted on, alone: the
    label and export stages' papers (terms, labels and the BERTopic model come from them), a
    sample of at most `cluster.fit_max_papers` of a large corpus."""
    ids = set(clusters.loc[clusters["placed"] == "fit", "doc_id"])
    papers = read_table(documents, DOCUMENTS, doc_ids=ids)
    _, vectors = read_embeddings(embeddings, documents=papers, doc_ids=ids)
    return papers, vectors


# ---------------------------------------------------------------- lineage

LINEAGE_KEY = b"pipeline.lineage"


@dataclass(frozen=True)
class Lineage:
    """What a table was built from: its own fingerprint, and its inputs' (name -> fingerprint)."""

    fingerprint: str
    inputs: dict[str, str]


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def make_lineage(params: object, inputs: dict[str, str]) -> Lineage:
    """Fingerprint = sha256 of a stage's parameters (a config section, or its stamp text) and
    the fingerprints of everything it read."""
    if hasattr(params, "model_dump_json"):
        params = f"{type(params).__name__} {params.model_dump_json()}"
    text = json.dumps({"params": params, "inputs": inputs}, sort_keys=True)
    return Lineage(hashlib.sha256(text.encode("utf-8")).hexdigest(), dict(inputs))


def read_lineage(path: str | Path, name: str = "input") -> Lineage:
    """The lineage a Parquet file records; one written without it (by hand, or by a version
    before lineage) is refused."""
    path = Path(path)
    metadata = _open(path, name, pq.read_schema).metadata or {}
    if LINEAGE_KEY not in metadata:
        raise PipelineError(
            f"{path}: the {name} table records no lineage (written by hand or by an older "
            "version): rerun make"
        )
    try:
        data = json.loads(metadata[LINEAGE_KEY])
        return Lineage(str(data["fingerprint"]), dict(data["inputs"]))
    except (ValueError, KeyError, TypeError):
        raise PipelineError(
            f"{path}: unreadable lineage in the file's metadata: rerun make"
        ) from None


def stage_lineage(params: object, **inputs: str | Path) -> Lineage:
    """Check that the tables a stage reads (name=path) come from one build; return the lineage
    its output records.

    Each table records the fingerprints of the tables it was built from; each must equal the
    fingerprint of the table of that name read now, else the stage stops. A table without
    lineage is refused (read_lineage): it cannot show which build it belongs to.
    """
    paths = {name: Path(path) for name, path in inputs.items()}
    recorded = {name: read_lineage(path, name) for name, path in paths.items()}
    fingerprints = {name: found.fingerprint for name, found in recorded.items()}
    for name, found in recorded.items():
        for other, fingerprint in found.inputs.items():
            if other in fingerprints and fingerprints[other] != fingerprint:
                raise PipelineError(
                    f"{paths[name]} was built from a different {paths[other]}: rerun make"
                )
    return make_lineage(params, fingerprints)


NOTES_KEY = b"pipeline.notes"


def read_notes(path: str | Path, name: str = "input") -> dict[str, str]:
    """The notes a Parquet file records ({} for one written without)."""
    path = Path(path)
    metadata = _open(path, name, pq.read_schema).metadata or {}
    try:
        notes = json.loads(metadata.get(NOTES_KEY, b"{}"))
    except ValueError:
        raise PipelineError(
            f"{path}: unreadable notes in the file's metadata: rerun make"
        ) from None
    return notes if isinstance(notes, dict) else {}


def _with_metadata(
    table: pa.Table, lineage: Lineage | None, notes: dict[str, str] | None
) -> pa.Table:
    metadata = dict(table.schema.metadata or {})
    if lineage is not None:
        text = json.dumps(
            {"fingerprint": lineage.fingerprint, "inputs": lineage.inputs}, sort_keys=True
        )
        metadata[LINEAGE_KEY] = text.encode("utf-8")
    if notes:
        metadata[NOTES_KEY] = json.dumps(notes, sort_keys=True).encode("utf-8")
    return table.replace_schema_metadata(metadata)
