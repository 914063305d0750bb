"""Words, stopwords and term weights shared by the keyword and summary extractors."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

# A word starts with a letter and may hold inner apostrophes, hyphens and digits ("top-k", "gpt4").
WORD = re.compile(r"[^\W\d_](?:[\w'’-]*\w)?")

# Function words and filler that never make a useful keyword. Our own list, kept short
# on purpose: domain words such as "model" or "data" must stay eligible.
STOPWORDS = frozenset(
    """
    a about above after again against all almost also although always am among an and any are around as at
    be became because become becomes been before being below between both but by can cannot could did do does
    doing done down during each either else enough etc even ever every few for from further get gets getting
    given gives go goes going got had has have having he her here hers herself him himself his how however i if
    in into is it its itself just least less let like likely made make makes many may me might more most much
    must my myself near need needs neither never no nor not now of off often on once one only onto or other
    others otherwise our ours ourselves out over own per perhaps put quite rather really said same see seen
    several shall she should since so some something sometimes still such than that the their theirs them
    themselves then there therefore these they thing things this those though through thus to together too
    toward towards under until up upon us use used uses using usually very via was we well were what whatever
    when where whether which while who whom whose why will with within without would yet you your yours
    yourself yourselves first second third new way ways whole instead already back s t don doesn isn aren
    wasn weren won can't don't doesn't isn't it's that's there's they're we're you're i'm i've let's
    """.split()
)


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order."""
    return [match.group().lower().replace("’", "'") for match in WORD.finditer(text)]


def stem(word: str) -> str:
    """A deliberately crude stem that groups plurals with their singular ("chunks" -> "chunk")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def is_content_word(word: str) -> bool:
    return len(word) > 2 and word not in STOPWORDS


def content_terms(text: str) -> list[str]:
    """Stems of the content words of ``text``, in order."""
    return [stem(word) for word in words(text) if is_content_word(word)]


def smoothed_idf(units: Sequence[Iterable[str]]) -> dict[str, float]:
    """Inverse frequency of each term over ``units`` (paragraphs or sentences).

    Smoothed so a term found in every unit still weighs ``log 2`` rather than
    nothing: inside one document, the main topic is everywhere and must not vanish.
    """
    count = len(units)
    document_frequency: Counter[str] = Counter()
    for unit in units:
        document_frequency.update(set(unit))
    return {term: math.log(1 + count / df) for term, df in document_frequency.items()}
