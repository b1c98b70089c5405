"""The Jinja2 environment the pages are rendered with: this package's templates/, autoescaping
always on, `tojson` writing compact UTF-8 JSON with `<`, `>`, `&` and `'` as \\u escapes (so no
text inside a <script type="application/json"> island can close it), and the number filters the
templates use. Python shapes the data; the templates lay it out."""

from __future__ import annotations

import functools
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

TEMPLATES_DIR = Path(__file__).parent / "templates"
MAP_PAGE = "map.html"


# Jinja's own `format` filter is %-style, which has no thousands separator
def thousands(number: int) -> str:
    return f"{number:,}"


def percent(fraction: float) -> str:
    return f"{100 * fraction:.1f}%"


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,
        undefined=StrictUndefined,  # a misspelt name fails the render instead of vanishing
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    # ensure_ascii off keeps the 3,401 abstracts' accents at their UTF-8 size; NaN is refused
    env.policies["json.dumps_kwargs"] = {
        "ensure_ascii": False,
        "separators": (",", ":"),
        "allow_nan": False,
        "sort_keys": False,
    }
    env.filters.update(thousands=thousands, percent=percent)
    env.globals["map_page"] = MAP_PAGE
    return env


def render_template(template: str, **context: object) -> str:
    """templates/<template> rendered with `context`."""
    return environment().get_template(template).render(**context)
