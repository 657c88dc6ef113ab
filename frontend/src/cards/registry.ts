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
import { ProfileEditCard, ScreeningProposalCard, ScreeningReportCard } from "./ScreeningCards";
import { TrialDetailsCard } from "./TrialDetailsCard";
import { TrialSearchCard } from "./TrialSearchCard";
import { TrialSearchResultsCard } from "./TrialSearchResultsCard";
import type { PayloadTypeName, SuggestionTypeName } from "../api/types";
import type { CardProps, PayloadCardProps } from "./types";
import { ValidationResultsCard } from "./ValidationResultsCard";

export const cards: { readonly [K in PayloadTypeName]: ComponentType<PayloadCardProps<K>> } = Object.freeze({
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
  patient_profile_edit: ProfileEditCard,
  screening_proposal: ScreeningProposalCard,
  screening_report: ScreeningReportCard,
});

/** Payload types the user accepts or dismisses (the others are informational): exactly the backend's
 * `suggestion=True` types, or this does not compile. */
const suggestions: Record<SuggestionTypeName, true> = {
  pubmed_query_suggestion: true,
  trial_search_suggestion: true,
  ai_column_suggestion: true,
  chat_instructions_suggestion: true,
  query_suggestion: true,
  filter_suggestion: true,
  schema_proposal: true,
  retrieval_proposal: true,
  chart: true,
  patient_profile_edit: true,
  screening_proposal: true,
};
export const SUGGESTION_TYPES: ReadonlySet<string> = new Set(Object.keys(suggestions));

export function cardFor(type: string): ComponentType<CardProps> {
  return Object.prototype.hasOwnProperty.call(cards, type)
    ? (cards[type as PayloadTypeName] as ComponentType<CardProps>)
    : FallbackCard;
}
