/**
 * The chat tray's state, folded from user intents and SSE events. Pure: the
 * hook (useChatStream) does the I/O and dispatches what happened.
 */
import type {
  ChatEvent,
  ChatRequest,
  ChatResponsePayload,
  ContextUsage,
  ConversationDetail,
  Decision,
  MessageVersions,
  StoredMessage,
  SuggestedAction,
  SuggestedValue,
  ToolHistoryEntry,
  Usage,
} from "../api/types";
import {
  asArray,
  blankMessage,
  fromStored,
  lastContext,
  lastUsage,
  payloadsOf,
  streamOf,
  withOutputs,
  type ChatMessage,
  type DisplayStatus,
  type ToolActivity,
  type ToolState,
} from "./chatMessage";


export interface ChatError {
  message: string;
  code?: string;
  retryable: boolean;
  /** The connection to a turn was lost, not the turn: Retry reattaches to it instead of sending again. */
  resume?: boolean;
}

export interface ChatRequestDraft {
  message: string;
  context: Record<string, unknown>;
  /** A clicked server action (the message is its label). */
  action?: ChatRequest["action"];
}

export interface ChatState {
  conversationId: number | null;
  messages: ChatMessage[];
  streaming: boolean;
  /** The stream broke and the tray is reattaching to the turn ("Reconnecting…"). */
  reconnecting: boolean;
  /** Latest status line ("Thinking…", heartbeats of long tools). */
  statusText: string | null;
  /** The last turn's cost (tokens of all its model calls). */
  usage: Usage | null;
  /** How full the context window is: the last request's input (`context_update`). */
  context: ContextUsage | null;
  error: ChatError | null;
  /** What was last sent, so Retry can send it again. */
  lastRequest: ChatRequestDraft | null;
  /** Where earlier versions branch off (regenerate, edit): the tray's "‹ 2 / 3 ›" on those messages. */
  versions: MessageVersions[];
}

export type ChatAction =
  | { type: "reset" }
  | { type: "loaded"; conversation: ConversationDetail }
  /** The versions as the server counts them now (after a regenerate or edit has been answered). */
  | { type: "versions"; versions: MessageVersions[] }
  | { type: "send"; message: string; context: Record<string, unknown>; action?: ChatRequest["action"]; key: string; retry?: boolean }
  | { type: "event"; event: ChatEvent }
  /** Events that arrived within one animation frame, applied in order. */
  | { type: "events"; events: ChatEvent[] }
  | { type: "stopped" }
  | { type: "failed"; error: ChatError }
  /** The stream broke; a reconnect is on its way. */
  | { type: "reconnecting" }
  /** Reconnecting gave up: the answer so far stays, interrupted, with a Retry that reattaches. */
  | { type: "lost"; error: ChatError }
  | { type: "decided"; payloadId: string; decision: Decision | null };

export const initialChatState: ChatState = {
  conversationId: null,
  messages: [],
  streaming: false,
  reconnecting: false,
  statusText: null,
  usage: null,
  context: null,
  error: null,
  lastRequest: null,
  versions: [],
};


/** Apply `update` to the assistant message being streamed (the last one). */
function updateStreaming(state: ChatState, update: (m: ChatMessage) => ChatMessage): ChatState {
  const last = state.messages[state.messages.length - 1];
  if (!last || last.role !== "assistant" || last.status !== "streaming") return state;
  return { ...state, messages: [...state.messages.slice(0, -1), update(last)] };
}

function updateTool(m: ChatMessage, index: number, tool: string, patch: Partial<ToolActivity>): ChatMessage {
  const existing = m.tools.find((t) => t.index === index);
  if (!existing) {
    return { ...m, tools: [...m.tools, { index, tool, progress: null, state: "running", at: null, ...patch }] };
  }
  return { ...m, tools: m.tools.map((t) => (t.index === index ? { ...t, ...patch } : t)) };
}

function endTurn(state: ChatState, status: DisplayStatus, toolState: ToolState): ChatState {
  const ended = updateStreaming(state, (m) => ({
    ...m,
    status,
    tools: m.tools.map((t) => (t.state === "running" ? { ...t, state: toolState } : t)),
  }));
  return { ...ended, streaming: false, reconnecting: false, statusText: null };
}

