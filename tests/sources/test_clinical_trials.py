"""Live CT.gov backend: diagram-2 parameter mapping, rate limit, 429/400/timeout handling, parsing."""

from __future__ import annotations

import httpx
import pytest

from backend.errors import InvalidInput, UpstreamError, UpstreamUnavailable
from backend.sources.clinical_trials import (
    SEARCH_FIELDS,
    ClinicalTrialsService,
    build_search_query,
    escape_essie,
    shared_limiter,
)
from backend.sources.models import TrialSearchParams
from backend.sources.throttle import RateLimiter, RetryPolicy

from .fakes import FakeCTGov, FakeTime, recorded


def q(**kwargs: object) -> dict[str, str]:
    return build_search_query(TrialSearchParams(**kwargs))


class TestParameterMapping:
    def test_condition_intervention_location_map_to_their_query_areas(self) -> None:
        query = q(condition="melanoma", intervention="pembrolizumab", location="Boston")
        assert query["query.cond"] == "melanoma"
        assert query["query.intr"] == "pembrolizumab"
        assert query["query.locn"] == "Boston"

    def test_every_search_asks_for_json_with_the_total_count(self) -> None:
        query = q()
        assert query == {"format": "json", "countTotal": "true", "pageSize": "10", "fields": ",".join(SEARCH_FIELDS)}

    def test_page_size_maps_to_page_size_and_is_capped_at_100(self) -> None:
        assert q(page_size=100)["pageSize"] == "100"
        with pytest.raises(ValueError, match="less than or equal to 100"):
            TrialSearchParams(page_size=101)

    def test_min_age_becomes_a_minimum_age_range_up_to_the_patient_age(self) -> None:
        assert q(min_age=45)["query.term"] == "AREA[MinimumAge]RANGE[MIN, 45 years]"

    def test_max_age_becomes_a_maximum_age_range_from_the_patient_age(self) -> None:
        assert q(max_age=70)["query.term"] == "AREA[MaximumAge]RANGE[70 years, MAX]"

    def test_age_clauses_are_and_joined(self) -> None:
        assert q(min_age=18, max_age=65)["query.term"] == (
            "AREA[MinimumAge]RANGE[MIN, 18 years] AND AREA[MaximumAge]RANGE[65 years, MAX]")

    @pytest.mark.parametrize(("study_type", "area"), [
        ("INTERVENTIONAL", "AREA[StudyType]Interventional"), ("observational", "AREA[StudyType]Observational")])
    def test_study_type_becomes_an_area_clause_in_the_term(self, study_type: str, area: str) -> None:
        assert q(study_type=study_type)["query.term"] == area

    def test_study_type_is_and_composed_with_keywords_and_ages(self) -> None:
        assert q(eligibility_keywords="EGFR OR ALK", min_age=50, study_type="INTERVENTIONAL")["query.term"] == (
            "(EGFR OR ALK) AND (AREA[MinimumAge]RANGE[MIN, 50 years] AND AREA[StudyType]Interventional)")

    def test_an_unknown_study_type_is_refused(self) -> None:
        with pytest.raises(ValueError, match="INTERVENTIONAL"):
            TrialSearchParams(study_type="EXPANDED_ACCESS")

    def test_eligibility_keywords_alone_are_the_term(self) -> None:
        assert q(eligibility_keywords="EGFR L858R")["query.term"] == "EGFR L858R"

    def test_keywords_and_age_clauses_are_and_composed(self) -> None:
        assert q(eligibility_keywords="EGFR OR ALK", min_age=50, max_age=50)["query.term"] == (
            "(EGFR OR ALK) AND (AREA[MinimumAge]RANGE[MIN, 50 years] AND AREA[MaximumAge]RANGE[50 years, MAX])")

    @pytest.mark.parametrize(("phase", "code"), [
        ("EARLY_PHASE1", "0"), ("PHASE1", "1"), ("PHASE2", "2"), ("PHASE3", "3"), ("PHASE4", "4"), ("NA", "NA")])
    def test_each_phase_maps_to_its_agg_filter_code(self, phase: str, code: str) -> None:
        assert q(phase=[phase])["aggFilters"] == f"phase:{code}"

    def test_several_phases_are_one_filter_with_space_separated_values(self) -> None:
        assert q(phase=["PHASE2", "PHASE3"])["aggFilters"] == "phase:2 3"

    @pytest.mark.parametrize(("sex", "expected"), [("FEMALE", "sex:f"), ("MALE", "sex:m")])
    def test_sex_maps_to_an_agg_filter(self, sex: str, expected: str) -> None:
        assert q(sex=sex)["aggFilters"] == expected

    def test_sex_all_adds_no_filter(self) -> None:
        assert "aggFilters" not in q(sex="ALL")

    def test_phase_and_sex_are_comma_joined(self) -> None:
        assert q(phase=["PHASE2", "PHASE3"], sex="FEMALE")["aggFilters"] == "phase:2 3,sex:f"

    def test_status_list_is_comma_joined_into_overall_status(self) -> None:
        query = q(status=["RECRUITING", "NOT_YET_RECRUITING"])
        assert query["filter.overallStatus"] == "RECRUITING,NOT_YET_RECRUITING"

    def test_no_status_means_no_status_filter(self) -> None:
        # Defaulting to RECRUITING is the tool layer's call (diagram 2, "TE"), not the service's.
        assert "filter.overallStatus" not in q(condition="melanoma")

    def test_sponsor_maps_to_the_sponsor_area(self) -> None:
        assert q(sponsor="Merck Sharp & Dohme")["query.spons"] == "Merck Sharp & Dohme"

    def test_stray_brackets_are_escaped_but_essie_operators_kept(self) -> None:
        assert escape_essie("2-[4-(2-chloro)phenyl]acetamide") == r"2-\[4-(2-chloro)phenyl\]acetamide"
        essie = 'AREA[EligibilityCriteria]("EGFR L858R") OR AREA[BriefTitle]RANGE[MIN, MAX]'
        assert escape_essie(essie) == essie
        assert q(intervention="drug [x]")["query.intr"] == r"drug \[x\]"

    def test_filter_phase_and_study_type_parameters_are_never_sent(self) -> None:
        query = q(condition="x", phase=["PHASE2"], status=["RECRUITING"], sex="MALE", min_age=1,
                  study_type="OBSERVATIONAL")
        assert not {"filter.phase", "filter.studyType", "filter.sex"} & set(query)

    async def test_the_request_carries_the_mapping(self, live_trials: ClinicalTrialsService,
                                                   ctgov: FakeCTGov) -> None:
        await live_trials.search_trials(TrialSearchParams(condition="melanoma", status=["RECRUITING"],
                                                          page_size=3))
        request = ctgov.requests[-1]
        assert request.url.path == "/api/v2/studies"
        assert request.url.params["query.cond"] == "melanoma"
        assert request.url.params["filter.overallStatus"] == "RECRUITING"
        assert request.url.params["pageSize"] == "3"


