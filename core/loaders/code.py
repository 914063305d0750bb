"""Source code: the decoded file, its language named from the extension."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from core.loaders.base import elements_read
from core.loaders.registry import FORMAT_EXTENSIONS, LOADERS
from core.loaders.text import DecodedTextLoader, make_document, paragraph_spans, text_metadata
from core.schema import Document, Element

# Extension -> language name (the names the code splitters' presets use).
LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "bash",
    ".sql": "sql",
    ".tex": "latex",
}


@LOADERS.register
@dataclass(frozen=True)
class CodeLoader(DecodedTextLoader):
    """Source files: the text as written; one code element per blank-line separated block."""

    name = "code"
    summary = "Source code (.py, .js, .ts, .java, .go, .rs, .c, .cpp, .sql, .tex, ...), language from the extension."
    extensions = FORMAT_EXTENSIONS["code"]  # each with its language in LANGUAGES

    def load_bytes(self, data: bytes, file_name: str) -> list[Document]:
        text, encoding, warning, replaced = self.decode(data, file_name)
        language = LANGUAGES.get(PurePath(file_name).suffix.lower(), "")
        metadata = text_metadata(file_name, "code", encoding, warning, replaced)
        if language:
            metadata["language"] = language
        wanted = elements_read()  # blocks only for a caller that reads them (see core.loaders.base.reading_elements)
        spans = paragraph_spans(text) if wanted is None or "code" in wanted else []
        elements = [Element("code", a, b, attrs={"language": language}) for a, b in spans]
        return [make_document(text, metadata, elements)]
