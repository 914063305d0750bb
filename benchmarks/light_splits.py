"""What a split in the server's own process can cost on hostile text: first splits against light ones.

    .venv/bin/python benchmarks/light_splits.py [--out FILE]

``core.documents.bounded.split_needs_child`` lets ChunkScope's own splitters run in-process (no fork, no
deadline) on at most ``IN_PROCESS_CHARS`` characters, and on at most ``LIGHT_IN_PROCESS_CHARS`` when the
split is light (``Splitter.split_is_light``: the tokenizer's index of the text is already kept, or the
splitter counts characters). That larger bound is sound only if no light split of that many characters
costs more than the worst first split the smaller bound already allows. This measures both, on texts made
to be slow (generated here, nothing fetched):

- ``cjk``: random CJK ideographs, no punctuation (a token a character, no sentence end anywhere);
- ``symbols``: digits, punctuation, spaces and newlines at random (many short tokens and cut points);
- ``letters``: random lowercase words of 20-90 letters (many WordPiece pieces a word, few words);
- ``unbroken``: one character repeated, no separator at all (the recursive splitter's last level);
- ``prose``: the benchmark's mixed 1 MB input (reST, non-ASCII prose, a large file), repeated to length.

Each case is a fresh interpreter. **first**: ``IN_PROCESS_CHARS`` characters split from nothing at each
chunk size, each time another text of the kind (so each is a first split). **light**: ``LIGHT_IN_PROCESS_CHARS``
characters as the Chunks page meets them: a first view at the largest size, split in a child as the page
does (``split_bounded``: the parent keeps what it adds to the text's tables), the text indexed as the
page's metrics do (``TokenIndex.shared``; nothing for splitters that count characters), then each smaller
size split in this process (a person tuning), each split timed. Reported per split: CPU seconds and the rise of peak RSS over the RSS before it
(``/proc/self/clear_refs`` resets the peak). The verdict compares the largest light split against the
largest first split over every splitter and text. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SPLITTERS = {  # chunk sizes, largest first (the first: the page's first view); overlap a fifth of each
    "sentence": (250, 130, 60, 40),
    "token": (250, 130, 60, 40),
    "recursive": (1000, 200, 100, 50),
    "character": (1000, 200, 100, 50),
}
KINDS = ("cjk", "symbols", "letters", "unbroken", "prose")


def hostile_text(kind: str, length: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    if kind == "cjk":
        return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(length))
    if kind == "symbols":
        return "".join(rng.choice("0123456789.,;:!?- \n") for _ in range(length))
    if kind == "letters":
        words: list[str] = []
        size = 0
        while size < length:
            word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(20, 90)))
            words.append(word)
            size += len(word) + 1
        return " ".join(words)[:length]
    if kind == "unbroken":
        return "x" * length
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT / "tests"))
    from browser_latency import mixed_text

    text = mixed_text(1.0)
    shift = (seed * 7919) % len(text)  # another start for another seed
    text = text[shift:] + text[:shift]
    return (text * (length // len(text) + 1))[:length]


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def _peak_rise(before: float) -> float:
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    return round(peak - before, 1)


def _reset_peak() -> float:
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    return _rss_mb()


def child(splitter_name: str, kind: str, mode: str) -> dict[str, object]:
    from core.documents.bounded import IN_PROCESS_CHARS, LIGHT_IN_PROCESS_CHARS, split_needs_child
    from core.schema import Document
    from core.splitters import get_splitter
    from core.tokens.token_index import TokenIndex

    length = IN_PROCESS_CHARS if mode == "first" else LIGHT_IN_PROCESS_CHARS
    base = hostile_text(kind, length)
    sizes = SPLITTERS[splitter_name]
    splitters = [get_splitter(splitter_name, chunk_size=s, chunk_overlap=s // 5) for s in sizes]
    splitters[0].split([Document(text="Warm up. Two sentences.")])  # imports and the model tokenizer, untimed
    if mode == "light":
        from core.documents.bounded import split_bounded

        document = Document(text=base, metadata={"file_name": "hostile.txt"})
        split_bounded([document], splitters[0])  # the first view: in a child, its tables kept here
        tokenizer = splitters[0].get_tokenizer()
        if tokenizer.name != "characters":
            TokenIndex.shared(tokenizer, base)  # what the page's metrics leave in the server
        splitters = splitters[1:]
    runs = []
    for number, splitter in enumerate(splitters):
        # A first split meets a text nothing has seen: another one each time (equal strings share the kept tables).
        text = base if mode == "light" else hostile_text(kind, length, seed=100 + number)
        document = Document(text=text, metadata={"file_name": "hostile.txt"})
        in_process = not split_needs_child([document], splitter)
        before = _reset_peak()
        started = time.process_time()
        nodes = splitter.split([document])
        runs.append(
            {
                "chunk_size": splitter.chunk_size,
                "cpu_s": round(time.process_time() - started, 3),
                "peak_rise_mb": _peak_rise(before),
                "nodes": len(nodes),
                "in_process": in_process,
            }
        )
        del nodes
    return {"splitter": splitter_name, "kind": kind, "mode": mode, "characters": length, "runs": runs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", nargs=3, metavar=("SPLITTER", "KIND", "MODE"))
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    cases = []
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    for name in SPLITTERS:
        for kind in KINDS:
            for mode in ("first", "light"):
                argv_child = [sys.executable, __file__, "--child", name, kind, mode]
                done = subprocess.run(argv_child, capture_output=True, text=True, env=env, cwd=ROOT, check=True)
                case = json.loads(done.stdout.strip().splitlines()[-1])
                print(json.dumps(case), file=sys.stderr)
                cases.append(case)

    def worst(mode: str, key: str) -> dict[str, object]:
        runs = [(run[key], case["splitter"], case["kind"], run["chunk_size"]) for case in cases if case["mode"] == mode
                for run in case["runs"]]
        value, splitter, kind, size = max(runs)
        return {"value": value, "splitter": splitter, "kind": kind, "chunk_size": size}

    verdict = {key: {"first": worst("first", key), "light": worst("light", key)} for key in ("cpu_s", "peak_rise_mb")}
    holds = all(v["light"]["value"] <= v["first"]["value"] for v in verdict.values())
    light_in_process = all(run["in_process"] for c in cases if c["mode"] == "light" for run in c["runs"])
    result = {
        "started": started,
        "load_average": os.getloadavg(),
        "cases": cases,
        "worst": verdict,
        "light_splits_ran_in_process": light_in_process,
        "light_bound_holds": holds,
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if holds else 1


if __name__ == "__main__":
    raise SystemExit(main())