class TestSearchResponses:
    async def test_projected_search_bodies_parse_despite_missing_modules(
            self, live_trials: ClinicalTrialsService) -> None:
        page = await live_trials.search_trials(TrialSearchParams(intervention='"Keytruda"', page_size=3))
        assert page.total_count == 2924
        assert len(page.trials) == 3
        raw = recorded("ctgov/biomcp_search_keytruda_limit3_20260811.json")["studies"]
        assert [t.nct_id for t in page.trials] == [s["protocolSection"]["identificationModule"]["nctId"] for s in raw]
        assert all(t.locations_count == 0 and t.sponsor for t in page.trials)

    async def test_last_page_has_no_token(self, live_trials: ClinicalTrialsService) -> None:
        page = await live_trials.search_trials(TrialSearchParams(condition="Phelan-McDermid Syndrome",
                                                                 page_size=50))
        assert page.next_page_token is None and page.total_count == 3

    async def test_page_two_sends_ctgov_token_and_reports_page_one_total(
            self, live_trials: ClinicalTrialsService, ctgov: FakeCTGov) -> None:
        params = TrialSearchParams(condition="Phelan-McDermid Syndrome", page_size=5)
        first = await live_trials.search_trials(params)
        second = await live_trials.search_trials(params.model_copy(update={"page_token": first.next_page_token}))
        assert ctgov.requests[-1].url.params["pageToken"].startswith("ZVt07cGH")
        assert "totalCount" not in recorded("ctgov/biomcp_search_phelan_next_20260811.json")
        assert second.total_count == first.total_count == 21


def service(handler, fake_time: FakeTime, **kwargs: object) -> ClinicalTrialsService:
    limiter = RateLimiter(1.5, clock=fake_time.clock, sleep=fake_time.sleep)
    return ClinicalTrialsService(transport=httpx.MockTransport(handler), limiter=limiter, **kwargs)


def answers(*responses: httpx.Response):
    queue = list(responses)
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return queue.pop(0)

    handler.sent = sent  # type: ignore[attr-defined]
    return handler


OK = httpx.Response(200, json={"studies": [], "totalCount": 0})


