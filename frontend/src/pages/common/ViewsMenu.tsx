/**
 * Named views of a results page (Airtable's and Notion's views): save what the page shows under a name,
 * open one again, delete one (asked once, then Undo saves it back).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { viewsApi, type SavedView, type ViewApp, type ViewStateJson } from "../../api/views";
import { useDismissable } from "../../useDismissable";
import type { SaveStatus } from "../../state/savedView";

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function ViewsMenu({ app, current, onOpen, status }: {
  app: ViewApp;
  /** What the page shows now, as a view's state. */
  current: () => ViewStateJson | null;
  onOpen: (state: ViewStateJson) => void;
  status: SaveStatus;
}) {
  const [views, setViews] = useState<SavedView[]>([]);
  const [name, setName] = useState("");
  const [note, setNote] = useState("");
  const [confirming, setConfirming] = useState<number | null>(null);
  const [deleted, setDeleted] = useState<SavedView | null>(null);
  const ref = useRef<HTMLDetailsElement>(null);
  useDismissable(ref);

  const reload = useCallback(() => viewsApi.list(app).then(setViews, () => setViews([])), [app]);
  useEffect(() => void reload(), [reload]);

  const save = async () => {
    const state = current();
    if (!state || !name.trim()) return;
    try {
      await viewsApi.create(app, name.trim(), state);
      setNote(`Saved “${name.trim()}”.`);
      setName("");
      await reload();
    } catch (err) {
      setNote(message(err));
    }
  };
  const remove = async (view: SavedView) => {
    setConfirming(null);
    try {
      await viewsApi.remove(app, view.id);
      setDeleted(view);
      setNote("");
      await reload();
    } catch (err) {
      setNote(message(err));
    }
  };
  const undoDelete = async () => {
    if (!deleted) return;
    try {
      await viewsApi.create(app, deleted.name, deleted.state);
      setNote(`Restored “${deleted.name}”.`);
      setDeleted(null);
      await reload();
    } catch (err) {
      setNote(message(err));
    }
  };

  return (
    <details className="views-menu" data-testid="views-menu" ref={ref} onToggle={(e) => (e.currentTarget.open ? void reload() : undefined)}>
      <summary>
        Views{views.length ? ` (${views.length})` : ""}
        <span className="muted small save-status" data-testid="view-save-status" data-status={status}>
          {status === "saving" ? " · saving…" : status === "saved" ? " · saved" : status === "error" ? " · not saved" : ""}
        </span>
      </summary>
      <div className="views-panel">
        <form
          className="export-row"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <label className="small">
            Save this view as{" "}
            <input data-testid="view-name" value={name} maxLength={120} onChange={(e) => setName(e.target.value)} placeholder="e.g. Brain mets allowed" />
          </label>
          <button type="submit" data-testid="view-save" disabled={!name.trim()}>
            Save view
          </button>
        </form>
        {views.length === 0 ? (
          <p className="muted small">No saved views yet.</p>
        ) : (
          <ul className="views-list" data-testid="views-list">
            {views.map((v) => (
              <li key={v.id} data-testid="saved-view" data-name={v.name}>
                <button type="button" className="link-button" data-testid="view-open" onClick={() => {
                  onOpen(v.state);
                  setNote(`Opened “${v.name}”.`);
                  if (ref.current) ref.current.open = false;
                }}>
                  {v.name}
                </button>
                {confirming === v.id ? (
                  <span className="small">
                    {" "}Delete “{v.name}”?{" "}
                    <button type="button" data-testid="view-delete-confirm" onClick={() => void remove(v)}>Delete</button>{" "}
                    <button type="button" className="link-button" onClick={() => setConfirming(null)}>Keep</button>
                  </span>
                ) : (
                  <button type="button" className="icon-button" aria-label={`Delete view ${v.name}`} data-testid="view-delete" onClick={() => setConfirming(v.id)}>
                    ×
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        <p className="small" role="status" data-testid="views-status">
          {deleted ? (
            <>
              Deleted “{deleted.name}”.{" "}
              <button type="button" className="link-button" data-testid="view-undo-delete" onClick={() => void undoDelete()}>Undo</button>
            </>
          ) : note}
        </p>
      </div>
    </details>
  );
}
