"""Offline backend: filters, real totals and paging, checked against a brute-force scan of the corpus."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pytest

from backend.errors import InvalidInput
from backend.sources.ctgov_records import age_in_years
from backend.sources.models import ArticleSearchParams, TrialSearchParams
from backend.sources.offline import OfflineClinicalTrialsService, OfflinePubMedService, get_index
from backend.sources.offline.index import OfflineIndex
from tests.sources.raw_corpus import RawCorpus, RawTrial

trials = OfflineClinicalTrialsService()
pubmed = OfflinePubMedService()


@pytest.fixture(scope="module")
def index() -> OfflineIndex:
    return get_index()


async def every_page(params: TrialSearchParams) -> tuple[list[str], set[int]]:
    """All NCT ids of a search, following next_page_token, and every total_count reported."""
    ids: list[str] = []
    totals: set[int] = set()
    page = await trials.search_trials(params)
    while True:
        ids += [t.nct_id for t in page.trials]
        totals.add(page.total_count)
        if not page.next_page_token:
            return ids, totals
        page = await trials.search_trials(params.model_copy(update={"page_token": page.next_page_token}))


def scan(raw: RawCorpus, keep: Callable[[RawTrial], object]) -> set[str]:
    """The trials a search should find, from the data files read directly."""
    return {t.nct_id for t in raw.trials.values() if keep(t)}


# Filter-only searches narrowed to the rarer statuses: paging through 30,000 trials would only cost time.
RARE = ["SUSPENDED", "WITHDRAWN", "ENROLLING_BY_INVITATION"]


class TestCorpus:
    def test_every_unique_study_and_article_is_indexed(self, index: OfflineIndex, raw: RawCorpus) -> None:
        assert len(index.trials) == len(raw.trials) > 35_000
        assert len(index.articles) == len(raw.pmids) > 15_000
        assert get_index() is index  # opened once, shared

    def test_projected_single_study_captures_are_searchable(self, index: OfflineIndex) -> None:
        trial = index.trials["NCT02576665"]
        assert trial.eligibility_criteria and trial.locations


class TestTrialFilters:
    async def test_phase_and_status_filter_with_exact_total(self, raw: RawCorpus) -> None:
        params = TrialSearchParams(phase=["PHASE2", "PHASE3"], status=["ACTIVE_NOT_RECRUITING", "SUSPENDED"],
                                   page_size=97)
        ids, totals = await every_page(params)
        expected = scan(raw, lambda t: {"PHASE2", "PHASE3"} & set(t.phases)
                        and t.status in ("ACTIVE_NOT_RECRUITING", "SUSPENDED"))
        assert len(ids) == len(set(ids)) and set(ids) == expected
        assert totals == {len(expected)} and len(expected) > 300

    async def test_sex_female_keeps_trials_open_to_all(self, raw: RawCorpus) -> None:
        ids, totals = await every_page(TrialSearchParams(sex="MALE", status=RARE, page_size=100))
        assert set(ids) == scan(raw, lambda t: t.sex in ("ALL", "MALE", None) and t.status in RARE)
        assert totals == {len(ids)} and not set(ids) & scan(raw, lambda t: t.sex == "FEMALE")

    @pytest.mark.parametrize("study_type", ["INTERVENTIONAL", "OBSERVATIONAL"])
    async def test_study_type_keeps_only_that_kind_of_study(self, raw: RawCorpus, study_type: str) -> None:
        ids, totals = await every_page(TrialSearchParams(study_type=study_type, status=RARE, page_size=100))
        expected = scan(raw, lambda t: t.study_type == study_type and t.status in RARE)
        assert set(ids) == expected and totals == {len(expected)} and len(expected) > 20
        everything, _ = await every_page(TrialSearchParams(status=RARE, page_size=100))
        assert len(everything) > len(expected)

    async def test_ages_treat_a_missing_limit_as_no_limit(self, raw: RawCorpus) -> None:
        ids, totals = await every_page(TrialSearchParams(min_age=70, max_age=70, status=RARE, page_size=100))

        def fits(t: RawTrial) -> bool:
            low, high = age_in_years(t.minimum_age), age_in_years(t.maximum_age)
            return (low is None or low <= 70) and (high is None or high >= 70) and t.status in RARE

        expected = scan(raw, fits)
        assert set(ids) == expected and totals == {len(expected)}
        assert scan(raw, lambda t: t.maximum_age is None) & set(ids)
        assert scan(raw, lambda t: t.maximum_age == "17 Years") - expected  # trials for minors stay out

    async def test_children_only(self, raw: RawCorpus) -> None:
        ids, _ = await every_page(TrialSearchParams(max_age=10, status=RARE, page_size=100))
        assert ids and all((age_in_years(raw.trials[i].maximum_age) or 999) >= 10 for i in ids)

    async def test_sponsor_and_location(self, raw: RawCorpus) -> None:
        ids, _ = await every_page(TrialSearchParams(sponsor="AstraZeneca", page_size=100))
        assert ids and set(ids) == scan(raw, lambda t: "AstraZeneca" in t.sponsors)
        ids, _ = await every_page(TrialSearchParams(location="Boston", page_size=100))
        assert ids and set(ids) == scan(raw, lambda t: any("Boston" in place for place in t.places))

    async def test_condition_searches_conditions_and_titles_not_eligibility(self, index: OfflineIndex) -> None:
        ids, totals = await every_page(TrialSearchParams(condition="non-small cell lung cancer", page_size=50))
        assert totals == {len(ids)} and len(ids) > 20
        for nct_id in ids:
            t = index.trials[nct_id]
            text = " ".join([t.title, t.official_title or "", *t.conditions, *t.keywords,
                             *t.condition_mesh_terms]).lower()
            assert "lung" in text

    async def test_text_and_filters_combine(self, raw: RawCorpus) -> None:
        ids, totals = await every_page(TrialSearchParams(condition="NSCLC OR lung cancer", phase=["PHASE3"],
                                                         page_size=100))
        assert ids and all("PHASE3" in raw.trials[i].phases for i in ids)
        assert totals == {len(ids)}

    async def test_intervention_with_operators(self) -> None:
        page = await trials.search_trials(TrialSearchParams(
            condition="NSCLC", intervention="immunotherapy OR checkpoint inhibitor OR PD-1 OR PD-L1"))
        assert page.total_count >= 3

    async def test_essie_area_clause_searches_one_field(self, index: OfflineIndex) -> None:
        ids, _ = await every_page(TrialSearchParams(eligibility_keywords='AREA[EligibilityCriteria]"EGFR"',
                                                    page_size=100))
        assert ids and all("egfr" in (index.trials[i].eligibility_criteria or "").lower() for i in ids)

    async def test_no_match_is_an_empty_page(self) -> None:
        page = await trials.search_trials(TrialSearchParams(condition="xyzzyplugh"))
        assert (page.trials, page.total_count, page.next_page_token) == ([], 0, None)

    async def test_unparseable_text_is_invalid_input(self) -> None:
        with pytest.raises(InvalidInput, match=r"Could not read condition '\(melanoma OR lung': .*never closed"):
            await trials.search_trials(TrialSearchParams(condition="(melanoma OR lung"))

    async def test_a_token_from_another_search_is_refused(self) -> None:
        first = await trials.search_trials(TrialSearchParams(condition="cancer", page_size=2))
        with pytest.raises(InvalidInput, match="different search"):
            await trials.search_trials(TrialSearchParams(condition="pain", page_token=first.next_page_token))

    async def test_page_size_can_change_between_pages(self) -> None:
        first = await trials.search_trials(TrialSearchParams(condition="cancer", page_size=2))
        second = await trials.search_trials(TrialSearchParams(condition="cancer", page_size=5,
                                                              page_token=first.next_page_token))
        assert len(second.trials) == 5


class TestArticles:
    async def test_pubmed_style_query_from_a_user(self) -> None:
        page = await pubmed.search_articles(ArticleSearchParams(
            query='(EGFR[MeSH] OR "epidermal growth factor receptor") AND (resistance OR resistant)'))
        assert page.total_count == len(page.articles) >= 1
        assert page.query_translation == ('(EGFR[MeSH] OR "epidermal growth factor receptor"[All Fields]) AND '
                                          "(resistance[All Fields] OR resistant[All Fields])")
        for article in page.articles:
            text = (article.title + article.abstract).lower()
            assert "resist" in text and ("egfr" in text or "epidermal growth factor receptor" in text)

    async def test_field_tags(self) -> None:
        by_author = await pubmed.search_articles(ArticleSearchParams(query="Flaherty KT[au]"))
        assert [a.pmid for a in by_author.articles] == ["22663011"]
        by_title = await pubmed.search_articles(ArticleSearchParams(query="nasopharyngeal[ti]", page_size=100))
        assert by_title.articles and all("nasopharyn" in a.title.lower() for a in by_title.articles)
        reviews = await pubmed.search_articles(ArticleSearchParams(query="cancer NOT review[pt]", page_size=100))
        assert reviews.articles and all("Review" not in a.publication_types for a in reviews.articles)

    async def test_prefix_wildcard_and_stemming(self) -> None:
        wildcard = await pubmed.search_articles(ArticleSearchParams(query="nasophar*"))
        stemmed = await pubmed.search_articles(ArticleSearchParams(query="carcinomas"))
        assert wildcard.total_count > 50 and stemmed.total_count > 50

    async def test_date_range_and_total(self, index: OfflineIndex) -> None:
        params = ArticleSearchParams(query="cancer", date_start=date(2018, 1, 1), date_end=date(2018, 6, 30),
                                     page_size=100)
        page = await pubmed.search_articles(params)
        assert page.articles and page.total_count == len(page.articles)
        # A year-only date ("2018") may fall in the range, so it is kept.
        assert all(a.pub_date == "2018" or "2018-01" <= a.pub_date[:7] <= "2018-06" for a in page.articles)
        assert any(a.pub_date != "2018" for a in page.articles)

    async def test_sort_by_date_is_newest_first(self) -> None:
        page = await pubmed.search_articles(ArticleSearchParams(query="carcinoma", sort="date", page_size=50))
        # A partial date sorts as its first day: "2015" and "2015-01" tie (then the newer PMID comes first).
        dates = [(a.pub_date or "") + {4: "-01-01", 7: "-01"}.get(len(a.pub_date or ""), "") for a in page.articles]
        assert len(dates) == 50 and dates == sorted(dates, reverse=True)

    async def test_paging_covers_the_total_once(self) -> None:
        seen: list[str] = []
        for number in range(1, 30):
            page = await pubmed.search_articles(ArticleSearchParams(query="carcinoma", page=number, page_size=25))
            seen += [a.pmid for a in page.articles]
            if not page.articles:
                break
        assert len(seen) == len(set(seen)) == page.total_count

    async def test_search_by_pmid_doi_or_linked_trial(self) -> None:
        for query in ("22663011", '"10.1056/NEJMoa1203421"', "NCT01245062[si]"):
            page = await pubmed.search_articles(ArticleSearchParams(query=query))
            assert [a.pmid for a in page.articles] == ["22663011"], query

    @pytest.mark.parametrize(("query", "message"), [
        ('(EGFR OR "resistance"', "never closed"),
        ("EGFR AND", "needs a term after it"),
        ('"unterminated', "unterminated quote"),
        ("***", "no words to search for"),
    ])
    async def test_unparseable_query_is_a_clear_invalid_input(self, query: str, message: str) -> None:
        with pytest.raises(InvalidInput, match=message):
            await pubmed.search_articles(ArticleSearchParams(query=query))
