"""``chunkscope tune``: search splitters and retrieval settings for the Pareto front of quality against cost.

``core.cli.main`` calls :func:`register` with its subparsers, as it does
:mod:`core.cli.evaluate`'s. The space is given as ``evaluate``'s sweep is
(``--splitter A,B``, ``--set``, ``--sweep [SPLITTER.]PARAM=V,V``, read by
:mod:`core.evaluation.sweep`) plus lists of retrieval modes, alphas, fusions, top_k values and what a
hierarchy returns; with none of the first three, the default space of :mod:`core.evaluation.tune_space`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from core.cli.args import parse_assignments, run_standalone
from core.cli.config import add_llm_option
from core.cli.corpus import add_engine_arguments, embedder_for, engine_from_args, load_paths, splitter_names
from core.cli.output import StderrProgress, format_table, print_json
from core.errors import ConfigError
from core.evaluation.cross_validation import validation_summary
from core.evaluation.folds import DEFAULT_FOLDS, FOLD_KINDS
from core.evaluation.tune import CONTEXT_CAPS, COSTS, QUALITIES, SEARCHES, TuneBudget
from core.evaluation.tune_space import (
    DEFAULT_ALPHAS,
    DEFAULT_BUDGETS,
    DEFAULT_FUSIONS,
    DEFAULT_MODES,
    DEFAULT_RETURNS,
    DEFAULT_TOP_KS,
    DEFAULT_VIEWS,
    EMBED_VIEWS,
    HIERARCHIES,
    SENTENCE_GRID,
    TuneSpace,
    default_specs,
    hierarchy_sizes,
    recommended_note,
    retrieval_values,
)
from core.evaluation.with_extractors import held_out_sentence, held_out_with_extractors
from core.query.retrieval import SCOPES


def _listed(values: Sequence[Any]) -> str:
    return ",".join(str(value) for value in values)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``tune`` to the chunkscope CLI."""
    tune = subparsers.add_parser(
        "tune", help="Search splitter and retrieval settings for the Pareto front of quality against cost."
    )
    tune.add_argument("paths", nargs="+", metavar="PATH", help="Files or directories to load.")
    tune.add_argument("--queries", required=True, help="JSON file of {query, doc, excerpts} entries.")
    tune.add_argument("--splitter", default=None, help="Splitter names to try, as NAME,NAME (default: the default splitter, hierarchical).")
    tune.add_argument(
        "--set", action="append", default=[], metavar="[SPLITTER.]K=V", help="A fixed splitter parameter."
    )
    tune.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="[SPLITTER.]PARAM=V,V,...",
        help="Values of a declared number, choice or switch to try (repeatable), as for evaluate --sweep. "
        "Default: chunk_size=128,256,512,1024 and chunk_overlap=0,64 where the splitter has them; with no "
        "splitter, sweep or setting named, the default space (sentence sizes, hierarchical chunks of "
        f"{hierarchy_sizes()} tokens, LlamaIndex's SentenceSplitter at its defaults).",
    )
    # Retrieval settings cost a ranking each once a configuration is embedded: the default tries them all.
    tune.add_argument(
        "--modes", default=_listed(DEFAULT_MODES), metavar="M,M", help="Retrieval modes to try: dense, bm25, hybrid."
    )
    tune.add_argument(
        "--alphas", default=_listed(DEFAULT_ALPHAS), metavar="A,A", help="Hybrid weights of the dense score to try."
    )
    tune.add_argument("--top-ks", default=_listed(DEFAULT_TOP_KS), metavar="K,K", help="top_k values to try.")
    tune.add_argument(
        "--fusions",
        default=_listed(DEFAULT_FUSIONS),
        metavar="F,F",
        help="Hybrid fusions to try: relative_score (min-max weighted), reciprocal_rank.",
    )
    tune.add_argument(
        "--returns",
        default=_listed(DEFAULT_RETURNS),
        metavar="R,R",
        help="What a hierarchical splitter's retrieval returns, to try: chunks, parents, merged (others: chunks).",
    )
    tune.add_argument(
        "--context-budgets",
        default=_listed(DEFAULT_BUDGETS),
        metavar="N,N",
        help="returns=parents: the context budgets to try, in model tokens per query (0: none; "
        "see the retrieval's context_budget).",
    )
    tune.add_argument(
        "--views",
        default=_listed(DEFAULT_VIEWS),
        metavar="V,V",
        help="What the embedding model reads, to try: loaded (every key the loader shows), text (the chunk alone), "
        "title, title+section (the document's title and the section path the chunk starts in), loaded+section.",
    )
    tune.add_argument(
        "--scope", choices=SCOPES, default="corpus", help="Retrieve from the corpus or the query's document."
    )
    tune.add_argument("--metric", choices=list(QUALITIES), default="mrr", help="The quality to maximise.")
    tune.add_argument("--cost", choices=list(COSTS), default="context_tokens", help="The cost to minimise.")
    tune.add_argument(
        "--search",
        choices=SEARCHES,
        default="auto",
        help="exhaustive: every configuration on every query; halving: successive halving on a growing query "
        "sample; auto: exhaustive up to 20,000 (configuration, query) pairs.",
    )
    tune.add_argument(
        "--eta",
        type=int,
        default=2,
        help="Halving: keep the best 1/eta of the configurations each round, and every one not clearly worse than "
        "the round's best (by 2 standard errors, question by question).",
    )
    tune.add_argument("--keep", type=int, default=8, help="Halving: configurations measured on every query.")
    tune.add_argument(
        "--seed",
        type=int,
        default=0,
        help="Folds by question: the shuffle (halving samples the questions in a fixed order, dealt over documents).",
    )
    tune.add_argument(
        "--folds-by",
        choices=FOLD_KINDS,
        default="document",
        help="Cut the questions into folds by document (a held-out fold asks about unseen documents) or by "
        'question. A "fold" on every entry of the queries file is used instead. With questions about one '
        "document only, folds are by question (and the output says so).",
    )
    tune.add_argument(
        "--folds", type=int, default=DEFAULT_FOLDS, help="How many folds (fewer when there are fewer documents)."
    )
    tune.add_argument(
        "--context-cap",
        choices=list(CONTEXT_CAPS),
        default="none",
        help="; ".join(f"{name}: {text}" for name, text in CONTEXT_CAPS.items()) + ". Default none.",
    )
    tune.add_argument(
        "--without-default",
        action="store_true",
        help=f"Leave out the recommended configuration (hierarchical {hierarchy_sizes(HIERARCHIES[:1])}, parents, "
        "hybrid: the default one), otherwise always measured as the yardstick.",
    )
    tune.add_argument("--model", default=None, help="Path of a local sentence-transformers model (default: packaged).")
    add_engine_arguments(tune)
    (budget,) = TuneBudget.params()
    tune.add_argument(
        "--budget",
        type=float,
        default=budget.default,
        metavar="MINUTES",
        help=f"{budget.help} Default {budget.default:g}. The front so far is printed and saved; so on Ctrl-C.",
    )
    tune.add_argument(
        "--save",
        default=None,
        metavar="PATH",
        help=f"Write the result as JSON here (a stopped search writes it to {INTERRUPTED_FILE} when not given).",
    )
    _extractor_arguments(tune)
    tune.add_argument("--quiet", action="store_true", help="Print no progress on stderr.")
    tune.add_argument("--format", choices=("json", "table"), default="table")
    tune.set_defaults(func=cmd_tune)


