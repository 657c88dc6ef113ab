/**
 * The HTTP client: one `request` function, typed endpoint helpers, and the
 * chat stream POST. Errors are `ApiError`s whose `message` is the server's
 * `detail` made readable; a 401 calls the handler the app shell installed.
 */
import type { EventSourceMessage } from "eventsource-parser";
import { readChatEvents, readEventStream, toAIColumnEvent, toReportEvent } from "./sse";
import type {
  AIColumnEvent,
  AIColumnRequest,
  Article,
  ArticleSearchResponse,
  ArticleStatsRequest,
  ChatEvent,
  ChatModels,
  ChatRequest,
  ConfigAck,
  ConfigUpdate,
  ConversationConfig,
  ConversationDetail,
  ConversationSummary,
  Decision,
  Health,
  InstructionDiff,
  InstructionVersion,
  PromptPreview,
  ReportEvent,
  ReportInfo,
  ReportRequest,
  Session,
  SourcesInfo,
  StatsResponse,
  Stream,
  StreamCreate,
  StreamUpdate,
  TableExportRequest,
  TrialDetail,
  TrialSearchResponse,
  TrialStatsRequest,
  UsageReport,
  User,
} from "./types";

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryable: boolean;

  constructor(message: string, status: number, code = "http_error", retryable?: boolean) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.retryable = retryable ?? (status === 0 || status === 429 || status >= 500);
  }
}

let onUnauthorized: (() => void) | null = null;

/** The shell registers what a 401 means (go to the login page). */
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  onUnauthorized = handler;
}

/** Turn a FastAPI/AppError `detail` (string, list of 422 items, object) into one readable line. */
export function formatDetail(detail: unknown): string {
  if (detail == null) return "";
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((item) => {
        if (item && typeof item === "object" && "msg" in item) {
          const loc = Array.isArray((item as { loc?: unknown }).loc)
            ? ((item as { loc: unknown[] }).loc.filter((p) => p !== "body" && p !== "query").join("."))
            : "";
          const msg = String((item as { msg: unknown }).msg);
          return loc ? `${loc}: ${msg}` : msg;
        }
        return formatDetail(item);
      })
      .filter(Boolean)
      .join("; ");
  }
  if (typeof detail === "object") {
    const d = detail as Record<string, unknown>;
    if (typeof d.message === "string") return d.message;
    return JSON.stringify(detail);
  }
  return String(detail);
}

