"""Where the per-paper work runs (`engine.kind`): here, or on Ray.

The local engine is the stages' own code. With `engine: ray` the ingest stage also writes the
documents as Parquet shards of `engine.shard_papers` papers (`document_shards`); the Ray
actors of the embed stage read them and write their results to a work folder inside the
output folder (`shards`; `pipeline/stages/embed/ray_embed.py`). Placing papers
(`cluster/ray_place.py`) and counting terms (`label/ray_counts.py`) run as Ray Data tasks over
chunks held in memory (`chunks`). `session` starts a local Ray instance or joins a cluster.
Only these modules import `ray`, and only when called: `make all` does not need it.
"""
