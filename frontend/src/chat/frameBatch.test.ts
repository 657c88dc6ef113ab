import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { frameBatcher } from "./frameBatch";

describe("frameBatcher", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["requestAnimationFrame", "cancelAnimationFrame", "setTimeout", "clearTimeout"] }));
  afterEach(() => vi.useRealTimers());

  it("hands a burst over once, at the next frame, in order", () => {
    const delivered: number[][] = [];
    const batch = frameBatcher<number>((items) => delivered.push(items));
    for (let i = 0; i < 50; i++) batch.push(i);
    expect(delivered).toEqual([]);
    vi.advanceTimersToNextFrame();
    expect(delivered).toEqual([Array.from({ length: 50 }, (_, i) => i)]);
    batch.push(50);
    vi.advanceTimersToNextFrame();
    expect(delivered).toHaveLength(2);
    expect(delivered[1]).toEqual([50]);
  });

  it("flush delivers at once and the frame then has nothing to do", () => {
    const delivered: string[][] = [];
    const batch = frameBatcher<string>((items) => delivered.push(items));
    batch.push("a");
    batch.push("b");
    batch.flush();
    expect(delivered).toEqual([["a", "b"]]);
    vi.advanceTimersToNextFrame();
    expect(delivered).toHaveLength(1);
    batch.flush();
    expect(delivered).toHaveLength(1);
  });

  it("cancel drops what waits", () => {
    const deliver = vi.fn();
    const batch = frameBatcher<string>(deliver);
    batch.push("a");
    batch.cancel();
    vi.advanceTimersToNextFrame();
    expect(deliver).not.toHaveBeenCalled();
  });
});
