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

**More sets** (``--set NAME``): ``benchmarks/heldout/NAME.json`` holds a set's sources (archive URL on PyPI's file
host, SHA-256, the member, the name it is loaded under), its distractors and its questions, written for this
benchmark by hand with exact excerpts: ``readmes`` (12 READMEs with look-alike Installation/Usage sections, 50
questions), ``reference_code`` (reference pages, long prose and Python modules, 50), ``pdf_office_html`` (PDF papers
and manuals, HTML pages, DOCX files, 45). Each is fetched into ``benchmarks/data/tune_heldout/NAME/``.

**The run.** ``chunkscope tune <the files> --queries <the questions> --format json --save …``: every default (the
default space of :mod:`core.evaluation.tune_space`, folds by document, quality MRR, cost context tokens, the default
``--budget``), the packaged model, one fresh process. Reported from its JSON: the **choice on the training folds
scored on each held-out fold** (the nested estimate, the only held-out number: nothing about a held-out fold
informed its choice), with the mean context tokens of the chosen rows; on the same folds **LlamaIndex's**
``SentenceSplitter()`` at its defaults (``llamaindex.sentence``, 1024/200) with hybrid retrieval at α 0.5, top 5,
**LangChain's** ``RecursiveCharacterTextSplitter()`` at its defaults (``langchain.recursive``, 4000/200
characters) the same way, and the **recommended configuration**, all untuned (their fold means are as good as
held out); the pick (in sample); and per fold the nested MRR less LlamaIndex's and less LangChain's. Two ``chunkscope evaluate`` runs give LlamaIndex's and
evaluate's defaults over all questions. Everything goes to ``benchmarks/data/tune_heldout/result[-LABEL].json``;
the summary is printed as Markdown. ``--without-distractors`` leaves the distractors out; arguments after ``--``
go to ``chunkscope tune`` (e.g. ``-- --search halving``), with ``--label`` naming the output files.
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
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "tune_heldout"
QUESTIONS = ROOT / "benchmarks" / "tune_heldout_questions.json"
# Further sets, each a JSON file of its sources, distractors and questions (``--set NAME``).
HELDOUT = ROOT / "benchmarks" / "heldout"
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
LANGCHAIN = "langchain.recursive · hybrid α=0.5 · k=5"  # RecursiveCharacterTextSplitter() at 4000/200


def fetch(distractors: bool = True, questions_file: Path = QUESTIONS) -> list[Path]:
    """Download each sdist once (checked against its SHA-256) and write the chosen file of each."""
    docs = DATA / "docs"
    sources = [(PYPI + url, sha256, member, name) for url, sha256, member, name in SOURCES]
    extra = [(PYPI + url, sha256, member, name) for url, sha256, member, name in DISTRACTORS]
    paths = _extract([*sources, *(extra if distractors else [])], docs)
    questions = json.loads(questions_file.read_text(encoding="utf-8"))
    for question in questions:
        text = (docs / question["doc"]).read_text(encoding="utf-8")
        for excerpt in question["excerpts"]:
            if text.count(excerpt) != 1:
                raise SystemExit(f"{question['doc']}: excerpt found {text.count(excerpt)} times: {excerpt!r}")
    return paths


def _extract(sources: list[tuple[str, str, str, str]], docs: Path) -> list[Path]:
    """Each (archive URL, its SHA-256, member, saved name) fetched once, checked, and its member written to ``docs``."""
    sdists = DATA / "sdists"
    docs.mkdir(parents=True, exist_ok=True)
    sdists.mkdir(parents=True, exist_ok=True)
    paths = []
    for url, sha256, member, name in sources:
        archive = sdists / url.rsplit("/", 1)[1]
        if not archive.exists():
            with urllib.request.urlopen(url, timeout=120) as response:  # noqa: S310 (a pinned https URL)
                archive.write_bytes(response.read())
        data = archive.read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            archive.unlink()
            raise SystemExit(f"{archive.name}: SHA-256 differs from the pinned one; fetch again")
        if archive.name.endswith(".zip") or archive.name.endswith(".whl"):
            with zipfile.ZipFile(io.BytesIO(data)) as bundle:
                (docs / name).write_bytes(bundle.read(member))
        else:
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                handle = tar.extractfile(member)
                if handle is None:
                    raise SystemExit(f"{archive.name} has no file {member}")
                (docs / name).write_bytes(handle.read())
        paths.append(docs / name)
    return paths


