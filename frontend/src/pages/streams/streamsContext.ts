/**
 * The research stream editor as the chat sees it (page `edit_research_stream`, app `kh`), the sandbox
 * context that tries a draft of the instructions on another page, and the stream settings form.
 */
import type { StreamSettings } from "../../api/types";
import { emptyTrialForm, formFromSuggestion, isFormEmpty, type TrialForm } from "../trialscout/trialscoutContext";

/** The editor's tabs; `semantic` and `retrieval` are the registry's tab names for this page. */
export type EditorTab = "semantic" | "retrieval" | "instructions";

export const EDITOR_TABS: ReadonlyArray<{ id: EditorTab; label: string }> = [
  { id: "semantic", label: "Definition" },
  { id: "retrieval", label: "Retrieval defaults" },
  { id: "instructions", label: "Chat instructions" },
];

/** Pages a prompt can be previewed (or a draft tried) on, with the editor's registered tabs and subtabs. */
export const PREVIEW_PAGES: ReadonlyArray<{ page: string; label: string; tabs: Readonly<Record<string, readonly string[]>> }> = [
  { page: "tablizer", label: "Tablizer", tabs: {} },
  { page: "trialscout", label: "TrialScout", tabs: {} },
  { page: "edit_research_stream", label: "Research stream editor", tabs: { semantic: [], retrieval: [], execute: ["workbench"] } },
];

export interface DetailsForm {
  name: string;
  description: string;
  pubmedQuery: string;
  trial: TrialForm;
}

export function detailsFromStream(s: { name: string; description: string | null; settings: StreamSettings | null }): DetailsForm {
  const settings = s.settings ?? {};
  return {
    name: s.name,
    description: s.description ?? "",
    pubmedQuery: settings.pubmed_query ?? "",
    trial: settings.trial_search ? formFromSuggestion(settings.trial_search) : emptyTrialForm,
  };
}

/** The trial form as stored settings: only what is set (the server drops defaults too). */
export function trialSettings(form: TrialForm): Record<string, unknown> | undefined {
  if (isFormEmpty(form)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of ["condition", "intervention", "sponsor", "location", "eligibility_keywords"] as const) {
    if (form[key].trim()) out[key] = form[key].trim();
  }
  if (form.phase.length) out.phase = form.phase;
  if (form.status.length) out.status = form.status;
  if (form.sex !== "ALL") out.sex = form.sex;
  if (form.study_type) out.study_type = form.study_type;
  if (form.min_age !== "") out.min_age = Number(form.min_age);
  if (form.max_age !== "") out.max_age = Number(form.max_age);
  return out;
}

/** The settings object a save sends (it replaces the stored one). */
export function settingsFromDetails(form: DetailsForm): StreamSettings {
  const settings: StreamSettings = {};
  if (form.pubmedQuery.trim()) settings.pubmed_query = form.pubmedQuery.trim();
  const trial = trialSettings(form.trial);
  if (trial) settings.trial_search = trial;
  return settings;
}

export interface EditorContextState {
  tab: EditorTab;
  streamId: number | null;
  details: DetailsForm;
  /** The instructions editor's text, saved or not. */
  draft: string;
}

/** The spec's editor context: what the admin sees, including the unsaved instructions draft. */
export function buildStreamEditorContext(s: EditorContextState): Record<string, unknown> {
  const settings = settingsFromDetails(s.details);
  const context: Record<string, unknown> = {
    current_page: "edit_research_stream",
    active_tab: s.tab,
    stream: { name: s.details.name || null },
    current_schema: { name: s.details.name, description: s.details.description },
    retrieval: Object.keys(settings).length ? settings : null,
    chat_instructions_draft: s.draft,
  };
  if (s.streamId != null) context.stream_id = s.streamId;
  return context;
}

/**
 * The sandbox: a turn on `target.page` inside the stream with `draft` in place of its saved instructions
 * (admins only; nothing is saved). On the editor page itself the editor's own context goes along.
 */
export function buildSandboxContext(
  target: { page: string; tab?: string; subtab?: string },
  streamId: number,
  draft: string,
  editor: Record<string, unknown>,
): Record<string, unknown> {
  const base: Record<string, unknown> = target.page === "edit_research_stream" ? { ...editor } : {};
  if (target.page === "edit_research_stream" && target.tab) base.active_tab = target.tab;
  if (target.page === "edit_research_stream" && target.subtab) base.active_subtab = target.subtab;
  return { ...base, current_page: target.page, stream_id: streamId, stream_draft_instructions: draft };
}
