"""Topic maps of ML conference abstracts: ingest -> embed -> cluster -> label -> compare ->
render, each stage a module that meets the others only through its tables.

For notebooks: `pipeline.build(...)` runs every stage and returns a `Build` (the tables as
DataFrames, the page paths); `pipeline.open_build(folder)` reads an existing one. Importing the
package changes nothing in the process: no environment variable is set.
"""

from __future__ import annotations

__all__ = ["Build", "build", "open_build"]


def __getattr__(name: str):  # the API is imported on first use: `import pipeline` stays light
    if name in __all__:
        from pipeline import api

        return getattr(api, name)
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
