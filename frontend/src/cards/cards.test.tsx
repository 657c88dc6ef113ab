import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { pageRegistry } from "../api/pageRegistry";
import type { Payload } from "../api/types";
import { AIColumnCard } from "./AIColumnCard";
import { ChatInstructionsCard } from "./ChatInstructionsCard";
import { FallbackCard } from "./FallbackCard";
import { FilterSuggestionCard } from "./FilterSuggestionCard";
import { PubMedQueryCard } from "./PubMedQueryCard";
import { PubMedSearchResultsCard } from "./PubMedSearchResultsCard";
import { QuerySuggestionCard } from "./QuerySuggestionCard";
import { cardFor, cards, SUGGESTION_TYPES } from "./registry";
import { RetrievalProposalCard } from "./RetrievalProposalCard";
import { SchemaProposalCard } from "./SchemaProposalCard";
import { TrialDetailsCard } from "./TrialDetailsCard";
import { TrialSearchCard } from "./TrialSearchCard";
import { TrialSearchResultsCard } from "./TrialSearchResultsCard";
import type { CardProps } from "./types";
import { ValidationResultsCard } from "./ValidationResultsCard";

/** A card the model proposed. */
const fromModel = (id: string, type: Payload["type"], data: Record<string, unknown>): Payload => ({ id, type, data, source: "llm" });

const pubmedQuery = fromModel("p1", "pubmed_query_suggestion", { query: '(EGFR[MeSH]) AND "drug resistance"', explanation: "EGFR resistance in lung cancer", date_start: "2020" });
const trialSearch = fromModel("p2", "trial_search_suggestion", {
  condition: "non-small cell lung cancer",
  intervention: "pembrolizumab",
  sponsor: "",
  phase: ["PHASE3", "PHASE2"],
  status: ["RECRUITING"],
  location: "Boston",
  sex: "FEMALE",
  min_age: 18,
  eligibility_keywords: "brain metastases",
  explanation: "Active immunotherapy trials",
});
const aiColumn = fromModel("p3", "ai_column_suggestion", { name: "Allows Brain Mets", criteria: "Does this trial allow brain metastases?", type: "boolean", explanation: "Filter to Yes" });

const chatInstructions = fromModel("p4", "chat_instructions_suggestion", { instructions: "Name the EGFR mutation.\n- Flag prior osimertinib.", explanation: "Adds the mutation rule" });

const querySuggestion = fromModel("p5", "query_suggestion", { query: "CRISPR[MeSH] AND delivery", explanation: "Delivery methods" });
const filterSuggestion = fromModel("p6", "filter_suggestion", { field: "publication_type", operator: "equals", value: "Review", explanation: "Reviews only" });
const schemaProposal = fromModel("p7", "schema_proposal", { proposed_changes: { name: "EGFR resistance", description: "Mechanisms of resistance" }, confidence: "high", reasoning: "Sharper" });
const retrievalProposal = fromModel("p8", "retrieval_proposal", { pubmed_query: "EGFR AND osimertinib", trial_search: { condition: "NSCLC", phase: ["PHASE3"] }, reasoning: "Both sources" });
const validationResults = fromModel("p9", "validation_results", { errors: ["No description"], warnings: [], suggestions: ["Add MeSH terms", "Name the mutation"] });

const suggestions: Array<[string, Payload, (props: CardProps) => React.JSX.Element]> = [
  ["PubMedQueryCard", pubmedQuery, PubMedQueryCard],
  ["TrialSearchCard", trialSearch, TrialSearchCard],
  ["AIColumnCard", aiColumn, AIColumnCard],
  ["ChatInstructionsCard", chatInstructions, ChatInstructionsCard],
  ["QuerySuggestionCard", querySuggestion, QuerySuggestionCard],
  ["FilterSuggestionCard", filterSuggestion, FilterSuggestionCard],
  ["SchemaProposalCard", schemaProposal, SchemaProposalCard],
  ["RetrievalProposalCard", retrievalProposal, RetrievalProposalCard],
];

