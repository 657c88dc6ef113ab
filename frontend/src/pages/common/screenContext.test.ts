import { describe, expect, it } from "vitest";
import { buildTrialScoutContext, emptyTrialForm } from "../trialscout/trialscoutContext";
import { ARTICLE_OPEN_FIELDS, TRIAL_OPEN_FIELDS, openItemFields, screenContext } from "./screenContext";
import { makeFilter } from "./tableFilters";

describe("what is on screen, for the page context", () => {
  it("names the chips, the pinned charts and the loaded vs shown counts", () => {
    const chip = makeFilter({ field: "phase", op: "equals", value: "PHASE3", label: "Phase: Phase 3", scope: "rows" });
    const screen = screenContext({ filters: [chip], loaded: 25, shown: 9,
      charts: [{ id: "c1", kind: "stacked_bar", facet: "status", stackBy: "phase", filters: {}, title: "By status" }] });
    expect(screen).toEqual({
      loaded_count: 25, shown_count: 9,
      filters: [{ label: "Phase: Phase 3", field: "phase", op: "equals", value: "PHASE3", scope: "rows" }],
      pinned_charts: [{ title: "By status", facet: "status", kind: "stacked_bar", stack_by: "phase" }],
    });
  });

  it("the open item's key fields: short values whole, long texts clipped, objects as their names", () => {
    const fields = openItemFields(["nct_id", "NCT01"], {
      nct_id: "NCT01", title: "A trial", phase: ["PHASE2"], enrollment: 40, brief_summary: "x".repeat(2000),
      primary_outcomes: [{ measure: "Overall survival", time_frame: "5 years" }], sponsor: "",
    }, TRIAL_OPEN_FIELDS);
    expect(fields).toMatchObject({ nct_id: "NCT01", title: "A trial", phase: ["PHASE2"], enrollment: 40,
                                   primary_outcomes: ["Overall survival"] });
    expect(String(fields.brief_summary).length).toBeLessThan(700);
    expect(fields).not.toHaveProperty("sponsor");
    expect(openItemFields(["pmid", "1"], null, ARTICLE_OPEN_FIELDS)).toEqual({ pmid: "1" });
  });

  it("the page's context carries them: loaded is the rows before filters, the viewer its fields", () => {
    const context = buildTrialScoutContext({
      form: emptyTrialForm, totalMatched: 480, rows: [], aiColumns: [], selectedNctIds: [],
      sort: { field: null, direction: "asc" }, page: 1, pageSize: 25, viewerNctId: "NCT01",
      screen: screenContext({ filters: [], charts: [], loaded: 25, shown: 0 }),
      openItem: { nct_id: "NCT01", title: "A trial" },
    });
    expect(context).toMatchObject({ loaded_count: 25, shown_count: 0, filters: [], pinned_charts: [],
                                    viewer: { nct_id: "NCT01", title: "A trial" } });
  });
});
