/** The tray and the detail panel as a phone's full-screen sheets (modal dialogs) and beside the page (not). */
import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { useState } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChatTray } from "./chat/ChatTray";
import { DetailPanel } from "./pages/common/DetailPanel";

let phone = false;

beforeEach(() => {
  phone = false;
  vi.stubGlobal("matchMedia", (query: string) => ({
    get matches() {
      return query.includes("max-width") && phone;
    },
    media: query,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
  }));
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string) =>
      new Response(JSON.stringify(url.startsWith("/api/conversations?") ? [] : { error: "not_found", detail: "no" }), {
        status: url.startsWith("/api/conversations?") ? 200 : 404,
        headers: { "Content-Type": "application/json" },
      }),
    ),
  );
});
afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});

function tray() {
  const onClose = vi.fn();
  render(
    <ChatTray
      binding={{ app: "tablizer", getContext: () => ({}), payloadHandlers: {}, clientActions: {}, onEntity: vi.fn() }}
      onClose={onClose}
      modelLabel={{ text: "demo model", demo: true }}
    />,
  );
  return { onClose, sheet: screen.getByTestId("chat-tray"), input: screen.getByTestId("chat-input") };
}

const tabbable = (root: HTMLElement) =>
  [...root.querySelectorAll<HTMLElement>("a[href], button:not([disabled]), textarea, input, select, summary")];

describe("the chat tray", () => {
  it("on a phone is a modal dialog: Tab stays inside, Escape in the empty box closes it", async () => {
    phone = true;
    const { onClose, sheet, input } = tray();
    expect(sheet.getAttribute("role")).toBe("dialog");
    expect(sheet.getAttribute("aria-modal")).toBe("true");
    await waitFor(() => expect(document.activeElement).toBe(input));

    const items = tabbable(sheet);
    items.at(-1)!.focus();
    fireEvent.keyDown(items.at(-1)!, { key: "Tab" });
    expect(document.activeElement).toBe(items[0]);
    fireEvent.keyDown(items[0], { key: "Tab", shiftKey: true });
    expect(document.activeElement).toBe(items.at(-1));

    // Focus that escapes to the page behind the sheet comes back.
    const behind = document.body.appendChild(document.createElement("button"));
    act(() => behind.focus());
    expect(sheet.contains(document.activeElement)).toBe(true);
    behind.remove();

    // A draft is kept: the first Escape only leaves the box; an empty box closes the sheet at once.
    fireEvent.change(input, { target: { value: "a draft" } });
    fireEvent.keyDown(input, { key: "Escape" });
    expect(onClose).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(sheet);
    fireEvent.change(input, { target: { value: "" } });
    fireEvent.keyDown(input, { key: "Escape" });
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it("beside the page is a non-modal side tray, as before", async () => {
    const { onClose, sheet, input } = tray();
    expect(sheet.getAttribute("role")).toBe("complementary");
    expect(sheet.hasAttribute("aria-modal")).toBe(false);
    await waitFor(() => expect(document.activeElement).toBe(input));
    const behind = document.body.appendChild(document.createElement("button"));
    act(() => behind.focus());
    expect(document.activeElement).toBe(behind);
    behind.remove();
    fireEvent.keyDown(input, { key: "Escape" });
    expect(onClose).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(sheet);
  });
});

function PanelPage() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Open PMID 1
      </button>
      {open && (
        <DetailPanel title="PMID 1" onClose={() => setOpen(false)}>
          <a href="#x">A link</a>
        </DetailPanel>
      )}
    </>
  );
}

describe("the detail panel", () => {
  it.each([
    [true, "true"],
    [false, "false"],
  ])("phone %s: aria-modal %s; Escape closes it and focus goes back to the row that opened it", async (isPhone, modal) => {
    phone = isPhone;
    render(<PanelPage />);
    const opener = screen.getByText("Open PMID 1");
    opener.focus();
    fireEvent.click(opener);
    const panel = screen.getByTestId("detail-panel");
    expect(panel.getAttribute("aria-modal")).toBe(modal);
    await waitFor(() => expect(document.activeElement).toBe(panel));
    if (isPhone) {
      const close = screen.getByTestId("detail-close");
      const link = screen.getByText("A link");
      link.focus();
      fireEvent.keyDown(link, { key: "Tab" });
      expect(document.activeElement).toBe(close);
    }
    fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    expect(screen.queryByTestId("detail-panel")).toBeNull();
    await waitFor(() => expect(document.activeElement).toBe(opener));
  });
});
