"""A small thread-safe LRU bounded by a budget of ``cost`` units and a number of entries.

Core keeps per-text work that Streamlit reruns would otherwise redo (token
counts, token indexes, sentence ends) in these; each holder says what a unit
of cost is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
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
