"""The split's nodes as files: JSONL and JSON (``Node.to_dict``), CSV and Parquet (one row per node).

The Export page's downloads and ``chunkscope split --format`` write these; a JSONL line reads back with
``Node.from_dict``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from core.schema import Node

__all__ = ["TABLE_COLUMNS", "nodes_to_csv", "nodes_to_json", "nodes_to_jsonl", "nodes_to_parquet"]

# Columns of the CSV and Parquet exports; nested values (metadata, relationships) are JSON text.
TABLE_COLUMNS = (
    "id",
    "doc_id",
    "start_char",
    "end_char",
    "text",
    "metadata",
    "relationships",
    "excluded_llm_metadata_keys",
    "excluded_embed_metadata_keys",
    "metadata_template",
    "metadata_separator",
    "text_template",
)
_JSON_COLUMNS = {"metadata", "relationships", "excluded_llm_metadata_keys", "excluded_embed_metadata_keys"}


def nodes_to_jsonl(nodes: Sequence[Node]) -> str:
    """One JSON object per line (``Node.to_dict``); each line reads back with ``Node.from_dict``."""
    return "".join(json.dumps(node.to_dict(), ensure_ascii=False, default=str) + "\n" for node in nodes)


def nodes_to_json(nodes: Sequence[Node]) -> str:
    """A JSON array of nodes."""
    return json.dumps([node.to_dict() for node in nodes], ensure_ascii=False, indent=2, default=str)


def _rows(nodes: Sequence[Node]) -> list[dict[str, Any]]:
    rows = []
    for node in nodes:
        data = node.to_dict()
        rows.append(
            {
                column: json.dumps(data[column], ensure_ascii=False, default=str)
                if column in _JSON_COLUMNS
                else data[column]
                for column in TABLE_COLUMNS
            }
        )
    return rows


def nodes_to_csv(nodes: Sequence[Node]) -> str:
    """One row per node; metadata and relationships as JSON text."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=TABLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_rows(nodes))
    return buffer.getvalue()


def nodes_to_parquet(nodes: Sequence[Node]) -> bytes:
    """One row per node, in a Parquet file (pyarrow); metadata and relationships as JSON text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows(nodes)
    schema = pa.schema(
        [(column, pa.int64() if column in ("start_char", "end_char") else pa.string()) for column in TABLE_COLUMNS]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()
