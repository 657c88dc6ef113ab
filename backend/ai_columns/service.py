"""AI columns: evaluate one column's criterion against every loaded row, yielding results as they finish.

One column run = the user's cached rows first (one query), then the rows' records from the sources (one batch
call), then one model request per remaining row through the evaluator (`backend.criteria.evaluator`), at
most `concurrency` at a time. A row that fails (unknown id, a model error) is a `row_error` and the
column goes on; the whole column stops with `error` only when it cannot run at all (no records; the key,
the account or the model is refused: `ApiFailure.affects_every_call`). When the consumer goes away (the
client disconnects) every pending model call is cancelled; results already in hand are still cached.

Knows the evaluator, the sources and the database; never HTTP or SSE.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from backend.agent.errors import API_ERRORS, classify_api_error
from backend.agent.llm import LLM
from backend.ai_columns.evidence import SECTION_LABEL, Qualifier, Section, labelled, locate_all, qualify
from backend.ai_columns.schemas import (
    ID_KEY,
    AiColumn,
    ColumnCompleted,
    ColumnEvent,
    ColumnFailed,
    ColumnProgress,
    EvaluateRequest,
    RowEvaluated,
    RowFailed,
    Tally,
)
from backend.criteria.evaluator import evaluate_criterion, evaluate_text
from backend.criteria.prompts import CRITERION_TAG, TEXT_TAG
from backend.db.models import AiColumnResult
from backend.db.session import Database
from backend.errors import AppError, UpstreamError
from backend.observability.observe import ai_column_row
from backend.quotas import ColumnRunSlot, Quotas
from backend.sources import Sources
from backend.sources.models import Article, TrialDetail

log = logging.getLogger(__name__)

DISPLAY = {"MET": "Yes", "NOT_MET": "No", "UNKNOWN": "Unknown"}
QUALIFIER_DISPLAY = {"conditional": "conditional", "needs_review": "needs review"}
# Part of the cache key: a new document layout or evaluator prompt must not reuse old answers. v2: results keep
# each quote's section, which older ones lack.
DOCUMENT_VERSION = "ai-column-document v2"
MAX_DOCUMENT_CHARS = 40_000
NOT_FOUND = {"trialscout": "was not found on ClinicalTrials.gov", "tablizer": "was not found in PubMed"}
PHASES = {"EARLY_PHASE1": "Early phase 1", "PHASE1": "Phase 1", "PHASE2": "Phase 2", "PHASE3": "Phase 3",
          "PHASE4": "Phase 4", "NA": "Not applicable"}


# ---- cache key and documents ------------------------------------------------------------------------

def criteria_hash(column: AiColumn) -> str:
    """sha256 of the whitespace-normalized criteria plus the prompt and document versions."""
    tag = CRITERION_TAG if column.type == "boolean" else TEXT_TAG
    text = " ".join(column.criteria.split())
    return hashlib.sha256(f"{tag}\n{DOCUMENT_VERSION}\n{text}".encode()).hexdigest()


def _words(value: str) -> str:
    return value.replace("_", " ").capitalize()


def _line(label: str, value: Any) -> str | None:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, list):
        value = "; ".join(str(v) for v in value)
    return f"{label}: {value}"


def _bounded(lines: Sequence[str | None]) -> str:
    text = "\n".join(line for line in lines if line is not None)
    if len(text) > MAX_DOCUMENT_CHARS:
        text = text[:MAX_DOCUMENT_CHARS] + "\n[… the record is longer; the rest was left out]"
    return text


def trial_document(t: TrialDetail) -> str:
    """What a boolean or text column is judged on for one trial: key fields, then the eligibility text."""
    phases = [PHASES.get(p, p) for p in t.phase]
    outcomes = [f"- {o.measure}" + (f" (time frame: {o.time_frame})" if o.time_frame else "")
                for o in t.primary_outcomes]
    return _bounded([
        f"ClinicalTrials.gov trial record {t.nct_id}",
        _line("Title", t.title), _line("Official title", t.official_title), _line("Acronym", t.acronym),
        _line("Phase", phases), _line("Study type", _words(t.study_type) if t.study_type else None),
        _line("Overall status", _words(t.status) if t.status else None),
        _line("Conditions", t.conditions), _line("Interventions", t.interventions),
        _line("Sponsor", t.sponsor), _line("Enrollment", t.enrollment),
        _line("Sex", _words(t.sex) if t.sex else None),
        _line("Minimum age", t.minimum_age or "no limit"), _line("Maximum age", t.maximum_age or "no limit"),
        _line("Accepts healthy volunteers", None if t.healthy_volunteers is None
              else ("yes" if t.healthy_volunteers else "no")),
        _line("Keywords", t.keywords),
        "Primary outcomes:\n" + "\n".join(outcomes) if outcomes else None,
        _line("Brief summary", t.brief_summary),
        f"Eligibility criteria:\n{t.eligibility_criteria.strip()}" if t.eligibility_criteria else None,
    ])


def article_document(a: Article) -> str:
    """Title, journal, publication types, MeSH terms, keywords, then the abstract."""
    journal = f"{a.journal} ({a.year})" if a.journal and a.year else (a.journal or a.year)
    return _bounded([
        f"PubMed article PMID {a.pmid}",
        _line("Title", a.title), _line("Journal", journal),
        _line("Publication types", a.publication_types), _line("MeSH terms", a.mesh_terms),
        _line("Keywords", a.keywords),
        f"Abstract:\n{a.abstract.strip()}" if a.abstract.strip() else "Abstract: none available",
    ])


def summary_document(app: str, item_id: str, item: Mapping[str, Any]) -> str:
    """A staged table row, used when the source has no record for it: say so, then its fields."""
    what = f"ClinicalTrials.gov trial {item_id}" if app == "trialscout" else f"PubMed article PMID {item_id}"
    lines: list[str | None] = [f"Summary of {what} as listed in the table (the full record was not available)"]
    for key, value in item.items():
        if key == ID_KEY[app]:
            continue
        if isinstance(value, dict):
            value = json.dumps(value, ensure_ascii=False, default=str)
        lines.append(_line(_words(str(key)), value if not isinstance(value, str) else value[:8000]))
    return _bounded(lines)


# ---- verdicts and their evidence ---------------------------------------------------------------------

@dataclass(frozen=True)
class Judged:
    """A row's answer with its evidence placed in the record and the verdict qualified (boolean columns)."""

    value: str | None
    display: str
    evidence: list[str]
    sections: list[Section | None]
    qualifier: Qualifier | None

    def stored_evidence(self) -> list[dict[str, str | None]]:
        return [{"quote": q, "section": s} for q, s in zip(self.evidence, self.sections, strict=True)]