class TestRateLimitAndErrors:
    async def test_requests_are_spaced_by_the_spec_interval(self, fake_time: FakeTime) -> None:
        trials = service(answers(OK, OK, OK), fake_time)
        for _ in range(3):
            await trials.search_trials(TrialSearchParams())
        assert fake_time.sleeps == [1.5, 1.5]

    def test_one_limiter_is_shared_by_every_service_in_the_process(self) -> None:
        assert ClinicalTrialsService()._limiter is ClinicalTrialsService()._limiter is shared_limiter
        assert shared_limiter.min_interval == 1.5  # 40 requests/min

    async def test_429_waits_for_retry_after_then_retries(self, fake_time: FakeTime) -> None:
        handler = answers(httpx.Response(429, headers={"Retry-After": "7"}), OK)
        page = await service(handler, fake_time).search_trials(TrialSearchParams())
        assert page.total_count == 0
        assert len(handler.sent) == 2
        assert fake_time.sleeps == [7.0]  # the backoff replaces the rate-limit wait, never adds to it

    async def test_429_without_retry_after_backs_off_exponentially(self, fake_time: FakeTime) -> None:
        handler = answers(*[httpx.Response(429)] * 3, OK)
        await service(handler, fake_time).search_trials(TrialSearchParams())
        assert fake_time.sleeps == [2.0, 4.0, 8.0]

    async def test_429_retries_are_bounded_then_a_clear_error(self, fake_time: FakeTime) -> None:
        handler = answers(*[httpx.Response(429, headers={"Retry-After": "2"})] * 10)
        trials = service(handler, fake_time, retry=RetryPolicy(max_retries=2))
        with pytest.raises(UpstreamUnavailable, match=r"rate limiting.*HTTP 429.*after 2 retries"):
            await trials.search_trials(TrialSearchParams())
        assert len(handler.sent) == 3

    async def test_a_retry_after_beyond_the_cap_fails_at_once(self, fake_time: FakeTime) -> None:
        handler = answers(httpx.Response(429, headers={"Retry-After": "3600"}))
        with pytest.raises(UpstreamUnavailable, match="3600 s"):
            await service(handler, fake_time).search_trials(TrialSearchParams())
        assert fake_time.sleeps == []

    async def test_persistent_5xx_is_an_upstream_error(self, fake_time: FakeTime) -> None:
        handler = answers(*[httpx.Response(503)] * 4)
        with pytest.raises(UpstreamError, match="HTTP 503 after 3 retries"):
            await service(handler, fake_time).search_trials(TrialSearchParams())

    @pytest.mark.parametrize("body", [
        {"text": "Invalid Essie expression: unbalanced parenthesis in query.term"},
        {"json": {"message": "Invalid Essie expression: unbalanced parenthesis in query.term"}},
    ])
    async def test_400_is_invalid_input_quoting_ctgov(self, fake_time: FakeTime, body: dict) -> None:
        handler = answers(httpx.Response(400, **body))
        with pytest.raises(InvalidInput, match="rejected the search: Invalid Essie expression: unbalanced"):
            await service(handler, fake_time).search_trials(TrialSearchParams(eligibility_keywords="(EGFR"))
        assert len(handler.sent) == 1  # a 400 is never retried

    async def test_timeout_is_unavailable_not_a_hang(self, fake_time: FakeTime) -> None:
        def handler(request: httpx.Request) -> httpx.Response:
            raise httpx.ReadTimeout("timed out", request=request)

        with pytest.raises(UpstreamUnavailable, match="did not answer in time"):
            await service(handler, fake_time).get_trial_by_nct_id("NCT01245062")

    async def test_connection_failure_is_unavailable(self, fake_time: FakeTime) -> None:
        def handler(request: httpx.Request) -> httpx.Response:
            raise httpx.ConnectError("name resolution failed", request=request)

        with pytest.raises(UpstreamUnavailable, match="could not be reached"):
            await service(handler, fake_time).search_trials(TrialSearchParams())

    async def test_non_json_body_is_an_upstream_error(self, fake_time: FakeTime) -> None:
        handler = answers(httpx.Response(200, text="<html>maintenance</html>"))
        with pytest.raises(UpstreamError, match="not JSON"):
            await service(handler, fake_time).search_trials(TrialSearchParams())

    async def test_the_client_has_a_timeout(self) -> None:
        trials = ClinicalTrialsService(timeout=7)
        assert trials._client.timeout.read == 7 and trials._client.timeout.connect == 5
        await trials.aclose()

    async def test_nct_alias_redirect_is_followed(self, fake_time: FakeTime, ctgov: FakeCTGov) -> None:
        def handler(request: httpx.Request) -> httpx.Response:
            if request.url.path.endswith("NCT00000001"):
                return httpx.Response(301, headers={"Location": "/api/v2/studies/NCT06576635"})
            return ctgov(request)

        trial = await service(handler, fake_time).get_trial_by_nct_id("NCT00000001")
        assert trial.nct_id == "NCT06576635"

    async def test_many_ids_are_fetched_in_chunks_of_100(self, fake_time: FakeTime, ctgov: FakeCTGov) -> None:
        ids = [f"NCT{n:08d}" for n in range(1, 151)] + ["NCT06576635"]
        trials = await service(ctgov, fake_time).get_trials_by_nct_ids(ids)
        assert [t.nct_id for t in trials] == ["NCT06576635"]
        assert [len(r.url.params["filter.ids"].split(",")) for r in ctgov.requests] == [100, 51]
