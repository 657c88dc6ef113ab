/**
 * The Chat instructions tab of a stream: the editor with its optimistic-concurrency save (a 409 offers to
 * reload while keeping the admin's text), "Try it" (prompt preview and the sandbox), and the history with
 * diffs and restore. `useInstructionsEditor` holds the state, because the page's chat reads and fills the draft.
 */
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { ApiError, api } from "../../api/client";
import type { InstructionDiff, InstructionVersion, Stream } from "../../api/types";
import { InstructionHistory } from "./InstructionHistory";
import { idle, message, OutcomeText, type Outcome } from "./Outcome";
import { PromptPreview, type TryTarget } from "./PromptPreview";

export const MAX_INSTRUCTIONS = 10_000;

interface Conflict {
  message: string;
  /** After a reload: the admin's unsaved text, which the reload replaced in the editor. */
  mine: string | null;
}

/**
 * The instructions of the stream `streamId` (loaded by the page as `stream`): the draft, the version a save
 * builds on, the save's outcome or conflict, and the history. Opening another stream clears all but the draft,
 * which the page sets with `take` once the stream has loaded.
 */
export function useInstructionsEditor(streamId: number | null, stream: Stream | null, setStream: (s: Stream) => void, refreshList: () => void) {
  const [draft, setDraft] = useState("");
  const [note, setNote] = useState("");
  const [baseVersion, setBaseVersion] = useState<number | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(idle);
  const [conflict, setConflict] = useState<Conflict | null>(null);

  const [history, setHistory] = useState<InstructionVersion[] | null>(null);
  const [historyError, setHistoryError] = useState<string | null>(null);
  const [diff, setDiff] = useState<InstructionDiff | null>(null);
  const [diffError, setDiffError] = useState<string | null>(null);

  useEffect(() => {
    setHistory(null);
    setHistoryError(null);
    setDiff(null);
    setDiffError(null);
    setConflict(null);
    setNote("");
    setOutcome(idle);
    if (streamId == null) return;
    let live = true;
    api.instructionHistory(streamId).then(
      (h) => live && setHistory(h),
      (err) => live && setHistoryError(`The history could not be loaded: ${message(err)}`),
    );
    return () => {
      live = false;
    };
  }, [streamId]);

  const loadHistory = useCallback(async (id: number) => {
    try {
      setHistory(await api.instructionHistory(id));
      setHistoryError(null);
    } catch (err) {
      setHistoryError(`The history could not be loaded: ${message(err)}`);
    }
  }, []);

  /** The saved instructions become the editor's text and the version a save builds on. */
  const take = useCallback((s: Stream) => {
    setDraft(s.chat_instructions ?? "");
    setBaseVersion(s.current_version_id);
  }, []);

  const saved = stream?.chat_instructions ?? "";
  const dirty = stream !== null && draft !== saved;

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!stream) return;
    if (!dirty) {
      setOutcome({ ...idle, saved: "Nothing to save: the text is the saved version." });
      return;
    }
    setOutcome({ ...idle, busy: true });
    try {
      const s = await api.updateStream(stream.id, {
        chat_instructions: draft.trim() ? draft : null,
        ...(note.trim() ? { note: note.trim() } : {}),
        ...(baseVersion != null ? { expected_version_id: baseVersion } : {}),
      });
      setStream(s);
      take(s);
      setNote("");
      setConflict(null);
      setOutcome({ ...idle, saved: s.current_version_number != null ? `Saved as v${s.current_version_number}.` : "Saved." });
      setDiff(null);
      void loadHistory(s.id);
      refreshList();
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setConflict({ message: err.message, mine: null });
        setOutcome(idle);
      } else {
        setOutcome({ ...idle, error: message(err) });
      }
    }
  };

  /** After a 409: load the newer version into the editor, keeping the admin's text to put back. */
  const reloadAfterConflict = async () => {
    if (!stream) return;
    const mine = draft;
    try {
      const s = await api.getStream(stream.id);
      setStream(s);
      take(s);
      setConflict({ message: "The editor now shows the newest saved instructions.", mine });
      void loadHistory(s.id);
    } catch (err) {
      setConflict({ message: `Reloading failed: ${message(err)}`, mine: null });
    }
  };

  const restore = async (versionId: number, restoreNote: string) => {
    if (!stream) return;
    const old = history?.find((v) => v.id === versionId);
    const s = await api.restoreInstructions(stream.id, versionId, restoreNote || undefined);
    setStream(s);
    take(s);
    setConflict(null);
    setOutcome({ ...idle, saved: `Restored v${old?.number ?? "?"} as v${s.current_version_number}.` });
    setDiff(null);
    void loadHistory(s.id);
    refreshList(); // the sidebar's version count grew too
  };

  const showDiff = async (from: number | null, to: number | null) => {
    if (!stream) return;
    try {
      setDiff(await api.instructionDiff(stream.id, from, to));
      setDiffError(null);
    } catch (err) {
      setDiff(null);
      setDiffError(message(err));
    }
  };

  return {
    draft,
    setDraft,
    note,
    setNote,
    baseVersion,
    saved,
    dirty,
    outcome,
    conflict,
    setConflict,
    history,
    historyError,
    diff,
    diffError,
    take,
    save,
    reloadAfterConflict,
    restore,
    showDiff,
  };
}

