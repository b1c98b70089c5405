"""The label stage's run(): its inputs, the encoder it loads and the precision it uses."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import numpy as np

from pipeline import schemas
from pipeline.config import LabelConfig
from tests.support.build_folder import write_build


def test_run_loads_the_encoder_with_the_embed_section_and_its_precision(
    labelled,
    hashing_encoder,
    tmp_path,
    monkeypatch,
):
    """The label stage embeds candidate terms with the user's embed settings (model,
    precision), not with defaults."""
    from pipeline import encoder as encoders
    from pipeline import tables
    from pipeline.config import EmbedConfig
    from pipeline.stages import label

    documents, clusters, _ = labelled
    vectors = hashing_encoder.embed(documents["abstract"].tolist())
    paths = write_build(
        tmp_path,
        documents=documents.astype({"year": "Int32"}),
        embeddings=(documents["doc_id"].tolist(), vectors),
        clusters=clusters,
    )
    seen = {}
    monkeypatch.setattr(
        encoders, "load_encoder", lambda c: seen.setdefault("load", c) and hashing_encoder
    )
    monkeypatch.setattr(
        encoders, "precision_context", lambda p: seen.setdefault("precision", p) and nullcontext()
    )
    embed_config = EmbedConfig(precision="bf16", batch_size=8)
    label.run(
        LabelConfig(),
        embed_config,
        paths["documents"],
        paths["clusters"],
        tmp_path / "embeddings.parquet",
        tmp_path / "topics.parquet",
        tmp_path / "themes.parquet",
    )
    assert seen == {"load": embed_config, "precision": "bf16"}
    assert tables.read_table(tmp_path / "topics.parquet", schemas.TOPICS)["label"].is_unique


def test_the_basis_changes_with_the_code_that_makes_labels(labelled, tmp_path, monkeypatch):
    """Labels are kept while their basis holds; a change to the word lists or the label code
    (a new release) must relabel, not keep the old labels."""
    from pipeline import tables
    from pipeline.config import EmbedConfig
    from pipeline.stages import label

    documents, clusters, _ = labelled
    vectors = np.eye(len(documents), 8, dtype=np.float32)
    args = (*tables.join_fitted(documents, clusters, vectors), LabelConfig(), EmbedConfig())
    code = tmp_path / "text.py"
    code.write_text("FILLER = 'propose'\n")
    monkeypatch.setattr(label, "LABEL_CODE", [*label.LABEL_CODE[:-1], code])
    before = label.basis(*args)
    assert label.basis(*args) == before
    code.write_text("FILLER = 'propose compared'\n")
    assert label.basis(*args) != before
    from pipeline import phrases

    assert Path(phrases.__file__) in label.LABEL_CODE  # the noun-phrase rules are part of it


def test_the_label_code_is_every_module_the_stage_imports_but_its_plumbing():
    """A module the label stage comes to import is part of the label basis unless it only
    moves data (phrases.py once was left out, and its edits kept stale labels)."""
    from pipeline.makedeps import ROOT, code_files
    from pipeline.stages import label

    plumbing = {
        "__init__.py", "config.py", "encoder.py", "errors.py", "progress.py", "schemas.py",
        "tables.py", "stages/__init__.py", "engines/__init__.py", "engines/chunks.py",
        "engines/local.py", "engines/ray_data.py", "engines/session.py",
    }  # fmt: skip
    imported = {p.resolve() for p in code_files("pipeline.stages.label") if p.suffix == ".py"}
    computing = {p for p in imported if str(p.relative_to(ROOT)) not in plumbing}
    assert computing == {p.resolve() for p in label.LABEL_CODE}
