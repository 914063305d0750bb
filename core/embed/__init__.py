"""Embeddings: the model, how it runs, and the vectors kept on disk."""
