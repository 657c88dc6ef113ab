/**
 * Research streams administration (admins): the list, create, edit, archive; the chat instructions with
 * their history, diffs and restore; the prompt preview; and "Try draft", a sandbox chat that runs the
 * unsaved instructions for real. The page's own chat is the research stream editor (`edit_research_stream`,
 * app `kh`), where a `chat_instructions_suggestion` fills the instructions editor.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { api } from "../api/client";
import type { Stream, StreamUpdate } from "../api/types";
import type { PageChatBinding } from "../chat/ChatTray";
import { WithChat } from "../chat/WithChat";
import { navigate, useLocation } from "../router";
import { useShell } from "../shellContext";
import { CreateStreamForm, emptyCreate } from "./streams/CreateStreamForm";
import { formatWhen } from "./streams/InstructionHistory";
import { InstructionsEditor, useInstructionsEditor } from "./streams/InstructionsEditor";
import { idle, message, OutcomeText, type Outcome } from "./streams/Outcome";
import type { TryTarget } from "./streams/PromptPreview";
import { DefinitionFields, RetrievalFields } from "./streams/StreamDetails";
import { streamEditorActions } from "./streams/streamActions";
import { StreamList } from "./streams/StreamList";
import {
  applyFilterSuggestion,
  applyQuerySuggestion,
  applyRetrievalProposal,
  applySchemaProposal,
  type Applied,
} from "./streams/streamProposals";
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
import { emptyTrialForm, isFormEmpty } from "./trialscout/trialscoutContext";

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

  const instructions = useInstructionsEditor(selectedId, stream, setStream, () => void refreshList());
  const { draft, setDraft, take: takeInstructions } = instructions;

  useEffect(() => {
    setStream(null);
    setLoadError(null);
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
    return () => {
      live = false;
    };
  }, [selectedId, takeInstructions]);

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

  const detailsRef = useRef(details);
  detailsRef.current = details;
  const createRef = useRef(createForm);
  createRef.current = createForm;
  /** Accept on an editor card: its change goes into the open stream's forms (unsaved), shown on its tab. */
  const intoEditor =
    (apply: (details: DetailsForm, data: Record<string, unknown>) => Applied) => (data: Record<string, unknown>) => {
      if (creating) {
        const { name, description } = createRef.current;
        const next = apply({ ...blankDetails, name, description }, data).details;
        if (next.pubmedQuery || !isFormEmpty(next.trial)) throw new Error("Create the stream first: its retrieval defaults are set in its editor.");
        setCreateForm((f) => ({ ...f, name: next.name, description: next.description }));
        return;
      }
      if (!stream) throw new Error("Open a stream first: the suggestion goes into its editor.");
      const next = apply(detailsRef.current, data);
      setDetails(next.details);
      setTab(next.tab);
    };
  const payloadHandlers: PageChatBinding["payloadHandlers"] = {
    chat_instructions_suggestion: fillInstructions,
    schema_proposal: intoEditor(applySchemaProposal),
    retrieval_proposal: intoEditor(applyRetrievalProposal),
    query_suggestion: intoEditor(applyQuerySuggestion),
    filter_suggestion: intoEditor(applyFilterSuggestion),
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
          payloadHandlers,
          clientActions: {}, // the sandbox tries another page's prompt: its actions have no page here
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
          payloadHandlers,
          clientActions: streamEditorActions({ switchTab: setTab, hasStream: stream !== null }),
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

  let editor;
  if (creating) {
    editor = <CreateStreamForm form={createForm} outcome={createOutcome} onChange={setCreateForm} onSubmit={create} />;
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
              {t.id === "instructions" && instructions.dirty ? " •" : ""}
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
                <OutcomeText outcome={detailsOutcome} testid="details" />
              </div>
            </form>
          ) : (
            <InstructionsEditor stream={stream} editor={instructions} onTryDraft={tryDraft} />
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
          <StreamList streams={streams} error={listError} selectedId={selectedId} showArchived={showArchived} onShowArchived={setShowArchived} />
          <section className="stream-editor" aria-label="Stream editor" data-testid="stream-editor">
            {editor}
          </section>
        </div>
      </div>
    </WithChat>
  );
}
