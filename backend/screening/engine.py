"""`screen()`: the screening pipeline as an async generator of typed events (contract in the package
docstring)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
import traceback
from collections.abc import AsyncIterator, Sequence

import anthropic
import anyio
import httpx2

from backend.errors import AppError, UpstreamError
from backend.screening.criteria_parser import parse_criteria, registered_criteria
from backend.screening.ingest import extract_profile
from backend.screening.judge import judge_trial
from backend.screening.models import (
    Candidate,
    CandidatesEvent,
    DoneEvent,
    ErrorEvent,
    JudgementCache,
    NoteSentence,
    PatientInput,
    PatientProfile,
    ProfileEvent,
    ScreenedTrial,
    ScreeningEvent,
    ScreenRequest,
    TrialEvent,
    TrialVerdict,
    Usage,
)
from backend.screening.note_reader import read_note
from backend.screening.prescreen import run_prescreen
from backend.screening.relevance import relevance_scores
from backend.screening.usage import add_usage
from backend.screening.verdict import ranking_score, trial_verdict
from backend.sources import TrialDetail, TrialsSource

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 8
NO_CRITERIA = "The trial record has no eligibility criteria text to check the patient against."
# The key, the account or the model refused: no other call can succeed either.
_FATAL_STATUS = (401, 403, 404)


class _Fatal(Exception):
    def __init__(self, event: ErrorEvent) -> None:
        self.event = event


def _api_error(exc: Exception, nct_id: str | None = None) -> ErrorEvent:
    status = getattr(exc, "status_code", None)
    if isinstance(exc, anthropic.APIStatusError) and status in _FATAL_STATUS:
        return ErrorEvent(code="model_refused", message=f"The model refused the request (HTTP {status}).",
                          fatal=True)
    retryable = isinstance(exc, (anthropic.APIConnectionError, anthropic.RateLimitError,
                                 anthropic.InternalServerError, httpx2.TransportError))
    what = f"HTTP {status}" if status else type(exc).__name__
    return ErrorEvent(code="model_error", message=f"The model call failed ({what}).", retryable=retryable,
                      fatal=nct_id is None, nct_id=nct_id)


def _source_error(exc: AppError) -> ErrorEvent:
    unavailable = isinstance(exc, UpstreamError)
    detail = exc.detail
    return ErrorEvent(code="source_unavailable" if unavailable else "source_error",
                      message=f"ClinicalTrials.gov could not be read: {detail}"[:300], retryable=unavailable)


def _screened(detail: TrialDetail, candidate: Candidate, results: Sequence, relevance: float) -> ScreenedTrial:
    verdict = trial_verdict(results, relevance)
    labels = [r.label.value for r in results]
    return ScreenedTrial(nct_id=detail.nct_id, title=detail.title, verdict=verdict,
                         score=ranking_score(results, relevance), relevance=relevance,
                         met=labels.count("MET"), not_met=labels.count("NOT_MET"), unknown=labels.count("UNKNOWN"),
                         criteria=list(results), snapshot_date=detail.snapshot_date,
                         found_by_queries=candidate.found_by_queries)


async def _candidates(request: ScreenRequest, note: str, profile: PatientProfile, trials: TrialsSource,
                      client: anthropic.AsyncAnthropic, model: str
                      ) -> tuple[CandidatesEvent, dict[str, TrialDetail], Usage]:
    usage = Usage(model=model)
    if request.mode == "nct_ids":
        details = {t.nct_id: t for t in await trials.get_trials_by_nct_ids(request.nct_ids)}
        kept = [n for n in request.nct_ids if n in details]
        candidates = [Candidate(nct_id=n, title=details[n].title, status=details[n].status,
                                phase=list(details[n].phase), conditions=details[n].conditions,
                                interventions=details[n].interventions) for n in kept]
        missing = [n for n in request.nct_ids if n not in details]
        event = CandidatesEvent(mode="nct_ids", candidates=candidates, missing=missing)
    else:
        found = await run_prescreen(client, model, profile, trials, request)
        usage = found.usage
        details = {t.nct_id: t for t in await trials.get_trials_by_nct_ids([c.nct_id for c in found.candidates])}
        candidates = [c for c in found.candidates if c.nct_id in details]
        event = CandidatesEvent(mode="search", candidates=candidates, tool_calls=found.tool_calls,
                                missing=[c.nct_id for c in found.candidates if c.nct_id not in details])
    scores = relevance_scores(note, profile, [details[c.nct_id] for c in event.candidates])
    event = event.model_copy(update={"candidates": [c.model_copy(update={"relevance": s})
                                                    for c, s in zip(event.candidates, scores, strict=True)]})
    return event, details, usage


async def screen(patient: PatientInput, request: ScreenRequest, trials: TrialsSource,
                 client: anthropic.AsyncAnthropic, model: str, cache: JudgementCache, *,
                 concurrency: int = DEFAULT_CONCURRENCY) -> AsyncIterator[ScreeningEvent]:
    """Profile, candidates, one event per screened trial, then done (or a fatal error)."""
    started = time.perf_counter()
    usage = Usage(model=model)
    tasks: list[asyncio.Task[tuple[ScreenedTrial, Usage] | ErrorEvent]] = []
    try:
        read = read_note(patient.note)
        sentences = [NoteSentence(index=i, text=s) for i, s in enumerate(read.sentences)]
        numbered_note = "\n".join(f"{s.index}. {s.text}" for s in sentences)
        profile = patient.profile
        if profile is None:
            try:
                profile, ingest_usage = await extract_profile(patient.note, client, model)
            except (anthropic.APIError, httpx2.TransportError) as exc:
                yield _api_error(exc).model_copy(update={"usage": usage})
                return
            usage = add_usage(usage, ingest_usage)
        yield ProfileEvent(profile=profile, sentences=sentences, extracted=patient.profile is None)

        try:
            event, details, search_usage = await _candidates(request, patient.note, profile, trials, client, model)
        except (anthropic.APIError, httpx2.TransportError) as exc:
            yield _api_error(exc).model_copy(update={"usage": usage})
            return
        except AppError as exc:  # the source (502/503 when CT.gov is down)
            yield _source_error(exc).model_copy(update={"usage": usage})
            return
        usage = add_usage(usage, search_usage)
        yield event

        limit = asyncio.Semaphore(concurrency)

        async def one(candidate: Candidate) -> tuple[ScreenedTrial, Usage] | ErrorEvent:
            detail = details[candidate.nct_id]
            from_text = parse_criteria(detail.eligibility_criteria)
            criteria = from_text + registered_criteria(detail.minimum_age, detail.maximum_age, detail.sex, from_text)
            if not criteria:
                return _screened(detail, candidate, [], candidate.relevance).model_copy(
                    update={"verdict": TrialVerdict.UNCERTAIN, "reason": NO_CRITERIA}), Usage(model=model)
            async with limit:
                try:
                    judged = await judge_trial(client, model, note_version=patient.version,
                                               numbered_note=numbered_note, sentence_count=len(sentences),
                                               nct_id=detail.nct_id, title=detail.title, criteria=criteria,
                                               cache=cache)
                except (anthropic.APIError, httpx2.TransportError) as exc:
                    error = _api_error(exc, detail.nct_id)
                    if error.fatal:
                        raise _Fatal(error) from exc
                    return error
            screened = _screened(detail, candidate, judged.results, candidate.relevance)
            if not from_text:  # only the registered age and sex limits could be checked
                verdict = screened.verdict if screened.verdict == TrialVerdict.EXCLUDED else TrialVerdict.UNCERTAIN
                screened = screened.model_copy(update={"verdict": verdict, "reason": NO_CRITERIA})
            return screened, judged.usage

        tasks = [asyncio.create_task(one(c)) for c in event.candidates]
        screened: list[ScreenedTrial] = []
        total = len(tasks)
        for next_done in asyncio.as_completed(tasks):
            try:
                outcome = await next_done
            except _Fatal as fatal:
                yield fatal.event.model_copy(update={"usage": usage})
                return
            if isinstance(outcome, ErrorEvent):
                yield outcome.model_copy(update={"usage": usage})
                continue
            trial, trial_usage = outcome
            usage = add_usage(usage, trial_usage)
            screened.append(trial)
            yield TrialEvent(trial=trial, done=len(screened), total=total, usage=usage)
        ranking = [t.nct_id for t in sorted(screened, key=lambda t: (-t.score, t.nct_id))]
        yield DoneEvent(ranking=ranking, usage=usage, elapsed_ms=round((time.perf_counter() - started) * 1000, 1))
    except Exception as exc:  # a bug still ends the stream with an event
        # Only the type and the place: an exception's message or a traceback's values could quote the note.
        # The innermost frames (a library's often) and their callers: file, line and function, no values.
        where = " < ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}"
                           for f in reversed(traceback.extract_tb(exc.__traceback__)[-3:]))
        log.error("screening crashed: %s at %s", type(exc).__name__, where or "?")
        yield ErrorEvent(code="internal_error", message="Internal error while screening.", fatal=True, usage=usage)
    finally:
        for task in tasks:
            task.cancel()
        if tasks:
            with anyio.CancelScope(shield=True):
                await asyncio.gather(*tasks, return_exceptions=True)
