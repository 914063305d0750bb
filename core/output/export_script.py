"""The sections every exported script shares: reading the user's files, retrieval kept apart, ``__main__``.

Metadata-aware splitters (LlamaIndex's sentence, token and hierarchical parsers)
leave room in every chunk for the metadata a node carries, so the script must give
the framework the very Document the app split: the same text, metadata, excluded
keys and templates, or the cuts move. The script therefore reads with ChunkScope's
own loaders when ChunkScope is installed (with the loader options the app ran) and
converts each document field by field. Without ChunkScope it reads the plain-text
formats itself, the way those loaders read a UTF-8 file, and says that any other
format needs ChunkScope's loader to give the same text. The file lists in the
script (suffixes, languages) are taken from the loaders' declarations here, so
they cannot drift from what the app reads.

Retrieval imports its packages inside ``retrieve()``, so the split (``nodes`` or
``chunks`` at the top level) runs with the framework alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core.output.export_metadata import outline_reading, section_rule
from core.output.export_own_split import own_split_applies
from core.output.install_line import with_imports
from core.output.splitter_code import splitter_code
from core.translate.snippet import CodeSnippet, literal, wrapped_literal

SAMPLE_QUERY = "What does chunk overlap protect against?"

# The converters: one ChunkScope Document -> the framework's, every field the split or the views read.
_LLAMAINDEX_DOCUMENT = '''\
def framework_document(document) -> Document:
    """A ChunkScope Document as LlamaIndex's: text, id, metadata, excluded keys and templates."""
    return Document(
        text={text},
        id_=document.id,
        metadata=dict(document.metadata),
        excluded_llm_metadata_keys=list(document.excluded_llm_metadata_keys),
        excluded_embed_metadata_keys=list(document.excluded_embed_metadata_keys),
        metadata_template=document.metadata_template,
        metadata_separator=document.metadata_separator,
        text_template=document.text_template,
    )'''

_LANGCHAIN_DOCUMENT = '''\
def framework_document(document) -> Document:
    """A ChunkScope Document as LangChain's: text, id and metadata (the views are rendered below)."""
    return Document(page_content={text}, metadata=dict(document.metadata), id=document.id)'''

# Without ChunkScope: a plain-text file as its loader reads a UTF-8 one. Keys ChunkScope keeps out of the
# LLM and EMBED views (load details) are excluded here too.
_PLAIN_TEXT_READER = '''\
def plain_text_document(file: Path) -> Document:
    """A UTF-8 text, Markdown or code file as ChunkScope's loader reads it: its text and its metadata."""
    file_type = PLAIN_TEXT.get(file.suffix.lower())
    if file_type is None:
        raise SystemExit(f"{file.name}: only ChunkScope's loaders read this format as the app did: install ChunkScope")
    options = LOADER_OPTIONS.get(file_type, {})
    data = file.read_bytes()
    # UTF-8, with or without a byte-order mark (which is not text); ChunkScope also detects other encodings.
    encoding = "utf-8-sig" if data.startswith(b"\\xef\\xbb\\xbf") else "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SystemExit(
            f"{file.name}: not UTF-8 (byte {data[exc.start]:#04x} at position {exc.start}); ChunkScope's loaders "
            "detect its encoding: install ChunkScope"
        ) from None
    if not text.strip():
        raise SystemExit(f"{file.name}: {'is empty' if not text else 'contains only whitespace'}, as the app says")
    if options.get("normalize_newlines", True):
        text = text.replace("\\r\\n", "\\n").replace("\\r", "\\n")
    metadata = {"file_name": file.name, "file_type": file_type, "encoding": encoding}
    if file_type == "markdown" and markdown_title(text):
        metadata["title"] = markdown_title(text)
    if CODE_LANGUAGES.get(file.suffix.lower()):
        metadata["language"] = CODE_LANGUAGES[file.suffix.lower()]
    return {make}'''

_MARKDOWN_TITLE = r'''
def markdown_title(text: str) -> str:
    """ChunkScope's title of a Markdown file: its first level-1 heading's words, without inline markup."""
    fence, paragraph = "", []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        outside = len(line) - len(stripped) < 4  # four spaces in: indented code
        if outside and stripped[:3] in ("```", "~~~"):
            fence, paragraph = ("" if fence == stripped[:3] else fence or stripped[:3]), []
        elif fence:
            continue
        elif not outside:  # indented code, or the continuation of a paragraph
            paragraph += [stripped] if paragraph else []
        elif re.match(r"#(?:[ \t]|$)", stripped):
            return _inline_words(re.sub(r"(?:^|[ \t])#+[ \t]*$", "", stripped[1:]))  # less any closing #s
        elif paragraph and re.fullmatch(r"=+[ \t]*", stripped):
            return _inline_words(" ".join(paragraph))  # a setext heading: a paragraph underlined with =
        elif not stripped or re.match(r"#|[-*+>|]|\d+[.)]", stripped):
            paragraph = []  # a blank line or another block: no paragraph for a setext underline
        else:
            paragraph.append(stripped)
    return ""


