"""Screening: match one patient (a note) against clinical trials: INGEST → PRESCREEN → VALIDATE →
verdict → rank (spec/prescreen-sequence-diagrams.md §1 and §4, spec/trialmatch-pipeline-contracts.md).

A domain package: it knows the trial sources (`backend.sources`), the criterion labels
(`backend.criteria`) and the `anthropic` SDK; never HTTP, SSE or the database. The API layer stores what it
yields and implements the judgement cache on its tables.

Entry points (shapes in `backend.screening.models`):

    profile, usage = await extract_profile(note, client, model)     # INGEST; client=None: local rules
    async for event in screen(patient, request, trials, client, model, cache):
        ...

`screen(patient: PatientInput, request: ScreenRequest, trials: TrialsSource,
client: anthropic.AsyncAnthropic, model: str, cache: JudgementCache, *, concurrency=8)` yields, in order:

1. `ProfileEvent`: the profile used (extracted when `patient.profile` is None) and the numbered sentences
   that criterion evidence refers to;
2. `CandidatesEvent`: the trials to screen, from an agentic search over the profile (each tool call a
   `ToolCallRecord`; merged by NCT id; pruned to `request.n`) or exactly `request.nct_ids`;
3. one `TrialEvent` per screened trial, in the order they finish (`done`/`total` count them);
4. `DoneEvent`: the ranking (NCT ids best first), the token usage and estimated cost.

Every `TrialEvent` and `ErrorEvent` carries the screening's usage so far (cumulative, as `DoneEvent`'s), so a
caller that stops early, or sees a fatal error, knows what was spent.

Errors are events, never exceptions: an `ErrorEvent` with `fatal=False` reports one trial that failed
(vanished from the source, its model call refused) and the screening goes on; `fatal=True` (the source
is down, the key or the model is refused) ends it, and the trials already yielded stand. Stop = the caller
stops iterating and closes the generator (`aclose()`, or cancelling the task that iterates it): pending
model calls are cancelled and awaited before the generator returns; judgements already made are cached.

The model: every request goes through the SDK, so one code path serves Claude and the built-in demo
model (the app's demo transport answers the screening prompts of `backend.screening.prompts` with the
note-reading rules of `backend.screening.demo`). The criteria of one trial are judged in one call with
the note in a cached prompt prefix; judgements are cached per (note version, trial, criterion, model).

The trial verdict (`backend.screening.verdict`) is read from the patient's side, as the spec's label map
is: a failed inclusion (NOT_MET) or an exclusion that applies (NOT_MET, "excluded") makes the patient
EXCLUDED. The spec's diagram 4 says "any MET exclusion → EXCLUDED"; read against its own label table
("not excluded" → MET) that would exclude nearly every patient from every trial, so the table wins.
Note text is never logged and never put in an error message.
"""

from backend.screening.engine import screen
from backend.screening.ingest import extract_profile

__all__ = ["extract_profile", "screen"]
