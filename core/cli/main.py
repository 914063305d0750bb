"""The ``chunkscope`` command line: split, list components, measure, print configs and scripts, start the app.

Every option that sets a parameter (``--set``, ``--loader-set``, ``--extractor``,
...) takes strings that the component's declared parameters coerce and validate,
so the CLI knows nothing about any particular splitter. A user error prints one
line on stderr (``chunkscope: <file or parameter>: <problem>``) and exits with 2;
``--debug`` shows the traceback instead. ``split`` given several files splits those it can read, names each one
it cannot, and exits with 1.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlencode

from core.cli.args import USER_ERROR
from core.cli.config import config_from_args, pipeline_options
from core.cli.output import json_text, listing, number, write
from core.errors import ChunkScopeError, ConfigError

PROG = "chunkscope"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr, like every other user error."""

    def error(self, message: str) -> NoReturn:
        print(f"{PROG}: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(USER_ERROR)


# ----------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="See and tune how documents are chunked for RAG.")
    parser.add_argument("--debug", action="store_true", help="Show tracebacks instead of one-line errors.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    split = commands.add_parser(
        "split",
        help="Split files into nodes (JSONL: one node per line). A file that cannot be read is named on stderr and "
        "left out; the exit code is then 1.",
    )
    split.add_argument("paths", nargs="+", metavar="PATH", help="Files or directories to load.")
    pipeline_options(split)
    split.add_argument("--format", choices=("jsonl", "json", "csv"), default="jsonl")
    split.add_argument("--output", "-o", metavar="FILE", help="Write here instead of standard output.")
    split.set_defaults(func=cmd_split)

    for name, help_text, func in (
        ("splitters", "List the splitters and their declared parameters.", cmd_splitters),
        ("loaders", "List the loaders, the files they read and their parameters.", cmd_loaders),
        ("extractors", "List the metadata extractors (offline, and llm_* with an LLM) and their parameters.", cmd_extractors),
    ):
        listing = commands.add_parser(name, help=help_text)
        listing.add_argument("--format", choices=("table", "json"), default="table")
        listing.set_defaults(func=func)

    metrics = commands.add_parser(
        "metrics", help="Chunk metrics: sizes, coverage, overlap, mid-sentence cuts, chunks over the model's window."
    )
    metrics.add_argument("paths", nargs="+", metavar="PATH", help="Files or directories to load.")
    pipeline_options(metrics)
    metrics.add_argument("--format", choices=("table", "json"), default="table")
    metrics.set_defaults(func=cmd_metrics)

    config = commands.add_parser("config", help="Print a pipeline configuration built from options (or a link).")
    pipeline_options(config)
    config.add_argument("--post", action="append", default=[], metavar="NAME[:K=V,...]", help="A postprocessor step.")
    config.add_argument("--retrieval-set", action="append", default=[], metavar="K=V", help="top_k, mode or alpha.")
    config.add_argument("--from-url", metavar="URL", help="Start from a shared link's query parameters.")
    config.add_argument("--format", choices=("json", "url"), default="json")
    config.set_defaults(func=cmd_config)

    reference = commands.add_parser(
        "reference", help="Write the reference of every component and parameter (Markdown)."
    )
    reference.add_argument("--output", "-o", metavar="FILE", help="Write here instead of standard output.")
    reference.set_defaults(func=cmd_reference)

    app = commands.add_parser("app", help="Start the web app (streamlit run app.py).")
    app.add_argument("--port", type=int, default=8501)
    app.add_argument("--headless", action="store_true", help="Do not open a browser.")
    app.set_defaults(func=cmd_app)

    from core.cli import export as cli_export  # export: the LlamaIndex or LangChain script for these files (issue 26)

    cli_export.register(commands)
    from core.cli import doctor as cli_doctor  # doctor: which compiled paths run (issue 41)

    cli_doctor.register(commands)
    _register_plugins(commands)
    return parser


def _register_plugins(commands: argparse._SubParsersAction) -> None:
    """Subcommands other modules add (query, postprocessors, evaluate), when they are installed."""
    try:
        from core.cli import query as cli_query
    except ImportError:
        return
    cli_query.register(commands)
    from core.cli import evaluate as cli_evaluate  # evaluate: retrieval scored against reference excerpts

    cli_evaluate.register(commands)
    from core.cli import batch as cli_batch  # batch: a corpus on a process pool or Ray (issue 17)

    cli_batch.register(commands)
    from core.cli import tune as cli_tune  # tune: the Pareto front of quality against cost (issue 15)

    cli_tune.register(commands)
    from core.cli import draft as cli_draft  # draft-questions: the LLM drafts a queries file (issue 46)

    cli_draft.register(commands)


# --------------------------------------------------------------------- commands


def cmd_split(args: argparse.Namespace) -> int:
    from core.documents import load_documents, run_split
    from core.output.node_files import nodes_to_csv, nodes_to_json, nodes_to_jsonl

    config = config_from_args(args)
    # Input from anyone: each load and split runs where a deadline and a memory ceiling can stop it.
    # A file that cannot be read is named and left out; the others are split (exit 1 says some were left out).
    failures: list[tuple[str, Any]] = []
    documents = load_documents(args.paths, config, bounded=True, failures=failures)
    if failures and not documents:
        raise failures[0][1]
    # What the LLM extractors will send, and then sent, goes to stderr: the nodes alone go to the output.
    nodes = run_split(documents, config, bounded=True, report=_say)
    writer: Callable[[Any], str] = {"jsonl": nodes_to_jsonl, "json": nodes_to_json, "csv": nodes_to_csv}[args.format]
    write(writer(nodes), args.output)
    for _path, error in failures:
        print(f"chunkscope: {error} (left out)", file=sys.stderr)
    return 1 if failures else 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def cmd_metrics(args: argparse.Namespace) -> int:
    from core.documents import finish_nodes, load_documents, prepare_documents
    from core.measure.metrics import chunk_metrics

    config = config_from_args(args)
    documents = prepare_documents(load_documents(args.paths, config), config)
    splitter = config.splitter
    nodes = finish_nodes(splitter.split(documents), documents, config.metadata)
    metrics = chunk_metrics(documents, nodes, size_limit=splitter.size_limit, tokenizer=splitter.size_unit)
    data = metrics.to_dict()
    if args.format == "json":
        write(json_text(data) + "\n", None)
        return 0
    rows = [("splitter", splitter.name), ("documents", len(documents))]
    # "tokens" holds sizes in the splitter's unit: the table names that unit, and in characters the
    # row would repeat the characters row under a wrong name.
    unit = splitter.size_unit
    size_label = None if unit == "characters" else "model_tokens" if unit == "model" else str(unit)
    for key, value in data.items():
        if key == "tokens":
            if size_label is None:
                continue
            key = size_label  # noqa: PLW2901 - the row's label, not the data's key
        if isinstance(value, dict) and {"mean", "p95"} <= set(value):
            rows.append((key, ", ".join(f"{stat} {number(v)}" for stat, v in value.items())))
        elif isinstance(value, dict):
            rows.append((key, ", ".join(f"{k} {number(v)}" for k, v in value.items()) or "-"))
        else:
            rows.append((key, number(value)))
    width = max(len(str(key)) for key, _ in rows)
    write("".join(f"{str(key).ljust(width)}  {value}\n" for key, value in rows), None)
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    if args.format == "url":
        write(urlencode(config.to_query_params()) + "\n", None)
    else:
        write(config.to_json() + "\n", None)
    return 0


def cmd_splitters(args: argparse.Namespace) -> int:
    from core.splitters import SPLITTERS

    return listing(SPLITTERS.describe(), args.format)


def cmd_loaders(args: argparse.Namespace) -> int:
    from core.loaders import LOADERS

    return listing(_described_with(LOADERS, "extensions"), args.format)


def cmd_extractors(args: argparse.Namespace) -> int:
    from core.extractors import EXTRACTORS

    return listing(_described_with(EXTRACTORS, "keys"), args.format)


def _described_with(registry: Any, attribute: str) -> list[dict[str, Any]]:
    """``registry.describe()``, each entry with its class's ``attribute`` (a sequence) as a list."""
    values = {cls.name: list(getattr(cls, attribute)) for cls in registry}
    return [{**entry, attribute: values[entry["name"]]} for entry in registry.describe()]


def cmd_reference(args: argparse.Namespace) -> int:
    from core.output.reference import reference_markdown

    text = reference_markdown()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_app(args: argparse.Namespace) -> int:
    app = find_app()
    # ui.launch is `streamlit run app.py` with the first page's imports done before the first visitor comes.
    command = [sys.executable, "-m", "ui.launch", "--server.port", str(args.port)]
    if args.headless:
        command += ["--server.headless", "true"]
    try:
        return subprocess.call(command, cwd=app.parent)
    except KeyboardInterrupt:
        return 130


def find_app() -> Path:
    """app.py beside the package (a source checkout), else in the working directory."""
    candidates = [Path(__file__).resolve().parents[2] / "app.py", Path.cwd() / "app.py"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ConfigError(
        "app.py: not found beside the chunkscope package or in the current directory; run this from a ChunkScope checkout"
    )


# ------------------------------------------------------------------------ main


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0, or 2 for a user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already reported in one line
        return int(exc.code or 0)
    try:
        return int(args.func(args) or 0)
    except ChunkScopeError as exc:
        if args.debug:
            raise
        print(f"{PROG}: {exc}", file=sys.stderr)
        return USER_ERROR
    except BrokenPipeError:  # e.g. piped into head: not an error worth a word
        return 0


if __name__ == "__main__":
    sys.exit(main())
