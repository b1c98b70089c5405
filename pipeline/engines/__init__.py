"""Where the per-paper work runs (`engine.kind`): here, or on Ray.

The local engine is the stages' own code. With `engine: ray` the work is cut into Parquet
shards of `engine.shard_papers` papers in a work folder inside the output folder (`shards`),
and Ray Data runs one actor per worker over them (`ray_embed`; the cluster stage's
`cluster/ray_place`); `session` starts a local Ray instance or joins a cluster. Only these Ray
modules import `ray`, and only when called: `make all` does not need it.
"""
