"""The LLM connection: an OpenAI-compatible endpoint, declared once, holding no secret.

Ollama, llama.cpp's server, vLLM, LM Studio and OpenAI all speak the OpenAI
chat-completions protocol, so one declaration reaches each of them: a base URL, a
model, and the *name* of the environment variable that holds the API key. The key
itself is read from the environment at the moment a request is made and is kept in
no configuration, link, script, snapshot, log line or error message: every error
raised on the way out passes through :func:`redact`.

Unset (an empty ``base_url``), there is no LLM: nothing is sent anywhere, and an
LLM extractor in a configuration is refused with a sentence saying so. The client
that talks to the endpoint (the ``openai`` package through LlamaIndex's
``OpenAILike``) lives in :mod:`core.llm.client`, imported only when a request is made.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from core.errors import ChunkScopeError, ConfigError
from core.params import Configurable, param

# An environment variable's name, as a shell writes it, ending in API_KEY. A pasted key ("sk-...") is not one; nor
# is the name of any other secret the process holds (DATABASE_URL, GITHUB_TOKEN): a shared link chooses this name
# and the endpoint the value is sent to, so only a variable meant for an API key can be chosen.
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,120}API_KEY$")
_URL = re.compile(r"^https?://[^\s/?#@]+(?::\d+)?(?:/[^\s?#]*)?$")
REDACTED = "[redacted]"
# Where a key might be shown in full or in part (a server echoing "Incorrect API key provided: sk-ab***yz").
_MIN_SECRET_CHARS = 4


class LLMError(ChunkScopeError):
    """A request to the configured LLM failed (after its retries), or its reply could not be used."""


@dataclass(frozen=True)
class LLMConnection(Configurable):
    """Where and how LLM requests go. Holds the name of the key's environment variable, never the key."""

    name = "llm"
    summary = "An OpenAI-compatible endpoint (Ollama, llama.cpp server, vLLM, LM Studio, OpenAI) for the LLM extractors."

    base_url: str = param(
        "",
        "The endpoint's base URL, up to /v1, e.g. http://localhost:11434/v1 (Ollama); empty: no LLM, nothing is sent.",
    )
    model: str = param("", "The model name the endpoint serves, e.g. llama3.2 or gpt-4o-mini.")
    api_key_env: str = param(
        "OPENAI_API_KEY",
        "The NAME of the environment variable that holds the API key, ending in API_KEY (the key itself is never "
        "stored); a variable that is not set sends no key (local servers need none).",
    )
    timeout: float = param(60.0, "Seconds one request may take before it is abandoned (and retried).", ge=0.1, le=600)
    max_retries: int = param(
        3, "Retries of a request answered 429 or 5xx, or not answered in time, each after a longer wait.", ge=0, le=10
    )
    retry_backoff: float = param(
        1.0,
        "Seconds before the first retry; each next one waits twice as long (a server's Retry-After, up to 60 s, wins).",
        ge=0.0,
        le=60.0,
        advanced=True,
    )
    concurrency: int = param(4, "Requests in flight at once.", ge=1, le=32)
    max_tokens: int = param(256, "Longest reply asked for, in tokens (the request's max_tokens).", ge=1, le=8192)
    temperature: float = param(0.0, "Sampling temperature; 0 makes a rerun's replies the same.", ge=0.0, le=2.0)
    max_reply_chars: int = param(
        2_000,
        "Longest text kept from one reply (model output is untrusted: longer replies are cut), in characters.",
        ge=10,
        le=100_000,
        advanced=True,
    )
    context_window: int = param(
        8_192, "The model's context window in tokens: each prompt's size is shown against it.", ge=256, le=2_000_000
    )
    deadline_seconds: float = param(
        600.0, "Seconds a whole extraction run may take before it is stopped.", ge=1.0, le=86_400.0, advanced=True
    )

    def validate(self) -> None:
        if self.base_url and not _URL.match(self.base_url):
            raise ConfigError(
                "llm: base_url must be an http:// or https:// URL without credentials, query or spaces, "
                "e.g. http://localhost:11434/v1"
            )
        if self.base_url and not self.model.strip():
            raise ConfigError("llm: a model is needed with base_url (the name the endpoint serves)")
        if not _ENV_NAME.match(self.api_key_env):
            # Said without echoing the value: it may be the key itself, pasted into the wrong box.
            raise ConfigError(
                "llm: api_key_env must be the NAME of an environment variable ending in API_KEY (letters, digits, _), "
                "not the key itself; put the key in that variable"
            )

    @property
    def configured(self) -> bool:
        """Whether there is an endpoint to send requests to."""
        return bool(self.base_url)

    def api_key(self) -> str:
        """The key from the environment ("" when the variable is not set: a local server needs none)."""
        return os.environ.get(self.api_key_env, "")

    def describe(self) -> str:
        """One line for a caption or a log: the endpoint, the model, where the key comes from."""
        key = f"key from ${self.api_key_env}" if self.api_key() else f"no key (${self.api_key_env} is not set)"
        return f"{self.model} at {self.base_url} ({key})"


def redact(text: str, *secrets: str) -> str:
    """``text`` with every secret (and its first and last few characters, as servers echo keys) replaced."""
    for secret in secrets:
        if len(secret) < _MIN_SECRET_CHARS:
            continue
        text = text.replace(secret, REDACTED)
        if len(secret) >= 12:
            # "sk-abcd...wxyz" and "sk-ab***yz": the head and the tail of a long key are enough to be a leak.
            text = text.replace(secret[:8], REDACTED).replace(secret[-6:], REDACTED)
    return text
