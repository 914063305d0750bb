"""The compiled part: one C file (benchmarks/RESULTS.md, "One fast path per rule", issue 41).

- core/tokens/wordpiece_native.c: BERT WordPiece over ASCII text (twin: core/tokens/wordpiece_numpy.py).

Every other rule has one readable Python form and at most one fast Python form; five more C twins
(the character splitter's search, the recursive splitter's literal cuts and packing, spans to nodes,
the Document id's UTF-8) gave a whole split or batch 0.98-1.08x each and were folded back (issue 41).
A C file must earn at least 2x on a job a user runs, and be named in core/cli/doctor.py. wordpiece_native.c
stays as issue 41's named exception (about 10x its twin on its own work, on the model-token hot path), though
whole jobs measured 1.0-1.3x (CLI) and 1.2-1.6x (API splits): a later round may fold it too.

Everything else is in pyproject.toml. ``optional=True``: without a C compiler the install still
succeeds, and the twin runs instead. ``chunkscope doctor`` says which runs; a compile that fails
leaves ``<module>.build-failed`` beside the module, with the compiler's message, so it says that too.
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Every core/**/*_native.c is one extension module named by its path (the Makefile's install stamp and
# tests/test_make.py find the same files).
SOURCES = sorted(path.as_posix() for path in Path("core").rglob("*_native.c"))


class BuildExtSayingWhatFailed(build_ext):
    """build_ext that leaves a note beside an optional module whose compile failed (and removes it on success):
    in the built package (a wheel) and beside the C file (an editable install, where the module is imported)."""

    def build_extension(self, ext: Extension) -> None:
        name = ext.name.rpartition(".")[2] + ".build-failed"
        notes = (Path(self.get_ext_fullpath(ext.name)).with_name(name), Path(ext.sources[0]).with_name(name))
        try:
            super().build_extension(ext)
        except Exception as error:
            if ext.optional:
                for note in notes:
                    note.parent.mkdir(parents=True, exist_ok=True)
                    note.write_text(f"{type(error).__name__}: {error}\n")
                print(f"\n*** {ext.name} did not compile ({error}): its twin runs instead; see `chunkscope doctor`\n")
            raise
        for note in notes:
            note.unlink(missing_ok=True)


setup(
    cmdclass={"build_ext": BuildExtSayingWhatFailed},
    ext_modules=[
        Extension(source.removesuffix(".c").replace("/", "."), [source], extra_compile_args=["-O2"], optional=True)
        for source in SOURCES
    ],
)