describe("registry", () => {
  it("maps each payload type to its card and anything else to FallbackCard", () => {
    expect(cardFor("pubmed_query_suggestion")).toBe(PubMedQueryCard);
    expect(cardFor("trial_search_suggestion")).toBe(TrialSearchCard);
    expect(cardFor("ai_column_suggestion")).toBe(AIColumnCard);
    expect(cardFor("trial_details")).toBe(TrialDetailsCard);
    expect(cardFor("pubmed_search_results")).toBe(PubMedSearchResultsCard);
    expect(cardFor("trial_search_results")).toBe(TrialSearchResultsCard);
    expect(cardFor("chat_instructions_suggestion")).toBe(ChatInstructionsCard);
    expect(cardFor("something_new")).toBe(FallbackCard);
    expect(cardFor("toString")).toBe(FallbackCard);
    expect(Object.isFrozen(cards)).toBe(true);
    expect([...SUGGESTION_TYPES].sort()).toEqual([
      "ai_column_suggestion",
      "chart",
      "chat_instructions_suggestion",
      "filter_suggestion",
      "patient_profile_edit",
      "pubmed_query_suggestion",
      "query_suggestion",
      "retrieval_proposal",
      "schema_proposal",
      "screening_proposal",
      "trial_search_suggestion",
    ]);
  });

  it.each(Object.keys(pageRegistry.payload_types))("the backend's payload type %s has its own card", (type) => {
    expect(Object.prototype.hasOwnProperty.call(cards, type), `frontend/src/cards/registry.ts has no card for ${type}`).toBe(true);
    expect(cardFor(type)).not.toBe(FallbackCard);
  });

  it("every card the frontend registers is a payload type of the backend", () => {
    expect(Object.keys(cards).filter((t) => !(t in pageRegistry.payload_types))).toEqual([]);
  });

  it("a suggestion is offered with Accept: a marker's, or one of the screening tools' proposals; a tool result is not", () => {
    const toolProposals = ["patient_profile_edit", "screening_proposal"];
    for (const type of SUGGESTION_TYPES) {
      expect(pageRegistry.payload_types[type]?.source, type).toBe(toolProposals.includes(type) ? "tool" : "llm");
    }
    expect(SUGGESTION_TYPES).not.toContain("trial_details");
    expect(SUGGESTION_TYPES).not.toContain("screening_report");
  });
});

describe.each(suggestions)("%s Accept/Dismiss", (_name, payload, Card) => {
  it("Accept calls onAccept once and not onDismiss", async () => {
    const onAccept = vi.fn();
    const onDismiss = vi.fn();
    render(<Card payload={payload} onAccept={onAccept} onDismiss={onDismiss} />);
    const card = screen.getByTestId(`card-${payload.type}`);
    fireEvent.click(within(card).getByTestId("card-accept"));
    await waitFor(() => expect(onAccept).toHaveBeenCalledTimes(1));
    expect(onDismiss).not.toHaveBeenCalled();
  });

  it("after a keyboard Accept, focus moves to the decision instead of dropping to the page", async () => {
    const { rerender } = render(<Card payload={payload} onAccept={vi.fn()} onDismiss={vi.fn()} />);
    const accept = screen.getByTestId("card-accept");
    accept.focus();
    fireEvent.click(accept); // Enter or Space on a focused button
    await waitFor(() => expect((screen.getByTestId("card-dismiss") as HTMLButtonElement).disabled).toBe(false));
    rerender(<Card payload={payload} decision="accepted" onAccept={vi.fn()} onDismiss={vi.fn()} />);
    expect(document.activeElement).toBe(screen.getByTestId("card-decision"));
  });

  it("Dismiss calls onDismiss and not onAccept", async () => {
    const onAccept = vi.fn();
    const onDismiss = vi.fn();
    render(<Card payload={payload} onAccept={onAccept} onDismiss={onDismiss} />);
    fireEvent.click(screen.getByTestId("card-dismiss"));
    await waitFor(() => expect(onDismiss).toHaveBeenCalledTimes(1));
    expect(onAccept).not.toHaveBeenCalled();
  });

  it("shows what was decided, without buttons, once decided", () => {
    const { rerender } = render(<Card payload={payload} decision="accepted" onAccept={vi.fn()} onDismiss={vi.fn()} />);
    expect(screen.getByTestId("card-decision").textContent).toMatch(/Accepted/);
    expect(screen.queryByTestId("card-accept")).toBeNull();
    rerender(<Card payload={payload} decision="dismissed" onAccept={vi.fn()} onDismiss={vi.fn()} />);
    expect(screen.getByTestId("card-decision").textContent).toMatch(/Dismissed/);
    expect(screen.queryByTestId("card-dismiss")).toBeNull();
  });

  it("disables Accept when the page cannot apply the suggestion", () => {
    render(<Card payload={payload} onDismiss={vi.fn()} />);
    expect((screen.getByTestId("card-accept") as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId("card-dismiss") as HTMLButtonElement).disabled).toBe(false);
  });

  it("disables both buttons while Accept runs and shows a failure", async () => {
    let reject!: (e: Error) => void;
    const onAccept = vi.fn(() => new Promise<void>((_, r) => (reject = r)));
    render(<Card payload={payload} onAccept={onAccept} onDismiss={vi.fn()} />);
    fireEvent.click(screen.getByTestId("card-accept"));
    await waitFor(() => expect((screen.getByTestId("card-dismiss") as HTMLButtonElement).disabled).toBe(true));
    fireEvent.click(screen.getByTestId("card-accept"));
    expect(onAccept).toHaveBeenCalledTimes(1);
    reject(new Error("Search failed"));
    expect((await screen.findByRole("alert")).textContent).toBe("Search failed");
    expect((screen.getByTestId("card-accept") as HTMLButtonElement).disabled).toBe(false);
  });
});

