"""The ``chunkscope`` subcommands for queries: ``postprocessors``, ``query`` and ``evaluate``.

``core.cli.main`` calls :func:`register` with its subparsers; each subcommand sets
``func`` to a handler taking the parsed arguments and returning the exit code.
Handlers raise ChunkScopeError for user errors (bad file, bad parameter,
missing model); the caller prints it as one line on stderr and exits with 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from core.cli.args import parse_assignments, parse_named, run_standalone
from core.cli.config import add_llm_option, llm_from_args
from core.cli.output import StderrProgress, json_text
from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.query.retrieval import SCOPES
from core.runtime.parallel import ENGINES


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
    evaluate.add_argument(
        "--config",
        metavar="FILE",
        help="A saved configuration (chunkscope config, the app's download): its splitter and parameters, loader "
        "options, extractors and LLM, metadata settings and retrieval settings; --splitter, --set, --extractor, "
        "--llm and the retrieval options given go on top.",
    )
    evaluate.add_argument("--queries", required=True, help="JSON file of {query, doc, excerpts} entries.")
    evaluate.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="[SPLITTER.]PARAM=V,V,...",
        help="Values of a declared numeric or choice parameter to sweep (repeatable; every combination runs). "
        "With several --splitter names, a plain PARAM applies to each splitter that declares it.",
    )
    evaluate.add_argument("--sweep-sizes", default=None, metavar="N,N,...", help="Same as --sweep chunk_size=N,N.")
    evaluate.add_argument(
        "--sweep-overlaps", default=None, metavar="N,N,...", help="Same as --sweep chunk_overlap=N,N."
    )
    evaluate.add_argument(
        "--scope",
        choices=SCOPES,
        default="corpus",
        help="Retrieve for each query from the whole corpus, or only from its own document.",
    )
    add_engine_arguments(evaluate)
    evaluate.add_argument(
        "--extractor",
        action="append",
        default=[],
        metavar="NAME[:K=V,...]",
        help="A metadata extractor every configuration runs, as 'chunkscope split' runs it (repeatable): its keys "
        "are in the EMBED view that is embedded and searched.",
    )
    add_llm_option(evaluate, "The LLM the llm_* extractors ask")
    evaluate.add_argument(
        "--compare-extractors",
        action="store_true",
        help="Score each configuration twice, with the --extractor steps and without any: rows 'with extractors' "
        "and 'without extractors', each with its context tokens and the llm_* extractors' requests and tokens "
        "(replies in the cache are not asked again: a rerun sends 0 requests).",
    )
    evaluate.add_argument(
        "--strict",
        action="store_true",
        help="Exit 2 when the queries file has a warning: a document name that is not loaded, an excerpt found "
        "more than once. Without it these are warnings: evaluating part of a corpus with its whole queries file "
        "is ordinary, so an unloaded name is not an error by itself.",
    )
    evaluate.add_argument("--quiet", action="store_true", help="Print no progress on stderr.")
    evaluate.add_argument("--format", choices=("json", "table"), default="table")
    evaluate.set_defaults(func=cmd_evaluate)


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--engine``, ``--workers`` and ``--ray-address``: where the configurations are evaluated."""
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="Where configurations are evaluated: local (this process, one after another), processes (a process "
        "pool) or ray (Ray tasks). Every engine gives the same results.",
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="Processes / Ray CPUs for processes or ray (default: the cores)."
    )
    parser.add_argument(
        "--ray-address", default=None, metavar="ADDR", help="Join this Ray cluster (e.g. auto) instead of a local Ray."
    )


def engine_from_args(args: argparse.Namespace):  # noqa: ANN201 - a core.runtime.parallel.Engine
    """The checked Engine of ``--engine/--workers/--ray-address`` (a bad combination is a ConfigError)."""
    from core.runtime.parallel import Engine

    return Engine(args.engine, args.workers, args.ray_address)


def _add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Files or directories to load.")
    parser.add_argument(
        "--splitter",
        default=None,
        help="Splitter name (default: hierarchical, else character); for evaluate, several as NAME,NAME.",
    )
    parser.add_argument("--set", action="append", default=[], metavar="K=V", help="A splitter parameter (repeatable).")
    # Choices and help come from RetrievalSettings' declaration; retrieval_from_args validates. No default here:
    # an option not given takes evaluate's --config value, else the declared default.
    types = {"int": int, "float": float}
    for spec in RetrievalSettings.params():  # --top-k, --mode, --alpha, --fusion, --returns, --merge-ratio
        flag = "--" + spec.name.replace("_", "-")
        parser.add_argument(
            flag,
            type=types.get(spec.kind, str),
            choices=spec.choices,
            default=None,
            help=f"{spec.help} (default: {spec.default})",
        )
    parser.add_argument(
        "--model", default=None, help="Path of a local sentence-transformers model (default: packaged)."
    )


