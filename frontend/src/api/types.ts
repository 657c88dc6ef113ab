/**
 * Wire types for the HTTP API and the SSE contract (ARCHITECTURE.md §4, §5).
 *
 * Everything that arrives from the server is treated as untrusted: converters
 * below tolerate missing fields and never throw on unknown ones.
 */

/** The chat's apps: a conversation belongs to one. `kh` is the research stream editor. */
export type App = "tablizer" | "trialscout" | "kh";

export interface User {
  id: number;
  username: string;
  role: string;
}

export interface Health {
  status?: string;
  database?: unknown;
  llm?: { mode?: string; model?: string; label?: string };
  sources?: { mode?: string };
}

// ---- chat -------------------------------------------------------------------

export type Decision = "accepted" | "dismissed";

export interface Payload {
  id: string;
  type: string;
  data: Record<string, unknown>;
  source?: string;
  decision?: Decision | null;
}

export interface SuggestedValue {
  label: string;
  value: string;
}

export interface SuggestedAction {
  label: string;
  action: string;
  handler: "client" | "server";
}

export interface ToolHistoryEntry {
  tool_name: string;
  input?: unknown;
  output?: string;
}

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  context_window?: number;
}

export type MessageStatus = "complete" | "interrupted" | "failed";

export interface ChatResponsePayload {
  message: string;
  payloads?: Payload[];
  suggested_values?: SuggestedValue[];
  suggested_actions?: SuggestedAction[];
  tool_history?: ToolHistoryEntry[];
  conversation_id?: number;
  message_id?: number;
  status?: MessageStatus;
  usage?: Usage;
}

/** The SSE events of one turn, discriminated by `type`. */
export type ChatEvent =
  | {
      type: "conversation";
      conversation_id: number;
      turn_id?: string | number;
      user_message_id?: number;
      /** Present when the turn runs inside a research stream. */
      stream?: StreamInfo;
    }
  | { type: "status"; message: string; notice?: boolean }
  | { type: "text_delta"; text: string }
  | { type: "tool_start"; tool: string; input?: unknown; index: number }
  | {
      type: "tool_progress";
      tool: string;
      index: number;
      stage?: string;
      message?: string;
      progress?: number | null;
    }
  | { type: "tool_complete"; tool: string; index: number; is_error?: boolean; payload?: unknown }
  | ({ type: "usage" } & Usage)
  | { type: "complete"; payload: ChatResponsePayload }
  | { type: "error"; message: string; code?: string; retryable?: boolean }
  /** The server is shutting down mid-turn (no id): resume after `retry_ms`; the answer goes on. */
  | { type: "reconnect"; message: string; retry_ms: number };

export type ChatEventType = ChatEvent["type"];

// ---- AI columns (POST /api/ai-columns/evaluate, an SSE stream) ----------------

export type AIColumnType = "boolean" | "text";

export interface AIColumnRequest {
  column: { name: string; criteria: string; type: AIColumnType };
  app: "trialscout" | "tablizer";
  ids: string[];
  items?: Array<Record<string, unknown>>;
}

/** One AI column run's events: `progress` first and after every row, then `complete` or a fatal `error`. */
export type AIColumnEvent =
  | { type: "progress"; done: number; total: number }
  | {
      type: "row";
      id: string;
      /** boolean: MET | NOT_MET | UNKNOWN; text: the short answer, or null. */
      value: string | null;
      display: string;
      reasoning: string;
      evidence: string[];
      cached: boolean;
      model: string;
      parse_error?: string | null;
    }
  | { type: "row_error"; id: string; message: string; retryable: boolean }
  | {
      type: "complete";
      done: number;
      total: number;
      counts: { yes: number; no: number; unknown: number; answered: number; error: number };
      cached: number;
      model: string;
    }
  | { type: "error"; message: string; code: string; retryable: boolean };

