import { Fragment, useLayoutEffect, useRef, useState, type ReactNode } from "react";
import type { Payload, SuggestedAction } from "../api/types";
import { cardFor } from "../cards/registry";
import type { CardProps } from "../cards/types";
import type { ChatMessage, ToolActivity } from "./chatReducer";
import type { OpenEntity } from "./EntityLink";
import { Markdown } from "./Markdown";

export interface MessageCallbacks {
  onEntity: OpenEntity;
  /** Accept/Dismiss handlers for a payload (undefined where not applicable). */
  cardHandlers: (payload: Payload) => Pick<CardProps, "onAccept" | "onDismiss">;
  onValue: (value: string) => void;
  onAction: (action: SuggestedAction) => void;
  canRunAction: (action: SuggestedAction) => boolean;
  /** Shown under a card (what accepting it changed, with Undo). */
  afterCard?: (payload: Payload) => ReactNode;
}

function ToolLine({ tool }: { tool: ToolActivity }) {
  const label = tool.message || tool.stage || (tool.state === "running" ? "Working…" : "");
  return (
    <li className={`tool tool-${tool.state}`} data-testid="tool-activity">
      <span className="tool-name">
        {tool.state === "done" ? "✓" : tool.state === "error" ? "⚠" : tool.state === "stopped" ? "■" : "⋯"} {tool.tool}
      </span>
      {label && <span className="tool-message"> {label}</span>}
      {tool.state === "running" && (
        <progress
          className="tool-progress"
          data-testid="tool-progress"
          max={1}
          aria-label={`${tool.tool} progress`}
          {...(tool.progress != null ? { value: tool.progress } : {})}
        />
      )}
    </li>
  );
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

function UserMessage({ message }: { message: ChatMessage }) {
  return (
    <div className="message message-user" data-testid="message-user">
      <div className="message-text prewrap">{message.content}</div>
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
  const usedTools = message.toolHistory.map((t) => t.tool_name).filter(Boolean);
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
      {message.content ? (
        <AnswerText text={message.content} onEntity={callbacks.onEntity} />
      ) : streaming ? null : (
        <p className="muted">(no text)</p>
      )}
      {message.tools.length > 0 && (streaming || message.status !== "complete") && (
        <ul className="tool-list" aria-label="Tool activity">
          {message.tools.map((t) => (
            <ToolLine key={t.index} tool={t} />
          ))}
        </ul>
      )}
      {!streaming && usedTools.length > 0 && (
        <p className="muted small" data-testid="tools-used">
          Used: {[...new Set(usedTools)].join(", ")}
        </p>
      )}
      {streaming && (
        <p className="status-line" data-testid="chat-status" role="status">
          <span className="spinner" aria-hidden="true" /> {statusText ?? "Working…"}
        </p>
      )}
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
  return props.message.role === "user" ? <UserMessage message={props.message} /> : <AssistantMessage {...props} />;
}
