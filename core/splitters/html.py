"""HTML heading splitter: sections of the page's visible text, cut at chosen heading tags.

The HTML loader's document text is the visible text, with a ``heading`` element
(level from h1–h6) for every heading; the section logic is the Markdown
splitter's (:class:`~core.splitters.markdown.SectionSplitter`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.params import param
from core.splitters.markdown import SectionSplitter, validate_heading_tags
from core.splitters.registry import SPLITTERS
from core.translate.snippet import CodeSnippet, call


@SPLITTERS.register
@dataclass(frozen=True)
class HTMLSplitter(SectionSplitter):
    """Like LangChain's HTMLHeaderTextSplitter, over the loader's heading elements, with exact spans.

    Only the listed heading tags start a section and enter ``header_path``;
    other headings stay inside the section that holds them. A document without
    heading elements is one section.
    """

    name = "html"
    summary = "One node per section of an HTML page, cut at the chosen heading tags, with its header path."

    # Its scripts read the page's HTML (HTMLNodeParser, HTMLHeaderTextSplitter), not the visible text it splits.
    script_reads_markup: ClassVar[bool] = True

    headings_to_split_on: tuple[str, ...] = param(("h1", "h2", "h3"), "Heading tags that start a new node (h1 to h6).")

    def validate(self) -> None:
        validate_heading_tags(self.name, self.headings_to_split_on)

    def split_levels(self) -> set[int]:
        return validate_heading_tags(self.name, self.headings_to_split_on)

    def llamaindex(self, code: CodeSnippet) -> str:
        code.use("from llama_index.core.node_parser import HTMLNodeParser")
        code.note(
            "html: HTMLNodeParser makes a node per matching tag of the raw HTML; ChunkScope makes a node per "
            "heading section of the page's visible text."
        )
        return call("HTMLNodeParser", tags=[*self.headings_to_split_on, "p", "li", "section"])

    def langchain(self, code: CodeSnippet) -> str:
        code.note("html: HTMLHeaderTextSplitter reads the raw HTML; ChunkScope splits the page's visible text.")
        return self.header_splitter(code)

    def header_splitter(self, code: CodeSnippet) -> str:
        """The LangChain lines that cut ``documents`` into ``chunks`` with HTMLHeaderTextSplitter at these headings."""
        code.use(
            "from langchain_core.documents import Document",
            "from langchain_text_splitters import HTMLHeaderTextSplitter",
        )
        headers = [(tag, f"Header {tag[1:]}") for tag in self.headings_to_split_on]
        return (
            f"html_splitter = {call('HTMLHeaderTextSplitter', headers_to_split_on=headers)}\n\n"
            "chunks = [\n"
            "    Document(page_content=section.page_content, metadata={**document.metadata, **section.metadata})\n"
            "    for document in documents\n"
            "    if document.metadata['file_name'].endswith('.html')\n"
            "    for section in html_splitter.split_text(document.page_content)\n"
            "]"
        )
