"""The ``chunkscope`` subcommands ``postprocessors`` (the node postprocessors and their parameters) and ``query``
(retrieve nodes for one query and trace every postprocessor stage); ``evaluate`` is :mod:`core.cli.evaluate`.

``core.cli.main`` calls :func:`register` with its subparsers; each subcommand sets
``func`` to a handler taking the parsed arguments and returning the exit code.
Handlers raise ChunkScopeError for user errors (bad file, bad parameter,
missing model); the caller prints it as one line on stderr and exits with 2.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from core.cli.args import parse_named, run_standalone
from core.cli.corpus import add_corpus_arguments, embedder_for, load_paths, retrieval_from_args, splitter_choice
from core.cli.output import print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``postprocessors`` and ``query`` to the chunkscope CLI."""
    listing = subparsers.add_parser("postprocessors", help="List the node postprocessors and their parameters.")
    listing.add_argument("--format", choices=("json", "table"), default="table")
    listing.set_defaults(func=cmd_postprocessors)

    query = subparsers.add_parser("query", help="Retrieve nodes for a query and trace every postprocessor stage.")
    add_corpus_arguments(query)
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


def cmd_postprocessors(args: argparse.Namespace) -> int:
    from core.postprocessors import describe_postprocessors

    listing = describe_postprocessors()
    if args.format == "json":
        print_json(listing)
        return 0
    for entry in listing:
        status = "" if entry["available"] else f"  [unavailable: {entry['unavailable_reason']}]"
        print(f"{entry['name']}: {entry['summary']}{status}")
        for spec in entry["params"]:
            print(f"    {spec['name']} ({spec['kind']}, default {spec['default']!r}): {spec['help']}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from core.query.chain import build_chain, chain_needs_embedder, run_query

    retrieval = retrieval_from_args(args)
    steps = [parse_post(text) for text in args.post]
    chain = build_chain(steps)  # a bad step fails before loading anything
    nodes = _split(args)
    embedder = embedder_for(args, needs=chain_needs_embedder(retrieval.mode, chain))
    result = run_query(nodes, args.query, retrieval, embedder=embedder, postprocessors=steps)
    if args.format == "json":
        print_json(result.to_dict())
        return 0
    print(f"query: {result.query}  ({result.mode}, top {result.top_k} of {result.candidates} nodes)")
    for rank, item in enumerate(result.retrieved, start=1):
        print(f"  {rank}. {item.id}  score {_score(item.score)}  {_preview(item.node.text)}")
    for stage in result.stages:
        print(f"{stage.name} {json.dumps(stage.params)}: {len(stage.nodes_in)} -> {len(stage.nodes_out)} nodes")
        for item in stage.nodes_in + [n for n in stage.nodes_out if n.id in {a.id for a in stage.added}]:
            print(f"    {item.id}: {stage.fate(item.id)}")
    return 0


def parse_post(text: str) -> tuple[str, dict[str, str]]:
    """``NAME:key=value,key=value`` -> (name, params) for ``--post``."""
    return parse_named(text, "--post")


def _split(args: argparse.Namespace):  # noqa: ANN202
    name, params = splitter_choice(args)
    splitter = _splitter_instance(name, params)
    return splitter.split(load_paths(args.paths))


def _splitter_instance(name: str, params: dict[str, str]):  # noqa: ANN202
    from core.splitters import get_splitter

    return get_splitter(name, **params)


def _score(score: float | None) -> str:
    return "none" if score is None else f"{score:.4f}"


def _preview(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def main(argv: Sequence[str] | None = None) -> int:
    return run_standalone(register, argv)


if __name__ == "__main__":
    raise SystemExit(main())
