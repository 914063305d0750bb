"""About how many bytes a value holds in memory: what a cache bounded in bytes charges for keeping it.

Deep (a document with its text, elements and pages; a tuple of nodes with their texts, metadata
and links), counting an object shared inside the value once, and quick: a sequence longer than
:data:`SAMPLE` is measured on evenly spaced items and scaled, so a split of 100,000 nodes costs a
few hundred object visits, not a walk of every node. Shared items are counted once per sample, so
an estimate errs high rather than low.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

# Items measured of a longer list, tuple or set (then scaled to its length).
SAMPLE = 64
# How deep the walk goes; below it an object counts its own size only.
_DEPTH = 8
_LEAVES = (str, bytes, bytearray, int, float, bool, complex, type(None))


def approx_bytes(value: Any) -> int:
    """An estimate of the memory ``value`` and everything it holds take."""
    return _size(value, set(), _DEPTH)


def _size(value: Any, seen: set[int], depth: int) -> int:
    if id(value) in seen:
        return 0
    seen.add(id(value))
    own = sys.getsizeof(value, 64)
    if isinstance(value, _LEAVES) or depth == 0:
        return own
    nbytes = getattr(value, "nbytes", None)  # a numpy array or an array.array-like buffer
    if isinstance(nbytes, int):
        return own + nbytes
    if isinstance(value, Mapping):
        return own + sum(_size(k, seen, depth - 1) + _size(v, seen, depth - 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return own + _items_size(list(value) if isinstance(value, (set, frozenset)) else value, seen, depth)
    return own + _attributes_size(value, seen, depth)


def _items_size(items: Any, seen: set[int], depth: int) -> int:
    count = len(items)
    if count <= SAMPLE:
        return sum(_size(item, seen, depth - 1) for item in items)
    step = count / SAMPLE
    sampled = sum(_size(items[int(i * step)], seen, depth - 1) for i in range(SAMPLE))
    return int(sampled * count / SAMPLE)


def _attributes_size(value: Any, seen: set[int], depth: int) -> int:
    """An object's attributes: its ``__dict__`` and every slot of its class and bases."""
    total = 0
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        total += _size(attributes, seen, depth - 1)
    for cls in type(value).__mro__:
        for slot in cls.__dict__.get("__slots__", ()):
            if isinstance(slot, str) and slot not in ("__dict__", "__weakref__"):
                total += _size(getattr(value, slot, None), seen, depth - 1)
    return total
