import { fireEvent, render, screen, within } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import type { PatientDetail, ScreenedTrial, ScreeningEvent } from "../../../api/screening";
import type { TrialSummary } from "../../../api/types";
import { ProfileEditCard, ScreeningProposalCard, ScreeningReportCard } from "../../../cards/ScreeningCards";
import type { AIColumns } from "../../common/aiColumns";
import { DataGrid } from "../../common/DataGrid";
import { sortRows } from "../../common/gridModel";
import { TRIAL_COLUMNS, trialHref, trialRowId } from "../TrialTable";
import { decodeTrialScout } from "../trialscoutUrl";
import { countVerdicts, fitColumn, filterByVerdict, fitStats, VerdictFilter } from "./fit";
import { PatientPanel } from "./PatientPanel";
import { TrialCriteria } from "./TrialCriteria";
import { applyScreeningEvent, emptyScreening, screeningContext, type PatientScreening } from "./usePatientScreening";

const trial = (nct_id: string, verdict: ScreenedTrial["verdict"], score: number, extra: Partial<ScreenedTrial> = {}): ScreenedTrial => ({
  nct_id, title: `Trial ${nct_id}`, verdict, score, met: 2, not_met: verdict === "EXCLUDED" ? 1 : 0, unknown: 1, criteria: [], ...extra,
});
const A = trial("NCT00000001", "ELIGIBLE", 0.9);
const B = trial("NCT00000002", "EXCLUDED", 0.2, {
  snapshot_date: "2023-02-03",
  criteria: [
    { criterion: { kind: "inclusion", index: 0, text: "Age 18 or over" }, label: "MET", reasoning: "She is 62.", evidence: [0] },
    { criterion: { kind: "exclusion", index: 0, text: "Prior anthracycline" }, label: "NOT_MET", reasoning: "She had doxorubicin.", evidence: [2] },
  ],
});
const C = trial("NCT00000003", "UNCERTAIN", 0.5);
const SENTENCES = [
  { index: 0, text: "A 62-year-old woman." },
  { index: 1, text: "She has HER2-positive breast cancer." },
  { index: 2, text: "She received doxorubicin in 2019." },
];
const rows: TrialSummary[] = ["NCT00000003", "NCT00000001", "NCT00000002", "NCT00000009"].map((nct_id) => ({ nct_id, title: nct_id }));
const byId = new Map([A, B, C].map((t) => [t.nct_id, t]));
const profile = { age: 62, sex: "female" as const, conditions: ["breast cancer"], key_facts: {}, keywords: ["HER2"], summary: "62F" };
const patient = {
  id: 7, label: "62F HER2+", summary: "62F", note: "SECRET NOTE TEXT", profile, created_at: "", updated_at: "",
  version: { id: 11, number: 1, edited: false, created_at: "" }, versions: [],
} as unknown as PatientDetail;

function fakeScreening(over: Partial<PatientScreening> = {}): PatientScreening {
  const noop = () => vi.fn(async () => undefined);
  return {
    patients: [], patient, screening: null, busy: null, error: null, report: null, loadPatient: noop(), loadScreening: noop(),
    createFromNote: vi.fn(async () => true), saveProfile: noop(), screen: noop(), stop: noop(), remove: noop(), buildReport: noop(),
    close: vi.fn(), setPatient: vi.fn(), refreshPatients: noop(), ...over,
  } as PatientScreening;
}

describe("screening events", () => {
  it("fill the view in order: the id, the total, each trial, then the ranking", () => {
    const events = [
      { type: "profile", screening_id: 5, patient_id: 7, version_id: 11, profile, sentences: SENTENCES, extracted: false },
      { type: "candidates", mode: "nct_ids", candidates: [{ nct_id: A.nct_id }, { nct_id: B.nct_id }], missing: ["NCT09999999"] },
      { type: "trial", trial: B, done: 1, total: 2 },
      { type: "trial_error", nct_id: A.nct_id, code: "gone", message: "It vanished." },
      { type: "trial", trial: A, done: 2, total: 2 },
      { type: "complete", screening_id: 5, status: "complete", ranking: [A.nct_id, B.nct_id], usage: {} },
    ] as unknown as ScreeningEvent[];
    const seen = events.reduce(applyScreeningEvent, emptyScreening());
    expect(seen.id).toBe(5);
    expect(seen.status).toBe("complete");
    expect(seen.total).toBe(2);
    expect(seen.done).toBe(2);
    expect(seen.trials.map((t) => t.nct_id)).toEqual([A.nct_id, B.nct_id]);
    expect(seen.sentences).toHaveLength(3);
    expect(seen.missing).toEqual(["NCT09999999"]);
    expect(seen.problems).toEqual([{ nct_id: A.nct_id, message: "It vanished." }]);
  });

  it("an error event ends the screening as failed, keeping the trials screened", () => {
    const view = applyScreeningEvent({ ...emptyScreening(), id: 5, trials: [A] }, { type: "error", message: "Source down", code: "x" } as ScreeningEvent);
    expect(view.status).toBe("failed");
    expect(view.error).toBe("Source down");
    expect(view.trials).toEqual([A]);
  });
});

