/**
 * TrialScout's patient panel: paste a note or pick a saved patient, edit the extracted profile, then find
 * trials from it or screen the loaded ones; progress, Stop, the verdict counts (a filter for the table),
 * the report, and deleting the patient with everything derived from it. Folded (the default) it is one line,
 * "Screen a patient…" or the patient's summary, so the table starts near the top of the page.
 */
import { useEffect, useId, useRef, useState } from "react";
import "./patient.css";
import type { PatientProfile, TrialVerdict } from "../../../api/screening";
import { cleanProfile, ProfileEditor } from "./ProfileEditor";
import { Foldable } from "../../common/GridControls";
import { countVerdicts, VERDICT_LABEL, VERDICTS, VerdictFilter } from "./fit";
import type { PatientScreening, ScreeningView } from "./usePatientScreening";

interface Props {
  ps: PatientScreening;
  loadedNctIds: string[];
  onFindTrials: (profile: PatientProfile) => void;
  shown: ReadonlySet<TrialVerdict>;
  onShow: (s: Set<TrialVerdict>) => void;
  collapsed: boolean;
  onCollapse: (collapsed: boolean) => void;
}

const DELETE_TEXT =
  "Deletes this patient's note, profile versions, screenings, their reports and cached judgements, and removes the text of your chat questions and answers sent while this patient was loaded. This cannot be undone.";

function NotePicker({ ps }: { ps: PatientScreening }) {
  const id = useId();
  const [note, setNote] = useState("");
  const [pick, setPick] = useState("");
  const busy = ps.busy != null;
  return (
    <div className="patient-start">
      {ps.patients && ps.patients.length > 0 && (
        <form className="patient-pick" onSubmit={(e) => { e.preventDefault(); if (pick) void ps.loadPatient(Number(pick)); }}>
          <label htmlFor={`${id}-pick`}>Saved patient</label>
          <select id={`${id}-pick`} data-testid="patient-pick" value={pick} onChange={(e) => setPick(e.target.value)}>
            <option value="">Choose…</option>
            {ps.patients.map((p) => <option key={p.id} value={p.id}>{p.label}</option>)}
          </select>
          <button type="submit" disabled={!pick || busy}>Open</button>
        </form>
      )}
      <form className="patient-note" onSubmit={(e) => { e.preventDefault(); void ps.createFromNote(note).then((ok) => ok && setNote("")); }}>
        <label htmlFor={`${id}-note`}>Patient note</label>
        <textarea id={`${id}-note`} data-testid="patient-note" rows={5} maxLength={20000} value={note} onChange={(e) => setNote(e.target.value)}
          aria-describedby={`${id}-note-help`} placeholder="Paste a clinical note…" />
        <p id={`${id}-note-help`} className="muted small">Kept for you only on this server; never put in the page address.</p>
        <button type="submit" className="primary" data-testid="patient-read" disabled={!note.trim() || busy}>Read the note</button>
      </form>
    </div>
  );
}

function DeletePatient({ ps }: { ps: PatientScreening }) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => { if (asking) confirmRef.current?.focus(); }, [asking]);
  if (!asking) return <button type="button" className="danger-link" data-testid="patient-delete" onClick={() => setAsking(true)}>Delete patient…</button>;
  return (
    <div role="alertdialog" aria-labelledby="patient-delete-q" aria-describedby="patient-delete-text" className="confirm-box" data-testid="patient-delete-confirm">
      <p id="patient-delete-q"><strong>Delete {ps.patient?.label}?</strong></p>
      <p id="patient-delete-text" className="small">{DELETE_TEXT}</p>
      <button ref={confirmRef} type="button" className="danger" data-testid="patient-delete-yes" onClick={() => { setAsking(false); void ps.remove(); }}>Delete</button>{" "}
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
    </div>
  );
}

function progressText(s: ScreeningView): string {
  return s.status === "running"
    ? s.total == null ? "Finding the criteria…" : `Screened ${s.done} of ${s.total} trials…`
    : s.status === "complete" ? `Screened ${s.trials.length} trials.`
      : s.status === "stopped" ? `Stopped: ${s.trials.length} trials screened.`
        : `Screening ${s.status}: ${s.trials.length} trials screened.`;
}

/** The folded panel's line: who the patient is, the facts the search uses, and where the screening stands. */
function PatientLine({ ps }: { ps: PatientScreening }) {
  const { patient, screening } = ps;
  if (!patient) return null;
  const p = patient.profile;
  const facts = [p.age != null ? `${p.age} y` : "", p.sex ?? "", p.conditions?.[0] ?? ""].filter(Boolean);
  const counts = screening && screening.trials.length ? countVerdicts(screening.trials) : null;
  const verdicts = counts ? VERDICTS.filter((v) => counts[v]).map((v) => `${counts[v]} ${VERDICT_LABEL[v].toLowerCase()}`) : [];
  return (
    <span className="patient-line" data-testid="patient-line">
      <strong data-testid="patient-label">{patient.label}</strong>
      {facts.length > 0 && <span className="muted"> · {facts.join(" · ")}</span>}
      {screening && (
        <span className="muted" data-testid="patient-line-status" role="status">
          {" · "}{progressText(screening).replace(/\.$/, "")}{verdicts.length ? `: ${verdicts.join(", ")}` : ""}
        </span>
      )}
    </span>
  );
}

