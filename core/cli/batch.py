"""``chunkscope batch``: one configuration over a corpus, on a process pool or on Ray.

``core.cli.main`` calls :func:`register` with its subparsers (as it does ``core.cli.query``).
The pipeline options (``--config``, ``--splitter``, ``--set``, ...) are the ones
``chunkscope split`` takes, read by the same code.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from core.batch import ENGINES, PART_BYTES, PART_ROWS, BatchInterrupted, OutputWriteError, Progress, run_batch
from core.batch.command_line import batch_commands
from core.cli.config import pipeline_options
from core.cli.output import StderrProgress
from core.errors import ConfigError

# sysexits.h's EX_IOERR: the output cannot be written (the inputs were fine).
OUTPUT_ERROR = 74
EXIT_CODES = """exit codes:
  0    done (files that failed are listed in the report)
  2    a usage or configuration error; nothing was run
  74   the output cannot be written (read-only, disk full): one line names the path;
       the temporary files are removed and the manifest is consistent: rerun with --resume
  130  Ctrl-C (SIGINT), 143 SIGTERM: the workers stop, what arrived is written, the report
       says complete: false; rerun with --resume to finish"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``batch`` to the chunkscope CLI."""
    batch = subparsers.add_parser(
        "batch",
        help="Split a corpus with one configuration: nodes to Parquet, statistics to a report.",
        description=textwrap.fill(
            "Apply a configuration to every input and write OUT/nodes/part-*.parquet (one row per node), "
            "OUT/manifest.jsonl and OUT/report.json + report.html. A file that fails is listed in the "
            "report and skipped.",
            width=100,
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    batch.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="Files, directories (recursive), globs ('docs/**/*.md'), or lists of paths: @paths.txt or paths.parquet.",
    )
    pipeline_options(batch)
    batch.add_argument(
        "--out",
        "-o",
        metavar="DIR_OR_URI",
        help="Output folder: a local path or a URI pyarrow opens (s3://bucket/prefix, gs://..., file://...); "
        "required except with --plan.",
    )
    batch.add_argument(
        "--plan",
        action="store_true",
        help="Say what the configuration's LLM extractors would send over the inputs (calls, prompt tokens, the "
        "largest prompt against the model's window), splitting every file here as a worker would, then stop: "
        "nothing is written and no request is sent.",
    )
    batch.add_argument("--engine", choices=ENGINES, default="local", help="local: a process pool; ray: Ray Data.")
    batch.add_argument(
        "--workers",
        type=int,
        default=None,
        help="Worker processes / Ray workers, one CPU each (default: the cores; Ray: its CPUs).",
    )
    batch.add_argument(
        "--ray-address", default=None, metavar="ADDR", help="Join this Ray cluster instead of a local one."
    )
    batch.add_argument(
        "--embed",
        nargs="?",
        const="default",
        default=None,
        metavar="MODEL_PATH",
        help="Add an embedding column (the packaged model, or a local model folder).",
    )
    batch.add_argument(
        "--resume", action="store_true", help="Keep inputs already written (unchanged files) and do the rest."
    )
    batch.add_argument("--overwrite", action="store_true", help="Replace an earlier output in DIR.")
    batch.add_argument(
        "--content-ids",
        action="store_true",
        help="Document and node ids from the text alone, so identical files share them (for deduplication); "
        "by default they also hash each file's path inside its input folder, unique across the corpus.",
    )
    batch.add_argument(
        "--metrics",
        action="store_true",
        help="Also measure every node: model tokens of its EMBED view (embed_tokens) and lint flags (flags) as "
        "columns, each file's chunk metrics (coverage, overlap, mid-sentence, ...) in the report; several "
        "times the cost of splitting.",
    )
    batch.add_argument("--part-rows", type=int, default=PART_ROWS, help="Rows per part file at most.")
    batch.add_argument("--part-mb", type=float, default=PART_BYTES / 2**20, help="Text MiB per part file at most.")
    batch.add_argument("--quiet", "-q", action="store_true", help="No progress line.")
    batch.set_defaults(func=cmd_batch)


def cmd_batch(args: argparse.Namespace) -> int:
    from core.cli.config import config_from_args

    config = config_from_args(args)
    if args.plan:
        return _plan(args, config)
    if not args.out:
        raise ConfigError("batch needs --out DIR (where the nodes and the report go), or --plan to only count")
    line = None if args.quiet else StderrProgress()
    try:
        result = run_batch(
            args.inputs,
            config,
            args.out,
            engine=args.engine,
            workers=args.workers,
            ray_address=args.ray_address,
            embed=args.embed,
            resume=args.resume,
            overwrite=args.overwrite,
            content_ids=args.content_ids,
            metrics=args.metrics,
            part_rows=args.part_rows,
            part_bytes=int(args.part_mb * 2**20),
            progress=_progress_line(line) if line else None,
        )
    except BatchInterrupted as stop:
        if line:
            line.close()
        print(
            f"chunkscope: interrupted ({stop.signal.name}) after {stop.result.processed:,} files; "
            f"the output is consistent, rerun with --resume to finish",
            file=sys.stderr,
        )
        return 128 + int(stop.signal)
    except OutputWriteError as failure:
        if line:
            line.close()
        print(f"chunkscope: {failure}; {_after_write_failure(args.out)}", file=sys.stderr)
        return OUTPUT_ERROR
    if line:
        line.close()
    corpus = result.report["corpus"]
    print(
        f"{corpus['files_ok']:,} files ({result.skipped:,} kept from before), {corpus['nodes']:,} nodes, "
        f"{corpus['files_failed']:,} failed; {len(result.report['parts'])} parts in {result.out}",
        file=sys.stderr,
    )
    if result.report.get("llm") is not None:
        from core.extractors.llm import spend_sentence

        # Over every file the report covers (with --resume, the kept files as they were recorded).
        print(f"  {spend_sentence(result.report['llm'])}", file=sys.stderr)
    if corpus["files_sharing_content"]:
        print(
            f"  {corpus['files_sharing_content']:,} files share their content with another "
            f"({corpus['shared_contents']:,} distinct contents; see same_content in report.json)",
            file=sys.stderr,
        )
    for failure in result.report["failed"][:10]:
        print(f"  failed: {failure['source']}: {failure['reason']}", file=sys.stderr)
    if len(result.report["failed"]) > 10:
        print(f"  ... and {len(result.report['failed']) - 10:,} more in report.json", file=sys.stderr)
    return 0


def _plan(args: argparse.Namespace, config: Any) -> int:
    """``--plan``: the LLM extractors' calls and prompt tokens over the inputs, printed; nothing sent or written."""
    from core.batch import expand_inputs
    from core.batch.llm_plan import plan_corpus
    from core.extractors.llm import llm_extractors

    if not llm_extractors(config.extractors):
        print("chunkscope: this configuration has no LLM extractors: a run sends no request", file=sys.stderr)
        return 0
    inputs = expand_inputs(args.inputs)
    line = None if args.quiet else StderrProgress()
    show = (lambda done, total: line(done / total, f"counting prompts: files {done:,}/{total:,}")) if line else None
    planned = plan_corpus(inputs, config, progress=show)
    if line:
        line.close()
    for text in planned.lines(config.llm):
        print(text)
    for source, reason in planned.failed[:10]:
        print(f"  failed: {source}: {reason}", file=sys.stderr)
    if len(planned.failed) > 10:
        print(f"  ... and {len(planned.failed) - 10:,} more", file=sys.stderr)
    return 0


def _progress_line(progress: StderrProgress):  # noqa: ANN202 - run_batch's progress callback
    """run_batch's counts as one progress line: files, megabytes, nodes, MB/s, elapsed, time left, failures."""

    def show(state: Progress) -> None:
        progress(_done_share(state), progress_text(state))

    return show


def progress_text(state: Progress) -> str:
    """``files 120/330 · 6.1/21.2 MB · nodes 8,002 · 2.40 MB/s · 0:03 elapsed · 0:07 left``."""
    done = state.files_done + state.files_skipped
    left = state.seconds_left
    digits = 2 if state.bytes_total < 10e6 else 1
    return (
        f"files {done:,}/{state.files_total:,} · {state.bytes / 1e6:,.{digits}f}/{state.bytes_total / 1e6:,.{digits}f} MB"
        f" · nodes {state.nodes:,}"
        + (f" · {state.mb_per_s:,.2f} MB/s" if state.bytes else "")
        + f" · {_clock(state.seconds)} elapsed"
        + (f" · {_clock(left)} left" if left is not None and done < state.files_total else "")
        + (f" · {state.failed:,} failed" if state.failed else "")
    )


def _done_share(state: Progress) -> float:
    """The bar's share: by bytes (a file's work follows its size), by files while no size is known."""
    if state.bytes_total:
        return min(state.bytes / state.bytes_total, 1.0)
    done = state.files_done + state.files_skipped
    return done / state.files_total if state.files_total else 1.0


def _clock(seconds: float) -> str:
    """``0:07``, ``12:30``, ``3:02:10``."""
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


__all__: list[Any] = ["register", "cmd_batch", "batch_commands"]


def _after_write_failure(out: str) -> str:
    """What to do next: resume what the manifest recorded, or, where none could be written, fix the folder."""
    from pathlib import Path

    from core.batch.manifest import MANIFEST

    if (Path(out) / MANIFEST).is_file():
        return "what is written is recorded in the manifest: make room (or fix the folder) and rerun with --resume"
    return "nothing was written: pick a folder you can write to (or make room) and run again"
