/**
 * TrialScout's patient and its screening: the saved patients, the one loaded in the panel (its profile,
 * editable), and the screening whose verdicts the table shows, filled in as its SSE events arrive. A
 * reload reads the screening back (`GET /api/screenings/{id}`) and follows it when it still runs, so
 * the URL needs only the two ids — never the note.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../../../api/client";
import {
  followScreening,
  screeningApi,
  startScreening,
  type NoteSentence,
  type PatientDetail,
  type PatientProfile,
  type PatientRead,
  type ScreenRequest,
  type ScreenedTrial,
  type ScreeningEvent,
  type ScreeningPageContext,
  type ScreeningReport,
} from "../../../api/screening";
import { announceRedacted } from "../../../chat/redacted";

export type ScreeningStatus = "running" | "complete" | "failed" | "stopped" | "interrupted";

export interface ScreeningView {
  id: number | null;
  status: ScreeningStatus;
  /** Screened so far, by NCT id, in arrival order (best first once complete). */
  trials: ScreenedTrial[];
  sentences: NoteSentence[];
  done: number;
  total: number | null;
  error: string | null;
  /** Trials that could not be screened: NCT id (or "") and why. */
  problems: Array<{ nct_id: string | null; message: string }>;
  missing: string[];
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

function ranked(trials: ScreenedTrial[], ranking: string[]): ScreenedTrial[] {
  if (!ranking.length) return trials;
  const order = new Map(ranking.map((id, i) => [id, i]));
  return [...trials].sort((a, b) => (order.get(a.nct_id) ?? 1e9) - (order.get(b.nct_id) ?? 1e9));
}

/** One screening event applied to the view (pure, so it is tested without a server). */
export function applyScreeningEvent(view: ScreeningView, event: ScreeningEvent): ScreeningView {
  switch (event.type) {
    case "profile":
      return { ...view, id: event.screening_id, sentences: event.sentences ?? [] };
    case "candidates":
      return { ...view, total: event.candidates?.length ?? 0, missing: event.missing ?? [] };
    case "trial": {
      const trials = view.trials.filter((t) => t.nct_id !== event.trial.nct_id);
      return { ...view, trials: [...trials, event.trial], done: event.done, total: event.total };
    }
    case "trial_error":
      return { ...view, problems: [...view.problems, { nct_id: event.nct_id ?? null, message: event.message }] };
    case "complete":
      return { ...view, id: event.screening_id, status: event.status, trials: ranked(view.trials, event.ranking ?? []) };
    case "error":
      return { ...view, status: "failed", error: event.message };
    default:
      return view;
  }
}

export const emptyScreening = (): ScreeningView => ({
  id: null, status: "running", trials: [], sentences: [], done: 0, total: null, error: null, problems: [], missing: [],
});