def _extractor_arguments(tune: argparse.ArgumentParser) -> None:
    """``--compare-extractors`` and where its extractors come from: ``--config``, ``--extractor``, ``--llm``."""
    tune.add_argument(
        "--compare-extractors",
        action="store_true",
        help="Once the search is done, score its pick with the metadata extractors (of --config, or --extractor) "
        "and without them, as evaluate --compare-extractors does: in sample, with context tokens and the llm_* "
        "extractors' requests and tokens (a rerun is answered from the reply cache). Not a dimension of the search.",
    )
    tune.add_argument(
        "--config",
        metavar="FILE",
        help="A saved configuration whose extractors, LLM and metadata settings --compare-extractors uses (its "
        "splitter and retrieval are not: the search chooses them).",
    )
    tune.add_argument(
        "--extractor",
        action="append",
        default=[],
        metavar="NAME[:K=V,...]",
        help="A metadata extractor for --compare-extractors (repeatable; replaces --config's).",
    )
    add_llm_option(tune, "The LLM the llm_* extractors ask")


INTERRUPTED_FILE = "chunkscope-tune-partial.json"


def build_space(args: argparse.Namespace) -> TuneSpace:
    """The space the arguments describe, every value checked (nothing is loaded yet).

    With no splitter, sweep or setting named, the default space of :mod:`core.evaluation.tune_space`.
    """
    from core.evaluation.sweep import plan_sweeps, sweepable_params
    from core.splitters import SPLITTERS

    if not args.splitter and not args.sweep and not args.set:
        specs = default_specs({cls.name for cls in SPLITTERS})
    else:
        names = splitter_names(args)
        grid: dict[str, Any] = parse_assignments(args.sweep, "--sweep")
        if not args.sweep:
            # The classic sizes and overlaps, for each chosen splitter that declares them.
            for name in names:
                declared = {spec.name for spec in sweepable_params(SPLITTERS.get_class(name))}
                for param, values in SENTENCE_GRID.items():
                    if param in declared:
                        grid[f"{name}.{param}"] = ",".join(str(value) for value in values)
        specs = plan_sweeps(names, parse_assignments(args.set, "--set"), grid)
    return TuneSpace(
        tuple(specs),
        tuple(retrieval_values("mode", args.modes)),
        tuple(retrieval_values("alpha", args.alphas)),
        tuple(retrieval_values("top_k", args.top_ks)),
        tuple(retrieval_values("fusion", args.fusions)),
        tuple(retrieval_values("returns", args.returns)),
        view_names(args.views),
        tuple(retrieval_values("context_budget", args.context_budgets)),
    )


