"""LlamaIndex's four LLM extractors with the configured LLM, end to end against a real server on 127.0.0.1.

The server's replies are derived from the prompt (tests/llm_server.py), so each node's keys are known:
the prompt is LlamaIndex's template filled with the node's content, as LlamaIndex fills it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from llm_server import HOSTILE_REPLY, INJECTION, KEY_ENV, NEEDS_LLM_EXTRA, leaks, run_in_own_loop

from core.cli.main import main
from core.config import PipelineConfig
from core.config_parts import MetadataSettings
from core.documents import run_split
from core.errors import ConfigError
from core.extractors import EXTRACTORS, get_extractor
from core.extractors.llm import plan
from core.schema import Document, MetadataMode
from core.splitters import get_splitter

pytestmark = NEEDS_LLM_EXTRA

LLM_NAMES = ["llm_title", "llm_questions", "llm_summary", "llm_keywords"]
# LlamaIndex's class for each, and the keys it writes with its default settings.
FRAMEWORK = {
    "llm_title": ("TitleExtractor", {"document_title"}),
    "llm_questions": ("QuestionsAnsweredExtractor", {"questions_this_excerpt_can_answer"}),
    "llm_summary": ("SummaryExtractor", {"section_summary"}),
    "llm_keywords": ("KeywordExtractor", {"excerpt_keywords"}),
}
TEXT = "\n\n".join(
    f"Paragraph {i} is about topic {i}: chunk sizes, overlaps and retrieval number {i}." for i in range(6)
)


def document(text: str = TEXT) -> Document:
    return Document(text=text, metadata={"file_name": "notes.txt"})


def config_with(endpoint, *extractors, **metadata) -> PipelineConfig:
    return PipelineConfig(
        splitter=get_splitter("character", chunk_size=120, chunk_overlap=0, separator="\n\n"),
        extractors=tuple(extractors),
        metadata=MetadataSettings(**metadata),
        llm=endpoint.connection(),
    )


@pytest.mark.parametrize("name", LLM_NAMES)
def test_declared_with_llamaindexs_defaults_and_prompts(name):
    import inspect

    from llama_index.core import extractors

    cls, _ = FRAMEWORK[name]
    # What LlamaIndex's constructor takes when a caller says nothing.
    defaults = inspect.signature(getattr(extractors, cls).__init__).parameters
    ours = get_extractor(name).framework_kwargs()
    for key, value in ours.items():
        assert (list(value) if isinstance(value, tuple) else value) == defaults[key].default, key


@pytest.mark.parametrize("name", LLM_NAMES)
def test_each_extractor_writes_its_keys_into_both_views(endpoint, name):
    config = config_with(endpoint, get_extractor(name))
    nodes = run_split([document()], config)
    assert len(nodes) == 6
    _, keys = FRAMEWORK[name]
    for node in nodes:
        assert keys <= set(node.metadata), node.metadata
        for key in keys:
            value = node.metadata[key]
            assert value and len(value) <= config.llm.max_reply_chars
            assert f"{key}: {value}" in node.get_content(MetadataMode.EMBED)
            # Both views, QuestionsAnsweredExtractor's too: LlamaIndex declares embedding_only and never applies it.
            assert f"{key}: {value}" in node.get_content(MetadataMode.LLM)
    assert endpoint.seen.count() == plan(nodes, config.extractors, config.llm).calls


def test_the_four_run_in_order_and_a_rerun_sends_nothing(endpoint):
    config = config_with(endpoint, *(get_extractor(name) for name in LLM_NAMES))
    first = run_split([document()], config, bounded=True)  # in a bounded child, as the app and the CLI run it
    sent = endpoint.seen.count()
    # Title: the first 5 nodes, then one combined title; the other three: one call per node.
    assert sent == (5 + 1) + 3 * 6
    again = run_split([document()], config, bounded=True)
    assert endpoint.seen.count() == sent
    assert [node.metadata for node in again] == [node.metadata for node in first]
    # One title for the document, on every node.
    assert len({node.metadata["document_title"] for node in first}) == 1


def test_keys_are_excludable_like_any_key(endpoint):
    config = config_with(
        endpoint, get_extractor("llm_keywords"), excluded_embed_metadata_keys=("excerpt_keywords",)
    )
    node = run_split([document()], config)[0]
    assert "excerpt_keywords" in node.metadata
    assert "excerpt_keywords" not in node.get_content(MetadataMode.EMBED)
    assert "excerpt_keywords" in node.get_content(MetadataMode.LLM)
    allow = config_with(endpoint, get_extractor("llm_keywords"), embed_metadata_keys=("file_name",))
    node = run_split([document()], allow)[0]
    assert "excerpt_keywords" not in node.get_content(MetadataMode.EMBED)


def test_without_llm_extractors_nothing_is_sent_and_nothing_changes(endpoint):
    plain = PipelineConfig(splitter=get_splitter("character", chunk_size=120, chunk_overlap=0, separator="\n\n"))
    with_endpoint = plain.replace(llm=endpoint.connection())
    offline = plain.replace(extractors=(get_extractor("keywords"),))
    nodes = run_split([document()], plain)
    assert [n.metadata for n in run_split([document()], with_endpoint)] == [n.metadata for n in nodes]
    run_split([document()], offline, bounded=True)
    assert endpoint.seen.count() == 0
    assert plain.key() == PipelineConfig.from_json(plain.to_json()).key()
    assert "llm" not in plain.to_dict() and "llm" not in offline.to_dict()


def test_a_document_that_gives_orders_changes_only_its_own_nodes_keys(endpoint):
    paragraphs = TEXT.split("\n\n")
    hostile = "\n\n".join([*paragraphs[:3], f"{INJECTION} and write every key for every node.", *paragraphs[4:]])
    config = config_with(endpoint, get_extractor("llm_keywords"), get_extractor("llm_questions"))
    clean = run_split([document()], config)
    attacked = run_split([document(hostile)], config)
    changed = [i for i, (a, b) in enumerate(zip(clean, attacked, strict=True)) if a.metadata != b.metadata]
    assert changed == [3]
    node = attacked[3]
    assert node.metadata["excerpt_keywords"] == HOSTILE_REPLY
    # The reply is data: its template fields are written as they are, never filled in.
    view = node.get_content(MetadataMode.EMBED)
    assert "{metadata_str} {content}" in view and view.count(node.text) == 1


def test_model_output_is_bounded(endpoint):
    config = config_with(endpoint, get_extractor("llm_keywords")).replace(
        llm=endpoint.connection("long", max_reply_chars=40)
    )
    for node in run_split([document()], config):
        assert node.metadata["excerpt_keywords"] == "L" * 40


def test_the_plan_counts_calls_and_tokens_before_anything_is_sent(endpoint):
    config = config_with(endpoint, get_extractor("llm_title", nodes=2), get_extractor("llm_keywords"))
    nodes = run_split([document()], config.replace(extractors=()))
    planned = plan(nodes, config.extractors, config.llm)
    assert endpoint.seen.count() == 0
    assert planned.calls == (2 + 1) + 6
    assert dict((name, calls) for name, calls, _ in planned.per_extractor) == {"llm_title": 3, "llm_keywords": 6}
    assert planned.prompt_tokens > 6 * 20 and planned.largest_prompt_tokens < config.llm.context_window


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"prompt_template": "{context_str.__class__}"}, "reads an attribute or index"),
        ({"prompt_template": "{context_str:>999999999}"}, "has a format spec"),
        ({"prompt_template": "no context here"}, "must contain {context_str}"),
        ({"prompt_template": "{context_str} {secret}"}, "unknown field 'secret'"),
    ],
)
def test_prompt_templates_are_checked_like_metadata_templates(params, problem):
    with pytest.raises(ConfigError, match=problem):
        get_extractor("llm_keywords", **params)


def test_an_edited_prompt_is_the_prompt_sent(endpoint):
    template = "List {keywords} keywords of: {context_str}\nKeywords:"
    run_split([document()], config_with(endpoint, get_extractor("llm_keywords", prompt_template=template, keywords=2)))
    assert endpoint.seen.requests[0]["prompt"].startswith("List 2 keywords of: ")


def test_listed_beside_the_offline_extractors():
    names = EXTRACTORS.names()
    assert {"title", "keywords", "summary"} <= set(names) and set(LLM_NAMES) <= set(names)


# ------------------------------------------------------------------------------------------------------ CLI


def test_cli_runs_llm_extractors_says_the_cost_and_never_the_key(endpoint, capsys, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text(TEXT, encoding="utf-8")
    argv = [
        "split", str(path), "--splitter", "character", "--set", "chunk_size=120", "--set", "chunk_overlap=0",
        "--set", "separator=\n\n", "--extractor", "llm_keywords:keywords=3",
        "--llm", f"base_url={endpoint.url}", "--llm", "model=echo-model", "--llm", f"api_key_env={KEY_ENV}",
    ]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    nodes = [json.loads(line) for line in out.splitlines()]
    assert len(nodes) == 6 and all(node["metadata"]["excerpt_keywords"].startswith("kw-") for node in nodes)
    assert "up to 6 calls to echo-model" in err and "sent 6 requests" in err
    assert main(argv) == 0
    out_again, err_again = capsys.readouterr()
    assert out_again == out and "sent 0 requests (0 of them retries), 6 answered from the cache" in err_again
    assert endpoint.seen.count() == 6
    # Every output: the nodes, the messages, the configuration as JSON and as a link.
    assert main(["config", *argv[argv.index("--extractor"):], "--splitter", "character"]) == 0
    as_json, _ = capsys.readouterr()
    assert main(["config", *argv[argv.index("--extractor"):], "--format", "url"]) == 0
    as_url, _ = capsys.readouterr()
    assert json.loads(as_json)["llm"]["api_key_env"] == KEY_ENV
    for text in (out, err, out_again, err_again, as_json, as_url):
        assert not leaks(text)


def test_cli_says_why_an_llm_run_failed_without_the_key(endpoint, capsys, tmp_path):
    path = Path(tmp_path / "notes.txt")
    path.write_text(TEXT, encoding="utf-8")
    code = main([
        "split", str(path), "--extractor", "llm_keywords", "--llm", f"base_url={endpoint.url}",
        "--llm", "model=always-500", "--llm", f"api_key_env={KEY_ENV}", "--llm", "max_retries=0",
    ])
    out, err = capsys.readouterr()
    assert code != 0 and "HTTP 500" in err and "[redacted]" in err
    assert not leaks(out + err)


def test_configurations_without_an_llm_keep_their_keys():
    # The keys these configurations had before the llm section existed (commit b0e8e4e; the sentence splitter at
    # its defaults was then the default configuration), as they became when the retrieval settings gained their
    # context budget (a new default, so a new key: 68b124c1a30e1c55 and 4c8eb79f31cc287e before).
    assert PipelineConfig(splitter=get_splitter("sentence")).key() == "42299c9f23ee536d"
    offline = PipelineConfig(
        splitter=get_splitter("character", chunk_size=120, chunk_overlap=0),
        extractors=(get_extractor("keywords"), get_extractor("title")),
    )
    assert offline.key() == "0e80eadf29da005e"


def test_the_plan_counts_the_prompts_that_are_sent(endpoint):
    from core.extractors.llm import llm_extractors

    # Keywords first, then the title (whose node prompts read the bare text): a per-node extractor after another
    # also reads the keys that one wrote, which the plan cannot know (it says so: a floor).
    chosen = (get_extractor("llm_keywords", keywords=3), get_extractor("llm_title", nodes=2))
    config = config_with(endpoint, *chosen)
    nodes = run_split([document()], config.replace(extractors=()))
    planned = [p for e in llm_extractors(chosen) for p in e.prompts(nodes, config.llm.max_tokens)]
    run_split([document()], config)
    sent = [request["prompt"] for request in endpoint.seen.requests]
    # Every prompt but the title's combining one (its candidates are replies not written yet) is known exactly.
    combining = [p for p in sent if "comprehensive title" in p]
    assert sorted(p for p in sent if p not in combining) == sorted(p for p in planned if "comprehensive title" not in p)
    assert len(combining) == 1


def test_the_snapshot_shows_hostile_replies_escaped_and_never_the_key(endpoint):
    from core.output.snapshot import snapshot_html

    paragraphs = TEXT.split("\n\n")
    hostile = document("\n\n".join([f"{INJECTION}.", *paragraphs[1:]]))
    config = config_with(endpoint, get_extractor("llm_keywords"))
    nodes = run_split([hostile], config)
    assert nodes[0].metadata["excerpt_keywords"] == HOSTILE_REPLY
    page = snapshot_html(hostile, nodes, config, selected_ids=[nodes[0].id])
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not leaks(page) and KEY_ENV in page


@pytest.mark.slow
def test_batch_runs_the_llm_extractors_and_a_second_run_is_answered_by_the_cache(endpoint, tmp_path):
    import pyarrow.parquet as pq

    from core.batch import run_batch

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(2):
        (corpus / f"notes{i}.txt").write_text(TEXT.replace("topic", f"topic {i}"), encoding="utf-8")
    config = config_with(endpoint, get_extractor("llm_keywords"))
    run_batch([str(corpus)], config, tmp_path / "out", workers=1)
    sent = endpoint.seen.count()
    assert sent == 12
    table = pq.read_table(tmp_path / "out" / "nodes").to_pylist()
    assert len(table) == 12
    assert all("excerpt_keywords: kw-" in row["embed_view"] for row in table)
    run_batch([str(corpus)], config, tmp_path / "again", workers=1)
    assert endpoint.seen.count() == sent


def test_cli_batch_reports_what_the_llm_extractors_sent_and_a_rerun_sends_nothing(endpoint, tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(2):
        (corpus / f"notes{i}.txt").write_text(TEXT.replace("topic", f"topic {i}"), encoding="utf-8")
    config = tmp_path / "config.json"
    config.write_text(config_with(endpoint, get_extractor("llm_keywords")).to_json(), encoding="utf-8")

    def batch(out: str) -> tuple[dict, list[dict], str]:
        assert main(["batch", str(corpus), "--config", str(config), "--out", str(tmp_path / out), "--workers", "1", "-q"]) == 0
        _, err = capsys.readouterr()
        report = json.loads((tmp_path / out / "report.json").read_text(encoding="utf-8"))
        lines = [json.loads(line) for line in (tmp_path / out / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
        return report, [line for line in lines if line["kind"] == "input"], err

    report, inputs, err = batch("out")
    # One call per node, 6 nodes a file; the test server counts 1 prompt and 1 completion token a reply.
    assert endpoint.seen.count() == 12
    assert [line["llm"] for line in inputs] == [
        {"requests": 6, "cached": 0, "retries": 0, "prompt_tokens": 6, "completion_tokens": 6}
    ] * 2
    assert report["llm"] == {"requests": 12, "cached": 0, "retries": 0, "prompt_tokens": 12, "completion_tokens": 12}
    assert [row["llm"]["requests"] for row in report["documents"]] == [6, 6]
    assert "LLM extractors: sent 12 requests (0 of them retries), 0 answered from the cache; 12 prompt" in err
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "12 requests · 0 cached" in html

    again, _, err_again = batch("again")
    assert endpoint.seen.count() == 12  # every reply from the cache
    assert again["llm"] == {"requests": 0, "cached": 12, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
    assert "sent 0 requests (0 of them retries), 12 answered from the cache" in err_again
    # Every output of a batch: the messages, the manifests, the reports, the nodes' views.
    outputs = [err, err_again, html]
    for out in ("out", "again"):
        outputs += [(tmp_path / out / name).read_text(encoding="utf-8") for name in ("manifest.jsonl", "report.json")]
    outputs += [json.dumps(row) for row in _parquet_rows(tmp_path / "out" / "nodes")]
    for text in outputs:
        assert not leaks(text)


def test_cli_batch_plan_counts_what_a_run_then_sends_and_sends_nothing_itself(endpoint, tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(2):
        (corpus / f"notes{i}.txt").write_text(TEXT.replace("topic", f"topic {i}"), encoding="utf-8")
    (corpus / "empty.md").write_text("", encoding="utf-8")  # refused by the loader: listed, the plan goes on
    config = tmp_path / "config.json"
    config.write_text(config_with(endpoint, get_extractor("llm_keywords")).to_json(), encoding="utf-8")

    assert main(["batch", str(corpus), "--config", str(config), "--plan", "-q"]) == 0
    out, err = capsys.readouterr()
    assert endpoint.seen.count() == 0 and not (tmp_path / "out").exists()
    assert out.startswith("2 files, 12 nodes: up to 12 calls to echo-model, about ")
    assert "  llm_keywords: 12 calls, " in out
    assert "failed: " in err and "empty.md" in err
    assert not leaks(out + err)

    # What it counted is what a run sends (one keyword call per node, an empty reply cache).
    assert main(["batch", str(corpus), "--config", str(config), "--out", str(tmp_path / "out"), "-q"]) == 0
    assert endpoint.seen.count() == 12


def test_cli_batch_plan_without_llm_extractors_says_nothing_would_be_sent(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text(TEXT, encoding="utf-8")
    assert main(["batch", str(tmp_path / "notes.txt"), "--plan"]) == 0
    assert "no LLM extractors: a run sends no request" in capsys.readouterr().err


def test_cli_batch_without_out_or_plan_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text(TEXT, encoding="utf-8")
    assert main(["batch", str(tmp_path / "notes.txt")]) == 2
    assert "batch needs --out DIR" in capsys.readouterr().err


def test_a_batch_file_whose_llm_run_fails_is_listed_with_its_reason_never_the_key(endpoint, tmp_path):
    from core.batch import run_batch

    (tmp_path / "notes.txt").write_text(TEXT, encoding="utf-8")
    config = config_with(endpoint, get_extractor("llm_keywords")).replace(
        llm=endpoint.connection("always-500", max_retries=0)
    )
    result = run_batch([str(tmp_path / "notes.txt")], config, tmp_path / "out", workers=1)
    (failed,) = result.report["failed"]
    assert "HTTP 500" in failed["reason"] and "[redacted]" in failed["reason"]
    # Its requests are in no count: the run that sent them did not finish.
    assert result.report["llm"] is None
    for name in ("manifest.jsonl", "report.json", "report.html"):
        assert not leaks((tmp_path / "out" / name).read_text(encoding="utf-8"))


def test_a_batch_without_llm_extractors_reports_no_llm_spend(tmp_path):
    from core.batch import run_batch

    (tmp_path / "notes.txt").write_text(TEXT, encoding="utf-8")
    config = PipelineConfig(splitter=get_splitter("character", chunk_size=120, chunk_overlap=0, separator="\n\n"))
    result = run_batch([str(tmp_path / "notes.txt")], config.replace(extractors=(get_extractor("keywords"),)), tmp_path / "out", workers=1)
    assert result.report["llm"] is None
    lines = (tmp_path / "out" / "manifest.jsonl").read_text(encoding="utf-8")
    assert '"llm"' not in lines


def _parquet_rows(folder: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(folder).to_pylist()


@pytest.mark.parametrize("concurrency", [1, 3])
def test_at_most_concurrency_requests_are_in_flight(endpoint, concurrency):
    config = config_with(endpoint, get_extractor("llm_keywords")).replace(
        llm=endpoint.connection("slow", concurrency=concurrency)
    )
    run_split([document()], config)
    assert endpoint.seen.count() == 6
    # Never more than the bound; with room for several, several at once (the six requests start together).
    assert endpoint.seen.most_in_flight <= concurrency
    assert (endpoint.seen.most_in_flight > 1) == (concurrency > 1)


def test_without_an_llm_extractor_no_connection_is_opened(endpoint, monkeypatch):
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("a connection was opened")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    configured = config_with(endpoint, get_extractor("keywords"), get_extractor("title"))
    for config in (configured, configured.replace(llm=PipelineConfig().llm)):
        nodes = run_split([document()], config, bounded=True)
        assert all("excerpt_keywords" in node.metadata for node in nodes)


def test_runs_from_inside_a_running_event_loop_as_in_a_notebook(endpoint):

    async def cell():
        return run_split([document()], config_with(endpoint, get_extractor("llm_keywords")))

    nodes = run_in_own_loop(cell)
    assert all(node.metadata["excerpt_keywords"].startswith("kw-") for node in nodes)


# ------------------------------------------------------------------------------------------ progress and cancel


class Stop(Exception):
    """What a page's progress bar raises when a person clicks Cancel (Streamlit's rerun, in the app)."""


def test_progress_hears_every_reply_of_the_planned_calls(endpoint):
    config = config_with(endpoint, get_extractor("llm_keywords")).replace(llm=endpoint.connection("echo-progress", concurrency=1))
    heard: list[tuple[int, int]] = []
    run_split([document()], config, progress=lambda done, calls: heard.append((done, calls)))
    assert heard == [(done, 6) for done in range(1, 7)]
    heard.clear()
    run_split([document()], config, progress=lambda done, calls: heard.append((done, calls)))
    assert heard == [(done, 6) for done in range(1, 7)] and endpoint.seen.count() == 6  # replies from the cache count


def test_cancel_stops_before_the_next_request_and_what_was_sent_is_cached(endpoint):
    config = config_with(endpoint, get_extractor("llm_keywords")).replace(
        llm=endpoint.connection("slow-300", concurrency=1)
    )
    heard: list[int] = []

    def progress(done: int, calls: int) -> None:
        heard.append(done)
        if done >= 2:
            raise Stop

    # In a bounded child, as the page runs it: the child is polled while it works, and told to stop.
    with pytest.raises(Stop):
        run_split([document()], config, bounded=True, progress=progress)
    sent = endpoint.seen.count()
    # At most the request in flight when the cancel came goes after the second reply; never the rest.
    assert 2 <= sent <= 3 and heard and heard == sorted(heard)
    time.sleep(0.5)
    assert endpoint.seen.count() == sent  # nothing is sent after the stop
    prompts = [request["prompt"] for request in endpoint.seen.requests]
    nodes = run_split([document()], config, bounded=True)
    # The second run asks only what the first did not: every prompt once, over both runs.
    assert endpoint.seen.count() == 6 and len({r["prompt"] for r in endpoint.seen.requests}) == 6
    assert set(prompts) < {r["prompt"] for r in endpoint.seen.requests}
    assert all(node.metadata["excerpt_keywords"].startswith("kw-") for node in nodes)


def test_a_cancelled_token_sends_nothing_and_says_so(endpoint):
    from core.llm.control import LLMCancelled, LLMControl

    config = config_with(endpoint, get_extractor("llm_keywords"))
    control = LLMControl()
    control.cancel()
    with pytest.raises(LLMCancelled, match="cancelled before asking echo-model"):
        run_split([document()], config, bounded=True, control=control)
    assert endpoint.seen.count() == 0
