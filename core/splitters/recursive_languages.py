"""The recursive splitter's separators for each language: ChunkScope's presets and LangChain's lists.

ChunkScope's presets (:data:`PRESETS`) cut before a language's structures, most
structural first; ``compat="langchain"`` takes LangChain's own lists
(:func:`langchain_separators`) from the installed package.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.errors import ConfigError

LANGUAGES = (
    "none",
    "python",
    "javascript",
    "typescript",
    "markdown",
    "html",
    "java",
    "go",
    "rust",
    "c",
    "cpp",
    "latex",
)

# Each preset is a list of regexes, most structural first; every list ends with
# blank lines, lines, spaces and (implicitly) single characters. The cut falls
# where the match starts, so with keep_separator="start" a definition keeps its
# leading newline and the chunk before it ends cleanly.
_TAIL = [r"\n\n", r"\n", r" "]
_JS_DECL = r"(?:export[ \t]+(?:default[ \t]+)?)?(?:async[ \t]+)?(?:function\*?|class)\b"
PRESETS: dict[str, list[str]] = {
    "none": _TAIL,
    # A decorator stays with the definition below it (the lookbehind skips a cut
    # right after a decorator line).
    "python": [
        r"(?m)(?<!^@[^\n]*)\n(?=@|class\b|(?:async[ \t]+)?def\b)",
        r"(?m)(?<!^[ \t]+@[^\n]*)\n(?=[ \t]+(?:@|class\b|(?:async[ \t]+)?def\b))",
        r"\n(?=[ \t]*(?:if|for|while|with|try|return)\b)",
        *_TAIL,
    ],
    "javascript": [
        r"\n(?=" + _JS_DECL + ")",
        r"\n(?=(?:export[ \t]+)?(?:const|let|var)\b)",
        r"\n(?=[ \t]*(?:if|for|while|switch|try|return)\b)",
        *_TAIL,
    ],
    "typescript": [
        r"\n(?="
        + _JS_DECL
        + r"|(?:export[ \t]+)?(?:declare[ \t]+)?(?:abstract[ \t]+class|interface|type|enum|namespace)\b)",
        r"\n(?=(?:export[ \t]+)?(?:const|let|var)\b)",
        r"\n(?=[ \t]*(?:if|for|while|switch|try|return)\b)",
        *_TAIL,
    ],
    "markdown": [
        r"\n(?=# )",
        r"\n(?=## )",
        r"\n(?=### )",
        r"\n(?=#{4,6} )",
        r"\n(?=```|~~~)",
        r"\n(?=(?:\*\*\*+|---+|___+)[ \t]*\n)",
        *_TAIL,
    ],
    "html": [
        r"(?i)(?=<(?:body|head|header|footer|nav|main|section|article|aside)\b)",
        r"(?i)(?=<h[1-6]\b)",
        r"(?i)(?=<(?:div|table|ul|ol|dl|pre|blockquote|form|figure)\b)",
        r"(?i)(?=<(?:p|li|tr|dt|dd)\b)",
        r"(?i)(?=<(?:br|td|th|span|img)\b)",
        *_TAIL,
    ],
    "java": [
        r"\n(?=(?:(?:public|protected|private|abstract|final|static|sealed)[ \t]+)*(?:class|interface|enum|record)\b)",
        r"\n(?=[ \t]+(?:public|protected|private|static|final|abstract|synchronized|@)\S)",
        r"\n(?=[ \t]*(?:if|for|while|switch|do|try|return)\b)",
        *_TAIL,
    ],
    "go": [
        r"\n(?=func\b)",
        r"\n(?=(?:type|var|const)\b)",
        r"\n(?=[ \t]*(?:if|for|switch|select|go|defer|return)\b)",
        *_TAIL,
    ],
    "rust": [
        r"\n(?=(?:#\[|(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:async[ \t]+)?(?:unsafe[ \t]+)?"
        r"(?:fn|struct|enum|trait|impl|mod|type|const|static|macro_rules!)\b))",
        r"\n(?=[ \t]+(?:pub[ \t]+)?(?:async[ \t]+)?(?:unsafe[ \t]+)?fn\b)",
        r"\n(?=[ \t]*(?:if|for|while|loop|match|let|return)\b)",
        *_TAIL,
    ],
    # A line that starts in column 0 with a name or a directive is top level in C.
    "c": [
        r"\n(?=[A-Za-z_#])",
        r"\n(?=[ \t]*(?:if|for|while|switch|do|return)\b)",
        *_TAIL,
    ],
    "cpp": [
        r"\n(?=(?:template\b|namespace\b|class\b|struct\b))",
        r"\n(?=[A-Za-z_#])",
        r"\n(?=[ \t]*(?:if|for|while|switch|do|try|return)\b)",
        *_TAIL,
    ],
    "latex": [
        r"\n(?=\\(?:part|chapter)\*?\{)",
        r"\n(?=\\section\*?\{)",
        r"\n(?=\\subsection\*?\{)",
        r"\n(?=\\subsubsection\*?\{)",
        r"\n(?=\\begin\{(?:enumerate|itemize|description|figure|table|equation|align)\*?\})",
        *_TAIL,
    ],
}


# ChunkScope's language names that LangChain's Language calls otherwise.
LANGCHAIN_LANGUAGE = {"javascript": "js", "typescript": "ts"}


@lru_cache(maxsize=16)
def langchain_separators(language: str) -> tuple[str, ...]:
    """LangChain's separators for ``language`` (regexes, most structural first, ending with ``""``)."""
    try:
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter
    except ImportError:  # pragma: no cover - a declared dependency
        raise ConfigError("recursive: compat=langchain needs langchain-text-splitters installed") from None
    return tuple(
        RecursiveCharacterTextSplitter.get_separators_for_language(Language(LANGCHAIN_LANGUAGE.get(language, language)))
    )


def literal_braces(pattern: str) -> str:
    """``pattern`` (a regex for Python's ``re``) with each ``{`` that starts no repeat count escaped.

    ``re`` reads LangChain's LaTeX separator ``\\\\begin{enumerate}`` as a literal brace; the ``regex``
    module reads ``{e...}`` as a fuzzy-match constraint and refuses it.
    """
    return re.sub(r"(?<!\\)\{(?!\d*(?:,\d*)?\})", r"\\{", pattern)
