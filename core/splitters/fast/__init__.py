"""The splitters' fast paths, each kept apart from the plain rule it must equal.

A splitter's own file states its rule; it calls in here only for speed. Every
module opens with the measurement that justifies it (from benchmarks/NOTES.md)
and names the plain rule it reproduces and the property test that holds the
two equal.
"""
