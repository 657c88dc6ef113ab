import { describe, expect, it } from "vitest";
import type { AIColumn } from "./common/aiColumns";
import { applyAIFilters, columnFromPayload } from "./common/aiColumns";
import { idleRun } from "./common/aiColumnState";
import { buildTablizerContext, compareSnapshots, dateInputValue, type Snapshot } from "./tablizer/tablizerContext";
import { buildTrialScoutContext, emptyTrialForm, formFromSuggestion, patientTrialForm, sortTrials, trialSearchParams } from "./trialscout/trialscoutContext";

const done = (value: string) => ({ status: "done" as const, value, display: value, reasoning: "", evidence: [], sections: [], qualifier: null, cached: false, model: "m", parseError: null });
const column: AIColumn = {
  id: "c1",
  name: "Mentions resistance",
  criteria: "Does it?",
  type: "boolean",
  filter: "yes",
  run: { ...idleRun, runId: 1, status: "running", ids: ["1", "2"], total: 2, cells: { "1": done("MET"), "2": { status: "pending" } } },
};
const art = (pmid: string) => ({ pmid, title: `T${pmid}`, journal: "J", year: 2023, abstract: "long…" });
const snap = (id: string, pmids: string[]): Snapshot => ({ id, label: id, query: `q${id}`, dateStart: "", dateEnd: "", totalCount: 99, articles: pmids.map(art) });

describe("Tablizer context", () => {
  it("has exactly the spec's keys, built from live state", () => {
    const context = buildTablizerContext({
      query: "EGFR lung cancer",
      dateStart: "2022-01-01",
      dateEnd: "",
      totalMatched: 1234,
      rows: [art("1"), art("2")],
      snapshots: [snap("1", ["1", "2"])],
      selectedSnapshotId: "1",
      compare: null,
      aiColumns: [column],
      selectedPmids: ["2"],
      sort: "relevance",
      page: 1,
      pageSize: 25,
      viewerPmid: "2",
    });
    expect(context).toEqual({
      current_page: "tablizer",
      query: "EGFR lung cancer",
      date_start: "2022-01-01",
      date_end: null,
      total_matched: 1234,
      loaded_count: 2,
      snapshots: [{ id: "1", label: "1", query: "q1", count: 2 }],
      selected_snapshot_id: "1",
      compare_mode: false,
      compare_snapshots: null,
      ai_columns: [
        {
          name: "Mentions resistance",
          type: "boolean",
          criteria: "Does it?",
          filter_active: true,
          filter: "yes",
          counts: { yes: 1, no: 0, conditional: 0, needs_review: 0, unknown: 0, error: 0, pending: 1 },
          verdicts: { "1": "yes" },
        },
      ],
      articles: [
        { pmid: "1", title: "T1", year: 2023, journal: "J" },
        { pmid: "2", title: "T2", year: 2023, journal: "J" },
      ],
      selected_pmids: ["2"],
      sort: { field: "relevance", direction: "desc" },
      pagination: { page: 1, page_size: 25 },
      viewer: { pmid: "2" },
    });
  });

  it("turns a suggestion's partial dates into date input values", () => {
    expect(dateInputValue("2020", false)).toBe("2020-01-01");
    expect(dateInputValue("2020", true)).toBe("2020-12-31");
    expect(dateInputValue("2024-02", true)).toBe("2024-02-29");
    expect(dateInputValue("2023-02", false)).toBe("2023-02-01");
    expect(dateInputValue("2023-02-14", true)).toBe("2023-02-14");
    expect(dateInputValue("last year", true)).toBe("");
  });

  it("compares two snapshots into only-A, only-B and both", () => {
    const c = compareSnapshots(snap("a", ["1", "2", "3"]), snap("b", ["3", "4"]));
    expect([c.onlyA, c.onlyB, c.both].map((g) => g.map((x) => x.pmid))).toEqual([["1", "2"], ["4"], ["3"]]);
  });
});

