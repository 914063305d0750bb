"""Measuring a split: chunk metrics, lint, boundary diffs, and the summaries pages draw."""
