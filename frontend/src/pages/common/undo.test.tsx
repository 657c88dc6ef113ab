import { act, renderHook } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { plural, resultsSummary } from "./counts";
import { describeAccepted, quoteQuery, useAcceptUndo } from "../../state/undo";
import { humanizeEnums } from "../../api/trialVocabulary";

describe("describeAccepted", () => {
  it("says what a search replaced, with both counts", () => {
    expect(
      describeAccepted({
        type: "pubmed_query_suggestion",
        query: "EGFR AND osimertinib resistance mechanisms in NSCLC",
        result_count: 2,
        previous_query: "lung cancer",
        previous_result_count: 24,
      }),
    ).toBe("Replaced 'lung cancer' (24) → 'EGFR AND osimertinib resistance mechani…' (2)");
    expect(describeAccepted({ type: "t", query: "melanoma", result_count: 1204, previous_query: null, previous_result_count: null })).toBe(
      "Searched 'melanoma' (1,204)",
    );
    expect(quoteQuery("  a \n b ")).toBe("'a b'");
  });
});

describe("useAcceptUndo", () => {
  it("snapshots before applying, restores on Undo, and undoing an older accept undoes the later ones", async () => {
    let page = { query: "lung cancer", count: 24 };
    const restored: Array<typeof page> = [];
    const { result } = renderHook(() =>
      useAcceptUndo(
        () => ({ ...page }),
        (s) => {
          restored.push(s);
          page = s;
        },
      ),
    );
    const search = (query: string, count: number) => async () => {
      const previous = page;
      page = { query, count };
      const accepted = { type: "pubmed_query_suggestion", query, result_count: count, previous_query: previous.query, previous_result_count: previous.count };
      return { summary: describeAccepted(accepted), accepted };
    };
    let first!: Awaited<ReturnType<typeof result.current.accept>>;
    await act(async () => {
      first = await result.current.accept(search("EGFR", 2));
    });
    expect(first.summary).toBe("Replaced 'lung cancer' (24) → 'EGFR' (2)");
    expect(result.current.lastAccepted).toMatchObject({ query: "EGFR", result_count: 2, previous_result_count: 24 });
    let second!: Awaited<ReturnType<typeof result.current.accept>>;
    await act(async () => {
      second = await result.current.accept(search("KRAS", 7));
    });
    expect(result.current.latest?.summary).toBe("Replaced 'EGFR' (2) → 'KRAS' (7)");
    act(() => first.undo());
    expect(page).toEqual({ query: "lung cancer", count: 24 });
    expect(first.state()).toBe("undone");
    expect(second.state()).toBe("undone");
    expect(result.current.latest).toBeNull();
    expect(result.current.lastAccepted).toBeNull();
    act(() => second.undo()); // already undone: nothing restored again
    expect(restored).toHaveLength(1);
  });

  it("a search by hand makes earlier accepts final, and a handler that throws records nothing", async () => {
    const { result } = renderHook(() => useAcceptUndo(() => 1, () => undefined));
    let outcome!: Awaited<ReturnType<typeof result.current.accept>>;
    await act(async () => {
      outcome = await result.current.accept(async () => ({ summary: "Added AI column 'x'", accepted: null }));
    });
    expect(result.current.lastAccepted).toBeNull();
    act(() => result.current.forget());
    expect(outcome.state()).toBe("final");
    await act(async () => {
      await expect(result.current.accept(async () => Promise.reject(new Error("no query")))).rejects.toThrow("no query");
    });
    expect(result.current.records).toEqual([]);
  });
});

describe("counts and labels", () => {
  it("pluralises and says how many rows the AI column filters keep", () => {
    expect(plural(1, "trial")).toBe("1 trial");
    expect(plural(1204, "trial")).toBe("1,204 trials");
    expect(resultsSummary({ total: 24, first: 1, loaded: 24, visible: 24, filtering: false, one: "result" })).toBe("24 results · showing 1–24");
    expect(resultsSummary({ total: 1, first: 1, loaded: 1, visible: 1, filtering: false, one: "trial" })).toBe("1 trial · showing 1–1");
    expect(resultsSummary({ total: 24, first: 1, loaded: 24, visible: 0, filtering: true, one: "result" })).toBe(
      "24 results · 1–24 loaded · 0 of 24 match the AI column filters",
    );
    expect(resultsSummary({ total: null, first: 26, loaded: 25, visible: 25, filtering: false, one: "trial" })).toBe("Trials · showing 26–50");
  });

  it("writes raw CT.gov enums in card explanations as words", () => {
    expect(humanizeEnums("Filters: PHASE2, RECRUITING; also PHASE2/PHASE3 and EARLY_PHASE1, ACTIVE_NOT_RECRUITING")).toBe(
      "Filters: Phase 2, Recruiting; also Phase 2/Phase 3 and Early Phase 1, Active, not recruiting",
    );
    expect(humanizeEnums("ALL patients, NA values")).toBe("ALL patients, NA values");
  });
});
