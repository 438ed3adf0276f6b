"""A bounded map whose entries expire (src/codec/expiring-cache.ts): unwrapped data keys are kept for a
lifetime and at most so many of them, the least recently used going first. The clock is given."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    def __init__(self, max_entries: int, lifetime_s: float, now: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError(f"ExpiringCache: max_entries must be a whole number from 1, got {max_entries}")
        if not lifetime_s > 0:
            raise ValueError(f"ExpiringCache: lifetime_s must be above 0, got {lifetime_s}")
        self._entries: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self._max_entries = max_entries
        self._lifetime_s = lifetime_s
        self._now = now

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= self._now():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def set(self, key: K, value: V) -> None:
        self._entries.pop(key, None)
        self._entries[key] = (value, self._now() + self._lifetime_s)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
