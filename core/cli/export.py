"""``chunkscope export``: the LlamaIndex or LangChain script the Export page gives, for files named on the shell.

Run as ``python script.py``, the script reads those files as the app reads them,
splits them and leaves the chunks in a top-level ``nodes`` (LlamaIndex) or
``chunks`` (LangChain), so a person or a CI job can check an export without the
app. The configuration comes from ``--config`` (or ``--from-url``) and the usual
options, exactly as ``chunkscope split`` builds it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.config import config_from_args, pipeline_options
from core.cli.output import write
from core.errors import LoadError

TARGETS = ("llamaindex", "langchain")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``export`` to the chunkscope CLI."""
    export = subparsers.add_parser(
        "export",
        help="Print the LlamaIndex or LangChain script that rebuilds these files' nodes.",
        description=(
            "Print the script the Export page gives for FILE...: run as 'python script.py', it reads the files "
            "as ChunkScope does, splits them with the framework and leaves the chunks in 'nodes' (LlamaIndex) "
            "or 'chunks' (LangChain)."
        ),
    )
    export.add_argument("paths", nargs="+", metavar="FILE", help="Files or directories the script reads.")
    export.add_argument("--to", required=True, choices=TARGETS, help="The framework the script uses.")
    pipeline_options(export)
    export.add_argument("--post", action="append", default=[], metavar="NAME[:K=V,...]", help="A postprocessor step.")
    export.add_argument("--retrieval-set", action="append", default=[], metavar="K=V", help="top_k, mode or alpha.")
    export.add_argument("--from-url", metavar="URL", help="Start from a shared link's query parameters.")
    export.add_argument("--output", "-o", metavar="FILE", help="Write here instead of standard output.")
    export.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from core.loaders import loader_for
    from core.output.export import langchain_snippet, llamaindex_snippet

    for path in map(Path, args.paths):
        if not path.exists():
            raise LoadError(path.name, "file not found")
        if path.is_file():
            loader_for(path.name)  # an unsupported file is refused now, not when the script runs
    config = config_from_args(args)
    snippet = llamaindex_snippet if args.to == "llamaindex" else langchain_snippet
    write(snippet(config, list(args.paths)), args.output)
    return 0
