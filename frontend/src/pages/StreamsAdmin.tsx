/**
 * Research streams administration (admins): the list, create, edit, archive; the chat instructions with
 * their history, diffs and restore; the prompt preview; and "Try draft", a sandbox chat that runs the
 * unsaved instructions for real. The page's own chat is the research stream editor (`edit_research_stream`,
 * app `kh`), where a `chat_instructions_suggestion` fills the instructions editor.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { ApiError, api } from "../api/client";
import type { InstructionDiff, InstructionVersion, Stream, StreamUpdate } from "../api/types";
import type { PageChatBinding } from "../chat/ChatTray";
import { WithChat } from "../chat/WithChat";
import { Link, navigate, useLocation } from "../router";
import { useShell } from "../shellContext";
import { formatWhen, InstructionHistory } from "./streams/InstructionHistory";
import { PromptPreview, type TryTarget } from "./streams/PromptPreview";
import { DefinitionFields, RetrievalFields } from "./streams/StreamDetails";
import {
  EDITOR_TABS,
  PREVIEW_PAGES,
  buildSandboxContext,
  buildStreamEditorContext,
  detailsFromStream,
  settingsFromDetails,
  type DetailsForm,
  type EditorTab,
} from "./streams/streamsContext";
import { emptyTrialForm } from "./trialscout/trialscoutContext";

const MAX_INSTRUCTIONS = 10_000;
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

interface Outcome {
  busy: boolean;
  error: string | null;
  saved: string | null;
}
const idle: Outcome = { busy: false, error: null, saved: null };

interface Conflict {
  message: string;
  /** After a reload: the admin's unsaved text, which the reload replaced in the editor. */
  mine: string | null;
}

const emptyCreate = { name: "", description: "", instructions: "", note: "" };
const blankDetails: DetailsForm = { name: "", description: "", pubmedQuery: "", trial: emptyTrialForm };

/** Two detail forms are the same stream settings (the comparison goes through the same conversion). */
const sameDetails = (a: DetailsForm, b: DetailsForm) =>
  a.name.trim() === b.name.trim() &&
  a.description.trim() === b.description.trim() &&
  JSON.stringify(settingsFromDetails(a)) === JSON.stringify(settingsFromDetails(b));