def _inline_words(heading: str) -> str:
    heading = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link or image: its text
    heading = re.sub(r"(\*+|`+)(.+?)\1", r"\2", heading)  # emphasis and code spans: their text
    heading = re.sub(r"(?<!\w)(_+)(.+?)\1(?!\w)", r"\2", heading)  # _emphasis_, never inside a word
    return " ".join(heading.split())'''


_MAKE = {
    "LlamaIndex": (
        'Document(\n        text=text,\n        metadata=metadata,\n        excluded_llm_metadata_keys=["encoding"],\n'
        '        excluded_embed_metadata_keys=["encoding"],\n    )'
    ),
    "LangChain": "Document(page_content=text, metadata=metadata)",
}

_READ_DOCUMENTS = '''\
def files_in(paths: list[str], suffixes) -> list[Path]:
    """Each file named, and under each folder every file with one of ``suffixes`` (sorted, as ChunkScope walks it)."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)
        else:
            files.append(path)
    return files


def read_documents(paths: list[str]) -> list[Document]:
    """The Documents ChunkScope split: read by its own loaders when installed, else the plain-text files."""
    try:
        from core.loaders import folder_extensions, load, loader_for
    except ImportError:  # ChunkScope is not installed
        return [plain_text_document(file) for file in files_in(paths, FOLDER_SUFFIXES)]  # others: refused
    documents = []
    for file in files_in(paths, folder_extensions()):
        options = LOADER_OPTIONS.get(loader_for(file.name).name, {})
{convert}
    return documents'''

_CONVERT = "        documents += [framework_document(document) for document in {loaded}]"
_CONVERT_AND_KEEP = (
    "        for document in {loaded}:\n"
    "            CHUNKSCOPE_READ[document.id] = document\n"
    "            documents.append(framework_document(document))"
)

# read_documents() when the app read some formats with a framework's reader: those files go to read_with_reader().
_OWN_READ = "return [plain_text_document(file) for file in files_in(paths, FOLDER_SUFFIXES)]"
_OWN_READ_OR_FRAMEWORK = (
    "return [\n            read_with_reader(file) if file.suffix.lower() in FRAMEWORK_READ else plain_text_document(file)"
    "\n            for file in files_in(paths, FOLDER_SUFFIXES)\n        ]"
)
_LOADER_READ = "        options = LOADER_OPTIONS.get(loader_for(file.name).name, {})"
_FRAMEWORK_FIRST = (
    "        if file.suffix.lower() in FRAMEWORK_READ:\n"
    "            documents.append(read_with_reader(file))\n"
    "            continue\n" + _LOADER_READ
)

_EXTRACTED = '''
def extracted(documents: list) -> list:
    """Each document with the keys ChunkScope's offline extractors add, as the app added them before splitting."""
    from core.documents import apply_extractors
    from core.extractors import EXTRACTORS as extractors

    return apply_extractors(documents, [extractors.create(name, **params) for name, params in EXTRACTORS])'''


def plain_text_types() -> dict[str, str]:
    """Suffix -> ``file_type`` of the formats a script reads without ChunkScope (text, Markdown, code)."""
    from core.loaders import LOADERS

    kinds = {"text": "text", "markdown": "markdown", "code": "code"}
    return {suffix: kinds[cls.name] for cls in LOADERS if cls.name in kinds for suffix in cls.extensions}


def _source_text(config: Any, library: str) -> str:
    """What the framework call is handed: the document's text, or a web page's markup for a parser that reads HTML.

    The parsers that read markup are the engines that say so (``reads_markup``); a script whose split uses one
    of their classes (the engine itself, or a native splitter's translation) hands it the page's source.
    """
    from core.splitters import SPLITTERS

    markup_readers = {cls.framework_class for cls in SPLITTERS if getattr(cls, "reads_markup", False)}
    probe = CodeSnippet(library, "")
    splitter_code(config.splitter, probe)
    if any(line.rsplit(" ", 1)[-1] in markup_readers for line in probe.imports):
        return "document.text if document.markup is None else document.markup"
    return "document.text"


def reading_code(snippet: CodeSnippet, config: Any, paths: str | Sequence[str]) -> None:
    """Add to ``snippet`` the lines that make ``documents``: the files at ``paths``, read as the app read them."""
    from core.loaders import folder_extensions
    from core.loaders.code import LANGUAGES
    from core.loaders.readers.script import framework_suffixes, reader_code

    llamaindex = snippet.library == "LlamaIndex"
    paths = [paths] if isinstance(paths, str) else list(paths)
    options = {loader.name: loader.to_params(only_changed=True) for loader in config.loaders}
    options = {name: values for name, values in options.items() if values}
    snippet.use("from pathlib import Path", "import re")
    snippet.use(
        "from llama_index.core import Document" if llamaindex else "from langchain_core.documents import Document"
    )
    snippet.add(
        "# -- Documents -----------------------------------------------------------------------------\n"
        "# With ChunkScope installed (its core package importable), its own loaders read the files, with the options\n"
        "# the app ran: the same text, metadata, excluded keys and templates the app split. Metadata-aware\n"
        "# splitters leave room for that metadata in every chunk, so another reader's metadata moves the cuts.\n"
        "# Without ChunkScope, UTF-8 text, Markdown and code files are read here with the metadata ChunkScope\n"
        "# gives them; PDF, Office, HTML, CSV and other formats need ChunkScope's loaders to give the same text.\n"
        f"PATHS = {wrapped_literal(paths)}\n"
        f"LOADER_OPTIONS = {wrapped_literal(options)}\n"
        f"PLAIN_TEXT = {wrapped_literal(plain_text_types())}\n"
        f"CODE_LANGUAGES = {wrapped_literal(dict(LANGUAGES))}\n"
        "# What ChunkScope reads in a folder (without it, a file here that is not plain text stops the script).\n"
        f"FOLDER_SUFFIXES = {wrapped_literal(sorted(folder_extensions()))}"
    )
    # The offline extractors read each document here; the LLM extractors run on the nodes (core.output.export_llm).
    offline = [extractor for extractor in config.extractors if not extractor.node_level]
    if offline:
        extractors = [(extractor.name, extractor.to_params(only_changed=True)) for extractor in offline]
        snippet.body[-1] += (
            f"\n# ChunkScope's offline metadata extractors, run on each document as the app ran them.\nEXTRACTORS = {wrapped_literal(extractors)}"
        )
    converter = (_LLAMAINDEX_DOCUMENT if llamaindex else _LANGCHAIN_DOCUMENT).replace(
        "{text}", _source_text(config, snippet.library)
    )
    reader = _PLAIN_TEXT_READER.replace("{make}", _MAKE[snippet.library])
    # One part, so the blank lines between its definitions are PEP 8's.
    loaded = "extracted(load(file, **options))" if offline else "load(file, **options)"
    sectioned = config.metadata.section_metadata != "off"
    if sectioned:  # each document's headings, kept for the section paths written after the split
        loaded = f"outlined({loaded})"
    read_documents = _READ_DOCUMENTS.replace("{convert}", _CONVERT).replace("{loaded}", loaded)
    framework_read = framework_suffixes(config)
    if own_split_applies(config.splitter, snippet.library, framework_read):  # kept for ChunkScope's own splitter
        snippet.body[-1] += (
            "\n# The documents ChunkScope's loaders read, by id: its own splitter cuts them (chunkscope_split).\n"
            "CHUNKSCOPE_READ = {}"
        )
        read_documents = read_documents.replace(
            _CONVERT.replace("{loaded}", loaded), _CONVERT_AND_KEEP.replace("{loaded}", loaded)
        )
    if framework_read:  # formats the app read with a framework's reader: that reader's call, ChunkScope or not
        snippet.body[-1] += (
            "\n# What the app read with a framework's reader (its loader's reader option): read here by the same call."
            f"\nFRAMEWORK_READ = {wrapped_literal(framework_read)}"
        )
        read_documents = read_documents.replace(_OWN_READ, _OWN_READ_OR_FRAMEWORK).replace(
            _LOADER_READ, _FRAMEWORK_FIRST
        )
    parts = (converter, reader, _MARKDOWN_TITLE.strip("\n"), read_documents)
    if framework_read:
        parts += (reader_code(snippet, config),)
    if offline:
        parts += (_EXTRACTED.strip("\n"),)
    if sectioned:
        parts += (section_rule(snippet, config.metadata), outline_reading(snippet.library))
    snippet.body[-1] += "".join(f"\n\n\n{code}" for code in parts)
    snippet.body[-1] += "\n\n\ndocuments = read_documents(PATHS)"


def retrieval_section(
    snippet: CodeSnippet, config: Any, write: Callable[[CodeSnippet, Any], None], packages: str
) -> None:
    """Retrieval and postprocessors, imported inside ``retrieve()``: the split runs with the framework alone.

    The Install line says what the split needs, then what ``retrieve()`` adds.
    """
    # The split's Install line names what its imports need (core.output.install_line).
    split_install, before = with_imports(snippet.install, snippet.imports), set(snippet.imports)
    snippet.install = ""
    write(snippet, config)
    extra = " ".join(part for part in (packages, snippet.install) if part)
    snippet.install = f"{split_install}  (the split)\nretrieve() also needs: pip install {extra}"
    moved = [line for line in snippet.imports if line not in before]
    for index, part in enumerate(snippet.body):
        lines = part.split("\n")
        starts = [i for i, line in enumerate(lines) if line.startswith("def retrieve(")]
        if not starts:
            continue
        at = starts[0] + 1
        if lines[at].lstrip().startswith('"""'):  # after the docstring, however many lines it takes
            if lines[at].count('"""') == 1:
                at += next(i for i, line in enumerate(lines[at + 1 :], 1) if '"""' in line)
            at += 1
        imports = [f"    {line}" for block in moved for line in block.split("\n")]
        lines[at:at] = [
            "    # Only retrieval needs these (see Install at the top); the split above does not.",
            *imports,
        ]
        snippet.body[index] = (
            "# -- Retrieval and postprocessors ---------------------------------------------------------\n\n\n"
            + "\n".join(lines).strip("\n")
        )
        for line in moved:  # imported inside retrieve() now, not at the top
            del snippet.imports[line]
        return


def main_block(snippet: CodeSnippet, chunks: str, shown: str) -> None:
    """Run as a script: the chunk count, then one sample query if retrieval's packages are installed."""
    main = [
        'if __name__ == "__main__":',
        f'    print(f"{{len({chunks})}} {chunks}")',
        "    try:",
        f"        results = retrieve({literal(SAMPLE_QUERY)})",
        "    except ImportError as exc:  # retrieval's packages are not installed: the split is done",
        '        print(f"retrieve() skipped: {exc}")',
        "    else:",
        "        for result in results:",
        f"            print({shown})",
    ]
    snippet.body[-1] = snippet.body[-1].rstrip("\n") + "\n\n\n" + "\n".join(main)
