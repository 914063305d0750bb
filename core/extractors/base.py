"""What every metadata extractor shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from core.params import Configurable
from core.schema import Document


@dataclass(frozen=True)
class Extractor(Configurable):
    """Reads a document and returns document-level metadata keys.

    Extractors run offline: no model, no download. ``keys`` lists the metadata
    keys :meth:`extract` returns (the names LlamaIndex's extractors use), so the
    app can show them before anything runs.
    """

    keys: ClassVar[tuple[str, ...]] = ()
    # False: reads a whole document before the split (extract); True: runs on the split's nodes
    # (core.extractors.llm, LlamaIndex's node-level extractors), after it.
    node_level: ClassVar[bool] = False

    def extract(self, document: Document) -> dict[str, Any]:
        raise NotImplementedError

    def llamaindex(self) -> str | None:
        """The LlamaIndex extractor (it calls an LLM) that writes the same keys, as Python; None if it has none."""
        return None
