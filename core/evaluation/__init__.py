"""Evaluation and tuning: queries and excerpts, retrieval scores, sweeps, cross-validated tuning."""
