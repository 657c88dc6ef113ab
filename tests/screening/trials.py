"""An in-memory trial source (the CT.gov edge) for engine tests: records what was asked, can be down."""

from __future__ import annotations

from collections.abc import Sequence

from backend.errors import NotFound, UpstreamUnavailable
from backend.sources.models import TrialDetail, TrialSearchPage, TrialSearchParams


def trial(nct_id: str, eligibility: str | None, title: str = "Breast cancer trial",
          conditions: Sequence[str] = ("Breast Cancer",)) -> TrialDetail:
    return TrialDetail(nct_id=nct_id, title=title, conditions=list(conditions), eligibility_criteria=eligibility,
                       status="RECRUITING", phase=["PHASE2"], snapshot_date="2026-08-11")


class FakeTrials:
    def __init__(self, items: Sequence[TrialDetail], *, down: bool = False) -> None:
        self.items = list(items)
        self.down = down
        self.searches: list[TrialSearchParams] = []

    async def search_trials(self, params: TrialSearchParams) -> TrialSearchPage:
        if self.down:
            raise UpstreamUnavailable("ClinicalTrials.gov did not answer in time")
        self.searches.append(params)
        words = " ".join(filter(None, [params.condition, params.eligibility_keywords])).lower().split()
        found = [t for t in self.items if all(w in (t.title + " " + " ".join(t.conditions)).lower() for w in words)]
        return TrialSearchPage(trials=[t.to_summary() for t in found[: params.page_size]], total_count=len(found))

    async def get_trial_by_nct_id(self, nct_id: str) -> TrialDetail:
        for t in self.items:
            if t.nct_id == nct_id:
                return t
        raise NotFound(f"No trial {nct_id}")

    async def get_trials_by_nct_ids(self, nct_ids: Sequence[str]) -> list[TrialDetail]:
        if self.down:
            raise UpstreamUnavailable("ClinicalTrials.gov did not answer in time")
        return [t for n in nct_ids for t in self.items if t.nct_id == n]

    async def aclose(self) -> None:
        return None
