"""``chunkscope doctor``: which compiled paths this install runs, and why one does not.

Each rule has its readable form and at most one fast form; where the fast form is C
(setup.py builds it at install, ``optional``: without a compiler the install still
succeeds), its twin runs when the C did not build. The results are the same, only
slower, so nothing else says which one runs: this does. A compile that failed at
install left ``<module>.build-failed`` beside the module (setup.py), and is named
as such, apart from an install that had no C compiler.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from core.cli.output import write


@dataclass(frozen=True)
class NativePath:
    """One compiled module: where it is imported, what it does, and what runs without it."""

    module: str  # the extension, as setup.py names it from its .c file
    owner: str  # the module that imports it (or leaves it None) and holds the reason in ``NATIVE_IMPORT_ERROR``
    does: str
    twin: str


# Every core/**/*_native.c (tests/test_doctor.py holds this list to the C files in the tree).
NATIVE_PATHS = (
    NativePath(
        "core.tokens.wordpiece_native",
        "core.tokens.wordpiece",
        "the model tokenizer's word pieces of ASCII text",
        "core.tokens.wordpiece_numpy (numpy)",
    ),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``doctor`` to the chunkscope CLI."""
    doctor = subparsers.add_parser(
        "doctor", help="Say which compiled (C) paths are active in this install, and why one is not."
    )
    doctor.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    write("".join(f"{path.module}: {native_status(path)}\n" for path in NATIVE_PATHS), None)
    return 0


def native_status(path: NativePath) -> str:
    """One line: active, or inactive with the reason (a compile that failed, no compiler, a build that cannot load)."""
    owner = importlib.import_module(path.owner)
    name = path.module.rpartition(".")[2]
    if getattr(owner, name, None) is not None:
        return "active (built at install)"
    fallback = f"{path.twin} runs instead: same results, slower"
    folder = Path(owner.__file__).parent
    failed = folder / f"{name}.build-failed"
    if failed.is_file():
        reason = failed.read_text(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return f"INACTIVE: its compile FAILED at install ({reason[0]}); {fallback}. Fix the compiler, then reinstall."
    if not any((folder / f"{name}{suffix}").is_file() for suffix in EXTENSION_SUFFIXES):
        return f"inactive: not built (no C compiler at install); {fallback}. Install gcc, then reinstall."
    error = getattr(owner, "NATIVE_IMPORT_ERROR", None) or "not imported"
    return f"INACTIVE: built but does not load ({error}); {fallback}. Reinstall."
