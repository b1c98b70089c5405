"""Config loading and validation, and the per-stage parameter slices the stamps are built from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pipeline.commands import COMMANDS
from pipeline.config import Config, EngineConfig, load_config, parse_config, stamp_text
from pipeline.errors import ConfigError
from tests.support.paths import ROOT

SHIPPED = sorted((ROOT / "configs").glob("*.yaml"))


def _load_text(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_config_loads(path):
    config = load_config(path)
    assert config.inputs, "every config must name at least one input"
    # Every key written in the file survived validation (nothing silently defaulted away).
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    dumped = config.model_dump()
    for section, value in raw.items():
        if isinstance(value, dict):
            for key, item in value.items():
                assert dumped[section][key] == item, f"{section}.{key}"
        else:
            assert dumped[section] == value, section


def test_default_config_values():
    assert ROOT / "configs" / "default.yaml" in SHIPPED
    config = load_config(ROOT / "configs" / "default.yaml")
    assert config.inputs == ["data/raw/*.txt"]
    assert config.output_dir == "outputs"
    assert config.ingest.venue is None
    assert config.cluster.random_state == 42
    assert config.embed.model == "all-MiniLM-L6-v2"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("inputs: [a.txt]\noutput_dri: out\n", "unknown key 'output_dri'", id="top"),
        pytest.param(
            "inputs: [a.txt]\ncluster:\n  min_cluster_sise: 5\n",
            "unknown key 'cluster.min_cluster_sise'",
            id="nested",
        ),
        pytest.param(
            "inputs: [a.txt]\nembed:\n  batch_size: many\n", "key 'embed.batch_size'", id="type"
        ),
        pytest.param(
            "inputs: [a.txt]\ncluster:\n  map_min_dist: 2\n",
            "key 'cluster.map_min_dist'",
            id="range-high",
        ),
        pytest.param(
            "inputs: [a.txt]\nrender:\n  point_size: 0\n", "key 'render.point_size'", id="range-low"
        ),
        pytest.param("output_dir: out\n", "missing required key 'inputs'", id="no-inputs"),
        pytest.param("inputs: []\n", "key 'inputs'", id="empty-inputs"),
        pytest.param("inputs: a.txt\n", "key 'inputs'", id="inputs-not-list"),
        pytest.param(
            "inputs: [a.txt]\nembed:\n  batch_size: many\nlabel:\n  n_term: 3\n",
            ("key 'embed.batch_size'", "unknown key 'label.n_term'"),
            id="all-problems-at-once",
        ),
    ],
)
def test_bad_config_names_file_and_dotted_key(tmp_path, text, expected):
    with pytest.raises(ConfigError) as info:
        _load_text(tmp_path, text)
    message = str(info.value)
    for part in (expected,) if isinstance(expected, str) else expected:
        assert part in message
    assert str(tmp_path / "config.yaml") in message
    assert "\n" not in message
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", "empty", id="empty"),
        pytest.param("# nothing but a comment\n", "empty", id="comment-only"),
        pytest.param("- a.txt\n- b.txt\n", "expected a mapping", id="list"),
        pytest.param("just a sentence\n", "expected a mapping", id="scalar"),
        pytest.param("inputs: [a.txt\n", "not valid YAML", id="invalid-yaml"),
        pytest.param("inputs:\n\t- a.txt\n", "not valid YAML", id="tab-indent"),
    ],
)
def test_unusable_config_file(tmp_path, text, expected):
    with pytest.raises(ConfigError) as info:
        _load_text(tmp_path, text)
    message = str(info.value)
    assert expected in message
    assert message.startswith(str(tmp_path / "config.yaml"))
    assert "\n" not in message


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file not found") as info:
        load_config(tmp_path / "nope.yaml")
    assert str(tmp_path / "nope.yaml") in str(info.value)


BASE = {"inputs": ["data/raw/*.txt"], "output_dir": "outputs"}


@pytest.mark.parametrize(
    ("change", "changed_stages"),
    [
        pytest.param({"render": {"title": "Another title"}}, {"render"}, id="render.title"),
        pytest.param({"render": {"point_size": 9}}, {"render"}, id="render.point_size"),
        pytest.param({"inputs": ["other/*.csv"]}, {"ingest"}, id="inputs"),
        pytest.param({"ingest": {"venue": "ICML 2025"}}, {"ingest"}, id="ingest.venue"),
        # label loads the encoder with the embed section's settings
        pytest.param({"embed": {"batch_size": 8}}, {"embed", "label"}, id="embed.batch_size"),
        pytest.param(
            {"cluster": {"random_state": 7}}, {"cluster", "stability"}, id="cluster.random_state"
        ),
        pytest.param({"label": {"n_terms": 5}}, {"label"}, id="label.n_terms"),
        # render tests the topics' growth since the fit with compare's log-odds settings
        pytest.param(
            {"compare": {"z_threshold": 3.0}}, {"compare", "render"}, id="compare.z_threshold"
        ),
        pytest.param({"quality": {"seeds": [1, 2]}}, {"stability", "baseline"}, id="quality.seeds"),
        pytest.param({"output_dir": "elsewhere"}, set(), id="output_dir"),
        # where the work runs, not what it gives: the same tables on either engine; only the
        # documents shards the Ray workers read are cut by it (a cheap step that reruns nothing)
        pytest.param({"engine": {"kind": "ray", "concurrency": 8}}, {"shards"}, id="engine"),
    ],
)
def test_stage_stamps_change_only_for_their_sections(change, changed_stages):
    before = parse_config(BASE)
    after = parse_config({**BASE, **change})
    changed = {
        name
        for name, command in COMMANDS.items()
        if stamp_text(before, command.sections) != stamp_text(after, command.sections)
    }
    assert changed == changed_stages


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["render.title=My map"], {"render": {"title": "My map"}}),
        (["cluster.min_cluster_size=7", "label.n_terms=5"], {"cluster": {"min_cluster_size": 7}}),
        (["quality.seeds=[1, 2]"], {"quality": {"seeds": [1, 2]}}),
        (["cluster.max_topics=null"], {"cluster": {"max_topics": None}}),
        (["output_dir=elsewhere"], {"output_dir": "elsewhere"}),
    ],
)
def test_overrides_set_keys_for_one_run(tmp_path, overrides, expected):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({**BASE, "render": {"point_size": 9}}), encoding="utf-8")
    config = load_config(path, overrides).model_dump()
    for section, values in expected.items():
        if isinstance(values, dict):
            assert {k: config[section][k] for k in values} == values
        else:
            assert config[section] == values
    assert config["render"]["point_size"] == 9  # the rest of the section stays
    assert load_config(path).render.title != "My map"  # the file is unchanged


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("render.colour=red", "unknown key 'render.colour'"),
        ("cluster.n_components=1", "key 'cluster.n_components'"),
        ("render.title", "is not of the form section.key=value"),
        ("inputs.title=x", "'inputs' is not a section"),
    ],
)
def test_bad_overrides_name_the_key(tmp_path, override, expected):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(BASE), encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(path, [override])


# ---------------------------------------------------------------- messages, overrides, stamps


@pytest.mark.parametrize(
    ("themes", "max_topics", "refused"),
    [(20, 20, True), (30, 20, True), (19, 20, False), ("auto", 5, False), (12, None, False)],
)
def test_themes_must_be_fewer_than_the_topic_cap(themes, max_topics, refused):
    data = {**BASE, "label": {"n_themes": themes}, "cluster": {"max_topics": max_topics}}
    if not refused:
        assert parse_config(data).label.n_themes == themes
        return
    with pytest.raises(ConfigError) as info:
        parse_config(data, "c.yaml")
    assert str(info.value) == (
        f"c.yaml: key 'label.n_themes': {themes} themes cannot group at most {max_topics} "
        "topics (cluster.max_topics); ask for fewer themes"
    )


def test_messages_name_the_key_without_pydantics_union_branches():
    data = {
        **BASE,
        "cluster": {"n_neighbors": "many"},  # int | "auto": pydantic adds the branches
        "embed": {"cache_dir": 5},  # str | None
        "label": {"n_themes": 1.5},
    }
    with pytest.raises(ConfigError) as info:
        parse_config(data)
    problems = str(info.value).removeprefix("config: ").split("; ")
    assert problems[0].startswith("key 'embed.cache_dir': Input should be a valid string (got 5)")
    assert any(
        p.startswith("key 'cluster.n_neighbors': ") and "(got 'many')" in p for p in problems
    )
    assert any(p.startswith("key 'label.n_themes': ") and "(got 1.5)" in p for p in problems)
    keys = {p.split("'")[1] for p in problems}  # no union branch (.constrained-int, ...)
    assert keys == {"embed.cache_dir", "cluster.n_neighbors", "label.n_themes"}, problems
    with pytest.raises(ConfigError, match=r"^config: the file is empty$"):
        parse_config(None)
    with pytest.raises(ConfigError, match=r"^config: expected a mapping of keys, got list$"):
        parse_config([1])


def test_override_values_are_yaml_else_text_and_errors_name_the_file(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(BASE), encoding="utf-8")
    config = load_config(path, ["render.title=a=b", "ingest.venue=[ICML", "embed.cache_dir="])
    assert config.render.title == "a=b"  # the first '=' splits key from value
    assert config.ingest.venue == "[ICML"  # not YAML: the text as written
    assert config.embed.cache_dir is None
    with pytest.raises(ConfigError, match=f"^{re.escape(str(path))}: override 'render.title' is"):
        load_config(path, ["render.title"])
    path.write_text("- a.txt\n", encoding="utf-8")  # not a mapping: overrides are not applied
    with pytest.raises(ConfigError, match="expected a mapping of keys, got list"):
        load_config(path, ["render.title=x"])


def test_unreadable_config_files_are_one_line(tmp_path):
    with pytest.raises(ConfigError, match=f"^{re.escape(str(tmp_path))}: cannot read config \\("):
        load_config(tmp_path)  # a folder
    path = tmp_path / "c.yaml"
    path.write_text("inputs: [a.txt\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: not valid YAML (while parsing a flow sequence")
    assert "expected ',' or ']', but got '<stream end>'" in str(info.value)
    path.write_text("inputs: [a.txt]\nrender:\n  title: Café\n", encoding="utf-8")
    assert load_config(path).render.title == "Café"


def test_stamp_text_is_sorted_indented_json():
    config = parse_config({**BASE, "render": {"title": "T"}})
    assert stamp_text(config, ("render",)) == (
        '{\n  "render": {\n    "hover_words": 16,\n    "point_size": "auto",\n'
        '    "title": "T"\n  }\n}\n'
    )


def test_engine_shorthand_address_and_bad_kind(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    base = {"inputs": ["x.txt"]}
    assert parse_config(base).engine.kind == "local"
    assert parse_config({**base, "engine": "ray"}).engine == EngineConfig(kind="ray")
    engine = parse_config({**base, "engine": {"kind": "ray", "concurrency": 4}}).engine
    assert (engine.kind, engine.concurrency, engine.ray_address()) == ("ray", 4, None)
    assert parse_config({**base, "engine": {"address": "head:6379"}}).engine.ray_address() == (
        "head:6379"
    )
    monkeypatch.setenv("RAY_ADDRESS", "other:6379")
    assert parse_config({**base, "engine": "ray"}).engine.ray_address() == "other:6379"
    with pytest.raises(ConfigError, match="engine.kind"):
        parse_config({**base, "engine": "spark"})
    with pytest.raises(ConfigError, match="unknown key 'engine.workers'"):
        parse_config({**base, "engine": {"workers": 2}})


def test_overrides_reach_an_engine_given_in_one_word(tmp_path, monkeypatch):
    """`engine: ray` in the file, then `--set engine.concurrency=4`; and `--set engine=ray`
    over a file's engine section keeps the section's other keys."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({**BASE, "engine": "ray"}), encoding="utf-8")
    engine = load_config(path, ["engine.concurrency=4"]).engine
    assert (engine.kind, engine.concurrency) == ("ray", 4)
    path.write_text(yaml.safe_dump({**BASE, "engine": {"address": "head:6379"}}), encoding="utf-8")
    engine = load_config(path, ["engine=ray"]).engine
    assert (engine.kind, engine.address) == ("ray", "head:6379")


def test_engine_defaults_are_the_local_engine_in_shards_of_512():
    engine = EngineConfig()
    assert (engine.kind, engine.address, engine.concurrency) == ("local", None, 2)
    assert (engine.shard_papers, engine.max_retries) == (512, 3)
    assert load_config(ROOT / "configs" / "default.yaml").engine == engine
