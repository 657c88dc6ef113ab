"""PRESCREEN: find candidate trials for a profile with an agentic search (spec/prescreen-sequence-diagrams.md
§1), or take the trials the user listed.

The model drives the search with `search_trials` / `get_trial_details` tool calls for up to
`max_tool_calls + 5` turns. Each executed call is a `ToolCallRecord`; once the budget is spent every further
call is answered with an error tool result ("Tool budget of N calls exhausted…") and the model is asked to
summarise. The code, not the model, guarantees what the spec asks of every search: the patient's age and sex
filter it, and an intervention the patient already received is never searched as the wanted one (it is
dropped from the call and the record says so). Trials found are merged by NCT id with the searches that
found them, scored `query_count*3 + phase + recruiting + details` and pruned to N.

`planned_searches` is the search strategy the demo model follows when it answers the PRESCREEN request.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import anthropic
from pydantic import ValidationError

from backend.errors import AppError, UpstreamError
from backend.screening.models import Candidate, PatientProfile, ScreenRequest, ToolCallRecord, Usage
from backend.screening.prompts import DETAILS_TOOL, PRESCREEN_SYSTEM, SEARCH_TOOL, prescreen_message
from backend.screening.usage import add_usage, usage_of
from backend.sources import TrialSearchParams, TrialsSource, TrialSummary

PHASE_BONUS = {"PHASE3": 2.0, "PHASE2": 1.5, "PHASE1": 0.5, "EARLY_PHASE1": 0.5, "PHASE4": 1.0}
SEARCH_ARGS = ("condition", "intervention", "eligibility_keywords", "status", "phase", "location")


def budget_error(max_tool_calls: int) -> str:
    return f"Tool budget of {max_tool_calls} calls exhausted. Stop searching and summarise findings."


def _same_therapy(a: str, b: str) -> bool:
    x, y = a.strip().lower(), b.strip().lower()
    return bool(x and y) and (x in y or y in x)


def planned_searches(profile: PatientProfile) -> list[dict[str, Any]]:
    """The demo's search strategy: each condition, the main one narrowed by stage and biomarkers, then the
    keywords; never a prior therapy."""
    plan: list[dict[str, Any]] = []
    prior = profile.key_facts.prior_therapies
    conditions = profile.conditions[:3]
    for i, condition in enumerate(conditions):
        plan.append({"condition": condition, "page_size": 30 if i == 0 else 15})
        if i == 0:
            narrow = " ".join([*profile.key_facts.biomarkers[:2]]).strip()
            if narrow:
                plan.append({"condition": condition, "eligibility_keywords": narrow, "page_size": 20})
            if profile.key_facts.stage:
                plan.append({"condition": f"{profile.key_facts.stage} {condition}", "page_size": 20})
    for keyword in profile.keywords:
        if keyword not in conditions and not any(_same_therapy(keyword, p) for p in prior):
            plan.append({"eligibility_keywords": keyword, "page_size": 15})
    unique: list[dict[str, Any]] = []
    for step in plan:
        if step not in unique:
            unique.append(step)
    return unique


def query_label(args: dict[str, Any]) -> str:
    return "; ".join(f"{k}={v if not isinstance(v, list) else ','.join(map(str, v))}" for k, v in args.items()
                     if k in SEARCH_ARGS and v)


@dataclass
class _Found:
    summary: TrialSummary
    queries: list[str] = field(default_factory=list)
    details: bool = False


@dataclass
class Prescreen:
    candidates: list[Candidate]
    tool_calls: list[ToolCallRecord]
    usage: Usage
    reasoning: str = ""


class _Executor:
    def __init__(self, trials: TrialsSource, profile: PatientProfile, status: list[str]) -> None:
        self.trials = trials
        self.profile = profile
        self.status = status
        self.found: dict[str, _Found] = {}
        self.records: list[ToolCallRecord] = []

    def _params(self, raw: dict[str, Any]) -> tuple[TrialSearchParams, dict[str, Any], str | None]:
        args = {k: v for k, v in raw.items() if k in (*SEARCH_ARGS, "sex", "min_age", "max_age", "page_size")}
        note = None
        intervention = args.get("intervention")
        if isinstance(intervention, str) and any(_same_therapy(intervention, p)
                                                 for p in self.profile.key_facts.prior_therapies):
            args.pop("intervention")
            note = f"intervention {intervention!r} dropped: the patient already received it"
        if self.status:
            args.setdefault("status", self.status)
        if self.profile.age is not None:
            age = int(self.profile.age)
            args["min_age"], args["max_age"] = age, age
        if self.profile.sex:
            args["sex"] = self.profile.sex.upper()
        args["page_size"] = max(1, min(int(args.get("page_size") or 20), 100))
        return TrialSearchParams(**args), args, note

    async def run(self, name: str, raw: dict[str, Any]) -> tuple[str, bool]:
        """(tool result text for the model, is_error); records the call."""
        started = time.perf_counter()
        index = len(self.records)
        args: dict[str, Any] = dict(raw)
        try:
            if name == "search_trials":
                params, args, note = self._params(raw)
                page = await self.trials.search_trials(params)
                label = query_label(args)
                for t in page.trials:
                    entry = self.found.setdefault(t.nct_id, _Found(t))
                    if label not in entry.queries:
                        entry.queries.append(label)
                summary = f"{len(page.trials)} of {page.total_count} trials" + (f" ({note})" if note else "")
                self._record(index, name, args, summary, len(page.trials), started, None)
                return json.dumps({"count": len(page.trials), "total_available": page.total_count,
                                   "note": note, "trials": [_compact(t) for t in page.trials]}), False
            if name == "get_trial_details":
                detail = await self.trials.get_trial_by_nct_id(str(raw.get("nct_id", "")))
                entry = self.found.setdefault(detail.nct_id, _Found(detail.to_summary()))
                entry.details = True
                self._record(index, name, args, f"details of {detail.nct_id}", 0, started, None)
                return json.dumps({"nct_id": detail.nct_id, "title": detail.title,
                                   "eligibility_criteria": (detail.eligibility_criteria or "")[:6000],
                                   "minimum_age": detail.minimum_age, "maximum_age": detail.maximum_age,
                                   "sex": detail.sex}), False
            raise ValueError(f"unknown tool {name!r}")
        except (ValidationError, ValueError) as exc:
            message = str(exc).splitlines()[0][:300]
        except AppError as exc:  # a trial that vanished, a query CT.gov refused: the model hears it, goes on
            message = exc.detail[:300]
            if isinstance(exc, UpstreamError):  # CT.gov down: recorded, then the screening reports it
                self._record(index, name, args, "", 0, started, message)
                raise
        self._record(index, name, args, "", 0, started, message)
        return message, True

    def _record(self, index: int, name: str, args: dict[str, Any], summary: str, count: int, started: float,
                error: str | None) -> None:
        latency = round((time.perf_counter() - started) * 1000, 2)
        self.records.append(ToolCallRecord(call_index=index, tool_name=name, args=args, result_summary=summary,
                                           result_count=count, latency_ms=latency, error=error))


def _compact(t: TrialSummary) -> dict[str, Any]:
    return {"nct_id": t.nct_id, "title": t.title, "phase": t.phase, "status": t.status,
            "conditions": t.conditions[:3], "interventions": t.interventions[:4]}


def heuristic_score(found: _Found) -> float:
    phase = max((PHASE_BONUS.get(p, 0.0) for p in found.summary.phase), default=0.0)
    recruiting = 1.0 if found.summary.status == "RECRUITING" else 0.0
    return len(found.queries) * 3 + phase + recruiting + (1.0 if found.details else 0.0)


def _candidates(found: dict[str, _Found], n: int) -> list[Candidate]:
    order = list(found)
    ranked = sorted(found.values(), key=lambda f: (-heuristic_score(f), order.index(f.summary.nct_id)))
    return [Candidate(nct_id=f.summary.nct_id, title=f.summary.title, status=f.summary.status,
                      phase=list(f.summary.phase), conditions=f.summary.conditions,
                      interventions=f.summary.interventions, found_by_queries=f.queries,
                      heuristic_score=heuristic_score(f)) for f in ranked[:n]]


def _block_dicts(content: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in content:
        if block.type == "text" and block.text:
            out.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            out.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
    return out


async def run_prescreen(client: anthropic.AsyncAnthropic, model: str, profile: PatientProfile,
                        trials: TrialsSource, request: ScreenRequest) -> Prescreen:
    """The agentic search. Source outages (502/503) propagate after being recorded."""
    executor = _Executor(trials, profile, list(request.status))
    budget = request.max_tool_calls
    messages: list[dict[str, Any]] = [{"role": "user", "content": prescreen_message(profile, budget, request.n)}]
    usage = Usage(model=model)
    reasoning = ""
    calls = 0
    for _turn in range(budget + 5):
        message = await client.messages.create(
            model=model, max_tokens=1024, tools=[SEARCH_TOOL, DETAILS_TOOL],  # type: ignore[list-item]
            system=[{"type": "text", "text": PRESCREEN_SYSTEM, "cache_control": {"type": "ephemeral"}}],
            messages=messages)  # type: ignore[arg-type]
        usage = add_usage(usage, usage_of(message, model))
        uses = [b for b in message.content if b.type == "tool_use"]
        reasoning = "".join(b.text for b in message.content if b.type == "text").strip() or reasoning
        if not uses:
            break
        messages.append({"role": "assistant", "content": _block_dicts(list(message.content))})
        results: list[dict[str, Any]] = []
        for use in uses:
            if calls >= budget:
                text, is_error = budget_error(budget), True
            else:
                calls += 1
                text, is_error = await executor.run(use.name, dict(use.input or {}))
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": text, "is_error": is_error})
        messages.append({"role": "user", "content": results})
    return Prescreen(_candidates(executor.found, request.n), executor.records, usage, reasoning[:500])


def plan_reply(body: dict[str, Any]) -> tuple[str, dict[str, Any] | str]:
    """The demo model's next PRESCREEN move: ("tool", search input) or ("text", summary)."""
    messages = body.get("messages") or []
    first = messages[0].get("content") if messages else ""
    text = first if isinstance(first, str) else "".join(b.get("text", "") for b in first if b.get("type") == "text")
    match = re.search(r"<patient_profile>\n(.*?)\n</patient_profile>", text, re.S)
    budget = re.search(r"Tool budget: (\d+) calls", text)
    try:
        profile = PatientProfile.model_validate_json(match.group(1)) if match else PatientProfile()
    except ValidationError:
        profile = PatientProfile()
    made = sum(1 for m in messages if m.get("role") == "assistant" for b in m.get("content") or []
               if isinstance(b, dict) and b.get("type") == "tool_use")
    last = messages[-1].get("content") if messages else None
    exhausted = isinstance(last, list) and any(b.get("is_error") and "budget" in str(b.get("content", ""))
                                               for b in last if isinstance(b, dict))
    plan = planned_searches(profile)
    limit = int(budget.group(1)) if budget else len(plan)
    if exhausted or made >= min(len(plan), limit):
        return "text", (f"Searched {made} ways from the profile's conditions"
                        f"{', stage and biomarkers' if profile.key_facts.stage or profile.key_facts.biomarkers else ''}"
                        "; past treatments were not searched as the wanted intervention.")
    return "tool", plan[made]