/** A loaded conversation whose newest answer is still running streams again; an older one cannot be. */
function resumeLoaded(state: ChatState): ChatState {
  const messages = state.messages;
  const lastIndex = messages.length - 1;
  const fixed = messages.map((m, i) =>
    m.status === "streaming" && (i !== lastIndex || m.role !== "assistant") ? { ...m, status: "interrupted" as const } : m,
  );
  const last = fixed[lastIndex];
  if (!last || last.status !== "streaming") return { ...state, messages: fixed };
  // Retry of a turn that then fails re-sends the question it answers.
  const question = fixed[lastIndex - 1];
  const lastRequest = question?.role === "user" ? { message: question.content, context: question.context ?? {} } : null;
  return { ...state, messages: fixed, streaming: true, lastRequest };
}


function applyEvent(state: ChatState, event: ChatEvent): ChatState {
  switch (event.type) {
    case "conversation": {
      const messages = state.messages.slice();
      const userIndex = messages.length - 2;
      if (userIndex >= 0 && messages[userIndex].role === "user" && event.user_message_id != null) {
        messages[userIndex] = { ...messages[userIndex], id: event.user_message_id };
      }
      const opened = { ...state, conversationId: event.conversation_id ?? state.conversationId, messages };
      // The turn's first event: a replay from the start (after a reload) rebuilds the answer from here, so the
      // text saved so far is replaced by the same text streamed again, never doubled.
      return updateStreaming(opened, (m) => ({
        ...m,
        replay: m.content ? "" : undefined,
        tools: [],
        notices: [],
        stream: streamOf(event.stream),
      }));
    }
    case "status": {
      if (typeof event.message !== "string") return state;
      // A notice is news about the turn (e.g. "stream 7 is archived"): kept on the answer, not replaced by the
      // next status line.
      if (event.notice === true) {
        return updateStreaming(state, (m) => ({ ...m, notices: [...m.notices, event.message] }));
      }
      return { ...state, statusText: event.message };
    }
    case "text_delta":
      return updateStreaming(state, (m) => {
        const text = event.text ?? "";
        if (m.replay === undefined) return { ...m, content: m.content + text };
        const replay = m.replay + text;
        // Still within the saved text: keep showing it; past it (or different from it): the replay takes over.
        if (replay.length <= m.content.length && m.content.startsWith(replay)) return { ...m, replay };
        return { ...m, content: replay, replay: undefined };
      });
    case "resync":
      // The worker that streamed this answer died: text received after the stored part is in no answer (another
      // worker goes on from what was stored, or the turn ends interrupted next), so the answer so far is `text`
      // (during a replay: the replay's text so far).
      return updateStreaming(state, (m) => {
        const text = event.text ?? "";
        if (m.replay === undefined) return { ...m, content: text };
        if (text.length <= m.content.length && m.content.startsWith(text)) return { ...m, replay: text };
        return { ...m, content: text, replay: undefined };
      });
    case "tool_start":
      return updateStreaming(state, (m) =>
        updateTool(m, event.index, event.tool, {
          tool: event.tool,
          input: event.input,
          state: "running",
          // During a replay the text so far is the replayed part; the saved text is what is shown.
          at: (m.replay ?? m.content).length,
        }),
      );
    case "tool_progress":
      return updateStreaming(state, (m) =>
        updateTool(m, event.index, event.tool, {
          stage: event.stage,
          message: event.message,
          progress: typeof event.progress === "number" ? Math.min(1, Math.max(0, event.progress)) : null,
        }),
      );
    case "tool_complete":
      return updateStreaming(state, (m) =>
        updateTool(m, event.index, event.tool, {
          state: event.is_error ? "error" : "done",
          progress: event.is_error ? null : 1,
          card: event.payload ?? null,
        }),
      );
    case "usage": {
      const { type: _type, ...usage } = event;
      return { ...state, usage };
    }
    case "context_update": {
      const { type: _type, ...context } = event;
      return { ...state, context };
    }
    case "complete": {
      const payload = event.payload ?? ({ message: "" } as ChatResponsePayload);
      const status: DisplayStatus = payload.status === "interrupted" || payload.status === "failed"
        ? payload.status
        : "complete";
      const updated = updateStreaming(state, (m) => ({
        ...m,
        id: payload.message_id ?? m.id,
        content: typeof payload.message === "string" ? payload.message : m.content,
        replay: undefined,
        payloads: payloadsOf(payload),
        suggestedValues: asArray<SuggestedValue>(payload.suggested_values),
        suggestedActions: asArray<SuggestedAction>(payload.suggested_actions),
        toolHistory: asArray<ToolHistoryEntry>(payload.tool_history),
        tools: withOutputs(m.tools, asArray<ToolHistoryEntry>(payload.tool_history)),
      }));
      const ended = endTurn(updated, status, status === "complete" ? "done" : "stopped");
      return {
        ...ended,
        conversationId: payload.conversation_id ?? ended.conversationId,
        usage: payload.usage ?? ended.usage,
        error: status === "failed" ? { message: "The answer could not be completed.", retryable: true } : null,
      };
    }
    case "error": {
      // `interrupted`: the server stopped (a restart, a worker that died) with the answer so far saved as such.
      const ended = event.code === "interrupted" ? endTurn(state, "interrupted", "stopped") : endTurn(state, "failed", "error");
      return {
        ...ended,
        error: {
          message: event.message || "Something went wrong.",
          code: event.code,
          retryable: event.retryable !== false,
        },
      };
    }
    default:
      return state;
  }
}

