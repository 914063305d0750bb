"""The LLM a user configures: the connection (:mod:`.connection`), the reply cache (:mod:`.cache`) and the client
(:mod:`.client`, which imports ``openai``; only where a request is about to be made)."""

from core.llm.connection import REDACTED, LLMConnection, LLMError, redact

__all__ = ["REDACTED", "LLMConnection", "LLMError", "redact"]
