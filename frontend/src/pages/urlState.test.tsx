import { act, render } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it } from "vitest";
import { chatFromUrl, encodeChat, patchUrl, useUrlSync, type UrlPatch } from "../state/urlState";
import { decodeTablizer, encodeTablizer, type TablizerUrl } from "./tablizer/tablizerUrl";
import { emptyTrialForm } from "./trialscout/trialscoutContext";
import { decodeTrialScout, encodeTrialScout } from "./trialscout/trialscoutUrl";

const params = (patch: UrlPatch) => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(patch)) if (v != null) p.set(k, v);
  return new URLSearchParams(p.toString()); // through the string, as a URL carries it
};

afterEach(() => window.history.replaceState(null, "", "/"));

describe("URL state round-trips", () => {
  it("Tablizer: query, dates, sort, page, page size and the open article", () => {
    const view: TablizerUrl = { query: 'EGFR[MeSH] AND "drug resistance" & co', dateStart: "2020-01-01", dateEnd: "2024-12-31", sort: "date", page: 3, pageSize: 50, open: "31234567" };
    expect(decodeTablizer(params(encodeTablizer(view)))).toEqual(view);
    const plain: TablizerUrl = { query: "lung cancer", dateStart: "", dateEnd: "", sort: "relevance", page: 1, pageSize: 25, open: null };
    expect(encodeTablizer(plain)).toEqual({ q: "lung cancer", from: null, to: null, sort: null, page: null, size: null, open: null });
    expect(decodeTablizer(params(encodeTablizer(plain)))).toEqual(plain);
  });

  it("Tablizer: a hand-edited URL falls back to defaults instead of breaking the page", () => {
    expect(decodeTablizer(new URLSearchParams("q=x&page=-4&size=7&sort=weird&from=yesterday&open=abc"))).toEqual({
      query: "x", dateStart: "", dateEnd: "", sort: "relevance", page: 1, pageSize: 25, open: null,
    });
  });

  it("TrialScout: every filter, the page tokens, the sort and the open trial", () => {
    const view = {
      form: { ...emptyTrialForm, condition: "melanoma", intervention: "pembrolizumab", sponsor: "Merck", phase: ["PHASE2", "PHASE3"], status: ["RECRUITING"], location: "Boston", sex: "FEMALE", min_age: "18", max_age: "65", eligibility_keywords: "brain metastases" },
      tokens: ["tok+2/=", "abc"],
      sort: { field: "enrollment" as const, direction: "desc" as const },
      open: "NCT01234567",
    };
    expect(decodeTrialScout(params(encodeTrialScout(view)))).toEqual(view);
    const empty = { form: { ...emptyTrialForm }, tokens: [], sort: { field: null, direction: "asc" as const }, open: null };
    expect(Object.values(encodeTrialScout(empty)).every((v) => v == null)).toBe(true);
    expect(decodeTrialScout(params(encodeTrialScout(empty)))).toEqual(empty);
  });

  it("the chat tray: open, and its conversation only while open", () => {
    expect(chatFromUrl(params(encodeChat(true, 42)))).toEqual({ open: true, conversation: 42 });
    expect(encodeChat(false, 42)).toEqual({ chat: null, c: null });
    expect(chatFromUrl(new URLSearchParams("chat=1&c=0"))).toEqual({ open: true, conversation: null });
  });

  it("patchUrl changes only its own parameters", () => {
    window.history.replaceState(null, "", "/tablizer?chat=1&c=5&q=old");
    patchUrl({ q: "new", page: "2", open: null });
    expect(window.location.pathname + window.location.search).toBe("/tablizer?chat=1&c=5&q=new&page=2");
  });
});

describe("useUrlSync", () => {
  function Probe({ current, applied }: { current: TablizerUrl | null; applied: TablizerUrl[] }) {
    useUrlSync<TablizerUrl>({ encode: encodeTablizer, decode: decodeTablizer, current, apply: (v) => applied.push(v), entry: (v) => `${v.query}|${v.page}` });
    return null;
  }
  const view = (query: string, page = 1, open: string | null = null): TablizerUrl => ({ query, dateStart: "", dateEnd: "", sort: "relevance", page, pageSize: 25, open });

  it("applies the URL on mount and on Back, pushes a new search, replaces for the open row", () => {
    window.history.replaceState(null, "", "/tablizer?q=egfr&chat=1");
    const applied: TablizerUrl[] = [];
    const { rerender } = render(<Probe current={null} applied={applied} />);
    expect(applied).toEqual([view("egfr")]);
    const length = window.history.length;
    rerender(<Probe current={view("egfr")} applied={applied} />);
    expect(window.history.length).toBe(length); // the same view: nothing new
    rerender(<Probe current={view("kras", 2)} applied={applied} />);
    expect(window.location.search).toBe("?q=kras&chat=1&page=2");
    expect(window.history.length).toBe(length + 1);
    rerender(<Probe current={view("kras", 2, "123")} applied={applied} />);
    expect(window.location.search).toBe("?q=kras&chat=1&page=2&open=123");
    expect(window.history.length).toBe(length + 1);
    expect(applied).toHaveLength(1); // its own writes are not applied back
    act(() => {
      window.history.replaceState(null, "", "/tablizer?q=egfr&chat=1");
      window.dispatchEvent(new PopStateEvent("popstate"));
    });
    expect(applied).toEqual([view("egfr"), view("egfr")]);
  });

  it("another part's write landing in the same render as the page's change leaves the page's change alone", () => {
    // E.g. a click on an NCT id in a chat answer opens the trial while the tray's pending effect writes `c=`:
    // the URL moved, but none of the page's parameters did, so the row about to be written must not be closed.
    window.history.replaceState(null, "", "/tablizer?q=egfr&chat=1");
    let openRow: (id: string | null) => void = () => undefined;
    function Page() {
      const [open, setOpen] = useState<string | null>(null);
      openRow = setOpen;
      useUrlSync<TablizerUrl>({ encode: encodeTablizer, decode: decodeTablizer, current: view("egfr", 1, open), apply: (v) => setOpen(v.open), entry: (v) => v.query });
      return <p data-testid="open">{open ?? "none"}</p>;
    }
    const { getByTestId } = render(<Page />);
    act(() => {
      openRow("123");
      patchUrl({ c: "3" });
    });
    expect(getByTestId("open").textContent).toBe("123");
    expect(window.location.search).toBe("?q=egfr&chat=1&c=3&open=123");
  });
});
