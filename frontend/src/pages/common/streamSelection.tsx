/**
 * The research stream a page chats in: a selector fed by GET /api/streams ("No stream" by default),
 * remembered per app. The selected id goes into the chat context as `stream_id`; the tray shows which
 * stream's instructions the answer used.
 */
import { useCallback, useEffect, useState } from "react";
import { api } from "../../api/client";
import type { Stream } from "../../api/types";

const storageKey = (app: string) => `colleague.stream.${app}`;

function remembered(app: string): number | null {
  try {
    const id = Number(localStorage.getItem(storageKey(app)));
    return Number.isInteger(id) && id > 0 ? id : null;
  } catch {
    return null;
  }
}

function remember(app: string, id: number | null): void {
  try {
    if (id == null) localStorage.removeItem(storageKey(app));
    else localStorage.setItem(storageKey(app), String(id));
  } catch {
    // storage unavailable: the choice lasts for this page only
  }
}

export interface StreamSelection {
  streams: Stream[] | null;
  error: string | null;
  selectedId: number | null;
  /** The selected stream, when the list has it (an archived or deleted one it does not). */
  selected: Stream | null;
  select: (id: number | null) => void;
}

export function useStreamSelection(app: "tablizer" | "trialscout"): StreamSelection {
  const [streams, setStreams] = useState<Stream[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selectedId, setSelectedId] = useState<number | null>(() => remembered(app));

  useEffect(() => {
    let live = true;
    api.listStreams().then(
      (list) => live && setStreams(list),
      (err) => live && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, []);

  const select = useCallback(
    (id: number | null) => {
      setSelectedId(id);
      remember(app, id);
    },
    [app],
  );

  return { streams, error, selectedId, selected: streams?.find((s) => s.id === selectedId) ?? null, select };
}

interface Props {
  selection: StreamSelection;
  /** e.g. "Use its PubMed query"; shown when the selected stream has a default for this page. */
  loadLabel: string;
  canLoad: (stream: Stream) => boolean;
  onLoad: (stream: Stream) => void;
}

export function StreamSelector({ selection, loadLabel, canLoad, onLoad }: Props) {
  const { streams, error, selectedId, selected, select } = selection;
  // A remembered stream that is no longer listed (archived, removed) stays selected, visibly: the chat
  // then says why its instructions are not applied.
  const missing = selectedId != null && streams !== null && !selected;
  return (
    <div className="stream-bar" data-testid="stream-bar">
      <label className="inline">
        Research stream
        <select
          data-testid="stream-select"
          value={selectedId ?? ""}
          onChange={(e) => select(e.target.value ? Number(e.target.value) : null)}
        >
          <option value="">No stream</option>
          {(streams ?? []).map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
          {selectedId != null && !selected && (
            <option value={selectedId}>{missing ? `Stream ${selectedId} (unavailable)` : `Stream ${selectedId}`}</option>
          )}
        </select>
      </label>
      {selected && canLoad(selected) && (
        <button type="button" className="small-button" data-testid="stream-load-defaults" onClick={() => onLoad(selected)}>
          {loadLabel}
        </button>
      )}
      {selected?.description && (
        <span className="muted small stream-bar-description" title={selected.description}>
          {selected.description}
        </span>
      )}
      {missing && (
        <span className="warn-text small" data-testid="stream-missing">
          This stream is archived or no longer exists; its instructions are not applied.
        </span>
      )}
      {error && (
        <span className="error-text small" role="alert" data-testid="stream-list-error">
          Streams could not be loaded: {error}
        </span>
      )}
    </div>
  );
}
