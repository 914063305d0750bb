"""``chunkscope evaluate``: score retrieval against reference excerpts (hit rate, MRR, IoU), for one
configuration, several, a sweep, or with the extractors against without them.

``core.cli.main`` calls :func:`register` with its subparsers; the handler raises ChunkScopeError for user errors
(the caller prints it as one line on stderr and exits with 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from core.cli.args import parse_assignments, run_standalone
from core.cli.config import add_llm_option
from core.cli.corpus import (
    add_corpus_arguments,
    add_engine_arguments,
    embedder_for,
    engine_from_args,
    extractors_from_args,
    load_paths,
    retrieval_from_args,
    saved_config,
    splitter_names,
)
from core.cli.output import StderrProgress, format_table, print_json
from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.query.retrieval import SCOPES


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``evaluate`` to the chunkscope CLI."""
    evaluate = subparsers.add_parser(
        "evaluate", help="Score retrieval against reference excerpts (hit rate, MRR, IoU)."
    )
    add_corpus_arguments(evaluate)
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


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Check every setting, then load, then embed: a bad argument fails before the model loads."""
    from core.evaluation.evaluate import references
    from core.evaluation.queries import load_queries
    from core.evaluation.sweep import configurations, plan_sweeps, sweep_evaluations

    saved, pipeline, retrieval = _evaluation_settings(args)
    if saved is not None and saved.postprocessors:
        names = ", ".join(post.name for post in saved.postprocessors)
        print(f"chunkscope: note: the configuration's postprocessors ({names}) are not scored: evaluate measures "
              "what retrieval returns before any postprocessor", file=sys.stderr)
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


def _sweep_grid(args: argparse.Namespace) -> dict[str, str]:
    """``--sweep`` (and ``--sweep-sizes``/``--sweep-overlaps``) as {[splitter.]param: "v,v"}."""
    grid = parse_assignments(args.sweep, "--sweep")
    if args.sweep_sizes:
        grid["chunk_size"] = args.sweep_sizes
    if args.sweep_overlaps:
        grid["chunk_overlap"] = args.sweep_overlaps
    return grid


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


def main(argv: Sequence[str] | None = None) -> int:
    return run_standalone(register, argv)


if __name__ == "__main__":
    raise SystemExit(main())
