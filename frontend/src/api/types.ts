/**
 * Wire types for the HTTP API and the SSE contract (ARCHITECTURE.md §4, §5).
 *
 * They are generated: the backend's pydantic models → `openapi.json` (`python -m backend schema`) →
 * `schema.d.ts` (`npm run gen:types`, openapi-typescript); `npm test` fails when either is stale. This
 * module only names them for the app (and adds the odd client-side refinement).
 *
 * Everything that arrives from the server is still treated as untrusted: the SSE decoder and the chat
 * reducer tolerate missing fields and never throw on unknown ones.
 */
import type { components, paths } from "./schema";

type Schemas = components["schemas"];
type EventStream<P extends keyof paths> = paths[P] extends {
  post: { responses: { 200: { content: { "text/event-stream": infer E } } } };
}
  ? E
  : never;

/** The chat's apps: a conversation belongs to one. `kh` is the research stream editor. */
export type App = NonNullable<Schemas["ChatRequest"]["app"]>;

// ---- chat -------------------------------------------------------------------

export type Decision = Schemas["DecisionCreate"]["decision"];
export type Card = Schemas["Card"];
/** A card as the page renders it: the reducer makes `data` an object (`{}` when the server sent none). */
export type Payload = Omit<Card, "data"> & { data: Record<string, unknown> };
/** Every payload type's name, and those the user accepts or dismisses (from the backend's declarations). */
export type PayloadTypeName = Schemas["PayloadTypeName"];
export type SuggestionTypeName = Schemas["SuggestionTypeName"];
/** The `data` of a payload type: the fields of its model. */
export type PayloadData<K extends PayloadTypeName> = Extract<Schemas["AnyPayload"], { type: K }>["data"];
export type SuggestedValue = Schemas["SuggestedValue"];
export type SuggestedAction = Schemas["SuggestedAction"];
export type ToolHistoryEntry = Schemas["ToolCall"];
export type Usage = Schemas["Usage"];
/** How full the context window is: the last request's input (`context_update`), never a sum over calls. */
export type ContextUsage = Schemas["ContextUsage"];
/** A conversation's model settings (`config_update` → `config_ack`). */
export type ConversationConfig = Schemas["ConversationConfig"];
export type ConfigUpdate = Schemas["ConfigUpdate"];
export type ConfigAck = Schemas["ConfigAck"];
export type ChatModels = Schemas["ChatModels"];
export type MessageStatus = Schemas["TurnResult"]["status"];
/** The `complete` event's payload (ARCHITECTURE.md: ChatResponsePayload). */
export type ChatResponsePayload = Schemas["TurnResult"];
/** The research stream whose instructions shape a turn (the `conversation` event, the prompt preview). */
export type StreamInfo = Schemas["StreamRef"];

/** The SSE events of one turn, discriminated by `type`. */
export type ChatEvent = EventStream<"/api/chat/stream">;
export type ChatEventType = ChatEvent["type"];
export type ChatRequest = Schemas["ChatRequest"];

export type ConversationSummary = Schemas["ConversationRead"];
export type StoredMessage = Schemas["MessageRead"];
export type ConversationDetail = Schemas["ConversationDetail"];
/** A fork on the active path: the message where earlier versions branch off (regenerate, edit). */
export type MessageVersions = Schemas["VersionsRead"];

// ---- AI columns (POST /api/ai-columns/evaluate, an SSE stream) ----------------

export type AIColumnType = Schemas["AiColumn"]["type"];
export type AIColumnRequest = Schemas["EvaluateRequest"];
/** One AI column run's events: `progress` first and after every row, then `complete` or a fatal `error`. */
export type AIColumnEvent = EventStream<"/api/ai-columns/evaluate">;

// ---- exports and reports ---------------------------------------------------------

export type TableExportRequest = Schemas["TableRequest"];
export type ReportRequest = Schemas["ReportRequest"];
export type ReportChart = Schemas["ReportChart"];
export type ReportInfo = Schemas["ReportRead"];
/** A report's build: `report_progress` steps, then `report_ready` (or `error`). */
export type ReportEvent = EventStream<"/api/reports">;

// ---- Tablizer and TrialScout ---------------------------------------------------

export type Article = Schemas["Article"];
export type ArticleSearchResponse = Schemas["ArticleSearchPage"];
export type TrialSummary = Schemas["TrialSummary"];
export type TrialSearchResponse = Schemas["TrialSearchPage"];
export type TrialDetail = Schemas["TrialDetail"];

// ---- statistics (POST /api/stats/trials | /api/stats/articles) ----------------------

export type TrialStatsRequest = Schemas["TrialStatsRequest"];
export type ArticleStatsRequest = Schemas["ArticleStatsRequest"];
export type StatsResponse = Schemas["StatsResponse"];
export type FacetStats = Schemas["FacetStats"];

// ---- research streams ----------------------------------------------------------

/** A stream's defaults for the pages; `trial_search` has the fields of GET /api/trials/search. */
export type StreamSettings = Schemas["StreamSettings"];
/** `settings` is typed as a dict on the wire; the server only stores what `StreamSettings` validated. */
export type Stream = Omit<Schemas["StreamRead"], "settings"> & { settings: StreamSettings };
export type StreamCreate = Schemas["StreamCreate"];
export type StreamUpdate = Schemas["StreamUpdate"];
export type InstructionVersion = Schemas["VersionRead"];
export type DiffLine = Schemas["DiffLine"];
export type InstructionDiff = Schemas["DiffRead"];

// ---- the shell ---------------------------------------------------------------------

export type User = Schemas["UserRead"];
/** `GET /api/auth/session`: who is signed in, or `{user: null}`. */
export type Session = Schemas["SessionRead"];
export type Health = Schemas["HealthRead"];
/** Where the pages' data comes from (GET /api/sources): offline, the sample's size and record dates. */
export type SourcesInfo = Schemas["SourcesRead"];
export type PromptPreview = Schemas["PromptPreview"];

// Admin usage (backend/observability/usage.py)
export type UsageReport = Schemas["UsageReport"];
export type UsageRow = Schemas["UsageRow"];
export type UsageGroup = Schemas["UsageGroup"];
