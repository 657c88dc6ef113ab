/**
 * Orchestrates one chat tray: sends turns, feeds SSE events to the reducer,
 * stops, retries, opens stored conversations and records card decisions.
 */
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import { ApiError, api, resumeChat, streamChat, type ChatEventHandler } from "../api/client";
import type { App, ChatEvent, ChatRequest, ConfigUpdate, ConversationDetail, Decision, SuggestedAction } from "../api/types";
import { listen, removeAll } from "../listen";
import { asArray } from "./chatMessage";
import { chatReducer, initialChatState, type ChatAction, type ChatError } from "./chatReducer";
import { keepPendingSend, pendingSend, rememberConversation, rememberedConversation } from "./chatStorage";
import { frameBatcher } from "./frameBatch";
import { onRedacted } from "./redacted";
import { followTurn, wait } from "./turnStream";

export function toChatError(err: unknown): ChatError {
  if (err instanceof ApiError) return { message: err.message, code: err.code, retryable: err.retryable };
  return { message: err instanceof Error ? err.message : String(err), retryable: true };
}

interface RunningTurn {
  controller: AbortController;
  /** The user pressed Stop: nothing from this stream reaches the state any more. */
  stopped: boolean;
  /** Ends a reconnect's wait early (the tab is visible again, the network is back). */
  wake: (() => void) | null;
}

/** One send as the server knows it: the same body and key again attach to the turn it started. */
interface Send {
  body: ChatRequest;
  key: string;
  /** No event of its turn arrived: Retry sends it again under the same key (the server may have it). */
  unseen: boolean;
}

const LOST: ChatError = {
  message: "Lost the connection to the answer. It may still be running.",
  code: "connection_lost",
  retryable: true,
  resume: true,
};

/** A fresh idempotency key (crypto.randomUUID needs a secure context; 127.0.0.1 and https are). */
function newKey(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}

function runningAnswer(conversation: ConversationDetail): boolean {
  const last = conversation.messages?.[conversation.messages.length - 1];
  return last?.role === "assistant" && last.status === "running";
}

export interface UseChatStreamOptions {
  app: App;
  /** Called after a turn ends or the conversation changes (refresh the conversation list). */
  onTurnEnded?: () => void;
  /** false: neither reopen nor remember this app's last conversation (a sandbox chat). */
  remember?: boolean;
  /** The conversation to open first (a link's `c=`), instead of the one this app had open last. */
  initialConversation?: number | null;
}

