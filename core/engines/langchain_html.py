"""LangChain's HTMLHeaderTextSplitter as an engine: sections of a page's markup, its headers in metadata.

HTMLHeaderTextSplitter reads markup (BeautifulSoup's ``html.parser``), so it is
given the page's source that the HTML loader keeps (``Document.markup``), not the
extracted text; a document not loaded from HTML is read as markup as it stands.
It yields each header alone and the text under it with the elements' texts
joined by two spaces and a newline, so those chunks are ``rewritten``: placed in
the document's text by span recovery.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from core.engines.base import engine_summary
from core.engines.langchain import DISTRIBUTION, LANGCHAIN, OWN_LINKS, LangChainHeaderEngine
from core.errors import ConfigError
from core.params import param
from core.splitters.registry import SPLITTERS
from core.translate.snippet import CodeSnippet, call

_HEADING_TAG = re.compile(r"h[1-6]")


@SPLITTERS.register
@dataclass(frozen=True)
class LangChainHTMLHeaderSplitter(LangChainHeaderEngine):
    """LangChain's HTMLHeaderTextSplitter: a chunk per header and per section under it, headers in metadata."""

    name = "langchain.html_header"
    framework_class = "HTMLHeaderTextSplitter"
    summary = engine_summary(
        LANGCHAIN, DISTRIBUTION, "HTMLHeaderTextSplitter: the page's markup cut at its headers, headers in metadata."
    )
    defaults_from = "langchain_text_splitters:HTMLHeaderTextSplitter.__init__"
    reads_markup: ClassVar[bool] = True
    own_params = {
        "headers_to_split_on": "required by LangChain (no default); these are its documentation's example.",
        **OWN_LINKS,
    }

    headers_to_split_on: tuple[str, ...] = param(
        ("h1 Header 1", "h2 Header 2", "h3 Header 3"),
        "The heading tags to split at, each as its tag (h1 to h6), a space, and its metadata key.",
    )
    return_each_element: bool = param(False, "One chunk per HTML element instead of per section.", advanced=True)

    def validate(self) -> None:
        for item in self.headers_to_split_on:
            tag, _, key = item.partition(" ")
            if not _HEADING_TAG.fullmatch(tag) or not key.strip():
                raise ConfigError(
                    f"{self.name}: each of headers_to_split_on is a tag h1 to h6, a space and a key "
                    f"(e.g. 'h2 Header 2'), got {item!r}"
                )

    @property
    def covers_text(self) -> bool:
        return False  # it reads the markup: what it keeps of the page is its own choice (scripts included)

    def llamaindex_stand_in(self, code: CodeSnippet) -> str:
        """LlamaIndex's HTMLNodeParser over the same heading tags (and the paragraphs and list items under them)."""
        tags = [item.partition(" ")[0] for item in self.headers_to_split_on]
        self.stand_in_note(
            code,
            "LlamaIndex",
            "HTMLNodeParser (a node per run of these tags, p, li and section)",
            carries=("headers_to_split_on",),
        )
        code.use("from llama_index.core.node_parser import HTMLNodeParser")
        return call("HTMLNodeParser", tags=[*tags, "p", "li", "section"])

    def framework_kwargs(self) -> dict[str, Any]:
        pairs = [(tag, key.strip()) for tag, _, key in (item.partition(" ") for item in self.headers_to_split_on)]
        return {"headers_to_split_on": pairs, "return_each_element": self.return_each_element}
