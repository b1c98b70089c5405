"""Abstracts shared by the ingest tests."""

from pipeline.config import IngestConfig

CFG = IngestConfig()
A1 = "We propose a simple method for learning sparse representations of graphs."
A2 = "Diffusion models are trained to reverse a gradual noising process on images."
A3 = "We study the sample complexity of offline reinforcement learning with function approximation."
A4 = "Optimal transport distances compare probability measures through couplings of mass."
