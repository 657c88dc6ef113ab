"""What the offline services share: the index they read and how they look a record up.

(Its own module: `index.py` is hashed into the index's file name, so code that is not the index's stays out.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from backend.errors import NotFound
from backend.sources.offline.index import OfflineIndex, aget_index

R = TypeVar("R")


class OfflineSource:
    """Base of the offline services: the shared, lazily built index unless given one, and nothing to close."""

    def __init__(self, index: OfflineIndex | None = None) -> None:
        self._index = index

    async def _get_index(self) -> OfflineIndex:
        return self._index or await aget_index()

    async def aclose(self) -> None:
        return None

    @staticmethod
    def _record(records: Mapping[str, R], key: str, missing: str) -> R:
        """The record with this id, or NotFound saying `missing`."""
        try:
            return records[key]
        except KeyError:
            raise NotFound(missing) from None