export function useChatStream({ app, onTurnEnded, remember = true, initialConversation = null }: UseChatStreamOptions) {
  const [state, dispatchNow] = useReducer(chatReducer, initialChatState);
  // However many events arrive, the tray renders them once per animation frame; any other action first
  // applies the events already received, so the order the reducer sees is the order they came in.
  const [events] = useState(() => frameBatcher<ChatEvent>((batch) => dispatchNow({ type: "events", events: batch })));
  const dispatch = useCallback((action: ChatAction) => {
    events.flush();
    dispatchNow(action);
  }, [events]);
  useEffect(() => () => events.cancel(), [events]);
  const turnRef = useRef<RunningTurn | null>(null);
  const conversationRef = useRef<number | null>(null);
  const sendRef = useRef<Send | null>(null);
  const openingRef = useRef(0);
  const keyRef = useRef(0);
  const onTurnEndedRef = useRef(onTurnEnded);
  onTurnEndedRef.current = onTurnEnded;

  conversationRef.current = state.conversationId;
  /** The conversation whose turn the tray lost the connection to (null: none). */
  const lostRef = useRef<number | null>(null);
  lostRef.current = state.error?.resume ? state.conversationId : null;

  // Read before any effect runs: the effect below would otherwise forget it on mount.
  const [restoreId] = useState(() => (remember ? initialConversation ?? rememberedConversation(app) : null));
  // A new conversation's send whose tray went away before its first event: picked up again below (a link to
  // another conversation wins, and the send is dropped: the server lists it in History if it started it).
  const [unfinished] = useState(() => {
    const pending = remember ? pendingSend(app) : null;
    if (pending && initialConversation != null) keepPendingSend(app, null);
    return initialConversation == null ? pending : null;
  });

  // Remember an opened conversation; forgetting one is explicit (New, a conversation that is gone), so the
  // empty state of a fresh mount never erases what a reload should reopen.
  useEffect(() => {
    if (remember && state.conversationId != null) rememberConversation(app, state.conversationId);
  }, [app, state.conversationId, remember]);

  /**
   * Follow a turn to its terminal event through `connect`, reconnecting (with backoff) whenever a body ends
   * without one. `known` is the turn's conversation when it is already known (a resumed turn).
   */
  const follow = useCallback(
    async (connect: (after: number, turnConversation: number | null, onEvent: ChatEventHandler, signal: AbortSignal,
                     turnId: string | null) => Promise<void>,
           known: number | null, send: Send | null) => {
      const turn: RunningTurn = { controller: new AbortController(), stopped: false, wake: null };
      turnRef.current = turn;
      let turnConversation = known;
      let turnId: string | null = null; // the turn the ids belong to, once its first event named it
      const onEvent = (event: ChatEvent) => {
        if (event.type === "conversation") {
          turnConversation = event.conversation_id;
          turnId = event.turn_id;
          if (send) {
            send.unseen = false;
            if (remember) keepPendingSend(app, null);
          }
        }
        if (turn.stopped) {
          // Stop came before we knew the conversation: now we do, so the server can stop the turn.
          if (event.type === "conversation") {
            void api.stopTurn(event.conversation_id).catch(() => undefined);
            turn.controller.abort();
          }
          return;
        }
        if (event.type === "conversation") conversationRef.current = event.conversation_id;
        events.push(event);
      };
      let detached = false;
      try {
        const outcome = await followTurn({
          connect: (after, handler, signal) => connect(after, turnConversation, handler, signal, turnId),
          onEvent,
          onReconnecting: () => {
            if (!turn.stopped) dispatch({ type: "reconnecting" });
          },
          signal: turn.controller.signal,
          sleep: (ms, signal) => wait(ms, signal, (wake) => void (turn.wake = wake)),
        });
        detached = outcome.kind === "aborted" && !turn.stopped;
        if (turn.stopped || outcome.kind === "ended" || outcome.kind === "aborted") return;
        const gone = outcome.error instanceof ApiError && outcome.error.status === 404;
        if (turnConversation != null && !gone && (outcome.kind === "lost" || toChatError(outcome.error).retryable)) {
          dispatch({ type: "lost", error: LOST });
        } else if (outcome.kind === "lost" && outcome.error == null) {
          dispatch({
            type: "failed",
            error: { message: "The connection closed before the answer finished.", code: "stream_closed", retryable: true },
          });
        } else {
          dispatch({ type: "failed", error: toChatError(outcome.error) });
        }
      } finally {
        events.flush();
        // Unmounted before the turn named its conversation: the pending send stays for the next tray.
        if (send?.unseen && remember && !detached) keepPendingSend(app, null);
        if (turnRef.current === turn) turnRef.current = null;
        onTurnEndedRef.current?.();
      }
    },
    [app, remember],
  );

  /** Attach to the conversation's running turn from its first event: the replay rebuilds the answer. */
  const resume = useCallback(
    (id: number) =>
      follow((after, _turnConversation, onEvent, signal, turnId) => resumeChat(id, after, onEvent, signal, turnId), id, null),
    [follow],
  );

  /** Show a stored conversation (and resume its running answer). `resuming`: looking up a turn whose
   * connection was lost, so a failure keeps the Retry that looks it up again (never one that re-sends). */
  const open = useCallback(
    async (id: number, resuming = false) => {
      if (turnRef.current) return;
      const opening = ++openingRef.current;
      try {
        const conversation = await api.getConversation(id);
        // A turn began meanwhile, or another open overtook this one: what it shows stays.
        if (turnRef.current || opening !== openingRef.current) return;
        dispatch({ type: "loaded", conversation });
        if (runningAnswer(conversation)) void resume(id);
      } catch (err) {
        if (opening !== openingRef.current) return;
        if (err instanceof ApiError && err.status === 404) {
          rememberConversation(app, null);
          dispatch({ type: "reset" });
          return;
        }
        const error = toChatError(err);
        dispatch({ type: "failed", error: resuming ? { ...LOST, message: `${LOST.message} ${error.message}` } : error });
      }
    },
    [app, resume],
  );
  // Redacted on the server (a patient deleted): show the open conversation as it is stored now.
  useEffect(() => onRedacted(() => {
    if (conversationRef.current != null) void open(conversationRef.current);
  }), [open]);

  /** Show a send as the user's message and a streaming answer, and follow its turn to the end. */
  const followSend = useCallback(
    (send: Send, retry: boolean) => {
      sendRef.current = send;
      const { message, context, action } = send.body;
      dispatch({ type: "send", message, context: context ?? {}, action: action ?? undefined, key: String(++keyRef.current), retry });
      return follow(
        (after, turnConversation, onEvent, signal, turnId) =>
          // Until the turn's first event names its conversation, the same POST (same key) is the way back in.
          turnConversation == null
            ? streamChat(send.body, onEvent, signal, send.key)
            : resumeChat(turnConversation, after, onEvent, signal, turnId),
        null,
        send,
      );
    },
    [follow],
  );

  // Re-open the conversation this app had open before a reload or a switch of app (and resume its turn if it
  // still runs); or pick up a new conversation's send that had not heard back yet.
  useEffect(() => {
    if (unfinished) void followSend({ ...unfinished, unseen: true }, false);
    else if (restoreId != null) void open(restoreId);
    return () => {
      openingRef.current += 1;
      turnRef.current?.controller.abort();
    };
  }, [restoreId, unfinished, open, followSend]);

  const run = useCallback(
    async (
      message: string,
      context: Record<string, unknown>,
      retry: boolean,
      { action, config }: { action?: ChatRequest["action"]; config?: ConfigUpdate | null } = {},
    ) => {
      if (turnRef.current) return;
      // Retry after a send that never heard back re-sends it under the same key: if the server did start
      // that turn, this attaches to it instead of starting a second one.
      const previous = sendRef.current;
      const send: Send =
        retry && previous?.unseen && previous.body.message === message
          ? previous
          : {
              body: {
                message,
                context,
                app,
                ...(conversationRef.current != null ? { conversation_id: conversationRef.current } : {}),
                ...(action ? { action } : {}),
                // Settings chosen before the conversation existed are stored with its first message.
                ...(conversationRef.current == null && config ? { config } : {}),
              },
              key: newKey(),
              unseen: true,
            };
      if (remember && send.body.conversation_id == null) keepPendingSend(app, { body: send.body, key: send.key });
      await followSend(send, retry);
    },
    [app, remember, followSend],
  );

  // Back in view or back online: a reconnect waiting out its backoff goes now, and a turn whose connection
  // was given up is looked up again.
  useEffect(() => {
    const wake = () => {
      if (typeof document !== "undefined" && document.visibilityState === "hidden") return;
      const turn = turnRef.current;
      if (turn) {
        turn.wake?.();
        return;
      }
      if (lostRef.current != null) void open(lostRef.current, true);
    };
    return removeAll([listen(document, "visibilitychange", wake), listen(window, "online", wake)]);
  }, [open]);

  const send = useCallback(
    (message: string, context: Record<string, unknown>, config?: ConfigUpdate | null) => {
      const text = message.trim();
      if (text) void run(text, context, false, { config });
    },
    [run],
  );

  /** A clicked server action: the chat shows its label, the server gets the action (it checks the offer). */
  const sendAction = useCallback(
    (offer: SuggestedAction, context: Record<string, unknown>) =>
      void run(offer.label, context, false, {
        action: { action: offer.action, ...(offer.data && Object.keys(offer.data).length ? { data: offer.data } : {}) },
      }),
    [run],
  );

  const retry = useCallback(() => {
    if (state.error?.resume && state.conversationId != null) void open(state.conversationId, true);
    else if (state.lastRequest) void run(state.lastRequest.message, state.lastRequest.context, true, { action: state.lastRequest.action });
  }, [open, run, state.error, state.conversationId, state.lastRequest]);

  /** Stop the running turn: keep the partial answer, tell the server, drop the stream. */
  const stop = useCallback(() => {
    const turn = turnRef.current;
    if (!turn) return;
    turn.stopped = true;
    turnRef.current = null;
    if (remember) keepPendingSend(app, null); // a stopped send is not picked up again
    dispatch({ type: "stopped" });
    const id = conversationRef.current;
    if (id != null) {
      void api.stopTurn(id).catch(() => undefined);
      turn.controller.abort();
    }
    // Otherwise the stream is read silently until its `conversation` event names what to stop.
  }, [app, remember]);

  const startNew = useCallback(() => {
    if (turnRef.current) return;
    conversationRef.current = null;
    if (remember) rememberConversation(app, null);
    dispatch({ type: "reset" });
  }, [app, remember]);

  /**
   * Send a user message again in place of `messageId` and what followed it: regenerate (the same text) or
   * edit and resend. The server sets them aside as an earlier version first, so history stays what the model
   * will see; once answered, the new message shows its place among the versions.
   */
  const resend = useCallback(
    async (messageId: number, message: string, context: Record<string, unknown>) => {
      const id = conversationRef.current;
      const text = message.trim();
      if (turnRef.current || id == null || !text) return;
      try {
        const conversation = await api.rewind(id, messageId);
        dispatch({ type: "loaded", conversation });
      } catch (err) {
        const error = toChatError(err);
        dispatch({ type: "failed", error: { ...error, message: `Could not send it again: ${error.message}`, retryable: false } });
        return;
      }
      await run(text, context, false);
      try {
        const { versions } = await api.getConversation(id);
        // Another send or another conversation overtook this one: its counts are not for what is shown.
        if (!turnRef.current && conversationRef.current === id) dispatch({ type: "versions", versions: asArray(versions) });
      } catch {
        // The switcher appears on the next open; the answer itself is already shown.
      }
    },
    [run],
  );

  /** Show another version of the tail that starts at `messageId` (the one shown now is kept). */
  const switchVersion = useCallback(async (messageId: number, version: number) => {
    const id = conversationRef.current;
    if (turnRef.current || id == null) return;
    try {
      dispatch({ type: "loaded", conversation: await api.switchVersion(id, messageId, version) });
    } catch (err) {
      const error = toChatError(err);
      dispatch({ type: "failed", error: { ...error, message: `Could not show that version: ${error.message}`, retryable: false } });
    }
  }, []);

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

  return { state, send, sendAction, retry, stop, open, startNew, decide, resend, switchVersion };
}

export type ChatController = ReturnType<typeof useChatStream>;