describe("the fit column", () => {
  it("shows verdict, score and counts in the table, and screening… for rows still pending", () => {
    const ai = { columns: [] } as unknown as AIColumns;
    render(<DataGrid rows={rows} ai={ai} columns={[...TRIAL_COLUMNS, fitColumn(byId, new Set(["NCT00000009"]))]}
      rowId={(t) => t.nct_id} rowDomId={trialRowId} rowHref={trialHref} selectLabel={(id) => id} hidden={new Set()}
      selected={new Set()} highlighted={null} onSelect={() => {}} onOpen={() => {}}
      sort={{ field: "fit", direction: "desc" }} onSort={() => {}} />);
    expect(screen.getByTestId("sort-fit").textContent).toContain("Fit");
    const cell = within(document.getElementById("row-nct-NCT00000002")!).getByTestId("fit-cell");
    expect(cell.dataset.verdict).toBe("EXCLUDED");
    expect(cell.textContent).toContain("Excluded");
    expect(cell.textContent).toContain("0.20");
    expect(cell.textContent).toContain("2 met, 1 not met, 1 unknown");
    expect(within(document.getElementById("row-nct-NCT00000009")!).getByTestId("fit-cell").dataset.state).toBe("pending");
  });

  it("sorts by score with unscreened rows last, and filters by verdict", () => {
    const sorted = sortRows(rows, [fitColumn(byId, new Set())], { field: "fit", direction: "desc" }).map((r) => r.nct_id);
    expect(sorted).toEqual(["NCT00000001", "NCT00000003", "NCT00000002", "NCT00000009"]);
    expect(filterByVerdict(rows, byId, new Set(["EXCLUDED", "ELIGIBLE"] as const)).map((r) => r.nct_id)).toEqual(["NCT00000001", "NCT00000002"]);
    expect(filterByVerdict(rows, byId, new Set())).toHaveLength(4);
    expect(decodeTrialScout(new URLSearchParams("sort=fit&dir=desc")).sort).toEqual({ field: "fit", direction: "desc" });
  });

  it("counts verdicts as toggle buttons", () => {
    expect(countVerdicts([A, B, C, B])).toEqual({ ELIGIBLE: 1, EXCLUDED: 2, UNCERTAIN: 1, NOT_RELEVANT: 0 });
    const onChange = vi.fn();
    render(<VerdictFilter trials={[A, B]} shown={new Set(["ELIGIBLE"])} onChange={onChange} />);
    expect(screen.getByTestId("verdict-filter-ELIGIBLE").getAttribute("aria-pressed")).toBe("true");
    fireEvent.click(screen.getByTestId("verdict-filter-EXCLUDED"));
    expect([...onChange.mock.calls[0][0]].sort()).toEqual(["ELIGIBLE", "EXCLUDED"]);
  });

  it("counts the fit column for the charts panel: each verdict in the column's order, none left at zero", () => {
    const stats = fitStats([B, A, C, B], 5, true);
    expect(stats).toMatchObject({ facet: "fit", basis: 4, distinct: 3, missing: 0 });
    expect(stats.buckets).toEqual([{ value: "ELIGIBLE", count: 1 }, { value: "UNCERTAIN", count: 1 }, { value: "EXCLUDED", count: 2 }]);
    expect(stats.note).toBe("the verdicts of screening 5 so far");
    expect(fitStats([], null, false).buckets).toEqual([]);
  });
});

