"""One typed configuration: a YAML file validated into frozen pydantic models.

Every model forbids unknown keys, so a misspelled key fails at load with its dotted path named.
Each stage receives only its own section; `stage_params` gives the exact slice a stage depends on,
which the Makefile's per-stage parameter stamps are built from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.errors import ConfigError

Auto = Literal["auto"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class IngestConfig(_Section):
    venue: str | None = Field(
        None, description="Venue for records whose file names none (e.g. 'ICML 2025')."
    )
    min_abstract_words: int = Field(
        5, ge=1, description="Records with fewer words are rejected into the ledger."
    )


class EmbedConfig(_Section):
    model: Literal["all-MiniLM-L6-v2"] = "all-MiniLM-L6-v2"
    batch_size: int = Field(32, ge=1, le=1024)
    progress_bar: bool = True


class ClusterConfig(_Section):
    random_state: int = Field(42, ge=0)
    n_neighbors: Annotated[int, Field(ge=2)] | Auto = Field(
        "auto", description="UMAP neighbours; auto scales with size."
    )
    n_components: int = Field(5, ge=2, le=50)
    min_cluster_size: Annotated[int, Field(ge=2)] | Auto = Field(
        "auto", description="HDBSCAN; auto scales with size."
    )
    min_samples: Annotated[int, Field(ge=1)] | Auto = "auto"
    map_min_dist: float = Field(0.1, ge=0.0, le=1.0, description="UMAP min_dist of the 2-D map.")


class LabelConfig(_Section):
    n_terms: int = Field(10, ge=1, le=50, description="Top c-TF-IDF terms kept per topic.")
    label_terms: int = Field(3, ge=1, le=6, description="Terms joined into the short label.")
    max_ngram: int = Field(2, ge=1, le=3)


class RenderConfig(_Section):
    title: str = "ICML & ICLR topic map"
    point_size: int = Field(7, ge=1, le=30)
    hover_words: int = Field(16, ge=3, le=100, description="Opening words shown when untitled.")


class Config(_Section):
    inputs: list[str] = Field(min_length=1, description="Input files or globs.")
    output_dir: str = "outputs"
    ingest: IngestConfig = IngestConfig()
    embed: EmbedConfig = EmbedConfig()
    cluster: ClusterConfig = ClusterConfig()
    label: LabelConfig = LabelConfig()
    render: RenderConfig = RenderConfig()


STAGES = ("ingest", "embed", "cluster", "label", "render")


def _describe(error: dict) -> str:
    # pydantic appends union branches to the location (cluster.n_neighbors.int): drop them
    tags = {"int", "float", "str", "bool"}
    parts = [
        str(p) for p in error["loc"] if str(p) not in tags and not str(p).startswith("literal[")
    ]
    key = ".".join(parts) or "(top level)"
    if error["type"] == "extra_forbidden":
        return f"unknown key '{key}'"
    if error["type"] == "missing":
        return f"missing required key '{key}'"
    return f"key '{key}': {error['msg']} (got {error.get('input')!r})"


def parse_config(data: object, source: str = "config") -> Config:
    """Validate a parsed YAML document; raise ConfigError naming every bad key."""
    if data is None:
        raise ConfigError(f"{source}: the file is empty")
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of keys, got {type(data).__name__}")
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_describe(error) for error in exc.errors())
        raise ConfigError(f"{source}: {problems}") from None


def load_config(path: str | Path) -> Config:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config ({exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    return parse_config(data, str(path))


def stage_params(config: Config, stage: str) -> dict:
    """The exact parameters a stage's output depends on (its stamp's content)."""
    if stage == "ingest":
        return {"inputs": list(config.inputs), "ingest": config.ingest.model_dump()}
    return {stage: getattr(config, stage).model_dump()}


def stamp_text(config: Config, stage: str) -> str:
    return json.dumps(stage_params(config, stage), indent=2, sort_keys=True) + "\n"
