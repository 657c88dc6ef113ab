"""The engine's `JudgementCache` on the `screening_judgements` table, bound to one note version.

A cache serves the version it was made for only: a key of another version is a miss and is never
stored, so one patient's judgements can't reach another patient (or another user). Rows go with their
version, and so with their patient. Several workers may store the same judgement at once; either is a
valid answer, so a conflict keeps the first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import anyio
from sqlalchemy import select

from backend.db.base import table_of
from backend.db.models import CachedJudgement
from backend.db.session import Database
from backend.quotas.storage import upsert_of
from backend.screening.models import Judgement, JudgementKey

_TABLE = table_of(CachedJudgement)


class CacheUnavailable(Exception):
    """The cache could not be read or written. Says which and the error's type only: a database error's
    text carries the statement's parameters, and a judgement's reasoning can quote the note."""


class DatabaseJudgementCache:
    def __init__(self, db: Database, version_id: int) -> None:
        self.db = db
        self.version_id = version_id
        self.note_version = str(version_id)  # what the service passes as `PatientInput.version`

    async def get(self, keys: Sequence[JudgementKey]) -> Mapping[JudgementKey, Judgement]:
        mine = [k for k in keys if k.note_version == self.note_version]
        if not mine:
            return {}
        try:
            return await anyio.to_thread.run_sync(self._get, mine)
        except Exception as exc:
            raise CacheUnavailable(f"reading cached judgements failed ({type(exc).__name__})") from None

    async def put(self, items: Sequence[tuple[JudgementKey, Judgement]]) -> None:
        mine = [(k, j) for k, j in items if k.note_version == self.note_version]
        if not mine:
            return
        try:
            await anyio.to_thread.run_sync(self._put, mine)
        except Exception as exc:  # e.g. the patient was deleted while it was screened
            raise CacheUnavailable(f"storing judgements failed ({type(exc).__name__})") from None

    def _get(self, keys: list[JudgementKey]) -> dict[JudgementKey, Judgement]:
        wanted = {(k.nct_id, k.criterion_hash, k.model): k for k in keys}
        with self.db.session() as s:
            rows = s.execute(select(_TABLE.c.nct_id, _TABLE.c.criterion_hash, _TABLE.c.model, _TABLE.c.data).where(
                _TABLE.c.version_id == self.version_id,
                _TABLE.c.nct_id.in_({k.nct_id for k in keys}),
                _TABLE.c.criterion_hash.in_({k.criterion_hash for k in keys})))
            found = {}
            for nct_id, criterion_hash, model, data in rows:
                key = wanted.get((nct_id, criterion_hash, model))
                if key is not None:
                    found[key] = Judgement.model_validate(data)
            return found

    def _put(self, items: list[tuple[JudgementKey, Judgement]]) -> None:
        with self.db.session() as s:
            insert = upsert_of(s.get_bind().dialect.name)(_TABLE)
            s.execute(insert.on_conflict_do_nothing(
                index_elements=[_TABLE.c.version_id, _TABLE.c.nct_id, _TABLE.c.criterion_hash, _TABLE.c.model]),
                [{"version_id": self.version_id, "nct_id": k.nct_id, "criterion_hash": k.criterion_hash,
                  "model": k.model, "data": j.model_dump(mode="json")} for k, j in items])
