"""VALIDATE for one trial: judge all its criteria against the note in one Messages API request
(TrialGPT's way), reusing cached judgements.

The request is the judge system prompt, then the numbered note (a cache breakpoint: every trial of one
screening shares this prefix), then the trial's criteria. The reply must hold one entry per criterion id;
an unreadable reply is asked once more, then every criterion it left undecided is UNKNOWN with the reason
(`CriterionResult.error`). Unusable judgements are never cached. API errors propagate to the engine.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anthropic

from backend.criteria.evaluator import extract_json_object
from backend.criteria.labels import Verdict
from backend.criteria.prompts import verdict_from_answer
from backend.screening.models import (
    Criterion,
    CriterionResult,
    Judgement,
    JudgementCache,
    JudgementKey,
    Usage,
)
from backend.screening.prompts import JUDGE_SYSTEM, JUDGE_TAG, criterion_id, note_block, trial_block
from backend.screening.usage import add_usage, usage_of

log = logging.getLogger(__name__)

MAX_TOKENS_PER_CRITERION = 160
ANSWERS = {"yes", "no", "unknown", "not_applicable"}


def criterion_hash(criterion: Criterion) -> str:
    """Stable over whitespace, changes with the kind, the text and the judge prompt's version."""
    text = " ".join(criterion.text.split())
    return hashlib.sha256(f"{JUDGE_TAG}\n{criterion.kind}\n{text}".encode()).hexdigest()[:40]


@dataclass
class JudgedTrial:
    results: list[CriterionResult]
    usage: Usage


def _parse(text: str, criteria: Sequence[Criterion], sentence_count: int
           ) -> tuple[dict[str, CriterionResult], str | None]:
    """Usable entries by criterion id, and why the reply was (partly) unusable."""
    obj, _ = extract_json_object(text, required_key="criteria")
    if obj is None:  # the reply itself is not quoted: it may repeat the note
        return {}, "the reply held no JSON object with a 'criteria' list" if text.strip() else "empty reply"
    entries = obj.get("criteria")
    if not isinstance(entries, list):
        return {}, "the reply's 'criteria' is not a list"
    by_id = {criterion_id(c): c for c in criteria}
    out: dict[str, CriterionResult] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("id") not in by_id:
            continue
        answer = str(entry.get("answer", "")).strip().lower().replace(" ", "_").replace("-", "_")
        if answer not in ANSWERS:
            continue
        criterion = by_id[entry["id"]]
        raw_evidence = entry.get("evidence")
        evidence: list[Any] = raw_evidence if isinstance(raw_evidence, list) else []
        indices = sorted({int(e) for e in evidence if isinstance(e, (int, float, str)) and str(e).strip().isdigit()
                          and 0 <= int(e) < sentence_count})
        reasoning = entry.get("reasoning")
        out[entry["id"]] = CriterionResult(
            criterion=criterion, label=verdict_from_answer(answer, criterion.kind),  # type: ignore[arg-type]
            reasoning=reasoning.strip() if isinstance(reasoning, str) else "", evidence=indices)
    missing = len(by_id) - len(out)
    return out, (f"the reply left {missing} of {len(by_id)} criteria without a usable answer" if missing else None)


async def _call(client: anthropic.AsyncAnthropic, model: str, numbered_note: str, nct_id: str, title: str,
                criteria: Sequence[Criterion]) -> tuple[str, Usage]:
    content: Any = [
        {"type": "text", "text": note_block(numbered_note), "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": trial_block(nct_id, title, list(criteria))},
    ]
    message = await client.messages.create(
        model=model, max_tokens=min(32_000, 256 + MAX_TOKENS_PER_CRITERION * len(criteria)),
        system=[{"type": "text", "text": JUDGE_SYSTEM, "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": content}])
    usage = usage_of(message, model)
    text = "".join(b.text for b in message.content if b.type == "text")
    if message.stop_reason == "refusal":
        text = ""
    return text, usage


async def judge_trial(client: anthropic.AsyncAnthropic, model: str, *, note_version: str, numbered_note: str,
                      sentence_count: int, nct_id: str, title: str, criteria: Sequence[Criterion],
                      cache: JudgementCache) -> JudgedTrial:
    """Every criterion's result, in the criteria's order: cached ones as they were, the rest from at most
    two model calls (the second asks again for what the first left unusable)."""
    keys = {criterion_id(c): JudgementKey(note_version=note_version, nct_id=nct_id,
                                          criterion_hash=criterion_hash(c), model=model) for c in criteria}
    try:
        cached = await cache.get(list(keys.values()))
    except Exception as exc:  # the cache is a shortcut; without it the trial is still judged
        # The type only: a database error's message can carry the parameters (judgements quote the note).
        log.error("reading cached judgements failed: %s", type(exc).__name__)
        cached = {}
    results: dict[str, CriterionResult] = {}
    for c in criteria:
        hit = cached.get(keys[criterion_id(c)])
        if hit is not None:
            results[criterion_id(c)] = CriterionResult(criterion=c, label=hit.label, reasoning=hit.reasoning,
                                                       evidence=list(hit.evidence), cached=True)
    usage = Usage(model=model)
    todo = [c for c in criteria if criterion_id(c) not in results]
    problem: str | None = None
    for _attempt in range(2):
        if not todo:
            break
        text, call_usage = await _call(client, model, numbered_note, nct_id, title, todo)
        usage = add_usage(usage, call_usage)
        fresh, problem = _parse(text, todo, sentence_count)
        results.update(fresh)
        todo = [c for c in todo if criterion_id(c) not in fresh]
    new = [(keys[i], Judgement(label=r.label, reasoning=r.reasoning, evidence=r.evidence))
           for i, r in results.items() if not r.cached]
    for c in todo:
        reason = f"No usable answer after a retry: {problem or 'unusable reply'}."
        results[criterion_id(c)] = CriterionResult(criterion=c, label=Verdict.UNKNOWN, reasoning=reason,
                                                   error=problem or "unusable reply")
    if new:
        try:
            await cache.put(new)
        except Exception as exc:
            log.error("caching judgements failed: %s", type(exc).__name__)
    return JudgedTrial([results[criterion_id(c)] for c in criteria], usage)
