/**
 * The tray header's settings popover: the conversation's model, the answer's length limit and whether long
 * histories are trimmed (spec: Trial Navigator "Per-Session Config"). An open conversation's settings are
 * stored at once (`config_update`) and the server's `config_ack` is shown; a conversation not yet started
 * keeps them here and sends them with its first message (`onPending`). A change during a turn applies to
 * the next one.
 */
import { useEffect, useRef, useState } from "react";
import { api } from "../api/client";
import type { ChatModels, ConfigUpdate, ConversationConfig } from "../api/types";

interface Props {
  conversationId: number | null;
  /** The settings a new conversation should start with (null: the defaults). */
  onPending: (config: ConfigUpdate | null) => void;
  /** The built-in demo model answers (no API key): the button is also the tray's one "demo model" badge. */
  demo?: { text: string } | null;
}

export function ConversationSettings({ conversationId, onPending, demo = null }: Props) {
  const [models, setModels] = useState<ChatModels | null>(null);
  const [current, setCurrent] = useState<ConversationConfig | null>(null);
  const [draft, setDraft] = useState<ConversationConfig | null>(null);
  const [open, setOpen] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const onPendingRef = useRef(onPending); // the tray passes a new function each render
  onPendingRef.current = onPending;

  useEffect(() => {
    let live = true;
    api.chatModels().then((m) => live && setModels(m), () => undefined);
    return () => {
      live = false;
    };
  }, []);

  // Another conversation (or a new one): its stored settings, or the defaults until the first message.
  useEffect(() => {
    let live = true;
    setNote(null);
    setError(null);
    if (conversationId == null) {
      setCurrent(models?.default ?? null);
      onPendingRef.current(null);
    } else {
      api.getConversationConfig(conversationId).then(
        (c) => live && setCurrent(c),
        () => undefined,
      );
    }
    return () => {
      live = false;
    };
  }, [conversationId, models]);

  useEffect(() => {
    if (open) setDraft(current);
  }, [open, current]);

  const save = async () => {
    if (!draft) return;
    const update: ConfigUpdate = { model: draft.model, max_tokens: draft.max_tokens, compaction: draft.compaction };
    setError(null);
    if (conversationId == null) {
      const label = models?.models.find((m) => m.id === draft.model)?.label ?? draft.model;
      setCurrent({ ...draft, model_label: label });
      onPending(update);
      setNote(`${label} · ${draft.max_tokens.toLocaleString()} tokens: used from your first message`);
      setOpen(false);
      return;
    }
    try {
      const ack = await api.updateConversationConfig(conversationId, update);
      setCurrent(ack);
      setNote(`Saved: ${ack.model_label} · ${ack.max_tokens.toLocaleString()} tokens · compaction ${ack.compaction ? "on" : "off"}`);
      setOpen(false);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  const [low, high] = models?.max_tokens_range ?? [256, 64000];
  return (
    <div className="chat-settings">
      <button
        type="button"
        className={demo ? "badge-demo" : undefined}
        aria-expanded={open}
        aria-haspopup="dialog"
        data-testid="chat-settings-toggle"
        title={demo ? "The built-in demo model answers (no API key). Model settings of this conversation" : "Model settings of this conversation"}
        onClick={() => setOpen((v) => !v)}
      >
        {demo ? <span data-testid="model-label">{demo.text}</span> : current?.model_label ?? "Model"} ▾
      </button>
      {open && draft && (
        <form
          className="chat-settings-popover"
          role="dialog"
          aria-label="Conversation settings"
          data-testid="chat-settings"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <label>
            Model
            <select
              data-testid="chat-settings-model"
              value={draft.model}
              onChange={(e) => setDraft({ ...draft, model: e.target.value })}
            >
              {(models?.models ?? [{ id: draft.model, label: draft.model_label, context_window: draft.context_window }]).map((m) => (
                <option key={m.id} value={m.id}>
                  {m.label} ({Math.round(m.context_window / 1000)}k context)
                </option>
              ))}
            </select>
          </label>
          <label>
            Longest answer (tokens)
            <input
              type="number"
              data-testid="chat-settings-max-tokens"
              min={low}
              max={high}
              step={256}
              value={draft.max_tokens}
              onChange={(e) => setDraft({ ...draft, max_tokens: Number(e.target.value) })}
            />
          </label>
          <label className="inline">
            <input
              type="checkbox"
              data-testid="chat-settings-compaction"
              checked={draft.compaction}
              onChange={(e) => setDraft({ ...draft, compaction: e.target.checked })}
            />
            Trim long histories (compaction)
          </label>
          {error && (
            <p className="error-text small" role="alert">
              {error}
            </p>
          )}
          <div className="chat-settings-actions">
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" className="primary" data-testid="chat-settings-save">
              Save
            </button>
          </div>
        </form>
      )}
      {note && !open && (
        <span className="muted small chat-settings-note" role="status" data-testid="chat-settings-note">
          {note}
        </span>
      )}
    </div>
  );
}
