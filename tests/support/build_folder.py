"""Stage tables written into an output folder as the stages write them: by pipeline.tables'
writers, each with the lineage its stage records (pipeline.tables.stage_lineage over the tables
that stage reads, as found in the folder), so a stage run on them takes them as one build.
A stage refuses a table without lineage; a test of tables from different builds writes its
own lineage (tables.make_lineage)."""

from __future__ import annotations

from pathlib import Path

from pipeline import schemas, tables
from pipeline.commands import COMMANDS, FILES

# each table -> the tables the stage that writes it reads (ingest reads none: its inputs)
READS = {output: command.inputs for command in COMMANDS.values() for output in command.outputs}
ORDER = ("documents", "rejected", "embeddings", "clusters", "topics", "themes")
ORDER += ("venue_topics", "venue_years")


def write_build(
    folder: Path, notes: dict[str, dict[str, str]] | None = None, **frames
) -> dict[str, Path]:
    """Write `frames` (name=frame; embeddings=(doc_ids, vectors)) as the stage tables of that
    name in `folder`, in the build's order, with `notes` by table name; name -> path of each.
    A table's lineage names the tables its stage reads that the folder holds by then."""
    unknown = set(frames) - set(ORDER)
    assert not unknown, f"not a stage table: {sorted(unknown)}"
    paths = {}
    for name in (n for n in ORDER if n in frames):
        path = paths[name] = folder / FILES[name]
        held = {i: folder / FILES[i] for i in READS[name] if (folder / FILES[i]).exists()}
        lineage = tables.stage_lineage(f"test {name}", **held)
        note = (notes or {}).get(name)
        if name == "embeddings":
            doc_ids, vectors = frames[name]
            tables.write_embeddings(list(doc_ids), vectors, path, lineage, note)
        else:
            tables.write_table(frames[name], path, getattr(schemas, name.upper()), lineage, note)
    return paths