describe("a trial's criteria", () => {
  it("lists each criterion with its label, reasoning and the evidence sentences highlighted", () => {
    render(<TrialCriteria trial={B} sentences={SENTENCES} />);
    const items = screen.getAllByTestId("criterion");
    expect(items.map((i) => i.dataset.label)).toEqual(["NOT_MET", "MET"]); // exclusions first: what decided it
    expect(items[0].textContent).toContain("She had doxorubicin.");
    expect(within(items[0]).getByTestId("criterion-evidence").querySelector("mark")!.textContent).toContain("She received doxorubicin in 2019.");
    expect(screen.getByTestId("snapshot-date").textContent).toBe("Trial record as of 2023-02-03");
    const marked = [...screen.getByTestId("note-sentences").querySelectorAll("mark")].map((m) => m.dataset.sentence);
    expect(marked).toEqual(["0", "2"]);
  });

  it("says so when the trial has no eligibility text", () => {
    render(<TrialCriteria trial={C} sentences={SENTENCES} />);
    expect(screen.getByTestId("criteria-empty").textContent).toBe("This trial has no eligibility text in the offline data.");
  });
});

const folded = (el: HTMLElement) => el.closest("[hidden]") != null;
const OPEN = { collapsed: false, onCollapse: () => {} };

/** The panel folded as the page first shows it, its toggle working. */
function FoldedPanel({ ps }: { ps: PatientScreening }) {
  const [collapsed, setCollapsed] = useState(true);
  return <PatientPanel ps={ps} loadedNctIds={["NCT00000001"]} onFindTrials={() => {}} shown={new Set()} onShow={() => {}}
                       collapsed={collapsed} onCollapse={setCollapsed} />;
}

describe("the folded patient panel", () => {
  it("is one line saying who the patient is and how the screening stands, and opens on Edit", () => {
    const ps = fakeScreening({ screening: { ...emptyScreening(), id: 5, status: "complete", trials: [A, B] } });
    render(<FoldedPanel ps={ps} />);
    expect(screen.getByTestId("patient-line").textContent).toBe("62F HER2+ · 62 y · female · breast cancer · Screened 2 trials: 1 eligible, 1 excluded");
    expect(folded(screen.getByTestId("profile-age"))).toBe(true);
    const toggle = screen.getByTestId("patient-toggle");
    expect(toggle.textContent).toBe("Edit ▸");
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    fireEvent.click(toggle);
    expect(folded(screen.getByTestId("profile-age"))).toBe(false);
    expect(screen.queryByTestId("patient-line")).toBeNull();
    expect(screen.getAllByTestId("patient-label")).toHaveLength(1);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
  });

  it("without a patient is a 'Screen a patient…' line that opens on the note, keeping what was typed when folded", () => {
    render(<FoldedPanel ps={fakeScreening({ patient: null })} />);
    const toggle = screen.getByTestId("patient-toggle");
    expect(toggle.textContent).toBe("Screen a patient… ▸");
    expect(folded(screen.getByTestId("patient-note"))).toBe(true);
    fireEvent.click(toggle);
    fireEvent.change(screen.getByTestId("patient-note"), { target: { value: "A 62-year-old woman" } });
    fireEvent.click(toggle);
    fireEvent.click(toggle);
    expect((screen.getByTestId("patient-note") as HTMLTextAreaElement).value).toBe("A 62-year-old woman");
  });

  it("shows an error on its folded line", () => {
    render(<FoldedPanel ps={fakeScreening({ patient: null, error: "The note could not be read." })} />);
    expect(screen.getByTestId("patient-error").textContent).toBe("The note could not be read.");
  });
});