def view_names(text: str) -> tuple[str, ...]:
    """``"loaded,title+section"`` -> its EMBED view names, each checked."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    for name in names:
        if name not in EMBED_VIEWS:
            raise ConfigError(f"--views: {name!r} is not a view (known: {', '.join(EMBED_VIEWS)})")
    return names


def cmd_tune(args: argparse.Namespace) -> int:
    """Check the space, then load, then embed: a bad argument fails before the model loads."""
    from core.evaluation.evaluate import references
    from core.evaluation.queries import load_queries
    from core.evaluation.tune import tune

    space = build_space(args)
    space.check()
    compared = _compared_pipeline(args)
    budget = TuneBudget.from_params({"budget_minutes": args.budget}).seconds()
    engine = engine_from_args(args)
    setups = space.setups()
    queries = load_queries(args.queries)
    documents = load_paths(args.paths)
    from core.evaluation.query_checks import check_queries

    for warning in check_queries(documents, queries).warnings:  # an unloaded name, a repeated excerpt
        print(f"chunkscope: warning: {warning}", file=sys.stderr)
    references(documents, queries)  # a missing excerpt fails before anything is embedded
    progress = None if args.quiet else StderrProgress()
    needs = any(mode != "bm25" for mode in space.modes)
    if progress is not None:
        progress(
            0.0,
            f"{len(space.arms(setups))} configurations"
            + recommended_note(space, not args.without_default)
            + (", loading the embedding model" if needs and engine.kind == "local" else ""),
        )
    result = tune(
        documents,
        queries,
        space,
        embedder=embedder_for(args, needs=needs, engine=engine),
        scope=args.scope,
        quality=args.metric,
        cost=args.cost,
        search=args.search,
        eta=args.eta,
        keep=args.keep,
        seed=args.seed,
        folds_by=args.folds_by,
        folds=args.folds,
        include_default=not args.without_default,
        context_cap=args.context_cap,
        budget=budget,
        report=progress,
        engine=engine,
        with_extractors=compared,
    )
    if progress is not None:
        progress.close()
    data = result.to_dict()
    held = held_out_with_extractors(data)
    if held is not None:
        data["extractors_held_out"] = held
    saved = args.save or (INTERRUPTED_FILE if result.stopped else None)
    if saved:
        with open(saved, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
    if result.stopped:
        why = "the budget was spent" if result.stopped == "budget" else "interrupted"
        print(
            f"chunkscope: stopped ({why}): {len(result.rows)} of {result.space_size} configurations measured; "
            f"the front so far is below and in {saved}",
            file=sys.stderr,
        )
    for skipped in result.skipped:  # refused by the documents (e.g. metadata longer than its chunk_size)
        print(f"chunkscope: warning: skipped {skipped['config']}: {skipped['reason']}", file=sys.stderr)
    if args.format == "json":
        print_json(data)
    else:
        _print_tables(result, data)
    return 130 if result.stopped == "interrupted" else 0


def _print_tables(result: Any, data: dict[str, Any]) -> None:
    """The front, the held-out summary, and the pick with / without extractors (when compared)."""
    print(
        f"Pareto front: {QUALITIES[result.quality]} (in sample, mean over folds) against {COSTS[result.cost].lower()} "
        f"({result.search}, {len(result.rows)} configurations, {result.queries} queries)"
    )
    print(format_table(table_rows(result.front_rows(), result.quality)))
    for line in validation_summary(data, QUALITIES[data["quality"]]):
        print(line)
    if result.extractors:
        print()
        print("The pick with / without extractors (in sample, every question):")
        print(format_table([{k: v for k, v in row.items() if k not in ("row", "hit_curve")} for row in result.extractors]))
        if "extractors_held_out" in data:
            print(held_out_sentence(data["extractors_held_out"]))


def _compared_pipeline(args: argparse.Namespace) -> Any:
    """The configuration whose extractors ``--compare-extractors`` runs (None without it); its options alone are refused."""
    from core.cli.corpus import extractors_from_args, saved_config

    pipeline = extractors_from_args(args, saved_config(args))
    if not args.compare_extractors:
        if pipeline is not None:
            raise ConfigError("--config, --extractor and --llm are for --compare-extractors: add it, or leave them out")
        return None
    if pipeline is None or not pipeline.extractors:
        raise ConfigError("--compare-extractors needs extractors: give --extractor, or a --config that has them")
    return pipeline


def table_rows(rows: Sequence[dict[str, Any]], quality: str) -> list[dict[str, Any]]:
    """The quality's mean over folds and its spread, the metrics over all questions, then the costs.

    Every score here is in sample (the questions took part in choosing the front); only the nested estimate
    that :func:`core.evaluation.cross_validation.validation_summary` prints is held out.
    """
    metrics = ("hit_rate", "mrr", "recall")
    costs = ("context_tokens", "nodes", "embed_tokens", "embed_seconds")
    table = []
    for row in rows:
        shown: dict[str, Any] = {"config": row["config"], f"{quality} fold mean (in sample)": row["fold_mean"]}
        shown["spread"] = row["fold_spread"]
        shown.update({f"{metric} (in sample)": row[metric] for metric in metrics})
        shown.update({column: row[column] for column in costs})
        # Chunks past the model's window are embedded truncated: their share, so a reader sees it.
        share = row.get("truncated_share")
        shown["truncated"] = f"{share:.0%}" if share else ""
        table.append(shown)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    return run_standalone(register, argv)


if __name__ == "__main__":
    sys.exit(main())
