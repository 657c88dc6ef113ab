/**
 * The chat tray beside a page. The page supplies its live context, what it
 * does when a suggestion is accepted, its client actions and how to open a
 * trial or article; the tray does the rest.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import type { App, ConfigUpdate, Payload, StreamInfo, SuggestedAction } from "../api/types";
import { SUGGESTION_TYPES } from "../cards/registry";
import type { AcceptOptions } from "../cards/types";
import type { AcceptOutcome } from "../state/undo";
import { AcceptNote } from "./AcceptNote";
import { useAnswerAnnouncement } from "./announce";
import { canRunAction, type ClientActions } from "./clientActions";
import { ContextMeter } from "./ContextMeter";
import { ConversationExport } from "./ConversationExport";
import { ConversationList } from "./ConversationList";
import { ConversationSettings } from "./ConversationSettings";
import type { OpenEntity } from "../entities/EntityLink";
import { MessageView, type MessageCallbacks } from "./MessageView";
import { StarterPrompts } from "./StarterPrompts";
import { useChatStream } from "./useChatStream";
import { useLocation } from "../router";
import { chatFromUrl, patchUrl } from "../state/urlState";
import { useConversations } from "./useConversations";
import { useFocusTrap, useIsPhone } from "../modalSheet";
import { useDraft } from "./useDraft";

export interface PageChatBinding {
  app: App;
  /** The page's context, read at the moment a message is sent. */
  getContext: () => Record<string, unknown>;
  /** Apply an accepted payload to the page, by payload type. May throw to refuse. May report what it changed,
   * with an Undo (shown under the card). */
  payloadHandlers: Partial<
    Record<string, (data: Record<string, unknown>, options?: AcceptOptions) => AcceptResult | Promise<AcceptResult>>
  >;
  /** Suggested actions with handler "client": exactly the page config's client actions, run with their data. */
  clientActions: ClientActions;
  onEntity: OpenEntity;
  /** Shown under the tray's header (e.g. "Sandbox: trying a draft"). */
  banner?: ReactNode;
  /** false: the tray neither reopens nor remembers its last conversation (a sandbox). Default true. */
  remember?: boolean;
}

type AcceptResult = void | AcceptOutcome;

interface ChatTrayProps {
  binding: PageChatBinding;
  onClose: () => void;
  /** "demo model" when the demo model answers (the settings button is badged with it); with Claude the settings
   * button names the conversation's model. */
  modelLabel?: { text: string; demo: boolean } | null;
}

/** Which stream's instructions shaped the latest answer: "Stream: EGFR · instructions v3", "… · draft". */
export function StreamBadge({ stream }: { stream: StreamInfo }) {
  const which = stream.draft
    ? "draft"
    : !stream.applied
      ? "no instructions"
      : stream.version_number != null
        ? `instructions v${stream.version_number}`
        : "instructions";
  return (
    <div
      className={stream.draft ? "chat-stream chat-stream-draft" : "chat-stream"}
      data-testid="stream-badge"
      role="status"
      title={stream.applied ? "This stream's chat instructions are part of the assistant's prompt" : "This stream has no chat instructions"}
    >
      <span className="badge">Stream: {stream.name}</span> <span className="muted small">{which}</span>
    </div>
  );
}