export type InstructionsEditorState = ReturnType<typeof useInstructionsEditor>;

/** The tab's content: the editor form (with the conflict notice), "Try it", and the history. */
export function InstructionsEditor({ stream, editor, onTryDraft }: { stream: Stream; editor: InstructionsEditorState; onTryDraft: (target: TryTarget) => void }) {
  const { draft, setDraft, note, setNote, saved, dirty, outcome, conflict, setConflict } = editor;
  return (
    <>
      <form className="stream-form" onSubmit={editor.save} aria-label="Chat instructions">
        <label htmlFor="stream-instructions">Chat instructions</label>
        <p className="muted small" id="stream-instructions-help">
          Added to the assistant&apos;s prompt whenever a page chats inside this stream.
        </p>
        <textarea
          id="stream-instructions"
          aria-describedby="stream-instructions-help stream-instructions-state"
          data-testid="instructions-editor"
          rows={10}
          maxLength={MAX_INSTRUCTIONS}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <p className="muted small" id="stream-instructions-state" data-testid="instructions-state">
          {draft.length.toLocaleString("en-US")} / {MAX_INSTRUCTIONS.toLocaleString("en-US")} characters ·{" "}
          {dirty ? "unsaved changes" : stream?.current_version_number != null ? `saved as v${stream.current_version_number}` : "no saved instructions"}
        </p>
        <label>
          Note (optional): why this change
          <input data-testid="instructions-note" maxLength={500} value={note} onChange={(e) => setNote(e.target.value)} />
        </label>
        <div className="row-gap wrap">
          <button type="submit" className="primary" data-testid="instructions-save" disabled={outcome.busy}>
            {outcome.busy ? "Saving…" : "Save instructions"}
          </button>
          <button type="button" data-testid="instructions-revert" disabled={!dirty} onClick={() => setDraft(saved)}>
            Revert to saved
          </button>
          <OutcomeText outcome={outcome} testid="instructions" />
        </div>
        {conflict && (
          <div className="conflict" role="alert" data-testid="instructions-conflict">
            {conflict.mine === null ? (
              <>
                <p>
                  <strong>Someone else changed these instructions</strong> since you opened them, so your text was not
                  saved. Reload to see their version; your text is kept so you can apply it again.
                </p>
                <p className="muted small">{conflict.message}</p>
                <button type="button" data-testid="conflict-reload" onClick={() => void editor.reloadAfterConflict()}>
                  Reload
                </button>
              </>
            ) : (
              <>
                <p>{conflict.message} Your unsaved text:</p>
                <pre className="code-block" data-testid="conflict-mine">
                  {conflict.mine}
                </pre>
                <div className="row-gap">
                  <button
                    type="button"
                    data-testid="conflict-use-mine"
                    onClick={() => {
                      setDraft(conflict.mine ?? "");
                      setConflict(null);
                    }}
                  >
                    Put my text back in the editor
                  </button>
                  <button type="button" data-testid="conflict-discard" onClick={() => setConflict(null)}>
                    Discard my text
                  </button>
                </div>
              </>
            )}
          </div>
        )}
      </form>

      <section className="stream-section" aria-labelledby="try-heading">
        <h3 id="try-heading">Try it</h3>
        {stream.archived && (
          <p className="muted small">This stream is archived: chats and previews do not apply its instructions.</p>
        )}
        <PromptPreview streamId={stream.id} draft={draft} dirty={dirty} onTryDraft={onTryDraft} />
      </section>

      <section className="stream-section" aria-labelledby="history-heading">
        <h3 id="history-heading">History</h3>
        <InstructionHistory
          key={stream.id}
          versions={editor.history}
          error={editor.historyError}
          diff={editor.diff}
          diffError={editor.diffError}
          dirty={dirty}
          onDiff={(from, to) => void editor.showDiff(from, to)}
          onRestore={editor.restore}
        />
      </section>
    </>
  );
}
