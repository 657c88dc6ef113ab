import { describe, expect, it } from "vitest";
import { applyTableFilters, facetFilter, filterFromSuggestion, matchesFilter, type RowFields } from "./tableFilters";

interface Row { id: string; year: number | null; journal: string | null; types: string[] }
const rows: Row[] = [
  { id: "a", year: 2019, journal: "The Lancet", types: ["Journal Article", "Review"] },
  { id: "b", year: 2021, journal: "BMJ", types: ["Randomized Controlled Trial"] },
  { id: "c", year: null, journal: null, types: [] },
];
const fields: RowFields<Row> = { year: (r) => r.year, journal: (r) => r.journal, publication_type: (r) => r.types };
const ids = (list: Row[]) => list.map((r) => r.id);

describe("table filters", () => {
  it("narrow by equality on lists and values, case-insensitively, and a missing value never passes", () => {
    const review = facetFilter("publication_type", "Publication type", "review", "Review");
    expect(ids(applyTableFilters(rows, [review], fields))).toEqual(["a"]);
    expect(review.label).toBe("Publication type: Review");
    expect(matchesFilter(null, review)).toBe(false);
  });

  it("AND several filters; search-scoped ones are left to the search", () => {
    const recent = filterFromSuggestion({ field: "year", operator: "gte", value: "2020" }, fields);
    const lancet = filterFromSuggestion({ field: "journal", operator: "contains", value: "lancet" }, fields);
    expect(ids(applyTableFilters(rows, [recent], fields))).toEqual(["b"]);
    expect(applyTableFilters(rows, [recent, lancet], fields)).toEqual([]);
    const searched = facetFilter("year", "Year", "2019", "2019", "search");
    expect(applyTableFilters(rows, [searched], fields)).toEqual(rows);
  });

  it("turn enrollment bins into ranges", () => {
    const bin = facetFilter("enrollment", "Enrollment", "100-249", "100–249 participants");
    expect([99, 100, 249, 250].map((n) => matchesFilter(n, bin))).toEqual([false, true, true, false]);
    const open = facetFilter("enrollment", "Enrollment", "5000+", "5000+ participants");
    expect([4999, 5000, 90000].map((n) => matchesFilter(n, open))).toEqual([false, true, true]);
  });

  it("refuse a suggestion this table cannot apply, saying why", () => {
    expect(() => filterFromSuggestion({ field: "country", operator: "equals", value: "France" }, fields))
      .toThrow(/cannot filter on "country".*year, journal, publication_type/);
    expect(() => filterFromSuggestion({ field: "year", operator: "gte", value: "recent" }, fields)).toThrow(/not a number/);
    expect(() => filterFromSuggestion({ field: "year", operator: "like", value: "2" }, fields)).toThrow(/operator/);
  });

  it("give the same filter the same id, so it is one chip", () => {
    const a = facetFilter("journal", "Journal", "BMJ", "BMJ");
    const b = facetFilter("journal", "Journal", "BMJ", "BMJ");
    expect(a.id).toBe(b.id);
  });
});
