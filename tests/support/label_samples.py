"""Samples for the label stage's tests: abstracts of two topics and an outlier, and embeddings
near a direction per topic (their tables: tests.support.tables)."""

from __future__ import annotations

import numpy as np


def unit_vectors(n: int, topics=None, seed: int = 0) -> np.ndarray:
    """Unit vectors; papers of one topic (when given) lie near a common direction."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(scale=0.3, size=(n, 16))
    if topics is not None:
        centres = rng.normal(size=(max(topics) + 2, 16))
        vectors += centres[np.asarray(topics)]
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


# abstracts of two topics (optimal transport, graph neural networks) and an outlier
TRANSPORT = [
    "Optimal transport with the Wasserstein distance: we propose a Sinkhorn method for optimal "
    "transport where $\\alpha$ controls entropy. Code: https://github.com/someone/otcode",
    "Entropic optimal transport and Wasserstein barycenters via Sinkhorn iterations give a "
    "\\textit{coupling} of measures",
    "Sliced Wasserstein distances approximate optimal transport couplings between measures",
]
GRAPHS = [
    "Graph neural networks use message passing over the nodes and edges of a graph "
    "(see www.graphsite.org/paper)",
    "Message passing graph neural networks suffer oversmoothing on graphs with node features",
    "Expressive graph neural networks beyond message passing for node classification",
]
OUTLIER = ["Quantum annealing schedules for combinatorial scheduling"]