def fetch_set(name: str, distractors: bool = True) -> tuple[list[Path], Path]:
    """A set of ``benchmarks/heldout/NAME.json``: its documents fetched, its questions written for the CLI.

    Its excerpts were checked against ChunkScope's loaded text when the set was written (a PDF's text is
    the loader's, not the file's bytes); here each must still occur in the saved file or its loaded text.
    """
    spec = json.loads((HELDOUT / f"{name}.json").read_text(encoding="utf-8"))
    where = DATA / name
    entries = [*spec["sources"], *(spec.get("distractors", []) if distractors else [])]
    paths = _extract([(e["url"], e["sha256"], e["member"], e["name"]) for e in entries], where / "docs")
    questions = where / "questions.json"
    plain = [{key: q[key] for key in ("query", "doc", "excerpts")} for q in spec["questions"]]
    questions.write_text(json.dumps(plain, indent=1, ensure_ascii=False), encoding="utf-8")
    return paths, questions


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


def summary(result: dict, seconds: float, evaluated: dict) -> dict:
    """The numbers RESULTS.md reports, from the tune's JSON and the two evaluate runs over all questions.

    Only ``nested`` is held out (chosen on the training folds, scored on the held-out one); the untuned rows'
    fold means are as good as held out (no choice was made on their questions); the pick's is in sample.
    """
    rows = {row["config"]: row for row in result["rows"]}
    pick = result["rows"][result["pick"]]
    llama = rows[LLAMAINDEX]
    langchain = rows.get(LANGCHAIN)  # in the default space since 2026-12-06
    recommended = result["rows"][result["default"]]
    validation = result["cross_validation"]
    folds = validation["folds"]
    chosen = [result["rows"][fold["chosen"]] for fold in folds]
    # The nested MRR per fold against LlamaIndex's on the same fold: the spread over outer splits.
    per_fold = [
        {
            "fold": fold["fold"] + 1,
            "nested": fold["chosen_heldout"],
            "llamaindex": llama["by_fold"][fold["fold"]],
            "langchain": langchain["by_fold"][fold["fold"]] if langchain else None,
            "nested_tokens": fold.get("chosen_tokens"),
            "llamaindex_tokens": fold.get("cap_tokens"),
        }
        for fold in folds
    ]
    return {
        "seconds": round(seconds, 1),
        "search": result["search"],
        "stopped": result["stopped"],
        "measured": len(result["rows"]),
        "space": result["space_size"],
        "rungs": result["rungs"],
        "folds": result["folds"],
        "pick": {"config": pick["config"], **_fold_means(pick), "context_tokens": pick["context_tokens"]},
        "nested": {
            "hit_rate": validation["estimates"]["hit_rate"],
            "mrr": validation["estimates"]["mrr"],
            "chosen": [row["config"] for row in chosen],
            # What the choices read on their held-out questions.
            "context_tokens": validation["estimates"]["context_tokens"],
            "per_fold": per_fold,
        },
        "llamaindex": {"config": llama["config"], **_fold_means(llama), "context_tokens": llama["context_tokens"]},
        "langchain": None
        if langchain is None
        else {"config": langchain["config"], **_fold_means(langchain), "context_tokens": langchain["context_tokens"]},
        "recommended": {
            "config": recommended["config"],
            **_fold_means(recommended),
            "context_tokens": recommended["context_tokens"],
        },
        "all_questions": evaluated,
    }


def _fold_means(row: dict) -> dict:
    return {"hit_rate": row["fold_means"]["hit_rate"], "mrr": row["fold_means"]["mrr"]}


