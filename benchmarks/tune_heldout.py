"""The tuner on questions the project never tuned on: ``chunkscope tune`` at its defaults against LlamaIndex's.

    .venv/bin/python benchmarks/tune_heldout.py            # fetch, tune, print the numbers
    .venv/bin/python benchmarks/tune_heldout.py --fetch    # only fetch and check the documents

**The set.** Ten documentation files from the source distributions of ten PyPI projects (:data:`SOURCES`: the
sdist's URL and SHA-256, the file inside it, the name it is saved under), plus five long pages of the same sdists
that no question is about (:data:`DISTRACTORS`, 151 kB: without them the ten short files make a pool of ~30 large
chunks where every configuration finds nearly everything), fetched at run time into
``benchmarks/data/tune_heldout/`` (git-ignored: third-party text is never committed). The 44 questions in
``benchmarks/tune_heldout_questions.json`` were written by hand for this benchmark after the tuner's defaults
were set, each with one short excerpt copied exactly from its document (checked here: every excerpt occurs once);
``benchmarks/tune_heldout_paraphrased.json`` holds 23 more, worded away from their excerpts (``--questions``).

**The run.** ``chunkscope tune <the fifteen files> --queries <the questions> --format json --save …``: every
default (search space, folds by document, quality MRR, cost context tokens, the default ``--budget``), the packaged
model, one fresh process. Reported from its JSON: the **pick** (:func:`core.evaluation.folds.cross_validate`) with its
hit@5 and MRR held out (each the mean over folds of the fold's mean), the **choice on the training folds scored on each
held-out fold** (the nested estimate: nothing about a held-out fold informed its choice), and on the same folds
**LlamaIndex's** ``SentenceSplitter()`` at its defaults (``llamaindex.sentence``, 1024/200) with the same model
and hybrid retrieval at α 0.5, top 5 (a row of the tune's own space, so the folds are the same). A separate
``chunkscope evaluate --splitter llamaindex.sentence --mode hybrid`` gives LlamaIndex's score over all questions.
Everything goes to ``benchmarks/data/tune_heldout/result.json``; the summary is printed as Markdown.
``--without-distractors`` runs on the ten questioned files alone; arguments after ``--`` go to ``chunkscope tune``
(e.g. ``-- --search halving``), with ``--label`` naming the output files.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "tune_heldout"
QUESTIONS = ROOT / "benchmarks" / "tune_heldout_questions.json"
PYPI = "https://pypi.org/packages/packages/"

# (sdist URL under PYPI, its SHA-256, the file inside it, the name the document is loaded under)
SOURCES = [
    (
        "9a/8e/82a0fe20a541c03148528be8cac2408564a6c9a0cc7e9171802bc1d26985/attrs-26.1.0.tar.gz",
        "d03ceb89cb322a8fd706d4fb91940737b6642aa36998fe130a9bc96c985eff32",
        "attrs-26.1.0/docs/why.md",
        "attrs-why.md",
    ),
    (
        "f8/65/a9611a6ec0a8c88d86e59385da02d68d9533f7e86a05913d20c67be54029/black-26.10.1.tar.gz",
        "5f9f83beae62437e060dafd53d7f1fc327e3d3494f74d72ee5c2b73eb90fc4e7",
        "black-26.10.1/docs/faq.md",
        "black-faq.md",
    ),
    (
        "f8/65/a9611a6ec0a8c88d86e59385da02d68d9533f7e86a05913d20c67be54029/black-26.10.1.tar.gz",
        "5f9f83beae62437e060dafd53d7f1fc327e3d3494f74d72ee5c2b73eb90fc4e7",
        "black-26.10.1/docs/the_black_code_style/current_style.md",
        "black-current-style.md",
    ),
    (
        "45/37/edbf1b0707709013c0cf2e8317e03d97ed29bf4cac709fe328904ae92a38/click-8.5.1.tar.gz",
        "9bbfada76703fd1d784b83eea012e3e8c6a001a876543ef104fa56aaaeb072b4",
        "click-8.5.1/docs/why.md",
        "click-why.md",
    ),
    (
        "45/37/edbf1b0707709013c0cf2e8317e03d97ed29bf4cac709fe328904ae92a38/click-8.5.1.tar.gz",
        "9bbfada76703fd1d784b83eea012e3e8c6a001a876543ef104fa56aaaeb072b4",
        "click-8.5.1/docs/testing.md",
        "click-testing.md",
    ),
    (
        "26/00/35d85dcce6c57fdc871f3867d465d780f302a175ea360f62533f12b27e2b/flask-3.1.3.tar.gz",
        "0ef0e52b8a9cd932855379197dd8f94047b359ca0a78695144304cb45f87c9eb",
        "flask-3.1.3/docs/web-security.rst",
        "flask-web-security.rst",
    ),
    (
        "53/c7/f8d9e2e0e7c1ed8a22a10eeb3b5bf7860bc07d8446c7a978a882c5c8214b/pip-26.3.tar.gz",
        "6c36ae7da8695be67e3cd9f7d87919667ced53f57ce2ede75d89b5912ed2bc4c",
        "pip-26.3/docs/html/topics/caching.md",
        "pip-caching.md",
    ),
    (
        "53/c7/f8d9e2e0e7c1ed8a22a10eeb3b5bf7860bc07d8446c7a978a882c5c8214b/pip-26.3.tar.gz",
        "6c36ae7da8695be67e3cd9f7d87919667ced53f57ce2ede75d89b5912ed2bc4c",
        "pip-26.3/docs/html/topics/secure-installs.md",
        "pip-secure-installs.md",
    ),
    (
        "b1/df/48c586a5fe32a0f01324ee087459e112ebb7224f646c0b5023f5e79e9956/httpx-0.28.1.tar.gz",
        "75e98c5f16b0f35b567856f597f06ff2270a374470a5c2392242528e3e3e42fc",
        "httpx-0.28.1/README.md",
        "httpx-readme.md",
    ),
    (
        "6e/71/3187e0915c305605d00736e81523e4a240e66249579e1556a8475d05ba33/tox-4.67.15.tar.gz",
        "70307cf6cc0a328ca766dc8c20939c697af48d4df2d4bd0c93531eb3be50295d",
        "tox-4.67.15/docs/plugin/howto.rst",
        "tox-plugin-howto.rst",
    ),
]
# Long pages from the same sdists that no question is about: a pool with distractors, as a real corpus has.
DISTRACTORS = [
    (SOURCES[5][0], SOURCES[5][1], "flask-3.1.3/docs/config.rst", "flask-config.rst"),
    (SOURCES[3][0], SOURCES[3][1], "click-8.5.1/docs/options.md", "click-options.md"),
    (SOURCES[6][0], SOURCES[6][1], "pip-26.3/docs/html/user_guide.rst", "pip-user-guide.rst"),
    (SOURCES[1][0], SOURCES[1][1], "black-26.10.1/docs/usage_and_configuration/the_basics.md", "black-the-basics.md"),
    (SOURCES[0][0], SOURCES[0][1], "attrs-26.1.0/docs/init.md", "attrs-init.md"),
]
LLAMAINDEX = "llamaindex.sentence · hybrid α=0.5 · k=5"


def fetch(distractors: bool = True, questions_file: Path = QUESTIONS) -> list[Path]:
    """Download each sdist once (checked against its SHA-256) and write the chosen file of each."""
    docs, sdists = DATA / "docs", DATA / "sdists"
    docs.mkdir(parents=True, exist_ok=True)
    sdists.mkdir(parents=True, exist_ok=True)
    paths = []
    for url, sha256, member, name in [*SOURCES, *(DISTRACTORS if distractors else [])]:
        archive = sdists / url.rsplit("/", 1)[1]
        if not archive.exists():
            with urllib.request.urlopen(PYPI + url, timeout=120) as response:  # noqa: S310 (a fixed https URL)
                archive.write_bytes(response.read())
        data = archive.read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            archive.unlink()
            raise SystemExit(f"{archive.name}: SHA-256 differs from the pinned one; fetch again")
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            handle = tar.extractfile(member)
            if handle is None:
                raise SystemExit(f"{archive.name} has no file {member}")
            (docs / name).write_bytes(handle.read())
        paths.append(docs / name)
    questions = json.loads(questions_file.read_text(encoding="utf-8"))
    for question in questions:
        text = (docs / question["doc"]).read_text(encoding="utf-8")
        for excerpt in question["excerpts"]:
            if text.count(excerpt) != 1:
                raise SystemExit(f"{question['doc']}: excerpt found {text.count(excerpt)} times: {excerpt!r}")
    return paths


def chunkscope(*args: str, log: Path) -> tuple[float, str]:
    """Run the CLI in a fresh process; its wall time and stdout (stderr, the progress, goes to ``log``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as err:
        done = subprocess.run(
            [sys.executable, "-m", "core", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, text=True
        )
    if done.returncode != 0:
        raise SystemExit(f"chunkscope {args[0]} exited {done.returncode}; see {log}")
    return time.monotonic() - start, done.stdout


def summary(result: dict, seconds: float, llamaindex_all: dict) -> dict:
    rows = {row["config"]: row for row in result["rows"]}
    pick = result["rows"][result["pick"]]
    llama = rows[LLAMAINDEX]
    default = result["rows"][result["default"]]
    validation = result["cross_validation"]
    return {
        "seconds": round(seconds, 1),
        "search": result["search"],
        "stopped": result["stopped"],
        "measured": len(result["rows"]),
        "space": result["space_size"],
        "rungs": result["rungs"],
        "folds": result["folds"],
        "pick": {"config": pick["config"], **_held(pick), "in_sample": _metrics(pick)},
        "nested": {
            "hit_rate": validation["estimates"]["hit_rate"],
            "mrr": validation["estimates"]["mrr"],
            "chosen": [result["rows"][fold["chosen"]]["config"] for fold in validation["folds"]],
        },
        "llamaindex": {"config": llama["config"], **_held(llama), "all_questions": llamaindex_all},
        "default": {"config": default["config"], **_held(default)},
    }


def _held(row: dict) -> dict:
    return {"heldout_hit_rate": row["heldout_metrics"]["hit_rate"], "heldout_mrr": row["heldout_metrics"]["mrr"]}


def _metrics(row: dict) -> dict:
    return {"hit_rate": row["hit_rate"], "mrr": row["mrr"]}


def markdown(found: dict) -> str:
    pick, nested, llama, default = found["pick"], found["nested"], found["llamaindex"], found["default"]
    lines = [
        f"Default `chunkscope tune` ({found['search']}, {found['measured']} of {found['space']} configurations "
        f"measured, {found['seconds']:.0f} s, stopped: {found['stopped']}); folds: {found['folds']}",
        "",
        "| | hit@5 held out | MRR held out |",
        "|---|---|---|",
        f"| pick: {pick['config']} | {pick['heldout_hit_rate']:.3f} | {pick['heldout_mrr']:.3f} |",
        f"| chosen on the training folds, scored on each held-out fold | {nested['hit_rate']:.3f} | "
        f"{nested['mrr']:.3f} |",
        f"| LlamaIndex SentenceSplitter() defaults, hybrid α 0.5, k 5 | {llama['heldout_hit_rate']:.3f} | "
        f"{llama['heldout_mrr']:.3f} |",
        f"| evaluate's default ({default['config']}) | {default['heldout_hit_rate']:.3f} | "
        f"{default['heldout_mrr']:.3f} |",
        "",
        f"Choices per fold: {'; '.join(nested['chosen'])}. LlamaIndex's defaults over all questions (evaluate): "
        f"hit@5 {llama['all_questions']['hit_rate']:.3f}, MRR {llama['all_questions']['mrr']:.3f}.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--fetch", action="store_true", help="Only fetch and check the documents.")
    parser.add_argument("--without-distractors", action="store_true", help="The ten questioned files only.")
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="The questions file (default: the 44).")
    parser.add_argument("--label", default="", help="Suffix of the output files (tune-LABEL.json, result-LABEL.json).")
    parser.add_argument("tune_args", nargs="*", help="Extra arguments for chunkscope tune, after -- (default: none).")
    args = parser.parse_args()
    paths = [str(path) for path in fetch(not args.without_distractors, args.questions)]
    if args.fetch:
        print(f"{len(paths)} documents in {DATA / 'docs'}")
        return 0
    suffix = f"-{args.label}" if args.label else ""
    saved = DATA / f"tune{suffix}.json"
    seconds, _ = chunkscope(
        "tune",
        *paths,
        "--queries",
        str(args.questions),
        "--format",
        "json",
        "--save",
        str(saved),
        *args.tune_args,
        log=DATA / f"tune{suffix}.log",
    )
    result = json.loads(saved.read_text(encoding="utf-8"))
    _, out = chunkscope(
        "evaluate",
        *paths,
        "--queries",
        str(args.questions),
        "--splitter",
        "llamaindex.sentence",
        "--mode",
        "hybrid",
        "--format",
        "json",
        "--quiet",
        log=DATA / "evaluate.log",
    )
    evaluated = json.loads(out)
    (row,) = evaluated["rows"]
    llamaindex_all = {key: row[key] for key in ("hit_rate", "mrr")}
    found = summary(result, seconds, llamaindex_all)
    (DATA / f"result{suffix}.json").write_text(json.dumps(found, indent=2, ensure_ascii=False), encoding="utf-8")
    print(markdown(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
