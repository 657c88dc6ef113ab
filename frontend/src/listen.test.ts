import { describe, expect, it, vi } from "vitest";
import { listen, removeAll } from "./listen";

describe("listen", () => {
  it("removes the listener it added, capture phase included", () => {
    const onKey = vi.fn();
    const onResize = vi.fn();
    const remove = removeAll([listen(document, "keydown", onKey, true), listen(window, "resize", onResize)]);
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));
    window.dispatchEvent(new Event("resize"));
    expect([onKey.mock.calls.length, onResize.mock.calls.length]).toEqual([1, 1]);

    remove();
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));
    window.dispatchEvent(new Event("resize"));
    expect([onKey.mock.calls.length, onResize.mock.calls.length]).toEqual([1, 1]);
  });
});
