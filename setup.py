"""The one compiled part: BERT WordPiece over ASCII text in C (core/tokens/wordpiece_native.c).

Everything else is in pyproject.toml. ``optional=True``: without a C compiler the install still
succeeds, and core.tokens.wordpiece reads the same tokens with numpy instead (slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("core.tokens.wordpiece_native", ["core/tokens/wordpiece_native.c"], extra_compile_args=["-O2"], optional=True)
    ]
)