export function StreamsAdmin() {
  const { params } = useLocation();
  const { setChatOpen } = useShell();
  const selectedId = Number(params.get("id")) || null;
  const creating = params.get("new") === "1";

  const [showArchived, setShowArchived] = useState(false);
  const [streams, setStreams] = useState<Stream[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);

  const [stream, setStream] = useState<Stream | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [tab, setTab] = useState<EditorTab>("semantic");
  const [details, setDetails] = useState<DetailsForm>(blankDetails);
  const [detailsOutcome, setDetailsOutcome] = useState<Outcome>(idle);

  const [draft, setDraft] = useState("");
  const [note, setNote] = useState("");
  const [baseVersion, setBaseVersion] = useState<number | null>(null);
  const [instrOutcome, setInstrOutcome] = useState<Outcome>(idle);
  const [conflict, setConflict] = useState<Conflict | null>(null);

  const [history, setHistory] = useState<InstructionVersion[] | null>(null);
  const [historyError, setHistoryError] = useState<string | null>(null);
  const [diff, setDiff] = useState<InstructionDiff | null>(null);
  const [diffError, setDiffError] = useState<string | null>(null);

  const [sandbox, setSandbox] = useState<TryTarget | null>(null);
  const [createForm, setCreateForm] = useState(emptyCreate);
  const [createOutcome, setCreateOutcome] = useState<Outcome>(idle);

  // ---- loading ----------------------------------------------------------------------------------------

  const refreshList = useCallback(async () => {
    try {
      setStreams(await api.listStreams(showArchived));
      setListError(null);
    } catch (err) {
      setListError(`The streams could not be loaded: ${message(err)}`);
    }
  }, [showArchived]);

  useEffect(() => {
    void refreshList();
  }, [refreshList]);

  const loadHistory = useCallback(async (id: number) => {
    try {
      setHistory(await api.instructionHistory(id));
      setHistoryError(null);
    } catch (err) {
      setHistoryError(`The history could not be loaded: ${message(err)}`);
    }
  }, []);

  /** The saved instructions become the editor's text and the version a save builds on. */
  const takeInstructions = (s: Stream) => {
    setDraft(s.chat_instructions ?? "");
    setBaseVersion(s.current_version_id);
  };

  useEffect(() => {
    setStream(null);
    setLoadError(null);
    setHistory(null);
    setHistoryError(null);
    setDiff(null);
    setDiffError(null);
    setConflict(null);
    setNote("");
    setInstrOutcome(idle);
    setDetailsOutcome(idle);
    setSandbox(null);
    if (selectedId == null) return;
    let live = true;
    api.getStream(selectedId).then(
      (s) => {
        if (!live) return;
        setStream(s);
        setDetails(detailsFromStream(s));
        takeInstructions(s);
      },
      (err) => live && setLoadError(message(err)),
    );
    api.instructionHistory(selectedId).then(
      (h) => live && setHistory(h),
      (err) => live && setHistoryError(`The history could not be loaded: ${message(err)}`),
    );
    return () => {
      live = false;
    };
  }, [selectedId]);

  const saved = stream?.chat_instructions ?? "";
  const instructionsDirty = stream !== null && draft !== saved;
  const detailsDirty = stream !== null && !sameDetails(details, detailsFromStream(stream));

  // ---- changes ----------------------------------------------------------------------------------------

  const saveDetails = async (e: FormEvent) => {
    e.preventDefault();
    if (!stream) return;
    const current = detailsFromStream(stream);
    const body: StreamUpdate = {};
    if (details.name.trim() !== current.name.trim()) body.name = details.name.trim();
    if (details.description.trim() !== current.description.trim()) body.description = details.description.trim() || null;
    const settings = settingsFromDetails(details);
    if (JSON.stringify(settings) !== JSON.stringify(settingsFromDetails(current))) body.settings = settings;
    if (Object.keys(body).length === 0) {
      setDetailsOutcome({ ...idle, saved: "Nothing to save: no changes." });
      return;
    }
    setDetailsOutcome({ ...idle, busy: true });
    try {
      const s = await api.updateStream(stream.id, body);
      setStream(s);
      setDetails(detailsFromStream(s));
      setDetailsOutcome({ ...idle, saved: "Saved." });
      void refreshList();
    } catch (err) {
      setDetailsOutcome({ ...idle, error: message(err) });
    }
  };

  const toggleArchived = async () => {
    if (!stream) return;
    setDetailsOutcome({ ...idle, busy: true });
    try {
      const s = await api.updateStream(stream.id, { archived: !stream.archived });
      setStream(s);
      setDetailsOutcome({
        ...idle,
        saved: s.archived ? "Archived: pages no longer offer this stream, and chats naming it get a notice." : "Unarchived.",
      });
      void refreshList();
    } catch (err) {
      setDetailsOutcome({ ...idle, error: message(err) });
    }
  };

  const saveInstructions = async (e: FormEvent) => {
    e.preventDefault();
    if (!stream) return;
    if (!instructionsDirty) {
      setInstrOutcome({ ...idle, saved: "Nothing to save: the text is the saved version." });
      return;
    }
    setInstrOutcome({ ...idle, busy: true });
    try {
      const s = await api.updateStream(stream.id, {
        chat_instructions: draft.trim() ? draft : null,
        ...(note.trim() ? { note: note.trim() } : {}),
        ...(baseVersion != null ? { expected_version_id: baseVersion } : {}),
      });
      setStream(s);
      takeInstructions(s);
      setNote("");
      setConflict(null);
      setInstrOutcome({ ...idle, saved: s.current_version_id != null ? `Saved as v${s.current_version_id}.` : "Saved." });
      setDiff(null);
      void loadHistory(s.id);
      void refreshList();
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setConflict({ message: err.message, mine: null });
        setInstrOutcome(idle);
      } else {
        setInstrOutcome({ ...idle, error: message(err) });
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
      takeInstructions(s);
      setConflict({ message: "The editor now shows the newest saved instructions.", mine });
      void loadHistory(s.id);
    } catch (err) {
      setConflict({ message: `Reloading failed: ${message(err)}`, mine: null });
    }
  };

  const restore = async (versionId: number, restoreNote: string) => {
    if (!stream) return;
    const s = await api.restoreInstructions(stream.id, versionId, restoreNote || undefined);
    setStream(s);
    takeInstructions(s);
    setConflict(null);
    setInstrOutcome({ ...idle, saved: `Restored v${versionId} as v${s.current_version_id}.` });
    setDiff(null);
    void loadHistory(s.id);
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

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!createForm.name.trim()) {
      setCreateOutcome({ ...idle, error: "Give the stream a name." });
      return;
    }
    setCreateOutcome({ ...idle, busy: true });
    try {
      const s = await api.createStream({
        name: createForm.name.trim(),
        description: createForm.description.trim() || null,
        chat_instructions: createForm.instructions.trim() || null,
        ...(createForm.note.trim() && createForm.instructions.trim() ? { note: createForm.note.trim() } : {}),
      });
      setCreateForm(emptyCreate);
      setCreateOutcome(idle);
      void refreshList();
      navigate(`/streams?id=${s.id}`);
    } catch (err) {
      setCreateOutcome({ ...idle, error: message(err) });
    }
  };

  // ---- the chat ---------------------------------------------------------------------------------------

  const contextRef = useRef<Record<string, unknown>>({});
  contextRef.current = creating
    ? buildStreamEditorContext({
        tab: "semantic",
        streamId: null,
        details: { ...blankDetails, name: createForm.name, description: createForm.description },
        draft: createForm.instructions,
      })
    : buildStreamEditorContext({ tab, streamId: stream?.id ?? selectedId, details: stream ? details : blankDetails, draft });
  const draftRef = useRef(draft);
  draftRef.current = draft;

  const fillInstructions = (data: Record<string, unknown>) => {
    const text = typeof data.instructions === "string" ? data.instructions : "";
    if (!text.trim()) throw new Error("The suggestion has no instructions.");
    if (creating) {
      setCreateForm((f) => ({ ...f, instructions: text }));
      return;
    }
    if (!stream) throw new Error("Open a stream first: the suggestion goes into its instructions editor.");
    setDraft(text);
    setTab("instructions");
  };

  const onEntity: PageChatBinding["onEntity"] = (kind, id) =>
    navigate(kind === "pmid" ? `/tablizer?pmid=${encodeURIComponent(id)}` : `/trialscout?nct=${encodeURIComponent(id)}`);

  const sandboxLabel = sandbox ? PREVIEW_PAGES.find((p) => p.page === sandbox.page)?.label ?? sandbox.page : "";
  const binding: PageChatBinding =
    sandbox && stream
      ? {
          app: "kh",
          remember: false,
          getContext: () => buildSandboxContext(sandbox, stream.id, draftRef.current, contextRef.current),
          payloadHandlers: { chat_instructions_suggestion: fillInstructions },
          clientActions: {},
          onEntity,
          banner: (
            <div className="chat-sandbox" data-testid="sandbox-banner" role="note">
              <span>
                <strong>Sandbox:</strong> the editor&apos;s text as the instructions of “{stream.name}” on {sandboxLabel}
                {sandbox.tab ? ` (${sandbox.tab}${sandbox.subtab ? ` / ${sandbox.subtab}` : ""})` : ""}. Nothing is saved.
              </span>
              <button type="button" className="small-button" data-testid="sandbox-exit" onClick={() => setSandbox(null)}>
                Leave sandbox
              </button>
            </div>
          ),
        }
      : {
          app: "kh",
          getContext: () => contextRef.current,
          payloadHandlers: { chat_instructions_suggestion: fillInstructions },
          clientActions: {},
          onEntity,
        };

  const tryDraft = (target: TryTarget) => {
    setSandbox(target);
    setChatOpen(true);
  };

  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const i = EDITOR_TABS.findIndex((t) => t.id === tab);
    const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    e.preventDefault();
    const next = EDITOR_TABS[(i + step + EDITOR_TABS.length) % EDITOR_TABS.length].id;
    setTab(next);
    document.getElementById(`stream-tab-${next}`)?.focus();
  };

  // ---- rendering --------------------------------------------------------------------------------------

  const outcome = (o: Outcome, testid: string) => (
    <>
      {o.saved && (
        <span className="ok-text" role="status" data-testid={`${testid}-status`}>
          {o.saved}
        </span>
      )}
      {o.error && (
        <span className="error-text" role="alert" data-testid={`${testid}-error`}>
          {o.error}
        </span>
      )}
    </>
  );

  let editor;
  if (creating) {
    editor = (
      <form className="stream-form" data-testid="stream-create-form" onSubmit={create} aria-labelledby="create-heading">
        <h2 id="create-heading">New research stream</h2>
        <label>
          Name
          <input data-testid="create-name" required maxLength={200} value={createForm.name} onChange={(e) => setCreateForm({ ...createForm, name: e.target.value })} />
        </label>
        <label>
          Description
          <textarea data-testid="create-description" rows={3} value={createForm.description} onChange={(e) => setCreateForm({ ...createForm, description: e.target.value })} />
        </label>
        <label>
          Chat instructions (optional)
          <textarea
            data-testid="create-instructions"
            rows={6}
            maxLength={MAX_INSTRUCTIONS}
            value={createForm.instructions}
            onChange={(e) => setCreateForm({ ...createForm, instructions: e.target.value })}
          />
        </label>
        <label>
          Note for the first version (optional)
          <input data-testid="create-note" maxLength={500} value={createForm.note} onChange={(e) => setCreateForm({ ...createForm, note: e.target.value })} />
        </label>
        <div className="row-gap">
          <button type="submit" className="primary" data-testid="create-submit" disabled={createOutcome.busy}>
            Create stream
          </button>
          <Link to="/streams">Cancel</Link>
          {outcome(createOutcome, "create")}
        </div>
      </form>
    );
  } else if (selectedId == null) {
    editor = <p className="muted">Choose a stream to edit it, or create a new one.</p>;
  } else if (loadError) {
    editor = (
      <p className="error-text" role="alert" data-testid="stream-load-error">
        {loadError}
      </p>
    );
  } else if (!stream) {
    editor = <p className="muted">Loading…</p>;
  } else {
    editor = (
      <>
        <div className="stream-editor-header row-gap wrap">
          <h2 data-testid="stream-title">{stream.name}</h2>
          {stream.archived && (
            <span className="badge badge-archived" data-testid="stream-archived-badge">
              archived
            </span>
          )}
          <span className="muted small">
            Updated {formatWhen(stream.updated_at)}
            {stream.updated_by ? ` by ${stream.updated_by}` : ""}
          </span>
          <button type="button" data-testid="stream-archive" disabled={detailsOutcome.busy} onClick={() => void toggleArchived()}>
            {stream.archived ? "Unarchive" : "Archive"}
          </button>
        </div>
        <div role="tablist" aria-label="Stream editor" className="tabs">
          {EDITOR_TABS.map((t) => (
            <button
              key={t.id}
              type="button"
              role="tab"
              id={`stream-tab-${t.id}`}
              aria-selected={tab === t.id}
              aria-controls="stream-tabpanel"
              tabIndex={tab === t.id ? 0 : -1}
              data-testid={`stream-tab-${t.id}`}
              onKeyDown={onTabKey}
              onClick={() => setTab(t.id)}
            >
              {t.label}
              {t.id === "instructions" && instructionsDirty ? " •" : ""}
            </button>
          ))}
        </div>
        <div role="tabpanel" id="stream-tabpanel" aria-labelledby={`stream-tab-${tab}`} className="tabpanel">
          {tab !== "instructions" ? (
            <form className="stream-form" data-testid="stream-details-form" onSubmit={saveDetails}>
              {tab === "semantic" ? <DefinitionFields form={details} onChange={setDetails} /> : <RetrievalFields form={details} onChange={setDetails} />}
              <div className="row-gap wrap">
                <button type="submit" className="primary" data-testid="details-save" disabled={detailsOutcome.busy}>
                  Save
                </button>
                {detailsDirty && <span className="muted small">Unsaved changes</span>}
                {outcome(detailsOutcome, "details")}
              </div>
            </form>
          ) : (
            <>
              <form className="stream-form" onSubmit={saveInstructions} aria-label="Chat instructions">
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
                  {instructionsDirty ? "unsaved changes" : baseVersion != null ? `saved as v${baseVersion}` : "no saved instructions"}
                </p>
                <label>
                  Note (optional): why this change
                  <input data-testid="instructions-note" maxLength={500} value={note} onChange={(e) => setNote(e.target.value)} />
                </label>
                <div className="row-gap wrap">
                  <button type="submit" className="primary" data-testid="instructions-save" disabled={instrOutcome.busy}>
                    {instrOutcome.busy ? "Saving…" : "Save instructions"}
                  </button>
                  <button type="button" data-testid="instructions-revert" disabled={!instructionsDirty} onClick={() => setDraft(saved)}>
                    Revert to saved
                  </button>
                  {outcome(instrOutcome, "instructions")}
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
                        <button type="button" data-testid="conflict-reload" onClick={() => void reloadAfterConflict()}>
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
                <PromptPreview streamId={stream.id} draft={draft} dirty={instructionsDirty} onTryDraft={tryDraft} />
              </section>

              <section className="stream-section" aria-labelledby="history-heading">
                <h3 id="history-heading">History</h3>
                <InstructionHistory
                  key={stream.id}
                  versions={history}
                  error={historyError}
                  diff={diff}
                  diffError={diffError}
                  dirty={instructionsDirty}
                  onDiff={(from, to) => void showDiff(from, to)}
                  onRestore={restore}
                />
              </section>
            </>
          )}
        </div>
      </>
    );
  }

  return (
    <WithChat binding={binding} trayKey={sandbox && stream ? `sandbox-${stream.id}-${sandbox.page}-${sandbox.tab ?? ""}-${sandbox.subtab ?? ""}` : "kh"}>
      <div className="page-content streams-page" data-testid="streams-page">
        <h1 className="page-title">Research streams</h1>
        <div className="streams-layout">
          <section className="streams-sidebar" aria-labelledby="streams-list-heading">
            <div className="row-gap">
              <h2 id="streams-list-heading">Streams</h2>
              <Link to="/streams?new=1" className="button-link" data-testid="stream-new">
                New stream
              </Link>
            </div>
            <label className="inline">
              <input type="checkbox" data-testid="streams-show-archived" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} />
              Show archived
            </label>
            {listError && (
              <p className="error-text" role="alert" data-testid="streams-list-error">
                {listError}
              </p>
            )}
            {streams === null ? (
              !listError && <p className="muted">Loading…</p>
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
          <section className="stream-editor" aria-label="Stream editor" data-testid="stream-editor">
            {editor}
          </section>
        </div>
      </div>
    </WithChat>
  );
}