async function errorFrom(response: Response): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`.trim();
  let code = "http_error";
  try {
    const body: unknown = await response.json();
    if (body && typeof body === "object") {
      const b = body as { error?: unknown; detail?: unknown };
      const detail = formatDetail(b.detail);
      if (detail) message = detail;
      else if (typeof b.error === "string") message = b.error;
      if (typeof b.error === "string") code = b.error;
    }
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(message || "Request failed", response.status, code);
}

interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
  /** false for calls where a 401 is an answer, not a lost session (login, me). */
  redirectOn401?: boolean;
  /** Extra request headers (`Idempotency-Key`, `Last-Event-ID`, `Accept`). */
  headers?: Record<string, string>;
  /** The request outlives the page (a save flushed as the tab closes); bodies up to 64 KB. */
  keepalive?: boolean;
}

async function send(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: {
        Accept: "application/json",
        ...(opts.body === undefined ? {} : { "Content-Type": "application/json" }),
        ...opts.headers,
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
      keepalive: opts.keepalive,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError("Could not reach the server. Check your connection.", 0, "network_error", true);
  }
  if (!response.ok) {
    if (response.status === 401 && opts.redirectOn401 !== false) onUnauthorized?.();
    throw await errorFrom(response);
  }
  return response;
}

export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const response = await send(method, path, opts);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Build a query string, skipping empty values and repeating keys for arrays. */
export function queryString(params: Record<string, unknown>): string {
  const qs = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) {
      for (const v of value) if (v !== "" && v != null) qs.append(key, String(v));
    } else if (value !== "" && value != null) {
      qs.append(key, String(value));
    }
  }
  const s = qs.toString();
  return s ? `?${s}` : "";
}

// ---- endpoints ---------------------------------------------------------------

export const api = {
  login: (username: string, password: string) =>
    request<User>("POST", "/api/auth/login", { body: { username, password }, redirectOn401: false }),
  logout: () => request<void>("POST", "/api/auth/logout", { redirectOn401: false }),
  me: () => request<User>("GET", "/api/auth/me", { redirectOn401: false }),
  /** Who is signed in, or `{user: null}`: always 200, so a signed-out first load logs no 401. */
  session: () =>
    request<Session>("GET", "/api/auth/session", { redirectOn401: false }).then((r) => r?.user ?? null),
  health: () => request<Health>("GET", "/api/health", { redirectOn401: false }),
  sources: () => request<SourcesInfo>("GET", "/api/sources"),
  /** The page registry: per page its app, tools, cards, client actions and starter prompts. */
  pages: () =>
    request<{ pages: Record<string, { app: string; starter_prompts?: string[] }> }>("GET", "/api/pages"),

  listConversations: (app: string) =>
    request<ConversationSummary[] | { conversations: ConversationSummary[] }>(
      "GET",
      `/api/conversations${queryString({ app })}`,
    ).then((r) => (Array.isArray(r) ? r : r?.conversations ?? [])),
  getConversation: (id: number) => request<ConversationDetail>("GET", `/api/conversations/${id}`),
  renameConversation: (id: number, title: string) =>
    request<ConversationSummary>("PATCH", `/api/conversations/${id}`, { body: { title } }),
  deleteConversation: (id: number) => request<void>("DELETE", `/api/conversations/${id}`),
  chatModels: () => request<ChatModels>("GET", "/api/chat/models"),
  getConversationConfig: (id: number) => request<ConversationConfig>("GET", `/api/conversations/${id}/config`),
  updateConversationConfig: (id: number, body: ConfigUpdate) =>
    request<ConfigAck>("PATCH", `/api/conversations/${id}/config`, { body }),
  /** Set a user message and what followed it aside as an earlier version (edit and resend, regenerate); the
   * conversation as it is now. */
  rewind: (id: number, messageId: number) =>
    request<ConversationDetail>("POST", `/api/conversations/${id}/rewind`, { body: { message_id: messageId } }),
  /** Show another version of the tail that starts at `messageId`; the one shown now is kept. */
  switchVersion: (id: number, messageId: number, version: number) =>
    request<ConversationDetail>("POST", `/api/conversations/${id}/versions/switch`, {
      body: { message_id: messageId, version },
    }),
  stopTurn: (id: number) => request<unknown>("POST", `/api/conversations/${id}/stop`),
  recordDecision: (conversationId: number, payloadId: string, decision: Decision) =>
    request<unknown>(
      "POST",
      `/api/conversations/${conversationId}/payloads/${encodeURIComponent(payloadId)}/decision`,
      { body: { decision } },
    ),

  searchArticles: (params: Record<string, unknown>, signal?: AbortSignal) =>
    request<ArticleSearchResponse>("GET", `/api/articles/search${queryString(params)}`, { signal }),
  getArticle: (pmid: string) => request<Article>("GET", `/api/articles/${encodeURIComponent(pmid)}`),
  searchTrials: (params: Record<string, unknown>, signal?: AbortSignal) =>
    request<TrialSearchResponse>("GET", `/api/trials/search${queryString(params)}`, { signal }),
  getTrial: (nctId: string) => request<TrialDetail>("GET", `/api/trials/${encodeURIComponent(nctId)}`),
  trialStats: (body: TrialStatsRequest, signal?: AbortSignal) =>
    request<StatsResponse>("POST", "/api/stats/trials", { body, signal }),
  articleStats: (body: ArticleStatsRequest, signal?: AbortSignal) =>
    request<StatsResponse>("POST", "/api/stats/articles", { body, signal }),

  listStreams: (includeArchived = false) =>
    request<Stream[]>("GET", `/api/streams${includeArchived ? "?include_archived=true" : ""}`).then((r) =>
      Array.isArray(r) ? r : [],
    ),
  getStream: (id: number) => request<Stream>("GET", `/api/streams/${id}`),
  /** Admins: tokens and estimated cost per user, day and model over [start, end] (UTC days, ISO). */
  usage: (start: string, end: string, signal?: AbortSignal) =>
    request<UsageReport>("GET", `/api/admin/usage${queryString({ start, end })}`, { signal }),
  /** The same period as CSV: a plain link, so the browser downloads it with the session cookie. */
  usageCsvUrl: (start: string, end: string) => `/api/admin/usage/export.csv${queryString({ start, end })}`,
  createStream: (body: StreamCreate) => request<Stream>("POST", "/api/streams", { body }),
  updateStream: (id: number, body: StreamUpdate) => request<Stream>("PATCH", `/api/streams/${id}`, { body }),
  instructionHistory: (id: number) =>
    request<InstructionVersion[]>("GET", `/api/streams/${id}/instructions/history`).then((r) => (Array.isArray(r) ? r : [])),
  instructionDiff: (id: number, from?: number | null, to?: number | null) =>
    request<InstructionDiff>("GET", `/api/streams/${id}/instructions/diff${queryString({ from, to })}`),
  restoreInstructions: (id: number, versionId: number, note?: string) =>
    request<Stream>("POST", `/api/streams/${id}/instructions/restore`, {
      body: { version_id: versionId, ...(note ? { note } : {}) },
    }),
  listReports: () => request<ReportInfo[]>("GET", "/api/reports").then((r) => (Array.isArray(r) ? r : [])),
  /** The exact system prompt a turn would get; `draft` previews unsaved stream instructions. */
  promptPreview: (params: { page: string; tab?: string; subtab?: string; stream_id?: number | null; draft?: string | null }) => {
    // An empty draft is sent too ("draft="): it previews the stream with its instructions removed.
    const { draft, ...rest } = params;
    const qs = queryString(rest);
    const url = `/api/chat/prompt-preview${qs}${draft != null ? `${qs ? "&" : "?"}draft=${encodeURIComponent(draft)}` : ""}`;
    if (url.length <= 6000) return request<PromptPreview>("GET", url);
    // A long draft does not fit a URL: the POST form takes the same values as a chat context.
    const context: Record<string, unknown> = { current_page: params.page };
    if (params.tab) context.active_tab = params.tab;
    if (params.subtab) context.active_subtab = params.subtab;
    if (params.stream_id != null) context.stream_id = params.stream_id;
    if (params.draft != null) context.stream_draft_instructions = params.draft;
    return request<PromptPreview>("POST", "/api/chat/prompt-preview", { body: { context } });
  },
};

/** Hands each chat event to the tray with its SSE id (undefined for frames without one, e.g. `reconnect`). */
export type ChatEventHandler = (event: ChatEvent, id?: number) => void;

/** The body of a response that must be an event stream (a proxy's HTML error page is not one). */
function eventStreamBody(response: Response): ReadableStream<Uint8Array> {
  const contentType = response.headers.get("content-type") ?? "";
  if (!contentType.includes("text/event-stream") || !response.body) {
    throw new ApiError("The server did not answer with an event stream.", response.status, "bad_stream", true);
  }
  return response.body;
}

/** Hand each SSE message that `toEvent` recognises to `onEvent`, until the body ends. */
async function readTypedEvents<E>(
  response: Response,
  toEvent: (message: EventSourceMessage) => E | null,
  onEvent: (event: E) => void,
  signal: AbortSignal,
): Promise<void> {
  await readEventStream(
    eventStreamBody(response),
    (message) => {
      const event = toEvent(message);
      if (event) onEvent(event);
    },
    signal,
  );
}

async function readChatResponse(response: Response, onEvent: ChatEventHandler, signal: AbortSignal): Promise<void> {
  await readChatEvents(eventStreamBody(response), onEvent, signal);
}

/**
 * POST one chat turn and hand each SSE event to `onEvent` as it arrives. Resolves when the body ends.
 *
 * `idempotencyKey` names the send: the same key again attaches to the turn it started (replayed from its
 * first event) instead of starting another, so re-POSTing after a network error is safe.
 */
export async function streamChat(
  body: ChatRequest,
  onEvent: ChatEventHandler,
  signal: AbortSignal,
  idempotencyKey?: string,
): Promise<void> {
  const headers: Record<string, string> = { Accept: "text/event-stream" };
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  const response = await send("POST", "/api/chat/stream", { body, signal, headers });
  await readChatResponse(response, onEvent, signal);
}

/**
 * Attach to a conversation's running (or latest) turn — or to `turnId`, the turn `lastEventId` belongs to, so
 * a newer turn is never read from its middle: its events after `lastEventId`, then live ones until the
 * terminal event. Never starts a generation; 404 when the conversation has no turn (or not that one).
 */
export async function resumeChat(
  conversationId: number,
  lastEventId: number,
  onEvent: ChatEventHandler,
  signal: AbortSignal,
  turnId?: string | null,
): Promise<void> {
  const turn = turnId ? `?turn_id=${encodeURIComponent(turnId)}` : "";
  const response = await send("GET", `/api/conversations/${conversationId}/stream${turn}`, {
    signal,
    headers: { Accept: "text/event-stream", "Last-Event-ID": String(lastEventId) },
  });
  await readChatResponse(response, onEvent, signal);
}

/**
 * POST one AI column run and hand each SSE event to `onEvent` as it arrives (rows as they finish).
 * Aborting `signal` closes the connection, which cancels the evaluation on the server.
 */
export async function streamAIColumn(
  body: AIColumnRequest,
  onEvent: (event: AIColumnEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await send("POST", "/api/ai-columns/evaluate", { body, signal });
  await readTypedEvents(response, toAIColumnEvent, onEvent, signal);
}

/** A file the server built: its bytes and the name it suggested (Content-Disposition). */
export interface DownloadedFile {
  blob: Blob;
  filename: string;
}

async function fileFrom(response: Response, fallback: string): Promise<DownloadedFile> {
  const disposition = response.headers.get("content-disposition") ?? "";
  const named = /filename="([^"]+)"/.exec(disposition);
  return { blob: await response.blob(), filename: named ? named[1] : fallback };
}

/** The results table as the page shows it, as CSV or XLSX (AI columns filled from the user's stored results). */
export async function exportTable(body: TableExportRequest, format: "csv" | "xlsx"): Promise<DownloadedFile> {
  const response = await send("POST", `/api/exports/table?format=${format}`, {
    body,
    headers: { Accept: format === "csv" ? "text/csv" : "application/octet-stream" },
  });
  return fileFrom(response, `${body.app}-results.${format}`);
}

/** Build a shortlist report, handing each progress event to `onEvent`; ends after `report_ready` or `error`. */
export async function streamReport(body: ReportRequest, onEvent: (event: ReportEvent) => void, signal: AbortSignal): Promise<void> {
  const response = await send("POST", "/api/reports", { body, signal, headers: { Accept: "text/event-stream" } });
  await readTypedEvents(response, toReportEvent, onEvent, signal);
}

/** Hand a built file to the browser as a download. */
export function saveFile({ blob, filename }: DownloadedFile): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