/** What the panel is doing and what went wrong: on its folded line or at the top of the open panel. */
function Busy({ ps }: { ps: PatientScreening }) {
  return (
    <>
      {ps.busy && <p className="muted small" role="status">{ps.busy}</p>}
      {ps.error && <p className="error-text" role="alert" data-testid="patient-error">{ps.error}</p>}
    </>
  );
}

function Progress({ ps }: { ps: PatientScreening }) {
  const s = ps.screening;
  if (!s) return null;
  const running = s.status === "running";
  const text = progressText(s);
  return (
    <div className="screening-progress" data-testid="screening-progress" data-status={s.status}>
      {running && <progress max={s.total ?? 1} value={s.total == null ? undefined : s.done} aria-label="Trials screened" />}
      <span role="status" aria-live="polite">{text}</span>
      {running && s.id != null && <button type="button" data-testid="screening-stop" onClick={() => void ps.stop()}>Stop</button>}
      {s.error && <p className="error-text" role="alert">{s.error}</p>}
      {s.problems.length > 0 && (
        <ul className="small muted" data-testid="screening-problems">
          {s.problems.map((p, i) => <li key={i}>{p.nct_id ? `${p.nct_id}: ` : ""}{p.message}</li>)}
        </ul>
      )}
      {s.missing.length > 0 && <p className="small muted">Not found in any source: {s.missing.join(", ")}</p>}
    </div>
  );
}

export function PatientPanel({ ps, loadedNctIds, onFindTrials, shown, onShow, collapsed, onCollapse }: Props) {
  const { patient, screening } = ps;
  const [draft, setDraft] = useState<PatientProfile | null>(patient?.profile ?? null);
  const versionId = patient?.version.id;
  useEffect(() => setDraft(patient?.profile ?? null), [versionId, patient?.profile]);
  const dirty = Boolean(patient && draft && JSON.stringify(cleanProfile(draft)) !== JSON.stringify(cleanProfile(patient.profile)));
  const running = screening?.status === "running";
  const busy = ps.busy != null;
  const saved = async (): Promise<PatientProfile | null> => {
    if (!draft) return null;
    if (!dirty) return draft;
    try {
      await ps.saveProfile(cleanProfile(draft));
      return cleanProfile(draft);
    } catch {
      return null;
    }
  };
  return (
    <Foldable className="patient-panel" labelledBy="patient-panel-title" testId="patient-panel" collapsed={collapsed} onToggle={onCollapse}
              heading={<h2 id="patient-panel-title" className="panel-title">Patient</h2>}
              toggleText={patient ? ["Edit ▸", "Hide ▾"] : ["Screen a patient… ▸", "Hide ▾"]} toggleTestId="patient-toggle"
              summary={<><PatientLine ps={ps} /><Busy ps={ps} /></>} summaryFirst>
      {!collapsed && <Busy ps={ps} />}
      {!patient ? (
        <NotePicker ps={ps} />
      ) : (
        <>
          {!collapsed && <p className="patient-summary">
            <strong data-testid="patient-label">{patient.label}</strong>
            {patient.summary && patient.summary !== patient.label ? <span className="muted"> — {patient.summary}</span> : null}{" "}
            <span className="muted small">version {patient.version.number}{patient.version.edited ? " (edited)" : ""}</span>{" "}
            <button type="button" className="link-button small" data-testid="patient-close" onClick={ps.close}>Other patient</button>
          </p>}
          {draft && <ProfileEditor profile={draft} onChange={setDraft} disabled={running || busy} />}
          <div className="patient-actions">
            {dirty && <button type="button" data-testid="profile-save" disabled={busy} onClick={() => void saved()}>Save profile</button>}
            <button type="button" data-testid="patient-find" disabled={running || busy}
              onClick={() => void saved().then((p) => p && onFindTrials(p))}>Find trials for this patient</button>
            <button type="button" className="primary" data-testid="patient-screen" disabled={running || busy || loadedNctIds.length === 0}
              title={loadedNctIds.length ? undefined : "Search for trials first: this screens the table's trials"}
              onClick={() => void saved().then((p) => p && ps.screen({ nct_ids: loadedNctIds.slice(0, 100) }))}>
              Screen the loaded trials{loadedNctIds.length ? ` (${Math.min(100, loadedNctIds.length)})` : ""}
            </button>
          </div>
          <Progress ps={ps} />
          {screening && screening.trials.length > 0 && <VerdictFilter trials={screening.trials} shown={shown} onChange={onShow} />}
          {screening?.id != null && !running && screening.trials.length > 0 && (
            <div className="patient-report">
              <button type="button" data-testid="patient-report-build" disabled={busy} onClick={() => void ps.buildReport()}>Report for the doctor</button>
              {ps.report && (
                <span data-testid="patient-report-links">
                  {" "}<a href={ps.report.html_url} target="_blank" rel="noreferrer" data-testid="patient-report-html">Open report (HTML)</a>
                  {" · "}<a href={`${ps.report.pdf_url}${ps.report.pdf_url.includes("?") ? "&" : "?"}download=true`} data-testid="patient-report-pdf">PDF</a>
                </span>
              )}
            </div>
          )}
          <DeletePatient ps={ps} />
        </>
      )}
    </Foldable>
  );
}
