import { useState } from "react";
import type { ConversationSummary } from "../api/types";

function titleOf(c: ConversationSummary): string {
  return c.title?.trim() || `Conversation ${c.id}`;
}

function when(iso?: string): string {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

interface Props {
  items: ConversationSummary[];
  currentId: number | null;
  disabled: boolean;
  error: string | null;
  onOpen: (id: number) => void;
  onRename: (id: number, title: string) => void;
  onDelete: (id: number) => void;
}

/** The conversation list inside the tray: open, rename inline, delete with a confirm step. */
export function ConversationList({ items, currentId, disabled, error, onOpen, onRename, onDelete }: Props) {
  const [editing, setEditing] = useState<number | null>(null);
  const [draft, setDraft] = useState("");
  const [confirming, setConfirming] = useState<number | null>(null);

  const commit = (id: number) => {
    const title = draft.trim();
    setEditing(null);
    if (title) onRename(id, title);
  };

  return (
    <div className="conversation-list" data-testid="conversation-list">
      {error && <p className="error-text" role="alert">{error}</p>}
      {items.length === 0 && <p className="muted">No conversations yet.</p>}
      <ul>
        {items.map((c) => (
          <li key={c.id} className={c.id === currentId ? "current" : undefined} data-testid="conversation-item">
            {editing === c.id ? (
              <form
                className="rename-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  commit(c.id);
                }}
              >
                <label className="sr-only" htmlFor={`rename-${c.id}`}>
                  New title
                </label>
                <input
                  id={`rename-${c.id}`}
                  data-testid="conversation-rename-input"
                  value={draft}
                  autoFocus
                  onChange={(e) => setDraft(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === "Escape") {
                      e.stopPropagation();
                      setEditing(null);
                    }
                  }}
                />
                <button type="submit">Save</button>
                <button type="button" onClick={() => setEditing(null)}>
                  Cancel
                </button>
              </form>
            ) : confirming === c.id ? (
              <div className="confirm-row">
                <span>Delete “{titleOf(c)}”?</span>
                <button
                  type="button"
                  className="danger"
                  data-testid="conversation-delete-confirm"
                  onClick={() => {
                    setConfirming(null);
                    onDelete(c.id);
                  }}
                >
                  Delete
                </button>
                <button type="button" onClick={() => setConfirming(null)}>
                  Keep
                </button>
              </div>
            ) : (
              <div className="conversation-row">
                <button
                  type="button"
                  className="link-button conversation-open"
                  disabled={disabled}
                  aria-current={c.id === currentId ? "true" : undefined}
                  onClick={() => onOpen(c.id)}
                >
                  <span className="conversation-title">{titleOf(c)}</span>
                  <span className="muted small">{when(c.updated_at ?? c.created_at)}</span>
                </button>
                <RowAction
                  verb="Rename"
                  title={titleOf(c)}
                  testId="conversation-rename"
                  onClick={() => {
                    setDraft(c.title ?? "");
                    setEditing(c.id);
                  }}
                />
                <RowAction
                  verb="Delete"
                  title={titleOf(c)}
                  testId="conversation-delete"
                  disabled={disabled && c.id === currentId}
                  onClick={() => setConfirming(c.id)}
                />
              </div>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A conversation row's small action button; a screen reader hears which conversation it acts on. */
function RowAction(props: { verb: string; title: string; testId: string; disabled?: boolean; onClick: () => void }) {
  return (
    <button
      type="button"
      className="small-button"
      aria-label={`${props.verb} ${props.title}`}
      data-testid={props.testId}
      disabled={props.disabled}
      onClick={props.onClick}
    >
      {props.verb}
    </button>
  );
}
