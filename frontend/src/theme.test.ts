import { act, renderHook } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resolveTheme, useTheme } from "./theme";

let systemDark = false;
const listeners = new Set<() => void>();

beforeEach(() => {
  localStorage.clear();
  systemDark = false;
  listeners.clear();
  vi.stubGlobal("matchMedia", (query: string) => ({
    get matches() {
      return query.includes("dark") && systemDark;
    },
    media: query,
    addEventListener: (_: string, fn: () => void) => listeners.add(fn),
    removeEventListener: (_: string, fn: () => void) => listeners.delete(fn),
  }));
});
afterEach(() => vi.unstubAllGlobals());

describe("theme", () => {
  it("follows the system until the user picks, then remembers the pick", () => {
    systemDark = true;
    expect(resolveTheme()).toBe("dark");
    const { result } = renderHook(() => useTheme());
    expect(result.current.theme).toBe("dark");
    expect(document.documentElement.dataset.theme).toBe("dark");

    systemDark = false;
    act(() => listeners.forEach((fn) => fn()));
    expect(result.current.theme).toBe("light"); // no pick yet: the system's change is followed

    act(() => result.current.toggle());
    expect(result.current.theme).toBe("dark");
    expect(localStorage.getItem("colleague.theme")).toBe("dark");
    expect(document.documentElement.dataset.theme).toBe("dark");

    act(() => listeners.forEach((fn) => fn())); // the system says light: the user's pick wins
    expect(result.current.theme).toBe("dark");
    expect(resolveTheme()).toBe("dark");
  });
});
