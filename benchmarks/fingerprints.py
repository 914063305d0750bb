"""Fingerprints of what the benchmarked splitters return, to show an optimisation changed nothing.

    .venv/bin/python benchmarks/fingerprints.py [--mb 1]

For each configuration: the SHA-1 of every node's ``(start_char, end_char)`` and
the SHA-1 of every node's full ``to_dict()`` (text, id, metadata, view settings,
relationships). Run before and after a change; identical lines mean identical nodes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from contestants import read_input  # noqa: E402

CONFIGS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("corpus.txt", "recursive", {"chunk_size": 1000, "chunk_overlap": 200}),
    ("corpus.md", "recursive", {"language": "markdown"}),
    ("corpus.txt", "character", {"chunk_size": 1000, "chunk_overlap": 200}),
    ("corpus.txt", "sentence", {"chunk_size": 256, "chunk_overlap": 20, "tokenizer": "model"}),
    ("corpus.txt", "token", {"chunk_size": 256, "chunk_overlap": 20, "tokenizer": "model"}),
    ("corpus.md", "markdown", {}),
    ("corpus.md", "markdown", {"chunk_size": 1000}),
    ("corpus.md", "markdown", {"heading_level": 2}),
)


def main() -> int:
    from core.schema import Document
    from core.splitters import get_splitter

    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=1)
    args = parser.parse_args()
    for source, name, params in CONFIGS:
        document = Document(text=read_input(source, args.mb), metadata={"file_name": source})
        nodes = get_splitter(name, **params).split([document])
        spans = hashlib.sha1(repr([(n.start_char, n.end_char) for n in nodes]).encode()).hexdigest()[:12]
        full = hashlib.sha1(
            json.dumps([n.to_dict() for n in nodes], sort_keys=True, default=str).encode()
        ).hexdigest()[:12]
        print(f"{name:10} {source:11} {json.dumps(params):60} nodes={len(nodes):6} spans={spans} nodes={full}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
