"""The loader registry."""

from core.registry import Registry

# Each format's module registers its loader when the registry is first read, so importing this package (the
# document cache does, on every cold run) imports no parser; the app lists them in this order.
_FORMATS = ("text", "markdown", "html", "pdf", "code", "csv", "docx", "pptx", "xlsx", "epub", "json")
LOADERS: Registry = Registry("loader", providers=tuple(f"core.loaders.{name}" for name in _FORMATS), order=_FORMATS)