def judged(column: AiColumn, value: str | None, evidence: list[str], sections: list[Section | None]) -> Judged:
    if column.type == "text":
        return Judged(value, value or "Unknown", evidence, sections, None)
    qualifier = qualify(column.criteria, value, evidence, sections)
    display = DISPLAY.get(value or "", "Unknown")
    if qualifier is not None:
        display = f"{display} · {QUALIFIER_DISPLAY[qualifier]}"
    return Judged(value, display, evidence, sections, qualifier)


def _stored(column: AiColumn, value: str | None, evidence: list[Any] | None) -> Judged:
    """A stored result: each quote with its section (`Judged.stored_evidence`); a bare string is one unplaced."""
    quotes = [e if isinstance(e, dict) else {"quote": e} for e in evidence or []]
    found: list[Section | None] = [q["section"] if q.get("section") in SECTION_LABEL else None for q in quotes]
    return judged(column, value, [str(q.get("quote", "")) for q in quotes], found)


# ---- the run ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CacheKey:
    """Results are per user: the same criterion over the same rows is asked again for another user."""

    user_id: int
    criteria_hash: str
    column_type: str
    app: str
    model: str


@dataclass(frozen=True)
class _Evaluated:
    event: RowEvaluated | RowFailed | ColumnFailed
    cache: dict[str, Any] | None = None  # the row to store, for usable evaluations only
    usage: dict[str, int] | None = None  # what the model call cost, usable or not: the user's daily budget


