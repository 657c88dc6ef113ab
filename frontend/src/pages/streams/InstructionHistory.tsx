/** The instruction history of one stream: who changed what, when and why; a diff between two versions; restore. */
import { useState } from "react";
import type { InstructionDiff, InstructionVersion } from "../../api/types";

export function formatWhen(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A unified diff from the server's `lines`: every line of both texts, with both line numbers. */
export function DiffView({ diff }: { diff: InstructionDiff }) {
  const label = (v: InstructionDiff["from_version"]) => (v ? `v${v.number}` : "(empty)");
  return (
    <div className="diff" data-testid="diff-view">
      <p className="small">
        {label(diff.from_version)} → {label(diff.to_version)}:{" "}
        <span className="diff-added" data-testid="diff-added">+{diff.added}</span>{" "}
        <span className="diff-removed" data-testid="diff-removed">−{diff.removed}</span>
        {diff.added === 0 && diff.removed === 0 && " (the texts are the same)"}
      </p>
      <table className="diff-table">
        <caption className="sr-only">
          Changes from {label(diff.from_version)} to {label(diff.to_version)}
        </caption>
        <thead className="sr-only">
          <tr>
            <th scope="col">Old line</th>
            <th scope="col">New line</th>
            <th scope="col">Change</th>
            <th scope="col">Text</th>
          </tr>
        </thead>
        <tbody>
          {diff.lines.map((line, i) => (
            <tr key={i} className={`diff-${line.op}`} data-testid={`diff-line-${line.op}`}>
              <td className="diff-num">{line.old_line ?? ""}</td>
              <td className="diff-num">{line.new_line ?? ""}</td>
              <td className="diff-sign" aria-label={line.op === "add" ? "added" : line.op === "remove" ? "removed" : "unchanged"}>
                {line.op === "add" ? "+" : line.op === "remove" ? "−" : ""}
              </td>
              <td className="diff-text">{line.text || "\u00a0"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface Props {
  versions: InstructionVersion[] | null;
  error: string | null;
  diff: InstructionDiff | null;
  diffError: string | null;
  /** The editor has unsaved text that a restore would replace. */
  dirty: boolean;
  onDiff: (from: number | null, to: number | null) => void;
  onRestore: (versionId: number, note: string) => Promise<void>;
}

export function InstructionHistory({ versions, error, diff, diffError, dirty, onDiff, onRestore }: Props) {
  const [from, setFrom] = useState<string>("");
  const [to, setTo] = useState<string>("");
  const [restoring, setRestoring] = useState<number | null>(null);
  const [restoreNote, setRestoreNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [restoreError, setRestoreError] = useState<string | null>(null);

  if (error) {
    return (
      <p className="error-text" role="alert" data-testid="history-error">
        {error}
      </p>
    );
  }
  if (!versions) return <p className="muted">Loading the history…</p>;
  if (versions.length === 0) return <p className="muted" data-testid="history-empty">No instructions have been saved for this stream yet.</p>;

  // Defaults: the current version against the one before it.
  const toValue = to || String(versions[0].id);
  const fromValue = from || "previous";
  const option = (v: InstructionVersion) => (
    <option key={v.id} value={v.id}>
      v{v.number}
      {v.current ? " (current)" : ""} · {v.created_by ?? "unknown"} · {formatWhen(v.created_at)}
    </option>
  );

  const restore = async (id: number) => {
    setBusy(true);
    setRestoreError(null);
    try {
      await onRestore(id, restoreNote.trim());
      setRestoring(null);
      setRestoreNote("");
    } catch (err) {
      setRestoreError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="history">
      <ol className="history-list" data-testid="history-list">
        {versions.map((v) => (
          <li key={v.id} className={v.current ? "history-row current" : "history-row"} data-testid="history-row" data-version-id={v.id}>
            <div className="row-gap wrap">
              <strong>v{v.number}</strong>
              {v.current && <span className="badge" data-testid="history-current">current</span>}
              <span>{v.created_by ?? "unknown"}</span>
              <span className="muted small">{formatWhen(v.created_at)}</span>
              <span className="history-note" data-testid="history-note">
                {v.note || <span className="muted">(no note)</span>}
              </span>
              <span className="history-actions">
                <button type="button" className="small-button" data-testid="history-changes" onClick={() => {
                  setTo(String(v.id));
                  setFrom("");
                  onDiff(null, v.id);
                }}>
                  Changes
                </button>
                {!v.current && (
                  <button
                    type="button"
                    className="small-button"
                    data-testid="history-restore"
                    aria-expanded={restoring === v.id}
                    onClick={() => {
                      setRestoring(restoring === v.id ? null : v.id);
                      setRestoreError(null);
                    }}
                  >
                    Restore…
                  </button>
                )}
              </span>
            </div>
            <details className="small">
              <summary>Text</summary>
              <pre className="code-block">{v.text ?? "(no instructions)"}</pre>
            </details>
            {restoring === v.id && (
              <form
                className="restore-form row-gap wrap"
                onSubmit={(e) => {
                  e.preventDefault();
                  void restore(v.id);
                }}
              >
                <label className="grow">
                  Note for the restore (optional)
                  <input data-testid="restore-note" value={restoreNote} maxLength={400} onChange={(e) => setRestoreNote(e.target.value)} />
                </label>
                {dirty && <span className="small warn-text">The editor&apos;s unsaved text will be replaced.</span>}
                <button type="submit" className="primary" data-testid="restore-confirm" disabled={busy}>
                  Restore v{v.number}
                </button>
                <button type="button" onClick={() => setRestoring(null)}>
                  Cancel
                </button>
                {restoreError && (
                  <span className="error-text" role="alert" data-testid="restore-error">
                    {restoreError}
                  </span>
                )}
              </form>
            )}
          </li>
        ))}
      </ol>

      <form
        className="row-gap wrap diff-form"
        aria-label="Compare versions"
        onSubmit={(e) => {
          e.preventDefault();
          onDiff(fromValue === "previous" ? null : Number(fromValue), Number(toValue));
        }}
      >
        <label>
          Compare from
          <select data-testid="diff-from" value={fromValue} onChange={(e) => setFrom(e.target.value)}>
            <option value="previous">the version before it</option>
            {versions.map(option)}
          </select>
        </label>
        <label>
          to
          <select data-testid="diff-to" value={toValue} onChange={(e) => setTo(e.target.value)}>
            {versions.map(option)}
          </select>
        </label>
        <button type="submit" data-testid="diff-show">
          Show changes
        </button>
      </form>
      {diffError && (
        <p className="error-text" role="alert">
          {diffError}
        </p>
      )}
      {diff && <DiffView diff={diff} />}
    </div>
  );
}