# -- handlers -------------------------------------------------------------------------


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


def retrieval_from_args(args: argparse.Namespace, base: RetrievalSettings | None = None) -> RetrievalSettings:
    """The retrieval settings the options give (``--top-k``, ``--mode``, …) on top of ``base`` (a configuration's;
    else the declared defaults), checked by their declaration."""
    values = (base or RetrievalSettings()).to_params()
    given = {spec.name: getattr(args, spec.name) for spec in RetrievalSettings.params()}
    return RetrievalSettings.from_params({**values, **{name: value for name, value in given.items() if value is not None}})


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


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Check every setting, then load, then embed: a bad argument fails before the model loads."""
    from core.evaluation.evaluate import references
    from core.evaluation.queries import load_queries
    from core.evaluation.sweep import configurations, plan_sweeps, sweep_evaluations

    saved, pipeline, retrieval = _evaluation_settings(args)
    engine = engine_from_args(args)
    queries = load_queries(args.queries)
    specs = plan_sweeps(*_splitter_settings(args, saved), _sweep_grid(args))
    configurations(specs)  # every combination built (and checked) once before any document is read
    documents = load_paths(args.paths) if saved is None else _load_with(args.paths, saved)
    from core.evaluation.query_checks import check_queries

    checked = check_queries(documents, queries)
    for warning in checked.warnings:
        print(f"chunkscope: warning: {warning}", file=sys.stderr)
    if checked.warnings and args.strict:
        print("chunkscope: error: the queries file has warnings and --strict is set", file=sys.stderr)
        return 2
    references(documents, queries)  # a missing excerpt fails before anything is embedded
    progress = None if args.quiet else StderrProgress()
    if progress is not None and retrieval.mode != "bm25" and engine.kind == "local":
        progress(0.0, "Loading the embedding model")
    embedder = embedder_for(args, needs=retrieval.mode != "bm25", engine=engine)
    work = {"embedder": embedder, "retrieval": retrieval, "scope": args.scope, "report": progress, "engine": engine}
    if args.compare_extractors:
        from core.evaluation.with_extractors import compare_extractors

        results = compare_extractors(documents, queries, specs, pipeline, **work)
    else:
        from core.documents import prepare_documents

        prepared = prepare_documents(documents, pipeline) if pipeline is not None else documents
        results = sweep_evaluations(prepared, queries, specs, pipeline=pipeline, **work)
    if progress is not None:
        progress.close()
    report = evaluation_report(results)
    report["query_warnings"] = checked.warnings
    for warning in report["warnings"]:
        print(f"chunkscope: warning: {warning}", file=sys.stderr)
    if args.format == "json":
        print_json(report)
        return 0
    print(format_table(_table_rows(report["rows"])))
    print()
    print(format_table(report["per_document"]))
    if report["skipped_queries"]:
        print(f"skipped {len(report['skipped_queries'])} queries whose document was not loaded")
    return 0


def _evaluation_settings(args: argparse.Namespace) -> tuple[Any, Any, RetrievalSettings]:
    """The saved configuration (``--config``), the pipeline whose steps every configuration runs (None: no step),
    and the retrieval settings: each with the options on top."""
    saved = saved_config(args)
    pipeline = extractors_from_args(args, saved)
    if args.compare_extractors and (pipeline is None or not pipeline.extractors):
        raise ConfigError(
            "--compare-extractors compares the extractors with none: give at least one --extractor "
            "(or a --config that has extractors)"
        )
    return saved, pipeline, retrieval_from_args(args, saved.retrieval if saved is not None else None)


def evaluation_report(results: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The JSON report of labelled evaluations: rows, every query's and every document's scores, warnings."""
    rows, per_query, per_document, warnings = [], [], [], []
    for label, result in results:
        rows.append({"config": label, **result.to_row()})
        per_query.extend({"config": label, **vars(score)} for score in result.per_query)
        per_document.extend({"config": label, **row} for row in result.per_document())
        warnings.extend(f"{label}: {warning}" for warning in result.warnings)
    skipped = results[0][1].skipped_queries if results else []
    return {
        "rows": rows,
        "per_query": per_query,
        "per_document": per_document,
        "skipped_queries": skipped,
        "warnings": warnings,
    }


def extractors_from_args(args: argparse.Namespace, saved: Any = None) -> Any:
    """The PipelineConfig whose extractors, LLM and metadata settings every configuration runs (its splitter is not
    used): ``saved`` (``--config``) with ``--extractor`` and ``--llm`` on top, or those alone; None without either.
    An llm_* extractor without an LLM's base_url and model is refused."""
    if not args.extractor and saved is None:
        if args.llm:
            raise ConfigError("--llm is for the llm_* extractors: give them with --extractor")
        return None
    from core.config import PipelineConfig
    from core.extractors import EXTRACTORS

    base = saved if saved is not None else PipelineConfig()
    extractors = tuple(
        EXTRACTORS.create(name, **params) for name, params in (parse_named(text, "--extractor") for text in args.extractor)
    )
    llm = llm_from_args(args, base.llm) if args.llm else base.llm
    return base.replace(extractors=extractors or base.extractors, llm=llm)


