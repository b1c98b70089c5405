"""One typed configuration: a YAML file validated into frozen pydantic models.

Every model forbids unknown keys, so a misspelled key fails at load with its dotted path named.
Each stage receives only its own section; `stage_params` gives the exact slice a stage depends on,
which the Makefile's per-stage parameter stamps are built from.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from pipeline.errors import ConfigError

Auto = Literal["auto"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class IngestConfig(_Section):
    venue: str | None = Field(
        None, description="Venue for records whose file names none (e.g. 'ICML 2025')."
    )
    min_abstract_words: int = Field(
        5,
        ge=1,
        description="Records with fewer words are rejected into the ledger (Chinese and "
        "Japanese: a word per two characters).",
    )
    columns: dict[
        str, Literal["abstract", "title", "venue", "year", "id", "url", "track", "date"]
    ] = Field(
        default_factory=dict,
        description="Other column names in table inputs, e.g. {summary: abstract}.",
    )
    venue_aliases: dict[
        Annotated[str, Field(min_length=1)], Annotated[str, Field(min_length=1)]
    ] = Field(
        default_factory=dict,
        description="Other names of a venue, matched in any case and spacing, e.g. "
        "{Neural Information Processing Systems: NeurIPS}.",
    )
    tracks: Literal["all", "main_only"] = Field(
        "all",
        description="all: papers of other tracks (Workshop, Datasets & Benchmarks Track) are "
        "compared as their own group (ICLR Workshop); main_only: they go to the ledger.",
    )


class EmbedConfig(_Section):
    model: Literal["all-MiniLM-L6-v2"] = "all-MiniLM-L6-v2"
    precision: Literal["auto", "fp32", "bf16", "int8"] = Field(
        "auto",
        description="auto: the mode `make bench --sections modes` measured fastest and faithful "
        "on this CPU; unmeasured, bf16 where the CPU has native bf16 (AVX-512 BF16/AMX), else "
        "fp32. int8: dynamic quantisation (faster on some CPUs, not faithful: see "
        "docs/benchmarks.md).",
    )
    # 16: faster than 32 on the EPYC (bf16 14%, fp32 30%) and for long abstracts on the AMX
    # Xeon, and at most 15 filled-up rows per length bucket instead of 31 (docs/benchmarks.md)
    batch_size: int = Field(16, ge=1, le=1024)
    cache_dir: str | None = Field(
        ".cache/embeddings", description="Embeddings cache shared by runs; null disables it."
    )
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
    outlier_threshold: float = Field(
        0.42,
        ge=0.0,
        le=1.0,
        description="A paper is placed in the topic whose centre is most similar (cosine) when "
        "at least this similar, else left unassigned; HDBSCAN's outliers are reassigned the "
        "same way. 1.0 keeps every outlier unassigned.",
    )
    max_topics: Annotated[int, Field(ge=2)] | None = Field(
        None, description="Merge the most similar topics until at most this many remain."
    )
    max_topic_share: float = Field(
        0.06,
        gt=0.0,
        le=1.0,
        description="Topics larger than this share of the papers (and than 10 x "
        "min_cluster_size) are split by k-means on the embeddings into parts about this size, "
        "unless a part would hold under 2 x min_cluster_size papers (the border rounds after "
        "it may leave a topic slightly above); 1.0: never.",
    )
    n_epochs: Annotated[int, Field(ge=10)] | Auto = Field(
        "auto",
        description="UMAP epochs before HDBSCAN (auto: 400 from 1,000 papers, 200 from 5,000, "
        "UMAP's own below 1,000).",
    )
    fit_max_papers: int = Field(
        50_000,
        ge=100,
        description="Larger corpora are fitted on a sample of this many papers (stratified by "
        "venue and year, the same for the same papers) and the rest is assigned to that model.",
    )
    refit_share: float = Field(
        0.2,
        gt=0.0,
        le=1.0,
        description="When more than this share of the papers was added since the fit, the next "
        "build refits instead of assigning the new papers to the saved model.",
    )
    refit_unassigned_share: float = Field(
        0.25,
        gt=0.0,
        le=1.0,
        description="When more than this share of newly added papers fits no topic, the build "
        "refits.",
    )


class LabelConfig(_Section):
    n_terms: int = Field(10, ge=1, le=50, description="Top terms kept per topic.")
    label_words: int = Field(
        5,
        ge=2,
        le=5,
        description="Longest topic label, in words (labels have 2 to this many).",
    )
    max_ngram: int = Field(3, ge=1, le=3, description="Longest phrase counted as a term.")
    representation: Literal["keybert_mmr", "ctfidf"] = Field(
        "keybert_mmr",
        description="keybert_mmr: c-TF-IDF candidates reranked by BERTopic's KeyBERTInspired "
        "and MaximalMarginalRelevance (loads the embedding model); ctfidf: c-TF-IDF alone.",
    )
    mmr_diversity: float = Field(0.3, ge=0.0, le=1.0, description="0: no diversity, 1: most.")
    min_term_share: float = Field(
        0.125, ge=0.0, le=1.0, description="A topic's terms are used by at least this share of it."
    )
    theme_term_share: float = Field(
        0.1, ge=0.0, le=1.0, description="A theme's terms are used by at least this share of it."
    )
    n_themes: Annotated[int, Field(ge=2, le=50)] | Auto = Field(
        "auto", description="Themes above the topics (auto: about a quarter of them, 8 to 20)."
    )
    n_representative: int = Field(3, ge=0, le=10, description="Papers shown per topic.")
    area_min_papers: int = Field(
        20_000, ge=0, description="Above this many papers, areas group the themes (a third level)."
    )
    area_min_topics: int = Field(
        100, ge=0, description="Above this many topics, areas group the themes (a third level)."
    )


class CompareConfig(_Section):
    prior_scale: float = Field(
        0.1,
        gt=0.0,
        le=10.0,
        description="Strength of the log-odds Dirichlet prior, as a share of the corpus (its "
        "topic shares are the prior's means).",
    )
    z_threshold: float = Field(1.96, gt=0.0, description="|z| at which a difference is marked.")


class QualityConfig(_Section):
    seeds: list[Annotated[int, Field(ge=0)]] = Field(
        [42, 43, 44],
        min_length=2,
        description="random_state of each run compared by `make stability` and `make baseline`.",
    )

    @field_validator("seeds")
    @classmethod
    def _distinct(cls, seeds: list[int]) -> list[int]:
        if len(set(seeds)) != len(seeds):
            raise ValueError("seeds must be distinct")
        return seeds


class RenderConfig(_Section):
    title: str | None = Field(
        None,
        description="Page title and heading; null: made from the venues and years present "
        "('ICLR & ICML 2020–2025 topic map').",
    )
    point_size: Annotated[int, Field(ge=1, le=30)] | Literal["auto"] = Field(
        "auto",
        description="Marker size on the map in pixels; auto: 7 up to 4,000 papers, smaller as "
        "the map fills (3 at 100,000 papers, 2 above 250,000).",
    )
    hover_words: int = Field(16, ge=3, le=100, description="Opening words shown when untitled.")


class FiguresConfig(_Section):
    dpi: int = Field(
        300,
        ge=50,
        le=1200,
        description="Resolution of map.png and of the points rasterised in map.svg and "
        "map.pdf, in dots per inch.",
    )
    labels: Literal["themes", "topics"] = Field(
        "themes",
        description="The labels drawn: the themes' (the topics' where no theme groups several) "
        "or every topic's.",
    )
    panels: Literal["none", "venue"] = Field(
        "none", description="venue: one panel per venue on shared coordinates."
    )
    highlight_topic: Annotated[int, Field(ge=0)] | None = Field(
        None, description="A topic drawn in its colour over the others, muted."
    )
    highlight_venue: Annotated[str, Field(min_length=1)] | None = Field(
        None, description="A venue whose papers are drawn in their colours over the others, muted."
    )
    title: str | None = Field(
        None,
        description="The figure's title; null: made from the venues and years present, as the "
        "pages' title is.",
    )


class EngineConfig(_Section):
    kind: Literal["local", "ray"] = Field(
        "local",
        description="Where the per-paper work (embedding, placing papers into the model, "
        "counting terms for labels) runs: local (this process) or ray (Ray Data actors and "
        "tasks; needs the `ray` extra).",
    )
    address: str | None = Field(
        None,
        description="Ray cluster to connect to (e.g. ray://head:10001 or head:6379); "
        "RAY_ADDRESS overrides it; null: a local Ray instance starts and stops with the stage.",
    )
    concurrency: int = Field(
        2, ge=1, le=4096, description="Ray actors (one encoder each) or tasks at once."
    )
    shard_papers: int = Field(
        512,
        ge=1,
        le=100_000,
        description="Papers per shard (the table's last shards smaller, so that workers finish "
        "together): the documents shards the shards command writes for Ray (an actor embeds one "
        "at a time) and the chunk the local engine embeds in, so that both give the same "
        "vectors; also the papers per chunk when placing papers and counting terms.",
    )
    max_retries: int = Field(
        3, ge=0, le=100, description="Restarts of a dead actor and retries of its shard."
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: object) -> object:
        """`engine: ray` (or `local`) stands for `engine: {kind: ray}`."""
        return {"kind": data} if isinstance(data, str) else data

    def ray_address(self) -> str | None:
        """The cluster to join: RAY_ADDRESS where set, else `address` (None: start one)."""
        return os.environ.get("RAY_ADDRESS") or self.address


class Config(_Section):
    inputs: list[str] = Field(min_length=1, description="Input files or globs.")
    output_dir: str = "outputs"
    ingest: IngestConfig = IngestConfig()
    embed: EmbedConfig = EmbedConfig()
    cluster: ClusterConfig = ClusterConfig()
    label: LabelConfig = LabelConfig()
    render: RenderConfig = RenderConfig()
    compare: CompareConfig = CompareConfig()
    quality: QualityConfig = QualityConfig()
    figures: FiguresConfig = FiguresConfig()
    engine: EngineConfig = EngineConfig()


def _check_consistency(config: Config) -> str | None:
    """A problem no single key shows (settings that contradict each other), or None."""
    themes, max_topics = config.label.n_themes, config.cluster.max_topics
    if themes != "auto" and max_topics is not None and themes >= max_topics:
        return (
            f"key 'label.n_themes': {themes} themes cannot group at most {max_topics} topics "
            "(cluster.max_topics); ask for fewer themes"
        )
    return None


def _describe(error: dict) -> str:
    # pydantic appends union branches to the location (cluster.n_neighbors.int, or
    # .constrained-int for a constrained one, .literal['auto']): drop them
    tags = {"int", "float", "str", "bool"}
    parts = [
        str(p)
        for p in error["loc"]
        if str(p) not in tags and not str(p).startswith(("literal[", "constrained-"))
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
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_describe(error) for error in exc.errors())
        raise ConfigError(f"{source}: {problems}") from None
    problem = _check_consistency(config)
    if problem:
        raise ConfigError(f"{source}: {problem}")
    return config


# sections a config may give as one word (`engine: ray`), and the key that word sets
SHORTHANDS = {"engine": "kind"}


def apply_overrides(data: dict, overrides: list[str] | tuple[str, ...], source: str) -> dict:
    """`section.key=value` settings over a parsed config (values read as YAML: `7`, `true`,
    `[42, 43]`, `null`), for one run: `topicmap build --set render.title="My map"`."""
    data = dict(data)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{source}: override '{item}' is not of the form section.key=value")
        try:
            value = yaml.safe_load(text) if text.strip() else None
        except yaml.YAMLError:
            value = text
        *sections, name = key.strip().split(".")
        if not sections and name in SHORTHANDS and isinstance(value, str):
            sections, name = [name], SHORTHANDS[name]  # `engine=ray`: the file's other keys kept
        target = data
        for section in sections:
            current = target.get(section, {})
            if target is data and section in SHORTHANDS and isinstance(current, str):
                current = {SHORTHANDS[section]: current}  # `engine: ray` in the file
            if not isinstance(current, dict):
                raise ConfigError(f"{source}: override '{item}': '{section}' is not a section")
            target[section] = dict(current or {})
            target = target[section]
        target[name] = value
    return data


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Config:
    """Read and validate a config file, with `section.key=value` overrides applied."""
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
    if overrides and isinstance(data, dict):
        data = apply_overrides(data, overrides, str(path))
    return parse_config(data, str(path))


def section_params(config: Config, sections: tuple[str, ...]) -> dict:
    """The exact parameters of a command that reads these sections (its stamp's content);
    `inputs` stands for the list of input files."""
    return {
        name: list(config.inputs) if name == "inputs" else getattr(config, name).model_dump()
        for name in sections
    }


def stamp_text(config: Config, sections: tuple[str, ...], machine: dict | None = None) -> str:
    """A stamp's content: the sections' parameters, and `machine`, what settings stand for on
    this machine (the precision `embed.precision: auto` resolves to), where given."""
    params = section_params(config, sections)
    if machine:
        params["machine"] = machine
    return json.dumps(params, indent=2, sort_keys=True) + "\n"
