import { act, renderHook } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { draftKey, useDraft } from "./useDraft";

beforeEach(() => localStorage.clear());

describe("useDraft", () => {
  it("keeps a draft per conversation and brings it back after the tray is gone", () => {
    const { result, rerender, unmount } = renderHook(({ id }) => useDraft("tablizer", id), { initialProps: { id: 4 as number | null } });
    act(() => result.current[1]("half a question"));
    rerender({ id: 9 });
    expect(result.current[0]).toBe("");
    act(() => result.current[1]("about nine"));
    rerender({ id: 4 });
    expect(result.current[0]).toBe("half a question");
    unmount();
    const again = renderHook(() => useDraft("tablizer", 9));
    expect(again.result.current[0]).toBe("about nine");
    expect(renderHook(() => useDraft("trialscout", 9)).result.current[0]).toBe(""); // per app
    act(() => again.result.current[1](""));
    expect(localStorage.getItem(draftKey("tablizer", 9))).toBeNull();
  });

  it("a new conversation that gets its id keeps what was typed meanwhile", () => {
    const { result, rerender } = renderHook(({ id }) => useDraft("trialscout", id), { initialProps: { id: null as number | null } });
    act(() => result.current[1]("next question"));
    rerender({ id: 12 });
    expect(result.current[0]).toBe("next question");
    expect(localStorage.getItem(draftKey("trialscout", 12))).toBe("next question");
    expect(localStorage.getItem(draftKey("trialscout", null))).toBeNull();
  });
});
