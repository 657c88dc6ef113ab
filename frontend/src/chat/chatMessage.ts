/**
 * A message of the chat tray, and how one is made: blank (a message being sent, an answer about to
 * stream) or from a stored message of a loaded conversation.
 */
import type {
  Card,
  ChatResponsePayload,
  ContextUsage,
  Payload,
  StoredMessage,
  StreamInfo,
  SuggestedAction,
  SuggestedValue,
  ToolHistoryEntry,
  Usage,
} from "../api/types";

export type ToolState = "running" | "done" | "error" | "stopped";

export interface ToolActivity {
  index: number;
  tool: string;
  input?: unknown;
  stage?: string;
  message?: string;
  progress: number | null;
  state: ToolState;
  /** Where in the answer's text the call began (characters); null when unknown (drawn after the text). */
  at: number | null;
  /** The card the tool returned (live), e.g. search results with their total. */
  card?: Card | null;
  /** What the tool returned to the model (once the turn is complete, and after a reload). */
  output?: string;
}

export type DisplayStatus = "streaming" | "complete" | "interrupted" | "failed";

export interface ChatMessage {
  key: string;
  id?: number;
  role: "user" | "assistant";
  content: string;
  /** For user messages: the page context sent with it ("what the assistant saw"). */
  context?: Record<string, unknown> | null;
  status: DisplayStatus;
  payloads: Payload[];
  suggestedValues: SuggestedValue[];
  suggestedActions: SuggestedAction[];
  tools: ToolActivity[];
  toolHistory: ToolHistoryEntry[];
  /** For assistant messages: the research stream whose instructions shaped the answer (null: none). */
  stream?: StreamInfo | null;
  /** Notices the server sent before the turn began (an unknown or archived stream, a sandbox draft). */
  notices: string[];
  /** A replay from the turn's first event is rebuilding this answer: the text replayed so far. The saved
   * text (`content`) stays on screen until the replay goes past it, so the answer never shrinks. */
  replay?: string;
}

export function blankMessage(key: string, role: ChatMessage["role"], content: string): ChatMessage {
  return {
    key,
    role,
    content,
    status: "complete",
    payloads: [],
    suggestedValues: [],
    suggestedActions: [],
    tools: [],
    toolHistory: [],
    notices: [],
  };
}

export function asArray<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

/** The cards of a complete event (`payloads`), each with an id and data. */
export function payloadsOf(payload: ChatResponsePayload): Payload[] {
  const list = asArray<Payload>(payload.payloads).filter((p) => p && typeof p.type === "string");
  return list.map((p, i) => ({ ...p, id: String(p.id ?? `payload-${i}`), data: p.data ?? {} }));
}

export function streamOf(value: unknown): StreamInfo | null {
  const s = value as StreamInfo | null | undefined;
  return s && typeof s === "object" && typeof s.id === "number" ? s : null;
}

export function fromStored(message: StoredMessage): ChatMessage | null {
  if (message.role !== "user" && message.role !== "assistant") return null;
  const extras = message.extras ?? {};
  const status = message.status;
  const m = blankMessage(`m-${message.id}`, message.role, typeof message.content === "string" ? message.content : "");
  m.id = message.id;
  m.context = message.role === "user" ? (message.context ?? null) : undefined;
  // A running answer (its turn still generating, or its worker gone) shows what it has so far as streaming;
  // `loaded` keeps that only for the newest answer, whose turn the tray then resumes.
  m.status = status === "interrupted" || status === "failed" ? status : status === "running" ? "streaming" : "complete";
  m.payloads = asArray<Payload>(extras.payloads).map((p, i) => ({ ...p, id: String(p.id ?? `payload-${i}`), data: p.data ?? {} }));
  m.suggestedValues = asArray<SuggestedValue>(extras.suggested_values);
  m.suggestedActions = asArray<SuggestedAction>(extras.suggested_actions);
  m.toolHistory = asArray<ToolHistoryEntry>(extras.tool_history);
  m.tools = toolsOf(m.toolHistory);
  if (message.role === "assistant") m.stream = streamOf(extras.stream);
  return m;
}

/** A stored turn's tool calls as steps (each finished, or failed); `at` says where each one goes in the text. */
function toolsOf(history: ToolHistoryEntry[]): ToolActivity[] {
  return history.map((t, index) => ({
    index,
    tool: t.tool_name,
    input: t.input,
    progress: null,
    state: t.is_error ? "error" : "done",
    at: typeof t.at === "number" ? t.at : null,
    output: t.output,
  }));
}

/** The complete event's tool history fills in what each live step returned. */
export function withOutputs(tools: ToolActivity[], history: ToolHistoryEntry[]): ToolActivity[] {
  if (tools.length === 0) return toolsOf(history);
  return tools.map((t) => {
    const entry = history[t.index];
    return entry ? { ...t, output: entry.output, at: t.at ?? (typeof entry.at === "number" ? entry.at : null) } : t;
  });
}

/** Tokens a usage counted; 0 for a turn stopped before the model reported any (an all-zero usage). */
function tokensOf(usage: Usage): number {
  return (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0);
}

/** The newest usage that counted something: a stopped turn's zeros would show "Context 0" after a reload. */
export function lastUsage(messages: StoredMessage[]): Usage | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const usage = messages[i].extras?.usage;
    if (usage && typeof usage === "object" && tokensOf(usage) > 0) return usage;
  }
  return null;
}

/** The newest answer's context meter reading (an answer from before the meter existed has none). */
export function lastContext(messages: StoredMessage[]): ContextUsage | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const context = messages[i].extras?.context_usage;
    if (context && typeof context === "object" && typeof context.input_tokens === "number") return context;
  }
  return null;
}