export function ChatTray({ binding, onClose, modelLabel }: ChatTrayProps) {
  const { app } = binding;
  const conversations = useConversations(app);
  const { params } = useLocation();
  const urlConversation = chatFromUrl(params).conversation;
  const chat = useChatStream({
    app,
    onTurnEnded: conversations.refresh,
    remember: binding.remember,
    initialConversation: urlConversation,
  });
  const { state } = chat;
  const [draft, setDraft] = useDraft(app, state.conversationId);
  const announcement = useAnswerAnnouncement(state.messages);
  const trayRef = useRef<HTMLElement>(null);
  // On a phone the tray is a full-screen sheet: a modal dialog keeping focus inside (beside the page, it is not).
  const phone = useIsPhone();
  useFocusTrap(trayRef, phone);
  const [showList, setShowList] = useState(false);
  const pendingConfig = useRef<ConfigUpdate | null>(null); // settings for a conversation not started yet
  const [outcomes, setOutcomes] = useState<Record<string, AcceptOutcome>>({});
  /** Editing the last question: the id of the user message the draft will replace. */
  const [editing, setEditing] = useState<number | null>(null);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const logRef = useRef<HTMLDivElement>(null);
  const bindingRef = useRef(binding);
  bindingRef.current = binding;

  useEffect(() => {
    inputRef.current?.focus();
  }, []);

  // The open conversation is in the URL (`c=`); Back/Forward to another one opens it.
  // (On mount the tray is still opening the URL's conversation: nothing to write yet.)
  const shownConversation = useRef<number | null | undefined>(undefined);
  useEffect(() => {
    if (binding.remember === false) return;
    if (shownConversation.current === undefined) {
      shownConversation.current = urlConversation;
      return;
    }
    shownConversation.current = state.conversationId;
    if (state.conversationId !== chatFromUrl(new URLSearchParams(window.location.search)).conversation) {
      patchUrl({ c: state.conversationId == null ? null : String(state.conversationId) });
    }
  }, [state.conversationId, binding.remember]);
  useEffect(() => {
    if (binding.remember === false || urlConversation == null || state.streaming || shownConversation.current === undefined) return;
    if (urlConversation !== shownConversation.current) void chat.open(urlConversation);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only a URL change opens another conversation
  }, [urlConversation]);

  // Keep the newest text in view while streaming, unless the user scrolled up to read.
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const log = logRef.current;
    if (log && pinned.current) log.scrollTop = log.scrollHeight;
  }, [state.messages]);

  const sendText = useCallback(
    (text: string) => {
      if (state.streaming || !text.trim()) return;
      chat.send(text, bindingRef.current.getContext(), pendingConfig.current);
      pinned.current = true;
    },
    [chat, state.streaming],
  );

  // The last question and answer, which Edit and Regenerate send again (only once the server knows them).
  const lastUser = [...state.messages].reverse().find((m) => m.role === "user");
  const lastAssistant = state.messages[state.messages.length - 1];
  const canResend = !state.streaming && state.conversationId != null && lastUser?.id != null;

  const startEdit = () => {
    if (!canResend || !lastUser) return;
    setEditing(lastUser.id ?? null);
    setDraft(lastUser.content);
    requestAnimationFrame(() => inputRef.current?.focus());
  };

  const submit = () => {
    if (state.streaming || !draft.trim()) return;
    if (editing != null) {
      void chat.resend(editing, draft, bindingRef.current.getContext());
      pinned.current = true;
      setEditing(null);
    } else {
      sendText(draft);
    }
    setDraft("");
  };

  const onInputKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Escape") {
      // The first Escape only leaves the box (the draft stays); the next one, from the tray, closes it. On a
      // phone's sheet an empty box has nothing to keep: Escape closes at once (the tray's handler below).
      if (phone && !draft) return;
      e.preventDefault();
      trayRef.current?.focus();
      return;
    }
    if (e.key === "ArrowUp" && !draft && canResend && !e.nativeEvent.isComposing) {
      e.preventDefault();
      startEdit();
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      submit();
    }
  };

  const callbacks: MessageCallbacks = {
    onEntity: (kind, id) => bindingRef.current.onEntity(kind, id),
    cardHandlers: (payload: Payload) => {
      if (!SUGGESTION_TYPES.has(payload.type)) return {};
      const apply = bindingRef.current.payloadHandlers[payload.type];
      return {
        onAccept: apply
          ? async (options?: AcceptOptions) => {
              const outcome = await apply(payload.data, options);
              if (outcome) setOutcomes((o) => ({ ...o, [payload.id]: outcome }));
              await chat.decide(payload.id, "accepted");
            }
          : undefined,
        onDismiss: () => chat.decide(payload.id, "dismissed"),
      };
    },
    actions: (m) => {
      if (!canResend || !lastUser) return {};
      if (m === lastUser) return { onEdit: startEdit };
      if (m === lastAssistant && m.role === "assistant" && lastUser.id != null) {
        const question = lastUser;
        return {
          onRegenerate: () => {
            void chat.resend(question.id as number, question.content, bindingRef.current.getContext());
            pinned.current = true;
          },
        };
      }
      return {};
    },
    versions: (m) => {
      const fork = m.id != null ? state.versions.find((v) => v.message_id === m.id) : undefined;
      if (!fork) return undefined;
      const id = m.id as number;
      return {
        current: fork.current,
        count: fork.count,
        onSwitch: state.streaming ? undefined : (version: number) => void chat.switchVersion(id, version),
      };
    },
    afterCard: (payload: Payload) => {
      const outcome = outcomes[payload.id];
      return outcome ? <AcceptNote outcome={outcome} /> : null;
    },
    onValue: (value) => sendText(value),
    canRunAction: (a: SuggestedAction) =>
      a.handler === "server" ? !state.streaming : canRunAction(bindingRef.current.clientActions, a.action, a.data ?? {}),
    onAction: (a: SuggestedAction) => {
      const actions = bindingRef.current.clientActions;
      if (a.handler === "server") {
        if (state.streaming) return;
        chat.sendAction(a, bindingRef.current.getContext());
        pinned.current = true;
      } else if (canRunAction(actions, a.action, a.data ?? {})) {
        void actions[a.action].run(a.data ?? {});
      }
    },
  };

  const lastIndex = state.messages.length - 1;
  // The newest answer that knows its stream (a just-sent turn learns it from its `conversation` event).
  const lastAnswer = [...state.messages].reverse().find((m) => m.role === "assistant" && m.stream !== undefined);

  return (
    <section
      ref={trayRef}
      tabIndex={-1}
      className="chat-tray"
      data-testid="chat-tray"
      role={phone ? "dialog" : "complementary"}
      aria-modal={phone ? "true" : undefined}
      aria-label="Colleague chat"
      onKeyDown={(e) => {
        if (e.key === "Escape" && !e.defaultPrevented) {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <header className="chat-header">
        <h2>Colleague</h2>
        <div className="chat-header-actions">
          <ConversationSettings
            conversationId={state.conversationId}
            onPending={(c) => (pendingConfig.current = c)}
            demo={modelLabel?.demo ? modelLabel : null}
          />
          <button
            type="button"
            aria-expanded={showList}
            data-testid="conversations-toggle"
            onClick={() => {
              setShowList((v) => !v);
              void conversations.refresh();
            }}
          >
            History
          </button>
          {state.conversationId != null && !state.streaming && <ConversationExport id={state.conversationId} />}
          <button type="button" data-testid="chat-new" disabled={state.streaming} onClick={() => {
            chat.startNew();
            setShowList(false);
            inputRef.current?.focus();
          }}>
            New
          </button>
          <button type="button" className="icon-button" aria-label="Close chat" data-testid="chat-close" onClick={onClose}>
            ×
          </button>
        </div>
      </header>

      {binding.banner}
      {lastAnswer?.stream && <StreamBadge stream={lastAnswer.stream} />}

      {showList && (
        <ConversationList
          items={conversations.items}
          currentId={state.conversationId}
          disabled={state.streaming}
          error={conversations.error}
          onOpen={(id) => {
            void chat.open(id);
            setShowList(false);
          }}
          onRename={(id, title) => void conversations.rename(id, title)}
          onDelete={(id) => {
            if (id === state.conversationId) chat.startNew();
            void conversations.remove(id);
          }}
        />
      )}

      <div
        className="chat-log"
        ref={logRef}
        role="log"
        aria-live="off" /* streamed chunks are not read out; the finished answer is, once (below) */
        data-testid="chat-log"
        onScroll={(e) => {
          const el = e.currentTarget;
          pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {state.messages.length === 0 && <StarterPrompts app={app} disabled={state.streaming} onPick={sendText} />}
        {state.messages.map((m, i) => (
          <MessageView
            key={m.key}
            message={m}
            isLast={i === lastIndex}
            statusText={state.reconnecting ? "Reconnecting…" : state.statusText}
            callbacks={callbacks}
          />
        ))}
        {state.error && (
          <div className="chat-error" role="alert" data-testid="chat-error">
            <span>{state.error.message}</span>
            {state.error.retryable && (state.lastRequest || state.error.resume) && !state.streaming && (
              <button type="button" data-testid="chat-retry" onClick={chat.retry}>
                Retry
              </button>
            )}
          </div>
        )}
      </div>

      <div className="sr-only" role="status" aria-live="polite" data-testid="chat-announcer">
        {announcement}
      </div>

      <footer className="chat-footer">
        {state.context && <ContextMeter context={state.context} usage={state.usage} />}
        {editing != null && (
          <p className="chat-editing small" data-testid="chat-editing">
            Editing your last message — Send replaces it and its answer.{" "}
            <button
              type="button"
              className="link-button"
              onClick={() => {
                setEditing(null);
                setDraft("");
              }}
            >
              Cancel
            </button>
          </p>
        )}
        <form
          className="chat-form"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <label htmlFor={`chat-input-${app}`} className="sr-only">
            Message Colleague
          </label>
          <textarea
            id={`chat-input-${app}`}
            ref={inputRef}
            data-testid="chat-input"
            rows={2}
            placeholder="Ask Colleague… (Enter sends, Shift+Enter for a new line)"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={onInputKey}
          />
          {state.streaming ? (
            <button type="button" className="danger" data-testid="chat-stop" onClick={chat.stop}>
              Stop
            </button>
          ) : (
            <button type="submit" className="primary" data-testid="chat-send" disabled={!draft.trim()}>
              Send
            </button>
          )}
        </form>
      </footer>
    </section>
  );
}
