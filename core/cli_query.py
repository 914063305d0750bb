"""The ``chunkscope`` subcommands for queries: ``postprocessors``, ``query`` and ``evaluate``.

``core.cli`` calls :func:`register` with its subparsers; each subcommand sets
``func`` to a handler taking the parsed arguments and returning the exit code.
Handlers raise ChunkScopeError for user errors (bad file, bad parameter,
missing model); the caller prints it as one line on stderr and exits with 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from core.cli_args import parse_assignments, parse_named
from core.errors import ChunkScopeError, ConfigError
from core.retrieval import RETRIEVAL_MODES

USER_ERROR = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``postprocessors``, ``query`` and ``evaluate`` to the chunkscope CLI."""
    listing = subparsers.add_parser("postprocessors", help="List the node postprocessors and their parameters.")
    listing.add_argument("--format", choices=("json", "table"), default="table")
    listing.set_defaults(func=cmd_postprocessors)

    query = subparsers.add_parser("query", help="Retrieve nodes for a query and trace every postprocessor stage.")
    _add_corpus_arguments(query)
    query.add_argument("--query", required=True, help="The query text.")
    query.add_argument(
        "--post",
        action="append",
        default=[],
        metavar="NAME:key=value,key=value",
        help="A postprocessor step (repeatable, run in order).",
    )
    query.add_argument("--format", choices=("json", "text"), default="json")
    query.set_defaults(func=cmd_query)

    evaluate = subparsers.add_parser(
        "evaluate", help="Score retrieval against reference excerpts (hit rate, MRR, IoU)."
    )
    _add_corpus_arguments(evaluate)
    evaluate.add_argument("--queries", required=True, help="JSON file of {query, doc, excerpts} entries.")
    evaluate.add_argument("--sweep-sizes", default=None, metavar="N,N,...", help="chunk_size values to sweep.")
    evaluate.add_argument("--sweep-overlaps", default=None, metavar="N,N,...", help="chunk_overlap values to sweep.")
    evaluate.add_argument("--format", choices=("json", "table"), default="table")
    evaluate.set_defaults(func=cmd_evaluate)


def _add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Files or directories to load.")
    parser.add_argument("--splitter", default=None, help="Splitter name (default: sentence, else character).")
    parser.add_argument("--set", action="append", default=[], metavar="K=V", help="A splitter parameter (repeatable).")
    parser.add_argument("--top-k", type=int, default=5, help="How many nodes retrieval returns.")
    parser.add_argument("--mode", choices=RETRIEVAL_MODES, default="dense", help="Retrieval: dense, bm25 or hybrid.")
    parser.add_argument("--alpha", type=float, default=0.5, help="Hybrid weight of the dense score (0-1).")
    parser.add_argument(
        "--model", default=None, help="Path of a local sentence-transformers model (default: packaged)."
    )
    parser.add_argument(
        "--backend",
        choices=("auto", "onnx", "torch"),
        default=None,
        help="What runs the embedding model: ONNX Runtime, torch, or auto (ONNX where it runs; "
        "default: $CHUNKSCOPE_EMBED_BACKEND, else auto).",
    )


# -- handlers -------------------------------------------------------------------------