export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case "reset":
      return initialChatState;
    case "loaded": {
      const messages = asArray<StoredMessage>(action.conversation.messages)
        .map(fromStored)
        .filter((m): m is ChatMessage => m !== null);
      return resumeLoaded({
        ...initialChatState,
        conversationId: action.conversation.id,
        messages,
        usage: lastUsage(asArray<StoredMessage>(action.conversation.messages)),
        context: lastContext(asArray<StoredMessage>(action.conversation.messages)),
        versions: asArray<MessageVersions>(action.conversation.versions),
      });
    }
    case "versions":
      return { ...state, versions: action.versions };
    case "send": {
      let messages = state.messages;
      if (action.retry) {
        // Drop the failed attempt (its user message and partial answer) before sending it again.
        const lastUser = messages.map((m) => m.role).lastIndexOf("user");
        if (lastUser >= 0) messages = messages.slice(0, lastUser);
      }
      const user = { ...blankMessage(`u-${action.key}`, "user", action.message), context: action.context };
      const assistant = { ...blankMessage(`a-${action.key}`, "assistant", ""), status: "streaming" as const };
      return {
        ...state,
        messages: [...messages, user, assistant],
        streaming: true,
        reconnecting: false,
        statusText: null,
        error: null,
        lastRequest: { message: action.message, context: action.context, ...(action.action ? { action: action.action } : {}) },
      };
    }
    case "event":
      // Events after the turn ended (a late frame after Stop) change nothing.
      return state.streaming ? applyEvent({ ...state, reconnecting: false }, action.event) : state;
    case "events":
      return action.events.reduce((next, event) => chatReducer(next, { type: "event", event }), state);
    case "reconnecting":
      return state.streaming ? { ...state, reconnecting: true } : state;
    case "lost":
      if (!state.streaming) return { ...state, error: action.error };
      return { ...endTurn(state, "interrupted", "stopped"), error: action.error };
    case "stopped":
      return state.streaming ? endTurn(state, "interrupted", "stopped") : state;
    case "failed":
      if (!state.streaming) return { ...state, error: action.error };
      return { ...endTurn(state, "failed", "error"), error: action.error };
    case "decided":
      return {
        ...state,
        messages: state.messages.map((m) =>
          m.payloads.some((p) => p.id === action.payloadId)
            ? { ...m, payloads: m.payloads.map((p) => (p.id === action.payloadId ? { ...p, decision: action.decision } : p)) }
            : m,
        ),
      };
    default:
      return state;
  }
}