describe("the patient panel", () => {
  it("screens the loaded trials with the saved profile, and says what a delete removes before it does", async () => {
    const ps = fakeScreening();
    render(<PatientPanel ps={ps} loadedNctIds={["NCT00000001", "NCT00000002"]} onFindTrials={() => {}} shown={new Set()} onShow={() => {}} {...OPEN} />);
    expect((screen.getByTestId("profile-age") as HTMLInputElement).value).toBe("62");
    fireEvent.click(screen.getByTestId("patient-screen"));
    await vi.waitFor(() => expect(ps.screen).toHaveBeenCalledWith({ nct_ids: ["NCT00000001", "NCT00000002"] }));
    expect(ps.saveProfile).not.toHaveBeenCalled();

    fireEvent.click(screen.getByTestId("patient-delete"));
    const confirm = screen.getByTestId("patient-delete-confirm");
    expect(confirm.textContent).toContain("screenings, their reports and cached judgements");
    expect(confirm.textContent).toContain("chat questions and answers sent while this patient was loaded");
    expect(document.activeElement).toBe(screen.getByTestId("patient-delete-yes"));
    expect(ps.remove).not.toHaveBeenCalled();
    fireEvent.click(screen.getByTestId("patient-delete-yes"));
    expect(ps.remove).toHaveBeenCalled();
  });

  it("saves an edited profile as a new version before finding trials from it", async () => {
    const ps = fakeScreening();
    const onFind = vi.fn();
    render(<PatientPanel ps={ps} loadedNctIds={[]} onFindTrials={onFind} shown={new Set()} onShow={() => {}} {...OPEN} />);
    expect((screen.getByTestId("patient-screen") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByTestId("profile-conditions"), { target: { value: "HER2-positive breast cancer\n\n" } });
    fireEvent.click(screen.getByTestId("patient-find"));
    await vi.waitFor(() => expect(onFind).toHaveBeenCalled());
    expect(ps.saveProfile).toHaveBeenCalledWith(expect.objectContaining({ conditions: ["HER2-positive breast cancer"] }));
    expect(onFind.mock.calls[0][0].conditions).toEqual(["HER2-positive breast cancer"]);
  });

  it("shows progress and Stop while a screening runs", () => {
    const ps = fakeScreening({ screening: { ...emptyScreening(), id: 5, done: 1, total: 4, trials: [A] } });
    render(<PatientPanel ps={ps} loadedNctIds={["NCT00000001"]} onFindTrials={() => {}} shown={new Set()} onShow={() => {}} {...OPEN} />);
    expect(screen.getByRole("status").textContent).toBe("Screened 1 of 4 trials…");
    fireEvent.click(screen.getByTestId("screening-stop"));
    expect(ps.stop).toHaveBeenCalled();
  });
});

describe("context.screening", () => {
  it("carries the profile and the shortlist, never the note", () => {
    const ps = fakeScreening({ screening: { ...emptyScreening(), id: 5, status: "complete", trials: [A, B], sentences: SENTENCES } });
    const ctx = screeningContext(ps, B.nct_id)!;
    expect(ctx).toMatchObject({ patient_id: 7, version_id: 11, screening_id: 5, status: "complete", open_nct_id: B.nct_id, profile });
    expect(ctx.shortlist!.map((t) => [t.nct_id, t.verdict, t.not_met])).toEqual([[A.nct_id, "ELIGIBLE", 0], [B.nct_id, "EXCLUDED", 1]]);
    const text = JSON.stringify(ctx);
    expect(text).not.toContain("SECRET NOTE TEXT");
    expect(text).not.toContain("doxorubicin in 2019");
    expect(screeningContext(fakeScreening({ patient: null }), null)).toBeNull();
  });
});

describe("the assistant's screening cards", () => {
  const base = { id: "p1", type: "patient_profile_edit", suggestion: true } as const;
  it("a profile edit lists its changes and Accepts", () => {
    const onAccept = vi.fn();
    render(<ProfileEditCard payload={{ ...base, data: { patient_id: 7, version_id: 11, profile, explanation: "She is 63 now.",
      changes: [{ field: "age", before: "62", after: "63" }] } } as never} onAccept={onAccept} />);
    expect(screen.getByTestId("card-profile-changes").textContent).toBe("age: 62 → 63");
    fireEvent.click(screen.getByRole("button", { name: /accept/i }));
    expect(onAccept).toHaveBeenCalled();
  });

  it("a screening proposal names its trials; a report links its HTML and PDF", () => {
    render(<ScreeningProposalCard payload={{ ...base, type: "screening_proposal", data: { patient_id: 7, request: { nct_ids: ["NCT00000003"] },
      trials: [{ nct_id: "NCT00000003", title: "Recruiting one", status: "RECRUITING" }] } } as never} />);
    expect(screen.getByTestId("card-screening-trials").textContent).toContain("NCT00000003 Recruiting one");
    render(<ScreeningReportCard payload={{ ...base, type: "screening_report", suggestion: false, data: { report: {
      id: 3, title: "Trials for 62F", html_url: "/api/screening-reports/3/html", pdf_url: "/api/screening-reports/3/pdf", trial_count: 2 } } } as never} />);
    const links = within(screen.getByTestId("card-report-links")).getAllByRole("link");
    expect(links.map((l) => l.getAttribute("href"))).toEqual(["/api/screening-reports/3/html", "/api/screening-reports/3/pdf"]);
  });
});
