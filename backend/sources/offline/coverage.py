"""What the offline corpus covers: how many records, and the dates their copies were taken.

(Its own module: `index.py` is hashed into the index's file name.) Reading every record's date takes about
half a second, so each index's figures are computed once per process.
"""

from __future__ import annotations

import re
import threading
import zlib
from datetime import date
from pathlib import Path

from pydantic import BaseModel

from backend.sources.offline.index import OfflineIndex

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class SampleCoverage(BaseModel):
    records: int
    snapshot_from: date | None = None  # the oldest copy's date; None when no record has one
    snapshot_to: date | None = None
    undated: int = 0  # records whose copy has no date (some fixture files)


class _Dated(BaseModel):
    snapshot_date: str | None = None


_known: dict[tuple[Path, str], SampleCoverage] = {}
_lock = threading.Lock()


def _scan(index: OfflineIndex, docs: str, column: str) -> SampleCoverage:
    dates = [_Dated.model_validate_json(zlib.decompress(blob)).snapshot_date
             for (blob,) in index.query(f"SELECT {column} FROM {docs}")]
    days = sorted(d for d in dates if d and _DAY.match(d))
    if not days:
        return SampleCoverage(records=len(dates), undated=len(dates))
    return SampleCoverage(records=len(dates), snapshot_from=date.fromisoformat(days[0]),
                    snapshot_to=date.fromisoformat(days[-1]), undated=len(dates) - len(days))


def coverage(index: OfflineIndex) -> tuple[SampleCoverage, SampleCoverage]:
    """(trials, articles) of this index. Blocking: run it through `off_loop`."""
    found = []
    for docs, column in (("trials_docs", "summary"), ("articles_docs", "detail")):
        key = (index.path, docs)
        with _lock:
            known = _known.get(key)
        if known is None:
            known = _scan(index, docs, column)
            with _lock:
                _known[key] = known
        found.append(known)
    return found[0], found[1]