/** The research stream whose instructions shape a turn (the `conversation` event, the prompt preview). */
export interface StreamInfo {
  id: number;
  name: string;
  /** The saved instruction version in effect; null for a draft. */
  version_id: number | null;
  /** An admin's unsaved draft is in effect for this turn (sandbox). */
  draft: boolean;
  /** false when the stream has no instructions to add. */
  applied: boolean;
}

export interface ChatRequest {
  message: string;
  context: Record<string, unknown>;
  conversation_id?: number;
  app: App;
}

export interface ConversationSummary {
  id: number;
  app?: string;
  title?: string | null;
  created_at?: string;
  updated_at?: string;
}

export interface StoredMessage {
  id: number;
  role: string;
  content: string;
  context?: Record<string, unknown> | null;
  extras?: {
    payloads?: Payload[];
    suggested_values?: SuggestedValue[];
    suggested_actions?: SuggestedAction[];
    tool_history?: ToolHistoryEntry[];
    usage?: Usage;
    [key: string]: unknown;
  } | null;
  status?: string | null;
  created_at?: string;
}

export interface ConversationDetail extends ConversationSummary {
  messages: StoredMessage[];
}

// ---- Tablizer ----------------------------------------------------------------

export interface Article {
  pmid: string;
  title: string;
  journal?: string;
  year?: number | string | null;
  authors?: string[] | string;
  abstract?: string;
  mesh_terms?: string[];
  doi?: string | null;
  [key: string]: unknown;
}

export interface ArticleSearchResponse {
  articles: Article[];
  total_count: number;
  page?: number;
  page_size?: number;
  query_translation?: string | null;
}

// ---- TrialScout --------------------------------------------------------------

export interface TrialSummary {
  nct_id: string;
  title: string;
  phase?: string | string[] | null;
  status?: string | null;
  enrollment?: number | null;
  sponsor?: string | null;
  conditions?: string[];
  interventions?: unknown[];
  start_date?: string | null;
  completion_date?: string | null;
  locations_count?: number | null;
  [key: string]: unknown;
}

export interface TrialSearchResponse {
  trials: TrialSummary[];
  total_count: number | null;
  next_page_token?: string | null;
}

/** A trial detail object; only nct_id is certain, the rest is rendered if present. */
export interface TrialDetail extends TrialSummary {
  brief_summary?: string;
  eligibility_criteria?: string;
  primary_outcomes?: unknown[];
  secondary_outcomes?: unknown[];
  locations?: unknown[];
  sex?: string;
  min_age?: string;
  max_age?: string;
}

// ---- research streams ----------------------------------------------------------

/** A stream's defaults for the pages; `trial_search` has the fields of GET /api/trials/search. */
export interface StreamSettings {
  pubmed_query?: string;
  trial_search?: Record<string, unknown>;
}

export interface Stream {
  id: number;
  name: string;
  description: string | null;
  chat_instructions: string | null;
  settings: StreamSettings;
  archived: boolean;
  created_at: string;
  updated_at: string;
  updated_by: string | null;
  current_version_id: number | null;
  version_count: number;
}

export interface StreamCreate {
  name: string;
  description?: string | null;
  chat_instructions?: string | null;
  note?: string | null;
  settings?: StreamSettings | null;
}

export interface StreamUpdate {
  name?: string;
  description?: string | null;
  chat_instructions?: string | null;
  note?: string | null;
  settings?: StreamSettings | null;
  archived?: boolean;
  expected_version_id?: number;
}

export interface InstructionVersion {
  id: number;
  stream_id: number;
  text: string | null;
  note: string | null;
  created_by: string | null;
  created_at: string;
  current: boolean;
}

export interface DiffLine {
  op: "context" | "add" | "remove";
  text: string;
  old_line: number | null;
  new_line: number | null;
}

export interface InstructionDiff {
  from_version: InstructionVersion | null;
  to_version: InstructionVersion | null;
  unified: string;
  lines: DiffLine[];
  added: number;
  removed: number;
}

export interface PromptPreview {
  system_prompt: string;
  system_blocks?: unknown[];
  notices: string[];
  stream: StreamInfo | null;
  page: string | null;
  tools: string[];
  payloads: string[];
}
