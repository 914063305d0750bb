"""The chunkscope command line, run in-process and once through the installed console script."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import load
from core.cli.main import main
from core.config import PipelineConfig
from core.splitters import SPLITTERS

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "sample_docs" / "chunking_guide.md"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_split_writes_one_exact_node_per_line(capsys):
    code, out, err = run(capsys, "split", str(GUIDE), "--splitter", "character", "--set", "chunk_size=400",
                         "--set", "chunk_overlap=40")
    assert (code, err) == (0, "")
    [document] = load(GUIDE)
    lines = out.splitlines()
    assert len(lines) > 5
    for line in lines:
        node = json.loads(line)
        assert node["text"] == document.text[node["start_char"] : node["end_char"]]
        assert node["doc_id"] == document.id and node["relationships"]["source"] == document.id
        assert len(node["text"]) <= 400 or "\n\n" not in node["text"]


def test_split_formats_agree(capsys):
    base = ("split", str(GUIDE), "--splitter", "character", "--set", "chunk_size=600", "--set", "chunk_overlap=0")
    jsonl = run(capsys, *base)[1].splitlines()
    array = json.loads(run(capsys, *base, "--format", "json")[1])
    rows = list(csv.DictReader(io.StringIO(run(capsys, *base, "--format", "csv")[1])))
    assert len(jsonl) == len(array) == len(rows)
    assert [row["text"] for row in rows] == [node["text"] for node in array]


def test_split_applies_metadata_and_extractors(capsys):
    code, out, _ = run(capsys, "split", str(GUIDE), "--splitter", "character", "--meta", "team=search",
                       "--extractor", "keywords:keywords=3", "--view-set", "metadata_template={key}={value}")
    first = json.loads(out.splitlines()[0])
    assert code == 0
    assert first["metadata"]["team"] == "search"
    assert len(first["metadata"]["excerpt_keywords"].split(", ")) == 3
    assert first["metadata_template"] == "{key}={value}"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["split", str(GUIDE), "--splitter", "character", "--set", "chunk_size=-5"], "character: chunk_size must be at least 1"),
        (["split", str(GUIDE), "--splitter", "character", "--set", "chunk_size=ten"], "chunk_size must be a whole number"),
        (["split", str(GUIDE), "--splitter", "nope"], "unknown splitter 'nope'"),
        (["split", "missing.md", "--splitter", "character"], "missing.md: file not found"),
        (["split", str(GUIDE), "--set", "chunk_size"], "expected KEY=VALUE"),
        (["split", str(GUIDE), "--loader-set", "warp=9"], "no loader has an option 'warp'"),
        (["split", str(GUIDE), "--no-such-option"], "unrecognized arguments"),
        (["config", "--config", "absent.json"], "absent.json: cannot be read"),
        (
            ["config", "--from-url", "?view.text_template={content:>99999999999}{content}"],
            "metadata: text_template may only use {metadata_str} and {content} (write {{ for a brace): "
            "'{content:>99999999999}' has a format spec",
        ),
        (["config", "--view-set", "text_template={content!r}"], "'{content!r}' has a conversion"),
        (
            ["split", str(GUIDE), "--view-set", "metadata_template={value:>99999999999}"],
            "'{value:>99999999999}' has a format spec",
        ),
    ],
)
def test_user_errors_are_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("chunkscope: ") and message in err, err
    assert "Traceback" not in err


def test_debug_shows_the_traceback():
    from core.errors import ConfigError

    with pytest.raises(ConfigError):
        main(["--debug", "split", str(GUIDE), "--splitter", "character", "--set", "chunk_size=-5"])


def test_splitters_json_lists_every_declared_parameter(capsys):
    code, out, _ = run(capsys, "splitters", "--format", "json")
    listing = {entry["name"]: entry for entry in json.loads(out)}
    assert code == 0 and set(listing) == set(SPLITTERS.names())
    size = next(spec for spec in listing["character"]["params"] if spec["name"] == "chunk_size")
    assert (size["kind"], size["default"], size["ge"]) == ("int", 1000, 1)
    assert size["help"]


def test_splitters_and_loaders_tables_name_each_component(capsys):
    out = run(capsys, "splitters")[1]
    assert all(f"{name}:" in out for name in SPLITTERS.names())
    loaders = json.loads(run(capsys, "loaders", "--format", "json")[1])
    pdf = next(entry for entry in loaders if entry["name"] == "pdf")
    assert ".pdf" in pdf["extensions"] and any(spec["name"] == "extraction_mode" for spec in pdf["params"])


def test_loader_options_reach_the_loader(capsys):
    code, out, _ = run(capsys, "config", "--splitter", "character", "--loader-set", "pdf.extraction_mode=layout")
    assert code == 0 and json.loads(out)["loaders"] == {
        "pdf": {
            **{"reader": "chunkscope", "parser": "pypdf", "extraction_mode": "layout", "ocr": "auto", "find_tables": True},
            **{"heading_ratio": 1.15, "ocr_dpi": 200, "max_ocr_pages": 50, "max_pages": 2000, "max_content_mb": 32},
        }
    }


def test_config_json_and_url_describe_the_same_pipeline(capsys):
    options = ("--splitter", "character", "--set", "chunk_size=256", "--set", "chunk_overlap=32", "--meta", "team=a")
    as_json = PipelineConfig.from_json(run(capsys, "config", *options)[1])
    url = run(capsys, "config", *options, "--format", "url")[1].strip()
    assert url.startswith("splitter=character&chunk_size=256&chunk_overlap=32")
    from_link = PipelineConfig.from_json(run(capsys, "config", "--from-url", f"http://localhost:8501/?{url}")[1])
    assert as_json == from_link


def test_config_file_feeds_split(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(run(capsys, "config", "--splitter", "character", "--set", "chunk_size=700", "--set", "chunk_overlap=0")[1])
    from_file = run(capsys, "split", str(GUIDE), "--config", str(path))[1]
    direct = run(capsys, "split", str(GUIDE), "--splitter", "character", "--set", "chunk_size=700", "--set", "chunk_overlap=0")[1]
    assert from_file == direct and from_file.count("\n") > 1


def test_metrics_report_count_and_coverage(capsys):
    code, out, _ = run(capsys, "metrics", str(GUIDE), "--splitter", "character", "--set", "chunk_size=500",
                       "--set", "chunk_overlap=0", "--format", "json")
    data = json.loads(out)
    split = run(capsys, "split", str(GUIDE), "--splitter", "character", "--set", "chunk_size=500",
                "--set", "chunk_overlap=0")[1]
    assert code == 0 and data["count"] == len(split.splitlines())
    assert data["coverage"] == pytest.approx(1.0)


def test_query_commands_are_plugged_in(capsys):
    code, out, _ = run(capsys, "postprocessors", "--format", "json")
    assert code == 0 and "similarity_cutoff" in {entry["name"] for entry in json.loads(out)}


def test_app_is_found_in_the_checkout():
    from core.cli.main import find_app

    assert find_app() == ROOT / "app.py"


def test_console_script_runs_split_and_reports_errors_in_one_line():
    script = Path(sys.executable).parent / "chunkscope"
    if not script.exists():
        pytest.skip("the chunkscope console script is not installed in this environment")
    ok = subprocess.run(
        [str(script), "split", str(GUIDE), "--splitter", "character", "--set", "chunk_size=500"],
        capture_output=True, text=True, timeout=120,
    )
    [document] = load(GUIDE)
    assert ok.returncode == 0, ok.stderr
    for line in ok.stdout.splitlines():
        node = json.loads(line)
        assert node["text"] == document.text[node["start_char"] : node["end_char"]]
    bad = subprocess.run(
        [str(script), "split", str(GUIDE), "--splitter", "character", "--set", "chunk_overlap=-1"],
        capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == ["chunkscope: character: chunk_overlap must be at least 0, got -1"]


def test_python_dash_m_core_is_the_same_cli():
    result = subprocess.run([sys.executable, "-m", "core", "splitters", "--format", "json"], capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0 and {e["name"] for e in json.loads(result.stdout)} == set(SPLITTERS.names())


def test_set_strips_the_items_of_a_list(capsys):
    options = ("--splitter", "html", "--set", "headings_to_split_on=h1, h2", "--post", "keyword:required_keywords=a, b")
    code, out, _ = run(capsys, "config", *options)
    data = json.loads(out)
    assert code == 0 and data["splitter"]["params"]["headings_to_split_on"] == ["h1", "h2"]
    assert data["postprocessors"][0]["params"]["required_keywords"] == ["a", "b"]
    url = run(capsys, "config", *options, "--format", "url")[1]
    assert "headings_to_split_on=h1%2Ch2" in url and "%20h2" not in url


_QUERY = """
import json, sys
from core.cli.main import main
code = main(sys.argv[1:])
sys.exit(code)
"""


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.xdist_group("model")
def test_a_second_query_run_reads_every_vector_from_the_disk_cache_and_agrees(tmp_path):
    """A restarted CLI embeds only text it has never seen: the second run's answer is the first's."""
    import os

    # A fresh cache folder: the first run below embeds every node.
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(tmp_path)}
    argv = ["query", str(GUIDE), "--query", "How much overlap should chunks have?", "--splitter", "sentence"]

    def run() -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-c", _QUERY, *argv],
            capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
        )
        assert done.returncode == 0, done.stderr
        return done

    first = run()
    assert (tmp_path / "embeddings.sqlite3").is_file()
    second = run()  # every vector now comes from the disk cache
    assert len(json.loads(first.stdout)["retrieved"]) == 5
    assert second.stdout == first.stdout


def test_metrics_table_says_none_for_a_splitter_without_a_size_limit(capsys):
    code, out, _ = run(capsys, "metrics", str(ROOT / "docs" / "samples.md"), "--splitter", "markdown")
    assert code == 0
    assert "None" not in out
    assert any(line.split() == ["size_limit", "none"] for line in out.splitlines()), out


def test_a_loaders_reader_is_set_like_any_loader_option_and_reads_the_file(capsys):
    code, out, _ = run(capsys, "config", "--splitter", "character", "--loader-set", "pdf.reader=langchain")
    assert code == 0 and json.loads(out)["loaders"]["pdf"]["reader"] == "langchain"
    code, _, err = run(capsys, "config", "--splitter", "character", "--loader-set", "pptx.reader=langchain")
    assert code != 0 and "UnstructuredPowerPointLoader" in err


def test_split_leaves_out_a_file_it_cannot_read_names_it_and_exits_1(capsys, tmp_path):
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a pdf")
    code, out, err = run(capsys, "split", str(GUIDE), str(bad), "--format", "jsonl")
    assert code == 1
    assert out.strip() and all(json.loads(line)["metadata"]["file_name"] == GUIDE.name for line in out.splitlines())
    assert err.strip() == "chunkscope: bad.pdf: is not a PDF (it does not start with %PDF-) (left out)"
    # With nothing readable, it is an error as before.
    code, out, err = run(capsys, "split", str(bad))
    assert (code, out) == (2, "") and "bad.pdf: is not a PDF" in err


def test_a_bare_reader_goes_to_every_format_that_takes_it_and_names_those_that_cannot(capsys):
    code, out, err = run(capsys, "config", "--splitter", "character", "--loader-set", "reader=llamaindex")
    assert code == 0 and err == ""
    loaders = json.loads(out)["loaders"]
    assert loaders["pdf"]["reader"] == loaders["epub"]["reader"] == "llamaindex"
    code, out, err = run(capsys, "config", "--splitter", "character", "--loader-set", "reader=langchain")
    assert code == 0
    loaders = json.loads(out)["loaders"]
    assert loaders["pdf"]["reader"] == "langchain" and "epub" not in loaders
    assert "--loader-set reader is left at its default for epub: reader 'langchain' cannot run here" in err
    # A value no format takes is refused, each format in its own words.
    code, _, err = run(capsys, "config", "--splitter", "character", "--loader-set", "reader=nonesuch")
    assert code != 0 and "--loader-set reader:" in err and "pdf:" in err


@pytest.mark.slow
def test_a_frameworks_prints_go_to_stderr_so_jsonl_parses_line_by_line():
    import os
    import subprocess
    import sys

    # LlamaIndex prints "Metadata length (24) is close to chunk size (64)…" while it splits. A real process: the
    # split may run in a forked child, whose prints a captured sys.stdout would hide.
    argv = ["split", str(ROOT / "sample_docs" / "chunking_guide.md"), "--splitter", "llamaindex.sentence"]
    argv += ["--set", "chunk_size=64", "--set", "chunk_overlap=0", "--format", "jsonl"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "core", *argv], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(json.loads(line)["text"] for line in lines)
    assert "Metadata length" in done.stderr


def test_metrics_table_names_the_size_unit_and_never_calls_characters_tokens(capsys):
    code, out, _ = run(capsys, "metrics", str(GUIDE), "--splitter", "character")
    labels = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and "characters" in labels and "tokens" not in labels
    code, out, _ = run(capsys, "metrics", str(GUIDE), "--splitter", "sentence")
    labels = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and "model_tokens" in labels and "tokens" not in labels


def test_help_describes_metrics_whole(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    listing = " ".join(out.split("positional arguments:")[1].split())
    assert "metrics Chunk metrics: sizes, coverage, overlap, mid-sentence cuts, chunks over the model's window." in listing
    assert "..." not in listing