def saved_config(args: argparse.Namespace) -> Any:
    """The configuration of ``--config FILE`` as saved (None without it); the options go on top where they are read."""
    if not getattr(args, "config", None):
        return None
    from core.cli.config import read_config_file

    return read_config_file(args.config)


def _splitter_settings(args: argparse.Namespace, saved: Any) -> tuple[list[str], dict[str, Any]]:
    """The splitter names and their settings: ``--splitter`` (else the saved configuration's splitter, else the
    default), the saved splitter's parameters where its name is chosen, ``--set`` on top."""
    names = splitter_names(args) if args.splitter or saved is None else [saved.splitter.name]
    settings: dict[str, Any] = {}
    if saved is not None and saved.splitter.name in names:
        name = saved.splitter.name
        settings.update({f"{name}.{key}": value for key, value in saved.splitter.to_params(only_changed=True).items()})
    settings.update(parse_assignments(args.set, "--set"))
    return names, settings


def _load_with(paths: Sequence[str], config: Any) -> list[Any]:
    """The documents, each file read with the saved configuration's options for its loader."""
    from core.documents import load_documents

    documents = load_documents(paths, config)
    if not documents:
        raise ConfigError("no documents were loaded from " + ", ".join(paths))
    return documents


def _table_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for the text table: the hit curve as hit@1..k columns, the label only when there are several."""
    flat = []
    for row in rows:
        out = {k: v for k, v in row.items() if k != "hit_curve" and (k != "config" or len(rows) > 1)}
        out.update({f"hit@{k}": value for k, value in enumerate(row["hit_curve"], start=1)})
        flat.append(out)
    return flat


# -- parsing ----------------------------------------------------------------------------


def parse_post(text: str) -> tuple[str, dict[str, str]]:
    """``NAME:key=value,key=value`` -> (name, params) for ``--post``."""
    return parse_named(text, "--post")


# -- work ----------------------------------------------------------------------------------


def _splitter_choice(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    from core.config_parts import default_splitter_name

    name = args.splitter or default_splitter_name()
    return name, parse_assignments(args.set, "--set")


def splitter_names(args: argparse.Namespace) -> list[str]:
    """The ``--splitter`` names (``NAME,NAME``), else the default one."""
    names = [name.strip() for name in (args.splitter or "").split(",") if name.strip()]
    return names or [_splitter_choice(args)[0]]


def _sweep_grid(args: argparse.Namespace) -> dict[str, str]:
    """``--sweep`` (and ``--sweep-sizes``/``--sweep-overlaps``) as {[splitter.]param: "v,v"}."""
    grid = parse_assignments(args.sweep, "--sweep")
    if args.sweep_sizes:
        grid["chunk_size"] = args.sweep_sizes
    if args.sweep_overlaps:
        grid["chunk_overlap"] = args.sweep_overlaps
    return grid


def _splitter_instance(name: str, params: dict[str, str]):  # noqa: ANN202
    from core.splitters import get_splitter

    return get_splitter(name, **params)


def load_paths(paths: Sequence[str]):  # noqa: ANN202
    from core.loaders.cache import load  # a file read before (OCR, PDF, Office) comes from disk

    documents = []
    for path in paths:
        documents.extend(load(path))
    if not documents:
        raise ConfigError("no documents were loaded from " + ", ".join(paths))
    return documents


def _split(args: argparse.Namespace):  # noqa: ANN202
    name, params = _splitter_choice(args)
    splitter = _splitter_instance(name, params)
    return splitter.split(load_paths(args.paths))


def embedder_for(args: argparse.Namespace, *, needs: bool, engine: Any = None):  # noqa: ANN202
    """The model, loaded here; for workers (an engine other than local) a ref each loads it by (its folder is checked)."""
    if not needs:
        return None
    if engine is not None and engine.kind != "local":
        from core.evaluation.jobs import EmbedderRef
        from core.tokens.tokenizers import default_model_path

        if args.model is None:
            default_model_path()  # no packaged model fails here, not in every worker
        elif not os.path.isdir(args.model):
            raise ConfigError(f"--model: no model folder at {args.model}")
        return EmbedderRef(os.path.abspath(args.model) if args.model else None)
    from core.embed.embedder import get_embedder

    return get_embedder(args.model)


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


def print_json(data: Any) -> None:
    # Strict JSON: a score that is not a number is null, never NaN (core.cli.output.json_text).
    sys.stdout.write(json_text(data) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    return run_standalone(register, argv)


if __name__ == "__main__":
    sys.exit(main())
