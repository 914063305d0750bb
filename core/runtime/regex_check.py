r"""A user's regex is checked before it runs: short, and free of the shapes that backtrack exponentially.

Every parameter that holds a regular expression says so where it is declared
(``param(..., regex=...)`` in :mod:`core.params`), and construction runs this one
check, so a form, a share link, ``--set``, a JSON config and a batch refuse
``(a+)+`` with the same sentence instead of a stalled page. A check of shapes always
misses one (polynomial blow-ups such as ``\s*\s*\s*\d``, a long run of optional atoms),
so it is only the fast first answer; the bound is on execution: the native splitter
matches under the ``regex`` module's timeout, and everything that hands a pattern to a
framework, whose ``re`` cannot be interrupted, runs in a child stopped at a deadline
(:mod:`core.runtime.bounded`: splits, the Export page's check, readers).
"""

from __future__ import annotations

import re

# The parser behind ``re`` (Python 3.11+), used only to read a pattern's shape.
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

import regex

from core.errors import ConfigError, as_typed

MAX_PATTERN_LENGTH = 200
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT}
if hasattr(sre_constants, "POSSESSIVE_REPEAT"):
    _REPEATS.add(sre_constants.POSSESSIVE_REPEAT)


def check_bounded_regex(pattern: str, where: str) -> None:
    """Raise ConfigError unless ``pattern`` is short and free of the shapes that backtrack exponentially.

    Rejected: any quantifier inside a repeat (``(a+)+``, ``(?:a?){30}``), repeated alternation
    (``(a|ab)*``) and back-references. This is a fast first answer, not the bound: a pattern can backtrack
    without nesting (``a?a?a?…aaa…``), so every match of a user's pattern also runs under a deadline.
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ConfigError(f"{where} {as_typed(pattern[:20])}… is longer than {MAX_PATTERN_LENGTH} characters")
    try:
        regex.compile(pattern, regex.VERSION0)
        parsed = sre_parse.parse(pattern)
    except (regex.error, re.error, RecursionError, OverflowError) as exc:
        raise ConfigError(f"{where} {as_typed(pattern)} is not a valid regular expression ({exc})") from None
    problem = _risky(parsed, inside_repeat=False)
    if problem:
        raise ConfigError(f"{where} {as_typed(pattern)} is rejected: {problem} can take exponential time")


def _risky(items: object, inside_repeat: bool) -> str | None:
    for op, arg in items:  # type: ignore[attr-defined]
        if op in _REPEATS:
            low, high, sub = arg
            repeats = high > 1
            # Inside a repeat, an optional atom is a choice made again on every round: ``(?:a?){30}a{30}`` tries
            # 2**30 ways as surely as ``(a+)+`` does. So any quantifier there but ``{1}`` is refused, ``?`` too.
            if inside_repeat and (repeats or low != high):
                return "a quantifier inside a quantifier"
            found = _risky(sub, inside_repeat or repeats)
            if found:
                return found
        elif op is sre_constants.BRANCH:
            if inside_repeat:
                return "an alternation inside a quantifier"
            for branch in arg[1]:
                found = _risky(branch, inside_repeat)
                if found:
                    return found
        elif op is sre_constants.SUBPATTERN:
            found = _risky(arg[-1], inside_repeat)
            if found:
                return found
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            found = _risky(arg[1], inside_repeat)
            if found:
                return found
        elif op is sre_constants.GROUPREF or op is sre_constants.GROUPREF_EXISTS:
            return "a back-reference"
        elif op is getattr(sre_constants, "ATOMIC_GROUP", None):
            found = _risky(arg, inside_repeat)
            if found:
                return found
    return None
