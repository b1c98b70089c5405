"""How per-paper work is mapped (`engine.kind`): here, or on Ray. Nothing here knows a stage.

One seam (`chunks.map_chunks`): a stage hands the engine its work, a function of one chunk (or
an `Actor`: a class built once per worker, for work that needs a model loaded first), and the
chunks; it gets the results back in the chunks' order. The local engine runs them in this
process, one after another (`local`); the Ray engine maps them with Ray Data (`ray_data`), one
chunk per batch, on `engine.concurrency` workers, retried or restarted up to
`engine.max_retries` times, and stops with one line when Ray gives up. `session` starts a local
Ray instance or joins a cluster. Each stage's adapters (what a chunk is, what a worker does
with it) live in the stage's folder. Only `ray_data` and `session` import `ray`, and only when
called: `make all` does not need it.
"""

from pipeline.engines.chunks import Actor, WorkerError, chunk_bounds, map_chunks

__all__ = ["Actor", "WorkerError", "chunk_bounds", "map_chunks"]