describe("card contents", () => {
  it("FilterSuggestionCard reads its field, operator and value as a rule", () => {
    render(<FilterSuggestionCard payload={{ ...filterSuggestion, data: { field: "year", operator: "gte", value: 2020 } }} />);
    expect(screen.getByTestId("card-filter").textContent).toBe("year is at least 2020");
  });

  it("SchemaProposalCard lists each proposed change, the confidence and the reasoning", () => {
    render(<SchemaProposalCard payload={schemaProposal} />);
    expect(screen.getByTestId("card-changes").textContent).toBe("nameEGFR resistancedescriptionMechanisms of resistance");
    expect(screen.getByText("Confidence: high")).toBeTruthy();
    expect(screen.getByText("Sharper")).toBeTruthy();
  });

  it("RetrievalProposalCard shows the PubMed query and the trial search's set fields", () => {
    render(<RetrievalProposalCard payload={retrievalProposal} />);
    expect(screen.getByTestId("card-query").textContent).toBe("EGFR AND osimertinib");
    expect(screen.getByTestId("card-trial-search").textContent).toBe("conditionNSCLCphasePHASE3");
  });

  it("ValidationResultsCard groups errors and suggestions, has nothing to accept, and says when all is well", () => {
    const { rerender } = render(<ValidationResultsCard payload={validationResults} onAccept={vi.fn()} />);
    expect(screen.getByTestId("card-validation-errors").textContent).toContain("No description");
    expect(screen.queryByTestId("card-validation-warnings")).toBeNull();
    expect(within(screen.getByTestId("card-validation-suggestions")).getAllByRole("listitem")).toHaveLength(2);
    expect(screen.queryByTestId("card-accept")).toBeNull();
    rerender(<ValidationResultsCard payload={{ ...validationResults, data: {} }} />);
    expect(screen.getByTestId("card-validation-clean")).toBeTruthy();
  });

  it("ChatInstructionsCard shows the proposed text with its line breaks, and the explanation", () => {
    render(<ChatInstructionsCard payload={chatInstructions} />);
    expect(screen.getByTestId("card-instructions").textContent).toBe("Name the EGFR mutation.\n- Flag prior osimertinib.");
    expect(screen.getByText("Adds the mutation rule")).toBeTruthy();
  });

  it("PubMedQueryCard shows the query in a code block and the explanation", () => {
    render(<PubMedQueryCard payload={pubmedQuery} />);
    const code = screen.getByTestId("card-query");
    expect(code.tagName).toBe("CODE");
    expect(code.closest("pre")).not.toBeNull();
    expect(code.textContent).toBe('(EGFR[MeSH]) AND "drug resistance"');
    expect(screen.getByText("EGFR resistance in lung cancer")).toBeTruthy();
    expect(screen.getByTestId("card-dates").textContent).toBe("Published 2020 – any time");
  });

  it("TrialSearchCard shows each non-empty field with readable labels", () => {
    render(<TrialSearchCard payload={trialSearch} />);
    expect(screen.getByTestId("card-field-condition").textContent).toContain("non-small cell lung cancer");
    expect(screen.getByTestId("card-field-phase").textContent).toContain("Phase 3, Phase 2");
    expect(screen.getByTestId("card-field-status").textContent).toContain("Recruiting");
    expect(screen.getByTestId("card-field-eligibility_keywords").textContent).toContain("brain metastases");
    expect(screen.getByTestId("card-field-min_age").textContent).toContain("18 years");
    expect(screen.queryByTestId("card-field-sponsor")).toBeNull();
    expect(screen.queryByTestId("card-field-max_age")).toBeNull();
    expect(screen.getByText("Active immunotherapy trials")).toBeTruthy();
  });

  it("AIColumnCard shows Yes/No for boolean and Text for text columns", () => {
    const { rerender } = render(<AIColumnCard payload={aiColumn} />);
    expect(screen.getByText("Yes/No")).toBeTruthy();
    expect(screen.getByText("Does this trial allow brain metastases?")).toBeTruthy();
    rerender(<AIColumnCard payload={{ ...aiColumn, data: { ...aiColumn.data, type: "text" } }} />);
    expect(screen.getByText("Text")).toBeTruthy();
  });

  it("TrialDetailsCard renders a trial and links its NCT id into the page", () => {
    const onEntity = vi.fn();
    render(
      <TrialDetailsCard
        onEntity={onEntity}
        payload={{
          id: "t",
          type: "trial_details",
          data: {
            nct_id: "NCT04613596",
            title: "Adagrasib in NSCLC",
            phase: "PHASE3",
            status: "RECRUITING",
            sponsor: { name: "Mirati" },
            enrollment: 450,
            conditions: ["NSCLC"],
            interventions: [{ type: "DRUG", name: "Adagrasib" }],
            eligibility_criteria: "Inclusion: KRAS G12C",
            primary_outcomes: [{ measure: "PFS", time_frame: "2 years" }],
            locations: [{ facility: "MGH", city: "Boston", country: "United States" }],
          },
        }}
      />,
    );
    expect(screen.queryByTestId("card-accept")).toBeNull();
    expect(screen.getByText("Mirati")).toBeTruthy();
    expect(screen.getByText("Adagrasib, DRUG")).toBeTruthy();
    expect(screen.getByText("PFS, 2 years")).toBeTruthy();
    fireEvent.click(screen.getByTestId("entity-link"));
    expect(onEntity).toHaveBeenCalledWith("nct", "NCT04613596");
  });

  it("PubMedSearchResultsCard and TrialSearchResultsCard list results with links", () => {
    const onEntity = vi.fn();
    render(
      <>
        <PubMedSearchResultsCard
          onEntity={onEntity}
          payload={{ id: "a", type: "pubmed_search_results", data: { query: "egfr", total_count: 1234, articles: [{ pmid: "111", title: "A", journal: "J", year: 2020 }] } }}
        />
        <TrialSearchResultsCard
          onEntity={onEntity}
          payload={{ id: "b", type: "trial_search_results", data: { total_count: 2, trials: [{ nct_id: "NCT00000001", title: "T", phase: "PHASE1", status: "COMPLETED", enrollment: 10, sponsor: "S" }] } }}
        />
      </>,
    );
    expect(screen.getByText(/1,234 articles/)).toBeTruthy();
    expect(screen.getByText(/Phase 1 · Completed · n=10 · S/)).toBeTruthy();
    const links = screen.getAllByTestId("entity-link");
    fireEvent.click(links[0]);
    fireEvent.click(links[1]);
    expect(onEntity.mock.calls).toEqual([
      ["pmid", "111"],
      ["nct", "NCT00000001"],
    ]);
  });

  it("FallbackCard shows an unknown payload's data without failing", () => {
    render(<FallbackCard payload={{ id: "z", type: "brand_new_type", data: { a: 1 } }} />);
    expect(screen.getByTestId("card-brand_new_type").textContent).toContain('"a": 1');
  });
});
