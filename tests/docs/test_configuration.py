"""docs/configuration.md stays true to the code: every config key is in its table with the
default the code has."""

from __future__ import annotations

import json

from pydantic import BaseModel

from pipeline.config import Config
from tests.support.paths import ROOT


def _defaults(model: type[BaseModel], prefix: str = "") -> dict[str, object]:
    found = {}
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found.update(_defaults(annotation, f"{prefix}{name}."))
        else:
            found[f"{prefix}{name}"] = (
                None if field.is_required() else field.get_default(call_default_factory=True)
            )
    return found


def _shown(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def test_every_config_key_is_in_the_configuration_page_with_its_default():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`") and cells[0].endswith("`"):
            rows[cells[0].strip("`")] = cells[1].strip("`")
    for key, default in _defaults(Config).items():
        assert key in rows, f"config key {key} is missing from docs/configuration.md's table"
        if key != "inputs":
            assert rows[key] == _shown(default), (key, rows[key], default)
