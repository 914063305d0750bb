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

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "core.tokens.wordpiece_native",
            ["core/tokens/wordpiece_native.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension("core.utf8_native", ["core/utf8_native.c"], extra_compile_args=["-O2"], optional=True),
        Extension(
            "core.splitters.fast.separator_search_native",
            ["core/splitters/fast/separator_search_native.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "core.splitters.nodes_native", ["core/splitters/nodes_native.c"], extra_compile_args=["-O2"], optional=True
        ),
        Extension(
            "core.splitters.fast.literal_cuts_native",
            ["core/splitters/fast/literal_cuts_native.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "core.splitters.fast.packing_native",
            ["core/splitters/fast/packing_native.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ]
)
