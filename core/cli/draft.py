"""``chunkscope draft-questions``: the configured LLM drafts evaluation questions, saved as a queries file.

The documents are read as ``chunkscope evaluate`` reads them, so the file names the queries carry are the ones
it looks for. What will be sent (calls and prompt tokens) is said on stderr before anything is sent; with
``--plan`` nothing is. The questions kept and those dropped, with why, are said after
(:mod:`core.evaluation.drafting`); the file goes to ``--output`` or standard output.
"""

from __future__ import annotations

import argparse
import sys

from core.cli.args import parse_assignments
from core.cli.config import add_llm_option, llm_from_args
from core.cli.output import StderrProgress, write
from core.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``draft-questions`` to the chunkscope CLI."""
    draft = subparsers.add_parser(
        "draft-questions",
        help="Have the LLM draft evaluation questions about the documents and save a queries file for evaluate.",
        description=(
            "The LLM is shown passages of each document and drafts questions, each with the passage's words that "
            "answer it; only questions whose excerpt is found once in the document are kept. The file is the "
            "queries file 'chunkscope evaluate --queries' reads. Drafted questions are easier than real ones."
        ),
    )
    draft.add_argument("paths", nargs="+", metavar="PATH", help="Files or directories to load.")
    add_llm_option(draft, "The LLM that drafts the questions")
    draft.add_argument(
        "--draft-set",
        action="append",
        default=[],
        metavar="K=V",
        help="A drafting parameter (repeatable): passages=, questions=, passage_chars=, max_tokens=, ... "
        "(see 'chunkscope reference').",
    )
    draft.add_argument("--plan", action="store_true", help="Say what would be sent, and send nothing.")
    draft.add_argument("--quiet", action="store_true", help="Print no progress on stderr.")
    draft.add_argument("--output", "-o", metavar="FILE", help="Write the queries file here instead of standard output.")
    draft.set_defaults(func=cmd_draft)


def cmd_draft(args: argparse.Namespace) -> int:
    from core.cli.corpus import load_paths
    from core.evaluation.drafting import QuestionDrafter, draft_questions, plan
    from core.evaluation.query_labels import queries_json

    drafter = QuestionDrafter.from_params(parse_assignments(args.draft_set, "--draft-set"))
    connection = llm_from_args(args)
    if not connection.configured:
        raise ConfigError("draft-questions needs an LLM: --llm base_url=URL --llm model=NAME")
    documents = load_paths(args.paths)
    print(f"chunkscope: {plan(documents, drafter).sentence(connection)}", file=sys.stderr, flush=True)
    if args.plan:
        return 0
    progress = None if args.quiet else StderrProgress()
    report = None if progress is None else (lambda done, total: progress(done / total, f"Drafting: {done} of {total} calls"))
    drafted = draft_questions(documents, drafter, connection, report=report)
    if progress is not None:
        progress.close()
    print(f"chunkscope: {drafted.sentence()}", file=sys.stderr, flush=True)
    if not drafted.queries:
        raise ConfigError("no drafted question was kept, so no queries file was written (see the reasons above)")
    write(queries_json(drafted.queries) + "\n", args.output)
    return 0
