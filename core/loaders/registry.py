"""The loader registry."""

from core.registry import Registry

# Each format's module registers its loader when the registry is first read, so importing this package (the
# document cache does, on every cold run) imports no parser; the app lists them in this order.
_FORMATS = ("text", "markdown", "html", "pdf", "code", "csv", "docx", "pptx", "xlsx", "epub", "json")
LOADERS: Registry = Registry("loader", providers=tuple(f"core.loaders.{name}" for name in _FORMATS), order=_FORMATS)


# Each format's extensions, as its loader class declares them: a table, so that finding a file's loader imports
# that format's module only and listing a folder imports none (the formats' modules together cost ~0.25 CPU-s,
# pypdf alone 0.13 s, in every batch worker and driver). Each loader class takes its extensions from here.
FORMAT_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "text": (".txt", ".text", ".log", ".rst"),
    "markdown": (".md", ".markdown"),
    "html": (".html", ".htm"),
    "pdf": (".pdf",),
    "code": (
        *(".py", ".js", ".jsx", ".ts", ".tsx", ".java", ".go", ".rs", ".c", ".h", ".cpp", ".hpp", ".cs", ".rb"),
        *(".php", ".kt", ".swift", ".scala", ".sh", ".sql", ".tex"),
    ),
    "csv": (".csv", ".tsv"),
    "docx": (".docx",),
    "pptx": (".pptx",),
    "xlsx": (".xlsx",),
    "epub": (".epub",),
    "json": (".json", ".jsonl", ".ndjson"),
}
# Loaded when named, never found by a folder walk: a .json file in a folder is as often settings or a query list
# (sample_docs/queries.json) as a corpus.
BY_NAME_ONLY = frozenset({".json"})
# What a folder walk loads: every format's extensions but those.
FOLDER_EXTENSIONS = frozenset(ext for extensions in FORMAT_EXTENSIONS.values() for ext in extensions) - BY_NAME_ONLY
