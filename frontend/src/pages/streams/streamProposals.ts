/**
 * What Accept does with the stream editor's cards: each turns a card's data into the editor's next form
 * (unsaved: the admin reviews and saves), or throws a message the card shows when it cannot apply.
 */
import { dataText, type ActionData } from "../../chat/clientActions";
import { formFromSuggestion, isFormEmpty } from "../trialscout/trialscoutContext";
import type { DetailsForm, EditorTab } from "./streamsContext";

export interface Applied {
  details: DetailsForm;
  /** The tab that shows what changed. */
  tab: EditorTab;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** `schema_proposal`: the definition's fields are the name and the description (`purpose` reads as the description). */
export function applySchemaProposal(details: DetailsForm, data: ActionData): Applied {
  const changes = isRecord(data.proposed_changes) ? data.proposed_changes : {};
  const name = dataText(changes, "name");
  const description = dataText(changes, "description") || dataText(changes, "purpose");
  if (!name && !description) {
    const keys = Object.keys(changes).join(", ") || "nothing";
    throw new Error(`The definition has a name and a description; this proposal changes ${keys}.`);
  }
  return { details: { ...details, ...(name ? { name } : {}), ...(description ? { description } : {}) }, tab: "semantic" };
}

/** `retrieval_proposal`: the default PubMed query and/or trial search it names replace the editor's. */
export function applyRetrievalProposal(details: DetailsForm, data: ActionData): Applied {
  const query = dataText(data, "pubmed_query");
  const trial = isRecord(data.trial_search) ? formFromSuggestion(data.trial_search) : null;
  const useTrial = trial !== null && !isFormEmpty(trial);
  if (!query && !useTrial) throw new Error("The proposal has neither a PubMed query nor a trial search.");
  return {
    details: { ...details, ...(query ? { pubmedQuery: query } : {}), ...(useTrial ? { trial } : {}) },
    tab: "retrieval",
  };
}

/** `query_suggestion`: becomes the stream's default PubMed query. */
export function applyQuerySuggestion(details: DetailsForm, data: ActionData): Applied {
  const query = dataText(data, "query");
  if (!query) throw new Error("The suggestion has no query.");
  return { details: { ...details, pubmedQuery: query }, tab: "retrieval" };
}

const TAGS: Readonly<Record<string, string>> = { journal: "ta", publication_type: "pt", mesh: "MeSH Terms" };

/** The PubMed clause a filter suggestion stands for (year ranges as publication dates). */
export function filterClause(data: ActionData): string {
  const field = dataText(data, "field").toLowerCase();
  const value = dataText(data, "value").replace(/"/g, "");
  const operator = dataText(data, "operator");
  if (!value) throw new Error("The filter has no value.");
  if (field === "year") {
    if (!/^\d{4}$/.test(value)) throw new Error(`"${value}" is not a year.`);
    return operator === "gte" ? `${value}:3000[dp]` : operator === "lte" ? `1800:${value}[dp]` : `${value}[dp]`;
  }
  if (!Object.prototype.hasOwnProperty.call(TAGS, field)) throw new Error(`The stream's query cannot be filtered by "${field}".`);
  return `"${value}"[${TAGS[field]}]`;
}

/** `filter_suggestion`: narrows the stream's default PubMed query with the filter's clause. */
export function applyFilterSuggestion(details: DetailsForm, data: ActionData): Applied {
  const query = details.pubmedQuery.trim();
  if (!query) throw new Error("The stream has no default PubMed query to narrow.");
  return { details: { ...details, pubmedQuery: `(${query}) AND ${filterClause(data)}` }, tab: "retrieval" };
}
