import { describe, expect, it } from "vitest";
import { emptyTrialForm } from "../trialscout/trialscoutContext";
import type { DetailsForm } from "./streamsContext";
import {
  applyFilterSuggestion,
  applyQuerySuggestion,
  applyRetrievalProposal,
  applySchemaProposal,
  filterClause,
} from "./streamProposals";

const details: DetailsForm = { name: "EGFR", description: "old", pubmedQuery: "EGFR[MeSH]", trial: { ...emptyTrialForm, condition: "NSCLC" } };

describe("the stream editor's Accept", () => {
  it("schema_proposal sets the name and the description (purpose reads as the description)", () => {
    expect(applySchemaProposal(details, { proposed_changes: { name: "EGFR resistance", description: "new" } })).toEqual({
      details: { ...details, name: "EGFR resistance", description: "new" },
      tab: "semantic",
    });
    expect(applySchemaProposal(details, { proposed_changes: { purpose: "Track resistance" } }).details.description).toBe("Track resistance");
    expect(() => applySchemaProposal(details, { proposed_changes: { topics: ["a"] } })).toThrow(/changes topics/);
  });

  it("retrieval_proposal replaces the query and the trial search it names, keeping the rest", () => {
    const next = applyRetrievalProposal(details, { pubmed_query: "osimertinib AND resistance", trial_search: { intervention: "osimertinib", phase: ["PHASE3", "BOGUS"] } });
    expect(next.tab).toBe("retrieval");
    expect(next.details.pubmedQuery).toBe("osimertinib AND resistance");
    expect(next.details.trial).toEqual({ ...emptyTrialForm, intervention: "osimertinib", phase: ["PHASE3"] });
    expect(applyRetrievalProposal(details, { pubmed_query: "q" }).details.trial).toBe(details.trial);
    expect(() => applyRetrievalProposal(details, { reasoning: "nothing" })).toThrow(/neither/);
  });

  it("query_suggestion becomes the default PubMed query", () => {
    expect(applyQuerySuggestion(details, { query: " CRISPR " }).details.pubmedQuery).toBe("CRISPR");
    expect(() => applyQuerySuggestion(details, {})).toThrow(/no query/);
  });

  it("filter_suggestion narrows the default query with a PubMed clause", () => {
    expect(applyFilterSuggestion(details, { field: "year", operator: "gte", value: 2020 }).details.pubmedQuery).toBe("(EGFR[MeSH]) AND 2020:3000[dp]");
    expect(filterClause({ field: "year", operator: "lte", value: "2015" })).toBe("1800:2015[dp]");
    expect(filterClause({ field: "journal", operator: "equals", value: 'Lancet "Oncol"' })).toBe('"Lancet Oncol"[ta]');
    expect(filterClause({ field: "publication_type", operator: "equals", value: "Review" })).toBe('"Review"[pt]');
    expect(filterClause({ field: "mesh", operator: "contains", value: "Lung Neoplasms" })).toBe('"Lung Neoplasms"[MeSH Terms]');
    expect(() => filterClause({ field: "phase", operator: "equals", value: "3" })).toThrow(/cannot be filtered by "phase"/);
    expect(() => filterClause({ field: "year", operator: "gte", value: "recent" })).toThrow(/not a year/);
    expect(() => applyFilterSuggestion({ ...details, pubmedQuery: "" }, { field: "year", operator: "gte", value: 2020 })).toThrow(/no default PubMed query/);
  });
});
