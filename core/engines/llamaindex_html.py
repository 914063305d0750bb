"""LlamaIndex's HTMLNodeParser as an engine: nodes from the tags of a page's markup.

HTMLNodeParser reads markup (BeautifulSoup's ``html.parser``), so it is given the
page's source that the HTML loader keeps (``Document.markup``), not the
extracted text; a document not loaded from HTML is read as markup as it stands.
Its nodes are the text of the listed tags, stripped and joined by line, so they
are placed in the document's text by span recovery, ``rewritten`` where the
joins differ from the page's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from core.engines.base import engine_summary
from core.engines.llamaindex import DISTRIBUTION, LLAMAINDEX, LlamaIndexEngine, link_kwargs
from core.errors import ConfigError
from core.params import param
from core.schema import Document
from core.splitters.registry import SPLITTERS
from core.translate.snippet import CodeSnippet

_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


@SPLITTERS.register
@dataclass(frozen=True)
class LlamaIndexHTMLSplitter(LlamaIndexEngine):
    """LlamaIndex's HTMLNodeParser: one node per run of same-named tags, the tag's name in metadata.

    A tag's text leaves out the listed tags inside it (they are nodes of their
    own); text in no listed tag is left out.
    """

    name = "llamaindex.html"
    framework_class = "HTMLNodeParser"
    summary = engine_summary(
        LLAMAINDEX, DISTRIBUTION, "HTMLNodeParser: a node per run of same-named tags in the page's markup."
    )
    defaults_from = "llama_index.core.node_parser:HTMLNodeParser.from_defaults"
    reads_markup: ClassVar[bool] = True

    tags: tuple[str, ...] = param(
        ("p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "b", "i", "u", "section"),
        "The tags whose text becomes nodes; consecutive tags of one name share a node.",
    )

    def langchain_stand_in(self, code: CodeSnippet) -> str:
        """LangChain's HTMLHeaderTextSplitter at the heading tags among ``tags`` (a SentenceSplitter-like stand-in
        where there are none)."""
        headings = [tag for tag in self.tags if re.fullmatch(r"[hH][1-6]", tag)]
        if not headings:
            return super().langchain_stand_in(code)
        self.stand_in_note(
            code, "LangChain", f"HTMLHeaderTextSplitter at {', '.join(headings)}", partly={"tags": "its headings"}
        )
        # The native html splitter's call, without its note: that one is about ChunkScope's own html splitter.
        return SPLITTERS.create("html", headings_to_split_on=tuple(headings)).header_splitter(code)

    def validate(self) -> None:
        if not self.tags:
            raise ConfigError(f"{self.name}: tags must name at least one tag")
        for tag in self.tags:
            if not _TAG_NAME.fullmatch(tag):
                raise ConfigError(f"{self.name}: {tag!r} is not a tag name (e.g. 'p', 'h2', 'li')")

    @property
    def covers_text(self) -> bool:
        return False  # text outside the listed tags is not in any node

    def unsuited_reason(self, document: Document) -> str | None:
        reason = super().unsuited_reason(document)  # not an HTML page
        if reason is not None or self._has_tags(self.source_text(document)):
            return reason
        name = document.metadata.get("file_name", "this document")
        return (
            f"LlamaIndex's HTMLNodeParser makes nodes only from its tags ({', '.join(self.tags)}), and {name} has "
            "none of them, so it makes no nodes; add the page's tags or pick a splitter that cuts text"
        )

    def _has_tags(self, markup: str) -> bool:
        # An opening tag of one of ``tags`` (comments and scripts are not told apart: a hint, not a parse).
        names = "|".join(re.escape(tag) for tag in self.tags)
        return re.search(rf"<(?:{names})[\s/>]", markup, re.IGNORECASE) is not None

    def framework_kwargs(self) -> dict[str, Any]:
        return {"tags": list(self.tags), **link_kwargs(self)}
