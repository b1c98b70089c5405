"""Where the per-paper work runs (`engine.kind`): here, or on Ray.

The local engine is the stages' own code. With `engine: ray` the work is cut into Parquet
shards of `engine.shard_papers` papers in a work folder inside the output folder (`shards`),
and Ray Data runs actors over them (`pipeline/ray_embed.py` for the embed stage, beside it so
that placing papers does not depend on the encoder; `cluster/ray_place.py`); `session` starts a
local Ray instance or joins a cluster. Only these modules import `ray`, and only when called:
`make all` does not need it.
"""
