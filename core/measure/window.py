"""The embedding model's window and the names of size units: constants a report needs without the metrics' imports.

:mod:`core.measure.metrics` (and the pages) use them from here; a batch's driver writes its report
with them and never imports the metrics (their tokenizers and numpy work are the workers').
"""

from __future__ import annotations

DEFAULT_MAX_SEQ_LENGTH = 256  # all-MiniLM-L6-v2
SPECIAL_TOKENS = 2  # [CLS] and [SEP] take two places in the model's window


def unit_name(size_unit: str) -> str:
    """A splitter's size unit as a reader says it: ``model`` -> ``model tokens``."""
    return "model tokens" if size_unit == "model" else size_unit
