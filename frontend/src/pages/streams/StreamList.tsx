/** The streams page's sidebar: the list of research streams (optionally with the archived ones) and "New stream". */
import type { Stream } from "../../api/types";
import { Link } from "../../router";

interface Props {
  streams: Stream[] | null;
  error: string | null;
  selectedId: number | null;
  showArchived: boolean;
  onShowArchived: (show: boolean) => void;
}

export function StreamList({ streams, error, selectedId, showArchived, onShowArchived }: Props) {
  return (
    <section className="streams-sidebar" aria-labelledby="streams-list-heading">
      <div className="row-gap">
        <h2 id="streams-list-heading">Streams</h2>
        <Link to="/streams?new=1" className="button-link" data-testid="stream-new">
          New stream
        </Link>
      </div>
      <label className="inline">
        <input type="checkbox" data-testid="streams-show-archived" checked={showArchived} onChange={(e) => onShowArchived(e.target.checked)} />
        Show archived
      </label>
      {error && (
        <p className="error-text" role="alert" data-testid="streams-list-error">
          {error}
        </p>
      )}
      {streams === null ? (
        !error && <p className="muted">Loading…</p>
      ) : streams.length === 0 ? (
        <p className="muted">No streams yet.</p>
      ) : (
        <ul className="stream-list" data-testid="stream-list">
          {streams.map((s) => (
            <li key={s.id}>
              <Link
                to={`/streams?id=${s.id}`}
                className={s.id === selectedId ? "stream-item active" : "stream-item"}
                aria-current={s.id === selectedId ? "page" : undefined}
                data-testid="stream-item"
                data-stream-id={s.id}
              >
                <span className="stream-item-name">
                  {s.name}
                  {s.archived && <span className="badge badge-archived"> archived</span>}
                </span>
                <span className="muted small">
                  {s.version_count} {s.version_count === 1 ? "version" : "versions"}
                  {s.updated_by ? ` · ${s.updated_by}` : ""}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
