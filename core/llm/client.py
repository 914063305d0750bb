"""The client that sends chat requests to the configured endpoint: LlamaIndex's ``OpenAILike`` over ``openai``.

What it adds to the frameworks' own client, in one place, for every request:

- the reply cache (:mod:`core.llm.cache`): a request asked before sends nothing;
- retries of 429, 5xx, timeouts and dropped connections, ``retry_backoff`` seconds
  doubled each time (a server's Retry-After wins, up to 60 s). The ``openai`` client
  and LlamaIndex's tenacity decorator each retry on their own; both are set to 0 so
  the retries are these, counted and bounded by the connection's ``max_retries``;
- at most ``concurrency`` requests in flight;
- replies bounded: a body past :data:`MAX_REPLY_BYTES` is refused while it is read
  (a 10 MB reply never reaches the JSON parser), and the text kept is cut to
  ``max_reply_chars`` with control characters removed: model output is untrusted;
- errors as :class:`core.llm.LLMError` with the key redacted from every sentence.

Imported only where a request is about to be made (it imports ``openai``); it lives
behind the ``llm`` extra, and :func:`require_client` says how to install it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import openai
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.llms.openai.utils import to_openai_message_dicts
from llama_index.llms.openai_like import OpenAILike

from core.llm.cache import ReplyCache, request_key
from core.llm.connection import LLMConnection, LLMError, redact
from core.llm.control import LLMControl

# Far above any reply worth keeping (max_reply_chars is at most 100,000 characters), far below what hurts.
MAX_REPLY_BYTES = 1_000_000
_MAX_RETRY_AFTER = 60.0
# C0 controls but tab and newline, DEL, and C1 controls: nothing a title or a keyword needs.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_RETRIED = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


class ReplyTooLarge(Exception):
    """A reply body grew past :data:`MAX_REPLY_BYTES` while it was read."""


def clean_reply(text: str | None, max_chars: int) -> str:
    """Model output as metadata may hold it: no control characters, at most ``max_chars`` characters, trimmed."""
    return _CONTROL.sub("", text or "")[:max_chars].strip()


class _BoundedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, max_bytes: int) -> None:
        self.inner = inner
        self.max_bytes = max_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.max_bytes:
                raise ReplyTooLarge(f"the reply was longer than {self.max_bytes:,} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class _BoundedTransport(httpx.AsyncBaseTransport):
    """httpx's transport, with every response body refused past ``max_bytes`` as it streams in."""

    def __init__(self, max_bytes: int) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_bytes:
            await response.aclose()
            raise ReplyTooLarge(f"the reply announced {int(length):,} bytes, more than {self.max_bytes:,} bytes")
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_BoundedStream(response.stream, self.max_bytes),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class CachedOpenAILike(OpenAILike):
    """``OpenAILike`` whose chat requests go through the cache, the retries, the concurrency bound and the reply bound."""

    _connection: LLMConnection = PrivateAttr()
    _cache: ReplyCache = PrivateAttr()
    _semaphores: dict[int, asyncio.Semaphore] = PrivateAttr(default_factory=dict)
    # Requests sent (each retry counts), replies served from the cache, retries, and the prompt and completion
    # tokens of the replies received, as the endpoint counted them (a reply from the cache costs none).
    _stats: dict[str, int] = PrivateAttr(default_factory=dict)
    # Progress and cancel (core.llm.control): each reply counted, no request sent once cancelled.
    _control: LLMControl | None = PrivateAttr(default=None)
    _in_flight: int = PrivateAttr(default=0)

    def __init__(
        self, connection: LLMConnection, cache: ReplyCache | None = None, control: LLMControl | None = None
    ) -> None:
        super().__init__(
            model=connection.model,
            api_base=connection.base_url,
            # openai's client refuses to start without a key; a local server ignores this placeholder.
            api_key=connection.api_key() or "no-key",
            is_chat_model=True,
            context_window=connection.context_window,
            max_tokens=connection.max_tokens,
            temperature=connection.temperature,
            timeout=connection.timeout,
            max_retries=0,
            async_http_client=httpx.AsyncClient(transport=_BoundedTransport(MAX_REPLY_BYTES)),
        )
        self._connection = connection
        self._cache = cache if cache is not None else ReplyCache()
        self._control = control
        self._stats = {"requests": 0, "cached": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}

    @property
    def stats(self) -> dict[str, int]:
        return self._stats

    def _key(self, messages: Sequence[ChatMessage], kwargs: dict[str, Any]) -> str:
        params = {key: value for key, value in self._get_model_kwargs(**kwargs).items() if key != "model"}
        dicts = [
            {"role": str(item.get("role")), "content": str(item.get("content") or "")}
            for item in to_openai_message_dicts(messages, model=self.model)
        ]
        return request_key(self._connection.base_url, self.model, dicts, params)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        found = self._semaphores.get(id(loop))
        if found is None:
            found = self._semaphores[id(loop)] = asyncio.Semaphore(self._connection.concurrency)
        return found

    async def _achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        key = self._key(messages, kwargs)
        cached = self._cache.get(key)
        if cached is not None:
            self._stats["cached"] += 1
            self._replied()
            return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=cached))
        async with self._semaphore():
            if self._control is not None:
                self._control.check(f"asking {self.model}")  # waited for its turn: cancelled meanwhile sends nothing
            self._in_flight += 1
            try:
                text = await self._send(messages, kwargs)
                self._cache.put(key, text)
            finally:
                self._in_flight -= 1
        self._replied()
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))

    def _replied(self) -> None:
        if self._control is not None:
            self._control.replied()

    async def drain(self) -> None:
        """Wait for the requests already sent (after a cancel: their replies are cached, none is lost)."""
        while self._in_flight:
            await asyncio.sleep(0.01)

    async def _send(self, messages: Sequence[ChatMessage], kwargs: dict[str, Any]) -> str:
        connection = self._connection
        attempt = 0
        while True:
            self._stats["requests"] += 1
            try:
                response = await super()._achat(messages, **kwargs)
            except _RETRIED as exc:
                if _cause(exc, ReplyTooLarge) is not None:
                    raise self._error(str(_cause(exc, ReplyTooLarge))) from None
                if attempt >= connection.max_retries:
                    raise self._error(_sentence(exc, attempt + 1)) from None
                wait = min(connection.retry_backoff * 2**attempt, _MAX_RETRY_AFTER)
                await asyncio.sleep(_retry_after(exc, wait))
                attempt += 1
                self._stats["retries"] += 1
                continue
            except openai.APIStatusError as exc:  # 4xx other than 429: asking again changes nothing
                raise self._error(_sentence(exc, attempt + 1)) from None
            except Exception as exc:  # a reply that is not a chat completion (malformed JSON, no choices)
                raise self._error(f"its reply could not be read as a chat completion ({type(exc).__name__})") from None
            self._count_usage(response.additional_kwargs)
            return clean_reply(response.message.content, connection.max_reply_chars)

    def _count_usage(self, usage: Any) -> None:
        """Add a reply's token usage (LlamaIndex's reading of the completion's ``usage``; a server may send none)."""
        for name in ("prompt_tokens", "completion_tokens"):
            value = usage.get(name) if isinstance(usage, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                self._stats[name] += value

    def _error(self, what: str) -> LLMError:
        connection = self._connection
        return LLMError(redact(f"LLM request to {connection.base_url} ({connection.model}): {what}", connection.api_key()))


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen = exc
    while seen is not None:
        if isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _retry_after(exc: Exception, fallback: float) -> float:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        try:
            return min(max(float(value) * scale, 0.0), _MAX_RETRY_AFTER)
        except (TypeError, ValueError):
            continue
    return fallback


def _sentence(exc: Exception, tries: int) -> str:
    tried = f"after {tries} tr{'y' if tries == 1 else 'ies'}"
    if isinstance(exc, openai.APITimeoutError):
        return f"no reply within the timeout, {tried}"
    if isinstance(exc, openai.APIStatusError):
        # The body's first words say why (a wrong model name, a bad key); the key is redacted by the caller.
        body = " ".join(str(getattr(exc, "message", "")).split())[:200]
        return f"the endpoint answered HTTP {exc.status_code}, {tried}: {body}"
    return f"the endpoint could not be reached ({type(exc).__name__}), {tried}"


def make_llm(
    connection: LLMConnection, cache: ReplyCache | None = None, control: LLMControl | None = None
) -> CachedOpenAILike:
    """The LlamaIndex LLM for ``connection`` (counting replies into ``control``, stopped by it); refused when there
    is no endpoint."""
    if not connection.configured:
        raise LLMError("no LLM is configured: set the llm base_url and model first")
    return CachedOpenAILike(connection, cache, control)