def _tokens(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def markdown(found: dict) -> str:
    pick, nested, llama, best = found["pick"], found["nested"], found["llamaindex"], found["recommended"]
    lines = [
        f"`chunkscope tune` at its defaults ({found['search']}, {found['measured']} of {found['space']} "
        f"configurations measured, {found['seconds']:.0f} s, stopped: {found['stopped']}); folds: {found['folds']}",
        "",
        "| | hit@5 | MRR | context tokens |",
        "|---|---|---|---|",
        f"| **chosen on the training folds, scored on each held-out fold** | {nested['hit_rate']:.3f} | "
        f"**{nested['mrr']:.3f}** | {nested['context_tokens']:.0f} |",
        f"| LlamaIndex SentenceSplitter() defaults, hybrid α 0.5, k 5 (untuned) | {llama['hit_rate']:.3f} | "
        f"{llama['mrr']:.3f} | {llama['context_tokens']:.0f} |",
        *(
            [
                f"| LangChain RecursiveCharacterTextSplitter() defaults, hybrid α 0.5, k 5 (untuned) | "
                f"{found['langchain']['hit_rate']:.3f} | {found['langchain']['mrr']:.3f} | "
                f"{found['langchain']['context_tokens']:.0f} |"
            ]
            if found.get("langchain")
            else []
        ),
        f"| recommended: {best['config']} (untuned) | {best['hit_rate']:.3f} | {best['mrr']:.3f} | "
        f"{best['context_tokens']:.0f} |",
        f"| pick: {pick['config']} (in sample) | {pick['hit_rate']:.3f} | {pick['mrr']:.3f} | "
        f"{pick['context_tokens']:.0f} |",
        "",
        "Per fold, nested MRR − LlamaIndex's: "
        + ", ".join(f"{fold['nested'] - fold['llamaindex']:+.3f}" for fold in nested["per_fold"])
        + (
            ". Per fold, nested MRR − LangChain's: "
            + ", ".join(f"{fold['nested'] - fold['langchain']:+.3f}" for fold in nested["per_fold"])
            if found.get("langchain")
            else ""
        )
        + ". Per fold, held-out context tokens, nested / LlamaIndex's (with --context-cap only): "
        + ", ".join(
            f"{_tokens(fold['nested_tokens'])} / {_tokens(fold['llamaindex_tokens'])}" for fold in nested["per_fold"]
        )
        + f". Choices per fold: {'; '.join(nested['chosen'])}.",
        "Over all questions (`chunkscope evaluate`): "
        + "; ".join(
            f"{name} hit@5 {row['hit_rate']:.3f}, MRR {row['mrr']:.3f}" for name, row in found["all_questions"].items()
        )
        + ".",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--fetch", action="store_true", help="Only fetch and check the documents.")
    parser.add_argument("--without-distractors", action="store_true", help="The ten questioned files only.")
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="The questions file (default: the 44).")
    parser.add_argument("--label", default="", help="Suffix of the output files (tune-LABEL.json, result-LABEL.json).")
    parser.add_argument("--set", default=None, help="A set of benchmarks/heldout/ by name, instead of the 44 / 23.")
    parser.add_argument("tune_args", nargs="*", help="Extra arguments for chunkscope tune, after -- (default: none).")
    args = parser.parse_args()
    if args.set:
        fetched, args.questions = fetch_set(args.set, not args.without_distractors)
        args.label = args.label or args.set
    else:
        fetched = fetch(not args.without_distractors, args.questions)
    paths = [str(path) for path in fetched]
    if args.fetch:
        print(f"{len(paths)} documents in {Path(paths[0]).parent}")
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
    evaluated = {}
    runs = {
        "LlamaIndex's defaults, hybrid": ["--splitter", "llamaindex.sentence", "--mode", "hybrid"],
        "evaluate's defaults (what a user meets)": [],
    }
    for name, options in runs.items():
        _, out = chunkscope(
            "evaluate",
            *paths,
            "--queries",
            str(args.questions),
            *options,
            "--format",
            "json",
            "--quiet",
            log=DATA / "evaluate.log",
        )
        (row,) = json.loads(out)["rows"]
        evaluated[name] = {key: row[key] for key in ("splitter", "mode", "hit_rate", "mrr")}
    found = summary(result, seconds, evaluated)
    (DATA / f"result{suffix}.json").write_text(json.dumps(found, indent=2, ensure_ascii=False), encoding="utf-8")
    print(markdown(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
