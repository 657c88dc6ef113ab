/**
 * Payload type → card. A static map, looked up as `cards[type] ?? FallbackCard`;
 * a card is never registered as a side effect of rendering.
 */
import type { ComponentType } from "react";
import { AIColumnCard } from "./AIColumnCard";
import { ChartCard } from "./ChartCard";
import { ChatInstructionsCard } from "./ChatInstructionsCard";
import { FallbackCard } from "./FallbackCard";
import { FilterSuggestionCard } from "./FilterSuggestionCard";
import { PubMedQueryCard } from "./PubMedQueryCard";
import { PubMedSearchResultsCard } from "./PubMedSearchResultsCard";
import { QuerySuggestionCard } from "./QuerySuggestionCard";
import { RetrievalProposalCard } from "./RetrievalProposalCard";
import { SchemaProposalCard } from "./SchemaProposalCard";
import { TrialDetailsCard } from "./TrialDetailsCard";
import { TrialSearchCard } from "./TrialSearchCard";
import { TrialSearchResultsCard } from "./TrialSearchResultsCard";
import type { CardProps } from "./types";
import { ValidationResultsCard } from "./ValidationResultsCard";

export const cards: Readonly<Record<string, ComponentType<CardProps>>> = Object.freeze({
  pubmed_query_suggestion: PubMedQueryCard,
  trial_search_suggestion: TrialSearchCard,
  ai_column_suggestion: AIColumnCard,
  trial_details: TrialDetailsCard,
  pubmed_search_results: PubMedSearchResultsCard,
  trial_search_results: TrialSearchResultsCard,
  chat_instructions_suggestion: ChatInstructionsCard,
  query_suggestion: QuerySuggestionCard,
  filter_suggestion: FilterSuggestionCard,
  schema_proposal: SchemaProposalCard,
  validation_results: ValidationResultsCard,
  retrieval_proposal: RetrievalProposalCard,
  chart: ChartCard,
});

/** Payload types the user accepts or dismisses (the others are informational). */
export const SUGGESTION_TYPES: ReadonlySet<string> = new Set([
  "pubmed_query_suggestion",
  "trial_search_suggestion",
  "ai_column_suggestion",
  "chat_instructions_suggestion",
  "query_suggestion",
  "filter_suggestion",
  "schema_proposal",
  "retrieval_proposal",
  "chart",
]);

export function cardFor(type: string): ComponentType<CardProps> {
  return Object.prototype.hasOwnProperty.call(cards, type) ? cards[type] : FallbackCard;
}
