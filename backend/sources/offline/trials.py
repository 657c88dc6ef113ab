"""Offline trials source: the live interface answered from the embedded CT.gov corpus.

Text parameters search the same areas CT.gov's do (query.cond: titles, conditions, keywords and
condition MeSH; query.intr: interventions, arm labels, intervention MeSH; query.term: everything),
filters mean what a patient-facing search means: sex FEMALE keeps trials open to all sexes, and a
missing minimum or maximum age is no limit.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from backend.errors import InvalidInput
from backend.sources.models import TrialDetail, TrialSearchPage, TrialSearchParams, checked_nct_id
from backend.sources.offline.index import TRIAL_WEIGHTS, OfflineIndex, off_loop
from backend.sources.offline.query import Columns, QuerySyntaxError, check_cost, parse_query, to_fts
from backend.sources.offline.source import OfflineSource
from backend.sources.paging import decode_page_token, encode_page_token

# Essie AREA[...] piece names and a few PubMed-style tags, mapped to index columns.
TRIAL_FIELDS: Mapping[str, Columns] = {
    **dict.fromkeys(("nctid", "nct", "id"), ("nct_id",)),
    **dict.fromkeys(("brieftitle", "officialtitle", "acronym", "title", "titles", "ti"), ("title",)),
    **dict.fromkeys(("condition", "conditionsearch", "keyword", "conditionmeshterm", "cond"),
                    ("conditions",)),
    **dict.fromkeys(("interventionname", "interventionsearch", "interventionothername", "armgrouplabel",
                     "interventionmeshterm", "intr"), ("interventions",)),
    **dict.fromkeys(("briefsummary", "detaileddescription", "summary"), ("summary",)),
    **dict.fromkeys(("eligibilitycriteria", "eligibility"), ("eligibility",)),
    **dict.fromkeys(("leadsponsorname", "collaboratorname", "sponsor", "spons"), ("sponsors",)),
    **dict.fromkeys(("locationfacility", "locationcity", "locationstate", "locationcountry", "locationzip",
                     "locn"), ("locations",)),
}
_SCOPES: tuple[tuple[str, Columns], ...] = (
    ("condition", ("title", "conditions")),
    ("intervention", ("interventions",)),
    ("eligibility_keywords", None),
    ("sponsor", ("sponsors",)),
    ("location", ("locations",)),
)


def _fingerprint(params: TrialSearchParams) -> str:
    search = params.model_dump(mode="json", exclude={"page_token", "page_size"})
    return hashlib.sha256(json.dumps(search, sort_keys=True).encode()).hexdigest()[:12]


def build_trial_filter(params: TrialSearchParams) -> tuple[str | None, list[str], list[Any]]:
    """(FTS5 MATCH expression or None, SQL conditions on `t`, their arguments)."""
    matches, trees = [], []
    for name, columns in _SCOPES:
        value = getattr(params, name)
        if not value:
            continue
        try:
            tree = parse_query(value, "essie")
        except QuerySyntaxError as exc:
            raise InvalidInput(f"Could not read {name} {value!r}: {exc}") from exc
        trees.append(tree)
        if expression := to_fts(tree, TRIAL_FIELDS, columns):
            matches.append(expression)
    try:
        check_cost(trees)  # each field passed alone; together they are one search
    except QuerySyntaxError as exc:
        raise InvalidInput(f"This search is too costly to run: {exc}") from exc
    where: list[str] = []
    args: list[Any] = []
    if params.status:
        where.append(f"t.status IN ({', '.join('?' * len(params.status))})")
        args += params.status
    if params.phase:
        where.append("(" + " OR ".join("t.phases LIKE ?" for _ in params.phase) + ")")
        args += [f"%|{p}|%" for p in params.phase]
    if params.sex in ("FEMALE", "MALE"):
        where.append("(t.sex IS NULL OR t.sex IN ('ALL', ?))")
        args.append(params.sex)
    if params.study_type:  # live: AREA[StudyType]
        where.append("t.study_type = ?")
        args.append(params.study_type)
    # Same meaning as diagram 2's AREA[MinimumAge]RANGE[MIN, x] / AREA[MaximumAge]RANGE[y, MAX].
    if params.min_age is not None:
        where.append("(t.min_age IS NULL OR t.min_age <= ?)")
        args.append(params.min_age)
    if params.max_age is not None:
        where.append("(t.max_age IS NULL OR t.max_age >= ?)")
        args.append(params.max_age)
    return (" AND ".join(matches) if matches else None), where, args


class OfflineClinicalTrialsService(OfflineSource):
    """Same interface as `ClinicalTrialsService`, over the embedded corpus."""

    async def search_trials(self, params: TrialSearchParams) -> TrialSearchPage:
        return await off_loop(_search, await self._get_index(), params)

    async def get_trial_by_nct_id(self, nct_id: str) -> TrialDetail:
        return await off_loop(_trial, await self._get_index(), checked_nct_id(nct_id))

    async def get_trials_by_nct_ids(self, nct_ids: Sequence[str]) -> list[TrialDetail]:
        wanted = dict.fromkeys(checked_nct_id(i) for i in nct_ids)
        return await off_loop(_trials, await self._get_index(), list(wanted))


# Blocking: each runs in the index's threads (`off_loop`).
def _search(index: OfflineIndex, params: TrialSearchParams) -> TrialSearchPage:
    fingerprint = _fingerprint(params)
    offset = 0
    if params.page_token:
        state = decode_page_token(params.page_token)
        if state.get("q") != fingerprint or not isinstance(state.get("o"), int) or state["o"] < 0:
            raise InvalidInput("page_token belongs to a different search; start again from page one")
        offset = state["o"]

    match, where, args = build_trial_filter(params)
    source = "trials t"
    if match:
        source += " JOIN trials_fts ON trials_fts.rowid = t.rowid"
        where.insert(0, "trials_fts MATCH ?")
        args.insert(0, match)
    sql = f"FROM {source}" + (f" WHERE {' AND '.join(where)}" if where else "")
    order = (f"bm25(trials_fts, {', '.join(map(str, TRIAL_WEIGHTS))}), t.nct_id" if match
             else "t.start_date IS NULL, t.start_date DESC, t.nct_id")
    try:
        total = index.query(f"SELECT count(*) {sql}", args)[0][0]
        rows = index.query(f"SELECT t.nct_id {sql} ORDER BY {order} LIMIT ? OFFSET ?",
                           [*args, params.page_size, offset])
    except sqlite3.OperationalError as exc:  # an FTS5 expression the parser let through
        raise InvalidInput(f"Could not run this search offline: {exc}") from exc

    trials = index.trial_summaries([nct_id for (nct_id,) in rows])
    following = offset + len(trials)
    more = following < total and bool(trials)
    token = encode_page_token({"o": following, "q": fingerprint}) if more else None
    return TrialSearchPage(trials=trials, total_count=total, next_page_token=token)


def _trial(index: OfflineIndex, key: str) -> TrialDetail:
    missing = f"No trial {key} in the offline corpus ({len(index.trials)} trials)"
    return OfflineSource._record(index.trials, key, missing)


def _trials(index: OfflineIndex, keys: list[str]) -> list[TrialDetail]:
    return index.trials.many(keys)

