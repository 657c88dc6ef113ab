"""What a statistics request asks and what it answers: facet counts over a whole result set.

A request is the page's search (the same parameters its table search takes, without paging) plus
optional facet filters (`{"phase": ["PHASE3"]}`: values OR'ed within a facet, facets AND'ed), which is
how a chart narrowed by a click, or a chart card's own filters, are counted. Every figure says
whether it is exact or was computed from a sample (live sources), so nothing sampled reads as a census.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, field_validator, model_validator

from backend.sources.models import ArticleSearchParams, OverallStatus, Phase, Sex, TrialSearchParams

TrialFacet = Literal["phase", "status", "study_type", "sponsor_class", "sponsor", "enrollment", "start_year",
                     "condition", "intervention_type", "country"]
ArticleFacet = Literal["year", "journal", "publication_type", "mesh"]
FacetKind = Literal["categorical", "histogram", "timeline"]

TRIAL_FACETS: tuple[TrialFacet, ...] = ("phase", "status", "study_type", "sponsor_class", "sponsor", "enrollment",
                                        "start_year", "condition", "intervention_type", "country")
ARTICLE_FACETS: tuple[ArticleFacet, ...] = ("year", "journal", "publication_type", "mesh")
# How each facet's buckets are ordered and drawn: by count (categorical) or along an axis.
FACET_KINDS: dict[str, FacetKind] = {"enrollment": "histogram", "start_year": "timeline", "year": "timeline"}
FACET_LABELS: dict[str, str] = {
    "phase": "Phase", "status": "Status", "study_type": "Study type", "sponsor_class": "Sponsor class",
    "sponsor": "Lead sponsor", "enrollment": "Enrollment", "start_year": "Start year", "condition": "Condition",
    "intervention_type": "Intervention type", "country": "Country", "year": "Publication year",
    "journal": "Journal", "publication_type": "Publication type", "mesh": "MeSH term",
}
# Facets a trial or article may have several values of: their counts can add up to more than the total.
MULTI_VALUED = frozenset({"phase", "condition", "intervention_type", "country", "publication_type", "mesh"})
# Enrollment bins: [low, high) participants; the last is open-ended.
ENROLLMENT_BINS: tuple[tuple[int, int | None], ...] = (
    (0, 10), (10, 50), (50, 100), (100, 250), (250, 500), (500, 1000), (1000, 5000), (5000, None))

MAX_FILTER_VALUES = 50
# Filters as the API document states them: a facet that can be filtered on, 1 to 50 values of 1 to 300 characters
# with something besides spaces (enrollment is binned: its buckets are not values to filter by).
TRIAL_FILTERS = tuple(f for f in TRIAL_FACETS if f != "enrollment")
FilterValues = Annotated[list[str], WithJsonSchema({
    "type": "array", "minItems": 1, "maxItems": MAX_FILTER_VALUES,
    "items": {"type": "string", "minLength": 1, "maxLength": 300, "pattern": r"\S"}})]  # checked by _check_filters


def enrollment_bin(count: int) -> str:
    for low, high in ENROLLMENT_BINS:
        if high is None or count < high:
            return bin_key(low, high)
    raise AssertionError("the last bin is open-ended")


def bin_key(low: int, high: int | None) -> str:
    return f"{low}-{high - 1}" if high is not None else f"{low}+"


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)

    limit: int = Field(12, ge=1, le=100, description="Buckets per categorical facet; the rest are 'other'")
    FACETS: ClassVar[tuple[str, ...]] = ()  # the facets of the request's records: what `filters` may name

    @field_validator("filters", check_fields=False)
    @classmethod
    def _filters(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return _check_filters(value, cls.FACETS)


def _check_filters(filters: dict[str, list[str]], allowed: tuple[str, ...]) -> dict[str, list[str]]:
    for facet, values in filters.items():
        if facet not in allowed or facet == "enrollment":
            raise ValueError(f"cannot filter on {facet!r}; filterable facets: "
                             + ", ".join(f for f in allowed if f != "enrollment"))
        if not values or len(values) > MAX_FILTER_VALUES or any(not v or len(v) > 300 for v in values):
            raise ValueError(f"filter {facet!r} needs 1 to {MAX_FILTER_VALUES} values of 1 to 300 characters")
    return filters


class _SearchFields(BaseModel):
    """A page's search without its paging."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)

    @model_validator(mode="after")
    def _valid_search(self) -> Self:
        """The search must be one the table's search accepts (e.g. ages in order): the same message, as a 422."""
        try:
            self.to_params()
        except ValidationError as exc:
            raise ValueError("; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())) from None
        return self

    def to_params(self) -> BaseModel:
        raise NotImplementedError


class TrialSearchFields(_SearchFields):
    """A trial search without its paging: what TrialScout's form holds."""

    condition: str | None = Field(None, max_length=500)
    intervention: str | None = Field(None, max_length=500)
    sponsor: str | None = Field(None, max_length=200)
    eligibility_keywords: str | None = Field(None, max_length=500)
    phase: list[Phase] = Field(default_factory=list)
    status: list[OverallStatus] = Field(default_factory=list)
    location: str | None = Field(None, max_length=200)
    sex: Sex | None = None
    min_age: int | None = Field(None, ge=0, le=120)
    max_age: int | None = Field(None, ge=0, le=120)

    def to_params(self) -> TrialSearchParams:
        return TrialSearchParams(**self.model_dump(exclude_none=True))


class TrialStatsRequest(_Request):
    search: TrialSearchFields = Field(default_factory=TrialSearchFields)
    facets: list[TrialFacet] = Field(default_factory=lambda: list(TRIAL_FACETS), min_length=1)
    filters: dict[str, FilterValues] = Field(default_factory=dict, description="facet -> values (OR), facets AND",
                                             json_schema_extra={"propertyNames": {"enum": list(TRIAL_FILTERS)}})
    FACETS = TRIAL_FACETS


class ArticleSearchFields(_SearchFields):
    query: str = Field(min_length=1, max_length=2000)
    date_start: date | None = None
    date_end: date | None = None

    def to_params(self) -> ArticleSearchParams:
        return ArticleSearchParams(**self.model_dump(exclude_none=True))


class ArticleStatsRequest(_Request):
    search: ArticleSearchFields
    facets: list[ArticleFacet] = Field(default_factory=lambda: list(ARTICLE_FACETS), min_length=1)
    filters: dict[str, FilterValues] = Field(default_factory=dict, description="facet -> values (OR), facets AND",
                                             json_schema_extra={"propertyNames": {"enum": list(ARTICLE_FACETS)}})
    FACETS = ARTICLE_FACETS


class Bucket(BaseModel):
    value: str = Field(description="The value as registered (e.g. PHASE3) or a bin such as '100-249'")
    count: int


class FacetStats(BaseModel):
    facet: str
    label: str
    kind: FacetKind
    multi_valued: bool = Field(description="A record may count under several values of this facet")
    buckets: list[Bucket]
    other: int = Field(0, description="Counts of the values past `limit` (categorical facets)")
    distinct: int = Field(description="How many different values the facet has in the result set")
    missing: int = Field(description="Records in the result set with no value for this facet")
    sampled: bool = Field(False, description="Counted over a sample of the result set, not all of it")
    basis: int = Field(description="How many records these counts are over (the total unless sampled)")
    note: str | None = None

    @classmethod
    def of(cls, facet: str, buckets: list[Bucket], **figures: Any) -> FacetStats:
        """`facet`'s figures, with its label, kind and whether it is multi-valued from the tables above."""
        return cls(facet=facet, label=FACET_LABELS[facet], kind=FACET_KINDS.get(facet, "categorical"),
                   multi_valued=facet in MULTI_VALUED, buckets=buckets, **figures)

    @classmethod
    def enrollment(cls, counts: Mapping[str, int], basis: int, **figures: Any) -> FacetStats:
        """The enrollment histogram of `counts` (records per bin key) over `basis` records."""
        buckets = [Bucket(value=key, count=int(counts.get(key, 0)))
                   for key in (bin_key(low, high) for low, high in ENROLLMENT_BINS)]
        return cls.of("enrollment", buckets, distinct=sum(1 for b in buckets if b.count),
                      missing=basis - sum(b.count for b in buckets), basis=basis, **figures)


class StatsResponse(BaseModel):
    source: Literal["offline", "live"]
    total: int = Field(description="Records in the result set (after the facet filters)")
    filters: dict[str, list[str]]
    facets: list[FacetStats]
    sampled: bool = Field(description="Some figure was computed from a sample or capped")
    note: str | None = None