describe("TrialScout context and form", () => {
  it("has exactly the spec's keys", () => {
    const form = { ...emptyTrialForm, condition: "nsclc", phase: ["PHASE3"], status: ["RECRUITING"] };
    const context = buildTrialScoutContext({
      form,
      totalMatched: 892,
      rows: [{ nct_id: "NCT04613596", title: "Study", phase: ["PHASE3"], status: "RECRUITING", enrollment: 450, sponsor: "X", locations_count: 1 }],
      aiColumns: [],
      selectedNctIds: [],
      sort: { field: "enrollment", direction: "desc" },
      page: 2,
      pageSize: 25,
      viewerNctId: null,
    });
    expect(Object.keys(context).sort()).toEqual(
      [
        "current_page", "condition", "intervention", "sponsor", "phase", "status", "location", "sex", "study_type", "min_age", "max_age",
        "eligibility_keywords", "total_matched", "loaded_count", "ai_columns", "trials", "selected_nct_ids", "sort", "pagination", "viewer",
      ].sort(),
    );
    expect(context.trials).toEqual([{ nct_id: "NCT04613596", title: "Study", phase: ["PHASE3"], status: "RECRUITING", enrollment: 450, sponsor: "X" }]);
    expect(context).toMatchObject({ current_page: "trialscout", condition: "nsclc", total_matched: 892, loaded_count: 1, viewer: null, pagination: { page: 2, page_size: 25 } });
    expect(context).toMatchObject({ min_age: null, max_age: null, sex: "ALL" });
  });

  it("a suggestion fills the whole form, normalising enums and dropping unknown values", () => {
    const form = formFromSuggestion({ condition: " melanoma ", phase: ["phase 2", "PHASE3", "PHASE9"], status: "RECRUITING", sex: "female", min_age: 18, max_age: "75 Years", explanation: "x" });
    expect(form).toEqual({ ...emptyTrialForm, condition: "melanoma", phase: ["PHASE2", "PHASE3"], status: ["RECRUITING"], sex: "FEMALE", min_age: "18", max_age: "75" });
  });

  it("a patient's search keeps the age: trials whose age range admits the patient, as PRESCREEN searches", () => {
    const form = patientTrialForm({ conditions: ["breast cancer", "hypertension"], sex: "female", age: 62 });
    expect(form).toEqual({ ...emptyTrialForm, condition: "breast cancer", sex: "FEMALE", min_age: "62", max_age: "62" });
    expect(trialSearchParams(form, 25, null)).toMatchObject({ min_age: "62", max_age: "62" });
    expect(patientTrialForm({ conditions: ["bronchiolitis"], sex: null, age: 0.667 })).toMatchObject({ min_age: "0", max_age: "0", sex: "ALL" });
    expect(patientTrialForm({ conditions: [], sex: null, age: null })).toEqual(emptyTrialForm);
  });

  it("a study type in a suggestion reaches the form, the search params and the context", () => {
    const form = formFromSuggestion({ condition: "asthma", study_type: "observational", explanation: "x" });
    expect(form.study_type).toBe("OBSERVATIONAL");
    expect(trialSearchParams(form, 25, null)).toMatchObject({ condition: "asthma", study_type: "OBSERVATIONAL" });
    expect(formFromSuggestion({ study_type: "EXPANDED_ACCESS" }).study_type).toBe("");
    expect(trialSearchParams(emptyTrialForm, 25, null).study_type).toBe("");
  });

  it("search params repeat phase/status and treat sex ALL as no filter", () => {
    const params = trialSearchParams({ ...emptyTrialForm, phase: ["PHASE3", "PHASE2"] }, 25, "tok");
    expect(params).toMatchObject({ phase: ["PHASE3", "PHASE2"], sex: "", page_size: 25, page_token: "tok" });
  });

  it("sorts the loaded page client-side", () => {
    const rows = [
      { nct_id: "NCT2", title: "b", enrollment: 5 },
      { nct_id: "NCT1", title: "a", enrollment: 50 },
    ];
    expect(sortTrials(rows, { field: "enrollment", direction: "desc" }).map((r) => r.nct_id)).toEqual(["NCT1", "NCT2"]);
    expect(sortTrials(rows, { field: "title", direction: "asc" }).map((r) => r.nct_id)).toEqual(["NCT1", "NCT2"]);
    expect(sortTrials(rows, { field: null, direction: "asc" })).toBe(rows);
  });
});

describe("AI columns", () => {
  it("a filter keeps only the rows whose finished cell matches it (see aiColumns.test.tsx for more)", () => {
    const rows = [{ id: "1" }, { id: "2" }, { id: "3" }];
    expect(applyAIFilters(rows, [column], (r) => r.id).map((r) => r.id)).toEqual(["1"]);
    expect(applyAIFilters(rows, [{ ...column, filter: null }], (r) => r.id)).toHaveLength(3);
  });

  it("a column suggestion needs a name and criteria", () => {
    expect(columnFromPayload({ name: "N", criteria: "C", type: "boolean" })).toEqual({ name: "N", criteria: "C", type: "boolean" });
    expect(columnFromPayload({ name: "N", criteria: "C", type: "weird" }).type).toBe("text");
    expect(() => columnFromPayload({ name: "", criteria: "C" })).toThrow();
  });
});