def cmd_postprocessors(args: argparse.Namespace) -> int:
    from core.postprocessors import describe_postprocessors

    listing = describe_postprocessors()
    if args.format == "json":
        _print_json(listing)
        return 0
    for entry in listing:
        status = "" if entry["available"] else f"  [unavailable: {entry['unavailable_reason']}]"
        print(f"{entry['name']}: {entry['summary']}{status}")
        for spec in entry["params"]:
            print(f"    {spec['name']} ({spec['kind']}, default {spec['default']!r}): {spec['help']}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from core.query import build_chain, run_query

    steps = [parse_post(text) for text in args.post]
    build_chain(steps)  # a bad step fails before loading anything
    nodes = _split(args)
    embedder = _embedder(args, needs=args.mode != "bm25" or any(n == "sentence_embedding_optimizer" for n, _ in steps))
    result = run_query(
        nodes, args.query, embedder=embedder, top_k=args.top_k, mode=args.mode, alpha=args.alpha, postprocessors=steps
    )
    if args.format == "json":
        _print_json(result.to_dict())
        return 0
    print(f"query: {result.query}  ({result.mode}, top {result.top_k} of {result.candidates} nodes)")
    for rank, item in enumerate(result.retrieved, start=1):
        print(f"  {rank}. {item.id}  score {_score(item.score)}  {_preview(item.node.text)}")
    for stage in result.stages:
        print(f"{stage.name} {json.dumps(stage.params)}: {len(stage.nodes_in)} -> {len(stage.nodes_out)} nodes")
        for item in stage.nodes_in + [n for n in stage.nodes_out if n.id in {a.id for a in stage.added}]:
            print(f"    {item.id}: {stage.fate(item.id)}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from core.evaluation import evaluate, load_queries
    from core.sweep import check_sweepable, sweep, sweep_values

    queries = load_queries(args.queries)
    name, params = _splitter_choice(args)
    documents = _load(args.paths)
    embedder = _embedder(args, needs=args.mode != "bm25")
    common = {"embedder": embedder, "top_k": args.top_k, "mode": args.mode, "alpha": args.alpha}
    per_query: list[dict[str, Any]] = []
    skipped: list[str] = []
    if args.sweep_sizes or args.sweep_overlaps:
        check_sweepable(name)
        base = _splitter_instance(name, params)
        sizes = sweep_values(args.sweep_sizes, "--sweep-sizes") if args.sweep_sizes else [base.chunk_size]
        overlaps = (
            sweep_values(args.sweep_overlaps, "--sweep-overlaps") if args.sweep_overlaps else [base.chunk_overlap]
        )
        base_params = {k: v for k, v in params.items() if k not in ("chunk_size", "chunk_overlap")}
        rows = sweep(documents, queries, name, sizes, overlaps, base_params=base_params, **common)
    else:
        result = evaluate(documents, queries, name, params, **common)
        rows = [result.to_row()]
        per_query = [vars(score) for score in result.per_query]
        skipped = result.skipped_queries
    if args.format == "json":
        _print_json({"rows": rows, "per_query": per_query, "skipped_queries": skipped})
        return 0
    print(format_table(rows))
    if skipped:
        print(f"skipped {len(skipped)} queries whose document was not loaded")
    return 0


# -- parsing ----------------------------------------------------------------------------


def parse_post(text: str) -> tuple[str, dict[str, str]]:
    """``NAME:key=value,key=value`` -> (name, params) for ``--post``."""
    return parse_named(text, "--post")


# -- work ----------------------------------------------------------------------------------


def _splitter_choice(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    from core.splitters import SPLITTERS

    name = args.splitter or ("sentence" if "sentence" in SPLITTERS else "character")
    return name, parse_assignments(args.set, "--set")


def _splitter_instance(name: str, params: dict[str, str]):  # noqa: ANN202
    from core.splitters import get_splitter

    return get_splitter(name, **params)


def _load(paths: Sequence[str]):  # noqa: ANN202
    from core.loaders import load

    documents = []
    for path in paths:
        documents.extend(load(path))
    if not documents:
        raise ConfigError("no documents were loaded from " + ", ".join(paths))
    return documents


def _split(args: argparse.Namespace):  # noqa: ANN202
    name, params = _splitter_choice(args)
    splitter = _splitter_instance(name, params)
    return splitter.split(_load(args.paths))


def _embedder(args: argparse.Namespace, *, needs: bool):  # noqa: ANN202
    if not needs:
        return None
    from core.embeddings import get_embedder

    return get_embedder(args.model, backend=args.backend)


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "(no rows)"
    columns = list(dict.fromkeys(key for row in rows for key in row))
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    widths = [max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)]
    lines = ["  ".join(column.ljust(width) for column, width in zip(columns, widths, strict=True))]
    lines += ["  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)


def _score(score: float | None) -> str:
    return "none" if score is None else f"{score:.4f}"


def _preview(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run these subcommands on their own (``python -m core.cli_query``); ``core.cli`` is the real entry."""
    parser = argparse.ArgumentParser(prog="chunkscope")
    subparsers = parser.add_subparsers(dest="command", required=True)
    register(subparsers)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ChunkScopeError as exc:
        print(f"chunkscope: {exc}", file=sys.stderr)
        return USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
