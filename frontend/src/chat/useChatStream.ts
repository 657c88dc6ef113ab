/**
 * Orchestrates one chat tray: sends turns, feeds SSE events to the reducer,
 * stops, retries, opens stored conversations and records card decisions.
 */
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import { ApiError, api, streamChat } from "../api/client";
import type { App, ChatEvent, Decision } from "../api/types";
import { chatReducer, initialChatState, type ChatError } from "./chatReducer";

const storageKey = (app: App) => `colleague.conversation.${app}`;

function rememberConversation(app: App, id: number | null): void {
  try {
    if (id == null) localStorage.removeItem(storageKey(app));
    else localStorage.setItem(storageKey(app), String(id));
  } catch {
    // storage unavailable (private mode): nothing to remember
  }
}

function rememberedConversation(app: App): number | null {
  try {
    const raw = localStorage.getItem(storageKey(app));
    const id = raw ? Number(raw) : NaN;
    return Number.isFinite(id) ? id : null;
  } catch {
    return null;
  }
}

export function toChatError(err: unknown): ChatError {
  if (err instanceof ApiError) return { message: err.message, code: err.code, retryable: err.retryable };
  return { message: err instanceof Error ? err.message : String(err), retryable: true };
}

interface RunningTurn {
  controller: AbortController;
  /** The user pressed Stop: nothing from this stream reaches the state any more. */
  stopped: boolean;
}

export interface UseChatStreamOptions {
  app: App;
  /** Called after a turn ends or the conversation changes (refresh the conversation list). */
  onTurnEnded?: () => void;
  /** false: neither reopen nor remember this app's last conversation (a sandbox chat). */
  remember?: boolean;
}

export function useChatStream({ app, onTurnEnded, remember = true }: UseChatStreamOptions) {
  const [state, dispatch] = useReducer(chatReducer, initialChatState);
  const turnRef = useRef<RunningTurn | null>(null);
  const conversationRef = useRef<number | null>(null);
  const keyRef = useRef(0);
  const onTurnEndedRef = useRef(onTurnEnded);
  onTurnEndedRef.current = onTurnEnded;

  conversationRef.current = state.conversationId;

  // Read before any effect runs: the effect below would otherwise forget it on mount.
  const [restoreId] = useState(() => (remember ? rememberedConversation(app) : null));

  // Remember an opened conversation; forgetting one is explicit (New, a conversation that is gone), so the
  // empty state of a fresh mount never erases what a reload should reopen.
  useEffect(() => {
    if (remember && state.conversationId != null) rememberConversation(app, state.conversationId);
  }, [app, state.conversationId, remember]);

  const open = useCallback(
    async (id: number) => {
      if (turnRef.current) return;
      try {
        const conversation = await api.getConversation(id);
        dispatch({ type: "loaded", conversation });
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          rememberConversation(app, null);
          dispatch({ type: "reset" });
          return;
        }
        dispatch({ type: "failed", error: toChatError(err) });
      }
    },
    [app],
  );

  // Re-open the conversation this app had open before a reload.
  useEffect(() => {
    if (restoreId != null) void open(restoreId);
    return () => turnRef.current?.controller.abort();
  }, [restoreId, open]);

  const run = useCallback(
    async (message: string, context: Record<string, unknown>, retry: boolean) => {
      if (turnRef.current) return;
      const turn: RunningTurn = { controller: new AbortController(), stopped: false };
      turnRef.current = turn;
      dispatch({ type: "send", message, context, key: String(++keyRef.current), retry });
      let ended = false;
      const onEvent = (event: ChatEvent) => {
        if (turn.stopped) {
          // Stop came before we knew the conversation: now we do, so the server can stop the turn.
          if (event.type === "conversation") {
            void api.stopTurn(event.conversation_id).catch(() => undefined);
            turn.controller.abort();
          }
          return;
        }
        if (event.type === "conversation") conversationRef.current = event.conversation_id;
        if (event.type === "complete" || event.type === "error") ended = true;
        dispatch({ type: "event", event });
      };
      try {
        await streamChat(
          {
            message,
            context,
            app,
            ...(conversationRef.current != null ? { conversation_id: conversationRef.current } : {}),
          },
          onEvent,
          turn.controller.signal,
        );
        if (!ended && !turn.stopped && !turn.controller.signal.aborted) {
          dispatch({
            type: "failed",
            error: { message: "The connection closed before the answer finished.", code: "stream_closed", retryable: true },
          });
        }
      } catch (err) {
        if (!turn.stopped && !turn.controller.signal.aborted) dispatch({ type: "failed", error: toChatError(err) });
      } finally {
        if (turnRef.current === turn) turnRef.current = null;
        onTurnEndedRef.current?.();
      }
    },
    [app],
  );

  const send = useCallback(
    (message: string, context: Record<string, unknown>) => {
      const text = message.trim();
      if (text) void run(text, context, false);
    },
    [run],
  );

  const retry = useCallback(() => {
    if (state.lastRequest) void run(state.lastRequest.message, state.lastRequest.context, true);
  }, [run, state.lastRequest]);

  /** Stop the running turn: keep the partial answer, tell the server, drop the stream. */
  const stop = useCallback(() => {
    const turn = turnRef.current;
    if (!turn) return;
    turn.stopped = true;
    turnRef.current = null;
    dispatch({ type: "stopped" });
    const id = conversationRef.current;
    if (id != null) {
      void api.stopTurn(id).catch(() => undefined);
      turn.controller.abort();
    }
    // Otherwise the stream is read silently until its `conversation` event names what to stop.
  }, []);

  const startNew = useCallback(() => {
    if (turnRef.current) return;
    conversationRef.current = null;
    if (remember) rememberConversation(app, null);
    dispatch({ type: "reset" });
  }, [app, remember]);

  /** Record a decision on a payload; the caller has already applied an accepted one. The card shows the
   * decision once the server has it, so a reload right after always finds it. */
  const decide = useCallback(async (payloadId: string, decision: Decision) => {
    const id = conversationRef.current;
    try {
      if (id != null) await api.recordDecision(id, payloadId, decision);
      dispatch({ type: "decided", payloadId, decision });
    } catch (err) {
      const error = toChatError(err);
      // Not retryable: Retry re-sends the last message, which would not save this.
      dispatch({ type: "failed", error: { ...error, message: `Could not save your decision: ${error.message}`, retryable: false } });
    }
  }, []);

  return { state, send, retry, stop, open, startNew, decide };
}

export type ChatController = ReturnType<typeof useChatStream>;
