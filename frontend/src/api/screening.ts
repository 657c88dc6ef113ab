/**
 * The screening API (`/api/patients`, `/api/screenings`, screening reports): typed calls and the screening's
 * SSE stream. The note goes in request bodies only, never in a URL.
 */
import type { components, paths } from "./schema";
import { request, ApiError } from "./client";
import { readEventStream } from "./sse";

type Schemas = components["schemas"];
export type PatientProfile = Schemas["PatientProfile"];
export type PatientRead = Schemas["PatientRead"];
export type PatientDetail = Schemas["PatientDetail"];
export type ScreeningDetail = Schemas["ScreeningDetail"];
export type ScreenedTrial = Schemas["ScreenedTrial"];
export type CriterionResult = Schemas["CriterionResult"];
export type NoteSentence = Schemas["NoteSentence"];
export type ScreenRequest = Schemas["ScreenRequest"];
export type ScreeningReport = Schemas["ScreeningReportRead"];
export type ScreeningPageContext = Schemas["ScreeningPageContext"];
export type TrialVerdict = ScreenedTrial["verdict"];
export type ScreeningEvent = paths["/api/patients/{patient_id}/screenings"]["post"]["responses"][200]["content"]["text/event-stream"];

const EVENT_TYPES: ReadonlySet<string> = new Set(["profile", "candidates", "trial", "trial_error", "complete", "error", "reconnect"]);

export const screeningApi = {
  listPatients: () => request<PatientRead[]>("GET", "/api/patients").then((r) => (Array.isArray(r) ? r : [])),
  createPatient: (note: string, label?: string) => request<PatientDetail>("POST", "/api/patients", { body: label ? { note, label } : { note } }),
  getPatient: (id: number) => request<PatientDetail>("GET", `/api/patients/${id}`),
  updatePatient: (id: number, body: Schemas["PatientUpdate"]) => request<PatientDetail>("PATCH", `/api/patients/${id}`, { body }),
  deletePatient: (id: number) => request<void>("DELETE", `/api/patients/${id}`),
  getScreening: (id: number) => request<ScreeningDetail>("GET", `/api/screenings/${id}`),
  stopScreening: (id: number) => request<{ stopped: boolean }>("POST", `/api/screenings/${id}/stop`),
  createReport: (screeningId: number) => request<ScreeningReport>("POST", `/api/screenings/${screeningId}/reports`, { body: {} }),
};

/** The SSE body of a screening response, each known event handed to `onEvent`; resolves when it ends. */
async function readScreening(response: Response, onEvent: (event: ScreeningEvent) => void, signal: AbortSignal): Promise<void> {
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream") || !response.body) {
    throw new ApiError("The server did not answer with an event stream.", response.status, "bad_stream", true);
  }
  await readEventStream(response.body, (message) => {
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      return;
    }
    if (!data || typeof data !== "object") return;
    const type = message.event ?? (data as { type?: unknown }).type;
    if (typeof type === "string" && EVENT_TYPES.has(type)) onEvent({ ...(data as object), type } as ScreeningEvent);
  }, signal);
}

async function open(method: string, path: string, body: unknown, signal: AbortSignal, headers: Record<string, string> = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: { Accept: "text/event-stream", ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError("Could not reach the server. Check your connection.", 0, "network_error", true);
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`.trim();
    try {
      const parsed = (await response.json()) as { detail?: unknown };
      if (typeof parsed.detail === "string") message = parsed.detail;
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(message, response.status);
  }
  return response;
}

/** Start a screening of the patient (the `profile` event names it) and read its events to the end. */
export async function startScreening(patientId: number, body: Partial<ScreenRequest>, onEvent: (e: ScreeningEvent) => void, signal: AbortSignal) {
  await readScreening(await open("POST", `/api/patients/${patientId}/screenings`, body, signal), onEvent, signal);
}

/** Follow a screening from after `lastEventId` (0: from the start) to its terminal event. */
export async function followScreening(screeningId: number, lastEventId: number, onEvent: (e: ScreeningEvent) => void, signal: AbortSignal) {
  const headers: Record<string, string> = lastEventId > 0 ? { "Last-Event-ID": String(lastEventId) } : {};
  await readScreening(await open("GET", `/api/screenings/${screeningId}/stream`, undefined, signal, headers), onEvent, signal);
}
