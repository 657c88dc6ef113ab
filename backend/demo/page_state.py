"""What the demo model reads off the page context of a turn: the search state, the loaded rows, the totals
and the card the user last accepted. It parses the text the page's context builder wrote
(`backend/pages/tablizer.py`, `trialscout.py`), exactly what Claude is shown, never the raw page data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_TRIAL_ROW = re.compile(r"^- (NCT\d{8}) \| (.*) \| (.*?) \| (.*?) \| n=([^|]*?)(?: \| sponsor: (.*))?$")
_ARTICLE_ROW = re.compile(r"^- PMID: (\d+) \| (.*) \| (.*?) \((.*?)\)$")
_UNSET = {"not set", "any", "", "No search yet", "—"}


@dataclass
class PageState:
    page: str | None
    search: dict[str, Any] = field(default_factory=dict)  # the form (TrialScout) or {"query": …} (Tablizer)
    loaded: int = 0
    total: int | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)  # the rows listed in the context
    all_rows_listed: bool = True
    last_accepted: dict[str, Any] | None = None

    @property
    def noun(self) -> str:
        return "trials" if self.page == "trialscout" else "articles"

    @property
    def has_search(self) -> bool:
        return any(v for v in self.search.values())

    def zero_results(self) -> dict[str, Any] | None:
        """The search that found nothing, when the latest accepted card or the page says so: a dict with
        `query`, and `previous_query`/`previous_result_count` when the card replaced an earlier search."""
        accepted = self.last_accepted
        if accepted and accepted.get("result_count") == 0:
            return accepted
        if not accepted and self.has_search and self.total == 0 and self.loaded == 0:
            return {"query": _describe(self.search), "result_count": 0}
        return None


def enum(label: str) -> str:
    """A phase or status as the registry's enum, whether the page shows the enum ("PHASE2",
    "ACTIVE_NOT_RECRUITING") or its display label ("Phase 2", "Active, not recruiting", "Not Applicable")."""
    word = re.sub(r"[^A-Z0-9]+", "_", label.strip().upper()).strip("_")
    word = re.sub(r"^(EARLY_)?PHASE_(\d)$", r"\1PHASE\2", word)
    return {"NOT_APPLICABLE": "NA", "N_A": "NA"}.get(word, word)


def _value(line: str, label: str) -> str | None:
    match = re.search(rf"^- {re.escape(label)}: (.*?)(?: \| |$)", line)
    if not match:
        return None
    value = match.group(1).strip()
    return None if value in _UNSET else value


def _int(text: str) -> int | None:
    digits = text.replace(",", "").strip()
    return int(digits) if digits.isdigit() else None


def _describe(search: dict[str, Any]) -> str:
    return "; ".join(f"{k.replace('_', ' ')}: {', '.join(v) if isinstance(v, list) else v}"
                     for k, v in search.items() if v)


def read(page: str | None, context: str) -> PageState:
    state = PageState(page=page)
    lines = context.splitlines()
    for line in lines:
        if page == "trialscout":
            for label, key in (("Condition", "condition"), ("Intervention", "intervention"), ("Sponsor", "sponsor"),
                               ("Location", "location"), ("Eligibility keywords", "eligibility_keywords")):
                if line.startswith(f"- {label}:") and (value := _value(line, label)):
                    state.search[key] = value
            for label, key in (("Phase", "phase"), ("Status", "status")):
                if line.startswith(f"- {label}:") and (value := _value(line, label)):
                    state.search[key] = [v.strip() for v in value.split(",") if v.strip()]
            if line.startswith("- Sex:"):
                sex = re.search(r"Sex: (\w+)", line)
                ages = re.search(r"Ages: (\S+) to (\S+)", line)
                if sex and sex.group(1) not in ("any", "ALL"):
                    state.search["sex"] = sex.group(1)
                if ages:
                    for key, value in zip(("min_age", "max_age"), ages.groups(), strict=True):
                        if (number := _int(value)) is not None:
                            state.search[key] = number
            if row := _TRIAL_ROW.match(line):
                phase = row.group(3)
                state.rows.append({"nct_id": row.group(1), "title": row.group(2),
                                   "phase": [] if phase == "—" else [enum(p) for p in phase.split("/")],
                                   "status": None if row.group(4) == "—" else enum(row.group(4)),
                                   "enrollment": _int(row.group(5)), "sponsor": row.group(6)})
        elif page == "tablizer":
            if line.startswith("- Query:") and (value := _value(line, "Query")):
                state.search["query"] = line.split(": ", 1)[1].strip()
                del value
            if row := _ARTICLE_ROW.match(line):
                state.rows.append({"pmid": row.group(1), "title": row.group(2),
                                   "journal": None if row.group(3) == "—" else row.group(3),
                                   "year": _int(row.group(4))})
        if results := re.match(r"^- Results: ([\d,]+) loaded of ([\d,]+|None|\?)? ?total", line):
            state.loaded = _int(results.group(1)) or 0
            state.total = _int(results.group(2) or "")
        if line.startswith("- Last accepted card: "):
            try:
                accepted = json.loads(line.removeprefix("- Last accepted card: "))
            except json.JSONDecodeError:
                accepted = None
            state.last_accepted = accepted if isinstance(accepted, dict) else None
        if re.match(r"^LOADED \w+ \((\d+) of (\d+) listed\)", line) or "not shown: use get_staged_items" in line:
            state.all_rows_listed = False
    return state