export function usePatientScreening() {
  const [patients, setPatients] = useState<PatientRead[] | null>(null);
  const [patient, setPatient] = useState<PatientDetail | null>(null);
  const [screening, setScreening] = useState<ScreeningView | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [report, setReport] = useState<ScreeningReport | null>(null);
  const stream = useRef<AbortController | null>(null);

  const refreshPatients = useCallback(async () => {
    try {
      setPatients(await screeningApi.listPatients());
    } catch {
      setPatients([]);
    }
  }, []);
  useEffect(() => {
    void refreshPatients();
    return () => stream.current?.abort();
  }, [refreshPatients]);

  /** Read a stream's events into the view until it ends (or the page aborts it). */
  const consume = useCallback(async (run: (onEvent: (e: ScreeningEvent) => void, signal: AbortSignal) => Promise<void>) => {
    stream.current?.abort();
    const controller = new AbortController();
    stream.current = controller;
    let ended = false;
    try {
      await run((event) => {
        if (controller.signal.aborted) return;
        if (event.type === "complete" || event.type === "error") ended = true;
        setScreening((v) => applyScreeningEvent(v ?? emptyScreening(), event));
      }, controller.signal);
      if (!ended && !controller.signal.aborted) {
        setScreening((v) => v && { ...v, status: "interrupted", error: "The connection closed before the screening finished. Reload to pick it up." });
      }
    } catch (err) {
      if (controller.signal.aborted) return;
      if (err instanceof ApiError && err.status !== 0) setError(err.message);
      setScreening((v) => (v && v.id != null ? { ...v, status: v.status === "running" ? "interrupted" : v.status, error: message(err) } : null));
    } finally {
      if (stream.current === controller) stream.current = null;
    }
  }, []);

  const loadScreening = useCallback(async (id: number) => {
    try {
      const detail = await screeningApi.getScreening(id);
      setScreening({
        id: detail.id, status: detail.status, trials: ranked(detail.trials ?? [], detail.ranking ?? []),
        sentences: detail.sentences ?? [], done: detail.trials_screened, total: detail.candidates?.length || null,
        error: detail.error?.message ?? null, missing: detail.missing ?? [],
        problems: (detail.problems ?? []).map((p) => ({ nct_id: p.nct_id ?? null, message: p.message })),
      });
      if (detail.status === "running") void consume((on, signal) => followScreening(id, detail.last_event_id ?? 0, on, signal));
    } catch (err) {
      setScreening(null);
      setError(err instanceof ApiError && err.status === 404 ? "That screening is not yours or no longer exists." : message(err));
    }
  }, [consume]);

  const loadPatient = useCallback(async (id: number, screeningId: number | null = null) => {
    setError(null);
    setBusy("Loading the patient…");
    try {
      setPatient(await screeningApi.getPatient(id));
      setReport(null);
      if (screeningId != null) await loadScreening(screeningId);
      else {
        stream.current?.abort();
        setScreening(null);
      }
    } catch (err) {
      setPatient(null);
      setScreening(null);
      setError(err instanceof ApiError && err.status === 404 ? "That patient is not yours or no longer exists." : message(err));
    } finally {
      setBusy(null);
    }
  }, [loadScreening]);

  const createFromNote = useCallback(async (note: string) => {
    setError(null);
    setBusy("Reading the note…");
    try {
      const created = await screeningApi.createPatient(note);
      stream.current?.abort();
      setPatient(created);
      setScreening(null);
      setReport(null);
      void refreshPatients();
      return true;
    } catch (err) {
      setError(message(err));
      return false;
    } finally {
      setBusy(null);
    }
  }, [refreshPatients]);

  const saveProfile = useCallback(async (profile: PatientProfile) => {
    if (!patient) return;
    setError(null);
    setBusy("Saving the profile…");
    try {
      setPatient(await screeningApi.updatePatient(patient.id, { profile }));
      void refreshPatients();
    } catch (err) {
      setError(message(err));
      throw err;
    } finally {
      setBusy(null);
    }
  }, [patient, refreshPatients]);

  /** Screen the patient: exactly `request.nct_ids`, or trials found from the profile when there are none. */
  const screen = useCallback(async (request: Partial<ScreenRequest>, patientId?: number) => {
    const id = patientId ?? patient?.id;
    if (id == null) return;
    setError(null);
    setReport(null);
    setScreening(emptyScreening());
    await consume((on, signal) => startScreening(id, request, on, signal));
  }, [patient, consume]);

  const stop = useCallback(async () => {
    if (screening?.id == null) return;
    try {
      await screeningApi.stopScreening(screening.id);
    } catch (err) {
      setError(message(err));
    }
  }, [screening?.id]);

  const remove = useCallback(async () => {
    if (!patient) return;
    setError(null);
    try {
      stream.current?.abort();
      await screeningApi.deletePatient(patient.id);
      announceRedacted(); // the chat's turns about the patient were redacted with it
      setPatient(null);
      setScreening(null);
      setReport(null);
      await refreshPatients();
    } catch (err) {
      setError(message(err));
    }
  }, [patient, refreshPatients]);

  const buildReport = useCallback(async () => {
    if (screening?.id == null) return;
    setError(null);
    setBusy("Building the report…");
    try {
      setReport(await screeningApi.createReport(screening.id));
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(null);
    }
  }, [screening?.id]);

  const close = useCallback(() => {
    stream.current?.abort();
    setPatient(null);
    setScreening(null);
    setReport(null);
    setError(null);
  }, []);

  return { patients, patient, screening, busy, error, report, loadPatient, loadScreening, createFromNote, saveProfile, screen, stop, remove,
           buildReport, close, setPatient, refreshPatients };
}

export type PatientScreening = ReturnType<typeof usePatientScreening>;

/** `context.screening` (scrback's contract): the profile and the shortlist, never the note. */
export function screeningContext(s: PatientScreening, openNctId: string | null): ScreeningPageContext | null {
  if (!s.patient) return null;
  return {
    patient_id: s.patient.id,
    label: s.patient.label,
    version_id: s.patient.version.id,
    profile: s.patient.profile,
    screening_id: s.screening?.id ?? null,
    status: s.screening?.id != null ? s.screening.status : null,
    shortlist: (s.screening?.trials ?? []).slice(0, 100).map((t) => ({
      nct_id: t.nct_id, title: t.title, verdict: t.verdict, score: t.score, met: t.met, not_met: t.not_met, unknown: t.unknown,
    })),
    open_nct_id: openNctId && s.screening?.trials.some((t) => t.nct_id === openNctId) ? openNctId : null,
  };
}
