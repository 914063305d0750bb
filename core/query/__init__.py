"""The query simulation: retrieval (dense, BM25, hybrid), the postprocessor chain, and what its trace shows."""