class AiColumnService:
    def __init__(self, db: Database, llm: LLM, sources: Sources, concurrency: int = 8,
                 quotas: Quotas | None = None) -> None:
        self.db = db
        self.llm = llm
        self.sources = sources
        self.concurrency = concurrency
        self.quotas = quotas  # each row's model call is spent from the user's daily budget
        self.running = 0  # column runs in progress in this process (their tasks included)

    def run(self, req: EvaluateRequest, user_id: int, slot: ColumnRunSlot | None = None) -> AsyncIterator[ColumnEvent]:
        """The run's events (`_run`); `slot`, its place under the user's concurrent-runs cap, is released when
        the run ends, or when its events are dropped without ever being read (a client gone before the start)."""
        events = self._run(req, user_id, slot)
        if slot is not None:
            weakref.finalize(events, slot.release)
        return events

    async def _run(self, req: EvaluateRequest, user_id: int, slot: ColumnRunSlot | None) -> AsyncIterator[ColumnEvent]:
        """Yield `progress`, then `row`/`row_error` (each followed by `progress`) as rows finish, then
        `complete`; or `error` when the column cannot run. Only `user_id`'s own cached results are reused."""
        column, total = req.column, len(req.ids)
        key = CacheKey(user_id, criteria_hash(column), column.type, req.app, self.llm.model)
        tally = Tally(column.type)
        tasks: list[asyncio.Task[None]] = []
        self.running += 1
        try:
            yield ColumnProgress(done=0, total=total)
            try:
                cached = await anyio.to_thread.run_sync(self._cached, key, column, req.ids)
            except Exception:  # the cache is a shortcut; without it the column still runs
                log.exception("reading cached AI column results failed")
                cached = {}
            for item_id in req.ids:
                if item_id in cached:
                    for event in self._counted(tally, cached[item_id], total):
                        yield event
            todo = [i for i in req.ids if i not in cached]
            documents, missing, failure = await self._documents(req, todo)
            if failure is not None:
                yield failure
                return
            for failed in missing:
                for event in self._counted(tally, failed, total):
                    yield event
            queue: asyncio.Queue[_Evaluated] = asyncio.Queue()
            limit = asyncio.Semaphore(self.concurrency)
            tasks = [asyncio.create_task(self._row(limit, queue, key, column, item_id, documents[item_id]))
                     for item_id in todo if item_id in documents]
            for _ in tasks:
                outcome = await queue.get()
                if isinstance(outcome.event, ColumnFailed):
                    yield outcome.event
                    return
                for event in self._counted(tally, outcome.event, total):
                    yield event
            await asyncio.gather(*tasks)  # their cache writes, so a re-run right after `complete` hits
            yield ColumnCompleted(done=tally.done, total=total, counts=tally.counts(), cached=tally.cached,
                                  model=self.llm.model)
        except Exception as exc:  # a bug must still end the stream with an event, not a cut-off body
            log.exception("AI column run crashed")
            yield ColumnFailed(message=f"Internal error: {exc}", code="internal_error", retryable=False)
        finally:
            for task in tasks:
                task.cancel()  # the client went away or the column failed: stop pending model calls
            if tasks:
                with anyio.CancelScope(shield=True):
                    await asyncio.gather(*tasks, return_exceptions=True)
            self.running -= 1
            if slot is not None:
                slot.release()

    @staticmethod
    def _counted(tally: Tally, event: RowEvaluated | RowFailed, total: int) -> list[ColumnEvent]:
        tally.add(event)
        return [event, ColumnProgress(done=tally.done, total=total)]

    # -- documents -----------------------------------------------------------------------------------
    async def _documents(self, req: EvaluateRequest, ids: list[str]
                         ) -> tuple[dict[str, str], list[RowFailed], ColumnFailed | None]:
        """(document by id, the rows without one, or the failure that stops the column)."""
        if not ids:
            return {}, [], None
        staged = req.staged()
        documents: dict[str, str] = {}
        problem: str | None = None
        retryable = False
        try:
            if req.app == "trialscout":
                documents = {t.nct_id: trial_document(t) for t in await self.sources.trials.get_trials_by_nct_ids(ids)}
            else:
                documents = {a.pmid: article_document(a) for a in await self.sources.pubmed.get_articles(ids)}
        except AppError as exc:
            retryable = isinstance(exc, UpstreamError)
            problem = f"The records could not be loaded: {exc.detail}"
            if not any(i in staged for i in ids):
                return {}, [], ColumnFailed(message=problem, code="source_unavailable" if retryable else exc.error,
                                            retryable=retryable)
        missing: list[RowFailed] = []
        for item_id in ids:
            if item_id in documents:
                continue
            if item_id in staged:
                documents[item_id] = summary_document(req.app, item_id, staged[item_id])
            else:
                missing.append(RowFailed(id=item_id, message=problem or f"{item_id} {NOT_FOUND[req.app]}.",
                                         retryable=retryable))
        return documents, missing, None

    # -- one row -------------------------------------------------------------------------------------
    async def _row(self, limit: asyncio.Semaphore, queue: asyncio.Queue[_Evaluated], key: CacheKey,
                   column: AiColumn, item_id: str, document: str) -> None:
        try:
            async with limit:
                outcome = await self._evaluate(column, item_id, document)
        except Exception:  # a bug must cost one row, not the column
            log.exception("AI column row %s crashed", item_id)
            outcome = _Evaluated(RowFailed(id=item_id, message="Internal error while evaluating this row."))
        ai_column_row("evaluated" if isinstance(outcome.event, RowEvaluated) else "failed")
        queue.put_nowait(outcome)
        if outcome.cache is not None or (outcome.usage and self.quotas):
            try:
                await anyio.to_thread.run_sync(self._save, key, item_id, outcome)
            except Exception:
                log.exception("caching the AI column result for %s failed", item_id)

    async def _evaluate(self, column: AiColumn, item_id: str, document: str) -> _Evaluated:
        # The chat never lets the SDK retry (it retries only what no user has seen yet); a column's rows are
        # independent and unseen until they finish, so a passing 529 or a stale connection is retried here.
        client, model = self.llm.client.with_options(max_retries=2), self.llm.model
        try:
            if column.type == "boolean":
                verdict, usage = await evaluate_criterion(client, model, column.criteria, None, document)
                value: str | None = verdict.label.value
                reasoning, evidence, parse_error = verdict.reasoning, verdict.evidence, verdict.parse_error
            else:
                answer = await evaluate_text(client, model, column.criteria, document)
                usage = answer.usage
                value = answer.answer
                reasoning, evidence, parse_error = answer.reasoning, answer.evidence, usage.parse_error
            result = judged(column, value, evidence, locate_all(evidence, document))
        except API_ERRORS as exc:
            failure = classify_api_error(exc)
            if failure.affects_every_call:  # the key, the account or the model: no other row can succeed
                return _Evaluated(ColumnFailed(message=failure.message, code=failure.code, retryable=False))
            return _Evaluated(RowFailed(id=item_id, message=failure.message, retryable=failure.retryable))
        event = RowEvaluated(id=item_id, value=value, display=result.display, reasoning=reasoning, evidence=evidence,
                             sections=result.sections, qualifier=result.qualifier, cached=False, model=model,
                             parse_error=parse_error)
        # An unusable reply is shown (UNKNOWN, with why) but not kept: the next run asks again.
        cost = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
        cache = None if parse_error else {"value": value, "reasoning": reasoning,
                                          "evidence": result.stored_evidence(), **cost}
        return _Evaluated(event, cache, cost)

    # -- cache ---------------------------------------------------------------------------------------
    def _cached(self, key: CacheKey, column: AiColumn, ids: list[str]) -> dict[str, RowEvaluated]:
        with self.db.session() as s:
            rows = s.scalars(select(AiColumnResult).where(
                AiColumnResult.user_id == key.user_id, AiColumnResult.criteria_hash == key.criteria_hash,
                AiColumnResult.column_type == key.column_type, AiColumnResult.app == key.app,
                AiColumnResult.model == key.model, AiColumnResult.item_id.in_(ids)))
            found = {r.item_id: (r, _stored(column, r.value, r.evidence)) for r in rows}
            return {item_id: RowEvaluated(
                id=item_id, value=j.value, display=j.display, reasoning=r.reasoning, evidence=j.evidence,
                sections=j.sections, qualifier=j.qualifier, cached=True, model=r.model)
                for item_id, (r, j) in found.items()}

    def _save(self, key: CacheKey, item_id: str, outcome: _Evaluated) -> None:
        if outcome.usage and self.quotas:
            self.quotas.spend(key.user_id, outcome.usage)
        if outcome.cache is None:
            return
        values = outcome.cache
        dialect = self.db.engine.dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        statement = insert(AiColumnResult).values(
            user_id=key.user_id, criteria_hash=key.criteria_hash, column_type=key.column_type, app=key.app,
            model=key.model, item_id=item_id, **values)
        # Another worker may have stored the same evaluation meanwhile; either answer is a valid one.
        with self.db.session() as s:
            s.execute(statement.on_conflict_do_nothing(
                index_elements=["user_id", "criteria_hash", "column_type", "app", "model", "item_id"]))



@dataclass(frozen=True)
class StoredResult:
    display: str  # Yes / No / Unknown (maybe "· conditional" / "· needs review") for boolean columns, else the answer
    reasoning: str
    evidence: list[str]  # each quote led by its section: "[Exclusion] …"


def stored_results(s: Session, user_id: int, app: str, column: AiColumn, ids: Sequence[str]) -> dict[str, StoredResult]:
    """The user's newest stored evaluation of `column` per row (any model), for exports. Rows never
    evaluated are absent."""
    rows = s.scalars(select(AiColumnResult).where(
        AiColumnResult.user_id == user_id, AiColumnResult.criteria_hash == criteria_hash(column),
        AiColumnResult.column_type == column.type, AiColumnResult.app == app,
        AiColumnResult.item_id.in_(list(ids))).order_by(AiColumnResult.created_at, AiColumnResult.id))
    found: dict[str, StoredResult] = {}
    for r in rows:
        j = _stored(column, r.value, r.evidence)
        found[r.item_id] = StoredResult(j.display, r.reasoning, [labelled(q, s) for q, s in zip(j.evidence, j.sections,
                                                                                            strict=True)])
    return found
