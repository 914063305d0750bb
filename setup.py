"""The compiled parts, each with a pure-Python twin that gives the same results (slower).

- core/tokens/wordpiece_native.c: BERT WordPiece over ASCII text (twin: core/tokens/wordpiece_numpy.py);
- core/utf8_native.c: a str's UTF-8 for the Document id (twin: core.schema._hash_utf8);
- core/splitters/fast/separator_search_native.c: the character splitter's search for chunk bounds
  (twin: core.splitters.fast.separator_search.bounds_by_search_in_python);
- core/splitters/fast/literal_cuts_native.c, packing_native.c: the recursive splitter's cuts at a literal
  separator and the packing of pieces by bisection (twins: literal_bounds_in_python, merge_bounds_in_python);
- core/splitters/nodes_native.c: spans to nodes (twin: the loop in core.splitters.nodes.build_nodes).

Everything else is in pyproject.toml. ``optional=True``: without a C compiler the install still
succeeds, and the twins run instead.
"""

from pathlib import Path

from setuptools import Extension, setup

# Every core/**/*_native.c is one extension module named by its path (the Makefile's install stamp and
# tests/test_make.py find the same files).
SOURCES = sorted(path.as_posix() for path in Path("core").rglob("*_native.c"))

setup(
    ext_modules=[
        Extension(source.removesuffix(".c").replace("/", "."), [source], extra_compile_args=["-O2"], optional=True)
        for source in SOURCES
    ]
)
