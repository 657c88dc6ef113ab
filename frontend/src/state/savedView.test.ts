import { afterEach, describe, expect, it, vi } from "vitest";
import { debouncer } from "./savedView";

afterEach(() => vi.useRealTimers());

describe("debouncer", () => {
  it("saves once after the changes stop, and flush saves a pending change at once", () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const d = debouncer(fn, 700);
    d.schedule();
    vi.advanceTimersByTime(500);
    d.schedule();
    vi.advanceTimersByTime(500);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(200);
    expect(fn).toHaveBeenCalledTimes(1);
    d.schedule();
    expect(d.pending).toBe(true);
    d.flush();
    expect(fn).toHaveBeenCalledTimes(2);
    d.flush(); // nothing pending: nothing saved
    vi.advanceTimersByTime(1000);
    expect(fn).toHaveBeenCalledTimes(2);
  });
});
