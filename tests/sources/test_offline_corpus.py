"""The real-sized offline corpus: the searches a new user tries first find trials, with exact totals,
complete paging and each record's snapshot date, checked against the data files read directly."""

from __future__ import annotations

from collections.abc import Callable

from backend.sources.models import ArticleSearchParams, TrialSearchParams, TrialSummary
from backend.sources.offline import OfflineClinicalTrialsService, OfflinePubMedService
from backend.tools.trials import trial_line, trial_text
from tests.sources.raw_corpus import RawCorpus, RawTrial, words

trials = OfflineClinicalTrialsService()
pubmed = OfflinePubMedService()
OPEN = ["RECRUITING", "ACTIVE_NOT_RECRUITING"]  # the demo model's default statuses


async def all_pages(params: TrialSearchParams) -> tuple[list[TrialSummary], set[int]]:
    found: list[TrialSummary] = []
    totals: set[int] = set()
    page = await trials.search_trials(params)
    while True:
        found += page.trials
        totals.add(page.total_count)
        if not page.next_page_token:
            return found, totals
        page = await trials.search_trials(params.model_copy(update={"page_token": page.next_page_token}))


def expected(raw: RawCorpus, keep: Callable[[RawTrial], bool]) -> dict[str, RawTrial]:
    return {t.nct_id: t for t in raw.trials.values() if keep(t)}


def mentions(text: str, *alternatives: set[str]) -> bool:
    """Every set has a form in the text (the forms Porter stemming makes equal)."""
    tokens = words(text)
    return all(tokens & forms for forms in alternatives)


async def check(params: TrialSearchParams, want: dict[str, RawTrial]) -> list[TrialSummary]:
    found, totals = await all_pages(params)
    ids = [t.nct_id for t in found]
    assert len(ids) == len(set(ids)), "a trial appeared on two pages"
    assert set(ids) == set(want) and totals == {len(want)}
    for trial in found:  # the status shown is the one of the snapshot the record was copied from
        assert (trial.status, trial.snapshot_date) == (want[trial.nct_id].status, want[trial.nct_id].snapshot)
    return found


async def test_recruiting_melanoma_trials(raw: RawCorpus) -> None:
    want = expected(raw, lambda t: t.status == "RECRUITING" and mentions(t.cond_text, {"melanoma", "melanomas"}))
    found = await check(TrialSearchParams(condition="melanoma", status=["RECRUITING"], page_size=7), want)
    assert len(found) >= 20 and all(t.snapshot_date for t in found)
    assert len({t.snapshot_date for t in found}) > 1  # copied at different dates: each row says which


async def test_phase_2_breast_cancer_trials(raw: RawCorpus) -> None:
    def breast_cancer(t: RawTrial) -> bool:
        return mentions(t.cond_text, {"breast", "breasts"}, {"cancer", "cancers", "cancerous"})

    want = expected(raw, lambda t: "PHASE2" in t.phases and t.status in OPEN and breast_cancer(t))
    assert len(await check(TrialSearchParams(condition="breast cancer", phase=["PHASE2"], status=OPEN,
                                             page_size=50), want)) >= 10
    any_status = expected(raw, lambda t: "PHASE2" in t.phases and breast_cancer(t))
    assert len(await check(TrialSearchParams(condition="breast cancer", phase=["PHASE2"], page_size=100),
                           any_status)) > 300


async def test_phase_3_nsclc_immunotherapy(raw: RawCorpus) -> None:
    """The tray's chip, as the demo model fills the form: NSCLC, immunotherapy words, phase 3."""
    def nsclc_io(t: RawTrial) -> bool:
        nsclc = mentions(t.cond_text, {"non"}, {"small"}, {"cell"}, {"lung"}, {"cancer", "cancers"})
        io = words(t.intr_text) & {"immunotherapy", "immunotherapies"} or mentions(t.intr_text, {"checkpoint"},
                                                                                    {"inhibitor", "inhibitors"})
        io = io or any(form in t.intr_text.lower() for form in ("pd-1", "pd-l1", "pd 1", "pd l1"))
        return "PHASE3" in t.phases and nsclc and bool(io)

    params = TrialSearchParams(condition="non-small cell lung cancer", phase=["PHASE3"],
                               intervention="immunotherapy OR checkpoint inhibitor OR PD-1 OR PD-L1")
    assert await check(params, expected(raw, nsclc_io))
    # Named checkpoint inhibitors find the many older phase 3 trials, most of them completed by their snapshot.
    drugs = TrialSearchParams(condition="NSCLC OR non-small cell lung cancer", phase=["PHASE3"], page_size=100,
                              intervention="pembrolizumab OR nivolumab OR atezolizumab OR durvalumab")
    found, totals = await all_pages(drugs)
    assert totals == {len(found)} and len(found) >= 10


async def test_a_2016_snapshot_says_so_to_the_model_too(raw: RawCorpus) -> None:
    old = next(t for t in sorted(raw.trials.values(), key=lambda t: t.nct_id) if t.snapshot == "2016-04-13")
    detail = await trials.get_trial_by_nct_id(old.nct_id)
    assert detail.snapshot_date == "2016-04-13" and detail.status == old.status
    assert "status as of 2016-04-13" in trial_line(detail.to_summary())
    assert "Status as of 2016-04-13" in trial_text(detail)


async def test_corpus_articles_are_searchable_with_pubmed_syntax(raw: RawCorpus) -> None:
    # Cohen drug-review records: MeSH terms, "Last, F M" authors normalised to PubMed's "Last FM".
    page = await pubmed.search_articles(ArticleSearchParams(query="Proton Pump Inhibitors[MeSH]", page_size=100))
    assert page.total_count > 100 and all(a.pmid in raw.pmids for a in page.articles)
    assert all(a.snapshot_date and a.abstract != "NA" for a in page.articles)  # "NA": the sets' empty abstract
    article = next(a for a in page.articles if a.authors)
    assert all("," not in name for name in article.authors)
    by_author = await pubmed.search_articles(ArticleSearchParams(query=f'"{article.authors[0]}"[au]', page_size=100))
    assert article.pmid in {a.pmid for a in by_author.articles}
