import { Fragment, useLayoutEffect, useRef, useState, type ReactNode } from "react";
import type { Payload, SuggestedAction } from "../api/types";
import { cardFor } from "../cards/registry";
import type { CardProps } from "../cards/types";
import type { ChatMessage } from "./chatMessage";
import type { OpenEntity } from "../entities/EntityLink";
import { Markdown } from "./Markdown";
import { AssistantActions, UserActions, VersionSwitcher, type MessageActionHandlers, type VersionControl } from "./MessageActions";
import { interleave, ToolStep } from "./ToolStep";

export interface MessageCallbacks {
  onEntity: OpenEntity;
  /** Accept/Dismiss handlers for a payload (undefined where not applicable). */
  cardHandlers: (payload: Payload) => Pick<CardProps, "onAccept" | "onDismiss">;
  onValue: (value: string) => void;
  onAction: (action: SuggestedAction) => void;
  canRunAction: (action: SuggestedAction) => boolean;
  /** Regenerate / edit handlers for a message (only the last question and answer have them). */
  actions?: (message: ChatMessage) => MessageActionHandlers;
  /** The version switcher of a message where earlier versions branch off (undefined elsewhere). */
  versions?: (message: ChatMessage) => VersionControl | undefined;
  /** Shown under a card (what accepting it changed, with Undo). */
  afterCard?: (payload: Payload) => ReactNode;
}

/** An answer's Markdown; raw HTML is never rendered, so an answer that was only markup says so instead of
 * showing an empty bubble (checked on what actually rendered, since HTML blocks drop their text too). */
function AnswerText({ text, onEntity }: { text: string; onEntity: OpenEntity }) {
  const ref = useRef<HTMLDivElement>(null);
  const [empty, setEmpty] = useState(false);
  useLayoutEffect(() => {
    setEmpty(!(ref.current?.textContent ?? "").trim() && /<[a-zA-Z!/]/.test(text));
  }, [text]);
  return (
    <div className="answer-text">
      <div ref={ref}>
        <Markdown text={text} onEntity={onEntity} />
      </div>
      {empty && (
        <p className="muted" data-testid="html-omitted">
          (HTML omitted)
        </p>
      )}
    </div>
  );
}

function UserMessage({ message, callbacks }: { message: ChatMessage; callbacks: MessageCallbacks }) {
  const versions = callbacks.versions?.(message);
  return (
    <div className="message message-user" data-testid="message-user">
      <div className="message-text prewrap">{message.content}</div>
      {versions && <VersionSwitcher {...versions} />}
      <UserActions {...callbacks.actions?.(message)} />
      {message.context && (
        <details className="message-context" data-testid="message-context">
          <summary>What the assistant saw</summary>
          <pre className="code-block">{JSON.stringify(message.context, null, 2)}</pre>
        </details>
      )}
    </div>
  );
}

function AssistantMessage({
  message,
  isLast,
  statusText,
  callbacks,
}: {
  message: ChatMessage;
  isLast: boolean;
  statusText: string | null;
  callbacks: MessageCallbacks;
}) {
  const streaming = message.status === "streaming";
  return (
    <div className={`message message-assistant status-${message.status}`} data-testid="message-assistant" aria-busy={streaming}>
      {message.notices.length > 0 && (
        <ul className="chat-notices" aria-label="Notices">
          {message.notices.map((n, i) => (
            <li key={i} data-testid="chat-notice">
              {n}
            </li>
          ))}
        </ul>
      )}
      {interleave(message.content, message.tools).map((segment) =>
        segment.kind === "tools" ? (
          <div key={segment.key} className="tool-steps" role="group" aria-label="Tool steps">
            {segment.steps.map((t) => (
              <ToolStep key={t.index} step={t} />
            ))}
          </div>
        ) : segment.text ? (
          <AnswerText key={segment.key} text={segment.text} onEntity={callbacks.onEntity} />
        ) : null,
      )}
      {!message.content && !streaming && message.tools.length === 0 && <p className="muted">(no text)</p>}
      {streaming && (
        <p className="status-line" data-testid="chat-status" role="status">
          <span className="spinner" aria-hidden="true" /> {statusText ?? "Working…"}
        </p>
      )}
      {!streaming && <AssistantActions markdown={message.content} {...callbacks.actions?.(message)} />}
      {message.status === "interrupted" && (
        <p className="muted small" data-testid="message-interrupted">
          Stopped — the answer above is partial.
        </p>
      )}
      {message.payloads.map((p) => {
        const Card = cardFor(p.type);
        return (
          <Fragment key={p.id}>
            <Card payload={p} decision={p.decision} onEntity={callbacks.onEntity} {...callbacks.cardHandlers(p)} />
            {callbacks.afterCard?.(p)}
          </Fragment>
        );
      })}
      {isLast && !streaming && message.suggestedValues.length > 0 && (
        <div className="chips" aria-label="Suggested replies">
          {message.suggestedValues.map((v, i) => (
            <button key={i} type="button" className="chip" data-testid="suggested-value" onClick={() => callbacks.onValue(v.value)}>
              {v.label}
            </button>
          ))}
        </div>
      )}
      {isLast && !streaming && message.suggestedActions.length > 0 && (
        <div className="suggested-actions" aria-label="Suggested actions">
          {message.suggestedActions.map((a, i) => (
            <button
              key={i}
              type="button"
              data-testid="suggested-action"
              disabled={!callbacks.canRunAction(a)}
              title={callbacks.canRunAction(a) ? undefined : "Not available on this page"}
              onClick={() => callbacks.onAction(a)}
            >
              {a.label}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

export function MessageView(props: {
  message: ChatMessage;
  isLast: boolean;
  statusText: string | null;
  callbacks: MessageCallbacks;
}) {
  return props.message.role === "user" ? <UserMessage message={props.message} callbacks={props.callbacks} /> : <AssistantMessage {...props} />;
}
