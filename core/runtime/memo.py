"""A small thread-safe LRU bounded by a budget of ``cost`` units and a number of entries.

Core keeps per-text work that Streamlit reruns would otherwise redo (token
counts, token indexes, sentence ends) in these; each holder says what a unit
of cost is. A :class:`TextTables` also takes back what a bounded child
(:mod:`core.runtime.bounded`) computed for a text, which would otherwise die with it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from itertools import islice
from typing import Any


class Memo:
    """Forgets its oldest entries beyond ``budget`` cost units (and beyond ``max_entries``, if given)."""

    def __init__(self, budget: int, max_entries: int | None = None) -> None:
        self.budget = budget
        self.max_entries = max_entries
        self.used = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> Any:
        """The stored value (None if absent); a hit becomes the newest."""
        return self.get_many([key])[0]

    def get_many(self, keys: Sequence[Hashable]) -> list[Any]:
        """The stored value per key (None where absent); hits become the newest."""
        with self._lock:
            found = []
            for key in keys:
                item = self._items.get(key)
                if item is not None:
                    self._items.move_to_end(key)
                found.append(None if item is None else item[0])
            return found

    def put(self, key: Hashable, value: Any, cost: int) -> Any:
        """Store ``value`` unless the key is already held; returns the value now held for the key."""
        with self._lock:
            held = self._items.get(key)
            if held is not None:
                return held[0]
            if cost > self.budget:  # would evict everything and still not fit
                return value
            self._items[key] = (value, cost)
            self.used += cost
            while self._items and (
                self.used > self.budget or (self.max_entries is not None and len(self._items) > self.max_entries)
            ):
                _, (_, old_cost) = self._items.popitem(last=False)
                self.used -= old_cost
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.used = 0


class TextTables(Memo):
    """One table per text, ``text -> {key: value}``, whose entries are each computed once from the text and never
    changed (e.g. the sentences of a range of it).

    A bounded child (:mod:`core.runtime.bounded`) is a copy of its parent that dies with what it computed: a
    1 MB text split in a child at a new chunk_size segmented again every paragraph the last child had segmented
    (~100 ms of a Chunks rerun). So what a child adds to a text's tables can be sent back
    (:func:`mark_tables`, :func:`added_to_tables`) and kept by the parent (:func:`keep_in_tables`), and the
    next child forked for that text starts with it. The cost of a text's table is its length.
    """

    def __init__(self, budget: int, max_entries: int | None = None) -> None:
        super().__init__(budget, max_entries)
        _TEXT_TABLES.append(self)

    def table(self, text: str) -> dict[Hashable, Any]:
        """The table kept for ``text`` (a new one is kept if there is room, else it is a table of this call only)."""
        held = self.get(text)
        return held if held is not None else self.put(text, {}, max(len(text), 1))


# Every TextTables in this process, in the order they were made (the same in a forked child).
_TEXT_TABLES: list[TextTables] = []


def mark_tables(text: str) -> list[tuple[dict[Hashable, Any] | None, int]]:
    """Where each :class:`TextTables`' table of ``text`` stands now (the table and its size)."""
    marks = []
    for memo in _TEXT_TABLES:
        table = memo.get(text)
        marks.append((table, 0 if table is None else len(table)))
    return marks


def added_to_tables(
    text: str, marks: Sequence[tuple[dict[Hashable, Any] | None, int]]
) -> list[list[tuple[Hashable, Any]]]:
    """The entries each :class:`TextTables` gained for ``text`` since ``marks`` (tables only grow, in order;
    a table made since, or made anew after its text was forgotten, counts whole)."""
    added = []
    for memo, (marked, size) in zip(_TEXT_TABLES, marks, strict=True):
        table = memo.get(text)
        if table is None:
            added.append([])
        else:
            added.append(list(islice(table.items(), size if table is marked else 0, None)))
    return added


def keep_in_tables(text: str, added: Sequence[Sequence[tuple[Hashable, Any]]]) -> None:
    """Keep what :func:`added_to_tables` found (in a child) in this process's tables of ``text``."""
    for memo, entries in zip(_TEXT_TABLES, added, strict=True):
        if entries:
            table = memo.table(text)
            for key, value in entries:
                table.setdefault(key, value)
