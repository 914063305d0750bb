"""code compat=llamaindex against LlamaIndex's CodeSplitter, every grammar: how often the chunks differ.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/code_compat_fidelity.py [--generated 100] [--garbage 200] [--seed 0]

For each grammar of :data:`core.splitters.code_llamaindex.LANGUAGE_GRAMMARS`, a child process takes the texts
``benchmarks/code_engine_stress.py`` draws (the repository's own files in that language, ``--generated`` files of
the language's constructs, ``--garbage`` hypothesis-drawn texts) and a ``max_chars`` drawn from 20 to 2,000 per
text, and compares:

- the rule, :func:`core.splitters.code_llamaindex.llamaindex_code_chunks` (the text of each chunk: its span's
  slice, or the text it carries);
- ``CodeSplitter(language=..., parser=..., max_chars=...).split_text(text)``, called directly.

A grammar's C may crash (tree-sitter-bash does on some garbage): where it kills a grammar's process, that grammar
runs again with each text compared in a child of its own (CodeSplitter's parse first). Counted
per grammar: texts, refused (both refuse: the root's first child an ERROR), crashed (CodeSplitter's parse killed
its child, and the rule's parse, in a child of its own, too), chunks, and texts whose chunk lists differ in any way
or where only one of the two refused or crashed (``differ``). The texts the rule and CodeSplitter
split differently are kept in ``--keep``. Exit status 0 only when ``differ`` is 0 everywhere and no grammar's
process died or ran past ``--seconds``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def compare_grammar(  # noqa: PLR0913  the command line's options, passed on
    language: str, generated_count: int, garbage_count: int, seed: int, keep: Path, own: int, per_text: bool
) -> dict:
    from code_engine_stress import garbage_strategy, generated, own_files
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed
    from llama_index.core.node_parser import CodeSplitter

    from core.errors import WorkLimitError
    from core.runtime.bounded import map_bounded
    from core.splitters.code_llamaindex import llamaindex_code_chunks, tree_sitter_parser

    rng = random.Random(f"{seed}-{language}")
    parser = tree_sitter_parser(language)
    counts = {"texts": 0, "refused": 0, "crashed": 0, "chunks": 0, "differ": 0}

    def their_chunks(text: str, max_chars: int) -> list[str] | str:
        try:
            return CodeSplitter(language=language, parser=parser, max_chars=max_chars).split_text(text)
        except ValueError as exc:
            return f"refused: {exc}"

    def our_chunks(text: str, max_chars: int) -> list[str] | str:
        try:
            chunks = llamaindex_code_chunks(text, language, max_chars)
        except ValueError as exc:
            return f"refused: {exc}"
        return [text[c.start : c.end] if c.text is None else c.text for c in chunks]

    def bounded(work: Any, text: str) -> Any:
        """``work(text)`` in a child of its own: "crashed" where the grammar's C kills it."""
        try:
            return map_bounded(work, [text], file_names=[language], what="parse", seconds=120, memory_mb=None)[0]
        except WorkLimitError:
            return "crashed"

    def compare(text: str) -> None:
        max_chars = rng.choice((rng.randint(20, 200), rng.randint(200, 2000)))
        counts["texts"] += 1
        if not per_text:
            both: Any = (their_chunks(text, max_chars), our_chunks(text, max_chars))
        else:
            both = bounded(lambda text: (their_chunks(text, max_chars), our_chunks(text, max_chars)), text)
        if both == "crashed":  # which parse crashed: CodeSplitter's ran first; the rule's, on its own
            theirs, ours = "crashed", bounded(lambda text: our_chunks(text, max_chars), text)
        else:
            theirs, ours = both
        if isinstance(theirs, str) and ours == theirs:
            counts["crashed" if theirs == "crashed" else "refused"] += 1
        elif ours == theirs:
            counts["chunks"] += len(theirs)
        else:
            counts["differ"] += 1
            kept = keep / f"{language}-{seed}-differ-{counts['differ']}.json"
            kept.write_text(json.dumps({"language": language, "max_chars": max_chars, "text": text}))

    for _, text in own_files(language, own):
        compare(text)
    for _ in range(generated_count):
        compare(generated(language, rng))

    @hypothesis_seed(seed)
    @settings(max_examples=max(garbage_count, 1), database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(garbage_strategy(language))
    def garbage(text: str) -> None:
        compare(text)

    if garbage_count:
        garbage()
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--generated", type=int, default=100, help="generated files per grammar")
    parser.add_argument("--garbage", type=int, default=200, help="hypothesis-drawn texts per grammar")
    parser.add_argument("--own", type=int, default=400, help="the repository's own files per grammar, at most")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=600, help="a grammar's child is killed after this")
    parser.add_argument("--languages", default="", help="comma-separated grammars (default: all)")
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "code_compat_fidelity")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--per-text", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.keep.mkdir(parents=True, exist_ok=True)
    if args.child:
        counts = compare_grammar(
            args.child, args.generated, args.garbage, args.seed, args.keep, args.own, args.per_text
        )
        print(json.dumps(counts))
        return 0

    from core.splitters.code_llamaindex import LANGUAGE_GRAMMARS

    languages = args.languages.split(",") if args.languages else list(LANGUAGE_GRAMMARS)
    columns = ("texts", "refused", "crashed", "chunks", "differ")
    print(f"{'grammar':<11} " + " ".join(f"{c:>8}" for c in columns) + f" {'seconds':>7}  outcome")
    totals = dict.fromkeys(columns, 0)
    failed = False
    for language in languages:
        started = time.monotonic()
        command = [sys.executable, __file__, "--child", language, "--keep", str(args.keep),
                   *(f"--{name}={getattr(args, name)}" for name in ("generated", "garbage", "own", "seed"))]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.seconds, check=False)
            if done.returncode < 0:  # a grammar's C killed the process: again, the same texts, each in a child
                done = subprocess.run(
                    [*command, "--per-text"], capture_output=True, text=True, timeout=args.seconds, check=False
                )
        except subprocess.TimeoutExpired:
            print(f"{language:<11} {'':>44} {time.monotonic() - started:7.1f}  stopped after {args.seconds:g} s")
            failed = True
            continue
        seconds = time.monotonic() - started
        if done.returncode != 0:
            print(f"{language:<11} {'':>44} {seconds:7.1f}  child ended with {done.returncode}: {done.stderr[-300:]!r}")
            failed = True
            continue
        counts = json.loads(done.stdout.strip().splitlines()[-1])
        for column in columns:
            totals[column] += counts[column]
        failed = failed or counts["differ"] > 0
        outcome = "identical" if counts["differ"] == 0 else f"{counts['differ']} texts differ (kept in {args.keep})"
        print(f"{language:<11} " + " ".join(f"{counts[c]:>8}" for c in columns) + f" {seconds:7.1f}  {outcome}")
    print(f"{'total':<11} " + " ".join(f"{totals[c]:>8}" for c in columns))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
