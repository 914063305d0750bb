"""The LLM connection and its client, against a real chat-completions server on 127.0.0.1 (tests/llm_server.py).

Driven through the real clients (LlamaIndex's OpenAILike over openai): the cache answers a request asked
before, 429 and 500 are retried, a stalled reply stops at the timeout, a reply that is not JSON or is
10 MB is refused, a long reply is cut, and no error says the key.
"""

from __future__ import annotations

import time

import pytest
from llm_server import KEY, KEY_ENV, NEEDS_LLM_EXTRA, leaks, reply_for, run_in_own_loop

from core.config import PipelineConfig
from core.errors import ConfigError
from core.llm import LLMConnection, LLMError, redact

pytestmark = NEEDS_LLM_EXTRA


def ask(connection: LLMConnection, prompt: str) -> str:
    from llama_index.core.base.llms.types import ChatMessage

    from core.llm.client import make_llm

    async def chat() -> str:
        llm = make_llm(connection)
        try:
            return (await llm.achat([ChatMessage(role="user", content=prompt)])).message.content
        finally:
            await llm._get_aclient().close()

    return run_in_own_loop(chat)


# ------------------------------------------------------------------------------------------- declaration


def test_an_unconfigured_connection_changes_no_configuration():
    config = PipelineConfig()
    assert not config.llm.configured
    assert "llm" not in config.to_dict()
    assert not any(key.startswith("llm.") for key in config.to_query_params())


def test_the_connection_travels_by_json_and_link_without_the_key(endpoint, monkeypatch):
    from core.extractors import get_extractor

    config = PipelineConfig(extractors=(get_extractor("llm_keywords", keywords=3),), llm=endpoint.connection())
    assert PipelineConfig.from_json(config.to_json()) == config
    assert PipelineConfig.from_query_params(config.to_query_params()) == config
    for text in (config.to_json(), str(config.to_query_params()), repr(config)):
        assert KEY_ENV in text and not leaks(text)


def test_an_llm_extractor_without_an_endpoint_is_refused():
    from core.extractors import get_extractor

    with pytest.raises(ConfigError, match="asks an LLM, and none is configured"):
        PipelineConfig(extractors=(get_extractor("llm_title"),))


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"base_url": "localhost:11434"}, "http:// or https://"),
        ({"base_url": "http://user:pw@host/v1", "model": "m"}, "without credentials"),
        ({"base_url": "http://127.0.0.1/v1"}, "a model is needed"),
        ({"api_key_env": KEY}, "NAME of an environment variable"),
        # Any other secret of the process: a link could send it to its own endpoint.
        ({"api_key_env": "GITHUB_TOKEN"}, "ending in API_KEY"),
        ({"api_key_env": "DATABASE_URL"}, "ending in API_KEY"),
    ],
)
def test_bad_connections_are_refused_without_echoing_a_pasted_key(params, problem):
    with pytest.raises(ConfigError, match=problem) as caught:
        LLMConnection.from_params(params)
    assert not leaks(str(caught.value))


def test_redact_hides_the_key_and_its_echoed_head_and_tail():
    said = f"key {KEY}; masked {KEY[:8]}***{KEY[-6:]}"
    assert not leaks(redact(said, KEY)) and KEY[:8] not in redact(said, KEY)


# ------------------------------------------------------------------------------------------------ client


def test_a_reply_comes_through_the_real_client_with_the_key_sent(endpoint):
    assert ask(endpoint.connection(), "Say hi. Title:") == reply_for("Say hi. Title:")
    assert endpoint.seen.requests[0]["authorization"] == f"Bearer {KEY}"


def test_a_rerun_sends_no_request(endpoint):
    connection = endpoint.connection()
    first = ask(connection, "one prompt")
    assert endpoint.seen.count() == 1
    assert ask(connection, "one prompt") == first
    assert endpoint.seen.count() == 1
    # Another model, or other parameters, is another request.
    ask(endpoint.connection(max_tokens=99), "one prompt")
    assert endpoint.seen.count() == 2


@pytest.mark.parametrize("model", ["flaky-429", "flaky-500"])
def test_429_and_500_are_retried(endpoint, model):
    assert ask(endpoint.connection(model), "retry me") == reply_for("retry me")
    assert endpoint.seen.count(model) == 2


def test_retries_stop_at_max_retries_and_the_error_never_says_the_key(endpoint):
    with pytest.raises(LLMError, match=r"HTTP 500, after 3 tries") as caught:
        ask(endpoint.connection("always-500", max_retries=2), "fail")
    assert endpoint.seen.count("always-500") == 3
    # The server echoed the Authorization header into its error body.
    assert "[redacted]" in str(caught.value) and not leaks(str(caught.value))


def test_a_stalled_reply_stops_at_the_timeout(endpoint):
    started = time.monotonic()
    with pytest.raises(LLMError, match="no reply within the timeout, after 2 tries"):
        ask(endpoint.connection("stall", timeout=0.3, max_retries=1), "wait")
    assert time.monotonic() - started < 1.4


def test_a_reply_that_is_not_json_is_refused(endpoint):
    with pytest.raises(LLMError, match="could not be read as a chat completion"):
        ask(endpoint.connection("malformed"), "bad")


@pytest.mark.parametrize("model", ["huge", "huge-nolength"])
def test_a_10_mb_reply_is_refused_as_it_is_read(endpoint, model):
    with pytest.raises(LLMError, match="1,000,000 bytes"):
        ask(endpoint.connection(model), "big")
    assert endpoint.seen.count(model) == 1  # not retried


def test_a_long_reply_is_cut(endpoint):
    assert ask(endpoint.connection("long", max_reply_chars=100), "long") == "L" * 100


def test_an_unset_key_variable_sends_no_key(endpoint, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    ask(endpoint.connection(), "local server")
    assert KEY not in endpoint.seen.requests[0]["authorization"]


def test_no_log_line_says_the_key_even_at_debug(endpoint, caplog, monkeypatch):
    import logging

    monkeypatch.setenv("OPENAI_LOG", "debug")
    with caplog.at_level(logging.DEBUG):
        ask(endpoint.connection(), "log me")
        with pytest.raises(LLMError):
            ask(endpoint.connection("always-500", max_retries=1), "log the failure")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "chat/completions" in logged  # the clients did log, at debug
    assert not leaks(logged)
